/* SPDX-License-Identifier: Apache-2.0 */
/* Part of THE SIGNAL PATH (signal_handler.c's rules and allow-list): the proof a frameless
 * callee's recovery needs of the table, an inline cache stub's (FX_REC_ICSTUB, recover_icstub.c,
 * docs/VALIDATION.md 8.5k) and a method handle intrinsic's (FX_REC_MH_INTRINSIC,
 * recover_mhintr.c, 8.5l): the compiled method its return address lies in, current (its compile
 * id), looked up under the code table's reader bracket as signal_handler.c's lookups are. */
#include "internal.h"
#include "recover_anchor.h"
#include "recover_x86.h"

bool fx_recover_called_sigsafe(int rc, const struct fx_code_range *buf, uintptr_t pc, uintptr_t ret,
                               struct fx_heap_memo *m)
{
    if (rc != FX_REC_ICSTUB && rc != FX_REC_MH_INTRINSIC)
        return true;
    struct fx_code_range n;
    __atomic_add_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    const struct fx_code_table *tab = __atomic_load_n(&fx_sig.code_table, __ATOMIC_SEQ_CST);
    const struct fx_code_range *r = fx_recover_find_any(tab, ret, m);
    if (r != NULL)
        memcpy(&n, r, sizeof(n));
    __atomic_sub_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    return r != NULL && n.kind == FX_BLOB_NMETHOD &&
           fx_recover_blob_current(&n, __atomic_load_n(&fx_sig.compile_id_off, __ATOMIC_RELAXED)) &&
           (rc == FX_REC_ICSTUB ? fx_recover_icstub_called(buf, &n, pc, ret)
                                : fx_recover_mh_called(buf, &n, ret));
}
