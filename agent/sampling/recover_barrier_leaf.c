/* SPDX-License-Identifier: Apache-2.0 */
/* THE SIGNAL PATH: the step over C1's g1_post_barrier_slow from the VM code it called (G1's card
 * refinement), for recover_vmcode.c and native_below.c (issue 32, docs/VALIDATION.md 8.5i): the
 * native walk's first Java code address, right after the stub's runtime call, gives the stub's
 * rbp frame (8.5c) and its C1 caller's barrier branch. A file of its own so that the Java walk's
 * recovery and the walk below both call it, neither the other. Same rules and allow-list as the
 * handler (agent/signal_allowlist.txt). */
#include "recover_barrier_leaf.h"
#include "native_walk.h"
#include "recover_anchor.h"
#include "recover_x86.h"

int fx_recover_barrier_leaf(const struct fx_code_range *stub, const struct fx_regs *at,
                            uintptr_t lo, uintptr_t hi, uintptr_t *target, struct fx_regs *out)
{
    if (stub->kind != FX_BLOB_C1_BARRIER)
        return FX_REC_STUB;
    /* the return address of the stub's runtime call: after a call whose target it holds */
    if (!fx_recover_after_call(stub, at->pc) || !fx_recover_call_target(stub, at->pc, target))
        return FX_REC_NOT_CALLED;
    /* in the body (past push rbp; mov rbp, rsp, not at a ret): [rbp + 8] is the slot */
    if (at->pc < stub->begin + 4 || !fx_recover_in(stub, at->pc, 1) ||
        fx_recover_code(at->pc)[0] == 0xC3)
        return FX_REC_DECODE;
    int rc = fx_recover_rbp_frame(stub, at, lo, hi, out);
    return rc == FX_REC_STUB_FRAME ? FX_REC_C1_BARRIER : rc == FX_REC_STUB ? FX_REC_DECODE : rc;
}

#if defined(__x86_64__)
bool fx_recover_barrier_leaf_step(const struct fx_code_table *tab, struct fx_heap_memo *m,
                                  uintptr_t lo, uintptr_t hi, struct fx_regs *at,
                                  struct fx_code_range *stub)
{
    const struct fx_code_range *r = fx_recover_find(tab, at->pc);
    if (r == NULL || r->kind != FX_BLOB_C1_BARRIER)
        return false;
    uintptr_t target = 0;
    struct fx_regs c;
    if (fx_recover_barrier_leaf(r, at, lo, hi, &target, &c) != FX_REC_C1_BARRIER ||
        fx_recover_find(tab, target) != NULL || !fx_native_in_mapped_file_sigsafe(target))
        return false;
    /* the caller: a current C1 method's slow-case code, its jmp back to the continuation */
    long cid_off = __atomic_load_n(&fx_sig.compile_id_off, __ATOMIC_RELAXED);
    memcpy(stub, r, sizeof(*stub));
    const struct fx_code_range *n = fx_recover_find_any(tab, c.pc, m);
    if (n == NULL || n->kind != FX_BLOB_NMETHOD || !fx_recover_blob_current(n, cid_off) ||
        !fx_recover_continuation(n, c.pc, &c.pc) || c.sp <= at->sp)
        return false;
    *at = c;
    return true;
}
#endif
