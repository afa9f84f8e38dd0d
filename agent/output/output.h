/* SPDX-License-Identifier: Apache-2.0 */
/* agent/output: profile files. Its interface for control/; it calls model/ (a snapshot
 * request, the preparation before a write), sampling/ and base/.
 *  - dump.c: file names (%p %t %n; every file written takes the next %n), the checks of a
 *    file= target, writing a snapshot (dump, stop, loop) or the model itself (VM death);
 *  - meta.c: the profile's meta, a step before each dump;
 *  - push.c: push=, every file written posted to a backend (issue 33);
 *  - embed.c: sources=, the Java sources embedded into each file written (issue 34).
 * Tests: it.views, it.loop, it.push, it.fault.dev_full, it.fault.missing_dir, it.fxprof_sources. */
#ifndef FX_OUTPUT_H
#define FX_OUTPUT_H

#include "fx_ff_writer.h"
#include "fx_src.h"
#include "model.h"

struct fx_dump_result {
    char requested[4096];            /* the expanded file name asked for */
    struct fx_ff_file_result file;   /* where it went (the fallback folder if it could not) */
    unsigned seq;                    /* its %n */
    struct fx_profile_totals totals; /* the file's, as its "Samples in this file" says */
    bool wall;                       /* the mode's samples are wall samples */
    uint32_t threads, tracks;        /* the file's thread tracks; with the views' own tracks */
    double ms;                       /* time to write it */
    double copy_ms; /* a snapshot's: the drain's pause to copy the model; 0 if none */
};

/* A relative file= pattern made absolute (fx_options_absolute_file) under the JVM's working
 * folder, or ~/ under $HOME. */
void fx_output_absolute(struct fx_options *o);
/* Before a start or a dump with file=: FX_EINVAL with one line in eb if the expanded target is
 * of a kind never written (a block device, a socket); logs a warning if its folder cannot be
 * written now (the profile would go to the fallback folder). */
int fx_output_check_target(const char *pattern, bool series, struct fx_errbuf *eb);
/* A copy of the model taken by the drain between two passes (`reset`: a new period starts),
 * written to `pattern` on this thread while the drain goes on. Files are written one at a time:
 * a second caller waits. */
int fx_output_snapshot(const char *pattern, bool series, bool reset, struct fx_dump_result *res,
                       struct fx_errbuf *eb);
/* The last file a snapshot wrote ("" if none). */
void fx_output_last_file(char *buf, size_t cap);
/* "wrote N CPU samples of M threads to PATH (...)" (wall samples in wall mode; N as Profile
 * Info's "Samples in this file" counts them: weight, [idle] apart; then the [idle] samples, lock
 * waits and allocation samples when there are any), or "could not write X (reason); wrote Y
 * instead (...)" when it went to the fallback folder. */
void fx_output_describe(const struct fx_dump_result *r, char *line, size_t cap);
/* VMDeath, the drain stopped: the recording's last file, from the model itself. */
void fx_output_at_death(JNIEnv *jni);
/* The profile's meta: a before-dump step (register it after the markers' source). */
extern const struct fx_source fx_output_meta_step;
/* push= (push.c): each written file converted and posted by the push thread; the source puts
 * the push counts in each profile's meta.extra. */
extern const struct fx_source fx_output_push_source;
/* dump.c, after a file is written and the sources have noted it: queues it for the push. */
void fx_output_push_written(const char *path);
/* sources= (embed.c): FX_EINVAL with one line in eb when a path of the list does not exist. */
int fx_output_check_sources(const char *list, struct fx_errbuf *eb);
/* Before a write of p (a snapshot, or the model at VM death, owned by this thread; under the
 * write lock): with sources=, embeds the sources into p (its content, lent from e, and its
 * "Sources" group); without, nothing. fx_output_embed_end after the write takes the content
 * back and frees e; `last` (VM death) also closes the places kept for the next dump. */
void fx_output_embed_begin(struct fx_profile *p, struct fx_src_embed *e);
void fx_output_embed_end(struct fx_profile *p, struct fx_src_embed *e, bool last);
/* VM death, after the last file: waits up to 10 s for the queue to empty, says what was not
 * delivered, and ends the push thread. */
void fx_output_push_flush(void);
/* What the push thread holds now while it converts and sends, and the most it held so far. */
void fx_output_push_memory(size_t *now, size_t *peak);

#endif
