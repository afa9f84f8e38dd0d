/* SPDX-License-Identifier: Apache-2.0 */
/* Writer tests: a synthetic model is written and read back with cJSON, then checked for the
 * structure PROFILE-FORMAT.md requires (§17.2) and for the exact content that went in.
 *
 * Golden file: tests/golden/small.json is the exact output for small_profile() below. After an
 * intended change of the output, regenerate it with
 *     FX_UPDATE_GOLDEN=1 build/tests/test_ff_writer
 * and review the diff (e.g. `python3 -m json.tool tests/golden/small.json`) against
 * PROFILE-FORMAT.md §13 before committing it. */
#include <cJSON.h>
#include <check.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <zlib.h>

#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_ff_writer.h"
#include "fx_jvm_markers.h"
#include "fx_profile.h"
#include "fx_sink.h"

#define T0    5000000000LL
#define MS(x) ((int64_t)((x)*1e6))

/* ------------------------------------------------------------------------------------------
 * The synthetic model, with what went in recorded for comparison.
 */

#define NSPEC    32
#define MAXDEPTH 140
#define NTHREADS 3

struct spec {
    char name[64];
    int32_t line;
};

struct expect_sample {
    int64_t t_ns;
    int depth; /* -1: no stack */
    int path[MAXDEPTH];
    int64_t cpu; /* -1: unknown */
    uint32_t weight;
};

struct expect_marker {
    const char *name;
    int phase;
    int64_t start_ns, end_ns;
    bool has_data;
};

struct synth {
    struct fx_profile *p;
    struct spec specs[NSPEC + 1]; /* [NSPEC]: the label frame */
    fx_frame_id frames[NSPEC + 1];
    struct expect_sample *samples[NTHREADS];
    int nsamples[NTHREADS];
    struct expect_marker markers[16];
    int nmarkers;
    fx_schema_id schema;
};

static const char *const thread_names[NTHREADS] = {
        "main", "W\xC0\x80rker-\xED\xA0\xBD\xED\xB8\x80", /* modified UTF-8 NUL, CESU-8 U+1F600 */
        "GC Thread#0"};

static const struct fx_marker_field all_fields[] = {
        {"s", "String", FX_FMT_STRING},        {"u", "Unique", FX_FMT_UNIQUE_STRING},
        {"i", "Integer", FX_FMT_INTEGER},      {"b", "Bytes", FX_FMT_BYTES},
        {"d", "Duration", FX_FMT_DURATION},    {"x", "Decimal", FX_FMT_DECIMAL},
        {"p", "Percentage", FX_FMT_PERCENTAGE}};
static const struct fx_marker_schema all_schema = {"FxAllFormats",
                                                   "{marker.name}: {marker.data.s}",
                                                   "{marker.data.u} {marker.data.i}",
                                                   "{marker.data.s}",
                                                   "Every field format",
                                                   FX_DISPLAY_CHART | FX_DISPLAY_TABLE |
                                                           FX_DISPLAY_TIMELINE_OVERVIEW,
                                                   all_fields,
                                                   7};

static unsigned rng_state = 12345;
static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return (rng_state >> 8) % n;
}

static fx_str_id sid(struct fx_profile *p, const char *s)
{
    fx_str_id id;
    ck_assert_int_eq(fx_profile_cstring(p, s, &id), FX_OK);
    return id;
}

static void synth_specs(struct synth *s)
{
    for (int i = 0; i < NSPEC; i++) {
        struct spec *sp = &s->specs[i];
        snprintf(sp->name, sizeof(sp->name), "com.example.Mod%d.method%d", i % 5, i);
        sp->line = i % 7 == 3 ? -1 : 10 + i;
        char res[32], src[48];
        snprintf(res, sizeof(res), "mod%d.jar", i % 5);
        snprintf(src, sizeof(src), "com/example/Mod%d.java", i % 5);
        struct fx_func_key fk = {sid(s->p, sp->name), i % 4 ? sid(s->p, res) : FX_STR_NONE,
                                 i % 3 ? sid(s->p, src) : FX_STR_NONE, 5 + i, true};
        fx_func_id f;
        ck_assert_int_eq(fx_profile_func(s->p, &fk, &f), FX_OK);
        struct fx_frame_key k = {f, sp->line, FX_CAT_JAVA, (uint8_t)(i % 6), i % 6 == 4};
        ck_assert_int_eq(fx_profile_frame(s->p, &k, &s->frames[i]), FX_OK);
    }
    snprintf(s->specs[NSPEC].name, sizeof(s->specs[NSPEC].name), "[AGCT: GC active]");
    s->specs[NSPEC].line = -1;
}

/* A path shares a prefix with the others (main -> run -> loop), then wanders; some are deep. */
static void synth_path(struct expect_sample *e)
{
    int depth = rnd(10) == 0 ? 100 + rnd(MAXDEPTH - 100) : 3 + rnd(12);
    e->depth = depth;
    for (int d = 0; d < depth; d++)
        e->path[d] = d < 3 ? d : (d < 60 ? (int)(3 + (d * 7) % 20) : (int)(3 + rnd(NSPEC - 3)));
    if (depth > 3 && rnd(2))
        e->path[depth - 1] = 3 + rnd(NSPEC - 3);
}

static fx_stack_id insert_path(struct synth *s, const struct expect_sample *e)
{
    if (e->depth < 0)
        return FX_STACK_NONE;
    fx_stack_id st = FX_STACK_NONE;
    if (e->path[0] == NSPEC) {
        ck_assert_int_eq(fx_profile_label_stack(s->p, s->specs[NSPEC].name, FX_CAT_GC, &st), FX_OK);
        return st;
    }
    for (int d = 0; d < e->depth; d++)
        ck_assert_int_eq(fx_profile_stack(s->p, st, s->frames[e->path[d]], &st), FX_OK);
    return st;
}

static void synth_samples(struct synth *s, int t, int n)
{
    s->samples[t] = calloc((size_t)n, sizeof(struct expect_sample));
    s->nsamples[t] = n;
    int64_t time = T0 + MS(0.3) + t * 777;
    for (int i = 0; i < n; i++) {
        struct expect_sample *e = &s->samples[t][i];
        time += 999 + rnd(2000000);                      /* ns, so µs rounding matters */
        int64_t given = (i == 17) ? time - MS(5) : time; /* one late sample: clamped */
        e->t_ns = i ? (given < e[-1].t_ns ? e[-1].t_ns : given) : given;
        synth_path(e);
        if (t == 2 && i % 50 == 7)
            e->depth = -1;
        if (t == 2 && i % 50 == 9) {
            e->depth = 1;
            e->path[0] = NSPEC;
        }
        e->cpu = i % 13 == 5 ? -1 : (int64_t)rnd(1000000);
        e->weight = t == 1 && i == 40 ? 3 : 1;
        fx_stack_id st = insert_path(s, e);
        ck_assert_int_eq(
                fx_profile_sample(s->p, (fx_thread_id){(uint32_t)t}, given, st, e->cpu, e->weight),
                FX_OK);
    }
}

static void add_marker(struct synth *s, const char *name, int phase, int64_t a, int64_t b,
                       bool data)
{
    fx_str_id n = sid(s->p, name);
    union fx_marker_value v[7] = {{.s = sid(s->p, "text \"quoted\"\n")},
                                  {.s = sid(s->p, "com.example.Mod1.method1(II)J")},
                                  {.i = -42},
                                  {.i = 52428800},
                                  {.d = 1.25},
                                  {.d = 3.5},
                                  {.d = 0.125}};
    ck_assert_int_eq(fx_profile_marker(s->p, (fx_thread_id){0}, n, (uint8_t)phase, FX_CAT_GC, a, b,
                                       data ? s->schema : FX_SCHEMA_NONE, data ? v : NULL),
                     FX_OK);
    s->markers[s->nmarkers++] = (struct expect_marker){name, phase, a, b, data};
}

static void synth_markers(struct synth *s)
{
    ck_assert_int_eq(fx_profile_schema(s->p, &all_schema, &s->schema), FX_OK);
    add_marker(s, "GC pause", FX_PHASE_INTERVAL, T0 + MS(2.6), T0 + MS(3.4), true);
    add_marker(s, "Safepoint", FX_PHASE_START, T0 + MS(1.0), 0, true);
    add_marker(s, "Safepoint", FX_PHASE_END, 0, T0 + MS(1.5), true);
    add_marker(s, "Loaded", FX_PHASE_INSTANT, T0 + MS(0.5), T0 + MS(9), false); /* out of order */
    add_marker(s, "Late", FX_PHASE_INSTANT, T0 + MS(4.0), 0, true);
}

static void synth_meta(struct synth *s)
{
    struct fx_profile *p = s->p;
    fx_profile_set_start(p, T0, 1767225600000.25);
    fx_profile_set_range(p, T0, T0 + MS(1000));
    fx_profile_set_interval(p, 10);
    fx_profile_set_pid(p, 4242);
    ck_assert_int_eq(fx_profile_set_meta(p, "product", "fxagent: Synth"), FX_OK);
    ck_assert_int_eq(fx_profile_set_meta(p, "processName", "java Synth"), FX_OK);
    ck_assert_int_eq(fx_profile_set_meta(p, "oscpu", "Linux x86_64"), FX_OK);
    ck_assert_int_eq(fx_profile_set_meta(p, "arguments", "-Xmx1g -XX:+UseG1GC"), FX_OK);
    ck_assert_int_eq(fx_profile_set_meta_int(p, "logicalCPUs", 8), FX_OK);
    ck_assert_int_eq(fx_profile_extra_str(p, "JVM", "Version", "17.0.9"), FX_OK);
    ck_assert_int_eq(fx_profile_extra_int(p, "Samples", "GC active", 12), FX_OK);
    ck_assert_int_eq(fx_profile_extra_int(p, "Samples", "OK", 1200), FX_OK);
    fx_counter_id c;
    struct fx_counter_desc d = {"Java heap used", "Memory", "Heap in use", "bytes", "orange"};
    ck_assert_int_eq(fx_profile_counter(p, &d, &c), FX_OK);
    int64_t heap[] = {1000000, 3000000, 2500000, 8000000};
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(fx_profile_counter_sample(p, c, T0 + MS(i), heap[i]), FX_OK);
}

static struct synth *synth_new(void)
{
    struct synth *s = calloc(1, sizeof(*s));
    s->p = fx_profile_new();
    ck_assert_ptr_nonnull(s->p);
    rng_state = 12345;
    synth_meta(s);
    synth_specs(s);
    for (int t = 0; t < NTHREADS; t++) {
        fx_thread_id idx;
        ck_assert_int_eq(fx_profile_thread_add(s->p, thread_names[t], 100 + t, T0 - MS(1), &idx),
                         FX_OK);
        ck_assert_uint_eq(idx.i, (uint32_t)t);
    }
    synth_samples(s, 0, 400);
    synth_samples(s, 1, 150);
    synth_samples(s, 2, 200);
    synth_markers(s);
    fx_profile_thread_unregister(s->p, (fx_thread_id){1}, T0 + MS(900));
    return s;
}

static void synth_free(struct synth *s)
{
    for (int t = 0; t < NTHREADS; t++)
        free(s->samples[t]);
    fx_profile_free(s->p);
    free(s);
}

