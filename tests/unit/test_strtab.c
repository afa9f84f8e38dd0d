/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_strtab.h"

static uint32_t intern(struct fx_strtab *t, const char *s)
{
    uint32_t id = FX_ROWIDX_NONE;
    ck_assert_int_eq(fx_strtab_intern(t, s, strlen(s), &id), FX_OK);
    return id;
}

START_TEST(test_strtab_same_string_same_id)
{
    struct fx_strtab t = {0};
    uint32_t a = intern(&t, "com.example.App.main");
    uint32_t b = intern(&t, "com.example.App.compute");
    ck_assert_uint_eq(a, 0);
    ck_assert_uint_eq(b, 1);
    ck_assert_uint_eq(intern(&t, "com.example.App.main"), a);
    ck_assert_uint_eq(intern(&t, "com.example.App.compute"), b);
    ck_assert_uint_eq(t.count, 2);
    size_t len;
    ck_assert_str_eq(fx_strtab_get(&t, b, &len), "com.example.App.compute");
    ck_assert_uint_eq(len, strlen("com.example.App.compute"));
    fx_strtab_destroy(&t);
}
END_TEST

START_TEST(test_strtab_bytes_not_c_strings_are_the_key)
{
    struct fx_strtab t = {0};
    uint32_t e, z1, z2, pre;
    ck_assert_int_eq(fx_strtab_intern(&t, "", 0, &e), FX_OK);
    ck_assert_int_eq(fx_strtab_intern(&t, "a\0b", 3, &z1), FX_OK);
    ck_assert_int_eq(fx_strtab_intern(&t, "a\0c", 3, &z2), FX_OK);
    ck_assert_int_eq(fx_strtab_intern(&t, "a", 1, &pre), FX_OK);
    ck_assert_uint_ne(z1, z2);
    ck_assert_uint_ne(z1, pre);
    ck_assert_uint_ne(e, pre);
    size_t len;
    const char *s = fx_strtab_get(&t, z2, &len);
    ck_assert_uint_eq(len, 3);
    ck_assert_int_eq(memcmp(s, "a\0c", 4), 0); /* NUL-terminated after the bytes */
    ck_assert_uint_eq(fx_strtab_find(&t, "a\0b", 3), z1);
    ck_assert_uint_eq(fx_strtab_find(&t, "a\0d", 3), FX_ROWIDX_NONE);
    fx_strtab_destroy(&t);
}
END_TEST

/* With every hash forced equal, only the full comparison tells strings apart. */
START_TEST(test_strtab_hash_collisions_never_merge_strings)
{
    fx_rowidx_test_hash_mask(0);
    struct fx_strtab t = {0};
    char buf[32];
    for (int i = 0; i < 300; i++) {
        snprintf(buf, sizeof(buf), "s%d", i);
        ck_assert_uint_eq(intern(&t, buf), (uint32_t)i);
    }
    for (int i = 0; i < 300; i++) {
        snprintf(buf, sizeof(buf), "s%d", i);
        ck_assert_uint_eq(intern(&t, buf), (uint32_t)i);
        ck_assert_str_eq(fx_strtab_get(&t, (uint32_t)i, NULL), buf);
    }
    ck_assert_uint_eq(t.count, 300);
    fx_rowidx_test_hash_mask(UINT32_MAX);
    fx_strtab_destroy(&t);
}
END_TEST

START_TEST(test_strtab_many_strings_survive_growth)
{
    struct fx_strtab t = {0};
    char buf[32];
    enum {
        N = 100000
    };
    for (int i = 0; i < N; i++) {
        snprintf(buf, sizeof(buf), "java.lang.Object.m%d", i);
        ck_assert_uint_eq(intern(&t, buf), (uint32_t)i);
    }
    for (int i = 0; i < N; i += 7) {
        snprintf(buf, sizeof(buf), "java.lang.Object.m%d", i);
        ck_assert_uint_eq(fx_strtab_find(&t, buf, strlen(buf)), (uint32_t)i);
    }
    ck_assert_uint_eq(t.count, N);
    ck_assert_uint_ge(fx_strtab_memory(&t), t.bytes_len);
    fx_strtab_destroy(&t);
}
END_TEST

/* Each allocation an intern may make (arena, id column, index) fails in turn: the table keeps
 * its content, and works afterwards. */
START_TEST(test_strtab_allocation_failure_leaves_table_unchanged)
{
    struct fx_strtab t = {0};
    char buf[32];
    int failures = 0;
    for (int i = 0; i < 2000; i++) {
        snprintf(buf, sizeof(buf), "name-%d", i);
        for (long n = 1; n <= 3; n++) {
            uint32_t before = t.count, out = 12345;
            fx_alloc_fail_after(n);
            int rc = fx_strtab_intern(&t, buf, strlen(buf), &out);
            fx_alloc_fail_after(0);
            if (rc == FX_OK) {
                ck_assert_uint_eq(out, before);
                break;
            }
            failures++;
            ck_assert_int_eq(rc, FX_ENOMEM);
            ck_assert_uint_eq(out, 12345);
            ck_assert_uint_eq(t.count, before);
            ck_assert_uint_eq(fx_strtab_find(&t, buf, strlen(buf)), FX_ROWIDX_NONE);
        }
        ck_assert_uint_eq(t.count, (uint32_t)i + 1);
    }
    ck_assert_int_gt(failures, 3); /* growth of each part happened under injection */
    for (int i = 0; i < 2000; i++) {
        snprintf(buf, sizeof(buf), "name-%d", i);
        ck_assert_uint_eq(fx_strtab_find(&t, buf, strlen(buf)), (uint32_t)i);
    }
    fx_strtab_destroy(&t);
}
END_TEST

START_TEST(test_strtab_destroy_of_zeroed_table_is_noop)
{
    struct fx_strtab t = {0};
    ck_assert_uint_eq(fx_strtab_memory(&t), 0);
    ck_assert_uint_eq(fx_strtab_find(&t, "x", 1), FX_ROWIDX_NONE);
    fx_strtab_destroy(&t);
    fx_strtab_destroy(&t);
    fx_strtab_destroy(NULL);
}
END_TEST

static Suite *strtab_suite(void)
{
    Suite *s = suite_create("strtab");
    TCase *tc = tcase_create("intern");
    tcase_set_timeout(tc, 120); /* generous: CI machines are shared and sanitized */
    tcase_add_test(tc, test_strtab_same_string_same_id);
    tcase_add_test(tc, test_strtab_bytes_not_c_strings_are_the_key);
    tcase_add_test(tc, test_strtab_hash_collisions_never_merge_strings);
    tcase_add_test(tc, test_strtab_many_strings_survive_growth);
    suite_add_tcase(s, tc);
    tc = tcase_create("failure");
    tcase_set_timeout(tc, 120); /* generous: CI machines are shared and sanitized */
    tcase_add_test(tc, test_strtab_allocation_failure_leaves_table_unchanged);
    tcase_add_test(tc, test_strtab_destroy_of_zeroed_table_is_noop);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(strtab_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
