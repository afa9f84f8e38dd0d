/* SPDX-License-Identifier: Apache-2.0 */
/* Part of THE SIGNAL PATH (signal_handler.c's rules and allow-list): the proof an inline cache
 * stub's recovery (FX_REC_ICSTUB, recover_icstub.c, docs/VALIDATION.md 8.5k) needs of the table:
 * the compiled method its return address lies in, current (its compile id), looked up under the
 * code table's reader bracket as signal_handler.c's lookups are. */
#include "internal.h"
#include "recover_anchor.h"
#include "recover_x86.h"

bool fx_recover_icstub_sigsafe(const struct fx_code_range *buf, uintptr_t pc, uintptr_t ret,
                               struct fx_heap_memo *m)
{
    struct fx_code_range n;
    __atomic_add_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    const struct fx_code_table *tab = __atomic_load_n(&fx_sig.code_table, __ATOMIC_SEQ_CST);
    const struct fx_code_range *r = fx_recover_find_any(tab, ret, m);
    if (r != NULL)
        memcpy(&n, r, sizeof(n));
    __atomic_sub_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    return r != NULL && n.kind == FX_BLOB_NMETHOD &&
           fx_recover_blob_current(&n, __atomic_load_n(&fx_sig.compile_id_off, __ATOMIC_RELAXED)) &&
           fx_recover_icstub_called(buf, &n, pc, ret);
}
