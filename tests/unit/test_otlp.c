/* SPDX-License-Identifier: Apache-2.0 */
/* core/writer/otlp.c: dictionary entries numbered from 1 (0 is the zero value) and stored once,
 * misuse refused (a second open profile, a sample or a finish outside/inside one), every
 * allocation failure an error with nothing written. The wire format against the published
 * schema is it.fxprof_convert_otlp's (protoc --decode). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_otlp.h"

static int mem_write(void *ctx, const void *d, size_t n)
{
    struct fx_membuf *b = ctx;
    return fx_membuf_sink(b).write(b, d, n);
}

/* A small request; returns the first error. */
static int build(struct fx_otlp *o, struct fx_membuf *out)
{
    int32_t f1 = 0, f2 = 0, l1 = 0, l2 = 0, st = 0, st2 = 0, a[2] = {0, 0};
    int rc = fx_otlp_resource_str(o, "service.name", "app");
    if (rc == FX_OK)
        rc = fx_otlp_function(o, "App.main", "App.java", 10, &f1);
    if (rc == FX_OK)
        rc = fx_otlp_function(o, "App.hot", NULL, 0, &f2);
    if (rc == FX_OK)
        rc = fx_otlp_location(o, f1, 12, &l1);
    if (rc == FX_OK)
        rc = fx_otlp_location(o, f2, 0, &l2);
    int32_t locs[] = {l2, l1};
    if (rc == FX_OK)
        rc = fx_otlp_stack(o, locs, 2, &st);
    if (rc == FX_OK)
        rc = fx_otlp_stack(o, locs, 2, &st2);
    if (rc == FX_OK)
        rc = fx_otlp_attr_str(o, "thread.name", "main", &a[0]);
    if (rc == FX_OK)
        rc = fx_otlp_attr_int(o, "thread.id", 7, &a[1]);
    struct fx_otlp_profile p = {.type = "cpu", .unit = "nanoseconds", .time_unix_nano = 1};
    int64_t v[] = {10, 20};
    uint64_t t[] = {5, 6};
    if (rc == FX_OK)
        rc = fx_otlp_profile_begin(o, &p);
    if (rc == FX_OK)
        rc = fx_otlp_sample(o, st, a, 2, v, t, 2);
    if (rc == FX_OK)
        rc = fx_otlp_profile_end(o, NULL, 0);
    if (rc == FX_OK)
        rc = fx_otlp_finish(o, "fxagent", NULL, (struct fx_sink){.write = mem_write, .ctx = out});
    if (rc == FX_OK) {
        ck_assert_int_eq(f1, 1); /* 0 is the zero value */
        ck_assert_int_eq(f2, 2);
        ck_assert_int_eq(st, st2); /* equal entries are one */
        ck_assert_int_ne(a[0], a[1]);
    }
    return rc;
}

START_TEST(test_otlp_entries_numbered_and_shared)
{
    struct fx_otlp *o = fx_otlp_new();
    struct fx_membuf out = {0};
    ck_assert_ptr_nonnull(o);
    ck_assert_int_eq(build(o, &out), FX_OK);
    ck_assert_uint_gt(out.len, 0);
    ck_assert_ptr_nonnull(memmem(out.data, out.len, "service.name", 12));
    ck_assert_ptr_nonnull(memmem(out.data, out.len, "App.hot", 7));
    fx_otlp_free(o);
    fx_membuf_destroy(&out);
}
END_TEST

/* Issue 33: links numbered from 1 (0 is the zero link), an equal link stored once, a sample's
 * link_index (field 3) written only when it has one. */
START_TEST(test_otlp_links_numbered_and_shared)
{
    struct fx_otlp *o = fx_otlp_new();
    struct fx_membuf out = {0};
    static const uint8_t t1[16] = {1}, t2[16] = {2}, s1[8] = {9};
    int32_t a = 0, b = 0, c = 0;
    ck_assert_int_eq(fx_otlp_link(o, t1, s1, &a), FX_OK);
    ck_assert_int_eq(fx_otlp_link(o, t2, s1, &b), FX_OK);
    ck_assert_int_eq(fx_otlp_link(o, t1, s1, &c), FX_OK);
    ck_assert_int_eq(a, 1);
    ck_assert_int_eq(b, 2);
    ck_assert_int_eq(c, a);
    struct fx_otlp_profile p = {.type = "cpu", .unit = "nanoseconds"};
    int64_t v = 1;
    ck_assert_int_eq(fx_otlp_profile_begin(o, &p), FX_OK);
    ck_assert_int_eq(fx_otlp_sample_linked(o, 1, NULL, 0, b, &v, NULL, 1), FX_OK);
    ck_assert_int_eq(fx_otlp_profile_end(o, NULL, 0), FX_OK);
    ck_assert_int_eq(
            fx_otlp_finish(o, "x", NULL, (struct fx_sink){.write = mem_write, .ctx = &out}), FX_OK);
    /* Sample{stack_index 1, link_index 2, values [1]} */
    static const uint8_t sample[] = {0x12, 7, 0x08, 1, 0x18, 2, 0x22, 1, 1};
    ck_assert_ptr_nonnull(memmem(out.data, out.len, sample, sizeof sample));
    fx_otlp_free(o);
    fx_membuf_destroy(&out);
}
END_TEST

START_TEST(test_otlp_misuse_refused)
{
    struct fx_otlp *o = fx_otlp_new();
    struct fx_membuf out = {0};
    struct fx_otlp_profile p = {.type = "cpu", .unit = "nanoseconds"};
    ck_assert_int_eq(fx_otlp_sample(o, 0, NULL, 0, NULL, NULL, 0), FX_EINVAL);
    fx_otlp_free(o);
    o = fx_otlp_new();
    ck_assert_int_eq(fx_otlp_profile_begin(o, &p), FX_OK);
    ck_assert_int_eq(fx_otlp_profile_begin(o, &p), FX_EINVAL);
    /* sticky: finish writes nothing */
    ck_assert_int_eq(
            fx_otlp_finish(o, "x", NULL, (struct fx_sink){.write = mem_write, .ctx = &out}),
            FX_EINVAL);
    ck_assert_uint_eq(out.len, 0);
    fx_otlp_free(o);
    fx_otlp_free(NULL);
}
END_TEST

START_TEST(test_otlp_every_allocation_failure)
{
    long n;
    for (n = 1;; n++) {
        struct fx_membuf out = {0};
        fx_alloc_fail_after(n);
        struct fx_otlp *o = fx_otlp_new();
        int rc = o ? build(o, &out) : FX_ENOMEM;
        fx_alloc_fail_after(0);
        fx_otlp_free(o);
        fx_membuf_destroy(&out);
        if (rc == FX_OK)
            break;
        ck_assert_int_eq(rc, FX_ENOMEM);
        ck_assert_uint_eq(out.len, 0); /* a failure writes nothing */
        ck_assert_int_lt(n, 1000);
    }
    ck_assert_int_gt(n, 10); /* the failures above were real: many allocations were tried */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("otlp");
    TCase *tc = tcase_create("writer");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_otlp_entries_numbered_and_shared);
    tcase_add_test(tc, test_otlp_links_numbered_and_shared);
    tcase_add_test(tc, test_otlp_misuse_refused);
    tcase_add_test(tc, test_otlp_every_allocation_failure);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