static char *write_mem(const struct fx_profile *p, size_t *len)
{
    struct fx_membuf mb = {0};
    struct fx_errbuf eb = {{0}};
    int rc = fx_ff_write(p, fx_membuf_sink(&mb), &eb);
    ck_assert_msg(rc == FX_OK, "fx_ff_write: %s", eb.msg);
    *len = mb.len;
    return mb.data; /* fx_free */
}

/* ------------------------------------------------------------------------------------------
 * Structural checks (PROFILE-FORMAT.md §17.2).
 */

static cJSON *key(const cJSON *o, const char *k)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    ck_assert_msg(v != NULL, "missing key '%s'", k);
    return v;
}

/* A column as doubles (NAN for null), after checking it is an array of `len` elements. */
static double *column(const cJSON *table, const char *name, int len)
{
    cJSON *c = key(table, name);
    ck_assert_msg(cJSON_IsArray(c), "column %s is not an array", name);
    ck_assert_msg(cJSON_GetArraySize(c) == len, "column %s has %d values, length is %d", name,
                  cJSON_GetArraySize(c), len);
    double *v = calloc((size_t)len + 1, sizeof(double));
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, c)
    {
        ck_assert_msg(cJSON_IsNumber(it) || cJSON_IsNull(it) || cJSON_IsBool(it),
                      "column %s holds a non-scalar", name);
        v[i++] = cJSON_IsNull(it) ? NAN : cJSON_IsBool(it) ? cJSON_IsTrue(it) : it->valuedouble;
    }
    return v;
}

static int length_of(const cJSON *table)
{
    cJSON *l = key(table, "length");
    ck_assert(cJSON_IsNumber(l));
    ck_assert_int_ge(l->valueint, 0);
    return l->valueint;
}

static bool is_index(double v, int n)
{
    return !isnan(v) && v == floor(v) && v >= 0 && v < n;
}

/* Every column listed has exactly `length` entries; returns length. */
static int check_table(const cJSON *t, const char *const *cols)
{
    int n = length_of(t);
    for (int i = 0; cols[i]; i++)
        free(column(t, cols[i], n));
    return n;
}

struct parsed {
    cJSON *root;
    const char **strings;
    int nstrings;
    double *stack_frame, *stack_prefix, *frame_func, *frame_line, *func_name;
    int nstacks, nframes, nfuncs;
};

/* Checks UTF-8 strictly (no overlongs, surrogates or code points past U+10FFFF). */
static bool utf8_valid(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (!k || i + k > n || (k == 2 && c < 0xC2))
            return false;
        uint32_t cp = k == 1 ? c : c & (0x7F >> k);
        for (size_t j = 1; j < k; j++) {
            if ((s[i + j] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i + j] & 0x3F);
        }
        if ((k == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (k == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
            return false;
        i += k;
    }
    return true;
}

static const char *const cat_names[] = {"Other",        "Idle", "Java",       "Native", "GC",
                                        "JIT compiler", "VM",   "Allocation", "Kernel"};
static const char *const cat_colors[] = {"grey",  "transparent", "yellow",  "lightblue", "orange",
                                         "green", "purple",      "magenta", "red"};
static const char *const cat_subs[][9] = {
        {"Other", NULL},
        {"Other", "Runnable", "Blocked (monitor)", "Waiting", "Sleeping", "Parked", "Native / I-O",
         "Pinned", NULL},
        {"Other", "Interpreted", "JIT (C1)", "JIT (C2)", "Inlined", "Native method", "Recovered",
         NULL},
        {"Other", "libjvm", "libc/kernel", "JNI library", NULL},
        {"Other", "Young", "Mixed", "Full", "Concurrent", NULL},
        {"Other", "C1", "C2", NULL},
        {"Other", "Safepoint", "Class loading", "Stub", "Recovered stub", "Receiver class", NULL},
        {"Other", NULL},
        {"Other", "System call", "Page fault", NULL}};
static int nsubs[9];

static void check_categories(const cJSON *meta)
{
    const cJSON *cats = key(meta, "categories");
    ck_assert_int_eq(cJSON_GetArraySize(cats), 9);
    for (int c = 0; c < 8; c++) {
        const cJSON *cat = cJSON_GetArrayItem(cats, c);
        ck_assert_str_eq(key(cat, "name")->valuestring, cat_names[c]);
        ck_assert_str_eq(key(cat, "color")->valuestring, cat_colors[c]);
        const cJSON *subs = key(cat, "subcategories");
        int n = 0;
        while (cat_subs[c][n])
            n++;
        nsubs[c] = n;
        ck_assert_int_eq(cJSON_GetArraySize(subs), n);
        for (int s = 0; s < n; s++)
            ck_assert_str_eq(cJSON_GetArrayItem(subs, s)->valuestring, cat_subs[c][s]);
    }
}

static void check_meta(const cJSON *root, int nthreads)
{
    const cJSON *meta = key(root, "meta");
    ck_assert_int_eq(key(meta, "preprocessedProfileVersion")->valueint, 66);
    ck_assert_int_eq(key(meta, "version")->valueint, 24);
    ck_assert_int_eq(key(meta, "processType")->valueint, 0);
    ck_assert_int_eq(key(meta, "stackwalk")->valueint, 1);
    ck_assert(cJSON_IsTrue(key(meta, "symbolicated")));
    ck_assert(cJSON_IsNumber(key(meta, "interval")));
    ck_assert(cJSON_IsNumber(key(meta, "startTime")));
    ck_assert(cJSON_IsString(key(meta, "product")));
    ck_assert_str_eq(key(meta, "importedFrom")->valuestring, "fxagent");
    ck_assert(cJSON_IsTrue(key(meta, "usesOnlyOneStackType")));
    ck_assert(cJSON_IsTrue(key(meta, "sourceCodeIsNotOnSearchfox")));
    ck_assert(cJSON_IsTrue(key(meta, "keepProfileThreadOrder")));
    ck_assert(cJSON_IsArray(key(meta, "markerSchema")));
    const cJSON *units = key(meta, "sampleUnits");
    ck_assert_str_eq(key(units, "time")->valuestring, "ms");
    ck_assert_str_eq(key(units, "eventDelay")->valuestring, "ms");
    ck_assert_str_eq(key(units, "threadCPUDelta")->valuestring, "\xC2\xB5s"); /* U+00B5 */
    const cJSON *ext = key(meta, "extensions");
    const char *const ext_cols[] = {"baseURL", "id", "name", NULL};
    ck_assert_int_eq(check_table(ext, ext_cols), 0);
    check_categories(meta);
    const cJSON *vis = cJSON_GetObjectItemCaseSensitive(meta, "initialVisibleThreads");
    const cJSON *it;
    if (vis) {
        ck_assert_int_ge(cJSON_GetArraySize(vis), 1);
        ck_assert_int_le(cJSON_GetArraySize(vis), 64);
        cJSON_ArrayForEach(it, vis) ck_assert(is_index(it->valuedouble, nthreads));
    }
    const cJSON *sel = key(meta, "initialSelectedThreads");
    ck_assert_int_eq(cJSON_GetArraySize(sel), 1);
    ck_assert(is_index(cJSON_GetArrayItem(sel, 0)->valuedouble, nthreads));
}

static void check_strings(struct parsed *ps, const cJSON *shared)
{
    const cJSON *sa = key(shared, "stringArray");
    ck_assert(cJSON_IsArray(sa));
    ps->nstrings = cJSON_GetArraySize(sa);
    ps->strings = calloc((size_t)ps->nstrings + 1, sizeof(char *));
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, sa)
    {
        ck_assert(cJSON_IsString(it));
        ps->strings[i++] = it->valuestring;
    }
}

static void check_stacks(struct parsed *ps, const cJSON *shared)
{
    const cJSON *st = key(shared, "stackTable");
    int n = ps->nstacks = length_of(st);
    ps->stack_frame = column(st, "frame", n);
    ps->stack_prefix = column(st, "prefixOffset", n);
    for (int i = 0; i < n; i++) {
        ck_assert(is_index(ps->stack_frame[i], ps->nframes));
        ck_assert_msg(is_index(ps->stack_prefix[i], i + 1), "prefixOffset[%d] > %d", i, i);
    }
}

static void check_frames(struct parsed *ps, const cJSON *shared)
{
    const cJSON *ft = key(shared, "frameTable");
    int n = ps->nframes = length_of(ft);
    const char *const same[] = {"nativeSymbol", "column", "originalLocation", NULL};
    for (int c = 0; same[c]; c++) {
        double *v = column(ft, same[c], n);
        for (int i = 0; i < n; i++)
            ck_assert(isnan(v[i])); /* null, never -1 (§9) */
        free(v);
    }
    double *addr = column(ft, "address", n), *inl = column(ft, "inlineDepth", n);
    double *cat = column(ft, "category", n), *sub = column(ft, "subcategory", n);
    double *win = column(ft, "innerWindowID", n);
    ps->frame_func = column(ft, "func", n);
    ps->frame_line = column(ft, "line", n);
    for (int i = 0; i < n; i++) {
        ck_assert(addr[i] == -1 && win[i] == 0);
        ck_assert(is_index(inl[i], 256));
        ck_assert(is_index(cat[i], 9));
        ck_assert_msg(is_index(sub[i], nsubs[(int)cat[i]]), "frame %d: subcategory", i);
        ck_assert(is_index(ps->frame_func[i], ps->nfuncs));
        ck_assert(isnan(ps->frame_line[i]) || ps->frame_line[i] >= 0);
    }
    free(addr), free(inl), free(cat), free(sub), free(win);
}

static void check_funcs(struct parsed *ps, const cJSON *shared, int nres, int nsrc)
{
    const cJSON *fn = key(shared, "funcTable");
    int n = ps->nfuncs = length_of(fn);
    ps->func_name = column(fn, "name", n);
    double *res = column(fn, "resource", n), *src = column(fn, "source", n);
    double *js = column(fn, "isJS", n), *rel = column(fn, "relevantForJS", n);
    double *ln = column(fn, "lineNumber", n), *col = column(fn, "columnNumber", n);
    double *orig = column(fn, "originalLocation", n);
    for (int i = 0; i < n; i++) {
        ck_assert(is_index(ps->func_name[i], ps->nstrings));
        ck_assert(res[i] == -1 || is_index(res[i], nres));
        ck_assert(isnan(src[i]) || is_index(src[i], nsrc));
        ck_assert(cJSON_IsBool(cJSON_GetArrayItem(key(fn, "isJS"), i)));
        ck_assert(rel[i] == 0 && isnan(col[i]) && isnan(orig[i]));
        ck_assert(isnan(ln[i]) || ln[i] >= 0);
        (void)js;
    }
    free(res), free(src), free(js), free(rel), free(ln), free(col), free(orig);
}

static void check_resources_sources(struct parsed *ps, const cJSON *shared, int *nres, int *nsrc)
{
    const cJSON *rt = key(shared, "resourceTable");
    const char *const rcols[] = {"lib", "name", "host", "type", NULL};
    *nres = check_table(rt, rcols);
    double *rn = column(rt, "name", *nres), *ty = column(rt, "type", *nres);
    double *lib = column(rt, "lib", *nres);
    int nlibs = cJSON_GetArraySize(key(ps->root, "libs"));
    for (int i = 0; i < *nres; i++) { /* a library (type 1) names its lib, anything else none */
        ck_assert(is_index(rn[i], ps->nstrings) && (ty[i] == 0 || ty[i] == 1));
        ck_assert(ty[i] == 1 ? is_index(lib[i], nlibs) : isnan(lib[i]));
    }
    free(rn), free(ty), free(lib);
    const cJSON *so = key(shared, "sources");
    const char *const scols[] = {"id",           "filename", "startLine", "startColumn",
                                 "sourceMapURL", "content",  NULL};
    *nsrc = check_table(so, scols);
    double *fnm = column(so, "filename", *nsrc);
    for (int i = 0; i < *nsrc; i++)
        ck_assert(is_index(fnm[i], ps->nstrings));
    free(fnm);
    const char *const ns[] = {"libIndex", "address", "name", "functionSize", NULL};
    ck_assert_int_eq(check_table(key(shared, "nativeSymbols"), ns), 0);
    const char *const sl[] = {"source", "line", "column", NULL};
    ck_assert_int_eq(check_table(key(shared, "sourceLocationTable"), sl), 0);
}

static void check_shared(struct parsed *ps)
{
    const cJSON *shared = key(ps->root, "shared");
    check_strings(ps, shared);
    int nres, nsrc;
    check_resources_sources(ps, shared, &nres, &nsrc);
    check_funcs(ps, shared, nres, nsrc);
    check_frames(ps, shared);
    check_stacks(ps, shared);
}

/* Rebuilds sample times from timeDeltas (as the front-end does), checks they are sorted. */
static double *sample_times(const cJSON *samples, int n)
{
    double *d = column(samples, "timeDeltas", n);
    for (int i = 1; i < n; i++) {
        d[i] += d[i - 1];
        ck_assert_msg(d[i] >= d[i - 1] - 1e-9, "sample %d goes back in time", i);
    }
    return d;
}

static void check_samples(struct parsed *ps, const cJSON *thread)
{
    const cJSON *s = key(thread, "samples");
    int n = length_of(s);
    /* An empty track has no CPU column (ff_writer.c: profiler-cli loops on an empty one). */
    ck_assert_msg((cJSON_GetObjectItemCaseSensitive(s, "threadCPUDelta") != NULL) == (n > 0),
                  "threadCPUDelta must be there exactly when the thread has samples");
    double *stack = column(s, "stack", n), *cpu = n ? column(s, "threadCPUDelta", n) : NULL;
    free(sample_times(s, n));
    for (int i = 0; i < n; i++) {
        ck_assert(isnan(stack[i]) || is_index(stack[i], ps->nstacks));
        ck_assert(isnan(cpu[i]) || cpu[i] >= 0);
    }
    if (n)
        ck_assert(cpu[0] == 0);
    const cJSON *w = key(s, "weight");
    ck_assert(cJSON_IsNull(w) || cJSON_GetArraySize(w) == n);
    const char *wt = key(s, "weightType")->valuestring;
    ck_assert(strcmp(wt, "samples") == 0 || strcmp(wt, "tracing-ms") == 0 ||
              strcmp(wt, "bytes") == 0);
    free(stack), free(cpu);
}

static const cJSON *find_schema(const cJSON *root, const char *type)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, key(key(root, "meta"), "markerSchema"))
    {
        if (strcmp(key(it, "name")->valuestring, type) == 0)
            return it;
    }
    return NULL;
}

