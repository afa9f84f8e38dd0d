/* SPDX-License-Identifier: Apache-2.0 */
/* The not-in-Java recovery (issue 26, docs/VALIDATION.md section 8.6): when AsyncGetCallTrace
 * returns -3 (thread in the VM, in native code or blocked, its frame anchor not walkable:
 * _last_Java_sp set, _last_Java_pc not), the thread's compiled Java frames are walked here from
 * the anchor, by HotSpot's own rules, and named by their compiled methods.
 *
 * Why not AsyncGetCallTrace again with the last Java frame as the context: for a thread that is
 * not _thread_in_Java, ASGCT never reads the context (forte.cpp: pd_get_top_frame with isInJava
 * false returns false unless the anchor is walkable), and making the anchor walkable would write
 * the JVM's state, which fxagent never does.
 *
 * The rules (x86-64, JDK 17 and 25 alike):
 *  - the last Java frame is (sp, fp, pc) = (_last_Java_sp, _last_Java_fp, _last_Java_pc), and
 *    when _last_Java_pc is 0, pc = sp[-1]: JavaFrameAnchor::make_walkable, what HotSpot itself
 *    does before it walks such a thread (frame_x86.cpp);
 *  - a frame in a CodeBlob with a frame size has its sender at sp + frame_size words, the
 *    return address at sender_sp[-1] and the saved rbp at sender_sp[-2]
 *    (frame::sender_for_compiled_frame; on x86 unextended_sp is sp for compiled frames);
 *  - the first frame may be a stub with a frame size (C1's Runtime1 stubs, which leave the pc
 *    unset); every frame after it must be an nmethod still of its compilation (compile id), or
 *    an interpreted frame (issue 32) whose Method* and bcp interp_frame_sig.c proves, its rbp
 *    the anchor's _last_Java_fp on top, else the one its compiled callee saved.
 * The walk stops at the first frame that is not such a frame (the call stub, an unknown pc, an
 * interpreted frame not proven): the stack then has its root cut, under a frame that names why
 * (fx_sample_rec.walk_stop; "[truncated]" only where it reached the depth). Frames are named by
 * the nmethod's method (FX_LINE_NMETHOD: inlined callees and the bci are not known here).
 * Every stack word is read inside the thread's stack, every code range from the published
 * table, or for a method compiled since, from HotSpot's code heaps (codeheap_sig.c). Signal path:
 * compiled with the handler's flags and under its symbol allow-list. */
#include "recover_anchor.h"

#include "codeheap.h"
#include "interp_frame.h"
#include "recover_x86.h"

/* Signal-safe: a walk that ended before the depth, and why (fx_sample_rec.walk_stop). */
static int anchor_stop(uint8_t *stop, uint8_t why)
{
    *stop = why;
    return FX_REC_ANCHOR;
}

enum {
    ENTRY_UNKNOWN,
    ENTRY_FIRST,
    ENTRY_NEXT
};

/* Signal-safe: the entry frame (the call stub) at rbp *fp, by HotSpot's
 * frame::sender_for_entry_frame: its JavaCallWrapper (at the rbp slot
 * entry_frame_call_wrapper_offset, a C++ object on this thread's stack) saved the anchor of the
 * Java frames below it (the VM or native code that called Java); a NULL _last_Java_sp there
 * means none: the thread's first Java frames (entry_frame_is_first). Else *sp, *pc, *fp become
 * that anchor's (pc 0: the word below sp, as for the thread's own anchor). */
