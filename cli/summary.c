/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof summary: the hottest methods of each thread, busiest thread first, in one view (issue
 * 30): the recording's mode (cpu or wall samples) by default, or lock waits (ms), idle waits
 * (ms waited for work), allocations or the live heap (bytes) with --view. "Self" counts the weight
 * whose leaf is the method; "total" the weight with the method anywhere on the stack, once per
 * sample however deep the recursion, as the profiler's call tree does. The first line gives every
 * view's total. */
#include "fxprof.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_args.h"
#include "fx_alloc.h"
#include "fx_jfr.h"

#define DEFAULT_TOP 10

struct summary_args {
    const char *file, *thread;
    unsigned top;
    int view; /* enum fx_pfile_view */
    bool json, all;
};

struct entry {
    const char *name;
    double value;
};

struct thread_sum {
    const char *name;
    char tid[32];
    unsigned index;
    double samples, nostack, idle, cpu_ms; /* samples: all but the idle ones (lock view: ms) */
    double waits;                          /* lock view: the samples with a stack */
    bool has_cpu;
    struct entry *self, *total; /* the top entries, sorted */
    unsigned nself, ntotal;
};

/* Scratch reused across threads, sized for the current tables. */
struct scratch {
    double *stack_w, *self, *total;
    uint32_t *mark, stamp;
    uint32_t nstacks, nfuncs;
};

static int usage(void)
{
    printf("usage: fxprof summary FILE [--top N] [--thread NAME] [--view VIEW] [--json] [--all]\n"
           "Prints each view's total on the first line (the recording's CPU or wall samples, as\n"
           "the agent's exit line and Profile Info's \"Samples in this file\" count them; [idle],\n"
           "lock waits, idle waits and allocations apart), then, per thread (busiest first),\n"
           "the top N methods by self and by total in one view, with their share of the thread's\n"
           "total, and the profile's counters (meta.extra).\n"
           "  --view VIEW     cpu (or wall: the recording's mode, samples; the default), lock (lock\n"
           "                  waits: waits and ms waited), idlewait (idle waits: threads parked\n"
           "                  waiting for work, a pool's getTask or a queue's take; waits and\n"
           "                  ms, never in the lock waits), alloc or live (allocated bytes, bytes\n"
           "                  still alive at the end: the top allocating and retaining methods)\n"
           "The agent's [idle] samples (a thread off the CPU) are not in the shares: their count\n"
           "is given on the thread's line. Threads without any sample (in cpu and itimer mode the\n"
           "agent writes every thread: these did not run) are counted on the first line and named\n"
           "on one line after the others.\n"
           "  --top N         methods per list (default 10)\n"
           "  --thread NAME   only the thread(s) with this exact name\n"
           "  --json          the same as one JSON object on stdout\n"
           "  --all           also the counters that are zero (left out by default)\n"
           "A file that is not a profile is refused from its first bytes. Names are printed with\n"
           "control characters escaped (\\n, \\x1b).\n"
           "exit codes: 0 printed, 1 failed (not a profile, unreadable), 2 bad command line\n");
    return FX_CLI_OK;
}