static void check_marker_data(struct parsed *ps, const cJSON *data)
{
    if (cJSON_IsNull(data))
        return;
    const cJSON *schema = find_schema(ps->root, key(data, "type")->valuestring);
    ck_assert_msg(schema != NULL, "no schema for %s", key(data, "type")->valuestring);
    const cJSON *f;
    cJSON_ArrayForEach(f, key(schema, "fields"))
    {
        const char *fmt = key(f, "format")->valuestring;
        const cJSON *v = key(data, key(f, "key")->valuestring);
        if (strcmp(fmt, "unique-string") == 0)
            ck_assert(is_index(v->valuedouble, ps->nstrings) && cJSON_IsNumber(v));
        else if (strcmp(fmt, "string") == 0)
            ck_assert(cJSON_IsString(v));
        else
            ck_assert(cJSON_IsNumber(v));
    }
}

static void check_markers(struct parsed *ps, const cJSON *thread)
{
    const cJSON *m = key(thread, "markers");
    int n = length_of(m);
    double *name = column(m, "name", n), *st = column(m, "startTime", n);
    double *en = column(m, "endTime", n), *ph = column(m, "phase", n);
    double *cat = column(m, "category", n);
    ck_assert_int_eq(cJSON_GetArraySize(key(m, "data")), n);
    double last = -INFINITY;
    for (int i = 0; i < n; i++) {
        ck_assert(is_index(name[i], ps->nstrings) && is_index(cat[i], 9));
        ck_assert(is_index(ph[i], 4) && !isnan(st[i]) && !isnan(en[i]));
        double t = ph[i] == 3 ? en[i] : st[i];
        ck_assert_msg(t >= last, "marker %d out of order", i);
        last = t;
        if (ph[i] == 0 || ph[i] == 2)
            ck_assert(en[i] == 0);
        if (ph[i] == 3)
            ck_assert(st[i] == 0);
        if (ph[i] == 1)
            ck_assert(en[i] >= st[i]);
        check_marker_data(ps, cJSON_GetArrayItem(key(m, "data"), i));
    }
    free(name), free(st), free(en), free(ph), free(cat);
}

static void check_threads(struct parsed *ps)
{
    const cJSON *threads = key(ps->root, "threads");
    int n = cJSON_GetArraySize(threads), mains = 0;
    ck_assert_int_ge(n, 1);
    const cJSON *t;
    cJSON_ArrayForEach(t, threads)
    {
        ck_assert(cJSON_IsString(key(t, "name")));
        mains += cJSON_IsTrue(key(t, "isMainThread"));
        ck_assert_str_eq(key(t, "processType")->valuestring, "default");
        ck_assert_msg(cJSON_IsString(key(t, "pid")), "pid must be a string");
        ck_assert(cJSON_IsNumber(key(t, "tid")));
        ck_assert(cJSON_IsNumber(key(t, "registerTime")));
        ck_assert(cJSON_IsNull(key(t, "processShutdownTime")));
        ck_assert(cJSON_IsArray(key(t, "pausedRanges")));
        check_samples(ps, t);
        check_markers(ps, t);
    }
    ck_assert_int_eq(mains, 1);
}

static void parsed_free(struct parsed *ps)
{
    free(ps->strings);
    free(ps->stack_frame), free(ps->stack_prefix), free(ps->frame_func), free(ps->frame_line);
    free(ps->func_name);
    cJSON_Delete(ps->root);
}

/* Parses and checks a whole profile; the caller frees with parsed_free. */
static void check_profile(const char *json, size_t len, struct parsed *ps)
{
    memset(ps, 0, sizeof(*ps));
    ck_assert_msg(utf8_valid((const unsigned char *)json, len), "output is not valid UTF-8");
    ps->root = cJSON_ParseWithLength(json, len);
    ck_assert_msg(ps->root != NULL, "output is not JSON");
    const char *const top[] = {"meta",   "libs",   "pages", "counters", "profilerOverhead",
                               "shared", "threads"};
    for (unsigned i = 0; i < sizeof(top) / sizeof(top[0]); i++)
        key(ps->root, top[i]);
    check_meta(ps->root, cJSON_GetArraySize(key(ps->root, "threads")));
    check_shared(ps);
    check_threads(ps);
}

/* ------------------------------------------------------------------------------------------
 * Content checks against what the synthetic model received.
 */

static void check_sample_content(struct parsed *ps, const struct synth *s, int t)
{
    const cJSON *sm = key(cJSON_GetArrayItem(key(ps->root, "threads"), t), "samples");
    int n = length_of(sm);
    ck_assert_int_eq(n, s->nsamples[t]);
    double *stack = column(sm, "stack", n), *time = sample_times(sm, n);
    double *cpu = column(sm, "threadCPUDelta", n);
    double given_ns = 0, written_us = 0;
    for (int i = 0; i < n; i++) {
        const struct expect_sample *e = &s->samples[t][i];
        double want_ms = llround((double)(e->t_ns - T0) / 1000.0) / 1000.0;
        ck_assert_msg(fabs(time[i] - want_ms) < 1e-6, "t%d sample %d: %f != %f", t, i, time[i],
                      want_ms);
        if (i && e->cpu < 0)
            ck_assert(isnan(cpu[i]));
        if (i && e->cpu >= 0) {
            /* whole µs, and the running sum never strays from the clock's by more than 0.5 */
            ck_assert(cpu[i] >= 0 && cpu[i] == floor(cpu[i]));
            given_ns += (double)e->cpu;
            written_us += cpu[i];
            ck_assert_msg(fabs(written_us * 1000 - given_ns) <= 500,
                          "t%d sample %d: %f us vs %f ns", t, i, written_us, given_ns);
        }
        if (e->depth < 0) {
            ck_assert(isnan(stack[i]));
            continue;
        }
        /* Walk leaf to root through prefixOffset; compare func names and frame lines. */
        int st = (int)stack[i];
        for (int d = e->depth - 1; d >= 0; d--) {
            ck_assert_msg(st >= 0, "t%d sample %d: stack too short", t, i);
            int fr = (int)ps->stack_frame[st];
            const struct spec *sp = &s->specs[e->path[d]];
            ck_assert_str_eq(ps->strings[(int)ps->func_name[(int)ps->frame_func[fr]]], sp->name);
            ck_assert(sp->line < 0 ? isnan(ps->frame_line[fr]) : ps->frame_line[fr] == sp->line);
            st = ps->stack_prefix[st] == 0 ? -1 : st - (int)ps->stack_prefix[st];
        }
        ck_assert_msg(st == -1, "t%d sample %d: stack too long", t, i);
    }
    free(stack), free(time), free(cpu);
}

static void check_weights(struct parsed *ps, const struct synth *s)
{
    for (int t = 0; t < NTHREADS; t++) {
        const cJSON *w =
                key(key(cJSON_GetArrayItem(key(ps->root, "threads"), t), "samples"), "weight");
        if (t != 1) {
            ck_assert(cJSON_IsNull(w));
            continue;
        }
        ck_assert_msg(cJSON_IsArray(w), "thread %d: weight must be an array", t);
        for (int i = 0; i < s->nsamples[t]; i++)
            ck_assert_int_eq(cJSON_GetArrayItem(w, i)->valueint, (int)s->samples[t][i].weight);
    }
}

