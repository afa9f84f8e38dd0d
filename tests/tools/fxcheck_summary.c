/* SPDX-License-Identifier: Apache-2.0 */
/* fxcheck --summary-json: what a call tree would count, computed independently of the
 * front-end from the stack table — per thread its samples, CPU time (element 0 of
 * threadCPUDelta is ignored, as the front-end does; in ns whether the file says "ns" or "µs",
 * raw for cycles) and per func the self and total counts,
 * a func counted once per sample however often it recurs. Runs only on a file that passed. */
#include "fxcheck.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tables {
    long n_stacks, n_funcs;
    long *stack_frame, *stack_prefix; /* prefix: parent index or -1 */
    long *frame_func;
    const char **func_name;
};

static long *int_column(const cJSON *table, const char *key, long n)
{
    long *out = ck_xcalloc((size_t)n, sizeof *out);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(table, key);
    long i = 0;
    for (const cJSON *e = a ? a->child : NULL; e && i < n; e = e->next, i++)
        out[i] = cJSON_IsNumber(e) ? (long)e->valuedouble : -1;
    return out;
}

static void tables_load(const struct ck *c, struct tables *t)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(c->shared, "stackTable");
    const cJSON *fr = cJSON_GetObjectItemCaseSensitive(c->shared, "frameTable");
    const cJSON *fu = cJSON_GetObjectItemCaseSensitive(c->shared, "funcTable");
    const cJSON *strings = cJSON_GetObjectItemCaseSensitive(c->shared, "stringArray");
    t->n_stacks = c->n[T_STACK];
    t->n_funcs = c->n[T_FUNC];
    t->stack_frame = int_column(st, "frame", t->n_stacks);
    t->stack_prefix = int_column(st, "prefixOffset", t->n_stacks);
    for (long i = 0; i < t->n_stacks; i++)
        t->stack_prefix[i] = t->stack_prefix[i] == 0 ? -1 : i - t->stack_prefix[i];
    t->frame_func = int_column(fr, "func", c->n[T_FRAME]);
    const char **str = ck_xcalloc((size_t)c->n[T_STR], sizeof *str);
    long i = 0;
    for (const cJSON *e = strings->child; e; e = e->next, i++)
        str[i] = e->valuestring;
    long *names = int_column(fu, "name", t->n_funcs);
    t->func_name = ck_xcalloc((size_t)t->n_funcs, sizeof *t->func_name);
    for (i = 0; i < t->n_funcs; i++)
        t->func_name[i] = str[names[i]];
    free(names);
    free(str);
}

static void tables_free(struct tables *t)
{
    free(t->stack_frame);
    free(t->stack_prefix);
    free(t->frame_func);
    free(t->func_name);
}

struct func_count {
    long func;
    double self, total;
};

static int by_total(const void *a, const void *b)
{
    const struct func_count *x = a, *y = b;
    if (x->total != y->total)
        return x->total < y->total ? 1 : -1;
    return x->func < y->func ? -1 : x->func > y->func;
}

/* Walks each used stack once: cost is (distinct stacks sampled) x depth, not samples x depth. */
static cJSON *func_counts(const struct tables *t, const double *per_stack)
{
    double *self = ck_xcalloc((size_t)t->n_funcs, sizeof *self);
    double *total = ck_xcalloc((size_t)t->n_funcs, sizeof *total);
    long *seen = ck_xcalloc((size_t)t->n_funcs, sizeof *seen);
    for (long s = 0; s < t->n_stacks; s++) {
        if (per_stack[s] == 0)
            continue;
        self[t->frame_func[t->stack_frame[s]]] += per_stack[s];
        for (long k = s; k >= 0; k = t->stack_prefix[k]) {
            long f = t->frame_func[t->stack_frame[k]];
            if (seen[f] != s + 1) {
                seen[f] = s + 1;
                total[f] += per_stack[s];
            }
        }
    }
    struct func_count *fc = ck_xcalloc((size_t)t->n_funcs, sizeof *fc);
    long n = 0;
    for (long f = 0; f < t->n_funcs; f++)
        if (total[f] > 0)
            fc[n++] = (struct func_count){f, self[f], total[f]};
    qsort(fc, (size_t)n, sizeof *fc, by_total);
    cJSON *arr = cJSON_CreateArray();
    for (long k = 0; k < n; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", t->func_name[fc[k].func]);
        cJSON_AddNumberToObject(o, "self", fc[k].self);
        cJSON_AddNumberToObject(o, "total", fc[k].total);
        cJSON_AddItemToArray(arr, o);
    }
    free(fc);
    free(seen);
    free(total);
    free(self);
    return arr;
}

/* ns per threadCPUDelta unit: 1000 for µs, else 1 (ns, or cycles summed as they are). */
static double cpu_unit_ns(const struct ck *c)
{
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(c->meta, "sampleUnits");
    const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(u, "threadCPUDelta");
    return cJSON_IsString(cpu) && strcmp(cpu->valuestring, "\xC2\xB5s") == 0 ? 1000 : 1;
}

