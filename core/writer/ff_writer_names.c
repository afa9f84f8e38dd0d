/* SPDX-License-Identifier: Apache-2.0 */
/* The writer's threads: which of the model's are written (all but those a snapshot leaves out,
 * fx_profile_thread_left_out: DestroyJavaVM with nothing to show), at which index, and their
 * track names (PROFILE-FORMAT.md §7): a thread's own name, or "name (tid N)" when another
 * thread of the file has the same name (a pool's "pool-1-thread-1" over time, a JVM
 * thread attached again), so that the track list tells them apart; "name (tid N, #K)" when the
 * tid repeats too (K counts those threads in file order). Unique names are written unchanged,
 * so a track stays findable by the name the application gave it. */
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

int fx_ff_writer_threads_prepare(struct fx_ff_ctx *w)
{
    const struct fx_profile *p = w->p;
    uint32_t *block = fx_calloc(p->nthreads ? 2 * (size_t)p->nthreads : 1, sizeof(*block));
    struct name_row *rows = fx_reallocarray(NULL, p->nthreads ? p->nthreads : 1, sizeof(*rows));
    if (!block || !rows) {
        fx_free(block);
        fx_free(rows);
        return FX_ENOMEM;
    }
    w->index = block;
    w->repeat = block + p->nthreads;
    w->nwritten = 0;
    for (uint32_t i = 0; i < p->nthreads; i++) {
        w->index[i] = UINT32_MAX;
        if (fx_profile_thread_left_out(p, i))
            continue;
        const struct fx_thread *t = &p->threads[i];
        rows[w->nwritten] = (struct name_row){t->name ? t->name : "", t->tid, i};
        w->index[i] = w->nwritten++;
    }
    w->main_thread = p->main_thread < p->nthreads && w->index[p->main_thread] != UINT32_MAX
                             ? w->index[p->main_thread]
                             : 0;
    uint32_t n = w->nwritten;
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

void fx_ff_writer_track_name(const struct fx_ff_ctx *w, uint32_t index)
{
    const struct fx_thread *t = &w->p->threads[index];
    const char *name = t->name ? t->name : "";
    uint32_t r = w->repeat[index];
    char small[256], suffix[64];
    if (r == 0) {
        kv_str(w->j, "name", name);
        return;
    }
    if (r == 1)
        snprintf(suffix, sizeof(suffix), " (tid %" PRId64 ")", t->tid);
    else
        snprintf(suffix, sizeof(suffix), " (tid %" PRId64 ", #%" PRIu32 ")", t->tid, r - 1);
    size_t n = strlen(name), k = strlen(suffix);
    char *buf = n + k < sizeof(small) ? small : fx_malloc(n + k + 1);
    /* Out of memory for a long name: its own name, as before track names were told apart. */
    if (!buf) {
        kv_str(w->j, "name", name);
        return;
    }
    memcpy(buf, name, n);
    memcpy(buf + n, suffix, k + 1);
    kv_str(w->j, "name", buf);
    if (buf != small)
        fx_free(buf);
}