static int entry_frame(const struct fx_interp_layout *il, uintptr_t lo, uintptr_t hi, uintptr_t *sp,
                       uintptr_t *pc, uintptr_t *fp)
{
    uintptr_t w, a, next_sp, next_pc, next_fp;
    /* rbp at or above sp, the wrapper above rbp (a local of JavaCalls::call_helper, the stub's
     * caller): a read below sp could reach the stack's guard pages, inside [lo, hi) */
    if (il == NULL || il->wrapper_slot == 0 || *fp < *sp ||
        !fx_recover_stack_word(lo, hi, *fp + (uintptr_t)(intptr_t)il->wrapper_slot * 8, &w))
        return ENTRY_UNKNOWN;
    a = w + (uintptr_t)il->wrapper_anchor;
    if (w <= *fp || !fx_recover_stack_word(lo, hi, a + (uintptr_t)il->last_sp, &next_sp))
        return ENTRY_UNKNOWN;
    if (next_sp == 0)
        return ENTRY_FIRST;
    if (next_sp <= *sp || !fx_recover_stack_word(lo, hi, a + (uintptr_t)il->last_pc, &next_pc) ||
        !fx_recover_stack_word(lo, hi, a + (uintptr_t)il->last_fp, &next_fp) ||
        (next_pc == 0 && !fx_recover_stack_word(lo, hi, next_sp - 8, &next_pc)))
        return ENTRY_UNKNOWN;
    *sp = next_sp;
    *pc = next_pc;
    *fp = next_fp;
    return ENTRY_NEXT;
}

int fx_recover_anchor(const struct fx_code_table *tab, struct fx_heap_memo *m, long cid_off,
                      const struct fx_regs *last, const struct fx_interp_layout *il, uintptr_t lo,
                      uintptr_t hi, fx_asgct_frame *out, uint32_t cap, uint32_t *n,
                      fx_asgct_frame *blob, uint8_t *stop, struct fx_anchor_facts *facts)
{
    *n = 0;
    if (facts != NULL)
        *facts = (struct fx_anchor_facts){.top_code = 0, .deopt_frame = -1};
    *stop = FX_WSTOP_NONE;
    uintptr_t sp = last->sp, pc = last->pc, fp = last->fp;
    if (sp == 0)
        return FX_REC_NO_ANCHOR;
    if (hi <= lo || sp <= lo || sp > hi)
        return FX_REC_STACK;
    if (pc == 0 && !fx_recover_stack_word(lo, hi, sp - 8, &pc))
        return FX_REC_STACK;
    /* each step adds a frame but an entry frame's, which follows one: the depth ends it */
    struct fx_interp_memo memo; /* the Method*s this walk proved, and its budget (interp_frame.h) */
    fx_interp_memo_init(&memo);
    for (uint32_t i = 0; i < 2 * cap + 2; i++) {
        /* a method compiled since the table, from the code heaps (codeheap.h): past the
         * sample's budget of lookups the walk stops, named for it */
        uint32_t refused = m != NULL ? m->refused : 0;
        const struct fx_code_range *r = fx_recover_find_any(tab, pc, m);
        if (r == NULL)
            return *n == 0                              ? FX_REC_NOT_FOUND
                   : m != NULL && m->refused != refused ? anchor_stop(stop, FX_WSTOP_HEAP_BUDGET)
                                                        : anchor_stop(stop, FX_WSTOP_UNKNOWN);
        if (r->kind == FX_BLOB_STUB && (r->flags & FX_RANGE_INTERPRETER) && *n > 0 && *n == cap)
            return FX_REC_ANCHOR; /* cut at the depth: [truncated] */
        if (r->kind == FX_BLOB_STUB && (r->flags & FX_RANGE_INTERPRETER) && *n < cap &&
            fx_interp_frame_sigsafe(il, &memo, fp, sp, lo, hi, &out[*n])) {
            /* An interpreted frame, named by its Method* and bcp (interp_frame_sig.c); its
             * caller by rbp: the return address at fp + 8, the caller's rbp at fp, its sp (what
             * a compiled caller's frame size counts from) at fp - 8
             * (frame::sender_for_interpreter_frame) */
            (*n)++;
            uintptr_t next_sp;
            if (!fx_recover_stack_word(lo, hi, fp + 8, &pc) ||
                !fx_recover_stack_word(lo, hi, fp - 8, &next_sp) ||
                !fx_recover_stack_word(lo, hi, fp, &fp) || next_sp <= sp || next_sp > hi)
                return anchor_stop(stop, FX_WSTOP_STACK);
            sp = next_sp;
            continue;
        }
        /* each Method* proven costs ~7 system calls (~1.75 us each): a deep interpreted stack
         * of many methods would hold the handler for milliseconds */
        if (memo.spent && *n > 0)
            return anchor_stop(stop, FX_WSTOP_BUDGET);
        if (r->kind == FX_BLOB_STUB && (r->flags & FX_RANGE_CALL_STUB) && *n > 0) {
            int rc = entry_frame(il, lo, hi, &sp, &pc, &fp);
            if (rc == ENTRY_FIRST)
                return FX_REC_ANCHOR; /* the thread's first Java frames: the walk is whole */
            if (rc == ENTRY_NEXT)
                continue;
        }
        if (r->kind == FX_BLOB_NMETHOD) {
            if (!fx_recover_blob_current(r, cid_off))
                return *n > 0 ? anchor_stop(stop, FX_WSTOP_STALE) : FX_REC_LAYOUT;
            if (*n == cap)
                return FX_REC_ANCHOR;     /* cut at the depth: [truncated] */
            if (*n == 0 && facts != NULL) /* validate's proof of 4.2 (scopes.c) */
                facts->top_code = r->begin;
            if (i > 0 && facts != NULL && facts->deopt_frame < 0 && r->stubs != 0 &&
                pc >= r->begin + r->stubs) /* 4.9: returns to the deopt handler */
                facts->deopt_frame = (int32_t)*n;
            out[(*n)++] = (fx_asgct_frame){.lineno = FX_LINE_NMETHOD,
                                           .method_id = (jmethodID)(uintptr_t)r->name};
        } else if (i > 0 || r->kind != FX_BLOB_STUB || r->frame_words <= 0) {
            if (*n > 0)
                return anchor_stop(stop, r->flags & FX_RANGE_INTERPRETER ? FX_WSTOP_INTERPRETED
                                                                         : FX_WSTOP_STUB);
            blob->lineno = FX_LINE_STUB; /* e.g. the interpreter: named, not walked */
            blob->method_id = (jmethodID)(uintptr_t)r->name;
            return FX_REC_STUB;
        }
        if (r->frame_words <= 0 || (uintptr_t)r->frame_words > (hi - sp) / 8)
            return *n > 0 ? anchor_stop(stop, FX_WSTOP_STACK) : FX_REC_STACK;
        /* The sender of a frame with a frame size (frame::sender_for_compiled_frame): the
         * return address at sender_sp - 8, the rbp it saved at sender_sp - 16 (an interpreted
         * caller's frame pointer); 0 when unreadable (an interpreted caller is then not named) */
        uintptr_t sender = sp + (uintptr_t)r->frame_words * 8;
        if (!fx_recover_stack_word(lo, hi, sender - 8, &pc))
            return *n > 0 ? anchor_stop(stop, FX_WSTOP_STACK) : FX_REC_STACK;
        if (!fx_recover_stack_word(lo, hi, sender - 16, &fp))
            fp = 0;
        sp = sender;
    }
    return FX_REC_ANCHOR;
}

