/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the profile model and fx_ff_write: the input is a program of small operations (intern
 * strings, funcs, frames, stacks; add threads, samples, markers, counters, meta), some with ids
 * deliberately out of range and some with an allocation made to fail. A shadow count of every
 * table checks each return code; the written profile must parse with cJSON, be strict UTF-8,
 * have columns as long as their table's length, and hold only ids that resolve.
 * Times stay in [0, 2^62): the model's contract is one monotonic clock, whose differences the
 * writer may take without overflow. */
#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_ff_writer.h"
#include "fx_profile.h"
#include "fx_sink.h"

/* core/ keeps the model's layout private; its own tests read the tables. */
#include "../../core/model/fx_profile_internal.h"

#define MAX_THREADS  8
#define MAX_COUNTERS 4
#define MAX_OPS      512
#define TIME_MASK    ((1ull << 62) - 1)
#define N_SCHEMAS    3 /* in schemas[] below */

/* What the model must hold, counted from the return codes. */
struct shadow {
    uint32_t strings, funcs, frames, stacks, threads, counters, schemas;
    uint32_t samples[MAX_THREADS], markers[MAX_THREADS];
    const struct fx_marker_schema *schema_at[N_SCHEMAS];
    int64_t clock; /* the harness's monotonic clock */
    bool inject;   /* an allocation of this op may fail */
};

static const struct fx_marker_field all_fields[] = {
        {"s", "String", FX_FMT_STRING},     {"u", "Unique", FX_FMT_UNIQUE_STRING},
        {"i", "Integer", FX_FMT_INTEGER},   {"b", "Bytes", FX_FMT_BYTES},
        {"d", "Duration", FX_FMT_DURATION}, {"x", "Decimal", FX_FMT_DECIMAL},
        {"p", "Percent", FX_FMT_PERCENTAGE}};
static const struct fx_marker_field bad_fields[] = {{"cause", NULL, FX_FMT_INTEGER}};
static const struct fx_marker_schema schemas[] = {
        {"FxFuzzAll", "{marker.data.s}", NULL, NULL, "all formats", FX_DISPLAY_CHART, all_fields,
         7},
        {"FxFuzzEmpty", NULL, NULL, NULL, NULL, FX_DISPLAY_TABLE, NULL, 0},
        {"FxFuzzBad", NULL, NULL, NULL, NULL, 0, bad_fields, 1}, /* refused: field "cause" */
};

static const char *const meta_keys[] = {"product",   "processName", "oscpu", "platform",
                                        "arguments", "CPUName",     "bogus"};
static const char *const meta_int_keys[] = {"logicalCPUs", "physicalCPUs", "mainMemory", "bogus"};

/* An id below count, FX_NONE_ID, or (rarely) the first invalid one. */
static uint32_t pick(struct fuzz_reader *r, uint32_t count)
{
    uint8_t b = fuzz_u8(r);
    if (b == 0xFF)
        return FX_NONE_ID;
    if (b == 0xFE || count == 0)
        return count;
    return b % count;
}

static int64_t next_time(struct fuzz_reader *r, struct shadow *sh)
{
    uint32_t step = fuzz_u32(r);
    if (step >> 28 == 0xF) /* now and then a step back, which the model clamps */
        return sh->clock - (step & 0xFFFFF) < 0 ? 0 : sh->clock - (step & 0xFFFFF);
    sh->clock = (int64_t)(((uint64_t)sh->clock + (step & 0x3FFFFFF)) & TIME_MASK);
    return sh->clock;
}

/* rc of a call whose arguments were valid (or not, per `valid`). */
static void expect(const struct shadow *sh, int rc, bool valid, const char *what)
{
    if (!valid)
        FUZZ_CHECK(rc == FX_EINVAL, "%s with an invalid argument: rc %d", what, rc);
    else if (sh->inject)
        FUZZ_CHECK(rc == FX_OK || rc == FX_ENOMEM, "%s under injection: rc %d", what, rc);
    else
        FUZZ_CHECK(rc == FX_OK, "%s: rc %d", what, rc);
}

