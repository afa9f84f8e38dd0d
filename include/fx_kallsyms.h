/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel symbols from /proc/kallsyms (or a file in its format) for naming kernel frames of
 * perf callchains (issue 16 groundwork): the text symbols sorted by address, or, when they
 * cannot be used (the file is unreadable, or every address reads 0 because kernel.kptr_restrict
 * hides them from this user), an empty table and a one-line reason the profile's metadata can
 * carry. Built off the signal path; immutable afterwards, so any thread may look up. */
#ifndef FX_KALLSYMS_H
#define FX_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "fx_err.h"

/* The layout of the kept file's symbols too (kallsyms_cache.c): a table read from the cache is
 * the file mapped, not copied (issue 31: the copy was most of the drain's start-up on a short
 * run). Names through fx_kallsyms_name and fx_kallsyms_module. */
struct fx_kallsyms_sym {
    uint64_t addr;
    uint32_t name;   /* offset into the names arena */
    uint32_t module; /* offset: 0 (the "") for the kernel image, else the module ("ext4") */
};

struct fx_kallsyms {
    size_t count;                       /* 0 when unusable */
    const struct fx_kallsyms_sym *syms; /* sorted by addr; at one address the global (T) first */
    const char *names;
    size_t names_bytes; /* of the names arena, which starts with the "" module */
    void *map;          /* the kept file mapped (syms and names point into it), or NULL */
    size_t map_bytes;
    char reason[192]; /* "" when usable; else one line, no trailing period */
};

static inline const char *fx_kallsyms_name(const struct fx_kallsyms *k,
                                           const struct fx_kallsyms_sym *s)
{
    return k->names + s->name;
}

static inline const char *fx_kallsyms_module(const struct fx_kallsyms *k,
                                             const struct fx_kallsyms_sym *s)
{
    return k->names + s->module;
}

/* Reads path (normally "/proc/kallsyms") and keeps the text symbols (types t, T, w, W). Returns
 * FX_OK with a table in *out whether or not it is usable (see reason: unreadable file, all
 * addresses zero, no text symbol, a malformed line); FX_ENOMEM (with *out NULL) only when memory
 * runs out. Free with fx_kallsyms_free. Not signal-safe. */
int fx_kallsyms_read(const char *path, struct fx_kallsyms **out);

/* The symbol at or below addr (kallsyms has no sizes: a symbol runs to the next one), or NULL
 * when addr is below the first symbol or more than FX_KALLSYMS_MAX_SPAN past the one below. */
const struct fx_kallsyms_sym *fx_kallsyms_lookup(const struct fx_kallsyms *k, uint64_t addr);

/* No kernel function is this long: an address further from its symbol is not named by it. */
#define FX_KALLSYMS_MAX_SPAN (1u << 20)

void fx_kallsyms_free(struct fx_kallsyms *k);

/* Kept across JVM starts (issue 31, core/symbols/kallsyms_cache.c): formatting /proc/kallsyms
 * costs the kernel ~50 ms per read, while the kernel's addresses are fixed for a boot. A table
 * is kept for the key of the kernel that listed it: its boot (boot_id), its loaded modules
 * (name, size, state and address of each line of /proc/modules; a module loaded or unloaded
 * changes the key) and the first line of /proc/kallsyms as this user reads it now (cheap: one
 * page; it moves with KASLR and reads 0 when kptr_restrict hides addresses from this user, so a
 * user who may no longer see the addresses gets no key, and no table). Symbols that appear
 * without a module (BPF programs, ftrace trampolines) after a table was kept are not in it. */
struct fx_kallsyms_key {
    char boot[40];
    uint64_t modules;    /* FNV-1a of the modules' fields; that of "" without /proc/modules */
    uint64_t first_addr; /* never 0 in a key */
    char first_name[64];
};

/* The key from the three files (normally /proc/kallsyms, /proc/sys/kernel/random/boot_id,
 * /proc/modules): FX_OK, else FX_ENOTFOUND with eb saying why there is none (unreadable boot
 * id, hidden or unreadable addresses, unreadable modules). */
int fx_kallsyms_key_read(const char *kallsyms, const char *boot_id, const char *modules,
                         struct fx_kallsyms_key *key, struct fx_errbuf *eb);

/* The table kept in file for key: FX_OK and *out (free with fx_kallsyms_free); FX_ENOTFOUND
 * when there is no file or it was kept for another key (eb says which); FX_EIO (eb: one line)
 * when the file is not this user's own 0600 file or fails a check (magic, sizes, offsets,
 * order) or memory runs out. */
int fx_kallsyms_cache_load(const char *file, const struct fx_kallsyms_key *key,
                           struct fx_kallsyms **out, struct fx_errbuf *eb);

/* Keeps k (a usable table: count > 0, no reason) in file for key, 0600, its folder made 0700.
 * FX_OK, else FX_EIO (eb) or FX_EINVAL for an unusable table; nothing half-written stays. */
int fx_kallsyms_cache_store(const char *file, const struct fx_kallsyms_key *key,
                            const struct fx_kallsyms *k, struct fx_errbuf *eb);

#endif