static int parse_args(int argc, char **argv, struct summary_args *a)
{
    static const struct option longs[] = {{"top", required_argument, NULL, 'n'},
                                          {"thread", required_argument, NULL, 't'},
                                          {"json", no_argument, NULL, 'j'},
                                          {"all", no_argument, NULL, 'a'},
                                          {"view", required_argument, NULL, 'v'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    char *end;
    int o;
    optind = 0;
    while ((o = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        switch (o) {
        case 'n':
            a->top = (unsigned)strtoul(optarg, &end, 10);
            if (*optarg < '1' || *optarg > '9' || *end || a->top > 100000)
                return fx_cli_usage("summary", "--top '%s' is not a number from 1 to 100000",
                                    optarg);
            break;
        case 't':
            a->thread = optarg;
            break;
        case 'j':
            a->json = true;
            break;
        case 'a':
            a->all = true;
            break;
        case 'v':
            if (fx_cli_view("summary", optarg, &a->view) != FX_CLI_OK)
                return FX_CLI_USAGE;
            break;
        default:
            return fx_cli_opt_rest("summary", o, argv);
        }
    }
    return fx_cli_one_file("summary", argc, argv, &a->file);
}

/* ---- aggregation ---- */

static int scratch_fit(struct scratch *s, const struct fx_pfile_tables *t)
{
    if (s->nstacks < t->nstacks) {
        fx_free(s->stack_w);
        s->stack_w = fx_calloc(t->nstacks, sizeof *s->stack_w);
        s->nstacks = s->stack_w ? t->nstacks : 0;
    }
    if (s->nfuncs < t->nfuncs) {
        fx_free(s->self), fx_free(s->total), fx_free(s->mark);
        s->self = fx_calloc(t->nfuncs, sizeof *s->self);
        s->total = fx_calloc(t->nfuncs, sizeof *s->total);
        s->mark = fx_calloc(t->nfuncs, sizeof *s->mark);
        s->stamp = 0;
        s->nfuncs = s->self && s->total && s->mark ? t->nfuncs : 0;
    }
    if (s->nstacks < t->nstacks || s->nfuncs < t->nfuncs)
        return FX_ENOMEM;
    memset(s->stack_w, 0, t->nstacks * sizeof *s->stack_w);
    memset(s->self, 0, t->nfuncs * sizeof *s->self);
    memset(s->total, 0, t->nfuncs * sizeof *s->total);
    return FX_OK;
}

static void scratch_destroy(struct scratch *s)
{
    fx_free(s->stack_w), fx_free(s->self), fx_free(s->total), fx_free(s->mark);
}

/* Weighs each stack once, then walks each used stack once: the cost is the number of distinct
 * stacks times their depth, not samples times depth. */
static void aggregate(const struct fx_pfile_tables *t, const struct fx_pfile_samples *sm,
                      struct scratch *s, struct thread_sum *ts)
{
    for (uint32_t i = 0; i < sm->n; i++) {
        double w = sm->weight ? sm->weight[i] : 1;
        if (fx_pfile_is_idle(t, sm->stack[i])) {
            ts->idle += w;
            continue;
        }
        ts->samples += w;
        ts->waits += sm->stack[i] >= 0;
        if (sm->stack[i] < 0)
            ts->nostack += w;
        else
            s->stack_w[sm->stack[i]] += w;
    }
    for (uint32_t st = 0; st < t->nstacks; st++) {
        double w = s->stack_w[st];
        if (w == 0)
            continue;
        s->self[t->frame_func[t->stack_frame[st]]] += w;
        if (++s->stamp == 0) { /* wrapped: old marks could collide */
            memset(s->mark, 0, s->nfuncs * sizeof *s->mark);
            s->stamp = 1;
        }
        for (int32_t k = (int32_t)st; k >= 0; k = t->stack_prefix[k]) {
            int32_t f = t->frame_func[t->stack_frame[k]];
            if (s->mark[f] != s->stamp) {
                s->mark[f] = s->stamp;
                s->total[f] += w;
            }
        }
    }
}

static int by_value(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? 1 : -1;
    return strcmp(x->name, y->name);
}

static int top(const struct fx_pfile_tables *t, const double *v, unsigned n, struct entry **out,
               unsigned *nout)
{
    struct entry *e = fx_calloc(t->nfuncs ? t->nfuncs : 1, sizeof *e);
    if (!e)
        return FX_ENOMEM;
    unsigned k = 0;
    for (uint32_t f = 0; f < t->nfuncs; f++)
        if (v[f] > 0)
            e[k++] = (struct entry){t->strings[t->func_name[f]], v[f]};
    qsort(e, k, sizeof *e, by_value);
    *out = e;
    *nout = k < n ? k : n;
    return FX_OK;
}

static void thread_cpu(const struct cJSON *root, const struct fx_pfile_samples *sm,
                       struct thread_sum *ts)
{
    const cJSON *units = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(root, "meta"), "sampleUnits");
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(units, "threadCPUDelta");
    const char *unit = cJSON_IsString(u) ? u->valuestring : "";
    double scale = !strcmp(unit, "ns") ? 1e-6 : !strcmp(unit, "\xc2\xb5s") ? 1e-3 : 0;
    if (scale == 0 || (!sm->cpu && sm->n > 0)) /* an empty track has no column: 0 ms */
        return;
    ts->has_cpu = true;
    for (uint32_t i = 1; i < sm->n; i++) /* the front-end ignores the first sample's delta */
        ts->cpu_ms += sm->cpu[i] * scale;
}

static void thread_ids(const cJSON *th, unsigned index, struct thread_sum *ts)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(th, "name");
    const cJSON *tid = cJSON_GetObjectItemCaseSensitive(th, "tid");
    ts->name = cJSON_IsString(name) ? name->valuestring : "(unnamed)";
    ts->index = index;
    if (cJSON_IsNumber(tid))
        snprintf(ts->tid, sizeof ts->tid, "%.0f", tid->valuedouble);
    else
        snprintf(ts->tid, sizeof ts->tid, "%s", cJSON_IsString(tid) ? tid->valuestring : "?");
}

static int summarise(const struct cJSON *root, const cJSON *th, unsigned ntop,
                     struct fx_pfile_tables *t, struct scratch *s, struct thread_sum *ts,
                     struct fx_errbuf *eb)
{
    struct fx_pfile_samples sm;
    int rc = fx_pfile_tables(root, th, t, eb);
    if (rc == FX_OK)
        rc = fx_pfile_samples(th, t->nstacks, &sm, eb);
    if (rc != FX_OK)
        return rc;
    rc = scratch_fit(s, t);
    if (rc == FX_OK) {
        aggregate(t, &sm, s, ts);
        thread_cpu(root, &sm, ts);
        rc = top(t, s->self, ntop, &ts->self, &ts->nself);
    }
    if (rc == FX_OK)
        rc = top(t, s->total, ntop, &ts->total, &ts->ntotal);
    if (rc == FX_ENOMEM)
        fx_errbuf_set(eb, "out of memory summarising thread '%s'", ts->name);
    fx_pfile_samples_destroy(&sm);
    return rc;
}

/* ---- output ---- */

static bool by_cpu;  /* set once for the sort: every thread has CPU figures */
static bool lock_ms; /* the lock or idle wait view: weights are milliseconds */
static bool idle_ms; /* of them the idle wait view */

static int busiest(const void *a, const void *b)
{
    const struct thread_sum *x = a, *y = b;
    double vx = by_cpu ? x->cpu_ms : x->samples, vy = by_cpu ? y->cpu_ms : y->samples;
    if (vx != vy)
        return vx < vy ? 1 : -1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Names come from the file: a thread or method name with an escape sequence or a line break
 * must not reach the terminal as such. */
static void put(const char *text)
{
    fx_cli_put_escaped(stdout, text);
}

static void print_list(const char *title, const struct entry *e, unsigned n, double all)
{
    printf("  %s:\n", title);
    for (unsigned i = 0; i < n; i++) {
        printf(lock_ms ? "    %5.1f%%  %9.1f ms  " : "    %5.1f%%  %9.0f  ",
               all > 0 ? 100.0 * e[i].value / all : 0.0, e[i].value);
        put(e[i].name);
        printf("\n");
    }
}

/* No sample at all, [idle] ones included: in cpu and itimer modes the agent writes every
 * registered thread, and such a thread did not run while sampled. */
static bool is_empty(const struct thread_sum *ts)
{
    return ts->samples == 0 && ts->idle == 0;
}

static unsigned count_empty(const struct thread_sum *ts, unsigned n)
{
    unsigned k = 0;
    for (unsigned i = 0; i < n; i++)
        k += is_empty(&ts[i]);
    return k;
}

/* One line for them all: a JVM has a dozen service threads that seldom run. */
static void print_empty(const struct thread_sum *ts, unsigned n)
{
    unsigned k = count_empty(ts, n), shown = 0;
    if (!k)
        return;
    printf("\nThreads without samples (%u): ", k);
    for (unsigned i = 0; i < n; i++) {
        if (!is_empty(&ts[i]))
            continue;
        printf("%s\"", shown++ ? ", " : "");
        put(ts[i].name);
        printf("\" (tid ");
        put(ts[i].tid);
        printf(")");
    }
    printf("\n");
}

static void print_thread(const struct thread_sum *ts)
{
    if (is_empty(ts))
        return; /* print_empty */
    printf("\nThread \"");
    put(ts->name);
    printf("\" (tid ");
    put(ts->tid);
    if (lock_ms)
        printf("): %.0f %s waits, %.1f ms waited", ts->waits, idle_ms ? "idle" : "lock",
               ts->samples);
    else
        printf("): %.0f samples", ts->samples);
    if (ts->has_cpu && !lock_ms)
        printf(", CPU %.1f ms", ts->cpu_ms);
    if (ts->nostack > 0 && !lock_ms)
        printf(", %.0f without a stack", ts->nostack);
    if (ts->idle > 0)
        printf("; and %.0f [idle] (off the CPU, not in the shares)", ts->idle);
    printf("\n");
    print_list("self", ts->self, ts->nself, ts->samples);
    print_list("total", ts->total, ts->ntotal, ts->samples);
}

static const char *const view_titles[FX_VIEW_COUNT] = {
        "the recording's samples", "lock waits (ms waited)",
        "idle waits (ms waited for work, apart from the lock waits)",
        "allocations (estimated bytes)", "the live heap (bytes alive at the end)"};

static void print_header(const struct summary_args *a, const struct cJSON *root,
                         const struct thread_sum *ts, unsigned n, unsigned nthreads,
                         const struct fx_pfile_totals *tot)
{
    const cJSON *product = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(root, "meta"), "product");
    put(a->file);
    printf(": ");
    put(cJSON_IsString(product) ? product->valuestring : "(no product)");
    printf(", %u track%s", nthreads, nthreads == 1 ? "" : "s");
    unsigned empty = count_empty(ts, n);
    if (empty && a->view == FX_VIEW_CPU)
        printf(" (%u without samples)", empty);
    printf(", ");
    fx_summary_print_totals(root, tot);
    printf("View: %s%s\n", view_titles[a->view],
           a->view == FX_VIEW_CPU ? "; --view lock, idlewait, alloc or live for the others" : "");
}

/* ---- --json: the same figures, for scripts ---- */

static cJSON *json_list(const struct entry *e, unsigned n, double all)
{
    cJSON *arr = cJSON_CreateArray();
    for (unsigned i = 0; arr && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(arr, o);
        cJSON_AddStringToObject(o, "name", e[i].name);
        cJSON_AddNumberToObject(o, "samples", e[i].value);
        cJSON_AddNumberToObject(o, "percent",
                                all > 0 ? round(1000.0 * e[i].value / all) / 10.0 : 0.0);
    }
    return arr;
}

static cJSON *json_thread(const struct thread_sum *ts)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", ts->name);
    cJSON_AddStringToObject(o, "tid", ts->tid);
    cJSON_AddNumberToObject(o, "samples", ts->samples);
    cJSON_AddNumberToObject(o, "idle", ts->idle);
    cJSON_AddNumberToObject(o, "withoutStack", ts->nostack);
    if (ts->has_cpu)
        cJSON_AddNumberToObject(o, "cpuMs", round(ts->cpu_ms * 1000) / 1000);
    cJSON_AddItemToObject(o, "self", json_list(ts->self, ts->nself, ts->samples));
    cJSON_AddItemToObject(o, "total", json_list(ts->total, ts->ntotal, ts->samples));
    return o;
}

