/* SPDX-License-Identifier: Apache-2.0 */
/* fxsynth: writes a profile with the C writer, through the public model API only.
 * Default: a fixed profile whose every count is known (threads, per-func totals, CPU time,
 * markers of each phase, a counter), with --expect FILE writing those truths as JSON so the
 * integration test checks profiler-cli against the generator's own table, not a copy of it.
 * With --threads/--samples/--stacks/--min-depth/--max-depth/--seed: a random model instead. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fx_ff_writer.h"
#include "fx_profile.h"
#include "synth_model.h"

#define MS_NS    1000000LL
#define START_NS 1000000000LL
#define MAX_PATH 48

/* A call path, root first; a label path is one pseudo-frame made by fx_profile_label_stack. */
struct path {
    const char *names[MAX_PATH];
    unsigned n;
    uint8_t category;
    bool label;
    fx_stack_id stack;
};

enum {
    P_HOT,
    P_DEEP, /* App.hot -> 40 x App.fib: deep, and recursive (a func counted once per sample) */
    P_WARM,
    P_COLD,
    P_WORKER_WARM, /* App.warm again, under Worker.run: a func shared across threads */
    P_GC,
    P_EMOJI, /* a func name given in modified UTF-8 (CESU-8 surrogates), as JVMTI returns it */
    P_IDLE,
    P_COUNT
};

#define EMOJI_MUTF8 "com.example.Emoji.smile\xED\xA0\xBD\xED\xB8\x80"
#define EMOJI_UTF8  "com.example.Emoji.smile\xF0\x9F\x98\x80"

static struct path paths[P_COUNT] = {
        [P_HOT] = {{"com.example.App.main", "com.example.App.hot"}, 2, FX_CAT_JAVA, false, {0}},
        [P_DEEP] = {{"com.example.App.main", "com.example.App.hot"}, 2, FX_CAT_JAVA, false, {0}},
        [P_WARM] = {{"com.example.App.main", "com.example.App.warm"}, 2, FX_CAT_JAVA, false, {0}},
        [P_COLD] = {{"com.example.App.main", "com.example.App.cold"}, 2, FX_CAT_JAVA, false, {0}},
        [P_WORKER_WARM] =
                {{"com.example.Worker.run", "com.example.App.warm"}, 2, FX_CAT_JAVA, false, {0}},
        [P_GC] = {{"[AGCT: GC active]"}, 1, FX_CAT_GC, true, {0}},
        [P_EMOJI] = {{"com.example.Worker.run", EMOJI_MUTF8}, 2, FX_CAT_JAVA, false, {0}},
        [P_IDLE] = {{"[idle]"}, 1, FX_CAT_IDLE, true, {0}},
};

/* Sample i of a thread takes path pattern[i % 10] and that slot's CPU delta. */
struct thread_spec {
    const char *name;
    int64_t tid;
    unsigned samples;
    int64_t spacing_ns, offset_ns;
    int pattern[10];
    int64_t cpu_ns[10];
    fx_thread_id index;
};

static struct thread_spec threads[] = {
        {"main",
         1001,
         1000,
         MS_NS,
         0,
         {P_HOT, P_HOT, P_HOT, P_HOT, P_DEEP, P_DEEP, P_WARM, P_WARM, P_WARM, P_COLD},
         {800000, 800000, 800000, 800000, 800000, 800000, 800000, 800000, 800000, 800000},
         {0}},
        {"worker-1",
         1002,
         500,
         MS_NS,
         250000,
         {P_WORKER_WARM, P_WORKER_WARM, P_WORKER_WARM, P_WORKER_WARM, P_WORKER_WARM, P_COLD, P_COLD,
          P_COLD, P_GC, P_GC},
         {500000, 500000, 500000, 500000, 500000, 500000, 500000, 500000, 500000, 500000},
         {0}},
        {"worker-\xC3\xA4",
         1003,
         200,
         2 * MS_NS,
         500000,
         {P_EMOJI, P_IDLE, P_EMOJI, P_IDLE, P_EMOJI, P_IDLE, P_EMOJI, P_IDLE, P_EMOJI, P_IDLE},
         {1000000, 0, 1000000, 0, 1000000, 0, 1000000, 0, 1000000, 0},
         {0}},
};
#define N_THREADS (sizeof threads / sizeof *threads)