static void check_marker_content(struct parsed *ps, const struct synth *s)
{
    const cJSON *m = key(cJSON_GetArrayItem(key(ps->root, "threads"), 0), "markers");
    int n = length_of(m);
    ck_assert_int_eq(n, s->nmarkers);
    double *name = column(m, "name", n), *ph = column(m, "phase", n);
    double *st = column(m, "startTime", n), *en = column(m, "endTime", n);
    /* Written in time order: Loaded(0.5) Safepoint(1.0) Safepoint-end(1.5) GC(2.6) Late(4). */
    static const int order[] = {3, 1, 2, 0, 4};
    for (int k = 0; k < n; k++) {
        const struct expect_marker *e = &s->markers[order[k]];
        ck_assert_str_eq(ps->strings[(int)name[k]], e->name);
        ck_assert_int_eq((int)ph[k], e->phase);
        if (e->phase != FX_PHASE_END)
            ck_assert(fabs(st[k] - (double)(e->start_ns - T0) / 1e6) < 1e-9);
        if (e->phase == FX_PHASE_END || e->phase == FX_PHASE_INTERVAL)
            ck_assert(fabs(en[k] - (double)(e->end_ns - T0) / 1e6) < 1e-9);
        const cJSON *data = cJSON_GetArrayItem(key(m, "data"), k);
        ck_assert(e->has_data ? cJSON_IsObject(data) : cJSON_IsNull(data));
        if (!e->has_data)
            continue;
        ck_assert_str_eq(key(data, "type")->valuestring, "FxAllFormats");
        ck_assert_str_eq(key(data, "s")->valuestring, "text \"quoted\"\n");
        ck_assert_str_eq(ps->strings[key(data, "u")->valueint], "com.example.Mod1.method1(II)J");
        ck_assert_int_eq(key(data, "i")->valueint, -42);
        ck_assert(key(data, "b")->valuedouble == 52428800);
        ck_assert(key(data, "d")->valuedouble == 1.25 && key(data, "x")->valuedouble == 3.5);
        ck_assert(key(data, "p")->valuedouble == 0.125);
    }
    free(name), free(ph), free(st), free(en);
}

static void check_schema_content(struct parsed *ps)
{
    const cJSON *schemas = key(key(ps->root, "meta"), "markerSchema");
    ck_assert_int_eq(cJSON_GetArraySize(schemas), 1);
    const cJSON *sc = cJSON_GetArrayItem(schemas, 0);
    static const char *const fmts[] = {"string",   "unique-string", "integer",   "bytes",
                                       "duration", "decimal",       "percentage"};
    const cJSON *fields = key(sc, "fields");
    ck_assert_int_eq(cJSON_GetArraySize(fields), 7);
    for (int i = 0; i < 7; i++)
        ck_assert_str_eq(key(cJSON_GetArrayItem(fields, i), "format")->valuestring, fmts[i]);
    const cJSON *disp = key(sc, "display");
    ck_assert_int_eq(cJSON_GetArraySize(disp), 3);
    ck_assert_str_eq(cJSON_GetArrayItem(disp, 2)->valuestring, "timeline-overview");
    ck_assert_str_eq(key(sc, "tableLabel")->valuestring, "{marker.data.u} {marker.data.i}");
}

static void check_counter_and_meta(struct parsed *ps)
{
    const cJSON *cs = key(ps->root, "counters");
    ck_assert_int_eq(cJSON_GetArraySize(cs), 1);
    const cJSON *c = cJSON_GetArrayItem(cs, 0);
    ck_assert_str_eq(key(c, "pid")->valuestring, "4242");
    ck_assert_int_eq(key(c, "mainThreadIndex")->valueint, 0);
    const cJSON *sm = key(c, "samples");
    double *count = column(sm, "count", 4), *time = column(sm, "time", 4);
    ck_assert(count[0] == 1000000 && count[1] == 2000000 && count[2] == -500000);
    ck_assert(count[0] + count[1] + count[2] + count[3] == 8000000);
    ck_assert(time[3] == 3);
    free(count), free(time);
    const cJSON *d = key(c, "display");
    ck_assert_str_eq(key(d, "graphType")->valuestring, "line-accumulated");
    ck_assert(cJSON_IsNull(key(d, "markerSchemaLocation")));
    ck_assert_int_eq(cJSON_GetArraySize(key(d, "tooltipRows")), 2);
    const cJSON *meta = key(ps->root, "meta");
    ck_assert(key(meta, "startTime")->valuedouble == 1767225600000.25);
    ck_assert(key(meta, "profilingEndTime")->valuedouble == 1000);
    ck_assert_int_eq(key(meta, "logicalCPUs")->valueint, 8);
    ck_assert_str_eq(key(meta, "arguments")->valuestring, "-Xmx1g -XX:+UseG1GC");
    const cJSON *extra = key(meta, "extra");
    ck_assert_int_eq(cJSON_GetArraySize(extra), 2);
    const cJSON *g = cJSON_GetArrayItem(extra, 1);
    ck_assert_str_eq(key(g, "label")->valuestring, "Samples");
    const cJSON *e = cJSON_GetArrayItem(key(g, "entries"), 1);
    ck_assert_str_eq(key(e, "label")->valuestring, "OK");
    ck_assert_str_eq(key(e, "format")->valuestring, "integer");
    ck_assert_int_eq(key(e, "value")->valueint, 1200);
    const cJSON *vis = key(meta, "initialVisibleThreads");
    ck_assert_int_eq(cJSON_GetArraySize(vis), 3);
}

static void check_synth(const char *json, size_t len, const struct synth *s)
{
    struct parsed ps;
    check_profile(json, len, &ps);
    for (int t = 0; t < NTHREADS; t++)
        check_sample_content(&ps, s, t);
    check_weights(&ps, s);
    check_marker_content(&ps, s);
    check_schema_content(&ps);
    check_counter_and_meta(&ps);
    const cJSON *t1 = cJSON_GetArrayItem(key(ps.root, "threads"), 1);
    ck_assert(key(t1, "unregisterTime")->valuedouble == 900);
    ck_assert(key(t1, "registerTime")->valuedouble == 0); /* before t0: clamped */
    parsed_free(&ps);
}

/* ------------------------------------------------------------------------------------------
 * Tests.
 */

START_TEST(test_ff_writer_synthetic_profile_is_structurally_valid)
{
    struct synth *s = synth_new();
    size_t len;
    char *json = write_mem(s->p, &len);
    check_synth(json, len, s);
    /* The modified-UTF-8 name arrives as real UTF-8: an escaped NUL and U+1F600. */
    ck_assert_ptr_nonnull(strstr(json, "\"W\\u0000rker-\xF0\x9F\x98\x80\""));
    fx_free(json);
    synth_free(s);
}
END_TEST

START_TEST(test_ff_writer_exactly_one_main_thread_is_the_chosen_one)
{
    struct synth *s = synth_new();
    fx_profile_set_main_thread(s->p, (fx_thread_id){2});
    size_t len;
    char *json = write_mem(s->p, &len);
    struct parsed ps;
    check_profile(json, len, &ps);
    const cJSON *threads = key(ps.root, "threads");
    for (int t = 0; t < NTHREADS; t++)
        ck_assert(cJSON_IsTrue(key(cJSON_GetArrayItem(threads, t), "isMainThread")) == (t == 2));
    const cJSON *sel = key(key(ps.root, "meta"), "initialSelectedThreads");
    ck_assert_int_eq(cJSON_GetArrayItem(sel, 0)->valueint, 2);
    parsed_free(&ps);
    fx_free(json);
    synth_free(s);
}
END_TEST

START_TEST(test_ff_writer_empty_profile_gets_one_placeholder_thread)
{
    struct fx_profile *p = fx_profile_new();
    ck_assert_int_eq(fx_profile_set_meta(p, "processName", "java Empty"), FX_OK);
    size_t len;
    char *json = write_mem(p, &len);
    struct parsed ps;
    check_profile(json, len, &ps);
    const cJSON *threads = key(ps.root, "threads");
    ck_assert_int_eq(cJSON_GetArraySize(threads), 1);
    ck_assert_str_eq(key(cJSON_GetArrayItem(threads, 0), "name")->valuestring, "java Empty");
    const cJSON *meta = key(ps.root, "meta");
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(meta, "initialVisibleThreads"));
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(meta, "profilingStartTime"));
    ck_assert_int_eq(cJSON_GetArraySize(key(meta, "markerSchema")), 0);
    parsed_free(&ps);
    fx_free(json);
    fx_profile_free(p);
}
END_TEST

/* A marker whose schema has no fields, in a thread where no marker holds values: its data is
 * just the type. (Found by fuzz_profile_writer: the writer computed NULL + 0 here, which UBSan
 * reports as undefined behaviour.) */
static const struct fx_marker_schema bare_schema = {.name = "FxBare", .display = FX_DISPLAY_TABLE};

/* A profile with one thread, the field-less schema and a marker name. */
static struct fx_profile *one_thread_bare(fx_thread_id *t, fx_schema_id *schema, fx_str_id *name)
{
    struct fx_profile *p = fx_profile_new();
    ck_assert_int_eq(fx_profile_thread_add(p, "main", 1, 0, t), FX_OK);
    ck_assert_int_eq(fx_profile_schema(p, &bare_schema, schema), FX_OK);
    ck_assert_int_eq(fx_profile_cstring(p, "tick", name), FX_OK);
    return p;
}

/* p written and parsed into ps (json: the text, for fx_free); its first thread's markers. */
static const cJSON *first_thread_markers(struct fx_profile *p, struct parsed *ps, char **json)
{
    size_t len;
    *json = write_mem(p, &len);
    check_profile(*json, len, ps);
    return key(cJSON_GetArrayItem(key(ps->root, "threads"), 0), "markers");
}

START_TEST(test_ff_writer_marker_of_fieldless_schema_has_only_type)
{
    fx_thread_id t;
    fx_schema_id schema;
    fx_str_id name;
    struct fx_profile *p = one_thread_bare(&t, &schema, &name);
    ck_assert_int_eq(
            fx_profile_marker(p, t, name, FX_PHASE_INSTANT, FX_CAT_OTHER, 10, 0, schema, NULL),
            FX_OK);
    struct parsed ps;
    char *json;
    const cJSON *markers = first_thread_markers(p, &ps, &json);
    const cJSON *data = cJSON_GetArrayItem(key(markers, "data"), 0);
    ck_assert_int_eq(cJSON_GetArraySize(data), 1);
    ck_assert_str_eq(key(data, "type")->valuestring, "FxBare");
    parsed_free(&ps);
    fx_free(json);
    fx_profile_free(p);
}
END_TEST

/* A marker's stack is written as data.cause = {stack} (the front-end's CauseBacktrace, whose
 * time defaults to the marker's start); a marker without one has no cause key, and data null
 * takes none. */
START_TEST(test_ff_writer_marker_stack_is_data_cause)
{
    fx_thread_id t;
    fx_schema_id schema;
    fx_str_id name;
    fx_stack_id st;
    struct fx_profile *p = one_thread_bare(&t, &schema, &name);
    ck_assert_int_eq(fx_profile_label_stack(p, "waiter", FX_CAT_JAVA, &st), FX_OK);
    ck_assert_int_eq(fx_profile_marker_stack(p, t, st), FX_EINVAL); /* no marker yet */
    ck_assert_int_eq(fx_profile_marker(p, t, name, FX_PHASE_INSTANT, FX_CAT_OTHER, MS(1), 0,
                                       FX_SCHEMA_NONE, NULL),
                     FX_OK);
    ck_assert_int_eq(fx_profile_marker_stack(p, t, st), FX_EINVAL); /* data null */
    ck_assert_int_eq(fx_profile_marker(p, t, name, FX_PHASE_INTERVAL, FX_CAT_OTHER, MS(2), MS(5),
                                       schema, NULL),
                     FX_OK);
    ck_assert_int_eq(fx_profile_marker_stack(p, t, (fx_stack_id){st.i + 1}), FX_EINVAL);
    ck_assert_int_eq(fx_profile_marker_stack(p, t, st), FX_OK);
    ck_assert_int_eq(fx_profile_marker(p, t, name, FX_PHASE_INTERVAL, FX_CAT_OTHER, MS(6), MS(7),
                                       schema, NULL),
                     FX_OK);
    /* an END marker's stack was taken at its end: the one cause that says when */
    ck_assert_int_eq(
            fx_profile_marker(p, t, name, FX_PHASE_END, FX_CAT_OTHER, 0, MS(9), schema, NULL),
            FX_OK);
    ck_assert_int_eq(fx_profile_marker_stack(p, t, st), FX_OK);
    struct parsed ps;
    char *json;
    const cJSON *markers = first_thread_markers(p, &ps, &json);
    ck_assert(cJSON_IsNull(cJSON_GetArrayItem(key(markers, "data"), 0)));
    const cJSON *cause = key(cJSON_GetArrayItem(key(markers, "data"), 1), "cause");
    ck_assert_ptr_nonnull(cause);
    ck_assert_int_eq(cJSON_GetArraySize(cause), 1);
    ck_assert_int_eq(key(cause, "stack")->valueint, (int)st.i);
    ck_assert_ptr_null(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(key(markers, "data"), 2), "cause"));
    cause = key(cJSON_GetArrayItem(key(markers, "data"), 3), "cause");
    ck_assert_int_eq(cJSON_GetArraySize(cause), 2);
    ck_assert_double_eq_tol(key(cause, "time")->valuedouble, 9.0, 1e-9);
    ck_assert_int_eq(key(cause, "stack")->valueint, (int)st.i);
    parsed_free(&ps);
    fx_free(json);
    fx_profile_free(p);
}
END_TEST