static double cpu_sum(const cJSON *samples, double unit_ns)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(samples, "threadCPUDelta");
    double sum = 0;
    long i = 0;
    for (const cJSON *e = d ? d->child : NULL; e; e = e->next, i++)
        if (i > 0 && cJSON_IsNumber(e))
            sum += e->valuedouble;
    return sum * unit_ns;
}

static cJSON *thread_summary(const struct tables *t, const cJSON *th, long index, double unit_ns)
{
    const cJSON *samples = cJSON_GetObjectItemCaseSensitive(th, "samples");
    const cJSON *stack = cJSON_GetObjectItemCaseSensitive(samples, "stack");
    const cJSON *weight = cJSON_GetObjectItemCaseSensitive(samples, "weight");
    double *per_stack = ck_xcalloc((size_t)t->n_stacks, sizeof *per_stack);
    const cJSON *w = cJSON_IsArray(weight) ? weight->child : NULL;
    double null_stack = 0, weighted = 0;
    for (const cJSON *e = stack->child; e; e = e->next, w = w ? w->next : NULL) {
        double wt = w && cJSON_IsNumber(w) ? w->valuedouble : 1;
        weighted += wt;
        if (cJSON_IsNumber(e))
            per_stack[(long)e->valuedouble] += wt;
        else
            null_stack += wt;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "index", (double)index);
    cJSON_AddItemToObject(o, "name",
                          cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(th, "name"), 1));
    cJSON_AddItemToObject(o, "tid",
                          cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(th, "tid"), 1));
    cJSON_AddItemToObject(o, "pid",
                          cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(th, "pid"), 1));
    cJSON_AddBoolToObject(o, "isMainThread",
                          cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(th, "isMainThread")));
    cJSON_AddNumberToObject(o, "samples", (double)cJSON_GetArraySize(stack));
    cJSON_AddNumberToObject(o, "weightedSamples", weighted);
    cJSON_AddNumberToObject(o, "nullStackSamples", null_stack);
    cJSON_AddNumberToObject(o, "cpuDeltaSum", cpu_sum(samples, unit_ns));
    const cJSON *markers = cJSON_GetObjectItemCaseSensitive(th, "markers");
    cJSON_AddNumberToObject(o, "markers", (double)ck_table_length(markers));
    cJSON_AddItemToObject(o, "funcs", func_counts(t, per_stack));
    free(per_stack);
    return o;
}

unsigned long long ck_sample_total(const struct ck *c)
{
    const cJSON *threads = cJSON_GetObjectItemCaseSensitive(c->root, "threads");
    unsigned long long n = 0;
    for (const cJSON *th = threads ? threads->child : NULL; th; th = th->next) {
        long len = ck_table_length(cJSON_GetObjectItemCaseSensitive(th, "samples"));
        n += len > 0 ? (unsigned long long)len : 0;
    }
    return n;
}

static cJSON *counters_summary(const struct ck *c)
{
    cJSON *arr = cJSON_CreateArray();
    const cJSON *counters = cJSON_GetObjectItemCaseSensitive(c->root, "counters");
    for (const cJSON *k = counters ? counters->child : NULL; k; k = k->next) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToObject(o, "name",
                              cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(k, "name"), 1));
        cJSON_AddNumberToObject(
                o, "samples",
                (double)ck_table_length(cJSON_GetObjectItemCaseSensitive(k, "samples")));
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

int ck_summary_print(const struct ck *c)
{
    struct tables t;
    tables_load(c, &t);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "file", c->file);
    cJSON_AddNumberToObject(root, "stacks", (double)c->n[T_STACK]);
    cJSON_AddNumberToObject(root, "frames", (double)c->n[T_FRAME]);
    cJSON_AddNumberToObject(root, "funcs", (double)c->n[T_FUNC]);
    cJSON *threads = cJSON_AddArrayToObject(root, "threads");
    long i = 0;
    double unit_ns = cpu_unit_ns(c);
    const cJSON *th_arr = cJSON_GetObjectItemCaseSensitive(c->root, "threads");
    for (const cJSON *th = th_arr->child; th; th = th->next, i++)
        cJSON_AddItemToArray(threads, thread_summary(&t, th, i, unit_ns));
    cJSON_AddItemToObject(root, "counters", counters_summary(c));
    char *text = cJSON_Print(root);
    int rc = text && puts(text) >= 0 ? 0 : 1;
    free(text);
    cJSON_Delete(root);
    tables_free(&t);
    return rc;
}

/* Rule "totals" (issue 30): Profile Info's "Samples in this file" (agent/model/window.c) must
 * give what the file holds, counted here on their own: the mode's samples (weightType samples,
 * weight, "[idle]" root stacks apart), lock waits (tracing-ms samples with a stack; weights in
 * ms, written with µs precision), idle waits apart (the same on a track named "...: idle
 * waits"), allocation rows with bytes > 0. A file without the group (an
 * older agent, fxsynth) has nothing to check. */