/* Get-or-create ids are dense: a new one is the old count. */
static void interned(uint32_t *count, uint32_t id, const char *what)
{
    FUZZ_CHECK(id <= *count, "%s id %u beyond count %u", what, id, *count);
    if (id == *count)
        (*count)++;
}

static void op_string(struct fuzz_reader *r, struct fx_profile *p, struct shadow *sh)
{
    size_t len;
    const uint8_t *s = fuzz_bytes(r, 64, &len);
    fx_str_id id;
    int rc = fx_profile_string(p, (const char *)s, len, &id);
    expect(sh, rc, true, "string");
    if (rc == FX_OK)
        interned(&sh->strings, id.i, "string");
}

static void op_func(struct fuzz_reader *r, struct fx_profile *p, struct shadow *sh)
{
    /* One read per statement: the order of initializers and arguments is unspecified. */
    struct fx_func_key k;
    k.name.i = pick(r, sh->strings);
    k.resource.i = pick(r, sh->strings);
    k.source.i = pick(r, sh->strings);
    k.line = (int32_t)fuzz_u32(r);
    k.is_java = fuzz_u8(r) & 1;
    bool valid = k.name.i < sh->strings &&
                 (k.resource.i < sh->strings || k.resource.i == FX_NONE_ID) &&
                 (k.source.i < sh->strings || k.source.i == FX_NONE_ID);
    fx_func_id id;
    int rc = fx_profile_func(p, &k, &id);
    expect(sh, rc, valid, "func");
    if (rc == FX_OK)
        interned(&sh->funcs, id.i, "func");
}

static void op_frame(struct fuzz_reader *r, struct fx_profile *p, struct shadow *sh)
{
    struct fx_frame_key k;
    k.func.i = pick(r, sh->funcs);
    k.line = (int32_t)fuzz_u32(r);
    k.category = fuzz_u8(r) % (FX_CAT_COUNT + 1);
    k.subcategory = fuzz_u8(r) % 8;
    k.inline_depth = fuzz_u8(r);
    const struct fx_category_info *cat = fx_profile_category(k.category);
    bool valid = k.func.i < sh->funcs && cat && k.subcategory < cat->n_subcategories;
    fx_frame_id id;
    int rc = fx_profile_frame(p, &k, &id);
    expect(sh, rc, valid, "frame");
    if (rc == FX_OK)
        interned(&sh->frames, id.i, "frame");
}

static void op_stack(struct fuzz_reader *r, struct fx_profile *p, struct shadow *sh)
{
    fx_stack_id prefix = {pick(r, sh->stacks)}, id;
    fx_frame_id frame = {pick(r, sh->frames)};
    bool valid = (prefix.i < sh->stacks || prefix.i == FX_NONE_ID) && frame.i < sh->frames;
    int rc = fx_profile_stack(p, prefix, frame, &id);
    expect(sh, rc, valid, "stack");
    if (rc == FX_OK) {
        interned(&sh->stacks, id.i, "stack");
        FUZZ_CHECK(prefix.i == FX_NONE_ID || prefix.i < id.i, "stack %u has prefix %u", id.i,
                   prefix.i);
    }
}

static void op_label_stack(struct fuzz_reader *r, struct fx_profile *p, struct shadow *sh)
{
    char label[40];
    fuzz_cstr(r, label, sizeof(label));
    uint8_t cat = fuzz_u8(r) % (FX_CAT_COUNT + 1);
    fx_stack_id id;
    int rc = fx_profile_label_stack(p, label, cat, &id);
    /* A failure may leave the string, func and frame it made on the way (get-or-create). */
    sh->strings = p->strings.count;
    sh->funcs = p->funcs.count;
    sh->frames = p->frames.count;
    expect(sh, rc, cat < FX_CAT_COUNT, "label stack");
    if (rc == FX_OK)
        interned(&sh->stacks, id.i, "label stack");
}

