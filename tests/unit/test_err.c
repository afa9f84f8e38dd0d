/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "fx_err.h"

START_TEST(test_err_every_code_has_distinct_name_and_message)
{
    static const int codes[] = {
#define CODE(name, value, msg) FX_E##name,
            FX_ERR_MAP(CODE)
#undef CODE
    };
    size_t n = sizeof(codes) / sizeof(codes[0]);
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_lt(codes[i], 0);
        ck_assert_str_ne(fx_err_name(codes[i]), "FX_E?");
        ck_assert_str_ne(fx_strerror(codes[i]), "unknown error");
        for (size_t k = 0; k < i; k++) {
            ck_assert_str_ne(fx_err_name(codes[i]), fx_err_name(codes[k]));
            ck_assert_str_ne(fx_strerror(codes[i]), fx_strerror(codes[k]));
        }
    }
}
END_TEST

START_TEST(test_err_names_match_the_table)
{
    ck_assert_str_eq(fx_err_name(FX_ENOMEM), "FX_ENOMEM");
    ck_assert_str_eq(fx_err_name(FX_EIO), "FX_EIO");
    ck_assert_str_eq(fx_err_name(FX_EUNSUPPORTED), "FX_EUNSUPPORTED");
    ck_assert_str_eq(fx_strerror(FX_EIO), "input/output error");
    ck_assert_str_eq(fx_strerror(FX_ENOMEM), "out of memory");
    ck_assert_str_eq(fx_err_name(FX_OK), "FX_OK");
}
END_TEST

START_TEST(test_err_unknown_code_gives_placeholder)
{
    ck_assert_str_eq(fx_err_name(-1000), "FX_E?");
    ck_assert_str_eq(fx_strerror(-1000), "unknown error");
    ck_assert_str_eq(fx_err_name(42), "FX_E?");
}
END_TEST

START_TEST(test_err_errbuf_formats_one_line)
{
    struct fx_errbuf eb;
    fx_errbuf_set(&eb, "option '%s': %d is not %s\n", "interval", 5, "a duration");
    ck_assert_str_eq(eb.msg, "option 'interval': 5 is not a duration");
    fx_errbuf_set(&eb, "path %s", "a\nb\r\n");
    ck_assert_str_eq(eb.msg, "path a b");
    ck_assert_ptr_null(strchr(eb.msg, '\n'));
}
END_TEST

START_TEST(test_err_errbuf_truncates_long_messages)
{
    struct fx_errbuf eb;
    char big[1000];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    fx_errbuf_set(&eb, "%s", big);
    ck_assert_uint_eq(strlen(eb.msg), sizeof(eb.msg) - 1);
    fx_errbuf_set(NULL, "ignored %d", 1); /* a NULL errbuf is allowed and ignored */
}
END_TEST

static Suite *err_suite(void)
{
    Suite *s = suite_create("err");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, test_err_every_code_has_distinct_name_and_message);
    tcase_add_test(tc, test_err_names_match_the_table);
    tcase_add_test(tc, test_err_unknown_code_gives_placeholder);
    suite_add_tcase(s, tc);
    tc = tcase_create("errbuf");
    tcase_add_test(tc, test_err_errbuf_formats_one_line);
    tcase_add_test(tc, test_err_errbuf_truncates_long_messages);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(err_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
