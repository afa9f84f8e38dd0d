/* SPDX-License-Identifier: Apache-2.0 */
/* fx_evq: a record is the three parts in order; no queue before init or after free (push
 * false, peek NULL, drops 0) and its pages go back at free; a second init keeps the queue and
 * its records; a full queue drops and counts; a failed allocation leaves no queue; many
 * producers at once lose nothing that is not counted; producers racing a free never write
 * into freed pages (ASan and valgrind run this suite too). */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_evq.h"

static size_t pages_now(void)
{
    struct fx_alloc_usage u;
    fx_alloc_usage(&u);
    return u.pages_bytes;
}

START_TEST(test_evq_record_is_its_parts_in_order)
{
    struct fx_evq q = FX_EVQ_INITIALIZER;
    ck_assert_int_eq(fx_evq_init(&q, 4096), FX_OK);
    ck_assert(fx_evq_ready(&q));
    uint64_t hdr = 0x1122334455667788ull;
    ck_assert(fx_evq_push(&q, &hdr, sizeof(hdr), "abc", 3, "defgh", 5));
    ck_assert(fx_evq_push(&q, &hdr, sizeof(hdr), NULL, 0, "xy", 2));
    ck_assert(fx_evq_push(&q, &hdr, sizeof(hdr), NULL, 0, NULL, 0));
    uint32_t len = 0;
    const uint8_t *p = fx_evq_peek(&q, &len);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(len, 16);
    ck_assert_mem_eq(p, &hdr, sizeof(hdr));
    ck_assert_mem_eq(p + 8, "abcdefgh", 8);
    fx_evq_release(&q);
    p = fx_evq_peek(&q, &len);
    ck_assert_uint_eq(len, 16); /* 10 bytes, rounded up to 8 by the ring */
    ck_assert_mem_eq(p + 8, "xy", 2);
    fx_evq_release(&q);
    p = fx_evq_peek(&q, &len);
    ck_assert_uint_eq(len, 8);
    fx_evq_release(&q);
    ck_assert_ptr_null(fx_evq_peek(&q, &len));
    ck_assert_uint_eq(fx_evq_drops(&q), 0);
    fx_evq_free(&q);
}
END_TEST

START_TEST(test_evq_absent_before_init_and_after_free)
{
    struct fx_evq q = FX_EVQ_INITIALIZER;
    uint32_t len, v = 7;
    size_t base = pages_now();
    ck_assert(!fx_evq_ready(&q));
    ck_assert(!fx_evq_push(&q, &v, sizeof(v), NULL, 0, NULL, 0));
    ck_assert_ptr_null(fx_evq_peek(&q, &len));
    ck_assert_uint_eq(fx_evq_drops(&q), 0);
    fx_evq_free(&q); /* no queue: nothing to do */

    ck_assert_int_eq(fx_evq_init(&q, 64 * 1024), FX_OK);
    ck_assert_uint_eq(pages_now() - base, 64 * 1024);
    ck_assert(fx_evq_push(&q, &v, sizeof(v), NULL, 0, NULL, 0));
    fx_evq_free(&q);
    ck_assert_uint_eq(pages_now(), base);
    ck_assert(!fx_evq_ready(&q));
    ck_assert(!fx_evq_push(&q, &v, sizeof(v), NULL, 0, NULL, 0));
    ck_assert_ptr_null(fx_evq_peek(&q, &len));
    fx_evq_free(&q);
    ck_assert_uint_eq(pages_now(), base);
}
END_TEST

START_TEST(test_evq_second_init_keeps_the_queue)
{
    struct fx_evq q = FX_EVQ_INITIALIZER;
    uint32_t len, v = 42;
    ck_assert_int_eq(fx_evq_init(&q, 4096), FX_OK);
    ck_assert(fx_evq_push(&q, &v, sizeof(v), NULL, 0, NULL, 0));
    size_t pages = pages_now();
    ck_assert_int_eq(fx_evq_init(&q, 1 << 20), FX_OK);
    ck_assert_uint_eq(pages_now(), pages);
    const uint32_t *p = fx_evq_peek(&q, &len);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(*p, 42);
    fx_evq_free(&q);
}
END_TEST

START_TEST(test_evq_full_drops_and_counts)
{
    struct fx_evq q = FX_EVQ_INITIALIZER;
    ck_assert_int_eq(fx_evq_init(&q, 1024), FX_OK);
    char rec[56] = {0}; /* 64 bytes with the ring's header: 16 fit */
    unsigned ok = 0, dropped = 0;
    for (int i = 0; i < 40; i++)
        fx_evq_push(&q, rec, sizeof(rec), NULL, 0, NULL, 0) ? ok++ : dropped++;
    ck_assert_uint_eq(ok, 16);
    ck_assert_uint_eq(fx_evq_drops(&q), dropped);
    uint32_t len;
    while (fx_evq_peek(&q, &len) != NULL)
        fx_evq_release(&q);
    ck_assert(fx_evq_push(&q, rec, sizeof(rec), NULL, 0, NULL, 0));
    fx_evq_free(&q);
    ck_assert_uint_eq(fx_evq_drops(&q), 0);
}
END_TEST

