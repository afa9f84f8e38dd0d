/* SPDX-License-Identifier: Apache-2.0 */
/* The walk of a parsed profile (fx_convert.h): per track, every stack's values in the pprof
 * file's sample types, each sample in its track's view (fx_pfile_track_view): the mode's
 * samples and their time ([idle] apart unless kept), lock waits and their delay, allocation
 * samples and bytes, and the nativeAllocations rows as allocations and, unfreed, live.
 * Tests: it.fxprof_convert. */
#include "fx_convert.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"

static void add_alloc(int32_t stack, double bytes, bool live, void *ctx)
{
    double *v = (double *)ctx + (size_t)(stack + 1) * FX_V_COUNT;
    v[FX_V_ALLOC_OBJECTS] += 1;
    v[FX_V_ALLOC_SPACE] += bytes;
    v[FX_V_INUSE_OBJECTS] += live;
    v[FX_V_INUSE_SPACE] += live ? bytes : 0;
}

/* One sample's values in its view's types; a lock waits sample without a stack (a wait's end,
 * weight 0) is no wait. */
static void add_sample(struct fx_walk *k, enum fx_pfile_view view, int32_t st, double w)
{
    double *v = k->v + (size_t)(st + 1) * FX_V_COUNT;
    if (view == FX_VIEW_LOCK) {
        v[FX_V_CONTENTIONS] += st >= 0;
        v[FX_V_DELAY] += w * 1e6; /* tracing-ms */
    } else if (view == FX_VIEW_IDLEWAIT) {
        v[FX_V_IDLE_WAITS] += st >= 0;
        v[FX_V_IDLE_DELAY] += w * 1e6;
    } else if (view == FX_VIEW_ALLOC) {
        v[FX_V_ALLOC_OBJECTS] += w > 0;
        v[FX_V_ALLOC_SPACE] += w;
    } else if (!k->keep_idle && fx_pfile_is_idle(&k->t, st)) {
        k->idle += w;
    } else {
        v[FX_V_SAMPLES] += w;
        v[FX_V_TIME] += w * k->interval_ns;
    }
}

/* A sample of the mode's view in a trace span (issue 33): kept apart, summed per (span, stack)
 * after the track's other rows. */
struct fx_walk_pair {
    int32_t span, stack;
    double w;
};

/* 1: sample i is in a span, kept apart; 0: in none; FX_ENOMEM. */
static int in_span(struct fx_walk *k, const struct fx_pfile_samples *sm, uint32_t i)
{
    int32_t at = k->spans.n && sm->time ? fx_pfile_span_at(&k->spans, sm->time[i]) : -1;
    if (at < 0 || (!k->keep_idle && fx_pfile_is_idle(&k->t, sm->stack[i])))
        return 0;
    if (k->npairs == k->pairscap) {
        size_t cap = k->pairscap ? k->pairscap * 2 : 256;
        struct fx_walk_pair *n = fx_reallocarray(k->pairs, cap, sizeof *n);
        if (!n)
            return FX_ENOMEM;
        k->pairs = n, k->pairscap = cap;
    }
    k->pairs[k->npairs++] = (struct fx_walk_pair){at, sm->stack[i], sm->weight ? sm->weight[i] : 1};
    return 1;
}

static int by_span_stack(const void *x, const void *y)
{
    const struct fx_walk_pair *a = x, *b = y;
    if (a->span != b->span)
        return a->span < b->span ? -1 : 1;
    return (a->stack > b->stack) - (a->stack < b->stack);
}

/* The rows of the samples in spans, one per (span, stack), k->span set while fn runs. */
static int span_rows(struct fx_walk *k, fx_walk_fn fn, void *ctx)
{
    int rc = FX_OK;
    qsort(k->pairs, k->npairs, sizeof *k->pairs, by_span_stack);
    for (size_t i = 0, j; rc == FX_OK && i < k->npairs; i = j) {
        double v[FX_V_COUNT] = {0};
        for (j = i; j < k->npairs && !by_span_stack(&k->pairs[i], &k->pairs[j]); j++) {
            v[FX_V_SAMPLES] += k->pairs[j].w;
            v[FX_V_TIME] += k->pairs[j].w * k->interval_ns;
        }
        k->span = &k->spans.s[k->pairs[i].span];
        rc = fn(k, k->pairs[i].stack, v, ctx);
    }
    k->span = NULL;
    k->npairs = 0;
    return rc;
}

