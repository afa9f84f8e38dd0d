/* SPDX-License-Identifier: Apache-2.0 */
/* The JVM markers and counters as written: each helper's marker read back from the writer's
 * JSON (name, phase, category, data fields, string indexes), schemas listed once, the counters'
 * names and deltas, and a failed allocation that adds nothing. */
#include "fx_jvm_markers.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_ff_writer.h"
#include "fx_pfile.h"
#include "fx_profile.h"
#include "fx_sink.h"

#define T0    1000000000LL
#define MS(x) ((int64_t)(x)*1000000LL)

struct fixture {
    struct fx_profile *p;
    fx_thread_id thread;
    cJSON *root;
};

static void setup(struct fixture *f)
{
    f->p = fx_profile_new();
    ck_assert_ptr_nonnull(f->p);
    fx_profile_set_start(f->p, T0, 1.7e12);
    ck_assert_int_eq(fx_profile_thread_add(f->p, "main", 42, T0, &f->thread), FX_OK);
    f->root = NULL;
}

static void teardown(struct fixture *f)
{
    cJSON_Delete(f->root);
    fx_profile_free(f->p);
}

/* Writes the model and parses it into f->root. */
static void write_and_parse(struct fixture *f)
{
    struct fx_membuf mb = {0};
    struct fx_errbuf eb = {{0}};
    ck_assert_msg(fx_ff_write(f->p, fx_membuf_sink(&mb), &eb) == FX_OK, "write: %s", eb.msg);
    cJSON_Delete(f->root);
    f->root = cJSON_ParseWithLength(mb.data, mb.len);
    fx_membuf_destroy(&mb);
    ck_assert_ptr_nonnull(f->root);
}

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    ck_assert_msg(v != NULL, "missing key '%s'", k);
    return v;
}

static const cJSON *markers(const struct fixture *f)
{
    return get(cJSON_GetArrayItem(get(f->root, "threads"), 0), "markers");
}

static int marker_count(const struct fixture *f)
{
    return (int)cJSON_GetNumberValue(get(markers(f), "length"));
}

static double col(const struct fixture *f, const char *c, int i)
{
    return cJSON_GetNumberValue(cJSON_GetArrayItem(get(markers(f), c), i));
}

static const cJSON *data(const struct fixture *f, int i)
{
    return cJSON_GetArrayItem(get(markers(f), "data"), i);
}

static const char *string_at(const struct fixture *f, int index)
{
    const cJSON *arr = get(get(f->root, "shared"), "stringArray");
    const cJSON *s = cJSON_GetArrayItem(arr, index);
    ck_assert_msg(cJSON_IsString(s), "string index %d not in stringArray", index);
    return s->valuestring;
}

static const char *marker_name(const struct fixture *f, int i)
{
    return string_at(f, (int)col(f, "name", i));
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    ck_assert_msg(cJSON_IsNumber(v), "'%s' is not a number", k);
    return v->valuedouble;
}

static const char *text(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    ck_assert_msg(cJSON_IsString(v), "'%s' is not a string", k);
    return v->valuestring;
}

/* How many meta.markerSchema entries are named `name`. */
static int schema_count(const struct fixture *f, const char *name)
{
    int n = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, get(get(f->root, "meta"), "markerSchema"))
    {
        n += strcmp(text(s, "name"), name) == 0;
    }
    return n;
}

START_TEST(test_jvm_markers_gc_pause_is_an_interval_with_its_fields)
{
    struct fixture f;
    setup(&f);
    struct fx_jvm_gc gc = {.seq = 3, .collector = "G1 Young Generation", 52428800, 8388608};
    ck_assert_int_eq(fx_jvm_markers_gc(f.p, f.thread, T0 + MS(10), T0 + MS(12), &gc), FX_OK);
    write_and_parse(&f);
    ck_assert_int_eq(marker_count(&f), 1);
    ck_assert_str_eq(marker_name(&f, 0), "GC pause");
    ck_assert_int_eq((int)col(&f, "phase", 0), FX_PHASE_INTERVAL);
    ck_assert_int_eq((int)col(&f, "category", 0), FX_CAT_GC);
    ck_assert(fabs(col(&f, "startTime", 0) - 10.0) < 1e-6);
    ck_assert(fabs(col(&f, "endTime", 0) - 12.0) < 1e-6);
    ck_assert_str_eq(text(data(&f, 0), "type"), "JvmGcPause");
    ck_assert_int_eq((int)num(data(&f, 0), "seq"), 3);
    ck_assert_str_eq(text(data(&f, 0), "collector"), "G1 Young Generation");
    ck_assert_int_eq((long)num(data(&f, 0), "heapBefore"), 52428800);
    ck_assert_int_eq((long)num(data(&f, 0), "heapAfter"), 8388608);
    teardown(&f);
}
END_TEST

