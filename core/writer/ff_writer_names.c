/* SPDX-License-Identifier: Apache-2.0 */
/* The writer's threads: which of the model's are written (all but those a snapshot leaves out,
 * fx_profile_thread_left_out: DestroyJavaVM with nothing to show), at which index (a view's
 * companion track right after its thread's, fx_profile_thread_add_companion), and their
 * track names (PROFILE-FORMAT.md §7): a thread's own name, or "name (tid N)" when another
 * thread of the file has the same name (a pool's "pool-1-thread-1" over time, a JVM
 * thread attached again), so that the track list tells them apart; "name (tid N, #K)" when the
 * tid repeats too (K counts those threads in file order). Unique names are written unchanged,
 * so a track stays findable by the name the application gave it. A companion is named after its
 * thread's track as written, then its own suffix ("worker (tid 7): lock waits").
 * Tests: unit.ff_writer. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_ff_writer_internal.h"
#include "fx_sort.h"

struct name_row {
    const char *name;
    int64_t tid;
    uint32_t index;
};

static int by_name_tid(const void *a, const void *b)
{
    const struct name_row *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c != 0)
        return c;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* rows[a..b) share a name; the tid's run inside it numbers its threads when it holds several. */
static void mark_run(uint32_t *repeat, const struct name_row *rows, uint32_t a, uint32_t b)
{
    for (uint32_t i = a; i < b;) {
        uint32_t k = i;
        while (k < b && rows[k].tid == rows[i].tid)
            k++;
        for (uint32_t m = i; m < k; m++)
            repeat[rows[m].index] = k - i > 1 ? m - i + 2 : 1;
        i = k;
    }
}

/* The owner of companion i (a view's track, fx_profile_thread_add_companion) when both are
 * written and the owner is still the same thread; UINT32_MAX otherwise. */
static uint32_t written_owner(const struct fx_ff_ctx *w, uint32_t i)
{
    const struct fx_profile *p = w->p;
    uint32_t o = p->threads[i]->companion_of;
    if (o == 0 || o - 1 >= p->nthreads || o - 1 == i || w->index[o - 1] == UINT32_MAX ||
        w->index[i] == UINT32_MAX || p->threads[o - 1]->tid != p->threads[i]->tid ||
        p->threads[o - 1]->companion_of != 0)
        return UINT32_MAX;
    return o - 1;
}

/* The file's order: the model's, but each companion right after its owner (the front-end keeps
 * the file's order, keepProfileThreadOrder), so a thread's lock waits sit beside it. */
static void order_threads(struct fx_ff_ctx *w, uint32_t *owner)
{
    const struct fx_profile *p = w->p;
    uint32_t k = 0;
    for (uint32_t i = 0; i < p->nthreads; i++)
        owner[i] = w->index[i] == UINT32_MAX ? UINT32_MAX : written_owner(w, i);
    for (uint32_t i = 0; i < p->nthreads; i++) {
        if (w->index[i] == UINT32_MAX || owner[i] != UINT32_MAX)
            continue;
        w->order[k++] = i;
        for (uint32_t c = 0; c < p->nthreads; c++) {
            if (owner[c] == i)
                w->order[k++] = c;
        }
    }
    for (uint32_t f = 0; f < k; f++)
        w->index[w->order[f]] = f;
}

int fx_ff_writer_threads_prepare(struct fx_ff_ctx *w)
{
    const struct fx_profile *p = w->p;
    size_t n3 = p->nthreads ? 3 * (size_t)p->nthreads : 1;
    uint32_t *block = fx_calloc(n3 + (p->nthreads ? p->nthreads : 1), sizeof(*block));
    struct name_row *rows = fx_reallocarray(NULL, p->nthreads ? p->nthreads : 1, sizeof(*rows));
    if (!block || !rows) {
        fx_free(block);
        fx_free(rows);
        return FX_ENOMEM;
    }
    w->index = block;
    w->repeat = block + p->nthreads;
    w->order = block + 2 * (size_t)p->nthreads;
    uint32_t *owner = block + n3;
    w->nwritten = 0;
    for (uint32_t i = 0; i < p->nthreads; i++) {
        w->index[i] = fx_profile_thread_left_out(p, (fx_thread_id){i}) ? UINT32_MAX : w->nwritten++;
    }
    order_threads(w, owner);
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->nthreads; i++) {
        if (w->index[i] == UINT32_MAX || owner[i] != UINT32_MAX)
            continue; /* a companion is named after its owner */
        const struct fx_thread *t = p->threads[i];
        rows[n++] = (struct name_row){t->name ? t->name : "", t->tid, i};
    }
    w->main_thread = p->main_thread < p->nthreads && w->index[p->main_thread] != UINT32_MAX
                             ? w->index[p->main_thread]
                             : 0;
    fx_sort(rows, n, sizeof(*rows), by_name_tid);
    for (uint32_t i = 0; i < n;) {
        uint32_t k = i + 1;
        while (k < n && strcmp(rows[k].name, rows[i].name) == 0)
            k++;
        if (k - i > 1)
            mark_run(w->repeat, rows, i, k);
        i = k;
    }
    fx_free(rows);
    return FX_OK;
}

/* Thread index's track name into buf (cap bytes), or into a heap copy when longer (the caller
 * frees it); NULL when out of memory. */
static char *track_name(const struct fx_ff_ctx *w, uint32_t index, char *buf, size_t cap)
{
    const struct fx_thread *t = w->p->threads[index];
    const char *name = t->name ? t->name : "";
    uint32_t r = w->repeat[index];
    char suffix[64] = "";
    if (r == 1)
        snprintf(suffix, sizeof(suffix), " (tid %" PRId64 ")", t->tid);
    else if (r > 1)
        snprintf(suffix, sizeof(suffix), " (tid %" PRId64 ", #%" PRIu32 ")", t->tid, r - 1);
    size_t n = strlen(name), k = strlen(suffix);
    char *out = n + k < cap ? buf : fx_malloc(n + k + 1);
    if (out) {
        memcpy(out, name, n);
        memcpy(out + n, suffix, k + 1);
    }
    return out;
}

void fx_ff_writer_track_name(const struct fx_ff_ctx *w, uint32_t index)
{
    const struct fx_thread *t = w->p->threads[index];
    uint32_t owner = written_owner(w, index);
    char small[256];
    /* A companion: its owner's track name as written, then its own suffix. */
    char *name = track_name(w, owner != UINT32_MAX ? owner : index, small, sizeof(small));
    if (!name) { /* out of memory for a long name: its own name, as given */
        kv_str(w->j, "name", t->name ? t->name : "");
        return;
    }
    size_t len = t->name ? strlen(t->name) : 0;
    if (owner != UINT32_MAX && t->suffix_len <= len) {
        const char *suffix = t->name + len - t->suffix_len;
        size_t n = strlen(name);
        char *both = fx_malloc(n + t->suffix_len + 1);
        if (both) {
            memcpy(both, name, n);
            memcpy(both + n, suffix, t->suffix_len + 1);
        }
        kv_str(w->j, "name", both ? both : t->name);
        fx_free(both);
    } else {
        kv_str(w->j, "name", name);
    }
    if (name != small)
        fx_free(name);
}
