/* SPDX-License-Identifier: Apache-2.0 */
/* THE SIGNAL PATH: docs/VALIDATION.md 8.5a's bci-0 refusal, the one rule every recovery that asks
 * AsyncGetCallTrace to walk from a caller's context applies to the frame it names first
 * (signal_handler.c, native_below.c's leaf rule, recover_vmcode.c's barrier steps,
 * recover_partial.c): below them all, so none of them calls another for it. */
#ifndef FX_RECOVER_BCI0_H
#define FX_RECOVER_BCI0_H

#include "internal.h"

/* docs/VALIDATION.md 8.5a: may f, AsyncGetCallTrace's first frame from a caller's context (pc =
 * return address - 1), be its fallback for a compiled frame with no PcDesc holding a scope at
 * or after the return address (forte.cpp is_decipherable_compiled_frame fails, then
 * vframeStreamCommon::fill_from_frame, thread in Java, or fill_from_compiled_frame's range
 * check: fill_from_compiled_native_frame, the nmethod's own method at bci 0, no inlined
 * frames)? A deoptimized caller, whose return address HotSpot patched to its deopt handler in
 * the stub section, comes back so. n: the current nmethod holding pc - 1 (NULL: none known).
 * Refused: bci 0 with n unknown or not an nmethod, the method unknown (0) or n's own. A frame at
 * bci 0 of another method comes from a scope of n's debug information (an inlined method's call
 * at its bci 0: System.nanoTime first in Budget.more, inlined): the fallback never names one.
 * Tests: unit.recover_vmcode. */
static inline bool fx_recover_bci0_refused(int32_t lineno, uint64_t method,
                                           const struct fx_code_range *n)
{
    return lineno == 0 &&
           (n == NULL || n->kind != FX_BLOB_NMETHOD || method == 0 || method == n->name);
}

/* Signal-safe: fx_recover_bci0_refused for frame f named from the caller's context at caller_pc
 * (a return address or continuation), the nmethod holding caller_pc - 1 looked up (m: the
 * sample's code heap lookups) and its compile id checked; its own method at bci 0 is kept where
 * its first PcDesc at or after caller_pc holds a scope (recover_pcdesc.h: AsyncGetCallTrace
 * decoded it, a real call at bci 0). */
bool fx_recover_bci0_sigsafe(const fx_asgct_frame *f, uintptr_t caller_pc, struct fx_heap_memo *m);

#endif