static void op_thread(struct fuzz_reader *r, struct fx_profile *p, struct shadow *sh)
{
    char name[40];
    fuzz_cstr(r, name, sizeof(name));
    int64_t tid = (int64_t)fuzz_u32(r);
    uint8_t what = fuzz_u8(r) % 4;
    uint32_t t = pick(r, sh->threads);
    int rc;
    if (what == 0 && sh->threads < MAX_THREADS) {
        fx_thread_id idx;
        rc = fx_profile_thread_add(p, name, tid, next_time(r, sh), &idx);
        expect(sh, rc, true, "thread add");
        if (rc == FX_OK)
            FUZZ_CHECK(idx.i == sh->threads++, "thread index %u", idx.i);
    } else if (what == 1) {
        rc = fx_profile_thread_set_name(p, (fx_thread_id){t}, name);
        expect(sh, rc, t < sh->threads, "thread name");
    } else if (what == 2) {
        fx_profile_thread_unregister(p, (fx_thread_id){t}, next_time(r, sh));
    } else {
        fx_profile_set_main_thread(p, (fx_thread_id){t});
    }
}

static void op_sample(struct fuzz_reader *r, struct fx_profile *p, struct shadow *sh)
{
    uint32_t t = pick(r, sh->threads);
    fx_stack_id st = {pick(r, sh->stacks)};
    int64_t cpu = (int64_t)fuzz_u64(r);
    uint32_t w = fuzz_u8(r) < 200 ? 1 : fuzz_u32(r);
    bool valid = t < sh->threads && (st.i < sh->stacks || st.i == FX_NONE_ID);
    int rc = fx_profile_sample(p, (fx_thread_id){t}, next_time(r, sh), st, cpu, w);
    expect(sh, rc, valid, "sample");
    if (rc == FX_OK)
        sh->samples[t]++;
}

/* Values for the all-formats schema; string ids are checked only if the schema has fields. */
static void marker_values(struct fuzz_reader *r, const struct shadow *sh, uint32_t schema,
                          union fx_marker_value *v, bool *valid)
{
    bool has_fields = schema < sh->schemas && sh->schema_at[schema]->n_fields > 0;
    for (unsigned f = 0; f < 7; f++) {
        enum fx_field_format fmt = all_fields[f].format;
        if (fmt == FX_FMT_STRING || fmt == FX_FMT_UNIQUE_STRING) {
            v[f].s.i = pick(r, sh->strings);
            *valid = *valid && (v[f].s.i < sh->strings || !has_fields);
        } else if (fmt == FX_FMT_INTEGER || fmt == FX_FMT_BYTES) {
            v[f].i = (int64_t)fuzz_u64(r);
        } else {
            uint64_t bits = fuzz_u64(r); /* any double: NaN, Inf, huge, subnormal */
            memcpy(&v[f].d, &bits, sizeof(bits));
        }
    }
}

static void op_marker(struct fuzz_reader *r, struct fx_profile *p, struct shadow *sh)
{
    uint32_t t = pick(r, sh->threads);
    fx_str_id name = {pick(r, sh->strings)};
    uint8_t phase = fuzz_u8(r) % 5, cat = fuzz_u8(r) % (FX_CAT_COUNT + 1);
    uint32_t schema = pick(r, sh->schemas);
    int64_t start = next_time(r, sh), end = next_time(r, sh);
    union fx_marker_value v[7];
    bool valid = t < sh->threads && name.i < sh->strings && phase <= FX_PHASE_END &&
                 cat < FX_CAT_COUNT && (schema < sh->schemas || schema == FX_NONE_ID);
    marker_values(r, sh, schema, v, &valid);
    int rc = fx_profile_marker(p, (fx_thread_id){t}, name, phase, cat, start, end,
                               (fx_schema_id){schema}, v);
    expect(sh, rc, valid, "marker");
    if (rc == FX_OK)
        sh->markers[t]++;
}

static void op_schema(struct fuzz_reader *r, struct fx_profile *p, struct shadow *sh)
{
    unsigned which = fuzz_u8(r) % N_SCHEMAS;
    fx_schema_id id;
    int rc = fx_profile_schema(p, &schemas[which], &id);
    expect(sh, rc, which != 2, "schema");
    if (rc == FX_OK) {
        interned(&sh->schemas, id.i, "schema");
        sh->schema_at[id.i] = &schemas[which];
    }
}

