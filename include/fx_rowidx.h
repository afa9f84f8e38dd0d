/* SPDX-License-Identifier: Apache-2.0 */
/* An open-addressed hash index over the rows of a columnar table (samply's layout): a slot holds
 * row + 1 (0 = empty), never a copy of the key. Hashes are recomputed from the table's columns
 * when the index grows, and every probe compares the full key against the columns, so two keys
 * with the same hash are never merged. Load stays at or below 1/2 (linear probing). */
#ifndef FX_ROWIDX_H
#define FX_ROWIDX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FX_ROWIDX_NONE UINT32_MAX

struct fx_rowidx {
    uint32_t *slots;
    uint32_t cap; /* a power of two, or 0 before the first row */
};

/* The hash of row `row` of `table`, computed from its stored key. */
typedef uint32_t (*fx_rowidx_hash_fn)(const void *table, uint32_t row);
/* Whether row `row` of `table` has the key `key`. */
typedef bool (*fx_rowidx_eq_fn)(const void *table, uint32_t row, const void *key);

/* A zeroed struct is an empty index; destroy on it is a no-op. */
void fx_rowidx_destroy(struct fx_rowidx *x);
/* The row with key `key` (hash `hash`), or FX_ROWIDX_NONE. */
uint32_t fx_rowidx_find(const struct fx_rowidx *x, uint32_t hash, fx_rowidx_eq_fn eq,
                        const void *table, const void *key);
/* Makes room for one row more than the table's `nrows`, rehashing rows [0, nrows) with `hash`
 * if the index grows. On FX_ENOMEM the index is unchanged (and still valid). */
int fx_rowidx_reserve(struct fx_rowidx *x, uint32_t nrows, fx_rowidx_hash_fn hash,
                      const void *table);
/* Adds `row`, which must not be present yet, after a successful reserve. */
void fx_rowidx_add(struct fx_rowidx *x, uint32_t hash, uint32_t row);
size_t fx_rowidx_memory(const struct fx_rowidx *x);

/* Hash helpers: a 32-bit hash of bytes, and a mixer to combine integer key columns. */
uint32_t fx_rowidx_hash_bytes(const void *p, size_t len);
uint64_t fx_rowidx_mix(uint64_t h, uint64_t v);
uint32_t fx_rowidx_finish(uint64_t h);

/* Tests only: every hash is ANDed with `mask` (0 makes all keys collide); UINT32_MAX restores.
 * Process-wide and not thread-safe. */
void fx_rowidx_test_hash_mask(uint32_t mask);

#endif
