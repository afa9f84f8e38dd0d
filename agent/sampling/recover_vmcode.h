/* SPDX-License-Identifier: Apache-2.0 */
/* Private to agent/sampling: the recovery of samples whose pc is in VM code (C++ in libjvm, or
 * native code it calls) that Java code called while the thread stays `_thread_in_Java`
 * (recover_vmcode.c, issue 32, docs/VALIDATION.md 8.5i), for signal_handler.c, native_below.c
 * and the unit tests. */
#ifndef FX_RECOVER_VMCODE_H
#define FX_RECOVER_VMCODE_H

#include "internal.h"
#include "recover_bci0.h"

/* Signal-safe: AsyncGetCallTrace failed in Java (code -5 or -6) with the pc in native code of a
 * mapped file while the thread's frame anchor holds a last Java frame: a stub called VM code
 * with the anchor set and the thread left in Java (the safepoint blob's
 * handle_polling_page_exception, C1's Runtime1 stubs calling exception_handler_for_pc, C2's
 * exception blob calling handle_exception_C, the deoptimization blob's fetch_unroll_info). The
 * Java frames are then the anchor's, walked as for -3 (recover_anchor.c); an anchor whose frame
 * (its pc, or the word below its sp) is in no known blob (the table, or the code heaps with the
 * sample's memo m) or in a deoptimization blob
 * (FX_RANGE_DEOPT: unpack_frames fills in interpreter frames under it) is not taken. */
bool fx_vmcode_anchored_sigsafe(const struct fx_thread *t, const void *ucontext, int code,
                                struct fx_heap_memo *m);

/* Signal-safe: AsyncGetCallTrace failed in Java (-5, -6) with the pc in no code blob and no last
 * Java frame: the native frames are stepped to Java code; where they return into
 * g1_post_barrier_slow (G1's card refinement under C1's post barrier) the stub's frame and
 * its caller's continuation give the context ASGCT walks from (trace->frames[1..]), the stub's
 * frame on top: FX_REC_C1_BARRIER; elsewhere (code -5) the leaf rule of native_below.c
 * (fx_recover_leaf_native_sigsafe). Or why not (< 0). */
int fx_recover_vmcode_sigsafe(struct fx_thread *t, void *ucontext, fx_asgct_trace *trace,
                              uint32_t depth, fx_asgct_frame *blob, struct fx_heap_memo *m);

/* Signal-safe: AsyncGetCallTrace answered -9 (the thread in the deoptimization handler). Where
 * the native frames return into a deoptimization or uncommon trap blob (FX_RANGE_DEOPT, with a
 * frame size) at the anchor's sp, through the return address the anchor names or with its pc
 * unset (the blob's call to fetch_unroll_info or uncommon_trap, HotSpot itself walking
 * stub_frame.sender() there to find the deoptee), the anchor walk (recover_anchor.c) into
 * trace->frames[1..], the blob's frame on top: FX_REC_DEOPT; 0 where the rule does not apply
 * (unpack_frames, the blob's own code, Java code run from inside), else why not (< 0). */
int fx_recover_deopt_sigsafe(struct fx_thread *t, void *ucontext, fx_asgct_trace *trace,
                             uint32_t depth, uint8_t *stop, struct fx_heap_memo *m);

#endif
