/* SPDX-License-Identifier: Apache-2.0 */
/* fx_sort against qsort: random, sorted, reversed, equal and few distinct keys, 0 and 1
 * elements, sizes that reach the heapsort fallback, elements larger than the swap buffer; and
 * that it allocates nothing (the reason it exists); fx_sort_by_u64 stable and ascending. */
#include <check.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fx_sort.h"
#include "unit_light.h"

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static unsigned long calls;

static int cmp_u32_counted(const void *a, const void *b)
{
    calls++;
    return cmp_u32(a, b);
}

static uint32_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

/* Sorts a copy with fx_sort and one with qsort: the same keys in the same order. */
static void check_like_qsort(const uint32_t *in, size_t n)
{
    uint32_t *a = malloc((n ? n : 1) * sizeof(*a)), *b = malloc((n ? n : 1) * sizeof(*b));
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    if (n)
        memcpy(a, in, n * sizeof(*a)), memcpy(b, in, n * sizeof(*b));
    fx_sort(a, n, sizeof(*a), cmp_u32);
    if (n > 1)
        qsort(b, n, sizeof(*b), cmp_u32);
    for (size_t i = 0; i < n; i++)
        ck_assert_uint_eq(a[i], b[i]);
    free(a);
    free(b);
}

enum shape {
    RANDOM,
    SORTED,
    REVERSED,
    EQUAL,
    FEW,
    ORGAN, /* up then down: a median of three's bad case */
    SHAPES
};

static void fill(uint32_t *v, size_t n, enum shape s, uint64_t *seed)
{
    for (size_t i = 0; i < n; i++) {
        switch (s) {
        case RANDOM:
            v[i] = next(seed);
            break;
        case SORTED:
            v[i] = (uint32_t)i;
            break;
        case REVERSED:
            v[i] = (uint32_t)(n - i);
            break;
        case EQUAL:
            v[i] = 7;
            break;
        case FEW:
            v[i] = next(seed) % 3;
            break;
        default:
            v[i] = (uint32_t)(i < n / 2 ? i : n - i);
            break;
        }
    }
}

START_TEST(test_sort_shapes_and_sizes)
{
    static const size_t sizes[] = {0, 1, 2, 3, 7, 12, 13, 14, 31, 100, 1000, 4097, 100000};
    uint64_t seed = 42;
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        size_t n = sizes[k];
        if (unit_light() && n > 4097)
            continue; /* memcheck: the 100,000-element runs take minutes, find nothing new */
        uint32_t *v = malloc((n ? n : 1) * sizeof(*v));
        ck_assert_ptr_nonnull(v);
        for (int s = 0; s < SHAPES; s++) {
            fill(v, n, (enum shape)s, &seed);
            check_like_qsort(v, n);
        }
        free(v);
    }
}
END_TEST

START_TEST(test_sort_zero_and_one_element_touch_nothing)
{
    uint32_t one = 5;
    fx_sort(NULL, 0, sizeof(one), cmp_u32); /* qsort's base may not be NULL; this one's may */
    calls = 0;
    fx_sort(&one, 1, sizeof(one), cmp_u32_counted);
    fx_sort(&one, 0, sizeof(one), cmp_u32_counted);
    ck_assert_uint_eq(calls, 0);
    ck_assert_uint_eq(one, 5);
}
END_TEST

/* Equal keys and organ pipes must not make it quadratic: the depth bound's heapsort or the
 * equal-key partition keeps it near n log n comparisons. */
START_TEST(test_sort_stays_n_log_n)
{
    unsigned log2n = unit_light() ? 12 : 16;
    size_t n = (size_t)1 << log2n;
    uint32_t *v = malloc(n * sizeof(*v));
    ck_assert_ptr_nonnull(v);
    uint64_t seed = 7;
    for (int s = 0; s < SHAPES; s++) {
        fill(v, n, (enum shape)s, &seed);
        calls = 0;
        fx_sort(v, n, sizeof(*v), cmp_u32_counted);
        ck_assert_uint_lt(calls, 8ul * n * log2n); /* 8 n log2 n */
        for (size_t i = 1; i < n; i++)
            ck_assert_uint_le(v[i - 1], v[i]);
    }
    free(v);
}
END_TEST

struct big {
    uint64_t key;
    char payload[200]; /* larger than the swap buffer: swapped in chunks */
    uint64_t check;    /* key * 3 + 1, to see the element moved whole */
};

static int cmp_big(const void *a, const void *b)
{
    const struct big *x = a, *y = b;
    return (x->key > y->key) - (x->key < y->key);
}

