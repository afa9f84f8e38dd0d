/* SPDX-License-Identifier: Apache-2.0 */
/* THE SIGNAL PATH: samples whose pc is in VM code Java called without leaving `_thread_in_Java`
 * (issue 32, docs/VALIDATION.md 8.5i), called from signal_handler.c and native_below.c. Same
 * rules and allow-list as the handler (agent/signal_allowlist.txt): no calls but the inline
 * lookups, atomics, no allocation, every word read inside the thread's stack or a code range.
 *
 * AsyncGetCallTrace answers -5 or -6 there: the thread is in Java, the pc is C++ code, and the
 * walk it tries from the native frames (rbp) does not reach a Java frame it trusts. Two shapes,
 * each proven by HotSpot's own conventions, never by a guess:
 *  - Anchored (fx_vmcode_anchored_sigsafe): a stub set the frame anchor, then called C code
 *    that runs in Java state (the safepoint blob's handle_polling_page_exception and its
 *    CodeCache::find_blob, C1's Runtime1 stubs calling exception_handler_for_pc, C2's
 *    exception blob calling handle_exception_C). The Java frames below are fixed until that
 *    call returns and the stub clears the anchor, and the anchor describes them exactly as it
 *    does for -3: the same walk (recover_anchor.c, 8.9), its first frame the stub crossed by its
 *    frame size. Not taken when the anchor's frame is a deoptimization or uncommon trap blob
 *    (FX_RANGE_DEOPT): their unpack_frames fills in interpreter frames under it; nor when
 *    that frame is in no known blob.
 *  - Unanchored leaf (fx_recover_vmcode_sigsafe): no anchor; the native frames are stepped to
 *    the first Java code address (native_walk.c, as 8.5e does). Where that return address is
 *    in C1's g1_post_barrier_slow right after its call to native code (the stub's runtime call
 *    into G1BarrierSetRuntime::write_ref_field_post_entry, G1's card refinement under it), the
 *    stub's rbp frame (8.5c) gives its C1 caller and fx_recover_continuation the barrier's
 *    branch there, the context the barrier recovery gives for a pc in the stub itself.
 *    Elsewhere the leaf rule of 8.5e (fx_recover_leaf_native_sigsafe).
 * And one answer that is not -5/-6: deoptimization (-9, fx_recover_deopt_sigsafe, 8.5m), while
 * the thread is in the blob's first call (fetch_unroll_info, uncommon_trap), before the blob
 * pops the deoptee's frame; never in unpack_frames, whose anchor's pc is no return address. */
#include "recover_vmcode.h"
#include "native_walk.h"
#include "recover_anchor.h"
#include "recover_barrier_leaf.h"
#include "recover_entrybar.h"
#include "recover_pcdesc.h"
#include "recover_x86.h"

bool fx_vmcode_anchored_sigsafe(const struct fx_thread *t, const void *ucontext, int code,
                                struct fx_heap_memo *m)
{
#if defined(__x86_64__)
    const ucontext_t *uc = ucontext;
    long sp_off = __atomic_load_n(&fx_sig.anchor_sp_off, __ATOMIC_RELAXED);
    long pc_off = __atomic_load_n(&fx_sig.anchor_pc_off, __ATOMIC_RELAXED);
    if ((code != FX_ASGCT_UNKNOWN_JAVA && code != FX_ASGCT_NOT_WALKABLE_JAVA) || uc == NULL ||
        t->env == NULL || sp_off == 0 || pc_off == 0)
        return false;
    uintptr_t sp, pc;
    memcpy(&sp, (const char *)t->env + sp_off, sizeof(sp));
    memcpy(&pc, (const char *)t->env + pc_off, sizeof(pc));
    /* native code of a library (never the code cache, which is anonymous memory): the stub
     * that set the anchor has called out of it */
    if (sp == 0 || !fx_native_in_mapped_file_sigsafe((uintptr_t)uc->uc_mcontext.gregs[REG_RIP]))
        return false;
    /* the anchor's frame (its pc, or make_walkable's sp[-1]) not a deoptimization blob's */
    if (pc == 0 && !fx_recover_stack_word(t->stack_lo, t->stack_hi, sp - 8, &pc))
        return false;
    /* the code heaps too (issue 31): with codemap=heap the compiled method whose call left
     * that return address is often in no table yet; the table alone refused it as unknown */
    __atomic_add_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    const struct fx_code_range *r =
            fx_recover_find_any(__atomic_load_n(&fx_sig.code_table, __ATOMIC_SEQ_CST), pc, m);
    bool deopt = r == NULL || (r->flags & FX_RANGE_DEOPT) != 0;
    __atomic_sub_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    return !deopt;
#else
    (void)t, (void)ucontext, (void)code, (void)m;
    return false;
#endif
}