/* Signal-safe: one type word per physical Java frame (sample.h, FX_TYPE_*). An nmethod the
 * code heaps gave during this very sample (m->kept: its inlining is not known here) is kept in
 * m->found, when there is room and its blob lies within 4 GiB of the code cache's low bound
 * (HotSpot reserves at most 2 GiB), for the drain to read its facts (issue 31). */
static uint64_t type_word(const struct fx_code_table *tab, struct fx_heap_memo *m,
                          const struct fx_code_range *r)
{
    if (r->kind != FX_BLOB_NMETHOD)
        return (uint64_t)FX_TYPE_INTERPRETED << 56;
    uint64_t tag = FX_TYPE_COMPILED | (r->level & 7) | (r->flags & FX_RANGE_SELF_INLINE ? 8 : 0);
    if (!(tag & 8) || m == NULL || !fx_heap_memo_holds(m, r) || tab == NULL || tab->heap == NULL ||
        r->blob < tab->heap->lo || r->blob - tab->heap->lo > UINT32_MAX)
        return tag << 56 | r->name;
    uint64_t w = (uint64_t)(r->blob - tab->heap->lo) | (uint64_t)(uint32_t)r->compile_id << 32;
    if (m->n_found > 0 && m->n_found <= FX_FOUND_KEPT && m->found[m->n_found - 1] == w)
        tag |= FX_TYPE_FOUND | FX_TYPE_AGAIN; /* a recursion: the word before names it */
    else if (m->n_found < FX_FOUND_KEPT) {
        m->found[m->n_found++] = w;
        tag |= FX_TYPE_FOUND;
    }
    return tag << 56 | r->name;
}

