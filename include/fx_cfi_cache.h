/* SPDX-License-Identifier: Apache-2.0 */
/* Unwind tables kept across JVM starts (issue 31): an fx_cfi block (include/fx_cfi.h) is one
 * pointer-free allocation, so it is written to a file as it is and read back in a millisecond,
 * where building libjvm's from its .eh_frame takes 160-190 ms of CPU at every start
 * (docs/BENCHMARKS.md). Owns the file format and its checks; the folder (FXAGENT_CACHE/cfi) is
 * include/fx_cache_dir.h's.
 *
 * A file is named after the library's identity (device, inode, size, modification time, file
 * name) and repeats that identity in its header, so a library replaced by an upgrade misses
 * instead of lending its old rows. A file is used only if it is a regular file of this user's own,
 * the header's magic, version and identity match and the block passes fx_cfi_cache_check
 * (sizes, row kinds, rows and function starts in order): the table is read by a signal handler,
 * so nothing read from disk is trusted further than its rows' shape. Files are written to a
 * temporary name and renamed, so a reader never sees half of one; two JVMs building the same
 * table at once both write, and the last rename wins with equal contents. Not signal-safe. */
#ifndef FX_CFI_CACHE_H
#define FX_CFI_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "fx_cfi.h"
#include "fx_err.h"

/* The table of the library at path, whose stat is st, from dir: FX_OK and *out set (free with
 * fx_cfi_free), stats filled from the file; FX_ENOTFOUND when there is no file for this
 * identity; FX_EIO (eb says why) when one exists and fails a check. Never creates anything. */
int fx_cfi_cache_load(const char *dir, const char *path, const struct stat *st, struct fx_cfi **out,
                      struct fx_cfi_stats *stats, struct fx_errbuf *eb);

/* Writes c (with its stats) for the library at path with stat st into dir, creating dir (0700)
 * and its parent if missing. FX_OK, else FX_EIO with eb saying why; nothing half-written
 * stays behind. */
int fx_cfi_cache_store(const char *dir, const char *path, const struct stat *st,
                       const struct fx_cfi *c, const struct fx_cfi_stats *stats,
                       struct fx_errbuf *eb);

/* true when a block of `bytes` bytes at c is a well-formed table: counts that fit the size,
 * at most FX_CFI_MAX_SEGS segments, known row kinds, rows and function starts ascending and
 * below end. */
bool fx_cfi_cache_check(const struct fx_cfi *c, size_t bytes);

#endif