/* Samples of 400 ns CPU each: rounded one by one they would all be 0 µs; with the remainder
 * carried the thread's total is the clock's, 998 known deltas x 400 ns = 399.2 -> 399 µs. */
START_TEST(test_ff_writer_cpu_deltas_in_microseconds_keep_the_thread_total)
{
    struct fx_profile *p = fx_profile_new();
    fx_thread_id t;
    fx_stack_id st;
    ck_assert_int_eq(fx_profile_thread_add(p, "main", 1, 0, &t), FX_OK);
    ck_assert_int_eq(fx_profile_label_stack(p, "busy", FX_CAT_OTHER, &st), FX_OK);
    for (int i = 0; i < 1000; i++)
        ck_assert_int_eq(fx_profile_sample(p, t, MS(1) * (i + 1), st, i == 500 ? -1 : 400, 1),
                         FX_OK);
    size_t len;
    char *json = write_mem(p, &len);
    struct parsed ps;
    check_profile(json, len, &ps);
    const cJSON *sm = key(cJSON_GetArrayItem(key(ps.root, "threads"), 0), "samples");
    double *cpu = column(sm, "threadCPUDelta", 1000);
    double sum = 0;
    for (int i = 1; i < 1000; i++) {
        ck_assert(i == 500 ? isnan(cpu[i]) : cpu[i] == 0 || cpu[i] == 1);
        sum += i == 500 ? 0 : cpu[i];
    }
    ck_assert(sum == 399);
    free(cpu);
    parsed_free(&ps);
    fx_free(json);
    fx_profile_free(p);
}
END_TEST

/* Per-thread sample kinds: tracing-ms weights are µs written as ms (and written even when every
 * weight is 1), bytes weights as they are, and the default stays samples with weight null. */
START_TEST(test_ff_writer_weight_type_is_per_thread)
{
    struct fx_profile *p = fx_profile_new();
    fx_thread_id t[4];
    fx_stack_id st;
    ck_assert_int_eq(fx_profile_label_stack(p, "waiting", FX_CAT_OTHER, &st), FX_OK);
    static const char *const names[4] = {"cpu", "blocked", "blocked-ones", "allocated"};
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(fx_profile_thread_add(p, names[i], i + 1, 0, &t[i]), FX_OK);
    ck_assert_int_eq(fx_profile_thread_set_weight_type(p, t[1], FX_WEIGHT_TRACING_MS), FX_OK);
    ck_assert_int_eq(fx_profile_thread_set_weight_type(p, t[2], FX_WEIGHT_TRACING_MS), FX_OK);
    ck_assert_int_eq(fx_profile_thread_set_weight_type(p, t[3], FX_WEIGHT_BYTES), FX_OK);
    ck_assert_int_eq(fx_profile_thread_set_weight_type(p, (fx_thread_id){4}, FX_WEIGHT_BYTES),
                     FX_EINVAL);
    ck_assert_int_eq(fx_profile_thread_set_weight_type(p, t[0], FX_WEIGHT_TYPE_COUNT), FX_EINVAL);
    ck_assert_int_eq(fx_profile_sample(p, t[0], MS(1), st, 0, 1), FX_OK);
    ck_assert_int_eq(fx_profile_sample(p, t[1], MS(1), st, -1, 1500), FX_OK);
    ck_assert_int_eq(fx_profile_sample(p, t[1], MS(2), st, -1, 1), FX_OK);
    ck_assert_int_eq(fx_profile_sample(p, t[2], MS(1), st, -1, 1), FX_OK);
    ck_assert_int_eq(fx_profile_sample(p, t[3], MS(1), st, -1, 4096), FX_OK);
    size_t len;
    char *json = write_mem(p, &len);
    struct parsed ps;
    check_profile(json, len, &ps);
    static const char *const types[4] = {"samples", "tracing-ms", "tracing-ms", "bytes"};
    static const double weights[4][2] = {{0, 0}, {1.5, 0.001}, {0.001, 0}, {4096, 0}};
    static const int n[4] = {1, 2, 1, 1};
    for (int i = 0; i < 4; i++) {
        const cJSON *sm = key(cJSON_GetArrayItem(key(ps.root, "threads"), i), "samples");
        ck_assert_str_eq(key(sm, "weightType")->valuestring, types[i]);
        if (i == 0) {
            ck_assert(cJSON_IsNull(key(sm, "weight")));
            continue;
        }
        double *w = column(sm, "weight", n[i]);
        for (int k = 0; k < n[i]; k++)
            ck_assert_double_eq_tol(w[k], weights[i][k], 1e-9);
        free(w);
    }
    parsed_free(&ps);
    fx_free(json);
    fx_profile_free(p);
}
END_TEST

/* A func in a frame of the given category with that resource, stacked on prefix. */
static fx_stack_id lib_stack(struct fx_profile *p, fx_stack_id prefix, const char *name,
                             const char *resource, uint8_t cat)
{
    fx_str_id n, r;
    fx_func_id f;
    fx_frame_id fr;
    fx_stack_id s;
    ck_assert_int_eq(fx_profile_cstring(p, name, &n), FX_OK);
    ck_assert_int_eq(fx_profile_cstring(p, resource, &r), FX_OK);
    struct fx_func_key k = {
            .name = n, .resource = r, .source = FX_STR_NONE, .line = -1, .is_java = false};
    ck_assert_int_eq(fx_profile_func(p, &k, &f), FX_OK);
    struct fx_frame_key fk = {.func = f, .line = -1, .category = cat};
    ck_assert_int_eq(fx_profile_frame(p, &fk, &fr), FX_OK);
    ck_assert_int_eq(fx_profile_stack(p, prefix, fr, &s), FX_OK);
    return s;
}

/* Issue 16: a resource named like a library is that library (resourceTable.lib, type 1) and
 * the root libs array describes it (Breakpad id from the build-id); a jar stays type 0 with
 * lib null; a snapshot keeps the libs. */
START_TEST(test_ff_writer_libs_name_native_resources)
{
    struct fx_profile *p = fx_profile_new();
    fx_thread_id t;
    ck_assert_int_eq(fx_profile_thread_add(p, "main", 1, 0, &t), FX_OK);
    fx_stack_id s = lib_stack(p, FX_STACK_NONE, "app.Main.run", "app.jar", FX_CAT_JAVA);
    s = lib_stack(p, s, "deflate_slow", "libz.so.1", FX_CAT_NATIVE);
    ck_assert_int_eq(fx_profile_sample(p, t, MS(1), s, 0, 1), FX_OK);
    const struct fx_lib_desc z = {"libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1",
                                  "0102030405060708090a0b0c0d0e0f1011121314"};
    ck_assert_int_eq(fx_profile_lib(p, &z), FX_OK);
    ck_assert_int_eq(fx_profile_lib(p, &z), FX_OK); /* by name: once */
    ck_assert_int_eq(fx_profile_lib(p, &(struct fx_lib_desc){"[vdso]", NULL, ""}), FX_OK);
    ck_assert_int_eq(fx_profile_lib(p, &(struct fx_lib_desc){NULL, "/x", ""}), FX_EINVAL);
    ck_assert_uint_eq(fx_profile_lib_count(p), 2);
    struct fx_profile *snap = fx_profile_snapshot(p);
    ck_assert_ptr_nonnull(snap);
    fx_profile_free(p);
    size_t len;
    char *json = write_mem(snap, &len);
    struct parsed ps;
    check_profile(json, len, &ps);
    const cJSON *libs = key(ps.root, "libs");
    ck_assert_int_eq(cJSON_GetArraySize(libs), 2);
    const cJSON *l0 = cJSON_GetArrayItem(libs, 0), *l1 = cJSON_GetArrayItem(libs, 1);
    ck_assert_str_eq(key(l0, "name")->valuestring, "libz.so.1");
    ck_assert_str_eq(key(l0, "path")->valuestring, "/usr/lib/x86_64-linux-gnu/libz.so.1");
    ck_assert_str_eq(key(l0, "debugName")->valuestring, "libz.so.1");
    ck_assert_str_eq(key(l0, "codeId")->valuestring, "0102030405060708090a0b0c0d0e0f1011121314");
    ck_assert_str_eq(key(l0, "breakpadId")->valuestring, "0403020106050807090A0B0C0D0E0F100");
    ck_assert(cJSON_IsString(key(l0, "arch")));
    ck_assert_str_eq(key(l1, "path")->valuestring, "[vdso]");
    ck_assert(cJSON_IsNull(key(l1, "codeId")));
    ck_assert_str_eq(key(l1, "breakpadId")->valuestring, "");
    const cJSON *rt = key(key(ps.root, "shared"), "resourceTable");
    ck_assert_int_eq(length_of(rt), 2);
    double *lib = column(rt, "lib", 2), *type = column(rt, "type", 2),
           *name = column(rt, "name", 2);
    ck_assert_str_eq(ps.strings[(int)name[0]], "app.jar");
    ck_assert(isnan(lib[0]) && type[0] == 0);
    ck_assert_str_eq(ps.strings[(int)name[1]], "libz.so.1");
    ck_assert(lib[1] == 0 && type[1] == 1);
    free(lib), free(type), free(name);
    parsed_free(&ps);
    fx_free(json);
    fx_profile_free(snap);
}
END_TEST

/* 70 threads, thread i with i samples: the 64 busiest (6..69) are initially visible. */
START_TEST(test_ff_writer_visible_threads_are_the_busiest_64)
{
    struct fx_profile *p = fx_profile_new();
    for (int t = 0; t < 70; t++) {
        fx_thread_id idx;
        ck_assert_int_eq(fx_profile_thread_add(p, "t", t, 0, &idx), FX_OK);
        for (int i = 0; i < t; i++)
            ck_assert_int_eq(fx_profile_sample(p, idx, i, FX_STACK_NONE, 0, 1), FX_OK);
    }
    size_t len;
    char *json = write_mem(p, &len);
    struct parsed ps;
    check_profile(json, len, &ps);
    const cJSON *vis = key(key(ps.root, "meta"), "initialVisibleThreads");
    ck_assert_int_eq(cJSON_GetArraySize(vis), 64);
    for (int k = 0; k < 64; k++)
        ck_assert_int_eq(cJSON_GetArrayItem(vis, k)->valueint, 6 + k);
    parsed_free(&ps);
    fx_free(json);
    fx_profile_free(p);
}
END_TEST

