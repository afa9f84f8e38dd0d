/* SPDX-License-Identifier: Apache-2.0 */
/* The stub names of the code map (agent/sampling/codemap.c, issue 30 item 11), without a JVM:
 * DynamicCodeGenerated events as HotSpot posts them, then the published table's ranges and the
 * names their frames get. An adapter posted with its fingerprint ("I2C/C2I adapters(0x...)")
 * is named "I2C/C2I adapters", one name for all of them; other stubs keep their names. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* What codemap.c needs from the rest of the agent: the handler's state, and VMStructs that know
 * no blob (no layout, no frame size). */
struct fx_sigstate fx_sig;

bool fx_vmstructs_nmethod(uintptr_t code_addr, struct fx_nmethod_layout *out)
{
    (void)code_addr, (void)out;
    return false;
}

int32_t fx_vmstructs_stub_frame_words(uintptr_t code_addr)
{
    (void)code_addr;
    return -1;
}

static uint8_t code[4][64];

static const char *name_at(const void *pc)
{
    const struct fx_code_range *r = fx_recover_find(fx_sig.code_table, (uintptr_t)pc);
    ck_assert_ptr_nonnull(r);
    return fx_codemap_stub_name(r->name);
}

START_TEST(test_codemap_stub_names_as_users_read_them)
{
    ck_assert_int_eq(fx_codemap_setup(), FX_OK);
    fx_codemap_dynamic_code("I2C/C2I adapters(0xbbbbbbbaab)", code[0], 64);
    fx_codemap_dynamic_code("I2C/C2I adapters(0xa)", code[1], 64);
    fx_codemap_dynamic_code("I2C/C2I adapters", code[2], 64);
    fx_codemap_dynamic_code("vtable stub", code[3], 64);
    fx_codemap_publish();
    ck_assert_ptr_nonnull(fx_sig.code_table);
    ck_assert_uint_eq(fx_sig.code_table->n, 4);
    for (int i = 0; i < 3; i++)
        ck_assert_str_eq(name_at(code[i] + 8), "I2C/C2I adapters");
    ck_assert_str_eq(name_at(code[3]), "vtable stub");
    /* one name for every adapter: the same function in the call tree */
    const struct fx_code_range *a = fx_recover_find(fx_sig.code_table, (uintptr_t)code[0]);
    const struct fx_code_range *b = fx_recover_find(fx_sig.code_table, (uintptr_t)code[1]);
    ck_assert_uint_eq(a->name, b->name);
    ck_assert_int_eq(a->kind, FX_BLOB_ADAPTER);
}
END_TEST

static Suite *codemap_suite(void)
{
    Suite *s = suite_create("codemap");
    TCase *tc = tcase_create("names");
    tcase_add_test(tc, test_codemap_stub_names_as_users_read_them);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(codemap_suite());
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
