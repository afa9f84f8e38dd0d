/* SPDX-License-Identifier: Apache-2.0 */
/* The native symbolizer (issue 16 groundwork), off the signal path (drain or dump): an address
 * inside a mapping of the text map (fx_textmap.h) becomes the covering ELF symbol, from .symtab
 * (the file's, else its separate debug file's, found by build-id) or else .dynsym, demangled
 * (fx_demangle.h), or "libname+0xOFFSET" with the reason no symbol names it. Read with elfutils'
 * libelf (docs/DESIGN-NOTES.md "Native symbols").
 *
 * Cache: each library (path, device, inode) is read once, at its first address: its loadable
 * segments, build-id and function symbols sorted by address; C++ names are demangled the first
 * time a symbol is returned. A lookup is then a binary search, so a dump of 100k addresses
 * costs one read per library. One thread at a time per struct fx_elfsym; strings it returns
 * live until fx_elfsym_free.
 *
 * Offsets: a library's offset is its ELF virtual address (what addr2line and objdump take for
 * that file): file offset = addr - mapping start + mapping offset, then the PT_LOAD segment
 * holding that file offset turns it into a virtual address, which undoes the load bias of PIE
 * executables and shared objects alike. When the file is not usable (not ELF, unreadable,
 * deleted or replaced since it was mapped) the offset is the file offset; for anonymous memory
 * it is the offset into the mapping. */
#ifndef FX_ELFSYM_H
#define FX_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

#include "fx_err.h"
#include "fx_textmap.h"

struct fx_elfsym;

enum fx_elfsym_source {
    FX_ELFSYM_NONE = 0,   /* no symbol: see why */
    FX_ELFSYM_SYMTAB,     /* the full symbol table */
    FX_ELFSYM_DEBUG_FILE, /* stripped, but its separate debug file (by build-id) has .symtab */
    FX_ELFSYM_DYNSYM      /* only the dynamic symbols: the library is stripped */
};

/* Where Debian's -dbgsym packages install separate debug files, by build-id. */
#define FX_ELFSYM_DEBUG_DIR "/usr/lib/debug"

struct fx_elfsym_frame {
    const char *name;     /* demangled symbol, or NULL when none covers the address */
    uint64_t sym_off;     /* address - symbol start, when name is set */
    const char *lib;      /* the mapping's file name without folders, "[vdso]", or "[anon]" */
    const char *path;     /* the mapping's path ("" for anonymous memory) */
    uint64_t lib_off;     /* see "Offsets" above */
    const char *build_id; /* lowercase hex of the GNU build-id, "" when none or not read */
    enum fx_elfsym_source source;
    const char *why; /* "" when name is set; else one line, e.g. "file deleted since mapped" */
};

/* A new, empty cache, or NULL when memory runs out. */
struct fx_elfsym *fx_elfsym_new(void);

/* Where to look for DIR/.build-id/xx/yyyy.debug when a file has no .symtab (the default is
 * FX_ELFSYM_DEBUG_DIR; NULL: never). Applies to libraries read from now on. FX_ENOMEM leaves
 * the setting as it was. */
int fx_elfsym_set_debug_dir(struct fx_elfsym *s, const char *dir);

/* Where to keep libraries' symbol tables across starts (include/fx_elfsym_cache.h: a table read
 * from a file's own .symtab is written there, and mapped back by the next fx_elfsym to need that
 * library; NULL, the default: never). Applies to libraries read from now on. FX_ENOMEM leaves
 * the setting as it was. */
int fx_elfsym_set_cache_dir(struct fx_elfsym *s, const char *dir);

/* What the cache folder served: tables mapped from it, written to it, and the files refused or
 * not written (the last reason in error, "" when none). */
struct fx_elfsym_cache_stats {
    size_t loaded, stored, errors;
    char error[200];
};
const struct fx_elfsym_cache_stats *fx_elfsym_cache_stats(const struct fx_elfsym *s);

/* Frees the cache and every string it returned; NULL is a no-op. */
void fx_elfsym_free(struct fx_elfsym *s);

/* Names addr, which lies in mapping m (from fx_textmap_lookup_sigsafe). FX_OK with *out filled,
 * whatever the file turns out to be; FX_EINVAL when addr is outside m; FX_ENOMEM when memory
 * runs out (the library is then tried again at its next address). */
int fx_elfsym_resolve(struct fx_elfsym *s, const struct fx_textmap_entry *m, uintptr_t addr,
                      struct fx_elfsym_frame *out);

/* The frame's name for a profile: the symbol when there is one, else "lib+0xOFFSET". Returns
 * the length it needed (like snprintf); buf is always terminated when n > 0. */
size_t fx_elfsym_frame_name(const struct fx_elfsym_frame *f, char *buf, size_t n);

/* core/symbols/elffind.c: the st_value of the function or data symbol `name` in the .symtab of the
 * file at path (for a shared object, its offset from the load base). FX_OK, FX_ENOTFOUND (stripped,
 * or no such symbol), FX_EIO (cannot open), FX_EINVAL (not ELF). */
int fx_elf_symbol_vaddr(const char *path, const char *name, uint64_t *vaddr);

#endif