static int fail(const char *what, int rc)
{
    fprintf(stderr, "fxsynth: %s: %s\n", what, fx_strerror(rc));
    return rc;
}

static int java_frame(struct fx_profile *p, const char *name, int32_t line, fx_frame_id *out)
{
    struct fx_func_key fk = {.line = 10, .is_java = true}; /* first line: one func per name */
    int rc = fx_profile_cstring(p, name, &fk.name);
    if (rc == FX_OK)
        rc = fx_profile_cstring(p, "app.jar", &fk.resource);
    if (rc == FX_OK)
        rc = fx_profile_cstring(p, "com/example/App.java", &fk.source);
    fx_func_id func;
    if (rc == FX_OK)
        rc = fx_profile_func(p, &fk, &func);
    struct fx_frame_key k = {
            .func = func, .line = line, .category = FX_CAT_JAVA, .subcategory = FX_JAVA_C2};
    return rc == FX_OK ? fx_profile_frame(p, &k, out) : rc;
}

static int make_path(struct fx_profile *p, struct path *pa)
{
    if (pa->label)
        return fx_profile_label_stack(p, pa->names[0], pa->category, &pa->stack);
    fx_stack_id prev = FX_STACK_NONE;
    for (unsigned k = 0; k < pa->n; k++) {
        fx_frame_id f;
        int rc = java_frame(p, pa->names[k], (int32_t)(10 + 10 * k + k % 3), &f);
        if (rc == FX_OK)
            rc = fx_profile_stack(p, prev, f, &prev);
        if (rc != FX_OK)
            return rc;
    }
    pa->stack = prev;
    return FX_OK;
}

static int make_paths(struct fx_profile *p)
{
    struct path *deep = &paths[P_DEEP];
    while (deep->n < 42)
        deep->names[deep->n++] = "com.example.App.fib";
    for (int i = 0; i < P_COUNT; i++) {
        int rc = make_path(p, &paths[i]);
        if (rc != FX_OK)
            return fail("building a stack", rc);
    }
    return FX_OK;
}

static int make_samples(struct fx_profile *p, struct thread_spec *t)
{
    int rc = fx_profile_thread_add(p, t->name, t->tid, START_NS, &t->index);
    for (unsigned i = 0; rc == FX_OK && i < t->samples; i++) {
        int64_t time = START_NS + t->offset_ns + (int64_t)(i + 1) * t->spacing_ns;
        rc = fx_profile_sample(p, t->index, time, paths[t->pattern[i % 10]].stack,
                               t->cpu_ns[i % 10], 1);
    }
    return rc == FX_OK ? FX_OK : fail("adding samples", rc);
}

static const struct fx_marker_field gc_fields[] = {
        {"collector", "Collector", FX_FMT_STRING},
        {"gcCause", "Cause", FX_FMT_STRING},
        {"heapBefore", "Heap before", FX_FMT_BYTES},
        {"heapAfter", "Heap after", FX_FMT_BYTES},
};
static const struct fx_marker_schema gc_schema = {"JvmGcPause",
                                                  "GC pause: {marker.data.gcCause}",
                                                  "{marker.data.collector}: {marker.data.gcCause}",
                                                  "{marker.data.gcCause}",
                                                  "A stop-the-world garbage collection pause.",
                                                  FX_DISPLAY_CHART | FX_DISPLAY_TABLE |
                                                          FX_DISPLAY_TIMELINE_OVERVIEW,
                                                  gc_fields,
                                                  4};

static const struct fx_marker_field jit_fields[] = {
        {"method", "Method", FX_FMT_UNIQUE_STRING},
        {"compiler", "Compiler", FX_FMT_STRING},
        {"level", "Tier", FX_FMT_INTEGER},
        {"codeSize", "Code size", FX_FMT_BYTES},
};
static const struct fx_marker_schema jit_schema = {
        "JvmJitCompile",
        "JIT {marker.data.compiler}: {marker.data.method}",
        "{marker.data.compiler} (tier {marker.data.level}): {marker.data.method}",
        "{marker.data.method}",
        NULL,
        FX_DISPLAY_CHART | FX_DISPLAY_TABLE,
        jit_fields,
        4};

