/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fx_alloc.h"

START_TEST(test_alloc_basic_allocations_work)
{
    char *p = fx_malloc(16);
    ck_assert_ptr_nonnull(p);
    memset(p, 'a', 16);
    int *z = fx_calloc(8, sizeof(int));
    ck_assert_ptr_nonnull(z);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(z[i], 0);
    p = fx_reallocarray(p, 4, 1000);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(p[15], 'a');
    fx_free(p);
    fx_free(z);
    fx_free(NULL);
}
END_TEST

START_TEST(test_alloc_reallocarray_overflow_keeps_block)
{
    char *p = fx_malloc(8);
    ck_assert_ptr_nonnull(p);
    strcpy(p, "keepme");
    ck_assert_ptr_null(fx_reallocarray(p, SIZE_MAX / 2, 3));
    ck_assert_str_eq(p, "keepme");
    ck_assert_ptr_null(fx_calloc(SIZE_MAX / 4, 8));
    fx_free(p);
}
END_TEST

START_TEST(test_alloc_strdup_and_strndup_copy)
{
    char *a = fx_strdup("hello");
    ck_assert_str_eq(a, "hello");
    char *b = fx_strndup("hello", 3);
    ck_assert_str_eq(b, "hel");
    char *c = fx_strndup("hi", 10);
    ck_assert_str_eq(c, "hi");
    fx_free(a);
    fx_free(b);
    fx_free(c);
}
END_TEST

START_TEST(test_alloc_grow_doubles_and_failure_keeps_the_array)
{
    int *a = NULL;
    size_t cap = 0;
    ck_assert_int_eq(fx_grow(&a, &cap, 0, 1, sizeof(*a), 4), 0);
    ck_assert_uint_eq(cap, 4);
    a[0] = 7;
    ck_assert_int_eq(fx_grow(&a, &cap, 4, 0, sizeof(*a), 4), 0); /* room already */
    ck_assert_uint_eq(cap, 4);
    ck_assert_int_eq(fx_grow(&a, &cap, 4, 9, sizeof(*a), 4), 0);
    ck_assert_uint_eq(cap, 16);
    ck_assert_int_eq(a[0], 7);
    int *before = a;
    fx_alloc_fail_after(1);
    ck_assert_int_eq(fx_grow(&a, &cap, 16, 1, sizeof(*a), 4), -1);
    fx_alloc_fail_after(0);
    ck_assert_ptr_eq(a, before);
    ck_assert_uint_eq(cap, 16);
    ck_assert_int_eq(fx_grow(&a, &cap, SIZE_MAX, 1, sizeof(*a), 4), -1); /* overflow */
    ck_assert_int_eq(fx_grow(&a, &cap, 16, SIZE_MAX / 2, sizeof(*a), 4), -1);
    ck_assert_uint_eq(cap, 16);
    fx_free(a);
}
END_TEST

START_TEST(test_alloc_nth_allocation_fails_once)
{
    fx_alloc_fail_after(3);
    void *a = fx_malloc(4);
    void *b = fx_calloc(1, 4);
    void *c = fx_malloc(4);
    void *d = fx_malloc(4);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_null(c);
    ck_assert_ptr_nonnull(d);
    fx_free(a);
    fx_free(b);
    fx_free(d);
}
END_TEST

START_TEST(test_alloc_injection_covers_every_entry_point)
{
    fx_alloc_fail_after(1);
    ck_assert_ptr_null(fx_strdup("x"));
    fx_alloc_fail_after(1);
    ck_assert_ptr_null(fx_strndup("x", 1));
    fx_alloc_fail_after(1);
    ck_assert_ptr_null(fx_calloc(1, 1));
    char *p = fx_malloc(4);
    ck_assert_ptr_nonnull(p);
    strcpy(p, "abc");
    fx_alloc_fail_after(1);
    ck_assert_ptr_null(fx_reallocarray(p, 2, 8));
    ck_assert_str_eq(p, "abc");
    fx_free(p);
    fx_alloc_fail_after(1);
    ck_assert_ptr_null(fx_pages_alloc(4096));
}
END_TEST

/* Pages of their own: zeroed, writable, and each block its own mapping (issue 23). */
START_TEST(test_alloc_pages_are_zeroed_and_separate)
{
    ck_assert_ptr_null(fx_pages_alloc(0));
    unsigned char *a = fx_pages_alloc(65536), *b = fx_pages_alloc(100);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    for (size_t i = 0; i < 65536; i += 997)
        ck_assert_uint_eq(a[i], 0);
    a[65535] = 1;
    b[99] = 2;
    ck_assert_uint_eq((uintptr_t)a % 4096, 0);
    ck_assert_uint_eq((uintptr_t)b % 4096, 0);
    fx_pages_free(a, 65536);
    fx_pages_free(b, 100);
    fx_pages_free(NULL, 10);
}
END_TEST

