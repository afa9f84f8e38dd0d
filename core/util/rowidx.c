/* SPDX-License-Identifier: Apache-2.0 */
/* Open-addressed row index: linear probing over row + 1 slots at load <= 1/2. Growth builds the
 * new slot array completely before it replaces the old one, so a failed allocation leaves the
 * index as it was; there is no deletion, hence no tombstones.
 * Tests: unit.strtab, unit.profile. */
#include "fx_rowidx.h"

#include <string.h>

#include "fx_alloc.h"
#include "fx_err.h"

#define MIN_CAP 16u

static uint32_t hash_mask = UINT32_MAX;

void fx_rowidx_test_hash_mask(uint32_t mask)
{
    hash_mask = mask;
}

void fx_rowidx_destroy(struct fx_rowidx *x)
{
    if (!x)
        return;
    fx_free(x->slots);
    x->slots = NULL;
    x->cap = 0;
}

uint32_t fx_rowidx_find(const struct fx_rowidx *x, uint32_t hash, fx_rowidx_eq_fn eq,
                        const void *table, const void *key)
{
    if (!x->cap)
        return FX_ROWIDX_NONE;
    uint32_t mask = x->cap - 1;
    for (uint32_t i = hash & hash_mask & mask;; i = (i + 1) & mask) {
        uint32_t s = x->slots[i];
        if (!s)
            return FX_ROWIDX_NONE;
        if (eq(table, s - 1, key))
            return s - 1;
    }
}

static void put(uint32_t *slots, uint32_t cap, uint32_t hash, uint32_t row)
{
    uint32_t mask = cap - 1;
    uint32_t i = hash & hash_mask & mask;
    while (slots[i])
        i = (i + 1) & mask;
    slots[i] = row + 1;
}

int fx_rowidx_reserve(struct fx_rowidx *x, uint32_t nrows, fx_rowidx_hash_fn hash,
                      const void *table)
{
    if (nrows >= (1u << 30))
        return FX_EFULL; /* the slot count must stay a uint32_t power of two */
    uint32_t need = nrows + 1;
    if (need <= x->cap / 2)
        return FX_OK;
    uint32_t cap = x->cap ? x->cap : MIN_CAP;
    while (need > cap / 2)
        cap *= 2;
    uint32_t *slots = fx_calloc(cap, sizeof(*slots));
    if (!slots)
        return FX_ENOMEM;
    for (uint32_t r = 0; r < nrows; r++)
        put(slots, cap, hash(table, r), r);
    fx_free(x->slots);
    x->slots = slots;
    x->cap = cap;
    return FX_OK;
}

void fx_rowidx_add(struct fx_rowidx *x, uint32_t hash, uint32_t row)
{
    put(x->slots, x->cap, hash, row);
}

size_t fx_rowidx_memory(const struct fx_rowidx *x)
{
    return (size_t)x->cap * sizeof(*x->slots);
}

#define K1 0x9e3779b97f4a7c15ull
#define K2 0xff51afd7ed558ccdull
#define K3 0xc4ceb9fe1a85ec53ull

uint64_t fx_rowidx_mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * K1;
    return h ^ (h >> 29);
}

/* murmur3's 64-bit finaliser, folded to 32 bits: the low bits pick the slot, so every input
 * bit must reach them. */
uint32_t fx_rowidx_finish(uint64_t h)
{
    h ^= h >> 33;
    h *= K2;
    h ^= h >> 33;
    h *= K3;
    h ^= h >> 33;
    return (uint32_t)h ^ (uint32_t)(h >> 32);
}

uint32_t fx_rowidx_hash_bytes(const void *p, size_t len)
{
    const unsigned char *b = p;
    uint64_t h = fx_rowidx_mix(K3, len);
    for (; len >= 8; b += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, b, 8);
        h = fx_rowidx_mix(h, w);
    }
    if (len) {
        uint64_t w = 0;
        memcpy(&w, b, len);
        h = fx_rowidx_mix(h, w);
    }
    return fx_rowidx_finish(h);
}
