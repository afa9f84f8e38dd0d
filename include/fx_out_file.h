/* SPDX-License-Identifier: Apache-2.0 */
/* Safe output: a profile is written to a temporary file beside its target (created with
 * O_EXCL|O_NOFOLLOW, mode 0600 unless told otherwise), flushed, fsync'ed and renamed, so the
 * target path never holds a half-written file. A character device or a FIFO (or a link to one,
 * or the file of stdout or stderr named through /proc/PID/fd) is written into directly and never
 * replaced. An existing file that is not empty and not a profile (gzip or JSON), a folder, a
 * block device, a socket or a terminal is not written. A target that cannot be written goes to
 * a fallback folder ($TMPDIR, else /tmp) and the caller is told where and why. */
#ifndef FX_OUT_FILE_H
#define FX_OUT_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fx_err.h"
#include "fx_sink.h"

struct fx_out_file {
    int fd;
    mode_t mode;
    char *target;   /* the path finally written (the fallback one if fell_back) */
    char *tmp_path; /* the temporary file while open */
    bool fell_back;
    bool direct;      /* writing into a device, FIFO or open file: no temporary, no rename */
    char reason[256]; /* why the requested target was not used, when fell_back */
    int write_errno;  /* the errno of the write that failed, or 0 */
};

/* Opens `target` for writing as its kind says (out_file.c); if it cannot take the profile, a
 * temporary in the fallback folder (fx_out_file_fallback_path). mode 0 means 0600. On failure
 * nothing is left on disk, and eb says "could not write TARGET (REASON)...". */
int fx_out_file_open(struct fx_out_file *f, const char *target, mode_t mode, struct fx_errbuf *eb);
struct fx_sink fx_out_file_sink(struct fx_out_file *f);
/* fsync, close, rename onto f->target, fsync the folder. On failure the temporary is removed
 * and the target is untouched. A direct target is only closed. */
int fx_out_file_commit(struct fx_out_file *f, struct fx_errbuf *eb);
/* Removes the temporary file; safe after commit or on a zeroed struct. Also frees f->target and
 * f->tmp_path, so it is the cleanup after a commit too (read f->target before calling it). */
void fx_out_file_abort(struct fx_out_file *f);

/* The folder used when a target cannot be written: $TMPDIR if set and absolute, else /tmp. */
const char *fx_out_file_fallback_dir(void);
/* Where a profile for `target` goes when target refuses it: the fallback folder, same base
 * name; `special` (a device, FIFO, socket, folder) adds ".json.gz" unless the name ends in
 * ".json" or ".json.gz". FX_ERANGE if it does not fit in cap. */
int fx_out_file_fallback_path(const char *target, bool special, char *out, size_t cap);
/* Whether `target` is of a kind that can be written at all (not a folder, block device,
 * socket, or a file that is not a profile): FX_OK, or FX_EINVAL with the reason in why.
 * Touches nothing. A start-up check; the write checks again. */
int fx_out_file_check(const char *target, char *why, size_t cap);

/* Tests only: temporary names use seed, seed+1, ... as their random part, so a test can plant a
 * file or link at the next name; 0 restores getrandom(). */
void fx_out_file_seed_for_tests(uint64_t seed);

#endif
