/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of core/symbols/demangle.c: C++ names demangled, C names and bad input left alone. */
#include <check.h>
#include <stdlib.h>

#include "fx_alloc.h"
#include "fx_demangle.h"

static void expect(const char *mangled, const char *plain)
{
    char *got = fx_demangle(mangled);
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got, plain);
    fx_free(got);
}

START_TEST(test_demangle_cxx_names)
{
    expect("_ZN2fx4test4burnEi", "fx::test::burn(int)");
    expect("_ZNSt6vectorIiSaIiEE9push_backERKi",
           "std::vector<int, std::allocator<int> >::push_back(int const&)");
    expect("_ZN10JavaThread3runEv", "JavaThread::run()");
    expect("_ZL9deflate_fP14internal_statei", "deflate_f(internal_state*, int)");
}
END_TEST

START_TEST(test_demangle_leaves_c_names_and_garbage)
{
    ck_assert_ptr_null(fx_demangle("deflate"));
    ck_assert_ptr_null(fx_demangle("i")); /* would parse as the type int */
    ck_assert_ptr_null(fx_demangle("_Z"));
    ck_assert_ptr_null(fx_demangle("_Zgarbage((("));
    ck_assert_ptr_null(fx_demangle(""));
    ck_assert_ptr_null(fx_demangle(NULL));
}
END_TEST

START_TEST(test_demangle_allocation_failure_returns_null)
{
    fx_alloc_fail_after(1);
    ck_assert_ptr_null(fx_demangle("_ZN2fx4test4burnEi"));
    fx_alloc_fail_after(0);
}
END_TEST

static Suite *demangle_suite(void)
{
    Suite *s = suite_create("demangle");
    TCase *tc = tcase_create("demangle");
    tcase_set_timeout(tc, 120); /* generous: CI machines are shared and sanitized */
    tcase_add_test(tc, test_demangle_cxx_names);
    tcase_add_test(tc, test_demangle_leaves_c_names_and_garbage);
    tcase_add_test(tc, test_demangle_allocation_failure_returns_null);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(demangle_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
