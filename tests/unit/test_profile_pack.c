/* SPDX-License-Identifier: Apache-2.0 */
/* Packed markers (core/model/marker_pack.c): a profile whose markers are packed writes the same
 * bytes as the same profile with markers in columns (every phase, every field format, stacks or
 * none, times going back, a thread of 20,000 markers, a pending last marker); it holds them in
 * far fewer bytes; the window's operations refuse it; misuse is refused. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_ff_writer.h"
#include "fx_profile.h"
#include "fx_sink.h"

#define T0 5000000000LL
#define N  20000

static const struct fx_marker_field all_f[] = {
        {"s", "S", FX_FMT_STRING},     {"u", "U", FX_FMT_UNIQUE_STRING}, {"i", "I", FX_FMT_INTEGER},
        {"b", "B", FX_FMT_BYTES},      {"d", "D", FX_FMT_DURATION},      {"x", "X", FX_FMT_DECIMAL},
        {"p", "P", FX_FMT_PERCENTAGE}, {"n", "N", FX_FMT_INTEGER}};
static const struct fx_marker_schema all_s = {
        .name = "FxTestAll", .display = FX_DISPLAY_CHART, .fields = all_f, .n_fields = 8};
static const struct fx_marker_field one_f[] = {{"m", "M", FX_FMT_UNIQUE_STRING}};
static const struct fx_marker_schema one_s = {
        .name = "FxTestOne", .display = FX_DISPLAY_TABLE, .fields = one_f, .n_fields = 1};

/* The same markers into p (packed or not): deterministic, times back and forth. */
static void build(struct fx_profile *p)
{
    fx_thread_id th[3];
    fx_str_id names[4], text;
    fx_schema_id sa, so;
    fx_stack_id st[3];
    fx_profile_set_start(p, T0, 0);
    for (int i = 0; i < 3; i++) {
        char n[16];
        snprintf(n, sizeof n, "t%d", i);
        ck_assert_int_eq(fx_profile_thread_add(p, n, 100 + i, T0, &th[i]), FX_OK);
    }
    const char *nm[] = {"jdk.MethodTrace", "jdk.ThreadPark", "GC", "Mark"};
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(fx_profile_cstring(p, nm[i], &names[i]), FX_OK);
    ck_assert_int_eq(fx_profile_cstring(p, "a \"quoted\" text", &text), FX_OK);
    ck_assert_int_eq(fx_profile_schema(p, &all_s, &sa), FX_OK);
    ck_assert_int_eq(fx_profile_schema(p, &one_s, &so), FX_OK);
    fx_stack_id prev = FX_STACK_NONE;
    for (int d = 0; d < 3; d++) {
        fx_func_id f;
        fx_frame_id fr;
        struct fx_func_key fk = {
                .name = names[d], .resource = FX_STR_NONE, .source = FX_STR_NONE, .line = -1};
        ck_assert_int_eq(fx_profile_func(p, &fk, &f), FX_OK);
        ck_assert_int_eq(fx_profile_frame(p, &(struct fx_frame_key){.func = f, .line = d}, &fr),
                         FX_OK);
        ck_assert_int_eq(fx_profile_stack(p, prev, fr, &st[d]), FX_OK);
        prev = st[d];
    }
    for (int i = 0; i < N; i++) {
        /* nested calls commit inner first: starts go back as well as forth */
        int64_t start = T0 + 1000000LL * (i / 4) - 37LL * (i % 4) * (i % 7);
        int64_t end = start + 1000LL * (i % 13) + (i % 3 ? 0 : 123456789012LL);
        uint32_t t = (uint32_t)(i % 3 ? 0 : i % 5 ? 1 : 2);
        union fx_marker_value v[8] = {{.s = text},
                                      {.s = names[i % 4]},
                                      {.i = -i},
                                      {.i = 1LL << (i % 60)},
                                      {.d = i * 0.001},
                                      {.d = -1.5 * i},
                                      {.d = (i % 100) / 100.0},
                                      {.i = INT64_MIN + i}};
        uint8_t phase = (uint8_t)(i % 4);
        fx_schema_id s = i % 5 == 0 ? FX_SCHEMA_NONE : i % 5 == 1 ? sa : so;
        ck_assert_int_eq(fx_profile_marker(p, th[t], names[i % 4], phase, (uint8_t)(i % 3), start,
                                           end, s, s.i == so.i ? &v[1] : v),
                         FX_OK);
        if (s.i != FX_SCHEMA_NONE.i && i % 3)
            ck_assert_int_eq(fx_profile_marker_stack(p, th[t], st[i % 3]), FX_OK);
    }
}