START_TEST(test_sort_large_elements_move_whole)
{
    size_t n = 3000;
    struct big *v = malloc(n * sizeof(*v));
    ck_assert_ptr_nonnull(v);
    uint64_t seed = 99;
    for (size_t i = 0; i < n; i++) {
        v[i].key = next(&seed) % 500; /* equal keys too */
        memset(v[i].payload, (int)(v[i].key & 0x7f), sizeof(v[i].payload));
        v[i].check = v[i].key * 3 + 1;
    }
    fx_sort(v, n, sizeof(*v), cmp_big);
    for (size_t i = 0; i < n; i++) {
        ck_assert_uint_eq(v[i].check, v[i].key * 3 + 1);
        for (size_t b = 0; b < sizeof(v[i].payload); b++)
            ck_assert_int_eq(v[i].payload[b], (char)(v[i].key & 0x7f));
        if (i > 0)
            ck_assert_uint_le(v[i - 1].key, v[i].key);
    }
    free(v);
}
END_TEST

static int cmp_u32_unaligned(const void *a, const void *b)
{
    uint32_t x, y;
    memcpy(&x, a, sizeof(x));
    memcpy(&y, b, sizeof(y));
    return (x > y) - (x < y);
}

/* Odd element sizes (not a multiple of 8, or of the swap buffer). */
START_TEST(test_sort_odd_element_size)
{
    enum {
        SZ = 67
    };
    size_t n = 777;
    unsigned char *v = malloc(n * SZ);
    ck_assert_ptr_nonnull(v);
    uint64_t seed = 5;
    for (size_t i = 0; i < n; i++) {
        uint32_t k = next(&seed) % 1000;
        memset(v + i * SZ, (int)(k % 251), SZ);
        memcpy(v + i * SZ, &k, sizeof(k));
    }
    fx_sort(v, n, SZ, cmp_u32_unaligned);
    for (size_t i = 0; i < n; i++) {
        uint32_t k;
        memcpy(&k, v + i * SZ, sizeof(k));
        for (size_t b = sizeof(k); b < SZ; b++)
            ck_assert_uint_eq(v[i * SZ + b], k % 251);
        if (i > 0) {
            uint32_t p;
            memcpy(&p, v + (i - 1) * SZ, sizeof(p));
            ck_assert_uint_le(p, k);
        }
    }
    free(v);
}
END_TEST

START_TEST(test_sort_allocates_nothing)
{
    size_t n = 200000;
    uint32_t *v = malloc(n * sizeof(*v));
    ck_assert_ptr_nonnull(v);
    uint64_t seed = 3;
    fill(v, n, RANDOM, &seed);
    struct mallinfo2 before = mallinfo2();
    fx_sort(v, n, sizeof(*v), cmp_u32);
    struct mallinfo2 after = mallinfo2();
    ck_assert_uint_eq(after.uordblks, before.uordblks);
    ck_assert_uint_eq(after.hblkhd, before.hblkhd);
    free(v);
}
END_TEST

/* fx_sort_by_u64: ascending by the key, equal keys in their first order (stable), whatever
 * bytes of the keys differ (low ones only, high ones only, all), 0 and 1 elements. */
struct keyed {
    uint32_t order;
    uint64_t key;
    char pad[4];
};

START_TEST(test_sort_by_u64_is_stable_and_ascending)
{
    static const uint64_t masks[] = {0xffull, 0xff00000000000000ull, ~0ull, 0x3ull, 0};
    size_t n = 5000;
    struct keyed *v = malloc(n * sizeof(*v));
    ck_assert_ptr_nonnull(v);
    uint64_t seed = 11;
    for (size_t m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
        for (size_t i = 0; i < n; i++) {
            uint64_t r = ((uint64_t)next(&seed) << 32) | next(&seed);
            v[i] = (struct keyed){.order = (uint32_t)i,
                                  .key = 0x7f00000000001000ull | (r & masks[m])};
        }
        ck_assert(fx_sort_by_u64(v, n, sizeof(*v), offsetof(struct keyed, key)));
        for (size_t i = 1; i < n; i++) {
            ck_assert_uint_le(v[i - 1].key, v[i].key);
            if (v[i - 1].key == v[i].key)
                ck_assert_uint_lt(v[i - 1].order, v[i].order);
        }
    }
    struct keyed one = {.order = 7, .key = 9};
    ck_assert(fx_sort_by_u64(&one, 1, sizeof(one), offsetof(struct keyed, key)));
    ck_assert(fx_sort_by_u64(NULL, 0, sizeof(one), offsetof(struct keyed, key)));
    ck_assert_uint_eq(one.order, 7);
    free(v);
}
END_TEST

static Suite *sort_suite(void)
{
    Suite *s = suite_create("sort");
    TCase *tc = tcase_create("sort");
    tcase_add_test(tc, test_sort_shapes_and_sizes);
    tcase_add_test(tc, test_sort_zero_and_one_element_touch_nothing);
    tcase_add_test(tc, test_sort_stays_n_log_n);
    tcase_add_test(tc, test_sort_large_elements_move_whole);
    tcase_add_test(tc, test_sort_odd_element_size);
    tcase_add_test(tc, test_sort_allocates_nothing);
    tcase_add_test(tc, test_sort_by_u64_is_stable_and_ascending);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(sort_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
