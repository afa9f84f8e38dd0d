/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof summary's allocation part (issue 17): when threads carry nativeAllocations (alloc=),
 * the methods that allocate most (estimated bytes, by the method that allocated: the frame under
 * the allocated class) and those whose allocations are still alive at the end of the profile
 * (allocations without a free of the same address), over the threads summed. */
#include "fxprof.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"

struct alloc_sum {
    double *alloc, *kept; /* per func */
    uint32_t nfuncs;
    double all, retained;
    unsigned rows;
};

/* The allocating method of an allocation stack: the nearest Java frame under the class leaf
 * (issue 32: native frames and a walk's "[native: ...]" frame may lie between them), else,
 * with no Java frame at all (the VM's own allocation), the frame under the class. */
static int32_t site_func(const struct fx_pfile_tables *t, int32_t java, int32_t st)
{
    if (st < 0 || (uint32_t)st >= t->nstacks)
        return -1;
    int32_t pre = t->stack_prefix[st], under = pre >= 0 ? pre : st;
    for (uint32_t n = 0; java >= 0 && pre >= 0 && n < t->nstacks; n++) {
        if (t->frame_category && t->frame_category[t->stack_frame[pre]] == java)
            return t->frame_func[t->stack_frame[pre]];
        pre = t->stack_prefix[pre];
    }
    return t->frame_func[t->stack_frame[under]];
}

struct one_ctx {
    const struct fx_pfile_tables *t;
    struct alloc_sum *s;
    int32_t java; /* the Java category's index in meta.categories, -1: none */
};

static void one_alloc(int32_t stack, double b, bool live, void *ctx)
{
    struct one_ctx *c = ctx;
    int32_t f = site_func(c->t, c->java, stack);
    if (f < 0 || (uint32_t)f >= c->s->nfuncs)
        return;
    c->s->rows++;
    c->s->all += b;
    c->s->alloc[f] += b;
    if (live) {
        c->s->kept[f] += b;
        c->s->retained += b;
    }
}

static cJSON *top_list(const struct fx_pfile_tables *t, const double *v, uint32_t n, unsigned ntop,
                       double all, bool print)
{
    cJSON *arr = cJSON_CreateArray();
    bool *used = fx_calloc(n ? n : 1, sizeof *used);
    for (unsigned k = 0; used && k < ntop; k++) {
        int32_t best = -1;
        for (uint32_t f = 0; f < n; f++)
            if (!used[f] && v[f] > 0 && (best < 0 || v[f] > v[best]))
                best = (int32_t)f;
        if (best < 0)
            break;
        used[best] = true;
        const char *name = t->strings[t->func_name[best]];
        if (print) {
            printf("    %5.1f%%  %12.0f  ", all > 0 ? 100.0 * v[best] / all : 0.0, v[best]);
            fx_cli_put_escaped(stdout, name);
            printf("\n");
        }
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", name);
        cJSON_AddNumberToObject(e, "bytes", v[best]);
        cJSON_AddItemToArray(arr, e);
    }
    fx_free(used);
    return arr;
}

static int32_t java_category(const cJSON *root)
{
    const cJSON *cats = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(root, "meta"), "categories");
    int32_t i = 0;
    for (const cJSON *c = cJSON_IsArray(cats) ? cats->child : NULL; c; c = c->next, i++) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");
        if (cJSON_IsString(name) && !strcmp(name->valuestring, "Java"))
            return i;
    }
    return -1;
}

cJSON *fx_summary_allocations(const cJSON *root, const char *thread, unsigned ntop, bool print)
{
    struct fx_pfile_tables t = {0};
    struct alloc_sum s = {0};
    struct fx_errbuf eb = {{0}};
    const cJSON *th;
    cJSON_ArrayForEach(th, cJSON_GetObjectItemCaseSensitive(root, "threads"))
    {
        const cJSON *na = cJSON_GetObjectItemCaseSensitive(th, "nativeAllocations");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(th, "name");
        if (!na || (thread && (!cJSON_IsString(name) || strcmp(name->valuestring, thread))))
            continue;
        if (fx_pfile_tables(root, th, &t, &eb) != FX_OK)
            continue;
        if (s.nfuncs < t.nfuncs) { /* every thread shares the tables: sized once */
            fx_free(s.alloc), fx_free(s.kept);
            s.alloc = fx_calloc(t.nfuncs, sizeof *s.alloc);
            s.kept = fx_calloc(t.nfuncs, sizeof *s.kept);
            s.nfuncs = s.alloc && s.kept ? t.nfuncs : 0;
        }
        struct one_ctx c = {&t, &s, java_category(root)};
        fx_pfile_allocations(th, t.nstacks, one_alloc, &c);
    }
    cJSON *o = NULL;
    if (s.rows > 0) {
        o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "allocatedBytes", s.all);
        cJSON_AddNumberToObject(o, "retainedBytes", s.retained);
        if (print)
            printf("\nAllocations (alloc= samples, estimated bytes): %.0f allocated, %.0f still "
                   "alive at the end\n  top allocating methods:\n",
                   s.all, s.retained);
        cJSON_AddItemToObject(o, "allocating", top_list(&t, s.alloc, s.nfuncs, ntop, s.all, print));
        if (print)
            printf("  top retaining methods:\n");
        cJSON_AddItemToObject(o, "retaining",
                              top_list(&t, s.kept, s.nfuncs, ntop, s.retained, print));
    }
    fx_free(s.alloc), fx_free(s.kept);
    fx_pfile_tables_destroy(&t);
    return o;
}