START_TEST(test_jvm_markers_gc_unknown_collector_and_heap_are_written_unknown_and_zero)
{
    struct fixture f;
    setup(&f);
    struct fx_jvm_gc gc = {.seq = 1, .collector = NULL, .heap_before = -1, .heap_after = -1};
    ck_assert_int_eq(fx_jvm_markers_gc(f.p, f.thread, T0, T0 + MS(1), &gc), FX_OK);
    write_and_parse(&f);
    ck_assert_str_eq(text(data(&f, 0), "collector"), "unknown");
    ck_assert_int_eq((long)num(data(&f, 0), "heapBefore"), 0);
    ck_assert_int_eq((long)num(data(&f, 0), "heapAfter"), 0);
    teardown(&f);
}
END_TEST

START_TEST(test_jvm_markers_jit_method_is_a_string_index)
{
    struct fixture f;
    setup(&f);
    const char *m = "fxagent.App.hot(J)J";
    struct fx_jvm_jit j = {m, strlen(m), 1840, 3};
    ck_assert_int_eq(fx_jvm_markers_jit(f.p, f.thread, T0 + MS(5), &j), FX_OK);
    write_and_parse(&f);
    ck_assert_str_eq(marker_name(&f, 0), "JIT compiled");
    ck_assert_int_eq((int)col(&f, "phase", 0), FX_PHASE_INSTANT);
    ck_assert_int_eq((int)col(&f, "category", 0), FX_CAT_JIT);
    ck_assert_str_eq(text(data(&f, 0), "type"), "JvmJitCompile");
    ck_assert_str_eq(string_at(&f, (int)num(data(&f, 0), "method")), m);
    ck_assert_int_eq((long)num(data(&f, 0), "codeSize"), 1840);
    ck_assert_int_eq((long)num(data(&f, 0), "inlined"), 3);
    teardown(&f);
}
END_TEST

START_TEST(test_jvm_markers_schema_is_listed_once_for_many_markers)
{
    struct fixture f;
    setup(&f);
    for (int i = 0; i < 1000; i++) {
        char m[32];
        int n = snprintf(m, sizeof(m), "App.m%d()V", i);
        struct fx_jvm_jit j = {m, (size_t)n, i, 0};
        ck_assert_int_eq(fx_jvm_markers_jit(f.p, f.thread, T0 + i, &j), FX_OK);
    }
    write_and_parse(&f);
    ck_assert_int_eq(marker_count(&f), 1000);
    ck_assert_int_eq(schema_count(&f, "JvmJitCompile"), 1);
    ck_assert_int_eq(schema_count(&f, "JvmGcPause"), 0);
    ck_assert_str_eq(string_at(&f, (int)num(data(&f, 999), "method")), "App.m999()V");
    teardown(&f);
}
END_TEST

