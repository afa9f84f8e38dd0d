/* SPDX-License-Identifier: Apache-2.0 */
/* THE SIGNAL PATH: the bci-0 refusal (recover_bci0.h, docs/VALIDATION.md 8.5a) with its lookup of
 * the caller's nmethod and its PcDesc. Same rules and allow-list as the handler
 * (agent/signal_allowlist.txt): the inline lookups, atomics, no allocation. Tests:
 * unit.recover_vmcode (test_bci0). */
#include "recover_bci0.h"
#include "recover_anchor.h"
#include "recover_pcdesc.h"
#include "recover_x86.h"

bool fx_recover_bci0_sigsafe(const fx_asgct_frame *f, uintptr_t caller_pc, struct fx_heap_memo *m)
{
    if (f->lineno != 0)
        return false;
#if defined(__x86_64__)
    __atomic_add_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    const struct fx_code_range *r = fx_recover_find_any(
            __atomic_load_n(&fx_sig.code_table, __ATOMIC_SEQ_CST), caller_pc - 1, m);
    /* the nmethod's own method at bci 0: the fallback's unless a PcDesc with a scope lies at
     * or after the return address, which AsyncGetCallTrace then decoded (a real call at bci 0) */
    bool refused = r == NULL ||
                   !fx_recover_blob_current(
                           r, __atomic_load_n(&fx_sig.compile_id_off, __ATOMIC_RELAXED)) ||
                   (fx_recover_bci0_refused(f->lineno, (uint64_t)(uintptr_t)f->method_id, r) &&
                    !fx_recover_pcdesc_scoped(NULL, r, caller_pc));
    __atomic_sub_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    return refused;
#else
    (void)caller_pc, (void)m;
    return true;
#endif
}
