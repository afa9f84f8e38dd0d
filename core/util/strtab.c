/* SPDX-License-Identifier: Apache-2.0 */
/* String interning over one arena. Invariant: ids are dense and stable, each string is stored
 * once, and the index holds only ids. An intern either completes or leaves the table as it was:
 * every allocation it may need (arena, end column, index) happens before anything is added. */
#include "fx_strtab.h"

#include <string.h>

#include "fx_alloc.h"
#include "fx_err.h"

struct key {
    const char *s;
    size_t len;
};

static uint32_t start_of(const struct fx_strtab *t, uint32_t id)
{
    return id ? t->end[id - 1] : 0;
}

const char *fx_strtab_get(const struct fx_strtab *t, uint32_t id, size_t *len)
{
    uint32_t start = start_of(t, id);
    if (len)
        *len = t->end[id] - start - 1;
    return t->bytes + start;
}

static uint32_t hash_row(const void *table, uint32_t row)
{
    size_t len;
    const char *s = fx_strtab_get(table, row, &len);
    return fx_rowidx_hash_bytes(s, len);
}

static bool eq_row(const void *table, uint32_t row, const void *key)
{
    const struct key *k = key;
    size_t len;
    const char *s = fx_strtab_get(table, row, &len);
    return len == k->len && memcmp(s, k->s, len) == 0;
}

uint32_t fx_strtab_find(const struct fx_strtab *t, const char *s, size_t len)
{
    struct key k = {s, len};
    return fx_rowidx_find(&t->idx, fx_rowidx_hash_bytes(s, len), eq_row, t, &k);
}

static int reserve_bytes(struct fx_strtab *t, size_t len)
{
    size_t need;
    if (len >= UINT32_MAX || __builtin_add_overflow(t->bytes_len, len + 1, &need) ||
        need > UINT32_MAX)
        return FX_EFULL; /* end[] holds uint32_t offsets */
    if (need <= t->bytes_cap)
        return FX_OK;
    size_t cap = t->bytes_cap ? t->bytes_cap : 4096;
    while (cap < need)
        cap *= 2;
    char *b = fx_reallocarray(t->bytes, cap, 1);
    if (!b)
        return FX_ENOMEM;
    t->bytes = b;
    t->bytes_cap = cap;
    return FX_OK;
}

static int reserve_row(struct fx_strtab *t)
{
    if (t->count == UINT32_MAX - 1)
        return FX_EFULL;
    if (t->count < t->cap)
        return FX_OK;
    uint32_t cap = t->cap ? t->cap * 2 : 256;
    uint32_t *e = fx_reallocarray(t->end, cap, sizeof(*e));
    if (!e)
        return FX_ENOMEM;
    t->end = e;
    t->cap = cap;
    return FX_OK;
}

int fx_strtab_intern(struct fx_strtab *t, const char *s, size_t len, uint32_t *out)
{
    uint32_t h = fx_rowidx_hash_bytes(s, len);
    struct key k = {s, len};
    uint32_t id = fx_rowidx_find(&t->idx, h, eq_row, t, &k);
    if (id != FX_ROWIDX_NONE) {
        *out = id;
        return FX_OK;
    }
    int rc = reserve_bytes(t, len);
    if (rc == FX_OK)
        rc = reserve_row(t);
    if (rc == FX_OK)
        rc = fx_rowidx_reserve(&t->idx, t->count, hash_row, t);
    if (rc != FX_OK)
        return rc;
    if (len)
        memcpy(t->bytes + t->bytes_len, s, len);
    t->bytes[t->bytes_len + len] = '\0';
    t->bytes_len += len + 1;
    id = t->count++;
    t->end[id] = (uint32_t)t->bytes_len;
    fx_rowidx_add(&t->idx, h, id);
    *out = id;
    return FX_OK;
}

size_t fx_strtab_memory(const struct fx_strtab *t)
{
    return t->bytes_cap + (size_t)t->cap * sizeof(*t->end) + fx_rowidx_memory(&t->idx);
}

void fx_strtab_destroy(struct fx_strtab *t)
{
    if (!t)
        return;
    fx_free(t->bytes);
    fx_free(t->end);
    fx_rowidx_destroy(&t->idx);
    memset(t, 0, sizeof(*t));
}