static void op_counter(struct fuzz_reader *r, struct fx_profile *p, struct shadow *sh)
{
    uint32_t c = pick(r, sh->counters);
    if (fuzz_u8(r) < 64 && sh->counters < MAX_COUNTERS) {
        char name[24], unit[8];
        struct fx_counter_desc d = {.category = "Memory"};
        d.name = fuzz_cstr(r, name, sizeof(name));
        d.unit = fuzz_cstr(r, unit, sizeof(unit));
        fx_counter_id id;
        int rc = fx_profile_counter(p, &d, &id);
        expect(sh, rc, true, "counter");
        if (rc == FX_OK)
            FUZZ_CHECK(id.i == sh->counters++, "counter index %u", id.i);
        return;
    }
    int64_t t = next_time(r, sh);
    int rc = fx_profile_counter_sample(p, (fx_counter_id){c}, t, (int64_t)fuzz_u64(r));
    expect(sh, rc, c < sh->counters, "counter sample");
}

static void op_meta(struct fuzz_reader *r, struct fx_profile *p, struct shadow *sh)
{
    char a[24], b[24];
    uint8_t what = fuzz_u8(r) % 4;
    int rc;
    if (what == 0) {
        unsigned k = fuzz_u8(r) % 7;
        rc = fx_profile_set_meta(p, meta_keys[k], fuzz_cstr(r, a, sizeof(a)));
        expect(sh, rc, k < 6, "meta");
    } else if (what == 1) {
        unsigned k = fuzz_u8(r) % 4;
        rc = fx_profile_set_meta_int(p, meta_int_keys[k], (int64_t)fuzz_u64(r));
        expect(sh, rc, k < 3, "meta int");
    } else if (what == 2) {
        char group[] = {'g', (char)('0' + fuzz_u8(r) % 4), 0};
        fuzz_cstr(r, a, sizeof(a));
        rc = fx_profile_extra_str(p, group, a, fuzz_cstr(r, b, sizeof(b)));
        expect(sh, rc, true, "extra str");
    } else {
        char group[] = {'g', (char)('0' + fuzz_u8(r) % 4), 0};
        fuzz_cstr(r, a, sizeof(a));
        rc = fx_profile_extra_int(p, group, a, (int64_t)fuzz_u64(r));
        expect(sh, rc, true, "extra int");
    }
}

static void op_clock(struct fuzz_reader *r, struct fx_profile *p, struct shadow *sh)
{
    uint8_t what = fuzz_u8(r) % 4;
    if (what == 0) {
        uint64_t bits = fuzz_u64(r);
        double epoch;
        memcpy(&epoch, &bits, sizeof(epoch));
        fx_profile_set_start(p, (int64_t)(fuzz_u64(r) & TIME_MASK), epoch);
    } else if (what == 1) {
        int64_t begin = next_time(r, sh);
        fx_profile_set_range(p, begin, fuzz_u8(r) & 1 ? next_time(r, sh) : 0);
    } else if (what == 2) {
        fx_profile_set_interval(p, (double)fuzz_u32(r) / 1000.0);
    } else {
        fx_profile_set_pid(p, (int64_t)fuzz_u64(r));
    }
}

typedef void (*op_fn)(struct fuzz_reader *, struct fx_profile *, struct shadow *);
static const op_fn ops[] = {op_string, op_string,  op_func,   op_frame,  op_stack,
                            op_stack,  op_sample,  op_sample, op_marker, op_schema,
                            op_thread, op_counter, op_meta,   op_clock,  op_label_stack};
#define N_OPS (sizeof(ops) / sizeof(ops[0]))

/* --- the written profile --- */

static cJSON *get(const cJSON *o, const char *key)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    FUZZ_CHECK(v, "no '%s'", key);
    return v;
}

/* Every object with a length: each array member is a column of that length. */
static void check_columns(const cJSON *node, const char *name)
{
    const cJSON *len =
            cJSON_IsObject(node) ? cJSON_GetObjectItemCaseSensitive(node, "length") : NULL;
    const cJSON *c;
    cJSON_ArrayForEach(c, node)
    {
        if (len && cJSON_IsArray(c))
            FUZZ_CHECK(cJSON_GetArraySize(c) == (int)len->valuedouble,
                       "%s.%s has %d rows, length %g", name, c->string, cJSON_GetArraySize(c),
                       len->valuedouble);
        check_columns(c, c->string ? c->string : name);
    }
}

