/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of include/fx_perfring.h, the signal handler's reader of a perf mmap ring (issue
 * 16, kernel frames), on synthetic rings: the signal's record chosen by time, a record wrapping
 * the end of the data area, markers dropped, garbage spans and records, a full ring, a LOST
 * record, a callchain longer than kept; every call consumes what was published. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "fx_perfring.h"

#define SIZE    512u /* data area: a power of two */
#define MAXK    8u
#define KERNEL0 0xffffffff81000000ULL

struct ring {
    struct perf_event_mmap_page meta;
    uint8_t data[SIZE];
    uint8_t guard[64]; /* must stay untouched: nothing past the area is read or written */
};

static void put(struct ring *r, uint64_t pos, const void *src, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        r->data[(pos + i) & (SIZE - 1)] = ((const uint8_t *)src)[i];
}

/* Appends a sample record {header, time, nr, ips} at data_head and publishes it. */
static void sample(struct ring *r, int64_t time, const uint64_t *ips, uint32_t nr)
{
    struct perf_event_header h = {
            .type = PERF_RECORD_SAMPLE, .misc = 0, .size = (uint16_t)(24 + 8 * nr)};
    uint64_t pos = r->meta.data_head, n = nr;
    put(r, pos, &h, sizeof(h));
    put(r, pos + 8, &time, 8);
    put(r, pos + 16, &n, 8);
    put(r, pos + 24, ips, 8 * nr);
    r->meta.data_head = pos + h.size;
}

static void other(struct ring *r, uint32_t type, uint16_t size)
{
    struct perf_event_header h = {.type = type, .misc = 0, .size = size};
    put(r, r->meta.data_head, &h, sizeof(h));
    r->meta.data_head += size;
}

static struct ring *ring_new(uint64_t start)
{
    struct ring *r = calloc(1, sizeof(*r));
    ck_assert_ptr_nonnull(r);
    r->meta.data_head = r->meta.data_tail = start;
    memset(r->guard, 0xAB, sizeof(r->guard));
    return r;
}

static void ring_done(struct ring *r)
{
    for (size_t i = 0; i < sizeof(r->guard); i++)
        ck_assert_uint_eq(r->guard[i], 0xAB);
    free(r);
}

static uint32_t take(struct ring *r, int64_t floor_ns, int64_t until_ns, uint64_t *ips,
                     uint8_t *state)
{
    uint32_t n = fx_perfring_take_sigsafe(&r->meta, r->data, SIZE, floor_ns, until_ns, ips, MAXK, 2,
                                          state);
    ck_assert_uint_eq(r->meta.data_tail, r->meta.data_head); /* everything consumed */
    return n;
}

START_TEST(test_perfring_newest_record_up_to_the_handler_start)
{
    struct ring *r = ring_new(0);
    uint64_t a[] = {PERF_CONTEXT_KERNEL, KERNEL0 + 1, KERNEL0 + 2};
    uint64_t b[] = {PERF_CONTEXT_KERNEL, KERNEL0 + 10, KERNEL0 + 11, KERNEL0 + 12};
    uint64_t late[] = {PERF_CONTEXT_KERNEL, KERNEL0 + 99};
    sample(r, 100, a, 3);    /* merged into the same signal: older */
    sample(r, 200, b, 4);    /* the signal's: newest at or before the handler start */
    sample(r, 300, late, 2); /* during the handler (its own system call): not this signal's */
    uint64_t ips[MAXK];
    uint8_t st;
    ck_assert_uint_eq(take(r, 50, 250, ips, &st), 3);
    ck_assert_uint_eq(st, FX_KREC_OK);
    ck_assert_uint_eq(ips[0], KERNEL0 + 10);
    ck_assert_uint_eq(ips[2], KERNEL0 + 12);
    /* Nothing new: no record for the next signal. */
    ck_assert_uint_eq(take(r, 260, 400, ips, &st), 0);
    ck_assert_uint_eq(st, FX_KREC_NO_RECORD);
    ring_done(r);
}
END_TEST

START_TEST(test_perfring_floor_excludes_the_previous_handler)
{
    struct ring *r = ring_new(0);
    uint64_t a[] = {PERF_CONTEXT_KERNEL, KERNEL0 + 1};
    sample(r, 100, a, 2); /* written after the previous handler read the ring, before it ended */
    uint64_t ips[MAXK];
    uint8_t st;
    ck_assert_uint_eq(take(r, 150, 400, ips, &st), 0);
    ck_assert_uint_eq(st, FX_KREC_NO_RECORD);
    ring_done(r);
}
END_TEST

START_TEST(test_perfring_record_wrapping_the_area_end)
{
    /* Start 16 bytes before the end: the header fits, time/nr/ips wrap. */
    struct ring *r = ring_new(10 * SIZE + SIZE - 16);
    uint64_t a[] = {PERF_CONTEXT_KERNEL, KERNEL0 + 5, KERNEL0 + 6, KERNEL0 + 7};
    sample(r, 100, a, 4);
    uint64_t ips[MAXK];
    uint8_t st;
    ck_assert_uint_eq(take(r, 0, 100, ips, &st), 3);
    ck_assert_uint_eq(st, FX_KREC_OK);
    ck_assert_uint_eq(ips[0], KERNEL0 + 5);
    ck_assert_uint_eq(ips[2], KERNEL0 + 7);
    /* The header the area's last 8 bytes, everything after it at the start. */
    ring_done(r);
    r = ring_new(3 * SIZE - 8);
    sample(r, 7, a, 4);
    ck_assert_uint_eq(take(r, 0, 7, ips, &st), 3);
    ck_assert_uint_eq(st, FX_KREC_OK);
    ring_done(r);
}
END_TEST