static int print_json(const struct summary_args *a, const struct cJSON *root,
                      const struct thread_sum *ts, unsigned n, const struct fx_pfile_totals *tot)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "meta");
    const cJSON *product = cJSON_GetObjectItemCaseSensitive(meta, "product");
    const cJSON *interval = cJSON_GetObjectItemCaseSensitive(meta, "interval");
    cJSON *o = cJSON_CreateObject(), *threads = cJSON_CreateArray();
    for (unsigned i = 0; i < n; i++) {
        cJSON *t = json_thread(&ts[i]);
        if (lock_ms)
            cJSON_AddNumberToObject(t, "waits", ts[i].waits);
        cJSON_AddItemToArray(threads, t);
    }
    cJSON_AddStringToObject(o, "file", a->file);
    cJSON_AddStringToObject(o, "product", cJSON_IsString(product) ? product->valuestring : "");
    cJSON_AddStringToObject(o, "mode", fx_pfile_mode(root));
    if (cJSON_IsNumber(interval))
        cJSON_AddNumberToObject(o, "intervalMs", interval->valuedouble);
    /* the recording's samples, whatever the view: the exit line's and Profile Info's figure */
    cJSON_AddNumberToObject(o, "samples", tot->samples);
    cJSON_AddNumberToObject(o, "idle", tot->idle);
    cJSON_AddStringToObject(o, "view", fx_pfile_view_name(a->view));
    cJSON_AddStringToObject(o, "unit",
                            a->view == FX_VIEW_CPU ? "samples"
                            : lock_ms              ? "ms"
                                                   : "bytes");
    cJSON_AddItemToObject(o, "views", fx_summary_json_totals(root, tot));
    cJSON_AddNumberToObject(o, "threadsWithoutSamples", count_empty(ts, n));
    cJSON_AddItemToObject(o, "threads", threads);
    cJSON_AddItemToObject(o, "extra", fx_summary_json_extra(root, a->all));
    cJSON *allocs = fx_summary_allocations(root, a->thread, a->top, false);
    if (allocs)
        cJSON_AddItemToObject(o, "allocations", allocs);
    /* cJSON escapes control characters in strings, so names cannot reach a terminal raw */
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    if (!text)
        return fx_cli_fail("summary: out of memory");
    puts(text);
    cJSON_free(text);
    return FX_CLI_OK;
}