/* Each value of column `key` is null (if allowed) or an integer in [lo, hi). */
static void check_refs(const cJSON *table, const char *key, double lo, double hi, bool null_ok)
{
    const cJSON *v;
    cJSON_ArrayForEach(v, get(table, key))
    {
        if (null_ok && cJSON_IsNull(v))
            continue;
        FUZZ_CHECK(cJSON_IsNumber(v) && v->valuedouble >= lo && v->valuedouble < hi &&
                           v->valuedouble == floor(v->valuedouble),
                   "%s holds %g, not in [%g, %g)", key, cJSON_IsNumber(v) ? v->valuedouble : NAN,
                   lo, hi);
    }
}

static int length_of(const cJSON *table)
{
    return (int)get(table, "length")->valuedouble;
}

static void check_shared(const cJSON *shared, const struct shadow *sh)
{
    int nstr = cJSON_GetArraySize(get(shared, "stringArray"));
    const cJSON *stacks = get(shared, "stackTable"), *frames = get(shared, "frameTable");
    const cJSON *funcs = get(shared, "funcTable"), *res = get(shared, "resourceTable");
    FUZZ_CHECK((uint32_t)nstr == sh->strings && (uint32_t)length_of(funcs) == sh->funcs &&
                       (uint32_t)length_of(frames) == sh->frames &&
                       (uint32_t)length_of(stacks) == sh->stacks,
               "table sizes differ from the calls that succeeded");
    check_refs(stacks, "frame", 0, length_of(frames), false);
    int i = 0;
    const cJSON *off;
    cJSON_ArrayForEach(off, get(stacks, "prefixOffset"))
    {
        FUZZ_CHECK(off->valuedouble >= 0 && off->valuedouble <= i, "prefixOffset %g at row %d",
                   off->valuedouble, i);
        i++;
    }
    check_refs(frames, "func", 0, length_of(funcs), false);
    check_refs(frames, "category", 0, FX_CAT_COUNT, false);
    check_refs(funcs, "name", 0, nstr, false);
    check_refs(funcs, "resource", -1, length_of(res), false);
    check_refs(funcs, "source", 0, length_of(get(shared, "sources")), true);
    check_refs(res, "name", 0, nstr, false);
}

static void check_samples(const cJSON *s, uint32_t want, int nstacks)
{
    FUZZ_CHECK((uint32_t)length_of(s) == want, "%d samples written, %u added", length_of(s), want);
    check_refs(s, "stack", 0, nstacks, true);
    int i = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, get(s, "timeDeltas"))
    {
        FUZZ_CHECK(cJSON_IsNumber(d) && (i++ == 0 || d->valuedouble >= 0), "timeDelta %d is %g", i,
                   d->valuedouble);
    }
}

/* False when an allocation of the write was made to fail: the writer may then keep markers in
 * insertion order (its documented fallback). */
static bool markers_sorted = true;

/* Chronological: by start, or by end for an IntervalEnd (phase 3). */
static void check_markers(const cJSON *m, uint32_t want, int nstr)
{
    FUZZ_CHECK((uint32_t)length_of(m) == want, "%d markers written, %u added", length_of(m), want);
    check_refs(m, "name", 0, nstr, false);
    check_refs(m, "phase", 0, 4, false);
    const cJSON *start = get(m, "startTime"), *end = get(m, "endTime"), *phase = get(m, "phase");
    double prev = -INFINITY;
    for (int k = 0; k < (int)want; k++) {
        bool is_end = cJSON_GetArrayItem(phase, k)->valuedouble == FX_PHASE_END;
        double t = cJSON_GetArrayItem(is_end ? end : start, k)->valuedouble;
        FUZZ_CHECK(t >= prev || !markers_sorted, "marker %d at %g before %g", k, t, prev);
        prev = t;
    }
    const cJSON *data;
    cJSON_ArrayForEach(data, get(m, "data"))
    {
        FUZZ_CHECK(cJSON_IsNull(data) || cJSON_IsString(get(data, "type")), "marker data");
    }
}

/* The file holds the threads the writer does not leave out (fx_profile_thread_left_out: e.g. an
 * empty thread on main's tid while main has samples), in model order. */