START_TEST(test_perfring_markers_and_user_part_dropped)
{
    struct ring *r = ring_new(0);
    uint64_t a[] = {PERF_CONTEXT_KERNEL, KERNEL0 + 1, PERF_CONTEXT_USER, 0x401000, 0x402000};
    sample(r, 10, a, 5);
    uint64_t ips[MAXK];
    uint8_t st;
    ck_assert_uint_eq(take(r, 0, 10, ips, &st), 1);
    ck_assert_uint_eq(ips[0], KERNEL0 + 1);
    /* In user mode at the overflow: an empty kernel chain is a record with no frames. */
    sample(r, 20, NULL, 0);
    ck_assert_uint_eq(take(r, 10, 20, ips, &st), 0);
    ck_assert_uint_eq(st, FX_KREC_OK);
    ring_done(r);
}
END_TEST

START_TEST(test_perfring_long_chain_is_cut_and_said)
{
    struct ring *r = ring_new(0);
    uint64_t a[1 + MAXK + 3];
    a[0] = PERF_CONTEXT_KERNEL;
    for (unsigned i = 1; i < sizeof(a) / 8; i++)
        a[i] = KERNEL0 + i;
    sample(r, 10, a, sizeof(a) / 8);
    uint64_t ips[MAXK];
    uint8_t st;
    ck_assert_uint_eq(take(r, 0, 10, ips, &st), MAXK);
    ck_assert_uint_eq(st, FX_KREC_TRUNCATED);
    ring_done(r);
}
END_TEST

START_TEST(test_perfring_garbage_is_refused_and_consumed)
{
    uint64_t ips[MAXK];
    uint8_t st;
    uint64_t a[] = {PERF_CONTEXT_KERNEL, KERNEL0 + 1};
    /* A span larger than the area. */
    struct ring *r = ring_new(0);
    r->meta.data_head = SIZE + 8;
    ck_assert_uint_eq(take(r, 0, 10, ips, &st), 0);
    ck_assert_uint_eq(st, FX_KREC_BAD);
    ring_done(r);
    /* Head behind tail. */
    r = ring_new(64);
    r->meta.data_head = 32;
    ck_assert_uint_eq(take(r, 0, 10, ips, &st), 0);
    ck_assert_uint_eq(st, FX_KREC_BAD);
    ring_done(r);
    /* A record size of 0, of 12 (not 8-aligned), past the head. */
    uint16_t sizes[] = {0, 12, 200};
    for (unsigned i = 0; i < 3; i++) {
        r = ring_new(0);
        sample(r, 5, a, 2);
        struct perf_event_header h = {.type = PERF_RECORD_SAMPLE, .size = sizes[i]};
        put(r, r->meta.data_head, &h, sizeof(h));
        r->meta.data_head += 32;
        ck_assert_uint_eq(take(r, 0, 10, ips, &st), 0);
        ck_assert_uint_eq(st, FX_KREC_BAD);
        ring_done(r);
    }
    /* nr larger than the record holds. */
    r = ring_new(0);
    sample(r, 5, a, 2);
    uint64_t nr = 1000;
    put(r, 16, &nr, 8);
    ck_assert_uint_eq(take(r, 0, 10, ips, &st), 0);
    ck_assert_uint_eq(st, FX_KREC_BAD);
    ring_done(r);
    /* A span shorter than a header. */
    r = ring_new(0);
    r->meta.data_head = 4;
    ck_assert_uint_eq(take(r, 0, 10, ips, &st), 0);
    ck_assert_uint_eq(st, FX_KREC_BAD);
    ring_done(r);
}
END_TEST

START_TEST(test_perfring_full_or_lost_gives_no_frames)
{
    uint64_t ips[MAXK];
    uint8_t st;
    uint64_t a[] = {PERF_CONTEXT_KERNEL, KERNEL0 + 1, KERNEL0 + 2};
    /* A LOST record after the candidate: the newest overflow may be among those lost. */
    struct ring *r = ring_new(0);
    sample(r, 5, a, 3);
    other(r, PERF_RECORD_LOST, 24);
    ck_assert_uint_eq(take(r, 0, 10, ips, &st), 0);
    ck_assert_uint_eq(st, FX_KREC_LOST);
    /* Before it: the records lost were older than the candidate. */
    other(r, PERF_RECORD_LOST, 24);
    sample(r, 15, a, 3);
    ck_assert_uint_eq(take(r, 10, 20, ips, &st), 2);
    ck_assert_uint_eq(st, FX_KREC_OK);
    /* Less room left than the largest record: a newer one may not have fitted. */
    for (int i = 0; i < 9; i++) /* 9 x 48 bytes of 512 */
        sample(r, 30 + i, a, 3);
    ck_assert_uint_lt(SIZE - (r->meta.data_head - r->meta.data_tail), FX_PERFRING_MAX_REC(2));
    ck_assert_uint_eq(take(r, 20, 100, ips, &st), 0);
    ck_assert_uint_eq(st, FX_KREC_LOST);
    ring_done(r);
}
END_TEST

static Suite *perfring_suite(void)
{
    Suite *s = suite_create("perfring");
    TCase *tc = tcase_create("take");
    tcase_add_test(tc, test_perfring_newest_record_up_to_the_handler_start);
    tcase_add_test(tc, test_perfring_floor_excludes_the_previous_handler);
    tcase_add_test(tc, test_perfring_record_wrapping_the_area_end);
    tcase_add_test(tc, test_perfring_markers_and_user_part_dropped);
    tcase_add_test(tc, test_perfring_long_chain_is_cut_and_said);
    tcase_add_test(tc, test_perfring_garbage_is_refused_and_consumed);
    tcase_add_test(tc, test_perfring_full_or_lost_gives_no_frames);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(perfring_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