START_TEST(test_jvm_markers_user_phases_keep_name_and_text)
{
    struct fixture f;
    setup(&f);
    ck_assert_int_eq(fx_jvm_markers_user(f.p, f.thread, FX_PHASE_INSTANT, T0 + MS(1), 0,
                                         "checkpoint", 10, NULL, 0),
                     FX_OK);
    ck_assert_int_eq(fx_jvm_markers_user(f.p, f.thread, FX_PHASE_INTERVAL, T0 + MS(2), T0 + MS(4),
                                         "phase-A", 7, "warm", 4),
                     FX_OK);
    ck_assert_int_eq(
            fx_jvm_markers_user(f.p, f.thread, FX_PHASE_START, T0 + MS(5), 0, "open", 4, "x", 1),
            FX_OK);
    write_and_parse(&f);
    ck_assert_int_eq(marker_count(&f), 3);
    ck_assert_str_eq(marker_name(&f, 0), "checkpoint");
    ck_assert_str_eq(text(data(&f, 0), "text"), "");
    ck_assert_str_eq(marker_name(&f, 1), "phase-A");
    ck_assert_int_eq((int)col(&f, "phase", 1), FX_PHASE_INTERVAL);
    ck_assert(fabs(col(&f, "endTime", 1) - 4.0) < 1e-6);
    ck_assert_str_eq(text(data(&f, 1), "text"), "warm");
    ck_assert_int_eq((int)col(&f, "phase", 2), FX_PHASE_START);
    ck_assert_str_eq(text(data(&f, 2), "type"), "JvmUserMarker");
    teardown(&f);
}
END_TEST

/* Issue 33: a trace span as the writer writes it is what the converter reads back
 * (core/convert/pfile_spans.c): ids, labels (none as ""), the interval. */
START_TEST(test_jvm_markers_span_round_trips_to_the_converter)
{
    struct fixture f;
    setup(&f);
    struct fx_jvm_span s = {.trace_id = "0af7651916cd43dd8448eb211c80319c",
                            .span_id = "b7ad6b7169203331",
                            .label = {"tenant=beta", "route=/checkout"}};
    ck_assert_int_eq(fx_jvm_markers_span(f.p, f.thread, T0 + MS(2), T0 + MS(7), &s), FX_OK);
    write_and_parse(&f);
    ck_assert_int_eq(marker_count(&f), 1);
    ck_assert_str_eq(marker_name(&f, 0), FX_JVM_SPAN_NAME);
    ck_assert_int_eq(schema_count(&f, FX_JVM_SPAN_SCHEMA), 1);
    ck_assert_str_eq(text(data(&f, 0), "label3"), "");
    struct fx_pfile_spans sp;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_pfile_spans(cJSON_GetArrayItem(get(f.root, "threads"), 0), &sp, &eb),
                     FX_OK);
    ck_assert_uint_eq(sp.n, 1);
    ck_assert_str_eq(sp.s[0].trace_id, s.trace_id);
    ck_assert_str_eq(sp.s[0].span_id, s.span_id);
    ck_assert_str_eq(sp.s[0].label[1], "route=/checkout");
    ck_assert_ptr_null(sp.s[0].label[2]);
    ck_assert_int_eq(fx_pfile_span_at(&sp, 2.0), 0);
    ck_assert_int_eq(fx_pfile_span_at(&sp, 6.99), 0);
    ck_assert_int_eq(fx_pfile_span_at(&sp, 7.0), -1); /* [start, end) */
    fx_pfile_spans_destroy(&sp);
    teardown(&f);
}
END_TEST

START_TEST(test_jvm_markers_dump_and_start_markers_have_their_fields)
{
    struct fixture f;
    setup(&f);
    struct fx_jvm_start s = {"timer_create", "cpu", 10.0};
    struct fx_jvm_dump d = {"/tmp/p.json.gz", 1234, 56789};
    ck_assert_int_eq(fx_jvm_markers_start(f.p, f.thread, T0 + MS(1), &s), FX_OK);
    ck_assert_int_eq(fx_jvm_markers_dump(f.p, f.thread, T0 + MS(100), T0 + MS(130), &d), FX_OK);
    write_and_parse(&f);
    ck_assert_str_eq(marker_name(&f, 0), "sampling started");
    ck_assert_str_eq(text(data(&f, 0), "mode"), "cpu");
    ck_assert(fabs(num(data(&f, 0), "interval") - 10.0) < 1e-9);
    ck_assert_str_eq(marker_name(&f, 1), "fxagent dump");
    ck_assert_str_eq(text(data(&f, 1), "type"), "FxDump");
    ck_assert_str_eq(text(data(&f, 1), "file"), "/tmp/p.json.gz");
    ck_assert_int_eq((long)num(data(&f, 1), "samples"), 1234);
    ck_assert_int_eq((long)num(data(&f, 1), "bytes"), 56789);
    ck_assert(fabs(num(data(&f, 1), "duration") - 30.0) < 1e-6);
    teardown(&f);
}
END_TEST

