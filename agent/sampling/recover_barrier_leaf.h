/* SPDX-License-Identifier: Apache-2.0 */
/* Private to agent/sampling: the step over C1's g1_post_barrier_slow from the VM code it called
 * (recover_barrier_leaf.c, issue 32, docs/VALIDATION.md 8.5i), for recover_vmcode.c,
 * native_below.c and the unit tests. */
#ifndef FX_RECOVER_BARRIER_LEAF_H
#define FX_RECOVER_BARRIER_LEAF_H

#include "internal.h"

/* Pure (unit-tested): `at` is the first Java code address the native walk from a leaf in VM code
 * reached (return address, sp, rbp), in C1's g1_post_barrier_slow (stub): it must lie right
 * after a call whose target the instruction holds (*target, for the caller to check it is
 * native code), in the stub's rbp frame (recover_stub.c's rule, past its head and not at a
 * ret); *out is then the stub's caller (the return address into the C1 method's slow-case
 * code, its sp and rbp). FX_REC_C1_BARRIER, or why not (< 0). */
int fx_recover_barrier_leaf(const struct fx_code_range *stub, const struct fx_regs *at,
                            uintptr_t lo, uintptr_t hi, uintptr_t *target, struct fx_regs *out);

/* Signal-safe, under the caller's reader bracket of tab: when *at (from
 * fx_native_walk_to_java_sigsafe) lies in g1_post_barrier_slow after its call to native code,
 * *at becomes the registers at the barrier's branch in the C1 caller (fx_recover_continuation)
 * and *stub the stub's range: true. false (nothing changed) otherwise. */
bool fx_recover_barrier_leaf_step(const struct fx_code_table *tab, struct fx_heap_memo *m,
                                  uintptr_t lo, uintptr_t hi, struct fx_regs *at,
                                  struct fx_code_range *stub);

#endif
