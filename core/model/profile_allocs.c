/* SPDX-License-Identifier: Apache-2.0 */
/* Allocations in the model (issue 17): each thread's balanced nativeAllocations table, and the
 * map of the allocations not yet freed that lets a free find its allocation's thread, stack and
 * bytes by address alone. Owns: the rows' invariants (a free follows its allocation, in the same
 * table, with the same stack and the negated bytes; no free without its allocation, even after a
 * drop by time), and the map (open addressing, linear probing, backward-shift deletion). */
#include "fx_profile.h"

#include <string.h>

#include "fx_alloc.h"
#include "fx_profile_internal.h"
#include "fx_profile_model.h"

#define LIVE_SLOT_BYTES (sizeof(uint64_t) + 2 * sizeof(uint32_t) + sizeof(int64_t))

unsigned fx_allocs_cols(struct fx_allocs *a, struct fx_col *cols)
{
    return FX_COLS_SET(cols, FX_COL(a, time_ns), FX_COL(a, bytes), FX_COL(a, stack),
                       FX_COL(a, address));
}

/* --- the live map --- */

static uint32_t slot_of(uint64_t address, uint32_t cap)
{
    uint64_t h = address * 0x9E3779B97F4A7C15ull; /* Fibonacci hashing: tags are sequential */
    return (uint32_t)(h >> 32) & (cap - 1);
}

static uint32_t live_find(const struct fx_live *l, uint64_t address)
{
    if (l->cap == 0)
        return FX_NONE_ID;
    for (uint32_t i = slot_of(address, l->cap);; i = (i + 1) & (l->cap - 1)) {
        if (l->address[i] == address)
            return i;
        if (l->address[i] == 0)
            return FX_NONE_ID;
    }
}

static void live_put(struct fx_live *l, uint64_t address, uint32_t thread, uint32_t stack,
                     int64_t bytes)
{
    uint32_t i = slot_of(address, l->cap);
    while (l->address[i] != 0)
        i = (i + 1) & (l->cap - 1);
    l->address[i] = address;
    l->thread[i] = thread;
    l->stack[i] = stack;
    l->bytes[i] = bytes;
    l->count++;
}

/* Backward shift: later entries of the probe run move into the hole, so no tombstones. */
static void live_remove(struct fx_live *l, uint32_t i)
{
    uint32_t mask = l->cap - 1;
    for (uint32_t j = (i + 1) & mask; l->address[j] != 0; j = (j + 1) & mask) {
        uint32_t home = slot_of(l->address[j], l->cap);
        /* j's entry may fill the hole at i unless its home lies cyclically in (i, j]. */
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (stays)
            continue;
        l->address[i] = l->address[j];
        l->thread[i] = l->thread[j];
        l->stack[i] = l->stack[j];
        l->bytes[i] = l->bytes[j];
        i = j;
    }
    l->address[i] = 0;
    l->stack[i] = FX_NONE_ID;
    l->count--;
}

/* Room for one more at a load of at most a half. */
static int live_reserve(struct fx_live *l)
{
    if ((uint64_t)(l->count + 1) * 2 <= l->cap)
        return FX_OK;
    if (l->cap > UINT32_MAX / 2)
        return FX_EFULL;
    struct fx_live n = {.cap = l->cap ? l->cap * 2 : 64};
    n.address = fx_calloc(n.cap, sizeof(*n.address));
    n.thread = fx_reallocarray(NULL, n.cap, sizeof(*n.thread));
    n.stack = fx_reallocarray(NULL, n.cap, sizeof(*n.stack));
    n.bytes = fx_reallocarray(NULL, n.cap, sizeof(*n.bytes));
    if (!n.address || !n.thread || !n.stack || !n.bytes) {
        fx_live_destroy(&n);
        return FX_ENOMEM;
    }
    memset(n.stack, 0xff, (size_t)n.cap * sizeof(*n.stack));
    for (uint32_t i = 0; i < l->cap; i++) {
        if (l->address[i] != 0)
            live_put(&n, l->address[i], l->thread[i], l->stack[i], l->bytes[i]);
    }
    fx_live_destroy(l);
    *l = n;
    return FX_OK;
}

void fx_live_destroy(struct fx_live *l)
{
    fx_free(l->address), fx_free(l->thread), fx_free(l->stack), fx_free(l->bytes);
    *l = (struct fx_live){0};
}

/* --- rows --- */

static int row_add(struct fx_profile *p, uint32_t thread, int64_t t, uint32_t stack, int64_t bytes,
                   uint64_t address)
{
    struct fx_allocs *a = &p->threads[thread]->allocs;
    struct fx_col cols[FX_MAX_COLS];
    uint32_t cap = a->cap;
    int rc = fx_profile_grow(&a->cap, a->count, cols, fx_allocs_cols(a, cols));
    if (a->cap != cap)
        fx_profile_thread_recount(p, p->threads[thread]);
    if (rc != FX_OK)
        return rc;
    uint32_t i = a->count++;
    /* Clamped, never reordered: a free must follow its allocation in the table. */
    a->time_ns[i] = i && t < a->time_ns[i - 1] ? a->time_ns[i - 1] : t;
    a->stack[i] = stack;
    a->bytes[i] = bytes;
    a->address[i] = address;
    return FX_OK;
}

