/* SPDX-License-Identifier: Apache-2.0 */
/* Private to agent/sampling: an interpreted frame named in the handler (issue 32, the anchor
 * walk's interpreted callers): HotSpot's layout for it (interp_frame.c publishes it from
 * VMStructs, outside signal context) and the checked reads that turn the frame's Method* and
 * bcp into the (jmethodID, bci) AsyncGetCallTrace would give (interp_frame_sig.c). */
#ifndef FX_INTERP_FRAME_H
#define FX_INTERP_FRAME_H

#include "sample.h"

/* A method handle intrinsic's Method* (docs/VALIDATION.md 8.5l) is HotSpot's own
 * (Method::make_method_handle_intrinsic): in no class's method array, its idnum 0, so no
 * jmethodID names it. It names the method it stands for by its holder (MethodHandle) and
 * Method::_intrinsic_id (vmIntrinsics::_invokeBasic, _linkToStatic, ...), which HotSpot gives
 * the declared native method of that name too: the table below maps each intrinsic id of
 * MethodHandle's declared native methods (one method each, else left out) to its jmethodID.
 * ready 0: not published (fx_interp_publish_mh, with release, after the layout). */
#define FX_MH_NAMES 12
struct fx_mh_names {
    int32_t ready;        /* atomic: written last */
    int32_t intrinsic_id; /* Method::_intrinsic_id (u2), inside the Method read */
    uintptr_t holder;     /* MethodHandle's InstanceKlass* (ConstantPool::_pool_holder) */
    uint32_t n;
    uint16_t iid[FX_MH_NAMES];
    uint64_t id[FX_MH_NAMES]; /* the declared method's jmethodID */
};

/* Offsets in bytes, slots in words from the frame's rbp; pid 0: not published (the walk then
 * stops at an interpreted frame, as before). Every size is at most FX_INTERP_MAX_STRUCT. */
struct fx_interp_layout {
    int32_t pid;                        /* this process: the target of the checked reads */
    int32_t method_slot, bcp_slot;      /* frame::interpreter_frame_method_offset, _bcp_offset */
    int32_t method_size, cm_size;       /* sizeof(Method), sizeof(ConstMethod): the bytecodes follow
                                           the ConstMethod */
    int32_t const_method, access_flags; /* Method:: */
    int32_t constants, idnum, code_size; /* ConstMethod:: */
    int32_t pool_holder;                 /* ConstantPool:: */
    int32_t jmethod_ids;                 /* InstanceKlass::_methods_jmethod_ids */
    /* The entry frame (the call stub): its JavaCallWrapper* at this rbp slot
     * (frame::entry_frame_call_wrapper_offset; 0: unknown), the JavaFrameAnchor the wrapper
     * saved at `wrapper_anchor`, and that anchor's fields (JavaFrameAnchor::_last_Java_*) */
    int32_t wrapper_slot, wrapper_anchor, last_sp, last_pc, last_fp;
    int32_t i2i_entry;     /* Method::_i2i_entry, the method's interpreter entry (0: unknown) */
    struct fx_mh_names mh; /* published after the rest (its own ready flag) */
};
#define FX_INTERP_MAX_STRUCT 256

/* Outside signal context: reads the layout from VMStructs and publishes it in fx_sig.interp
 * (pid last, with release); nothing when a field is missing or out of bounds. */
void fx_interp_publish(void);

/* One anchor walk's memo (on the handler's stack, issue 32): the Method*s it proved, with what
 * naming a frame of theirs needs, and the jmethodID arrays of their classes (by ConstantPool*),
 * each kept FIFO (a recursion's methods recur within a few dozen frames); and the system calls
 * its proofs spent: a full proof costs FX_INTERP_PROOF_CALLS, one of a class already seen 4, a
 * Method* already proven none. A walk spends at most FX_INTERP_BUDGET (fx_recover.h) full
 * proofs' worth, the worst case of the frame count it had before; then `spent` is set and
 * fx_interp_frame_sigsafe refuses each Method* not in the memo. fx_interp_memo_init before a
 * walk (the counters only: nothing is read past them). ~1.2 KiB. Tests: unit.recover_walk. */