/* The writer's initialVisibleThreads of p as a bit set of thread indexes (< 32). */
static uint32_t visible_set(const struct fx_profile *p)
{
    size_t len;
    char *json = write_mem(p, &len);
    struct parsed ps;
    check_profile(json, len, &ps);
    const cJSON *vis = key(key(ps.root, "meta"), "initialVisibleThreads");
    uint32_t set = 0;
    for (int k = 0; k < cJSON_GetArraySize(vis); k++)
        set |= 1u << cJSON_GetArrayItem(vis, k)->valueint;
    parsed_free(&ps);
    fx_free(json);
    return set;
}

/* A thread named name (its tid: the name's first byte and length) with n samples of st. */
static fx_thread_id thread_with(struct fx_profile *p, const char *name, fx_stack_id st, int n)
{
    fx_thread_id idx;
    int64_t tid = (int64_t)name[0] * 100 + (int64_t)strlen(name);
    ck_assert_int_eq(fx_profile_thread_add(p, name, tid, 0, &idx), FX_OK);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(fx_profile_sample(p, idx, T0 + i, st, 0, 1), FX_OK);
    return idx;
}

/* A virtual thread that only waited (no sample, a JvmVirtualThreadWait) and a thread with a
 * lock wait are shown; a thread that sat idle without a marker (Finalizer in wall mode) is
 * not, one that sat idle with a marker is, one without sample or wait marker is not. */
START_TEST(test_ff_writer_visible_threads_are_the_working_and_waiting_ones)
{
    struct fx_profile *p = fx_profile_new();
    fx_stack_id work, idle;
    ck_assert_int_eq(fx_profile_label_stack(p, "work", FX_CAT_OTHER, &work), FX_OK);
    ck_assert_int_eq(fx_profile_label_stack(p, "[idle]", FX_CAT_IDLE, &idle), FX_OK);
    fx_thread_id main_t = thread_with(p, "main", work, 5);
    fx_thread_id finalizer = thread_with(p, "Finalizer", idle, 50);
    fx_thread_id vt = thread_with(p, "vt-carrier", FX_STACK_NONE, 0);
    ck_assert_int_eq(fx_jvm_markers_vtwait(p, vt, T0, T0 + MS(5), "vt #1", 5, "park"), FX_OK);
    /* issue 30: one that only waited for a carrier (its wait's marker on another track) */
    fx_thread_id vt2 = thread_with(p, "vt-2", FX_STACK_NONE, 0);
    ck_assert_int_eq(fx_jvm_markers_vtcarrier(p, vt2, T0, T0 + MS(1), "vt #2", 5), FX_OK);
    fx_thread_id locker = thread_with(p, "locker", idle, 3);
    struct fx_jvm_lock l = {.lock_class = "java.lang.Object",
                            .lock_class_len = 16,
                            .owner = "main",
                            .owner_len = 4,
                            .kind = "monitor"};
    ck_assert_int_eq(fx_jvm_markers_lock(p, locker, T0, T0 + MS(2), &l), FX_OK);
    fx_thread_id marked = thread_with(p, "marked-idle", idle, 2);
    ck_assert_int_eq(fx_profile_marker(p, marked, sid(p, "Loaded"), FX_PHASE_INSTANT, FX_CAT_GC, T0,
                                       0, FX_SCHEMA_NONE, NULL),
                     FX_OK);
    fx_thread_id bare = thread_with(p, "bare", FX_STACK_NONE, 0);
    ck_assert_int_eq(fx_profile_marker(p, bare, sid(p, "Loaded"), FX_PHASE_INSTANT, FX_CAT_GC, T0,
                                       0, FX_SCHEMA_NONE, NULL),
                     FX_OK);
    uint32_t want = 1u << main_t.i | 1u << vt.i | 1u << vt2.i | 1u << locker.i | 1u << marked.i;
    ck_assert_uint_eq(visible_set(p), want);
    ck_assert(!(want & 1u << finalizer.i) && !(want & 1u << bare.i));
    fx_profile_free(p);

    /* Only idle threads: they are shown rather than nothing. */
    p = fx_profile_new();
    ck_assert_int_eq(fx_profile_label_stack(p, "[idle]", FX_CAT_IDLE, &idle), FX_OK);
    fx_thread_id a = thread_with(p, "a", idle, 3), b = thread_with(p, "b", idle, 4);
    ck_assert_uint_eq(visible_set(p), 1u << a.i | 1u << b.i);
    fx_profile_free(p);
}
END_TEST

/* p written and parsed (checked): its "threads"; *json and ps for the caller to free. */
static const cJSON *written_threads(struct fx_profile *p, struct parsed *ps, char **json)
{
    size_t len;
    *json = write_mem(p, &len);
    check_profile(*json, len, ps);
    return key(ps->root, "threads");
}

/* Numbers come from fx_json's own digits: a German LC_NUMERIC (decimal comma) changes nothing. */
/* Threads whose name repeats are told apart by their tid (and their order when the tid repeats
 * too); a unique name is written as it is. */
START_TEST(test_ff_writer_repeated_thread_names_get_their_tid)
{
    static const struct {
        const char *name;
        int64_t tid;
        const char *track;
    } rows[] = {{"pool-1-thread-1", 10, "pool-1-thread-1 (tid 10)"},
                {"main", 1, "main"},
                {"pool-1-thread-1", 11, "pool-1-thread-1 (tid 11)"},
                {"x", 5, "x (tid 5, #1)"},
                {"pool", 10, "pool"},
                {"x", 5, "x (tid 5, #2)"}};
    struct fx_profile *p = fx_profile_new();
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        fx_thread_id idx;
        ck_assert_int_eq(fx_profile_thread_add(p, rows[i].name, rows[i].tid, 0, &idx), FX_OK);
    }
    char *json;
    struct parsed ps;
    const cJSON *threads = written_threads(p, &ps, &json);
    ck_assert_int_eq(cJSON_GetArraySize(threads), 6);
    for (int i = 0; i < 6; i++)
        ck_assert_str_eq(key(cJSON_GetArrayItem(threads, i), "name")->valuestring, rows[i].track);
    parsed_free(&ps);
    fx_free(json);
    fx_profile_free(p);
}
END_TEST

/* A view's companion track (issue 30: a thread's lock waits) is written right after its
 * thread's track, whenever it was added, and named after that track as written ("(tid N)"
 * included), then its suffix; a renamed thread renames its companion. The same from a snapshot,
 * whose thread indexes shift (DestroyJavaVM, empty on main's tid, is left out). */
START_TEST(test_ff_writer_companion_track_sits_beside_its_thread_under_its_name)
{
    struct fx_profile *p = fx_profile_new();
    fx_stack_id work;
    fx_thread_id main, djvm, w1, w2, other, c2, c1, c1b, bad;
    ck_assert_int_eq(fx_profile_label_stack(p, "work", FX_CAT_OTHER, &work), FX_OK);
    ck_assert_int_eq(fx_profile_thread_add(p, "main", 1, 0, &main), FX_OK);
    ck_assert_int_eq(fx_profile_sample(p, main, T0, work, 0, 1), FX_OK);
    ck_assert_int_eq(fx_profile_thread_add(p, "DestroyJavaVM", 1, 0, &djvm), FX_OK);
    ck_assert_int_eq(fx_profile_thread_add(p, "worker", 10, 0, &w1), FX_OK);
    ck_assert_int_eq(fx_profile_thread_add(p, "worker", 11, 0, &w2), FX_OK);
    ck_assert_int_eq(fx_profile_thread_add(p, "other", 12, 0, &other), FX_OK);
    ck_assert_int_eq(fx_profile_thread_add_companion(p, w2, ": lock waits", 0, &c2), FX_OK);
    ck_assert_int_eq(fx_profile_thread_add_companion(p, other, ": lock waits", 0, &c1), FX_OK);
    ck_assert_int_eq(fx_profile_thread_add_companion(p, other, ": idle waits", 0, &c1b), FX_OK);
    ck_assert_int_eq(fx_profile_thread_add_companion(p, (fx_thread_id){99}, ": x", 0, &bad),
                     FX_EINVAL);
    ck_assert_int_eq(fx_profile_thread_set_name(p, other, "renamed"), FX_OK);
    static const char *const want[] = {
            "main",    "worker (tid 10)",     "worker (tid 11)",    "worker (tid 11): lock waits",
            "renamed", "renamed: lock waits", "renamed: idle waits"};
    static const int64_t tids[] = {1, 10, 11, 11, 12, 12, 12};
    struct fx_profile *snap = fx_profile_snapshot(p);
    ck_assert_ptr_nonnull(snap);
    for (int k = 0; k < 2; k++) {
        char *json;
        struct parsed ps;
        const cJSON *threads = written_threads(k ? snap : p, &ps, &json);
        ck_assert_int_eq(cJSON_GetArraySize(threads), 7);
        for (int i = 0; i < 7; i++) {
            const cJSON *t = cJSON_GetArrayItem(threads, i);
            ck_assert_str_eq(key(t, "name")->valuestring, want[i]);
            ck_assert_int_eq((int64_t)key(t, "tid")->valuedouble, tids[i]);
        }
        parsed_free(&ps);
        fx_free(json);
    }
    fx_profile_free(snap);
    fx_profile_free(p);
}
END_TEST

/* A dump at VM death writes the model itself: DestroyJavaVM, empty on main's tid, is left out
 * there too, and the indexes of main and of the visible threads are those of the file. */
START_TEST(test_ff_writer_leaves_out_empty_alias_of_main)
{
    struct fx_profile *p = fx_profile_new();
    fx_stack_id work;
    ck_assert_int_eq(fx_profile_label_stack(p, "work", FX_CAT_OTHER, &work), FX_OK);
    fx_thread_id djvm, main, other;
    ck_assert_int_eq(fx_profile_thread_add(p, "DestroyJavaVM", 7, 0, &djvm), FX_OK);
    ck_assert_int_eq(fx_profile_thread_add(p, "main", 7, 0, &main), FX_OK);
    ck_assert_int_eq(fx_profile_thread_add(p, "other", 8, 0, &other), FX_OK);
    fx_profile_set_main_thread(p, main);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(fx_profile_sample(p, main, T0 + i, work, 0, 1), FX_OK);
        ck_assert_int_eq(fx_profile_sample(p, other, T0 + i, work, 0, 1), FX_OK);
    }
    size_t len;
    char *json = write_mem(p, &len);
    struct parsed ps;
    check_profile(json, len, &ps);
    const cJSON *threads = key(ps.root, "threads"), *meta = key(ps.root, "meta");
    ck_assert_int_eq(cJSON_GetArraySize(threads), 2);
    ck_assert_str_eq(key(cJSON_GetArrayItem(threads, 0), "name")->valuestring, "main");
    ck_assert(cJSON_IsTrue(key(cJSON_GetArrayItem(threads, 0), "isMainThread")));
    ck_assert_int_eq(cJSON_GetArrayItem(key(meta, "initialSelectedThreads"), 0)->valueint, 0);
    const cJSON *vis = key(meta, "initialVisibleThreads");
    ck_assert_int_eq(cJSON_GetArraySize(vis), 2);
    ck_assert_int_eq(cJSON_GetArrayItem(vis, 0)->valueint, 0);
    ck_assert_int_eq(cJSON_GetArrayItem(vis, 1)->valueint, 1);
    parsed_free(&ps);
    fx_free(json);
    fx_profile_free(p);
}
END_TEST