START_TEST(test_alloc_zero_turns_injection_off)
{
    fx_alloc_fail_after(2);
    fx_alloc_fail_after(0);
    for (int i = 0; i < 5; i++) {
        void *p = fx_malloc(1);
        ck_assert_ptr_nonnull(p);
        fx_free(p);
    }
}
END_TEST

#define THREADS    4
#define PER_THREAD 5000

static void *alloc_loop(void *arg)
{
    long *nulls = arg;
    for (int i = 0; i < PER_THREAD; i++) {
        void *p = fx_malloc(8);
        if (!p)
            (*nulls)++;
        fx_free(p);
    }
    return NULL;
}

START_TEST(test_alloc_injection_fails_exactly_once_across_threads)
{
    fx_alloc_fail_after(THREADS * PER_THREAD / 2);
    pthread_t t[THREADS];
    long nulls[THREADS] = {0};
    for (int i = 0; i < THREADS; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, alloc_loop, &nulls[i]), 0);
    long total = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        total += nulls[i];
    }
    ck_assert_int_eq(total, 1);
}
END_TEST

/* The usage count follows every entry point and returns to where it was when all is freed. */
/* A block of 256 KiB or more is a mapping of its own, never glibc's heap: glibc's dynamic mmap
 * threshold rises when a big block is freed (as libelf's are), and after that a thread arena
 * would hold the block, and keep its pages resident once it is freed. */
START_TEST(test_alloc_large_blocks_are_own_mappings)
{
    free(malloc((size_t)8 << 20)); /* raises glibc's threshold, as libelf's blocks do */
    struct fx_alloc_usage u0, u1;
    fx_alloc_usage(&u0);
    size_t used0 = 0, sys0 = 0, used1 = 0, sys1 = 0;
    bool glibc = fx_alloc_process_malloc(&used0, &sys0);
    size_t mib = (size_t)1 << 20;
    unsigned char *p = fx_malloc(mib);
    ck_assert_ptr_nonnull(p);
    memset(p, 0x5a, mib);
    if (glibc && fx_alloc_process_malloc(&used1, &sys1))
        ck_assert_msg(used1 < used0 + mib / 2, "1 MiB came from malloc: in use %zu -> %zu", used0,
                      used1);
    fx_alloc_usage(&u1);
    ck_assert_uint_ge(u1.heap_bytes - u0.heap_bytes, mib);
    ck_assert_uint_eq(u1.blocks - u0.blocks, 1);
    p = fx_reallocarray(p, 3, mib); /* larger: the bytes move with it */
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(p[mib - 1], 0x5a);
    ck_assert_int_eq(p[3 * mib - 1], 0);
    /* moved by the kernel (mremap) from one mapping to a larger one: counted at its new size,
     * every byte kept; and smaller, still a mapping */
    fx_alloc_usage(&u1);
    ck_assert_uint_ge(u1.heap_bytes - u0.heap_bytes, 3 * mib);
    ck_assert_uint_eq(u1.blocks - u0.blocks, 1);
    for (size_t i = 0; i < mib; i += 4096)
        ck_assert_int_eq(p[i], 0x5a);
    memset(p + 2 * mib, 0x33, mib);
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    p = fx_reallocarray(p, 1, 2 * mib + pg + 1);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(p[0], 0x5a);
    ck_assert_int_eq(p[2 * mib + pg], 0x33);
    fx_alloc_usage(&u1);
    ck_assert_uint_eq(u1.heap_bytes - u0.heap_bytes, 2 * mib + 2 * pg);
    p = fx_reallocarray(p, 1, 64); /* back into malloc's range */
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(p[63], 0x5a);
    char *z = fx_calloc(mib, 1);
    ck_assert_ptr_nonnull(z);
    ck_assert_int_eq(z[mib - 1], 0);
    char *small = fx_reallocarray(NULL, 1, 100);
    ck_assert_ptr_nonnull(small);
    memset(small, 'x', 100);
    small = fx_reallocarray(small, 1, mib); /* from malloc's range into a mapping */
    ck_assert_ptr_nonnull(small);
    ck_assert_int_eq(small[99], 'x');
    fx_free(small);
    fx_free(z);
    fx_free(p);
    fx_alloc_usage(&u1);
    ck_assert_uint_eq(u1.heap_bytes, u0.heap_bytes);
    ck_assert_uint_eq(u1.blocks, u0.blocks);
}
END_TEST

