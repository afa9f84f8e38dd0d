/* SPDX-License-Identifier: Apache-2.0 */
/* The folder of what the agent keeps across JVM starts (issue 31): unwind tables
 * (include/fx_cfi_cache.h) in DIR/cfi, the kernel's symbols (include/fx_kallsyms.h) in
 * DIR/kallsyms. One switch, FXAGENT_CACHE=DIR|off. Owns the folder's choice, making it, and
 * the two file operations both caches share: opening a file only if it is this user's own
 * (0600-like: no group or other bits), and writing one whole through a temporary name and a
 * rename, so a reader never sees half of one. Not signal-safe. */
#ifndef FX_CACHE_DIR_H
#define FX_CACHE_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "fx_err.h"

/* DIR/sub into buf, DIR being env (FXAGENT_CACHE's value, may be NULL) if set, else
 * $XDG_CACHE_HOME/fxagent, else $HOME/.cache/fxagent. false (keep nothing) when env is "off"
 * or "no", or when none of them gives an absolute path that fits. */
bool fx_cache_dir(const char *env, const char *xdg, const char *home, const char *sub, char *buf,
                  size_t cap);

/* Opens name for reading if it is a regular file owned by this user with no group or other
 * permission bits: the fd (its stat in *st), else -1 with *why set (FX_ENOTFOUND when there is
 * no such file: *why NULL). */
int fx_cache_open(const char *name, struct stat *st, const char **why);

/* fx_cache_open for a loader: FX_OK with *fd set; FX_ENOTFOUND when there is no such file (eb
 * untouched); FX_EIO with "NAME: why" in eb when the file is there but not to be read. */
int fx_cache_open_or_say(const char *name, struct stat *st, int *fd, struct fx_errbuf *eb);

/* DIR/NAME-<the file's identity: dev, inode, size, mtime>.EXT into buf, NAME being path's last
 * part (at most 64 bytes of it); false when it does not fit. */
bool fx_cache_file_name(const char *dir, const char *path, const struct stat *st, const char *ext,
                        char *buf, size_t cap);

/* Reads (out false) or writes n bytes whole; false on an error or a short file. */
bool fx_cache_io(int fd, void *buf, size_t n, bool out);

struct fx_cache_part {
    const void *p;
    size_t n;
};

/* Writes the parts, in order, to name (0600), creating its folder (0700, and the folders
 * above it) if missing, through name.PID.tmp and a rename. FX_OK, else FX_EIO with eb saying
 * why; nothing half-written stays behind. */
int fx_cache_write(const char *name, const struct fx_cache_part *parts, size_t nparts,
                   struct fx_errbuf *eb);

#endif