/* meta.extra: a figure at 0 is a row, a detail at 0 is none; a group whose loss counts are all 0
 * has one row "losses": "none" instead of them, and none when one of them is not 0. */
START_TEST(test_ff_writer_extra_leaves_out_zero_details_and_losses)
{
    struct fx_profile *p = fx_profile_new();
    fx_thread_id idx;
    ck_assert_int_eq(fx_profile_thread_add(p, "main", 1, 0, &idx), FX_OK);
    ck_assert_int_eq(fx_profile_extra_int(p, "G", "figure", 0), FX_OK);
    ck_assert_int_eq(fx_profile_extra_detail(p, "G", "rare", 0), FX_OK);
    ck_assert_int_eq(fx_profile_extra_detail(p, "G", "seen", 3), FX_OK);
    ck_assert_int_eq(fx_profile_extra_loss(p, "G", "dropped", 0), FX_OK);
    ck_assert_int_eq(fx_profile_extra_loss(p, "H", "dropped", 0), FX_OK);
    ck_assert_int_eq(fx_profile_extra_loss(p, "H", "failed", 2), FX_OK);
    ck_assert_int_eq(fx_profile_extra_str(p, "I", "engine", "timer"), FX_OK);
    ck_assert_int_eq(fx_profile_extra_count(p, "I", "x", 1, (enum fx_extra_show)7), FX_EINVAL);
    size_t len;
    char *json = write_mem(p, &len);
    struct parsed ps;
    check_profile(json, len, &ps);
    const cJSON *extra = key(key(ps.root, "meta"), "extra");
    static const char *const want[3][4] = {{"G", "figure=0", "seen=3", "losses=none"},
                                           {"H", "failed=2", NULL, NULL},
                                           {"I", "engine=timer", NULL, NULL}};
    ck_assert_int_eq(cJSON_GetArraySize(extra), 3);
    for (int g = 0; g < 3; g++) {
        const cJSON *grp = cJSON_GetArrayItem(extra, g), *e;
        ck_assert_str_eq(key(grp, "label")->valuestring, want[g][0]);
        int n = 0;
        cJSON_ArrayForEach(e, key(grp, "entries"))
        {
            char row[64];
            const cJSON *v = key(e, "value");
            if (cJSON_IsString(v))
                snprintf(row, sizeof(row), "%s=%s", key(e, "label")->valuestring, v->valuestring);
            else
                snprintf(row, sizeof(row), "%s=%d", key(e, "label")->valuestring, v->valueint);
            ck_assert_int_lt(n + 1, 4);
            ck_assert_ptr_nonnull(want[g][n + 1]);
            ck_assert_str_eq(row, want[g][n + 1]);
            n++;
        }
        ck_assert(n == 3 || want[g][n + 1] == NULL);
    }
    parsed_free(&ps);
    fx_free(json);
    fx_profile_free(p);
}
END_TEST

START_TEST(test_ff_writer_locale_does_not_change_numbers)
{
    struct synth *s = synth_new();
    size_t len1, len2;
    char *a = write_mem(s->p, &len1);
    const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "de_DE", NULL};
    const char *got = NULL;
    for (int i = 0; names[i] && !got; i++)
        got = setlocale(LC_ALL, names[i]);
    if (!got)
        fprintf(stderr, "test_ff_writer_locale_does_not_change_numbers: no de_DE locale "
                        "installed (set LOCPATH to a localedef output); compared under C only\n");
    char *b = write_mem(s->p, &len2);
    setlocale(LC_ALL, "C");
    ck_assert_uint_eq(len1, len2);
    ck_assert_int_eq(memcmp(a, b, len1), 0);
    ck_assert_ptr_nonnull(strstr(b, "\"startTime\":1767225600000.25,"));
    fx_free(a);
    fx_free(b);
    synth_free(s);
}
END_TEST

static int failing_write(void *ctx, const void *buf, size_t len)
{
    (void)buf;
    size_t *budget = ctx;
    if (len > *budget)
        return FX_EIO;
    *budget -= len;
    return FX_OK;
}

START_TEST(test_ff_writer_sink_and_allocation_failures_are_reported)
{
    struct synth *s = synth_new();
    size_t budget = 1000;
    struct fx_errbuf eb = {{0}};
    struct fx_sink sink = {.write = failing_write, .ctx = &budget};
    ck_assert_int_eq(fx_ff_write(s->p, sink, &eb), FX_EIO);
    ck_assert_ptr_nonnull(strstr(eb.msg, "writing the profile"));
    struct fx_membuf mb = {0};
    fx_alloc_fail_after(1);
    ck_assert_int_eq(fx_ff_write(s->p, fx_membuf_sink(&mb), &eb), FX_ENOMEM);
    fx_alloc_fail_after(0);
    fx_membuf_destroy(&mb);
    synth_free(s);
}
END_TEST

/* --- files --- */

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Inflates exactly one gzip member and checks nothing follows it (§15). */
static char *gunzip_single(const char *gz, size_t gzlen, size_t *outlen)
{
    ck_assert_uint_ge(gzlen, 18);
    ck_assert(memcmp(gz, "\x1f\x8b\x08", 3) == 0);
    z_stream z;
    memset(&z, 0, sizeof(z));
    ck_assert_int_eq(inflateInit2(&z, 15 + 16), Z_OK);
    size_t cap = gzlen * 20 + 1024;
    char *out = malloc(cap);
    z.next_in = (Bytef *)gz;
    z.avail_in = (uInt)gzlen;
    z.next_out = (Bytef *)out;
    z.avail_out = (uInt)cap;
    int rc = inflate(&z, Z_FINISH);
    ck_assert_int_eq(rc, Z_STREAM_END);
    ck_assert_msg(z.avail_in == 0, "%u bytes after the first gzip member", z.avail_in);
    *outlen = z.total_out;
    inflateEnd(&z);
    return out;
}

static char tmpdir[64], fbdir[64];

static void make_dirs(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/fxwt.XXXXXX");
    snprintf(fbdir, sizeof(fbdir), "/tmp/fxwf.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    ck_assert_ptr_nonnull(mkdtemp(fbdir));
    setenv("TMPDIR", fbdir, 1); /* the fallback folder of fx_out_file */
}

static void remove_dirs(void)
{
    char cmd[200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", tmpdir, fbdir);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_ff_writer_file_is_one_gzip_member_of_the_same_json)
{
    make_dirs();
    struct synth *s = synth_new();
    char path[128];
    snprintf(path, sizeof(path), "%s/profile.json.gz", tmpdir);
    struct fx_ff_file_result res;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_ff_write_file(s->p, path, 0, &res, &eb), FX_OK);
    ck_assert_str_eq(res.path, path);
    ck_assert(!res.fell_back);
    size_t gzlen, len, memlen;
    char *gz = read_file(path, &gzlen);
    ck_assert_uint_eq(res.bytes, gzlen);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    char *json = gunzip_single(gz, gzlen, &len);
    char *mem = write_mem(s->p, &memlen);
    ck_assert_uint_eq(len, memlen);
    ck_assert_int_eq(memcmp(json, mem, len), 0);
    check_synth(json, len, s);
    free(gz), free(json), fx_free(mem);
    synth_free(s);
    remove_dirs();
}
END_TEST

START_TEST(test_ff_writer_json_suffix_writes_plain_json)
{
    make_dirs();
    struct synth *s = synth_new();
    char path[128];
    snprintf(path, sizeof(path), "%s/profile.json", tmpdir);
    struct fx_ff_file_result res;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_ff_write_file(s->p, path, 0644, &res, &eb), FX_OK);
    size_t len;
    char *json = read_file(path, &len);
    ck_assert_int_eq(json[0], '{');
    ck_assert_uint_eq(res.bytes, len);
    check_synth(json, len, s);
    free(json);
    synth_free(s);
    remove_dirs();
}
END_TEST

START_TEST(test_ff_writer_missing_folder_falls_back_and_says_so)
{
    make_dirs();
    struct synth *s = synth_new();
    char path[128], want[160];
    snprintf(path, sizeof(path), "%s/no/such/dir/p.json.gz", tmpdir);
    snprintf(want, sizeof(want), "%s/p.json.gz", fbdir);
    struct fx_ff_file_result res;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_ff_write_file(s->p, path, 0, &res, &eb), FX_OK);
    ck_assert(res.fell_back);
    ck_assert_str_eq(res.path, want);
    ck_assert_ptr_nonnull(strstr(res.reason, "no/such/dir"));
    size_t gzlen, len;
    char *gz = read_file(want, &gzlen);
    char *json = gunzip_single(gz, gzlen, &len);
    check_synth(json, len, s);
    free(gz), free(json);
    synth_free(s);
    remove_dirs();
}
END_TEST

/* The target takes the stream but a write fails (a /dev/full: ENOSPC): the whole profile is
 * written again into the fallback folder, named for a device, and the device is untouched.
 * As root the device is a node of our own (mknod), so that no build can ever replace the
 * real /dev/full. */
START_TEST(test_ff_writer_failure_after_open_retries_in_fallback_folder)
{
    make_dirs();
    struct synth *s = synth_new();
    char path[128], want[160];
    snprintf(path, sizeof(path), "%s/full", tmpdir);
    if (mknod(path, S_IFCHR | 0666, makedev(1, 7)) != 0)
        snprintf(path, sizeof(path), "/dev/full"); /* not root: /dev cannot be written */
    snprintf(want, sizeof(want), "%s/full.json.gz", fbdir);
    struct fx_ff_file_result res;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_ff_write_file(s->p, path, 0, &res, &eb), FX_OK);
    ck_assert(res.fell_back);
    ck_assert_str_eq(res.path, want);
    ck_assert_ptr_nonnull(strstr(res.reason, strerror(ENOSPC)));
    struct stat st;
    ck_assert_int_eq(lstat(path, &st), 0);
    ck_assert(S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 7));
    size_t gzlen, len;
    char *gz = read_file(want, &gzlen);
    char *json = gunzip_single(gz, gzlen, &len);
    check_synth(json, len, s);
    free(gz), free(json);
    synth_free(s);
    remove_dirs();
}
END_TEST

START_TEST(test_ff_writer_unwritable_everywhere_fails_with_reason)
{
    make_dirs();
    struct synth *s = synth_new();
    char path[128], nofb[128];
    snprintf(path, sizeof(path), "%s/missing/p.json.gz", tmpdir);
    snprintf(nofb, sizeof(nofb), "%s/missing-too", fbdir);
    setenv("TMPDIR", nofb, 1);
    struct fx_ff_file_result res;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_ne(fx_ff_write_file(s->p, path, 0, &res, &eb), FX_OK);
    ck_assert_str_eq(res.path, "");
    ck_assert_ptr_nonnull(strstr(eb.msg, "missing-too"));
    ck_assert_str_eq(res.reason, eb.msg);
    ck_assert_int_ne(access(nofb, F_OK), 0);
    synth_free(s);
    remove_dirs();
}
END_TEST