uint32_t fx_recover_types(const struct fx_code_table *tab, struct fx_heap_memo *m, long cid_off,
                          const struct fx_regs *top, uintptr_t lo, uintptr_t hi, uint64_t *out,
                          uint32_t cap)
{
    struct fx_regs end;
    return fx_recover_segment(tab, m, cid_off, top, false, lo, hi, out, cap, cap, &end, NULL);
}

uint32_t fx_recover_segment(const struct fx_code_table *tab, struct fx_heap_memo *m, long cid_off,
                            const struct fx_regs *top, bool ret, uintptr_t lo, uintptr_t hi,
                            uint64_t *out, uint32_t cap, uint32_t most, struct fx_regs *end,
                            uint8_t *why)
{
    uint8_t unused;
    if (why == NULL)
        why = &unused;
    uint32_t n = 0;
    struct fx_regs at = {top->pc, top->sp, top->fp, NULL};
    *end = (struct fx_regs){0, 0, 0, NULL};
    *why = FX_SEG_SP;
    if (hi <= lo || at.sp < lo || at.sp >= hi)
        return 0;
    while (n < most) {
        const struct fx_code_range *r = fx_recover_find_any(tab, at.pc, m);
        struct fx_regs next = {0, 0, 0, NULL};
        *why = FX_SEG_FRAME;
        if (r == NULL) {
            *why = FX_SEG_NO_RANGE;
            return n;
        }
        if (r->kind == FX_BLOB_NMETHOD) {
            if (!fx_recover_blob_current(r, cid_off) || r->name == 0 || r->name >> 56 != 0) {
                *why = FX_SEG_STALE;
                return n;
            }
            /* The top frame: its pc must be in the body, where the frame is built and the
             * frame size holds; in the prologue or epilogue (the rules of recover.c prove
             * which) the frame AsyncGetCallTrace named is not certain: nothing typed. A
             * return address (ret) is at a call, in the body. */
            if (n == 0 && !ret) {
                int rc = fx_recover_caller(r, &at, lo, hi, true, &next);
                if (rc != FX_REC_BODY) {
                    *why = FX_SEG_TOP;
                    return 0;
                }
            }
            if (n < cap)
                out[n] = type_word(tab, m, r);
            n++;
            if (r->frame_words <= 0 || (uintptr_t)r->frame_words > (hi - at.sp) / 8)
                return n;
            uintptr_t sender = at.sp + (uintptr_t)r->frame_words * 8;
            if (!fx_recover_stack_word(lo, hi, sender - 8, &next.pc) ||
                !fx_recover_stack_word(lo, hi, sender - 16, &next.fp))
                return n;
            next.sp = sender;
        } else if (r->kind == FX_BLOB_STUB && (r->flags & FX_RANGE_INTERPRETER)) {
            /* An interpreted frame is rbp-framed: the return address at fp + 8, the caller's
             * rbp at fp, the caller's sp (unextended, what a compiled caller's frame size
             * counts from: the c2i adapter saved it) in the slot at fp - 8
             * (frame::sender_for_interpreter_frame, interpreter_frame_sender_sp_offset). */
            if (n < cap)
                out[n] = type_word(tab, m, r);
            n++;
            if (at.fp < at.sp || at.fp < lo + 8 || at.fp >= hi ||
                !fx_recover_stack_word(lo, hi, at.fp + 8, &next.pc) ||
                !fx_recover_stack_word(lo, hi, at.fp, &next.fp) ||
                !fx_recover_stack_word(lo, hi, at.fp - 8, &next.sp))
                return n;
        } else {
            /* The call stub (the stack's Java part begins: issue 32, the native frames below
             * go on from its registers), or other code */
            *why = FX_SEG_STUB;
            if (n > 0 && r->kind == FX_BLOB_STUB && (r->flags & FX_RANGE_CALL_STUB)) {
                *end = at;
                *why = FX_SEG_CALL_STUB;
            }
            return n;
        }
        if (next.sp <= at.sp || next.sp >= hi) {
            *why = FX_SEG_SP;
            return n;
        }
        at = next;
    }
    *why = FX_SEG_MOST;
    return n;
}
