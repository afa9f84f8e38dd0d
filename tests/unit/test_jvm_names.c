/* SPDX-License-Identifier: Apache-2.0 */
/* The JVM's own names as users read them (core/symbols/jvm_names.c, issue 30 item 11): a thread's
 * 15-character comm written out in full only when one HotSpot name starts with it (a numbered
 * family only for its only thread), otherwise kept and marked "…"; a stub's name without an
 * adapter's fingerprint. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "fx_jvm_names.h"

#define CUT "\xe2\x80\xa6"

static void expect(const char *comm, unsigned same, enum fx_thread_name_kind want_kind,
                   const char *want)
{
    char out[64];
    ck_assert_int_eq(fx_jvm_names_thread(comm, same, out, sizeof(out)), want_kind);
    ck_assert_str_eq(out, want);
}

START_TEST(test_jvm_names_threads)
{
    expect("VM Periodic Tas", 0, FX_THREAD_NAME_FULL, "VM Periodic Task Thread");
    expect("Monitor Deflati", 0, FX_THREAD_NAME_FULL, "Monitor Deflation Thread");
    expect("G1 Young RemSet", 0, FX_THREAD_NAME_FULL, "G1 Young RemSet Sampling");
    /* shorter than 15: the whole name */
    expect("VM Thread", 0, FX_THREAD_NAME_WHOLE, "VM Thread");
    expect("GC Thread#0", 0, FX_THREAD_NAME_WHOLE, "GC Thread#0");
    expect("fxmixed-burner", 0, FX_THREAD_NAME_WHOLE, "fxmixed-burner");
    /* exactly 15 and known whole */
    expect("Attach Listener", 0, FX_THREAD_NAME_WHOLE, "Attach Listener");
    /* a numbered family: number 0 for the only one, "…" when several could be any number */
    ck_assert(fx_jvm_names_numbered("C2 CompilerThre"));
    ck_assert(!fx_jvm_names_numbered("VM Periodic Tas"));
    ck_assert(!fx_jvm_names_numbered("C2 CompilerThr"));
    expect("C2 CompilerThre", 1, FX_THREAD_NAME_NUMBERED, "C2 CompilerThread0");
    expect("C1 CompilerThre", 1, FX_THREAD_NAME_NUMBERED, "C1 CompilerThread0");
    expect("C2 CompilerThre", 2, FX_THREAD_NAME_CUT, "C2 CompilerThre" CUT);
    expect("C2 CompilerThre", 0, FX_THREAD_NAME_CUT, "C2 CompilerThre" CUT);
    expect("JVMCI CompilerT", 1, FX_THREAD_NAME_NUMBERED, "JVMCI CompilerThread0");
    /* 15 characters of no known name: perhaps cut, never a guessed tail */
    expect("my-long-worker-", 0, FX_THREAD_NAME_CUT, "my-long-worker-" CUT);
    /* a buffer too small for the full name: the comm, cut to fit */
    char small[8];
    ck_assert_int_eq(fx_jvm_names_thread("VM Periodic Tas", 0, small, sizeof(small)),
                     FX_THREAD_NAME_WHOLE);
    ck_assert_str_eq(small, "VM Peri");
}
END_TEST

START_TEST(test_jvm_names_stubs)
{
    struct {
        const char *name;
        size_t len;
    } cases[] = {{"I2C/C2I adapters(0xbbbbbbbaab)", 16},
                 {"I2C/C2I adapters(0xa)", 16},
                 {"I2C/C2I adapters", 16},
                 {"I2C/C2I adapters (0xBEEF)", 16},
                 {"StubRoutines (1)", 16},
                 {"vtable stub", 11},
                 {"x(0x)", 5},
                 {"(0x1f)", 6},
                 {"adapters(0xbbg)", 15},
                 {"", 0}};
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ck_assert_uint_eq(fx_jvm_names_stub_len(cases[i].name), cases[i].len);
}
END_TEST

static Suite *jvm_names_suite(void)
{
    Suite *s = suite_create("jvm_names");
    TCase *tc = tcase_create("names");
    tcase_add_test(tc, test_jvm_names_threads);
    tcase_add_test(tc, test_jvm_names_stubs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(jvm_names_suite());
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