/* --- golden --- */

static const struct fx_marker_field gc_fields[] = {{"collector", "Collector", FX_FMT_STRING},
                                                   {"gcCause", "Cause", FX_FMT_STRING},
                                                   {"heapBefore", "Heap before", FX_FMT_BYTES},
                                                   {"heapAfter", "Heap after", FX_FMT_BYTES}};
static const struct fx_marker_schema gc_schema = {"JvmGcPause",
                                                  "GC pause: {marker.data.gcCause}",
                                                  "{marker.data.collector}: {marker.data.gcCause}",
                                                  "{marker.data.gcCause}",
                                                  "A stop-the-world garbage collection pause.",
                                                  FX_DISPLAY_CHART | FX_DISPLAY_TABLE |
                                                          FX_DISPLAY_TIMELINE_OVERVIEW,
                                                  gc_fields,
                                                  4};
static const struct fx_marker_field jit_fields[] = {{"method", "Method", FX_FMT_UNIQUE_STRING},
                                                    {"level", "Tier", FX_FMT_INTEGER}};
static const struct fx_marker_schema jit_schema = {"JvmJitCompile",
                                                   NULL,
                                                   "{marker.data.method}",
                                                   NULL,
                                                   NULL,
                                                   FX_DISPLAY_CHART | FX_DISPLAY_TABLE,
                                                   jit_fields,
                                                   2};

static fx_func_id golden_func(struct fx_profile *p, const char *name, bool java, int32_t line)
{
    struct fx_func_key k = {sid(p, name), java ? sid(p, "app.jar") : FX_STR_NONE,
                            java ? sid(p, "com/example/App.java") : FX_STR_NONE, line, java};
    fx_func_id f;
    ck_assert_int_eq(fx_profile_func(p, &k, &f), FX_OK);
    return f;
}

static fx_stack_id golden_stack(struct fx_profile *p, fx_stack_id prefix, fx_func_id f,
                                int32_t line, uint8_t cat, uint8_t sub)
{
    struct fx_frame_key k = {f, line, cat, sub, 0};
    fx_frame_id fr;
    ck_assert_int_eq(fx_profile_frame(p, &k, &fr), FX_OK);
    fx_stack_id st;
    ck_assert_int_eq(fx_profile_stack(p, prefix, fr, &st), FX_OK);
    return st;
}

static void golden_meta(struct fx_profile *p)
{
    fx_profile_set_start(p, T0, 1767225600000.0);
    fx_profile_set_range(p, T0, T0 + MS(5));
    fx_profile_set_interval(p, 1);
    fx_profile_set_pid(p, 12345);
    fx_profile_set_meta(p, "product", "fxagent: com.example.App");
    fx_profile_set_meta(p, "processName", "java com.example.App");
    fx_profile_set_meta(p, "platform", "X11");
    fx_profile_set_meta(p, "oscpu", "Linux x86_64");
    fx_profile_set_meta_int(p, "logicalCPUs", 8);
    fx_profile_extra_str(p, "JVM", "Version", "17.0.9+9");
    fx_profile_extra_int(p, "Samples", "GC active", 1);
    fx_counter_id c;
    struct fx_counter_desc d = {"Java heap used", "Memory", "Java heap in use", "bytes", "orange"};
    fx_profile_counter(p, &d, &c);
    fx_profile_counter_sample(p, c, T0 + MS(1), 52428800);
    fx_profile_counter_sample(p, c, T0 + MS(3.4), 8388608);
}

static void golden_markers(struct fx_profile *p, fx_thread_id main, fx_thread_id jit)
{
    fx_schema_id gc, jc;
    fx_profile_schema(p, &gc_schema, &gc);
    fx_profile_schema(p, &jit_schema, &jc);
    union fx_marker_value v[4] = {{.s = sid(p, "G1 Young Generation")},
                                  {.s = sid(p, "G1 Evacuation Pause")},
                                  {.i = 52428800},
                                  {.i = 8388608}};
    fx_profile_marker(p, main, sid(p, "GC pause"), FX_PHASE_INTERVAL, FX_CAT_GC, T0 + MS(2.6),
                      T0 + MS(3.4), gc, v);
    union fx_marker_value j[2] = {{.s = sid(p, "com.example.App.compute(II)J")}, {.i = 4}};
    fx_profile_marker(p, jit, sid(p, "JIT compile"), FX_PHASE_START, FX_CAT_JIT, T0 + MS(1.2), 0,
                      jc, j);
    fx_profile_marker(p, jit, sid(p, "JIT compile"), FX_PHASE_END, FX_CAT_JIT, 0, T0 + MS(1.7),
                      FX_SCHEMA_NONE, NULL);
    fx_profile_marker(p, main, sid(p, "Dump"), FX_PHASE_INSTANT, FX_CAT_OTHER, T0 + MS(4.9), 0,
                      FX_SCHEMA_NONE, NULL);
}

/* PROFILE-FORMAT.md §13's example, plus a JIT thread with a start/end marker pair, a label
 * stack, an unknown CPU delta, a weighted sample, a counter and meta.extra. */
static struct fx_profile *small_profile(void)
{
    struct fx_profile *p = fx_profile_new();
    golden_meta(p);
    fx_stack_id s0 = golden_stack(p, FX_STACK_NONE, golden_func(p, "com.example.App.main", 1, 10),
                                  12, FX_CAT_JAVA, FX_JAVA_INTERPRETED);
    fx_stack_id s1 = golden_stack(p, s0, golden_func(p, "com.example.App.compute", 1, 40), 42,
                                  FX_CAT_JAVA, FX_JAVA_C2);
    fx_stack_id s2 = golden_stack(p, FX_STACK_NONE,
                                  golden_func(p, "[GC worker: G1 young evacuation]", 0, -1), -1,
                                  FX_CAT_GC, 1);
    fx_stack_id lab;
    fx_profile_label_stack(p, "[AGCT: not walkable (Java)]", FX_CAT_OTHER, &lab);
    fx_thread_id tm, tg, tj;
    fx_profile_thread_add(p, "main", 12346, T0, &tm);
    fx_profile_thread_add(p, "GC Thread#0", 12350, T0, &tg);
    fx_profile_thread_add(p, "C2 CompilerThread0", 12351, T0 + MS(1), &tj);
    fx_profile_thread_unregister(p, tj, T0 + MS(4.5));
    fx_profile_sample(p, tm, T0 + MS(0.5), s0, 0, 1);
    fx_profile_sample(p, tm, T0 + MS(1.5), s1, 1000000, 1);
    fx_profile_sample(p, tm, T0 + MS(2.5), s1, 950000, 1);
    fx_profile_sample(p, tm, T0 + MS(3.5), s0, 100000, 1);
    fx_profile_sample(p, tg, T0 + MS(2.75), s2, 0, 1);
    fx_profile_sample(p, tg, T0 + MS(3.25), s2, 500000, 1);
    fx_profile_sample(p, tj, T0 + 1300400, lab, 0, 2);
    fx_profile_sample(p, tj, T0 + 1800600, FX_STACK_NONE, -1, 1);
    golden_markers(p, tm, tj);
    return p;
}

static void golden_path(char *out, size_t cap)
{
    snprintf(out, cap, "%s", __FILE__); /* .../tests/unit/test_ff_writer.c */
    char *slash = strrchr(out, '/');
    ck_assert_ptr_nonnull(slash);
    *slash = '\0';
    slash = strrchr(out, '/');
    ck_assert_ptr_nonnull(slash);
    snprintf(slash, cap - (size_t)(slash - out), "/golden/small.json");
}

START_TEST(test_ff_writer_small_profile_matches_golden_file)
{
    struct fx_profile *p = small_profile();
    size_t len;
    char *json = write_mem(p, &len);
    struct parsed ps;
    check_profile(json, len, &ps);
    parsed_free(&ps);
    char path[4096];
    golden_path(path, sizeof(path));
    const char *update = getenv("FX_UPDATE_GOLDEN");
    if (update && strcmp(update, "1") == 0) {
        FILE *f = fopen(path, "wb");
        ck_assert_msg(f != NULL, "cannot write %s: %s", path, strerror(errno));
        ck_assert_uint_eq(fwrite(json, 1, len, f), len);
        ck_assert_int_eq(fclose(f), 0);
        fprintf(stderr, "updated %s: review the diff\n", path);
    }
    size_t glen;
    char *golden = read_file(path, &glen);
    ck_assert_msg(glen == len && memcmp(golden, json, len) == 0,
                  "output differs from %s (regenerate with FX_UPDATE_GOLDEN=1 and review)", path);
    free(golden);
    fx_free(json);
    fx_profile_free(p);
}
END_TEST

static Suite *ff_writer_suite(void)
{
    Suite *s = suite_create("ff_writer");
    TCase *tc = tcase_create("structure");
    tcase_set_timeout(tc, 120); /* generous: CI machines are shared and sanitized */
    tcase_add_test(tc, test_ff_writer_synthetic_profile_is_structurally_valid);
    tcase_add_test(tc, test_ff_writer_exactly_one_main_thread_is_the_chosen_one);
    tcase_add_test(tc, test_ff_writer_empty_profile_gets_one_placeholder_thread);
    tcase_add_test(tc, test_ff_writer_weight_type_is_per_thread);
    tcase_add_test(tc, test_ff_writer_libs_name_native_resources);
    tcase_add_test(tc, test_ff_writer_marker_of_fieldless_schema_has_only_type);
    tcase_add_test(tc, test_ff_writer_marker_stack_is_data_cause);
    tcase_add_test(tc, test_ff_writer_visible_threads_are_the_busiest_64);
    tcase_add_test(tc, test_ff_writer_visible_threads_are_the_working_and_waiting_ones);
    tcase_add_test(tc, test_ff_writer_repeated_thread_names_get_their_tid);
    tcase_add_test(tc, test_ff_writer_companion_track_sits_beside_its_thread_under_its_name);
    tcase_add_test(tc, test_ff_writer_leaves_out_empty_alias_of_main);
    tcase_add_test(tc, test_ff_writer_extra_leaves_out_zero_details_and_losses);
    tcase_add_test(tc, test_ff_writer_cpu_deltas_in_microseconds_keep_the_thread_total);
    tcase_add_test(tc, test_ff_writer_locale_does_not_change_numbers);
    tcase_add_test(tc, test_ff_writer_sink_and_allocation_failures_are_reported);
    suite_add_tcase(s, tc);
    tc = tcase_create("files");
    tcase_set_timeout(tc, 120); /* generous: CI machines are shared and sanitized */
    tcase_add_test(tc, test_ff_writer_file_is_one_gzip_member_of_the_same_json);
    tcase_add_test(tc, test_ff_writer_json_suffix_writes_plain_json);
    tcase_add_test(tc, test_ff_writer_missing_folder_falls_back_and_says_so);
    tcase_add_test(tc, test_ff_writer_failure_after_open_retries_in_fallback_folder);
    tcase_add_test(tc, test_ff_writer_unwritable_everywhere_fails_with_reason);
    suite_add_tcase(s, tc);
    tc = tcase_create("golden");
    tcase_set_timeout(tc, 120); /* generous: CI machines are shared and sanitized */
    tcase_add_test(tc, test_ff_writer_small_profile_matches_golden_file);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(ff_writer_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
