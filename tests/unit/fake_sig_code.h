/* SPDX-License-Identifier: Apache-2.0 */
/* Fakes of the signal handler's other parts that the recovery rules' unit tests link against
 * (unit.recover_vmcode, unit.recover_entrybar): the handler's state, the mapped-file test (its
 * answer in fake_mapped), the code table as the code (the memo's kept ranges as the code heaps'
 * lookup would give it, where a test sets one), every range
 * current; and the stub bytes of a test, dumped as hex, loaded. Included by one file per test. */
#ifndef FX_TEST_FAKE_SIG_CODE_H
#define FX_TEST_FAKE_SIG_CODE_H

#include <check.h>
#include <stdio.h>
#include <string.h>

struct fx_sigstate fx_sig;
static bool fake_mapped = true; /* fx_native_in_mapped_file_sigsafe's answer */

bool fx_native_in_mapped_file_sigsafe(uintptr_t at)
{
    (void)at;
    return fake_mapped;
}
/* the table, else the memo's kept nmethods standing for the code heaps' (a test sets it) */
const struct fx_code_range *fx_recover_find_any(const struct fx_code_table *t, uintptr_t pc,
                                                struct fx_heap_memo *m)
{
    const struct fx_code_range *r = fx_recover_find(t, pc);
    for (int i = 0; r == NULL && m != NULL && i < FX_HEAP_KEPT; i++)
        if (m->kept[i].end != 0 && pc >= m->kept[i].begin && pc < m->kept[i].end)
            return &m->kept[i];
    return r;
}
bool fx_recover_blob_current(const struct fx_code_range *r, long cid_off)
{
    (void)r, (void)cid_off;
    return true;
}

/* hex ("e8..") into to (cap bytes at most): its length */
static size_t fake_hex_load(uint8_t *to, size_t cap, const char *hex)
{
    size_t n = strlen(hex) / 2;
    ck_assert_uint_le(n, cap);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
        to[i] = (uint8_t)v;
    }
    return n;
}

#endif