START_TEST(test_jvm_markers_counters_have_names_and_accumulate_to_values)
{
    struct fixture f;
    setup(&f);
    fx_counter_id ids[FX_JVM_COUNTER_COUNT];
    ck_assert_int_eq(fx_jvm_markers_counters(f.p, ids), FX_OK);
    ck_assert_int_eq(fx_profile_counter_sample(f.p, ids[FX_JVM_HEAP_USED], T0 + MS(100), 1000),
                     FX_OK);
    ck_assert_int_eq(fx_profile_counter_sample(f.p, ids[FX_JVM_HEAP_USED], T0 + MS(200), 400),
                     FX_OK);
    write_and_parse(&f);
    const cJSON *cs = get(f.root, "counters");
    ck_assert_int_eq(cJSON_GetArraySize(cs), FX_JVM_COUNTER_COUNT);
    for (int c = 0; c < FX_JVM_COUNTER_COUNT; c++)
        ck_assert_str_eq(text(cJSON_GetArrayItem(cs, (int)ids[c].i), "name"),
                         fx_jvm_markers_counter_name((enum fx_jvm_counter)c));
    const cJSON *heap = cJSON_GetArrayItem(cs, (int)ids[FX_JVM_HEAP_USED].i);
    ck_assert_str_eq(text(heap, "name"), "Java heap used");
    const cJSON *count = get(get(heap, "samples"), "count");
    ck_assert_int_eq((int)cJSON_GetNumberValue(cJSON_GetArrayItem(count, 0)), 1000);
    ck_assert_int_eq((int)cJSON_GetNumberValue(cJSON_GetArrayItem(count, 1)), -600);
    ck_assert_ptr_null(fx_jvm_markers_counter_name(FX_JVM_COUNTER_COUNT));
    teardown(&f);
}
END_TEST

START_TEST(test_jvm_markers_failed_allocation_adds_no_marker)
{
    struct fixture f;
    setup(&f);
    const char *m = "a.method.never.seen.before()V";
    struct fx_jvm_jit j = {m, strlen(m), 1, 0};
    int failures = 0;
    for (long n = 1; n < 20; n++) {
        fx_alloc_fail_after(n);
        int rc = fx_jvm_markers_jit(f.p, f.thread, T0, &j);
        fx_alloc_fail_after(0);
        if (rc == FX_OK)
            break;
        ck_assert_int_eq(rc, FX_ENOMEM);
        failures++;
    }
    ck_assert_int_gt(failures, 0);
    write_and_parse(&f);
    ck_assert_int_eq(marker_count(&f), 1); /* only the call that succeeded */
    teardown(&f);
}
END_TEST

static Suite *jvm_markers_suite(void)
{
    Suite *s = suite_create("jvm_markers");
    TCase *markers_tc = tcase_create("markers");
    tcase_add_test(markers_tc, test_jvm_markers_gc_pause_is_an_interval_with_its_fields);
    tcase_add_test(markers_tc,
                   test_jvm_markers_gc_unknown_collector_and_heap_are_written_unknown_and_zero);
    tcase_add_test(markers_tc, test_jvm_markers_jit_method_is_a_string_index);
    tcase_add_test(markers_tc, test_jvm_markers_schema_is_listed_once_for_many_markers);
    tcase_add_test(markers_tc, test_jvm_markers_user_phases_keep_name_and_text);
    tcase_add_test(markers_tc, test_jvm_markers_dump_and_start_markers_have_their_fields);
    tcase_add_test(markers_tc, test_jvm_markers_span_round_trips_to_the_converter);
    tcase_add_test(markers_tc, test_jvm_markers_failed_allocation_adds_no_marker);
    suite_add_tcase(s, markers_tc);
    TCase *counters_tc = tcase_create("counters");
    tcase_add_test(counters_tc, test_jvm_markers_counters_have_names_and_accumulate_to_values);
    suite_add_tcase(s, counters_tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(jvm_markers_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
