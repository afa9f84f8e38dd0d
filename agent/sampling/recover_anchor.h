/* SPDX-License-Identifier: Apache-2.0 */
/* Private to agent/sampling: the not-in-Java recovery's walk (recover_anchor.c, issue 26), for
 * the signal handler and the unit tests. */
#ifndef FX_RECOVER_ANCHOR_H
#define FX_RECOVER_ANCHOR_H

#include "interp_frame.h"
#include "sample.h"

/* Signal-safe: is the nmethod at r->blob still the compilation r was made from? The blob
 * header lies below the code, in the same committed code heap, so it can be read; a range whose
 * memory was reused by newer code fails this (its compile id, at cid_off, differs). Defined in
 * codeheap_sig.c, whose fx_recover_find_any looks such a range up in the code heaps again. */
bool fx_recover_blob_current(const struct fx_code_range *r, long cid_off);

/* Signal-safe: the Java frames from a thread's last Java frame `last` (the anchor's sp, its pc
 * or 0, its fp or 0), leaf first, into out[0..cap), *n of them: compiled frames as
 * FX_LINE_NMETHOD frames, interpreted ones (issue 32) as AsyncGetCallTrace's (jmethodID, bci)
 * when layout il names them (fx_interp_frame_sigsafe; NULL or unproven: the walk stops there).
 * tab: the published code table, held by the caller's reader bracket; m: the sample's code heap
 * lookups (fx_recover_find_any; past its budget the walk stops, FX_WSTOP_HEAP_BUDGET); cid_off: the
 * nmethod's _compile_id offset; [lo, hi): the thread's stack. FX_REC_ANCHOR when *n > 0 (the walk
 * ended at the depth, *stop FX_WSTOP_NONE, or at a frame it cannot cross, *stop says which kind:
 * the root side is cut), else why not (< 0); on FX_REC_STUB *blob is the stub the last Java frame
 * is in (the interpreter, say), named. facts: NULL, or what validate mode learns (fx_recover.h). */
int fx_recover_anchor(const struct fx_code_table *tab, struct fx_heap_memo *m, long cid_off,
                      const struct fx_regs *last, const struct fx_interp_layout *il, uintptr_t lo,
                      uintptr_t hi, fx_asgct_frame *out, uint32_t cap, uint32_t *n,
                      fx_asgct_frame *blob, uint8_t *stop, struct fx_anchor_facts *facts);

/* Signal-safe: the code each physical Java frame runs in, leaf first, from the interrupted
 * registers `top` (pc, sp, fp) of a thread whose AsyncGetCallTrace succeeded: one FX_TYPE_* word
 * per frame (sample.h) into out[0..cap), walked in the published table `tab` (the caller's
 * reader bracket holds it) over compiled frames (frame size) and interpreted frames (rbp); it
 * stops at the first frame it cannot prove (the call stub below the Java part, a stub, an
 * unknown pc, a stale nmethod, a word outside [lo, hi)). Returns the words written; 0 when the
 * top frame itself is not provable. */
uint32_t fx_recover_types(const struct fx_code_table *tab, struct fx_heap_memo *m, long cid_off,
                          const struct fx_regs *top, uintptr_t lo, uintptr_t hi, uint64_t *out,
                          uint32_t cap);

/* Where fx_recover_segment stopped (session 24: the walks below rooted at "Java frames not
 * walked to the call stub" counted by it, native_maps.c's report). */
enum fx_seg_stop {
    FX_SEG_CALL_STUB = 0, /* at the call stub: *end set */
    FX_SEG_NO_RANGE,      /* a pc in no code range (nor in the code heaps) */
    FX_SEG_STALE,         /* an nmethod whose compile id changed, or unnamed */
    FX_SEG_TOP,           /* the top pc not in a body (recover.c refused it: FX_REC_*) */
    FX_SEG_FRAME,         /* a frame size unknown or past the stack, or a word off the stack */
    FX_SEG_STUB,          /* other code than the call stub: a stub, no frame rule */
    FX_SEG_MOST,          /* `most` frames walked */
    FX_SEG_SP,            /* the sender's sp not above the frame's, or past the stack */
    FX_SEG_VM_STUB,       /* nothing walked from a top stub the VM or native code called */
    FX_SEG_STOPS
};

/* Signal-safe (native_below.c, session 26): is the top of a walk below, the interrupted pc's
 * range `here`, a stub that the VM or native code called, not Java code? A stub with no frame
 * size of its own (StubRoutines': flush_icache_stub, which ICache::invalidate_range calls when
 * a call site is patched; JDK 17's unsafe_arraycopy, which Unsafe_CopyMemory0 calls; the
 * jni_fast_Get*Field accessors), neither the interpreter nor the call stub nor JDK 17's inline
 * cache stubs, while the thread's frame anchor holds a last Java frame (last_sp != 0): HotSpot
 * sets it where Java code leaves for the VM or native code (a runtime stub, a native method's
 * wrapper, the interpreter's native entry, all with a frame or in the interpreter) and clears
 * it on the way back, so compiled Java never runs a frameless stub with it set. Its Java frames
 * begin at the anchor, under the VM's or the native code's frames between: the walk below starts
 * there only when the leaf's native walk stepped the stub (recover_vmstub.c) and its frames
 * reached the anchor's (native_below.c, docs/VALIDATION.md 8.5h); else a walk below that walked
 * nothing from such a top names it (FX_SEG_VM_STUB), not the stop it met. */
static inline bool fx_recover_vm_stub_top(const struct fx_code_range *here, uintptr_t last_sp)
{
    return here != NULL && last_sp != 0 && here->kind == FX_BLOB_STUB && here->frame_words <= 0 &&
           !(here->flags & (FX_RANGE_INTERPRETER | FX_RANGE_CALL_STUB | FX_RANGE_IC_BUFFER));
}

/* Signal-safe (recover_vmstub.c): the caller's registers from the pc of a stub the VM called
 * (fx_recover_vm_stub_top): the return address at [sp] at a pc before flush_icache_stub's proven
 * ret, or an arraycopy stub's rbp frame: FX_REC_STUB_FRAME, else FX_REC_STUB. The caller
 * checks the return address is native code. */
int fx_recover_vm_stub_step(const struct fx_code_range *r, const struct fx_regs *in, uintptr_t lo,
                            uintptr_t hi, struct fx_regs *out);

/* Signal-safe (issue 32, native_below.c): fx_recover_types from `top`, a return address when
 * `ret` (a Java frame the native walk below a call stub reached: no body check), over at most
 * `most` frames of which the first cap are written; returns the frames walked. *end is the
 * registers at the call stub where the walk stopped (the stub's return address, sp, and its
 * rbp as the frame above saved it), or all 0 when it stopped anywhere else; *why (when not
 * NULL) says where (enum fx_seg_stop). */
uint32_t fx_recover_segment(const struct fx_code_table *tab, struct fx_heap_memo *m, long cid_off,
                            const struct fx_regs *top, bool ret, uintptr_t lo, uintptr_t hi,
                            uint64_t *out, uint32_t cap, uint32_t most, struct fx_regs *end,
                            uint8_t *why);

#endif