static const struct fx_marker_field sp_fields[] = {
        {"operation", "Operation", FX_FMT_STRING},
        {"timeToSafepoint", "Time to safepoint", FX_FMT_DURATION},
};
static const struct fx_marker_schema sp_schema = {"JvmSafepoint",
                                                  "Safepoint: {marker.data.operation}",
                                                  "{marker.data.operation}",
                                                  "{marker.data.operation}",
                                                  NULL,
                                                  FX_DISPLAY_CHART | FX_DISPLAY_TABLE |
                                                          FX_DISPLAY_TIMELINE_OVERVIEW,
                                                  sp_fields,
                                                  2};

static int str(struct fx_profile *p, const char *s, fx_str_id *out, int *rc)
{
    if (*rc == FX_OK)
        *rc = fx_profile_cstring(p, s, out);
    return *rc;
}

/* One marker of each phase: GC interval (1), JIT instant (0), safepoint start/end (2, 3), and
 * an instant without data on worker-1. */
static int make_markers(struct fx_profile *p)
{
    fx_schema_id gc, jit, sp;
    int rc = fx_profile_schema(p, &gc_schema, &gc);
    if (rc == FX_OK)
        rc = fx_profile_schema(p, &jit_schema, &jit);
    if (rc == FX_OK)
        rc = fx_profile_schema(p, &sp_schema, &sp);
    fx_str_id n_gc, n_jit, n_sp, n_user, coll, cause, method, c2, op;
    str(p, "GC pause", &n_gc, &rc);
    str(p, "JIT compile", &n_jit, &rc);
    str(p, "Safepoint", &n_sp, &rc);
    str(p, "User mark", &n_user, &rc);
    str(p, "G1 Young Generation", &coll, &rc);
    str(p, "G1 Evacuation Pause", &cause, &rc);
    str(p, "com.example.App.fib(I)I", &method, &rc);
    str(p, "C2", &c2, &rc);
    str(p, "G1CollectForAllocation", &op, &rc);
    if (rc != FX_OK)
        return fail("interning marker strings", rc);
    union fx_marker_value gv[4] = {{.s = coll}, {.s = cause}, {.i = 52428800}, {.i = 8388608}};
    union fx_marker_value jv[4] = {{.s = method}, {.s = c2}, {.i = 4}, {.i = 1840}};
    union fx_marker_value s0[2] = {{.s = op}, {.d = 0}}, s1[2] = {{.s = op}, {.d = 0.2}};
    fx_thread_id m = threads[0].index;
    rc = fx_profile_marker(p, m, n_gc, FX_PHASE_INTERVAL, FX_CAT_GC, START_NS + 100 * MS_NS,
                           START_NS + 103 * MS_NS + MS_NS / 2, gc, gv);
    if (rc == FX_OK)
        rc = fx_profile_marker(p, m, n_jit, FX_PHASE_INSTANT, FX_CAT_JIT, START_NS + 200 * MS_NS, 0,
                               jit, jv);
    if (rc == FX_OK)
        rc = fx_profile_marker(p, m, n_sp, FX_PHASE_START, FX_CAT_VM, START_NS + 300 * MS_NS, 0, sp,
                               s0);
    if (rc == FX_OK)
        rc = fx_profile_marker(p, m, n_sp, FX_PHASE_END, FX_CAT_VM, 0,
                               START_NS + 300 * MS_NS + MS_NS / 2, sp, s1);
    if (rc == FX_OK)
        rc = fx_profile_marker(p, threads[1].index, n_user, FX_PHASE_INSTANT, FX_CAT_OTHER,
                               START_NS + 400 * MS_NS, 0, FX_SCHEMA_NONE, NULL);
    return rc == FX_OK ? FX_OK : fail("adding markers", rc);
}

static int make_counter(struct fx_profile *p)
{
    static const struct fx_counter_desc heap = {
            "Java heap used", "Memory", "Java heap in use after each sample", "bytes", "orange"};
    fx_counter_id c;
    int rc = fx_profile_counter(p, &heap, &c);
    for (int k = 0; rc == FX_OK && k < 10; k++)
        rc = fx_profile_counter_sample(p, c, START_NS + k * 100 * MS_NS,
                                       10 * 1048576LL + (k % 4) * 8 * 1048576LL);
    return rc == FX_OK ? FX_OK : fail("adding the counter", rc);
}

