/* SPDX-License-Identifier: Apache-2.0 */
/* String interning: every distinct byte string gets one dense id (0, 1, 2, ... in order of first
 * appearance). The bytes live once, in one arena, each followed by a NUL; the hash index stores
 * only row ids and rehashes from the arena, so no key is stored twice. */
#ifndef FX_STRTAB_H
#define FX_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "fx_rowidx.h"

struct fx_strtab {
    char *bytes; /* the arena: string i is bytes[start(i) .. end[i] - 1), then a NUL */
    size_t bytes_len, bytes_cap;
    uint32_t *end; /* end[i]: arena offset just past string i's NUL */
    uint32_t count, cap;
    struct fx_rowidx idx;
};

/* A zeroed struct is an empty table; destroy on it is a no-op. */
void fx_strtab_destroy(struct fx_strtab *t);
/* Get-or-create the id of the bytes s[0..len) (any bytes, NULs included). On FX_ENOMEM, or
 * FX_EFULL when the arena would pass 4 GiB, *out and the table are unchanged. */
int fx_strtab_intern(struct fx_strtab *t, const char *s, size_t len, uint32_t *out);
/* The id of s[0..len) if interned, else FX_ROWIDX_NONE. */
uint32_t fx_strtab_find(const struct fx_strtab *t, const char *s, size_t len);
/* The NUL-terminated bytes of `id` (< count) and their length. */
const char *fx_strtab_get(const struct fx_strtab *t, uint32_t id, size_t *len);
/* Bytes held (capacities). */
size_t fx_strtab_memory(const struct fx_strtab *t);

#endif
