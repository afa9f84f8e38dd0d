/* SPDX-License-Identifier: Apache-2.0 */
/* Part of THE SIGNAL PATH (signal_handler.c's rules and allow-list): the hand-off of the
 * nmethods the handler found in the code heaps (codeheap_sig.c) to the drain, which adds each
 * to the code table (codemap_heap.c) so that later samples find it there, not by ~8 system
 * calls per lookup. Without CompiledMethodLoad (codemap=heap, issue 31) this is how compiled
 * code enters the table.
 *
 * A fixed array of slots, no locks: a handler claims an empty slot by compare-and-swap
 * (EMPTY -> WRITING), writes the range, then publishes it (FULL, release); the drain takes a
 * FULL slot (acquire), copies it and frees it (EMPTY, release). A range's slots are the
 * FX_FOUND_PROBES after its hash: a FULL one with the same code begin means it is queued
 * already (many samples meet a new nmethod before the drain's next pass); none EMPTY, the
 * offer is dropped and counted (a later sample finds the nmethod again and offers it then). */
#include "codeheap.h"

#define FX_FOUND_SLOTS  256 /* power of two */
#define FX_FOUND_PROBES 8

enum {
    SLOT_EMPTY = 0,
    SLOT_WRITING,
    SLOT_FULL
};

struct found_slot {
    uint32_t state; /* atomic: SLOT_* */
    uintptr_t key;  /* atomic: the range's begin while FULL (a hint for the same-range test) */
    struct fx_code_range r;
};

static struct found_slot slots[FX_FOUND_SLOTS];
static int offering;                           /* atomic: codemap=heap is on (codemap_heap.c) */
static uint64_t offered, queued_already, full; /* atomic counts */

void fx_codeheap_offer_enable(bool on)
{
    __atomic_store_n(&offering, on ? 1 : 0, __ATOMIC_RELEASE);
}

bool fx_codeheap_offering(void)
{
    return __atomic_load_n(&offering, __ATOMIC_ACQUIRE) != 0;
}

void fx_codeheap_offer_sigsafe(const struct fx_code_range *r)
{
    if (r == NULL || __atomic_load_n(&offering, __ATOMIC_ACQUIRE) == 0)
        return;
    uint64_t h = ((uint64_t)r->begin * 0x9E3779B97F4A7C15ull) >> 40;
    for (unsigned i = 0; i < FX_FOUND_PROBES; i++) {
        struct found_slot *s = &slots[(h + i) & (FX_FOUND_SLOTS - 1)];
        uint32_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
        if (st == SLOT_FULL && __atomic_load_n(&s->key, __ATOMIC_RELAXED) == r->begin) {
            __atomic_add_fetch(&queued_already, 1, __ATOMIC_RELAXED);
            return;
        }
        uint32_t empty = SLOT_EMPTY;
        if (st != SLOT_EMPTY || !__atomic_compare_exchange_n(&s->state, &empty, SLOT_WRITING, false,
                                                             __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            continue;
        s->r = *r;
        __atomic_store_n(&s->key, r->begin, __ATOMIC_RELAXED);
        __atomic_store_n(&s->state, SLOT_FULL, __ATOMIC_RELEASE);
        __atomic_add_fetch(&offered, 1, __ATOMIC_RELAXED);
        return;
    }
    __atomic_add_fetch(&full, 1, __ATOMIC_RELAXED);
}

size_t fx_codeheap_take(struct fx_code_range *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < FX_FOUND_SLOTS && n < cap; i++) {
        struct found_slot *s = &slots[i];
        if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != SLOT_FULL)
            continue;
        out[n++] = s->r;
        __atomic_store_n(&s->key, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&s->state, SLOT_EMPTY, __ATOMIC_RELEASE);
    }
    return n;
}

void fx_codeheap_offer_counts(uint64_t *n_offered, uint64_t *n_queued, uint64_t *n_full)
{
    *n_offered = __atomic_load_n(&offered, __ATOMIC_RELAXED);
    *n_queued = __atomic_load_n(&queued_already, __ATOMIC_RELAXED);
    *n_full = __atomic_load_n(&full, __ATOMIC_RELAXED);
}
