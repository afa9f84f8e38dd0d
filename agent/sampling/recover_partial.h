/* SPDX-License-Identifier: Apache-2.0 */
/* Private to agent/sampling: the partial stack of an intrinsic's stub whose caller's inlining is
 * not proven (recover_partial.c, issue 32, docs/VALIDATION.md 8.5d), for signal_handler.c and
 * the unit tests. Its frame rule: fx_recover_compiled_sender (recover_x86.h),
 * unit.recover_pcdesc.
 */
#ifndef FX_RECOVER_PARTIAL_H
#define FX_RECOVER_PARTIAL_H

#include "internal.h"

/* Signal-safe: why, unless it is FX_REC_NO_PCDESC: the stub's return address `caller` into nmethod
 * n is proven (a call to the stub, n current, not OSR) but not the inlining scope there
 * (FX_REC_NO_PCDESC). trace->frames (depth of them) becomes: the stub's frame (blob),
 * FX_LINE_INLINE_GAP, n's method (FX_LINE_NMETHOD), then AsyncGetCallTrace's frames from n's
 * caller, whose return address must lie after a call in a current nmethod, or in the interpreter or
 * the call stub; else FX_LINE_CALLER_GAP as the root. FX_REC_STUB_PARTIAL, or FX_REC_NO_PCDESC
 * (depth < 4). */
int fx_recover_partial_sigsafe(struct fx_thread *t, const void *ucontext, fx_asgct_trace *trace,
                               uint32_t depth, const fx_asgct_frame *blob,
                               const struct fx_code_range *n, const struct fx_regs *caller,
                               struct fx_heap_memo *m, int why);

#endif