int fx_recover_vmcode_sigsafe(struct fx_thread *t, void *ucontext, fx_asgct_trace *trace,
                              uint32_t depth, fx_asgct_frame *blob, struct fx_heap_memo *m)
{
#if defined(__x86_64__)
    struct fx_regs at;
    struct fx_code_range stub;
    if (!fx_native_walk_to_java_sigsafe(t, ucontext, &at))
        return FX_REC_NOT_FOUND;
    __atomic_add_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    const struct fx_code_table *tab = __atomic_load_n(&fx_sig.code_table, __ATOMIC_SEQ_CST);
    struct fx_code_range nm; /* 8.5j: the nmethod whose entry barrier called the VM */
    bool barrier = fx_recover_barrier_leaf_step(tab, m, t->stack_lo, t->stack_hi, &at, &stub);
    bool entry = !barrier &&
                 fx_recover_entry_barrier_step(tab, m, t->stack_lo, t->stack_hi, &at, &stub, &nm);
    __atomic_sub_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    if (!barrier && !entry) /* a leaf called from compiled code (8.5e), or nothing proven */
        return fx_recover_leaf_native_sigsafe(t, ucontext, trace, depth, m);
    blob->lineno = FX_LINE_STUB;
    blob->method_id = (jmethodID)(uintptr_t)stub.name;
    uint32_t top = entry ? 2 : 1; /* the stub's frame, and the entered method's (8.5j) */
    if (depth < top + 1)
        return FX_REC_WALK;
    ucontext_t cc;
    fx_recover_patch(&cc, ucontext, &at); /* pc - 1: inside the branch or the call (8.5a) */
    fx_asgct_trace up = {.env_id = t->env, .num_frames = 0, .frames = trace->frames + top};
    fx_sig.asgct(&up, (jint)(depth - top), &cc);
    if (up.num_frames <= 0)
        return FX_REC_WALK;
    if (fx_recover_bci0_sigsafe(&trace->frames[top], at.pc, m)) /* 8.5a: maybe deoptimized */
        return FX_REC_BCI0;
    trace->frames[0] = *blob;
    if (entry)
        trace->frames[1] = (fx_asgct_frame){.lineno = FX_LINE_NMETHOD,
                                            .method_id = (jmethodID)(uintptr_t)nm.name};
    trace->num_frames = up.num_frames + (jint)top;
    return entry ? FX_REC_PROLOGUE : FX_REC_C1_BARRIER;
#else
    (void)t, (void)ucontext, (void)trace, (void)depth, (void)blob, (void)m;
    return FX_REC_NOT_FOUND;
#endif
}

int fx_recover_deopt_sigsafe(struct fx_thread *t, void *ucontext, fx_asgct_trace *trace,
                             uint32_t depth, uint8_t *stop, struct fx_heap_memo *m)
{
#if defined(__x86_64__)
    long sp_off = __atomic_load_n(&fx_sig.anchor_sp_off, __ATOMIC_RELAXED);
    long pc_off = __atomic_load_n(&fx_sig.anchor_pc_off, __ATOMIC_RELAXED);
    long fp_off = __atomic_load_n(&fx_sig.anchor_fp_off, __ATOMIC_RELAXED);
    struct fx_regs last = {0, 0, 0, NULL}, at;
    if (ucontext == NULL || t->env == NULL || sp_off == 0 || pc_off == 0 || depth < 2)
        return 0;
    memcpy(&last.sp, (const char *)t->env + sp_off, sizeof(last.sp));
    memcpy(&last.pc, (const char *)t->env + pc_off, sizeof(last.pc));
    if (fp_off != 0)
        memcpy(&last.fp, (const char *)t->env + fp_off, sizeof(last.fp));
    /* The C++ frames return into Java code at the anchor's sp, through the very return address
     * the anchor names (pc 0: not yet made walkable; else last_frame() copied sp[-1]). In
     * unpack_frames the anchor's pc is the_pc, bound before set_last_Java_frame: never the
     * return address of a call, so never this one. */
    if (last.sp == 0 || !fx_native_walk_to_java_sigsafe(t, ucontext, &at) || at.sp != last.sp ||
        (last.pc != 0 && last.pc != at.pc))
        return 0;
    last.pc = at.pc;
    const struct fx_interp_layout *il =
            __atomic_load_n(&fx_sig.interp.pid, __ATOMIC_ACQUIRE) != 0 ? &fx_sig.interp : NULL;
    uint32_t n = 0;
    fx_asgct_frame unused;
    __atomic_add_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    const struct fx_code_table *tab = __atomic_load_n(&fx_sig.code_table, __ATOMIC_SEQ_CST);
    const struct fx_code_range *r = fx_recover_find(tab, at.pc);
    /* a deoptimization or uncommon trap blob with its frame size: its sender is the deoptee */
    bool blob = r != NULL && r->kind == FX_BLOB_STUB && (r->flags & FX_RANGE_DEOPT) &&
                r->frame_words > 0;
    uint64_t name = blob ? r->name : 0;
    int rc = !blob ? 0
                   : fx_recover_anchor(tab, m,
                                       __atomic_load_n(&fx_sig.compile_id_off, __ATOMIC_RELAXED),
                                       &last, il, t->stack_lo, t->stack_hi, trace->frames + 1,
                                       depth - 1, &n, &unused, stop, NULL);
    __atomic_sub_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    if (rc != FX_REC_ANCHOR || n == 0)
        return rc > 0 ? FX_REC_STACK : rc;
    /* the blob on top: what is known of the deoptee, the first Java frame, is that its frame
     * is being deoptimized */
    trace->frames[0] = (fx_asgct_frame){.lineno = FX_LINE_STUB, .method_id = (jmethodID)name};
    trace->num_frames = (jint)n + 1;
    return FX_REC_DEOPT;
#else
    (void)t, (void)ucontext, (void)trace, (void)depth, (void)stop, (void)m;
    return 0;
#endif
}
