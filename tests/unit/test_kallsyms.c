/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of core/symbols/kallsyms.c: synthetic kallsyms files (normal, kptr_restrict zeros,
 * malformed, empty, missing), lookups between and beyond symbols, the real /proc/kallsyms. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_kallsyms.h"
#include "unit_tmpfile.h"

static const char KALLSYMS[] = "ffffffff81000000 T _stext\n"
                               "ffffffff81000000 t srso_alias_local\n"
                               "ffffffff81002000 T ksys_write\n"
                               "ffffffff81001000 t vfs_write\n" /* out of order */
                               "ffffffff81900000 D some_data\n"
                               "ffffffff81003000 W weak_text\n"
                               "ffffffffc0a01000 t ext4_file_write_iter\t[ext4]\n";

static struct fx_kallsyms *read_text(const char *text)
{
    char path[64];
    unit_tmpfile_str(path, text);
    struct fx_kallsyms *k = NULL;
    ck_assert_int_eq(fx_kallsyms_read(path, &k), FX_OK);
    unlink(path);
    ck_assert_ptr_nonnull(k);
    return k;
}

static const char *name_at(const struct fx_kallsyms *k, uint64_t addr)
{
    const struct fx_kallsyms_sym *s = fx_kallsyms_lookup(k, addr);
    return s ? fx_kallsyms_name(k, s) : NULL;
}

START_TEST(test_kallsyms_text_symbols_sorted_and_named)
{
    struct fx_kallsyms *k = read_text(KALLSYMS);
    ck_assert_str_eq(k->reason, "");
    ck_assert_uint_eq(k->count, 6); /* the D symbol is not text */
    for (size_t i = 1; i < k->count; i++)
        ck_assert_uint_le(k->syms[i - 1].addr, k->syms[i].addr);
    ck_assert_str_eq(name_at(k, 0xffffffff81000000u), "_stext"); /* global before local alias */
    ck_assert_str_eq(name_at(k, 0xffffffff81000fffu), "_stext");
    ck_assert_str_eq(name_at(k, 0xffffffff81001010u), "vfs_write");
    ck_assert_str_eq(name_at(k, 0xffffffff81002000u), "ksys_write");
    ck_assert_str_eq(name_at(k, 0xffffffff81003004u), "weak_text");
    const struct fx_kallsyms_sym *m = fx_kallsyms_lookup(k, 0xffffffffc0a01040u);
    ck_assert_str_eq(fx_kallsyms_name(k, m), "ext4_file_write_iter");
    ck_assert_str_eq(fx_kallsyms_module(k, m), "ext4");
    ck_assert_str_eq(fx_kallsyms_module(k, fx_kallsyms_lookup(k, 0xffffffff81002000u)), "");
    fx_kallsyms_free(k);
}
END_TEST

START_TEST(test_kallsyms_no_name_below_first_or_far_past_a_symbol)
{
    struct fx_kallsyms *k = read_text(KALLSYMS);
    ck_assert_ptr_null(fx_kallsyms_lookup(k, 0xffffffff80ffffffu));
    ck_assert_ptr_null(fx_kallsyms_lookup(k, 0));
    ck_assert_ptr_nonnull(fx_kallsyms_lookup(k, 0xffffffffc0a01000u + FX_KALLSYMS_MAX_SPAN));
    ck_assert_ptr_null(fx_kallsyms_lookup(k, 0xffffffffc0a01000u + FX_KALLSYMS_MAX_SPAN + 1));
    ck_assert_ptr_null(fx_kallsyms_lookup(k, UINT64_MAX));
    fx_kallsyms_free(k);
}
END_TEST