START_TEST(test_alloc_usage_counts_live_blocks_and_pages)
{
    struct fx_alloc_usage u0, u1, u2;
    fx_alloc_usage(&u0);
    char *a = fx_malloc(1000);
    int *b = fx_calloc(100, sizeof(int));
    char *c = fx_strdup("usage");
    void *pg = fx_pages_alloc(8192);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_nonnull(pg);
    fx_alloc_usage(&u1);
    ck_assert_uint_eq(u1.blocks, u0.blocks + 3);
    ck_assert_uint_ge(u1.heap_bytes, u0.heap_bytes + 1000 + 400 + 6);
    ck_assert_uint_eq(u1.pages_bytes, u0.pages_bytes + 8192);
    a = fx_reallocarray(a, 100, 100); /* grows: the old size leaves, the new one counts */
    ck_assert_ptr_nonnull(a);
    fx_alloc_usage(&u2);
    ck_assert_uint_eq(u2.blocks, u1.blocks);
    ck_assert_uint_ge(u2.heap_bytes, u1.heap_bytes + 10000 - 1000 - 64);
    ck_assert_ptr_null(fx_reallocarray(a, SIZE_MAX, 2)); /* refused: nothing changes */
    fx_alloc_usage(&u2);
    ck_assert_uint_eq(u2.blocks, u1.blocks);
    fx_free(a);
    fx_free(b);
    fx_free(c);
    fx_free(NULL);
    fx_pages_free(pg, 8192);
    fx_alloc_usage(&u2);
    ck_assert_uint_eq(u2.blocks, u0.blocks);
    ck_assert_uint_eq(u2.heap_bytes, u0.heap_bytes);
    ck_assert_uint_eq(u2.pages_bytes, u0.pages_bytes);
}
END_TEST

/* Another thread's blocks while this one tallies: not in the tally. */
static void *other_thread_allocates(void *arg)
{
    (void)arg;
    void *p = fx_malloc(50000);
    fx_free(p);
    return p != NULL ? arg : NULL;
}

START_TEST(test_alloc_tally_counts_this_threads_blocks_only)
{
    struct fx_alloc_tally t = {.now = 7, .peak = 7}; /* begin zeroes it */
    void *before = fx_malloc(4000);                  /* allocated before: freeing it is clamped */
    fx_alloc_tally_begin(&t);
    ck_assert_uint_eq(t.now, 0);
    char *a = fx_malloc(10000);
    char *b = fx_calloc(1000, 10);
    ck_assert_uint_ge(t.now, 20000);
    size_t two = t.now;
    a = fx_reallocarray(a, 30000, 1); /* the old size leaves, the new one counts */
    ck_assert_uint_ge(t.now, two - 10000 + 30000 - 64);
    pthread_t th;
    pthread_create(&th, NULL, other_thread_allocates, NULL);
    pthread_join(th, NULL);
    size_t high = t.now;
    ck_assert_uint_eq(t.peak, high); /* the other thread's 50000 are not here */
    fx_free(a);
    fx_free(b);
    ck_assert_uint_eq(t.now, 0);
    ck_assert_uint_eq(t.peak, high);
    fx_free(before);
    ck_assert_uint_eq(t.now, 0);
    fx_alloc_tally_end();
    char *c = fx_malloc(1000); /* after the end: not tallied */
    ck_assert_uint_eq(t.now, 0);
    fx_free(c);
}
END_TEST

static Suite *alloc_suite(void)
{
    Suite *s = suite_create("alloc");
    TCase *tc = tcase_create("alloc");
    tcase_add_test(tc, test_alloc_basic_allocations_work);
    tcase_add_test(tc, test_alloc_reallocarray_overflow_keeps_block);
    tcase_add_test(tc, test_alloc_strdup_and_strndup_copy);
    tcase_add_test(tc, test_alloc_grow_doubles_and_failure_keeps_the_array);
    tcase_add_test(tc, test_alloc_usage_counts_live_blocks_and_pages);
    tcase_add_test(tc, test_alloc_large_blocks_are_own_mappings);
    tcase_add_test(tc, test_alloc_tally_counts_this_threads_blocks_only);
    suite_add_tcase(s, tc);
    tc = tcase_create("injection");
    tcase_add_test(tc, test_alloc_nth_allocation_fails_once);
    tcase_add_test(tc, test_alloc_injection_covers_every_entry_point);
    tcase_add_test(tc, test_alloc_zero_turns_injection_off);
    tcase_add_test(tc, test_alloc_pages_are_zeroed_and_separate);
    tcase_add_test(tc, test_alloc_injection_fails_exactly_once_across_threads);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(alloc_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
