/* SPDX-License-Identifier: Apache-2.0 */
/* include/fx_clock.h: a clock in nanoseconds, -1 for a clock that cannot be read. */
#include <check.h>
#include <stdlib.h>
#include <time.h>

#include "fx_clock.h"

START_TEST(test_clock_monotonic_never_goes_back)
{
    int64_t prev = fx_clock_ns(CLOCK_MONOTONIC);
    ck_assert_int_ge(prev, 0);
    for (int i = 0; i < 100000; i++) {
        int64_t now = fx_clock_ns(CLOCK_MONOTONIC);
        ck_assert_int_ge(now, prev);
        prev = now;
    }
}
END_TEST

/* The same instant as clock_gettime gives it, in one number: seconds * 1e9 + nanoseconds. */
START_TEST(test_clock_matches_clock_gettime)
{
    struct timespec before, after;
    clock_gettime(CLOCK_REALTIME, &before);
    int64_t ns = fx_clock_ns(CLOCK_REALTIME);
    clock_gettime(CLOCK_REALTIME, &after);
    ck_assert_int_ge(ns, (int64_t)before.tv_sec * 1000000000 + before.tv_nsec);
    ck_assert_int_le(ns, (int64_t)after.tv_sec * 1000000000 + after.tv_nsec);
    ck_assert_int_gt(ns, (int64_t)1000000000 * 1000000000); /* past 2001: not seconds or ms */
}
END_TEST

START_TEST(test_clock_unreadable_is_minus_one)
{
    ck_assert_int_eq(fx_clock_ns((clockid_t)-1), -1);
    ck_assert_int_ge(fx_clock_ns(CLOCK_THREAD_CPUTIME_ID), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("clock");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_clock_monotonic_never_goes_back);
    tcase_add_test(tc, test_clock_matches_clock_gettime);
    tcase_add_test(tc, test_clock_unreadable_is_minus_one);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
