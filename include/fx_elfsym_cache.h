/* SPDX-License-Identifier: Apache-2.0 */
/* ELF symbol tables kept across JVM starts (issue 31): a library's function symbols, sorted by
 * address with one per address (what include/fx_elfsym.h builds from its .symtab), written to a
 * file as they are in memory and mapped back read-only at the next start, where reading libjvm's
 * 60,000-70,000 symbols and sorting them takes 5-10 ms of the drain thread's CPU in every JVM
 * (docs/BENCHMARKS.md "The short run's fixed costs (session 15)"). Owns the file format and its
 * checks; the folder (FXAGENT_CACHE/elfsym) is include/fx_cache_dir.h's.
 *
 * A file is named after the library's identity (device, inode, size, modification time, file
 * name) and repeats it, with the build-id, in its header, so a library replaced by an upgrade
 * misses. A file is used only if it is a regular file of this user's own and its header, size,
 * rows (name offsets inside the names, addresses ascending) and names (NUL-terminated) check.
 * Tables read from the file's own .symtab are kept, and those of a separate debug file under
 * the debug file's identity (its build-id is the library's), so a -dbg package upgraded or
 * removed misses; .dynsym's are not (a debug file may come). Not signal-safe. */
#ifndef FX_ELFSYM_CACHE_H
#define FX_ELFSYM_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "fx_err.h"

/* One function symbol; name_at indexes the names. The layout is the file's. */
struct fx_elfsym_row {
    uint64_t addr, size, name_at;
    uint8_t global; /* not STB_LOCAL */
    uint8_t pad[7]; /* zero */
};

/* A table mapped from a file: rows and names point into the mapping. */
struct fx_elfsym_table {
    const struct fx_elfsym_row *rows;
    size_t n;
    const char *names;
    size_t names_len;
    void *map;
    size_t map_len;
};

/* The table of the library at path (stat st, build-id hex build_id) from dir: FX_OK with *out
 * mapped (release with fx_elfsym_cache_unmap); FX_ENOTFOUND when there is no file for this
 * identity; FX_EIO (eb says why) when one exists and fails a check. Never creates anything. */
int fx_elfsym_cache_load(const char *dir, const char *path, const struct stat *st,
                         const char *build_id, struct fx_elfsym_table *out, struct fx_errbuf *eb);

/* Writes rows[0..n) and names[0..names_len) for that library into dir (created 0700 if
 * missing). FX_OK, else FX_EIO with eb saying why; nothing half-written stays behind. */
int fx_elfsym_cache_store(const char *dir, const char *path, const struct stat *st,
                          const char *build_id, const struct fx_elfsym_row *rows, size_t n,
                          const char *names, size_t names_len, struct fx_errbuf *eb);

/* Unmaps a loaded table; a zeroed one is a no-op. */
void fx_elfsym_cache_unmap(struct fx_elfsym_table *t);

#endif