static char *write_all(const struct fx_profile *p, size_t *len)
{
    struct fx_membuf mb = {0};
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_ff_write(p, fx_membuf_sink(&mb), &eb), FX_OK);
    *len = mb.len;
    return mb.data;
}

START_TEST(packed_writes_the_same)
{
    struct fx_profile *a = fx_profile_new(), *b = fx_profile_new();
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(fx_profile_pack_markers(b), FX_OK);
    build(a);
    build(b);
    size_t la, lb;
    char *ja = write_all(a, &la), *jb = write_all(b, &lb);
    ck_assert_uint_eq(la, lb);
    ck_assert_int_eq(memcmp(ja, jb, la), 0);
    /* a cause's time only where it is not the marker's start: an END marker's */
    ck_assert_ptr_nonnull(strstr(ja, "\"cause\":{\"time\":"));
    ck_assert_ptr_nonnull(strstr(ja, "\"cause\":{\"stack\":"));
    /* N markers: packed, well under half of the columns' bytes */
    size_t ma = fx_profile_memory(a), mbytes = fx_profile_memory(b);
    ck_assert_msg(mbytes * 2 < ma, "packed %zu bytes, columns %zu", mbytes, ma);
    fx_free(ja);
    fx_free(jb);
    fx_profile_free(a);
    fx_profile_free(b);
}
END_TEST

START_TEST(packed_refuses_the_window_and_misuse)
{
    struct fx_profile *p = fx_profile_new();
    fx_thread_id t;
    fx_str_id n;
    ck_assert_int_eq(fx_profile_thread_add(p, "t", 1, T0, &t), FX_OK);
    ck_assert_int_eq(fx_profile_cstring(p, "m", &n), FX_OK);
    ck_assert_int_eq(fx_profile_marker(p, t, n, FX_PHASE_INSTANT, 0, T0, 0, FX_SCHEMA_NONE, NULL),
                     FX_OK);
    ck_assert_int_eq(fx_profile_pack_markers(p), FX_EINVAL); /* it holds a marker */
    fx_profile_free(p);
    p = fx_profile_new();
    ck_assert_int_eq(fx_profile_pack_markers(p), FX_OK);
    ck_assert_int_eq(fx_profile_thread_add(p, "t", 1, T0, &t), FX_OK);
    ck_assert_int_eq(fx_profile_cstring(p, "m", &n), FX_OK);
    fx_stack_id none = {0};
    ck_assert_int_eq(fx_profile_marker_stack(p, t, none), FX_EINVAL); /* no stack, no marker */
    ck_assert_int_eq(fx_profile_marker(p, t, n, FX_PHASE_INSTANT, 0, T0, 0, FX_SCHEMA_NONE, NULL),
                     FX_OK);
    ck_assert_int_eq(fx_profile_marker(p, t, (fx_str_id){999}, 0, 0, T0, 0, FX_SCHEMA_NONE, NULL),
                     FX_EINVAL);
    ck_assert_uint_eq(fx_profile_drop_before(p, T0 + 1), 0);
    ck_assert_ptr_null(fx_profile_snapshot(p));
    ck_assert_int_eq(fx_profile_compact(p), FX_EINVAL);
    size_t len;
    char *j = write_all(p, &len);
    ck_assert_ptr_nonnull(strstr(j, "\"markers\":{\"data\":[null],\"name\":[0],"));
    fx_free(j);
    fx_profile_free(p);
    ck_assert_int_eq(fx_profile_pack_markers(NULL), FX_EINVAL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("profile_pack");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, packed_writes_the_same);
    tcase_add_test(tc, packed_refuses_the_window_and_misuse);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