static void expect_unusable(const char *text, const char *needle)
{
    struct fx_kallsyms *k = read_text(text);
    ck_assert_uint_eq(k->count, 0);
    ck_assert_ptr_null(fx_kallsyms_lookup(k, 0));
    ck_assert_ptr_null(fx_kallsyms_lookup(k, 0xffffffff81000000u));
    ck_assert_msg(strstr(k->reason, needle), "reason '%s' lacks '%s'", k->reason, needle);
    ck_assert_ptr_null(strchr(k->reason, '\n'));
    fx_kallsyms_free(k);
}

START_TEST(test_kallsyms_all_zero_addresses_say_kptr_restrict)
{
    expect_unusable("0000000000000000 T _stext\n0000000000000000 t vfs_write\n"
                    "0000000000000000 t ext4_sync_fs\t[ext4]\n",
                    "every address in /");
    expect_unusable("0000000000000000 T _stext\n", "kernel.kptr_restrict hides them");
}
END_TEST

START_TEST(test_kallsyms_bad_files_give_a_reason)
{
    expect_unusable("", "has no text symbol");
    expect_unusable("ffffffff81000000 D data_only\n", "has no text symbol");
    expect_unusable("ffffffff81000000 T _stext\nnonsense\n", ":2: not a kallsyms line");
    expect_unusable("ffffffff81000000 T f\t[unclosed\n", ":1: not a kallsyms line");
    struct fx_kallsyms *k = NULL;
    ck_assert_int_eq(fx_kallsyms_read("/nonexistent/kallsyms", &k), FX_OK);
    ck_assert_uint_eq(k->count, 0);
    ck_assert_str_eq(
            k->reason,
            "kernel symbols unavailable: /nonexistent/kallsyms: No such file or directory");
    fx_kallsyms_free(k);
}
END_TEST

START_TEST(test_kallsyms_allocation_failure_returns_nomem)
{
    char path[64];
    unit_tmpfile_str(path, KALLSYMS);
    int failures = 0;
    for (long n = 1; n < 20; n++) {
        struct fx_kallsyms *k = (struct fx_kallsyms *)1;
        fx_alloc_fail_after(n);
        int rc = fx_kallsyms_read(path, &k);
        fx_alloc_fail_after(0);
        if (rc == FX_OK) {
            ck_assert_uint_eq(k->count, 6);
            fx_kallsyms_free(k);
            break;
        }
        ck_assert_int_eq(rc, FX_ENOMEM);
        ck_assert_ptr_null(k);
        failures++;
    }
    unlink(path);
    ck_assert_int_ge(failures, 4);
}
END_TEST

/* Whatever this machine allows: usable with symbols, or empty with a reason, never both. */
START_TEST(test_kallsyms_real_file_is_usable_or_says_why)
{
    struct fx_kallsyms *k = NULL;
    ck_assert_int_eq(fx_kallsyms_read("/proc/kallsyms", &k), FX_OK);
    if (k->count) {
        ck_assert_str_eq(k->reason, "");
        ck_assert_ptr_nonnull(fx_kallsyms_lookup(k, k->syms[k->count / 2].addr));
    } else {
        ck_assert_str_ne(k->reason, "");
        fprintf(stderr, "kallsyms here: %s\n", k->reason);
    }
    fx_kallsyms_free(k);
}
END_TEST

static Suite *kallsyms_suite(void)
{
    Suite *s = suite_create("kallsyms");
    TCase *tc = tcase_create("lookup");
    tcase_set_timeout(tc, 120); /* generous: CI machines are shared and sanitized */
    tcase_add_test(tc, test_kallsyms_text_symbols_sorted_and_named);
    tcase_add_test(tc, test_kallsyms_no_name_below_first_or_far_past_a_symbol);
    tcase_add_test(tc, test_kallsyms_real_file_is_usable_or_says_why);
    suite_add_tcase(s, tc);
    tc = tcase_create("unusable");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_kallsyms_all_zero_addresses_say_kptr_restrict);
    tcase_add_test(tc, test_kallsyms_bad_files_give_a_reason);
    tcase_add_test(tc, test_kallsyms_allocation_failure_returns_nomem);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(kallsyms_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