START_TEST(test_evq_failed_allocation_leaves_no_queue)
{
    struct fx_evq q = FX_EVQ_INITIALIZER;
    fx_alloc_fail_after(1);
    ck_assert_int_eq(fx_evq_init(&q, 4096), FX_ENOMEM);
    fx_alloc_fail_after(0);
    ck_assert(!fx_evq_ready(&q));
    uint32_t v = 1;
    ck_assert(!fx_evq_push(&q, &v, sizeof(v), NULL, 0, NULL, 0));
    ck_assert_int_eq(fx_evq_init(&q, 4096), FX_OK);
    ck_assert(fx_evq_push(&q, &v, sizeof(v), NULL, 0, NULL, 0));
    fx_evq_free(&q);
}
END_TEST

#define PRODUCERS 4
#define PER       20000

struct prod {
    struct fx_evq *q;
    uint32_t id;
    uint32_t pushed;
    int stop; /* atomic */
};

static void *produce(void *arg)
{
    struct prod *p = arg;
    for (uint32_t i = 0; i < PER; i++) {
        uint32_t rec[2] = {p->id, i};
        if (fx_evq_push(p->q, rec, sizeof(rec[0]), &rec[1], sizeof(rec[1]), NULL, 0))
            p->pushed++;
    }
    return NULL;
}

/* Each producer's records arrive whole and in its order; what did not arrive was counted. */
START_TEST(test_evq_many_producers_lose_nothing_uncounted)
{
    struct fx_evq q = FX_EVQ_INITIALIZER;
    ck_assert_int_eq(fx_evq_init(&q, 16 * 1024), FX_OK);
    pthread_t th[PRODUCERS];
    struct prod pr[PRODUCERS];
    for (uint32_t i = 0; i < PRODUCERS; i++) {
        pr[i] = (struct prod){.q = &q, .id = i};
        ck_assert_int_eq(pthread_create(&th[i], NULL, produce, &pr[i]), 0);
    }
    uint32_t got[PRODUCERS] = {0}, next[PRODUCERS] = {0};
    unsigned joined = 0;
    for (;;) {
        uint32_t len;
        const uint32_t *r;
        while ((r = fx_evq_peek(&q, &len)) != NULL) {
            ck_assert_uint_eq(len, 8);
            ck_assert_uint_lt(r[0], PRODUCERS);
            ck_assert_uint_ge(r[1], next[r[0]]);
            next[r[0]] = r[1] + 1;
            got[r[0]]++;
            fx_evq_release(&q);
        }
        if (joined == PRODUCERS)
            break;
        for (; joined < PRODUCERS; joined++)
            pthread_join(th[joined], NULL);
    }
    uint64_t received = 0;
    for (uint32_t i = 0; i < PRODUCERS; i++) {
        ck_assert_uint_eq(got[i], pr[i].pushed);
        received += got[i];
    }
    ck_assert_uint_eq(received + fx_evq_drops(&q), (uint64_t)PRODUCERS * PER);
    fx_evq_free(&q);
}
END_TEST

static void *push_until_told(void *arg)
{
    struct prod *p = arg;
    uint64_t rec[8] = {p->id};
    while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE))
        fx_evq_push(p->q, rec, sizeof(rec), rec, sizeof(rec), NULL, 0);
    return NULL;
}

/* A stop frees the queue while producers push and a start makes it again: a push lands in a
 * whole queue or in none (ASan and valgrind see a write into freed pages). */
START_TEST(test_evq_free_racing_producers)
{
    struct fx_evq q = FX_EVQ_INITIALIZER;
    pthread_t th[PRODUCERS];
    struct prod pr[PRODUCERS];
    for (uint32_t i = 0; i < PRODUCERS; i++) {
        pr[i] = (struct prod){.q = &q, .id = i};
        ck_assert_int_eq(pthread_create(&th[i], NULL, push_until_told, &pr[i]), 0);
    }
    size_t base = pages_now();
    for (int round = 0; round < 200; round++) {
        ck_assert_int_eq(fx_evq_init(&q, 4096), FX_OK);
        uint32_t len;
        for (int k = 0; k < 50 && fx_evq_peek(&q, &len) != NULL; k++)
            fx_evq_release(&q);
        fx_evq_free(&q);
    }
    for (uint32_t i = 0; i < PRODUCERS; i++)
        __atomic_store_n(&pr[i].stop, 1, __ATOMIC_RELEASE);
    for (uint32_t i = 0; i < PRODUCERS; i++)
        pthread_join(th[i], NULL);
    ck_assert(!fx_evq_ready(&q));
    ck_assert_uint_eq(pages_now(), base);
}
END_TEST

static Suite *evq_suite(void)
{
    Suite *s = suite_create("evq");
    TCase *tc = tcase_create("evq");
    tcase_add_test(tc, test_evq_record_is_its_parts_in_order);
    tcase_add_test(tc, test_evq_absent_before_init_and_after_free);
    tcase_add_test(tc, test_evq_second_init_keeps_the_queue);
    tcase_add_test(tc, test_evq_full_drops_and_counts);
    tcase_add_test(tc, test_evq_failed_allocation_leaves_no_queue);
    tcase_add_test(tc, test_evq_many_producers_lose_nothing_uncounted);
    tcase_add_test(tc, test_evq_free_racing_producers);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(evq_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
