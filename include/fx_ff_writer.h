/* SPDX-License-Identifier: Apache-2.0 */
/* The Firefox Profiler processed-format writer (v66 shape, PROFILE-FORMAT.md), streamed from
 * the model into a sink: the whole JSON is never in memory. */
#ifndef FX_FF_WRITER_H
#define FX_FF_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "fx_err.h"
#include "fx_sink.h"

struct fx_profile;

#define FX_PROCESSED_PROFILE_VERSION 66

/* meta.sampleUnits.threadCPUDelta: microseconds, spelled with U+00B5 MICRO SIGN (the Greek mu
 * U+03BC is refused by the front-end). */
#define FX_FF_CPU_DELTA_UNIT "\xC2\xB5s"

/* Streams the profile as plain JSON into sink. */
int fx_ff_write(const struct fx_profile *p, struct fx_sink sink, struct fx_errbuf *eb);

struct fx_ff_file_result {
    char path[4096]; /* where the profile went */
    bool fell_back;  /* the requested path could not be written; path is in the fallback dir */
    char reason[256];
    unsigned long long bytes; /* size of the file written */
};

/* Writes to `path` safely (fx_out_file): gzip (one member) unless the name ends in ".json".
 * If the target fails at any step (open, write, fsync, rename), the whole profile is written
 * again into the fallback folder. mode 0 means 0600. */
int fx_ff_write_file(const struct fx_profile *p, const char *path, mode_t mode,
                     struct fx_ff_file_result *res, struct fx_errbuf *eb);
/* The same file, deflated on a second thread while the JSON is made (fx_gzip_new_threaded):
 * fxprof's conversion of a large recording, where deflate is a fifth of the work. */
int fx_ff_write_file_threaded(const struct fx_profile *p, const char *path, mode_t mode,
                              struct fx_ff_file_result *res, struct fx_errbuf *eb);

#endif