struct totals {
    double cpu, idle, waits, wait_us, idle_waits, idle_wait_us, allocations, alloc_bytes;
};

static bool is_idle(const struct tables *t, long s)
{
    return s >= 0 && s < t->n_stacks && t->stack_prefix[s] < 0 &&
           !strcmp(t->func_name[t->frame_func[t->stack_frame[s]]], "[idle]");
}

static void count_thread(const struct tables *t, const cJSON *th, struct totals *o)
{
    const cJSON *samples = cJSON_GetObjectItemCaseSensitive(th, "samples");
    const cJSON *wtype = cJSON_GetObjectItemCaseSensitive(samples, "weightType");
    const char *type = cJSON_IsString(wtype) ? wtype->valuestring : "samples";
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(th, "name");
    size_t len = cJSON_IsString(name) ? strlen(name->valuestring) : 0;
    bool idle_track = len >= 12 && !strcmp(name->valuestring + len - 12, ": idle waits");
    const cJSON *weight = cJSON_GetObjectItemCaseSensitive(samples, "weight");
    const cJSON *w = cJSON_IsArray(weight) ? weight->child : NULL;
    const cJSON *stack = cJSON_GetObjectItemCaseSensitive(samples, "stack");
    for (const cJSON *e = stack->child; e; e = e->next, w = w ? w->next : NULL) {
        double wt = w && cJSON_IsNumber(w) ? w->valuedouble : 1;
        long s = cJSON_IsNumber(e) ? (long)e->valuedouble : -1;
        if (!strcmp(type, "tracing-ms") && idle_track) {
            o->idle_waits += s >= 0;
            o->idle_wait_us += wt * 1000;
        } else if (!strcmp(type, "tracing-ms")) {
            o->waits += s >= 0;
            o->wait_us += wt * 1000;
        } else if (!strcmp(type, "samples")) {
            *(is_idle(t, s) ? &o->idle : &o->cpu) += wt;
        }
    }
    const cJSON *na = cJSON_GetObjectItemCaseSensitive(th, "nativeAllocations");
    const cJSON *bytes = cJSON_GetObjectItemCaseSensitive(na, "weight");
    for (const cJSON *b = cJSON_IsArray(bytes) ? bytes->child : NULL; b; b = b->next)
        if (cJSON_IsNumber(b) && b->valuedouble > 0) {
            o->allocations++;
            o->alloc_bytes += b->valuedouble;
        }
}

/* The group's entry whose label starts with `prefix`; 0 when absent (a zero is not written). */
static double entry(const cJSON *group, const char *prefix)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(group, "entries"))
    {
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(e, "label");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "value");
        if (cJSON_IsString(l) && !strncmp(l->valuestring, prefix, strlen(prefix)))
            return cJSON_IsNumber(v) ? v->valuedouble : -1;
    }
    return 0;
}

void ck_totals(struct ck *c)
{
    const cJSON *g, *group = NULL;
    cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(c->meta, "extra"))
    {
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(g, "label");
        if (cJSON_IsString(l) && !strcmp(l->valuestring, "Samples in this file"))
            group = g;
    }
    if (!group)
        return;
    struct tables t;
    struct totals o = {0};
    tables_load(c, &t);
    const cJSON *th;
    cJSON_ArrayForEach(th, cJSON_GetObjectItemCaseSensitive(c->root, "threads"))
    {
        count_thread(&t, th, &o);
    }
    tables_free(&t);
    double cpu = entry(group, "CPU samples") + entry(group, "wall samples");
    const struct {
        const char *label;
        double said, counted, tolerance;
    } rows[] = {
            {"CPU or wall samples", cpu, o.cpu, 0},
            {"[idle] samples", entry(group, "[idle] samples"), o.idle, 0},
            {"lock waits", entry(group, "lock waits"), o.waits, 0},
            /* each weight is written in ms with 3 decimals: 0.5 µs of rounding per wait */
            {"lock wait time, us", entry(group, "lock wait time, us"), o.wait_us,
             0.5 * o.waits + 1},
            {"idle waits", entry(group, "idle waits"), o.idle_waits, 0},
            {"idle wait time, us", entry(group, "idle wait time, us"), o.idle_wait_us,
             0.5 * o.idle_waits + 1},
            {"allocation samples", entry(group, "allocation samples"), o.allocations, 0},
            {"allocated bytes (estimated)", entry(group, "allocated bytes"), o.alloc_bytes, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        if (fabs(rows[i].said - rows[i].counted) > rows[i].tolerance)
            ck_fail(c, "meta.extra", "totals",
                    "Samples in this file: %s says %.0f, the file holds %.0f", rows[i].label,
                    rows[i].said, rows[i].counted);
}