/* ---- main ---- */

static int collect(const struct cJSON *root, const struct summary_args *a, struct thread_sum *ts,
                   unsigned *n, struct fx_errbuf *eb)
{
    struct fx_pfile_tables t = {0};
    struct scratch s = {0};
    const cJSON *threads = cJSON_GetObjectItemCaseSensitive(root, "threads"), *th;
    unsigned index = 0;
    int rc = FX_OK;
    cJSON_ArrayForEach(th, threads)
    {
        struct thread_sum *cur = &ts[*n];
        thread_ids(th, index++, cur);
        if (a->thread && strcmp(cur->name, a->thread))
            continue;
        /* alloc and live: the nativeAllocations part (summary_allocs.c) lists them */
        if (a->view != (int)fx_pfile_track_view(th) || a->view >= FX_VIEW_ALLOC)
            continue;
        rc = summarise(root, th, a->top, &t, &s, cur, eb);
        if (rc != FX_OK)
            break;
        (*n)++;
    }
    fx_pfile_tables_destroy(&t);
    scratch_destroy(&s);
    return rc;
}

static int no_such_thread(const struct cJSON *root, const char *name)
{
    char names[512] = "";
    const cJSON *th;
    cJSON_ArrayForEach(th, cJSON_GetObjectItemCaseSensitive(root, "threads"))
    {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(th, "name");
        size_t len = strlen(names);
        if (cJSON_IsString(n) && len < sizeof names - 8)
            snprintf(names + len, sizeof names - len, "%s'%s'", len ? ", " : "", n->valuestring);
    }
    return fx_cli_fail("summary: no thread named '%s' (threads: %s)", name, names);
}

