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

struct fx_kallsyms_sym {
    uint64_t addr;
    const char *name;   /* points into the table */
    const char *module; /* "" for the kernel image, else the module ("ext4") */
};

struct fx_kallsyms {
    size_t count;                 /* 0 when unusable */
    struct fx_kallsyms_sym *syms; /* sorted by addr; at one address the global (T) first */
    char *names;
    char reason[192]; /* "" when usable; else one line, no trailing period */
};

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

#endif