#define FX_INTERP_MEMO        32
#define FX_INTERP_HOLDERS     16
#define FX_INTERP_PROOF_CALLS 7
struct fx_interp_memo {
    uint32_t calls, n, next, holders, next_holder;
    uint32_t native; /* bit i: entry i's method is native (its frames' bci -3) */
    bool spent;
    uint16_t code_size[FX_INTERP_MEMO];
    uintptr_t method[FX_INTERP_MEMO], codes[FX_INTERP_MEMO], id[FX_INTERP_MEMO];
    uintptr_t cp[FX_INTERP_HOLDERS], ids[FX_INTERP_HOLDERS], count[FX_INTERP_HOLDERS];
};

static inline void fx_interp_memo_init(struct fx_interp_memo *m)
{
    m->calls = m->n = m->next = m->holders = m->next_holder = m->native = 0;
    m->spent = false;
}

/* Signal-safe: the interpreted frame whose rbp is fp (its sp at least sp, inside the thread's
 * stack [lo, hi)), as AsyncGetCallTrace names it: out->method_id the jmethodID its Method*
 * maps to (InstanceKlass::_methods_jmethod_ids[idnum + 1], proven by the jmethodID pointing
 * back at that Method*), out->lineno the bci (bcp - the ConstMethod's bytecodes, inside
 * code_size) or -3 for a native method. Every word off the stack is read by
 * process_vm_readv on this process (a failure is false, never a fault). False when any step
 * is not proven: no jmethodID made yet, a bcp outside the method's code, an unreadable word;
 * or when its Method* is not in memo (the walk's) and no proof fits the budget (memo->spent). */
bool fx_interp_frame_sigsafe(const struct fx_interp_layout *l, struct fx_interp_memo *memo,
                             uintptr_t fp, uintptr_t sp, uintptr_t lo, uintptr_t hi,
                             fx_asgct_frame *out);

/* Signal-safe: n bytes at `at` of process pid (this one) into buf by process_vm_readv, or false:
 * an unmapped address fails the call, never this thread. `at` must be a multiple of align (a
 * power of two) and above the first page. */
bool fx_interp_peek_sigsafe(int32_t pid, uintptr_t at, void *buf, size_t n, size_t align);
/* Signal-safe: the jmethodID of the Method* at method by the chain of fx_interp_frame_sigsafe,
 * proven the same way (codeheap_sig.c names a compiled method by it); false if not proven. */
bool fx_interp_method_id_sigsafe(const struct fx_interp_layout *l, uintptr_t method, uint64_t *id);
/* Signal-safe: the jmethodID of the method a method handle intrinsic's Method* (at method)
 * stands for, by l->mh: a native Method* whose holder is MethodHandle and whose intrinsic id
 * the table holds, that declared method's jmethodID still naming a Method*; else false. For a
 * Method* the chain above does not prove (codeheap_sig.c: a frameless native nmethod). */
bool fx_interp_mh_id_sigsafe(const struct fx_interp_layout *l, uintptr_t method, uint64_t *id);
/* Outside signal context, on a thread attached to the JVM, once the layout is published
 * (codemap_heap.c, at each start before the code events' replay): fx_sig.interp.mh from
 * MethodHandle's declared native methods (JVMTI) and their Method*s (VMStructs'
 * Method::_intrinsic_id); nothing when a step fails (their samples then stay named failures
 * under codemap=heap, and keep CompiledMethodLoad's name under jvmti, as before). */
void fx_interp_publish_mh(void);
/* Signal-safe: the same for the Method* at method, and its interpreter entry (_i2i_entry). */
bool fx_interp_entry_sigsafe(const struct fx_interp_layout *l, uintptr_t method, uint64_t *id,
                             uintptr_t *entry);

/* Signal-safe (recover_interp.c): fx_recover_caller (fx_recover.h), but for a pc in the
 * interpreter (r): if rbx (in->gpr) is a Method* proven by its jmethodID and pc lies in that
 * method's interpreter entry while it builds the frame, the caller's registers
 * (FX_REC_INTERP_ENTRY) and *top the entered method (FX_LINE_NMETHOD, its jmethodID); else why
 * not, FX_REC_STUB for a pc elsewhere. l: the published layout (its pid read with acquire). */
int fx_recover_caller_sigsafe(const struct fx_code_range *r, const struct fx_interp_layout *l,
                              const struct fx_regs *in, uintptr_t lo, uintptr_t hi, bool blob_ok,
                              struct fx_regs *out, fx_asgct_frame *top);

#endif