static int track_values(struct fx_walk *k, const cJSON *th, struct fx_errbuf *eb)
{
    struct fx_pfile_samples sm;
    int rc = fx_pfile_tables(k->root, th, &k->t, eb);
    if (rc == FX_OK)
        rc = fx_pfile_samples(th, k->t.nstacks, &sm, eb);
    if (rc != FX_OK)
        return rc;
    if (k->rows < k->t.nstacks + 1) {
        fx_free(k->v);
        k->v = fx_calloc((size_t)(k->t.nstacks + 1) * FX_V_COUNT, sizeof *k->v);
        k->rows = k->v ? k->t.nstacks + 1 : 0;
    }
    if (!k->v) {
        fx_pfile_samples_destroy(&sm);
        fx_errbuf_set(eb, "out of memory");
        return FX_ENOMEM;
    }
    memset(k->v, 0, (size_t)(k->t.nstacks + 1) * FX_V_COUNT * sizeof *k->v);
    enum fx_pfile_view view = fx_pfile_track_view(th);
    fx_pfile_spans_destroy(&k->spans);
    if (view == FX_VIEW_CPU && (rc = fx_pfile_spans(th, &k->spans, eb)) != FX_OK) {
        fx_pfile_samples_destroy(&sm);
        return rc;
    }
    for (uint32_t i = 0; rc == FX_OK && i < sm.n; i++) {
        int in = view == FX_VIEW_CPU ? in_span(k, &sm, i) : 0;
        if (in == 0)
            add_sample(k, view, sm.stack[i], sm.weight ? sm.weight[i] : 1);
        else if (in < 0)
            rc = in;
    }
    fx_pfile_samples_destroy(&sm);
    if (rc != FX_OK) {
        fx_errbuf_set(eb, "out of memory");
        return rc;
    }
    rc = fx_pfile_allocations(th, k->t.nstacks, add_alloc, k->v);
    if (rc != FX_OK)
        fx_errbuf_set(eb, "profile: a nativeAllocations table is malformed");
    return rc;
}

int fx_convert_walk(struct fx_walk *k, fx_walk_fn fn, void *ctx, struct fx_errbuf *eb)
{
    const cJSON *iv = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(k->root, "meta"), "interval");
    k->interval_ns = cJSON_IsNumber(iv) ? iv->valuedouble * 1e6 : 1e7;
    const cJSON *th;
    cJSON_ArrayForEach(th, cJSON_GetObjectItemCaseSensitive(k->root, "threads"))
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(th, "name");
        k->thread = cJSON_IsString(name) ? name->valuestring : "(unnamed)";
        int rc = track_values(k, th, eb);
        for (uint32_t s = 0; rc == FX_OK && s <= k->t.nstacks; s++) {
            const double *v = k->v + (size_t)s * FX_V_COUNT;
            bool any = false;
            for (unsigned i = 0; i < FX_V_COUNT; i++)
                any |= v[i] != 0;
            if (any)
                rc = fn(k, (int32_t)s - 1, v, ctx);
        }
        if (rc == FX_OK)
            rc = span_rows(k, fn, ctx);
        if (rc != FX_OK)
            return rc;
    }
    return FX_OK;
}

void fx_convert_walk_destroy(struct fx_walk *k)
{
    fx_pfile_tables_destroy(&k->t);
    fx_pfile_spans_destroy(&k->spans);
    fx_free(k->pairs);
    k->pairs = NULL;
    k->npairs = k->pairscap = 0;
    fx_free(k->v);
    k->v = NULL;
    k->rows = 0;
}
