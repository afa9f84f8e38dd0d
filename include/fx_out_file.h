/* SPDX-License-Identifier: Apache-2.0 */
/* Safe output: a profile is written to a temporary file beside its target (created with
 * O_EXCL|O_NOFOLLOW, mode 0600 unless told otherwise), flushed, fsync'ed and renamed, so the
 * target path never holds a half-written file. A target that cannot be written goes to a
 * fallback folder ($TMPDIR, else /tmp) and the caller is told where. */
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
    char reason[256]; /* why the requested target was not used, when fell_back */
};

/* Opens a temporary file for `target`; if its folder cannot take it, one in the fallback folder
 * (same base name). mode 0 means 0600. On failure nothing is left on disk. */
int fx_out_file_open(struct fx_out_file *f, const char *target, mode_t mode, struct fx_errbuf *eb);
struct fx_sink fx_out_file_sink(struct fx_out_file *f);
/* fsync, close, rename onto f->target, fsync the folder. On failure the temporary is removed
 * and the target is untouched. */
int fx_out_file_commit(struct fx_out_file *f, struct fx_errbuf *eb);
/* Removes the temporary file; safe after commit or on a zeroed struct. Also frees f->target and
 * f->tmp_path, so it is the cleanup after a commit too (read f->target before calling it). */
void fx_out_file_abort(struct fx_out_file *f);

/* The folder used when a target cannot be written: $TMPDIR if set and absolute, else /tmp. */
const char *fx_out_file_fallback_dir(void);

/* Tests only: temporary names use seed, seed+1, ... as their random part, so a test can plant a
 * file or link at the next name; 0 restores getrandom(). */
void fx_out_file_seed_for_tests(uint64_t seed);

#endif