int fx_profile_alloc(struct fx_profile *p, fx_thread_id id, int64_t time_ns, fx_stack_id stack,
                     int64_t bytes, uint64_t address)
{
    uint32_t thread = id.i;
    if (!fx_profile_thread_ok(p, thread) || stack.i >= p->stacks.count || bytes <= 0 ||
        address == 0 || live_find(&p->live, address) != FX_NONE_ID)
        return FX_EINVAL;
    int rc = live_reserve(&p->live);
    if (rc == FX_OK)
        rc = row_add(p, thread, time_ns, stack.i, bytes, address);
    if (rc == FX_OK)
        live_put(&p->live, address, thread, stack.i, bytes);
    return rc;
}

int fx_profile_alloc_free(struct fx_profile *p, int64_t time_ns, uint64_t address)
{
    uint32_t i = live_find(&p->live, address);
    if (i == FX_NONE_ID)
        return FX_ENOTFOUND;
    const struct fx_live *l = &p->live;
    int rc = row_add(p, l->thread[i], time_ns, l->stack[i], -l->bytes[i], address);
    if (rc == FX_OK)
        live_remove(&p->live, i);
    return rc;
}

uint64_t fx_profile_alloc_count(const struct fx_profile *p)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < p->nthreads; i++)
        n += p->threads[i]->allocs.count;
    return n;
}

uint64_t fx_profile_alloc_live(const struct fx_profile *p)
{
    return p->live.count;
}

size_t fx_profile_live_memory(const struct fx_profile *p)
{
    return (size_t)p->live.cap * LIVE_SLOT_BYTES;
}

/* --- dropping by time --- */

/* The set of dropped allocations already freed, whose frees may be newer than the cut: a live
 * map used as a set (thread, stack, bytes unused). */
static bool set_add(struct fx_live *set, uint64_t address)
{
    if (live_reserve(set) != FX_OK)
        return false;
    live_put(set, address, 0, FX_NONE_ID, 0);
    return true;
}

/* Capacities stay 16 * 2^k (fx_profile_grow's), so a drop of half gives half back. */
static void shrink_allocs(struct fx_allocs *a)
{
    struct fx_col cols[FX_MAX_COLS];
    unsigned ncols = fx_allocs_cols(a, cols);
    if (a->count == 0) {
        fx_cols_free(cols, ncols);
        *a = (struct fx_allocs){0};
        return;
    }
    uint32_t cap = 16;
    while (cap < a->count)
        cap *= 2;
    for (unsigned c = 0; cap < a->cap && c < ncols; c++) {
        void *np = fx_reallocarray(*cols[c].p, cap, cols[c].size);
        if (!np)
            return; /* the columns shrunk so far still hold cap rows: cap stays the old value */
        *cols[c].p = np;
        if (c + 1 == ncols)
            a->cap = cap;
    }
}

/* A free whose allocation is dropped goes too. When the set cannot grow (out of memory) every
 * free whose allocation is not among the rows kept so far ([0, out), already moved down) goes:
 * slower, same result. */
static bool free_orphaned(const struct fx_allocs *a, uint32_t i, uint32_t out,
                          const struct fx_live *set, bool set_ok)
{
    if (a->bytes[i] >= 0)
        return false;
    if (set_ok)
        return live_find(set, a->address[i]) != FX_NONE_ID;
    for (uint32_t j = 0; j < out; j++) {
        if (a->address[j] == a->address[i] && a->bytes[j] > 0)
            return false;
    }
    return true;
}

uint32_t fx_profile_drop_allocs(struct fx_profile *p, uint32_t thread, int64_t t)
{
    struct fx_allocs *a = &p->threads[thread]->allocs;
    uint32_t k = 0;
    while (k < a->count && a->time_ns[k] < t)
        k++;
    if (k == 0)
        return 0;
    struct fx_live set = {0};
    bool set_ok = true;
    for (uint32_t i = 0; i < k; i++) {
        if (a->bytes[i] <= 0)
            continue;
        uint32_t s = live_find(&p->live, a->address[i]);
        if (s != FX_NONE_ID)
            live_remove(&p->live, s); /* still alive: its free will find nothing */
        else
            set_ok = set_ok && set_add(&set, a->address[i]);
    }
    struct fx_col cols[FX_MAX_COLS];
    unsigned ncols = fx_allocs_cols(a, cols);
    uint32_t out = 0;
    for (uint32_t i = k; i < a->count; i++) {
        if (free_orphaned(a, i, out, &set, set_ok))
            continue;
        fx_cols_move(cols, ncols, out++, i, 1);
    }
    uint32_t dropped = a->count - out;
    a->count = out;
    fx_live_destroy(&set);
    shrink_allocs(a);
    return dropped;
}
