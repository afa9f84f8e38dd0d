/* SPDX-License-Identifier: Apache-2.0 */
/* include/fx_drain_period.h: the drain's adaptive period (issue 31). Fast while anything waits
 * or a ring filled past an eighth; doubling per quiet pass up to 100 ms; never so slow that
 * flat-out sampling could fill more than a quarter of the smallest ring before the next pass. */
#include <check.h>
#include <stdlib.h>

#include "fx_drain_period.h"

#define MS 1000000ull

/* A quiet pass: 256 KiB rings (the default ring=), 10 ms interval, 400-byte records. */
static struct fx_drain_load quiet(uint64_t period_ns)
{
    return (struct fx_drain_load){.period_ns = period_ns,
                                  .interval_ns = 10 * MS,
                                  .fill_permille = 10,
                                  .ring_min = 256 * 1024,
                                  .record_max = 400};
}

START_TEST(test_quiet_passes_double_up_to_the_slow_period)
{
    struct fx_drain_load l = quiet(FX_DRAIN_FAST_NS);
    uint64_t seen[6];
    for (int i = 0; i < 6; i++) {
        seen[i] = fx_drain_period_next(&l);
        l.period_ns = seen[i];
    }
    ck_assert_uint_eq(seen[0], 20 * MS);
    ck_assert_uint_eq(seen[1], 40 * MS);
    ck_assert_uint_eq(seen[2], 80 * MS);
    ck_assert_uint_eq(seen[3], FX_DRAIN_SLOW_NS);
    ck_assert_uint_eq(seen[5], FX_DRAIN_SLOW_NS);
    l.period_ns = 0; /* a new recording (the drain's figures reset): its first wait is fast */
    ck_assert_uint_eq(fx_drain_period_next(&l), FX_DRAIN_FAST_NS);
}
END_TEST

/* Code to publish, a queue filling, a ring past an eighth: back to 10 ms at once. */
START_TEST(test_anything_waiting_is_fast)
{
    struct fx_drain_load l = quiet(FX_DRAIN_SLOW_NS);
    l.waiting = true;
    ck_assert_uint_eq(fx_drain_period_next(&l), FX_DRAIN_FAST_NS);
    l = quiet(FX_DRAIN_SLOW_NS);
    l.fill_permille = FX_DRAIN_FILL_FAST + 1;
    ck_assert_uint_eq(fx_drain_period_next(&l), FX_DRAIN_FAST_NS);
    l.fill_permille = FX_DRAIN_FILL_FAST; /* an eighth: doubling keeps it under a quarter */
    ck_assert_uint_eq(fx_drain_period_next(&l), FX_DRAIN_SLOW_NS);
}
END_TEST

/* codemap=heap: while the handler finds code the map lacks, the period doubles up to
 * FX_DRAIN_FOUND_NS, not to the slow period, and no longer drops to the fast one (session 25);
 * anything waiting still makes it fast, and a smaller ring bound still wins. */
START_TEST(test_code_found_caps_the_wait)
{
    struct fx_drain_load l = quiet(FX_DRAIN_FAST_NS);
    l.found = true;
    ck_assert_uint_eq(fx_drain_period_next(&l), 20 * MS);
    l.period_ns = 20 * MS;
    ck_assert_uint_eq(fx_drain_period_next(&l), FX_DRAIN_FOUND_NS);
    l.period_ns = FX_DRAIN_SLOW_NS; /* finds after a quiet spell: the wait shortens to the cap */
    ck_assert_uint_eq(fx_drain_period_next(&l), FX_DRAIN_FOUND_NS);
    l.period_ns = FX_DRAIN_FOUND_NS;
    ck_assert_uint_eq(fx_drain_period_next(&l), FX_DRAIN_FOUND_NS);
    l.waiting = true;
    ck_assert_uint_eq(fx_drain_period_next(&l), FX_DRAIN_FAST_NS);
    l = quiet(FX_DRAIN_SLOW_NS);
    l.found = true;
    l.ring_min = 16 * 1024; /* a quarter: 2 records of 2 KiB, 20 ms */
    l.record_max = 2048;
    ck_assert_uint_eq(fx_drain_period_next(&l), 20 * MS);
    ck_assert_uint_gt(FX_DRAIN_FOUND_NS, FX_DRAIN_FAST_NS);
    ck_assert_uint_lt(FX_DRAIN_FOUND_NS, FX_DRAIN_SLOW_NS);
}
END_TEST

/* The worst case a quiet pass cannot see: a thread idle so far runs flat out, one record per
 * interval. A quarter of the smallest ring bounds the wait. */
START_TEST(test_the_smallest_ring_bounds_the_wait)
{
    struct fx_drain_load l = quiet(FX_DRAIN_SLOW_NS);
    l.ring_min = 32 * 1024; /* 8192 bytes a quarter: 4 records of 2 KiB, 40 ms */
    l.record_max = 2048;
    ck_assert_uint_eq(fx_drain_period_next(&l), 40 * MS);
    l.interval_ns = 1 * MS; /* 4 ms: never under the fast period */
    ck_assert_uint_eq(fx_drain_period_next(&l), FX_DRAIN_FAST_NS);
    l = quiet(FX_DRAIN_SLOW_NS);
    l.ring_min = 16 * 1024; /* no record seen yet: 512 bytes a record, 8 records, 80 ms */
    l.record_max = 0;
    ck_assert_uint_eq(fx_drain_period_next(&l), 80 * MS);
    l.interval_ns = 0; /* sampling stopped: the rings fill no more */
    ck_assert_uint_eq(fx_drain_period_next(&l), FX_DRAIN_SLOW_NS);
    l = quiet(FX_DRAIN_SLOW_NS);
    l.ring_min = 0; /* no ring yet */
    ck_assert_uint_eq(fx_drain_period_next(&l), FX_DRAIN_SLOW_NS);
}
END_TEST

/* Whatever the inputs, the period stays inside fast..slow. */
START_TEST(test_always_between_fast_and_slow)
{
    const uint64_t periods[] = {0, 1, FX_DRAIN_FAST_NS, 60 * MS, FX_DRAIN_SLOW_NS, UINT64_MAX};
    const uint64_t rings[] = {0, 64, 32 * 1024, 64ull << 20};
    const uint64_t records[] = {0, 8, 4096, 1ull << 20};
    const uint64_t intervals[] = {0, 1, 10 * MS, 1000 * MS};
    for (size_t a = 0; a < sizeof(periods) / sizeof(periods[0]); a++)
        for (size_t b = 0; b < sizeof(rings) / sizeof(rings[0]); b++)
            for (size_t c = 0; c < sizeof(records) / sizeof(records[0]); c++)
                for (size_t d = 0; d < sizeof(intervals) / sizeof(intervals[0]); d++) {
                    struct fx_drain_load l = {.period_ns = periods[a],
                                              .ring_min = rings[b],
                                              .record_max = records[c],
                                              .interval_ns = intervals[d]};
                    uint64_t n = fx_drain_period_next(&l);
                    ck_assert_uint_ge(n, FX_DRAIN_FAST_NS);
                    ck_assert_uint_le(n, FX_DRAIN_SLOW_NS);
                }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("drain_period");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_quiet_passes_double_up_to_the_slow_period);
    tcase_add_test(tc, test_anything_waiting_is_fast);
    tcase_add_test(tc, test_code_found_caps_the_wait);
    tcase_add_test(tc, test_the_smallest_ring_bounds_the_wait);
    tcase_add_test(tc, test_always_between_fast_and_slow);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