static int report(const struct summary_args *a, const struct cJSON *root)
{
    unsigned nthreads =
            (unsigned)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "threads"));
    struct thread_sum *ts = fx_calloc(nthreads ? nthreads : 1, sizeof *ts);
    if (!ts)
        return fx_cli_fail("summary: out of memory");
    struct fx_errbuf eb = {{0}};
    struct fx_pfile_totals tot;
    unsigned n = 0, nview = 0;
    int rc = fx_pfile_totals(root, &tot, &eb);
    if (rc == FX_OK)
        rc = collect(root, a, ts, &n, &eb);
    const cJSON *th;
    cJSON_ArrayForEach(th, cJSON_GetObjectItemCaseSensitive(root, "threads"))
    {
        nview += a->view >= FX_VIEW_ALLOC || a->view == (int)fx_pfile_track_view(th);
    }
    lock_ms = a->view == FX_VIEW_LOCK || a->view == FX_VIEW_IDLEWAIT;
    idle_ms = a->view == FX_VIEW_IDLEWAIT;
    int ret = rc != FX_OK           ? fx_cli_fail("summary: %s: %s", a->file, eb.msg)
              : n == 0 && a->thread ? no_such_thread(root, a->thread)
                                    : FX_CLI_OK;
    if (ret == FX_CLI_OK) {
        by_cpu = a->view == FX_VIEW_CPU; /* lock or idle waits: by ms waited */
        for (unsigned i = 0; i < n; i++)
            by_cpu &= ts[i].has_cpu;
        qsort(ts, n, sizeof *ts, busiest);
        if (a->json) {
            ret = print_json(a, root, ts, n, &tot);
        } else {
            print_header(a, root, ts, n, nview, &tot);
            for (unsigned i = 0; i < n; i++)
                print_thread(&ts[i]);
            print_empty(ts, n);
            cJSON_Delete(fx_summary_allocations(root, a->thread, a->top, true));
            fx_summary_print_extra(root, a->all);
        }
    }
    for (unsigned i = 0; i < nthreads; i++)
        fx_free(ts[i].self), fx_free(ts[i].total);
    fx_free(ts);
    return ret;
}

int fx_summary_main(int argc, char **argv)
{
    struct summary_args a = {.top = DEFAULT_TOP};
    int rc = parse_args(argc, argv, &a);
    if (rc < 0)
        return usage();
    if (rc != FX_CLI_OK)
        return rc;
    struct fx_errbuf eb = {{0}};
    cJSON *root;
    char tmp[PATH_MAX] = ""; /* issue 35: a JFR recording, read as a temporary profile */
    if (fx_jfr_is_jfr(a.file) &&
        (rc = fx_jfr_to_temp_profile("summary", a.file, tmp, sizeof tmp)) != FX_CLI_OK)
        return rc;
    rc = fx_pfile_load(tmp[0] ? tmp : a.file, &root, &eb);
    if (tmp[0])
        unlink(tmp);
    if (rc != FX_OK)
        return fx_cli_fail("summary: %s", eb.msg);
    int ret = report(&a, root);
    cJSON_Delete(root);
    return fflush(stdout) == 0 ? ret : fx_cli_fail("summary: cannot write the output");
}