static int make_meta(struct fx_profile *p)
{
    fx_profile_set_start(p, START_NS, 1767225600000.0);
    fx_profile_set_range(p, START_NS, START_NS + 1002 * MS_NS);
    fx_profile_set_interval(p, 1.0);
    fx_profile_set_pid(p, 4242);
    int rc = fx_profile_set_meta(p, "product", "fxsynth: default model");
    if (rc == FX_OK)
        rc = fx_profile_set_meta(p, "processName", "java com.example.App");
    if (rc == FX_OK)
        rc = fx_profile_set_meta(p, "oscpu", "Linux x86_64");
    if (rc == FX_OK)
        rc = fx_profile_extra_str(p, "fxsynth", "Model", "default");
    if (rc == FX_OK)
        rc = fx_profile_extra_int(p, "Sample outcomes", "[AGCT: GC active]", 100);
    return rc == FX_OK ? FX_OK : fail("setting meta", rc);
}

static int default_model(struct fx_profile *p)
{
    int rc = make_meta(p);
    if (rc == FX_OK)
        rc = make_paths(p);
    for (size_t t = 0; rc == FX_OK && t < N_THREADS; t++)
        rc = make_samples(p, &threads[t]);
    if (rc == FX_OK)
        rc = make_markers(p);
    return rc == FX_OK ? make_counter(p) : rc;
}

/* ---- --expect: the truths of the default model, computed from the tables above ---- */

static const char *utf8_name(const char *name)
{
    return strcmp(name, EMOJI_MUTF8) ? name : EMOJI_UTF8;
}

/* Samples whose stack contains `name`, each counted once however often the name recurs. */
static unsigned func_total(const struct thread_spec *t, const char *name)
{
    unsigned per10 = 0;
    for (int s = 0; s < 10; s++) {
        const struct path *pa = &paths[t->pattern[s]];
        for (unsigned k = 0; k < pa->n; k++)
            if (!strcmp(pa->names[k], name)) {
                per10++;
                break;
            }
    }
    return t->samples / 10 * per10;
}

static cJSON *expect_thread(const struct thread_spec *t)
{
    cJSON *o = cJSON_CreateObject(), *funcs = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", t->name);
    cJSON_AddNumberToObject(o, "tid", (double)t->tid);
    cJSON_AddNumberToObject(o, "samples", t->samples);
    double cpu = 0; /* the front-end ignores sample 0's delta */
    for (unsigned i = 1; i < t->samples; i++)
        cpu += (double)t->cpu_ns[i % 10];
    cJSON_AddNumberToObject(o, "cpuNs", cpu);
    for (int s = 0; s < 10; s++) {
        const struct path *pa = &paths[t->pattern[s]];
        for (unsigned k = 0; k < pa->n; k++)
            if (!cJSON_GetObjectItemCaseSensitive(funcs, utf8_name(pa->names[k])))
                cJSON_AddNumberToObject(funcs, utf8_name(pa->names[k]),
                                        func_total(t, pa->names[k]));
    }
    cJSON_AddItemToObject(o, "funcTotals", funcs);
    return o;
}

static void add_marker(cJSON *arr, const char *thread, const char *name, const char *type,
                       const char *label)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "thread", thread);
    cJSON_AddStringToObject(m, "name", name);
    cJSON_AddItemToObject(m, "type", type ? cJSON_CreateString(type) : cJSON_CreateNull());
    cJSON_AddItemToObject(m, "label", label ? cJSON_CreateString(label) : cJSON_CreateNull());
    cJSON_AddItemToArray(arr, m);
}

