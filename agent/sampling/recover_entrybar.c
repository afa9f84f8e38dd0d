/* SPDX-License-Identifier: Apache-2.0 */
/* THE SIGNAL PATH: samples in native code that JDK 25's nmethod entry barrier stub called
 * (issue 32, docs/VALIDATION.md 8.5j), for recover_vmcode.c. Same rules and allow-list as the
 * handler (agent/signal_allowlist.txt): no calls but the inline lookups, no allocation, every
 * word read inside the thread's stack or a code range.
 *
 * A compiled method's prologue checks its entry barrier; when armed (after a GC phase or class
 * unloading) it calls StubRoutines::method_entry_barrier, which calls
 * BarrierSetNMethod::nmethod_stub_entry_barrier as a leaf (call_VM_leaf: no anchor, the thread
 * stays in Java). ASGCT fails there (-5/-6). The stub (StubGenerator::
 * generate_method_entry_barrier, x86_64) is `push -1` (the cookie deoptimize() writes the new
 * rsp into), `enter`, saves, the runtime call, restores, `leave; add rsp, 8; ret`: at its
 * runtime call's return address rbp is its frame pointer (callee-saved across the call),
 * [rbp] the caller's rbp, [rbp + 8] the cookie, [rbp + 16] the return address into the entered
 * nmethod. That lies in the nmethod's prologue (C1: `cmp; je cont; call stub; cont:`) or in
 * C2's out-of-line stub (`call stub; jmp continuation`, the continuation right after the
 * prologue's `jne` to it); the prologue's decode (recover.c, 8.3) then gives the entered
 * method's caller. */
#include "recover_entrybar.h"
#include "codeheap.h"
#include "native_walk.h"
#include "recover_anchor.h"
#include "recover_x86.h"

/* The stub's frame is a few hundred bytes (16 registers, 8 xmm, alignment) */
#define FRAME_MAX 4096

/* push -1 (68 FF FF FF FF); push rbp; mov rbp, rsp */
static const uint8_t head[9] = {0x68, 0xFF, 0xFF, 0xFF, 0xFF, 0x55, 0x48, 0x8B, 0xEC};

int fx_recover_entry_barrier(const struct fx_code_range *stub, const struct fx_regs *at,
                             uintptr_t lo, uintptr_t hi, uintptr_t *target, struct fx_regs *out)
{
    if (stub->kind != FX_BLOB_STUB || !(stub->flags & FX_RANGE_ENTRY_BARRIER))
        return FX_REC_STUB;
    if (!fx_recover_in(stub, stub->begin, sizeof(head)))
        return FX_REC_DECODE;
    for (size_t i = 0; i < sizeof(head); i++) /* no memcmp: not on the signal allow-list */
        if (fx_recover_code(stub->begin)[i] != head[i])
            return FX_REC_DECODE;
    /* a return address past the head (the stub's calls all lie between enter and leave) */
    if (at->pc < stub->begin + sizeof(head) + 5 || !fx_recover_in(stub, at->pc, 1) ||
        !fx_recover_after_call(stub, at->pc) || !fx_recover_call_target(stub, at->pc, target))
        return FX_REC_NOT_CALLED;
    uintptr_t saved, cookie, ret;
    if (at->fp <= at->sp || at->fp - at->sp > FRAME_MAX ||
        !fx_recover_stack_word(lo, hi, at->fp, &saved) ||
        !fx_recover_stack_word(lo, hi, at->fp + 8, &cookie) ||
        !fx_recover_stack_word(lo, hi, at->fp + 16, &ret))
        return FX_REC_STACK;
    if (cookie != UINTPTR_MAX) /* deoptimize() rewrote the frame for handle_wrong_method */
        return FX_REC_DECODE;
    out->pc = ret;
    out->sp = at->fp + 24;
    out->fp = saved;
    out->gpr = NULL;
    return FX_REC_STUB_FRAME;
}

bool fx_recover_entry_return(const struct fx_code_range *n, uintptr_t stub, uintptr_t ret,
                             uintptr_t *pc)
{
    uintptr_t target = 0, cont = 0;
    if (n->kind != FX_BLOB_NMETHOD || n->verified == FX_OFF_UNKNOWN ||
        n->complete == FX_OFF_UNKNOWN || (n->flags & FX_RANGE_OSR) || ret < n->begin + 5 ||
        !fx_recover_in(n, ret - 5, 5) || fx_recover_code(ret - 5)[0] != 0xE8 ||
        !fx_recover_call_target(n, ret, &target) || target != stub)
        return false;
    uintptr_t vep = n->begin + n->verified, done = n->begin + n->complete;
    if (ret > vep && ret <= done) { /* C1: the call inline, last in the prologue */
        *pc = ret;
        return true;
    }
    if (ret <= done || !fx_recover_continuation(n, ret, &cont) || cont <= vep || cont > done)
        return false;
    *pc = cont;
    return true;
}

bool fx_recover_entry_barrier_step(const struct fx_code_table *tab, struct fx_heap_memo *m,
                                   uintptr_t lo, uintptr_t hi, struct fx_regs *at,
                                   struct fx_code_range *stub, struct fx_code_range *nm)
{
#if defined(__x86_64__)
    const struct fx_code_range *r = fx_recover_find(tab, at->pc);
    if (r == NULL || !(r->flags & FX_RANGE_ENTRY_BARRIER))
        return false;
    uintptr_t target = 0, pc = 0;
    struct fx_regs c, caller;
    if (fx_recover_entry_barrier(r, at, lo, hi, &target, &c) != FX_REC_STUB_FRAME ||
        fx_recover_find(tab, target) != NULL || !fx_native_in_mapped_file_sigsafe(target))
        return false;
    memcpy(stub, r, sizeof(*stub));
    long cid_off = __atomic_load_n(&fx_sig.compile_id_off, __ATOMIC_RELAXED);
    const struct fx_code_range *n = fx_recover_find_any(tab, c.pc, m);
    if (n == NULL || n->kind != FX_BLOB_NMETHOD || !fx_recover_blob_current(n, cid_off) ||
        !fx_recover_entry_return(n, stub->begin, c.pc, &pc))
        return false;
    memcpy(nm, n, sizeof(*nm));
    /* C2 sets the frame complete right after the barrier: the continuation may be that
     * offset. The prologue's decode from the verified entry to pc is the proof either way
     * (nothing lies between the jne and the continuation), so the copy's end of the prologue
     * is moved past pc for recover.c's rule to decode up to it. */
    struct fx_code_range n2 = *nm;
    if (pc == n2.begin + n2.complete)
        n2.complete++;
    c.pc = pc;
    if (fx_recover_caller(&n2, &c, lo, hi, true, &caller) != FX_REC_PROLOGUE || caller.sp <= c.sp)
        return false;
    /* deoptimize() writes handle_wrong_method's entry, a blob's first byte, into the entered
     * method's return slot; a return address never is one */
    const struct fx_code_range *w = fx_recover_find(tab, caller.pc);
    if (w != NULL && w->begin == caller.pc)
        return false;
    *at = caller;
    return true;
#else
    (void)tab, (void)m, (void)lo, (void)hi, (void)at, (void)stub, (void)nm;
    return false;
#endif
}
