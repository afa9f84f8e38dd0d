/* SPDX-License-Identifier: Apache-2.0 */
/* The views of a processed profile and their totals (issue 30): which view a track's samples
 * belong to, by their weightType (and a tracing-ms track's name: idle waits apart), the allocations
 * of the threads' nativeAllocations (live: not freed in the file), and the totals summary prints
 * and the agent's "Samples in this file" gives (fx_profile_totals: the same rule, so the figures
 * agree).
 * Tests: it.fxprof_summary, it.views. */
#include "fx_pfile.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"

#define IDLE_SUFFIX ": idle waits"

static const char *const view_names[FX_VIEW_COUNT] = {"cpu", "lock", "idlewait", "alloc", "live"};

const char *fx_pfile_view_name(enum fx_pfile_view v)
{
    return (unsigned)v < FX_VIEW_COUNT ? view_names[v] : "?";
}

int fx_pfile_view_parse(const char *s)
{
    if (!strcmp(s, "wall") || !strcmp(s, "itimer"))
        return FX_VIEW_CPU;
    for (int v = 0; v < FX_VIEW_COUNT; v++)
        if (!strcmp(s, view_names[v]))
            return v;
    return -1;
}

enum fx_pfile_view fx_pfile_track_view(const cJSON *thread)
{
    const cJSON *wt = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(thread, "samples"), "weightType");
    if (cJSON_IsString(wt) && !strcmp(wt->valuestring, "tracing-ms")) {
        /* the agent's idle waits track: "NAME (tid N): idle waits" (issue 30 item 6) */
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(thread, "name");
        size_t n = cJSON_IsString(name) ? strlen(name->valuestring) : 0, k = strlen(IDLE_SUFFIX);
        return n >= k && !strcmp(name->valuestring + n - k, IDLE_SUFFIX) ? FX_VIEW_IDLEWAIT
                                                                         : FX_VIEW_LOCK;
    }
    if (cJSON_IsString(wt) && !strcmp(wt->valuestring, "bytes"))
        return FX_VIEW_ALLOC;
    return FX_VIEW_CPU;
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int fx_pfile_allocations(const cJSON *thread, uint32_t nstacks, fx_pfile_alloc_fn fn, void *ctx)
{
    const cJSON *na = cJSON_GetObjectItemCaseSensitive(thread, "nativeAllocations");
    if (!cJSON_IsObject(na))
        return FX_OK;
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(na, "weight");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(na, "stack");
    const cJSON *ad = cJSON_GetObjectItemCaseSensitive(na, "memoryAddress");
    int n = cJSON_GetArraySize(w);
    if (cJSON_GetArraySize(st) != n)
        return FX_EINVAL;
    double *freed = fx_calloc(n ? (size_t)n : 1, sizeof *freed);
    if (!freed)
        return FX_ENOMEM;
    size_t nf = 0;
    /* arrays walked by their links: cJSON_GetArrayItem on each row would be quadratic */
    const cJSON *we = w->child, *se = st->child, *ae = ad ? ad->child : NULL;
    for (; we; we = we->next, ae = ae ? ae->next : NULL)
        if (cJSON_IsNumber(we) && we->valuedouble < 0 && ae && cJSON_IsNumber(ae))
            freed[nf++] = ae->valuedouble;
    qsort(freed, nf, sizeof *freed, by_double);
    ae = ad ? ad->child : NULL;
    for (we = w->child; we && se; we = we->next, se = se->next, ae = ae ? ae->next : NULL) {
        double b = cJSON_IsNumber(we) ? we->valuedouble : 0;
        if (b <= 0)
            continue;
        double s = cJSON_IsNumber(se) ? se->valuedouble : -1;
        int32_t stack = s >= 0 && s < nstacks ? (int32_t)s : -1;
        double a = ae && cJSON_IsNumber(ae) ? ae->valuedouble : -1;
        bool live = ad && !bsearch(&a, freed, nf, sizeof *freed, by_double);
        fn(stack, b, live, ctx);
    }
    fx_free(freed);
    return FX_OK;
}

static void add_alloc(int32_t stack, double bytes, bool live, void *ctx)
{
    struct fx_pfile_totals *t = ctx;
    (void)stack;
    t->allocations++;
    t->alloc_bytes += bytes;
    t->live += live;
    t->live_bytes += live ? bytes : 0;
}

static void track_totals(const struct fx_pfile_tables *tb, const struct fx_pfile_samples *sm,
                         enum fx_pfile_view v, struct fx_pfile_totals *t)
{
    for (uint32_t i = 0; i < sm->n; i++) {
        double w = sm->weight ? sm->weight[i] : 1;
        if (v == FX_VIEW_LOCK) {
            t->waits += sm->stack[i] >= 0;
            t->wait_ms += w;
        } else if (v == FX_VIEW_IDLEWAIT) {
            t->idle_waits += sm->stack[i] >= 0;
            t->idle_wait_ms += w;
        } else if (v == FX_VIEW_ALLOC) {
            t->allocations += w > 0;
            t->alloc_bytes += w > 0 ? w : 0;
        } else if (fx_pfile_is_idle(tb, sm->stack[i])) {
            t->idle += w;
        } else {
            t->samples += w;
            t->without_stack += sm->stack[i] < 0 ? w : 0;
        }
    }
}

/* Virtual-thread waits are markers, not samples (vtwait=, agent/model/vthreads_wait.c). */
static void vt_waits(const cJSON *thread, struct fx_pfile_totals *t)
{
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(thread, "markers"), "data");
    const cJSON *d;
    cJSON_ArrayForEach(d, data)
    {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(d, "type");
        const cJSON *ms = cJSON_GetObjectItemCaseSensitive(d, "duration");
        if (!cJSON_IsString(type) || strcmp(type->valuestring, "JvmVirtualThreadWait"))
            continue;
        t->vt_waits++;
        t->vt_wait_ms += cJSON_IsNumber(ms) ? ms->valuedouble : 0;
    }
}

int fx_pfile_totals(const cJSON *root, struct fx_pfile_totals *t, struct fx_errbuf *eb)
{
    struct fx_pfile_tables tb = {0};
    int rc = FX_OK;
    const cJSON *th;
    memset(t, 0, sizeof *t);
    cJSON_ArrayForEach(th, cJSON_GetObjectItemCaseSensitive(root, "threads"))
    {
        struct fx_pfile_samples sm;
        rc = fx_pfile_tables(root, th, &tb, eb);
        if (rc == FX_OK)
            rc = fx_pfile_samples(th, tb.nstacks, &sm, eb);
        if (rc != FX_OK)
            break;
        track_totals(&tb, &sm, fx_pfile_track_view(th), t);
        vt_waits(th, t);
        fx_pfile_samples_destroy(&sm);
        rc = fx_pfile_allocations(th, tb.nstacks, add_alloc, t);
        if (rc != FX_OK) {
            fx_errbuf_set(eb, "profile: a nativeAllocations table is malformed");
            break;
        }
    }
    fx_pfile_tables_destroy(&tb);
    return rc;
}
