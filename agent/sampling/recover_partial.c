/* SPDX-License-Identifier: Apache-2.0 */
/* THE SIGNAL PATH: the partial stack of a sample in an intrinsic's stub whose return address is
 * proven and the inlining scope there is not (issue 32, docs/VALIDATION.md 8.5d). The stub's
 * rbp frame, the call to it right before the return address, the caller nmethod N current and
 * not an OSR compilation are proven (recover_stub.c, recover_pcdesc.c); where C2 left no PcDesc
 * where the call ends (a non-safepoint run stretched past it: no exact proof of the call's scope
 * exists, 8.5d), which inlined frames lie between the stub and N's root method is not known.
 * What is kept is what is proven: the stub's frame, a pseudo-frame saying the inlined frames
 * are not known, N's root method (the nmethod's jmethodID: the return address lies in N), and
 * N's callers, walked by AsyncGetCallTrace from N's caller's context: at a leaf call the sp is
 * N's own sp (C1 and C2 frames are fixed-size, the stub's frame rule gives the sp after its
 * return), so N's return address and saved rbp lie at N's frame size above it, as HotSpot's
 * frame::sender_for_compiled_frame reads them. That return address must lie right after a call
 * in a current nmethod, or in the interpreter or the call stub (an interpreted or VM caller);
 * else, or when AsyncGetCallTrace finds nothing there or a frame at bci 0 its fallback may
 * have named (a deoptimized caller's return address looks so, 8.5a), the stack's root is a
 * pseudo-frame saying N's
 * callers are not proven. Counted as its own recovery case (FX_REC_STUB_PARTIAL). Same rules and
 * allow-list as the handler: no calls but AsyncGetCallTrace, the inline lookups and atomics,
 * every stack word read inside the thread's stack. */
#include "recover_partial.h"

#include "recover_anchor.h"
#include "recover_bci0.h"
#include "recover_x86.h"

#if defined(__x86_64__)
/* Signal-safe: N's return address pc lies after a call in a current nmethod, or in the
 * interpreter or the call stub (the reader bracket holds the table while it is looked up). */
static bool caller_code_sigsafe(uintptr_t pc, struct fx_heap_memo *m)
{
    __atomic_add_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    const struct fx_code_table *tab = __atomic_load_n(&fx_sig.code_table, __ATOMIC_SEQ_CST);
    const struct fx_code_range *r = fx_recover_find_any(tab, pc, m);
    struct fx_code_range c;
    if (r != NULL)
        memcpy(&c, r, sizeof(c));
    __atomic_sub_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    if (r == NULL)
        return false;
    if (c.kind == FX_BLOB_NMETHOD)
        return fx_recover_blob_current(&c,
                                       __atomic_load_n(&fx_sig.compile_id_off, __ATOMIC_RELAXED)) &&
               fx_recover_after_call(&c, pc);
    return c.kind == FX_BLOB_STUB && (c.flags & (FX_RANGE_INTERPRETER | FX_RANGE_CALL_STUB));
}

int fx_recover_partial_sigsafe(struct fx_thread *t, const void *ucontext, fx_asgct_trace *trace,
                               uint32_t depth, const fx_asgct_frame *blob,
                               const struct fx_code_range *n, const struct fx_regs *caller,
                               struct fx_heap_memo *m, int why)
{
    if (why != FX_REC_NO_PCDESC)
        return why;
    if (depth < 4 || n->name == 0)
        return FX_REC_NO_PCDESC;
    fx_asgct_frame *f = trace->frames;
    f[0] = *blob;
    f[1] = (fx_asgct_frame){.lineno = FX_LINE_INLINE_GAP, .method_id = NULL};
    f[2] = (fx_asgct_frame){.lineno = FX_LINE_NMETHOD, .method_id = (jmethodID)(uintptr_t)n->name};
    struct fx_regs below;
    jint got = 0;
    if (fx_recover_compiled_sender(n, caller->sp, t->stack_lo, t->stack_hi, &below) > 0 &&
        caller_code_sigsafe(below.pc, m)) {
        ucontext_t cc;
        fx_recover_patch(&cc, ucontext, &below); /* pc - 1: inside N's call (8.5a) */
        fx_asgct_trace up = {.env_id = t->env, .num_frames = 0, .frames = f + 3};
        fx_sig.asgct(&up, (jint)depth - 3, &cc);
        /* 8.5a: a bci-0 frame AsyncGetCallTrace's fallback may have named refused */
        got = up.num_frames > 0 && !fx_recover_bci0_sigsafe(&f[3], below.pc, m) ? up.num_frames : 0;
    }
    if (got == 0) /* N's callers not proven: a named root */
        f[3] = (fx_asgct_frame){.lineno = FX_LINE_CALLER_GAP, .method_id = NULL};
    trace->num_frames = 3 + (got > 0 ? got : 1);
    return FX_REC_STUB_PARTIAL;
}
#endif
