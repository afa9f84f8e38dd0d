/* SPDX-License-Identifier: Apache-2.0 */
/* Private to agent/sampling: the recovery of samples in native code called by JDK 25's nmethod
 * entry barrier stub, StubRoutines::method_entry_barrier (recover_entrybar.c, issue 32,
 * docs/VALIDATION.md 8.5j), for recover_vmcode.c and the unit tests. */
#ifndef FX_RECOVER_ENTRYBAR_H
#define FX_RECOVER_ENTRYBAR_H

#include "internal.h"

/* Pure (unit-tested): `at` is the first Java code address the native walk from a leaf reached
 * (return address, sp, rbp), in the entry barrier stub (a range flagged FX_RANGE_ENTRY_BARRIER):
 * the stub must begin `push -1; push rbp; mov rbp, rsp`, `at->pc` lie past that head right
 * after a call whose target the instruction holds (*target, for the caller to check it is
 * native code), rbp above sp within a frame's reach and in the thread's stack, and the cookie
 * at [rbp + 8] still -1 (BarrierSetNMethod::deoptimize has not rewritten the frame). *out is
 * then the stub's caller: pc = [rbp + 16], sp = rbp + 24, rbp = [rbp]. FX_REC_STUB_FRAME, or why
 * not (< 0). */
int fx_recover_entry_barrier(const struct fx_code_range *stub, const struct fx_regs *at,
                             uintptr_t lo, uintptr_t hi, uintptr_t *target, struct fx_regs *out);

/* Pure (unit-tested): ret, the entry barrier stub's return address in nmethod n (layout known),
 * follows a call rel32 to the stub at `stub`; *pc is where the entered method's prologue goes on:
 * ret itself when it lies in (verified entry, frame complete] (C1's inline call), or the
 * continuation fx_recover_continuation proves when ret lies in C2's out-of-line
 * C2EntryBarrierStub (`call stub; jmp continuation`), the continuation in (verified entry,
 * frame complete]. false otherwise. */
bool fx_recover_entry_return(const struct fx_code_range *n, uintptr_t stub, uintptr_t ret,
                             uintptr_t *pc);

/* Signal-safe, under the caller's reader bracket of tab: when *at (from
 * fx_native_walk_to_java_sigsafe) lies in the entry barrier stub after its call to native code,
 * the stub's frame, the entered nmethod's prologue (recover.c's rule, 8.3) give the registers of
 * the entered method's caller at its call: *at becomes them, *stub the stub's range and *nm the
 * entered nmethod's (current, compile id checked): true. false (nothing changed) otherwise. */
bool fx_recover_entry_barrier_step(const struct fx_code_table *tab, struct fx_heap_memo *m,
                                   uintptr_t lo, uintptr_t hi, struct fx_regs *at,
                                   struct fx_code_range *stub, struct fx_code_range *nm);

#endif