static void check_threads(const cJSON *threads, const struct fx_profile *p, const struct shadow *sh,
                          int nstr, int nstacks)
{
    uint32_t n = (uint32_t)cJSON_GetArraySize(threads), kept = 0;
    for (uint32_t i = 0; i < sh->threads; i++)
        kept += !fx_profile_thread_left_out(p, (fx_thread_id){i});
    FUZZ_CHECK(n == (kept ? kept : 1), "%u threads written, %u added, %u kept", n, sh->threads,
               kept);
    int mains = 0;
    for (uint32_t t = 0, i = 0; t < n; t++, i++) {
        while (i < sh->threads && fx_profile_thread_left_out(p, (fx_thread_id){i}))
            i++;
        const cJSON *th = cJSON_GetArrayItem(threads, (int)t);
        mains += cJSON_IsTrue(get(th, "isMainThread"));
        check_samples(get(th, "samples"), kept ? sh->samples[i] : 0, nstacks);
        check_markers(get(th, "markers"), kept ? sh->markers[i] : 0, nstr);
    }
    FUZZ_CHECK(mains == 1, "%d main threads", mains);
}

static void check_profile(const struct fx_membuf *mb, const struct fx_profile *p,
                          const struct shadow *sh)
{
    size_t bad;
    FUZZ_CHECK(fuzz_utf8_valid((const uint8_t *)mb->data, mb->len, &bad),
               "profile is not UTF-8 at byte %zu", bad);
    cJSON *doc = cJSON_ParseWithLengthOpts(mb->data, mb->len + 1, NULL, true);
    FUZZ_CHECK(doc, "cJSON rejects the profile (%zu bytes)", mb->len);
    check_columns(doc, "profile");
    const cJSON *shared = get(doc, "shared");
    check_shared(shared, sh);
    int nstr = cJSON_GetArraySize(get(shared, "stringArray"));
    check_threads(get(doc, "threads"), p, sh, nstr, length_of(get(shared, "stackTable")));
    FUZZ_CHECK((uint32_t)cJSON_GetArraySize(get(doc, "counters")) == sh->counters, "counters");
    FUZZ_CHECK(cJSON_GetArraySize(get(get(doc, "meta"), "markerSchema")) == (int)sh->schemas,
               "schemas");
    cJSON_Delete(doc);
}

/* The last byte of the input, when it asks for it, fails one allocation of the write. */
static void write_and_check(struct fx_profile *p, const struct shadow *sh, uint8_t fail)
{
    struct fx_membuf mb = {0};
    struct fx_errbuf eb = {{0}};
    if (fail >= 0xF8)
        fx_alloc_fail_after(1 + (fail & 7) * 3);
    int rc = fx_ff_write(p, fx_membuf_sink(&mb), &eb);
    fx_alloc_fail_after(0);
    markers_sorted = fail < 0xF8;
    if (fail >= 0xF8 && rc == FX_ENOMEM)
        FUZZ_CHECK(eb.msg[0] != '\0' && !strchr(eb.msg, '\n'), "ENOMEM without a message");
    else
        FUZZ_CHECK(rc == FX_OK, "fx_ff_write: rc %d: %s", rc, eb.msg);
    if (rc == FX_OK)
        check_profile(&mb, p, sh);
    fx_membuf_destroy(&mb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_reader r = {data, size};
    struct fx_profile *p = fx_profile_new();
    FUZZ_CHECK(p, "no profile");
    struct shadow sh = {.clock = 1000000000};
    for (unsigned n = 0; r.n > 0 && n < MAX_OPS; n++) {
        uint8_t op = fuzz_u8(&r);
        sh.inject = op >= 0xF0; /* 1 in 16 ops: one of its first 4 allocations fails */
        if (sh.inject)
            fx_alloc_fail_after(1 + (op & 3));
        ops[op % N_OPS](&r, p, &sh);
        fx_alloc_fail_after(0);
        sh.inject = false;
        (void)fx_profile_memory(p);
    }
    FUZZ_CHECK(fx_profile_thread_count(p) == sh.threads, "thread count");
    write_and_check(p, &sh, size ? data[size - 1] : 0);
    fx_profile_free(p);
    return 0;
}