static int write_expect(const char *file)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *ths = cJSON_AddArrayToObject(root, "threads");
    for (size_t t = 0; t < N_THREADS; t++)
        cJSON_AddItemToArray(ths, expect_thread(&threads[t]));
    cJSON *tree = cJSON_AddObjectToObject(root, "mainTopDownPercent");
    cJSON_AddNumberToObject(tree, "com.example.App.main", 100);
    cJSON_AddNumberToObject(tree, "com.example.App.hot", 60);
    cJSON_AddNumberToObject(tree, "com.example.App.warm", 30);
    cJSON_AddNumberToObject(tree, "com.example.App.cold", 10);
    cJSON *mk = cJSON_AddArrayToObject(root, "markers");
    add_marker(mk, "main", "GC pause", "JvmGcPause", "G1 Young Generation: G1 Evacuation Pause");
    add_marker(mk, "main", "JIT compile", "JvmJitCompile", "C2 (tier 4): com.example.App.fib(I)I");
    add_marker(mk, "main", "Safepoint", "JvmSafepoint", "G1CollectForAllocation");
    add_marker(mk, "worker-1", "User mark", NULL, NULL);
    cJSON *counters = cJSON_AddArrayToObject(root, "counters");
    cJSON_AddItemToArray(counters, cJSON_CreateString("Java heap used"));
    char *text = cJSON_Print(root);
    FILE *f = fopen(file, "w");
    int ok = f && text && fputs(text, f) >= 0 && fputc('\n', f) != EOF;
    if (f && fclose(f) != 0)
        ok = 0;
    free(text);
    cJSON_Delete(root);
    if (!ok)
        fprintf(stderr, "fxsynth: cannot write %s: %s\n", file, strerror(errno));
    return ok ? 0 : 1;
}

/* ---- command line ---- */

static int usage(void)
{
    fprintf(stderr, "usage: fxsynth OUT(.json|.json.gz) [--expect FILE]\n"
                    "       fxsynth OUT [--threads N] [--samples N] [--stacks N] [--min-depth D]"
                    " [--max-depth D] [--seed S]\n");
    return 2;
}

static bool number(const char *s, unsigned long long max, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || v > max || s[0] == '-')
        return false;
    *out = v;
    return true;
}

struct args {
    const char *out, *expect;
    bool random;
    struct synth_params sp;
};

static bool parse_opt(struct args *a, const char *opt, const char *val)
{
    static const char *const names[] = {"--threads",   "--samples",   "--stacks",
                                        "--min-depth", "--max-depth", "--seed"};
    unsigned long long v;
    for (int k = 0; k < 6; k++) {
        if (strcmp(opt, names[k]))
            continue;
        if (!number(val, k == 1 || k == 5 ? ~0ULL : 1000000000ULL, &v))
            return false;
        a->random = true;
        unsigned *u[] = {&a->sp.threads, NULL, &a->sp.stacks, &a->sp.min_depth, &a->sp.max_depth};
        if (k == 1)
            a->sp.samples = v;
        else if (k == 5)
            a->sp.seed = v;
        else
            *u[k] = (unsigned)v;
        return true;
    }
    if (!strcmp(opt, "--expect")) {
        a->expect = val;
        return true;
    }
    return false;
}

static bool parse(int argc, char **argv, struct args *a)
{
    a->sp = (struct synth_params){4, 100000, 1000, 5, 50, 1};
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] != '-') {
            if (a->out)
                return false;
            a->out = argv[i];
        } else if (i + 1 >= argc || !parse_opt(a, argv[i], argv[i + 1])) {
            return false;
        } else {
            i++;
        }
    }
    return a->out && !(a->random && a->expect);
}

int main(int argc, char **argv)
{
    struct args a = {0};
    if (!parse(argc, argv, &a))
        return usage();
    struct fx_profile *p = fx_profile_new();
    if (!p) {
        fail("creating the model", FX_ENOMEM);
        return 1;
    }
    struct fx_errbuf eb = {{0}};
    struct synth_stats st = {0};
    int rc = a.random ? synth_random_model(p, &a.sp, &st, &eb) : default_model(p);
    if (rc != FX_OK && a.random)
        fprintf(stderr, "fxsynth: %s\n", eb.msg);
    struct fx_ff_file_result res;
    if (rc == FX_OK) {
        rc = fx_ff_write_file(p, a.out, 0, &res, &eb);
        if (rc != FX_OK)
            fprintf(stderr, "fxsynth: writing %s: %s\n", a.out, eb.msg);
        else if (res.fell_back)
            fprintf(stderr, "fxsynth: %s could not be written (%s)\n", a.out, res.reason);
    }
    fx_profile_free(p);
    if (rc != FX_OK)
        return 1;
    if (a.expect && write_expect(a.expect) != 0)
        return 1;
    if (a.random)
        fprintf(stderr, "fxsynth: random model: %u distinct leaf stacks, %u stack rows\n",
                st.leaf_stacks, st.stack_rows);
    printf("%s\n", res.path);
    return 0;
}
