/* SPDX-License-Identifier: Apache-2.0 */
/* THE SIGNAL PATH (signal_handler.c's rules and allow-list): the leaf native walk's step over a
 * stub the VM called from C++ (issue 32, session 26, docs/VALIDATION.md 8.5h), for
 * native_walk.c: the interrupted registers moved to the stub's native caller by
 * recover_vmstub.c's proven rules. Apart from native_below.c, which calls native_walk.c, so that
 * no file of the two calls the other back. Tests: unit.native_walk (a stand-in of this step),
 * unit.recover_vmstub (the rules). */
#include "native_walk.h"
#include "recover_anchor.h"
#include "recover_x86.h"

#include <string.h>

#if defined(__x86_64__)
/* Signal-safe (session 26, docs/VALIDATION.md 8.5h): *at, the interrupted registers, moved to
 * the caller of a stub the VM called (fx_recover_vm_stub_top: a frameless stub on top while the
 * anchor holds a last Java frame) by recover_vmstub.c's proven step, when that caller is outside
 * the code table (native code: native_walk.c then checks it lies in a file mapping). */
static bool vm_stub_step_sigsafe(const struct fx_thread *t, const struct fx_code_table *tab,
                                 struct fx_regs *at)
{
    long sp_off = __atomic_load_n(&fx_sig.anchor_sp_off, __ATOMIC_RELAXED);
    uintptr_t last_sp = 0;
    if (tab == NULL || t->env == NULL || sp_off == 0 || t->stack_lo == 0)
        return false;
    memcpy(&last_sp, (const char *)t->env + sp_off, sizeof(last_sp));
    const struct fx_code_range *r = fx_recover_find(tab, at->pc);
    struct fx_regs next;
    if (!fx_recover_vm_stub_top(r, last_sp) ||
        fx_recover_vm_stub_step(r, at, t->stack_lo, t->stack_hi, &next) != FX_REC_STUB_FRAME ||
        next.sp <= at->sp || next.sp > last_sp || fx_recover_find(tab, next.pc - 1) != NULL)
        return false;
    *at = next;
    return true;
}
#endif

bool fx_native_vm_stub_sigsafe(const struct fx_thread *t, struct fx_regs *at)
{
#if defined(__x86_64__)
    __atomic_add_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    const struct fx_code_table *tab = __atomic_load_n(&fx_sig.code_table, __ATOMIC_SEQ_CST);
    bool ok = vm_stub_step_sigsafe(t, tab, at);
    __atomic_sub_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    return ok;
#else
    (void)t, (void)at;
    return false;
#endif
}
