/* SPDX-License-Identifier: Apache-2.0 */
/* THE SIGNAL PATH, the whole stack (issue 32): the physical Java frames' types (interpreted,
 * compiled and at which tier) and the native frames below and between them, down to the
 * thread's first frame, called from signal_handler.c. Same rules and allow-list as the handler
 * (agent/signal_allowlist.txt): no calls but the inline lookups, atomics, no allocation.
 *
 * The walk alternates two walks, each proving its frames:
 *  - Java frames (recover_anchor.c, fx_recover_segment): from the interrupted registers when the
 *    pc is in Java code, else from the thread's frame anchor (the last Java frame HotSpot itself
 *    walks from; past the runtime stub compiled code called into the VM through), over compiled
 *    frames (their frame size) and interpreted frames (rbp) in the
 *    published code table, until HotSpot's call stub: the entry from C into Java
 *    (JavaCalls::call_helper calls it), whose return address, sp, and rbp as the Java frame above
 *    it saved it are known;
 *  - native frames (native_walk.c, fx_native_walk_entry_sigsafe): the call stub's frame is
 *    rbp-framed (StubGenerator::generate_call_stub begins with enter()), so its saved rbp and
 *    return address lead into call_helper; from there frame pointers and CFI as for the leaf's
 *    native frames, down to the thread's first frame (JavaMain, thread_native_entry,
 *    start_thread), or up to Java code again: the frame of a native method (its wrapper or the
 *    interpreter's native entry) whose C code called back into Java through JNI (Java ->
 *    Java_..._f -> C -> jni_CallVoidMethod -> call_helper -> call_stub -> Java), or of a stub
 *    with a frame size that called the VM (a Runtime1 or runtime stub: class initialization
 *    from compiled code), whose frame is crossed by its size (cross_stub_sigsafe); from that
 *    return address, sp and rbp the Java walk goes on.
 * The record's part (sample.h, FX_BELOW_*): segments, each a header word (bits 0-7: its frames,
 * 8-15: enum fx_native_stop, bit 16 FX_BELOW_MORE: Java frames follow below it, bit 17
 * FX_BELOW_CALL_STUB and bits 40-55: the call stub its walk began in and that stub's name,
 * bits 24-39: the physical Java frames above it, the first FX_TYPES_MAX of which have type
 * words) and that many
 * return addresses, leaf first; the last one ends at the thread's first frame or where the walk
 * stopped. At most FX_BELOW_SEGS segments and one header saying why it stopped there, and
 * FX_NATIVE_MAX return addresses with the leaf's native frames.
 * Each native segment is stored with why it ended; a Java walk that does
 * not reach a call stub ends it as FX_NSTOP_NO_ENTRY: the profile then has a frame saying so at
 * the root instead of the frames it could not prove. The model places each segment that ends at
 * a native method's frame above that frame (stacks.c). */
#include "native_walk.h"
#include "recover_anchor.h"
#include "recover_barrier_leaf.h"
#include "recover_bci0.h"
#include "recover_entrybar.h"
#include "recover_pcdesc.h"
#include "recover_x86.h"

/* Physical Java frames walked at most (the types of the first FX_TYPES_MAX are kept): a deeper
 * stack ends as FX_NSTOP_NO_ENTRY. */
#define FX_JAVA_WALK_MAX 4096

_Static_assert(FX_SEG_STOPS <= sizeof(fx_native.no_entry) / sizeof(fx_native.no_entry[0]),
               "a counter for each fx_seg_stop");

#if defined(__x86_64__)
/* Signal-safe: *at moved to the caller of a frame in r, a stub with a frame size (a RuntimeStub:
 * C2's runtime calls, the resolve and safepoint blobs; a Runtime1 stub; the uncommon trap and
 * deoptimization blobs), where that frame is built: at the thread's last Java frame, or at the
 * return address of its call into the VM that the native walk below a call stub reached (the
 * VM called Java back: class loading and initialization from compiled code). Such a stub sets
 * the frame anchor to its built frame before it calls out, and HotSpot walks it by its size
 * (frame::sender_for_compiled_frame: the return address at sender_sp[-1], the caller's rbp at
 * [-2]), as fx_recover_anchor crosses it. Not a Java frame: no type word. */
static bool cross_stub_sigsafe(const struct fx_code_range *r, struct fx_regs *at, uintptr_t lo,
                               uintptr_t hi)
{
    uintptr_t sender, pc, fp;
    if (r == NULL || r->kind != FX_BLOB_STUB || r->frame_words <= 0 ||
        (r->flags & (FX_RANGE_INTERPRETER | FX_RANGE_CALL_STUB)) || at->sp <= lo || at->sp >= hi ||
        (uintptr_t)r->frame_words > (hi - at->sp) / 8)
        return false;
    sender = at->sp + (uintptr_t)r->frame_words * 8;
    if (!fx_recover_stack_word(lo, hi, sender - 8, &pc) ||
        !fx_recover_stack_word(lo, hi, sender - 16, &fp))
        return false;
    *at = (struct fx_regs){.pc = pc, .sp = sender, .fp = fp, .gpr = NULL};
    return true;
}

/* Signal-safe: the return address j->pc the native walk reached at the anchor's sp is the
 * anchor's frame: its pc 0 (then HotSpot takes [sp - 8], the word j->pc was read from), equal,
 * or in the same code range (a native method's wrapper or the interpreter's native entry sets
 * the pc of its frame's build, not its call's return). */
static bool anchor_pc_sigsafe(const struct fx_thread *t, const struct fx_code_table *tab,
                              struct fx_heap_memo *m, long pc_off, const struct fx_regs *j)
{
    uintptr_t pc;
    memcpy(&pc, (const char *)t->env + pc_off, sizeof(pc));
    if (pc == 0 || pc == j->pc)
        return true;
    const struct fx_code_range *a = fx_recover_find_any(tab, pc, m);
    uintptr_t begin = a != NULL ? a->begin : 0;
    const struct fx_code_range *b = fx_recover_find_any(tab, j->pc - 1, m);
    return b != NULL && begin != 0 && b->begin == begin;
}

/* Signal-safe: the top of the walk (see the file comment). */
static struct fx_regs top_sigsafe(const struct fx_thread *t, const ucontext_t *uc,
                                  const struct fx_code_table *tab, struct fx_heap_memo *m,
                                  bool *from_anchor, bool *crossed, bool *vm_stub)
{
    struct fx_regs top = {.pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP],
                          .sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP],
                          .fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP],
                          .gpr = NULL};
    long sp_off = __atomic_load_n(&fx_sig.anchor_sp_off, __ATOMIC_RELAXED);
    long pc_off = __atomic_load_n(&fx_sig.anchor_pc_off, __ATOMIC_RELAXED);
    long fp_off = __atomic_load_n(&fx_sig.anchor_fp_off, __ATOMIC_RELAXED);
    *from_anchor = *crossed = false;
    const struct fx_code_range *here = fx_recover_find_any(tab, top.pc, m);
    uintptr_t last_sp = 0;
    if (t->env != NULL && sp_off != 0)
        memcpy(&last_sp, (const char *)t->env + sp_off, sizeof(last_sp));
    *vm_stub = fx_recover_vm_stub_top(here, last_sp);
    /* a stub the VM called (8.5h): its Java frames begin at the anchor only when the leaf's
     * native walk, past the stub and the VM's frames, reached that very frame (its sp the
     * anchor's, its return address in the anchor's code): no frame between dropped */
    struct fx_regs j;
    bool joined = *vm_stub && pc_off != 0 && fx_native_walk_vm_stub_sigsafe(t, uc, &j) &&
                  j.sp == last_sp && anchor_pc_sigsafe(t, tab, m, pc_off, &j);
    *vm_stub = *vm_stub && !joined; /* a joined walk's stop is its own */
    if ((here == NULL || joined) && t->env != NULL && sp_off != 0 && pc_off != 0 && fp_off != 0) {
        memcpy(&top.sp, (const char *)t->env + sp_off, sizeof(top.sp));
        memcpy(&top.pc, (const char *)t->env + pc_off, sizeof(top.pc));
        memcpy(&top.fp, (const char *)t->env + fp_off, sizeof(top.fp));
        *from_anchor = true;
        /* no last Java frame: a thread in Java whose pc is in native code its compiled code
         * called as a leaf (no anchor is set for such calls: System.currentTimeMillis's
         * os::javaTimeMillis and clock_gettime): its native frames are stepped to the Java
         * frame, whose return address fx_recover_segment must then find in compiled code */
        if (top.sp == 0 && fx_native_walk_to_java_sigsafe(t, uc, &top)) {
            struct fx_code_range stub, nm; /* G1's refinement under C1's barrier: its caller; */
            if (!fx_recover_barrier_leaf_step(tab, m, t->stack_lo, t->stack_hi, &top, &stub))
                /* the entry barrier's: the entered method's caller (8.5j) */
                fx_recover_entry_barrier_step(tab, m, t->stack_lo, t->stack_hi, &top, &stub, &nm);
            *from_anchor = false;
            *crossed = true; /* top.pc is a return address into the Java caller */
            return top;
        }
        if (top.pc == 0 && top.sp >= t->stack_lo + 8 && top.sp <= t->stack_hi && !(top.sp & 7))
            memcpy(&top.pc, (const void *)(top.sp - 8), sizeof(top.pc));
        /* issue 32 item 6: a thread in the VM from compiled code (an allocation, say) has its
         * anchor in the runtime stub it called (OptoRuntime's, Runtime1's): crossed to the
         * compiled caller; top.pc is then a return address, at a call in the body */
        *crossed = cross_stub_sigsafe(fx_recover_find(tab, top.pc), &top, t->stack_lo, t->stack_hi);
    }
    return top;
}

/* Signal-safe: the top of the walk when its frame is not one fx_recover_segment proves (issue
 * 32: the "Java frames not walked to the call stub" roots), moved to the frame below it by a
 * rule that proves the registers there (a return address, its sp and rbp); *typed false when
 * the Java frames' type words cannot be lined up with AsyncGetCallTrace's frames. The rules:
 *  - a stub with a frame size at the thread's last Java frame (from_anchor): a RuntimeStub (C2's
 *    allocation and runtime calls, the safepoint and deoptimization blobs) or a Runtime1 stub
 *    sets the anchor once its frame is built, and HotSpot walks it by its frame size
 *    (frame::sender_for_compiled_frame: return address at sender_sp[-1], rbp at [-2]), as
 *    fx_recover_anchor does; not a Java frame, so the types stay in line;
 *  - an arraycopy stub: recover_stub.c's rbp-frame rule (docs/VALIDATION.md 8.5d); types too;
 *  - an intrinsic's stub: the same rule, its return address after a call to it in a current
 *    nmethod (fx_recover_stub_return; its samples are recovered ones: no types);
 *  - C1's slow_subtype_check: recover_subtype.c's decoded depth, then its C1 caller's pops of
 *    the pushed arguments (8.5g); types too;
 *  - a vtable/itable stub (its caller's return address at sp) or an I2C/C2I adapter (its
 *    decoded frame): recover.c's rules, as for the samples recovered there; types too;
 *  - C1's g1_post_barrier_slow: recover.c's rbp-frame rule, then fx_recover_continuation's
 *    proven branch in the C1 caller (8.5c), the pc recover_sigsafe resumes ASGCT at; types too;
 *  - the interpreter's method entry building a frame (not at the anchor), for a sample with no
 *    type words (a recovered one): recover_interp.c's decoded build from the interrupted rbx
 *    and r13 (8.5f), as its recovery did;
 *  - native code compiled code called as a leaf (FX_REC_LEAF_NATIVE) is top_sigsafe's, no step;
 *  - an nmethod's prologue, epilogue or inline cache check, or a method handle intrinsic (its
 *    caller's call to it proven, 8.5l): recover.c's rules (8.3-8.5) give the caller's
 *    registers; whether AsyncGetCallTrace named the method on top is not certain there, so the
 *    sample has no type words (the frames below the call stub are the same).
 * false: none applies, the walk starts at the top as before. *mh: the step was the method handle
 * intrinsic's (its walks counted, the rule's oracle). */
static bool top_step_sigsafe(const struct fx_code_table *tab, struct fx_heap_memo *m, long cid_off,
                             bool from_anchor, const ucontext_t *uc, uintptr_t lo, uintptr_t hi,
                             struct fx_regs *at, bool *typed, bool *mh)
{
    const struct fx_code_range *r = fx_recover_find_any(tab, at->pc, m);
    struct fx_regs next = {0, 0, 0, NULL};
    if (r == NULL || hi <= lo || at->sp < lo || at->sp >= hi)
        return false;
    if (r->kind == FX_BLOB_STUB && from_anchor && r->frame_words > 0 &&
        !(r->flags & (FX_RANGE_INTERPRETER | FX_RANGE_CALL_STUB))) {
        next = *at;
        if (!cross_stub_sigsafe(r, &next, lo, hi))
            return false;
    } else if (r->kind == FX_BLOB_STUB && r->arraycopy == FX_STUB_ARRAYCOPY) {
        if (fx_recover_caller(r, at, lo, hi, false, &next) != FX_REC_STUB_FRAME)
            return false;
    } else if (r->kind == FX_BLOB_STUB &&
               (r->arraycopy == FX_STUB_INTRINSIC || r->arraycopy == FX_STUB_FILL)) {
        /* an intrinsic's stub (CRC32, MD5, SHA, Base64: session 21, the intrinsics case's
         * 25-35 % rooted at "not walked to the call stub"): the same rbp frame, its return
         * address right after a call to this very stub in a current nmethod; the scope there
         * (the PcDesc its recovery asks for) does not matter to the physical frames below */
        if (fx_recover_caller(r, at, lo, hi, false, &next) != FX_REC_STUB_FRAME)
            return false;
        const struct fx_code_range *n = fx_recover_find_any(tab, next.pc, m);
        if (n == NULL || n->kind != FX_BLOB_NMETHOD || !fx_recover_blob_current(n, cid_off) ||
            !fx_recover_stub_return(r, n, next.pc))
            return false;
    } else if (r->kind == FX_BLOB_STUB && (r->flags & FX_RANGE_IC_BUFFER)) {
        /* an inline cache stub (JDK 17): frameless, the return address at sp right after a call
         * to this very stub in a current nmethod, as its recovery proved it (8.5k) */
        if (fx_recover_caller(r, at, lo, hi, false, &next) != FX_REC_ICSTUB)
            return false;
        const struct fx_code_range *n = fx_recover_find_any(tab, next.pc, m);
        if (n == NULL || n->kind != FX_BLOB_NMETHOD || !fx_recover_blob_current(n, cid_off) ||
            !fx_recover_icstub_called(r, n, at->pc, next.pc))
            return false;
    } else if (r->kind == FX_BLOB_STUB && (r->flags & FX_RANGE_FRAMELESS)) {
        uintptr_t stub = r->begin;
        if (fx_recover_caller(r, at, lo, hi, false, &next) != FX_REC_FRAMELESS)
            return false;
        const struct fx_code_range *n = fx_recover_find_any(tab, next.pc, m);
        if (n == NULL || n->kind != FX_BLOB_NMETHOD || !fx_recover_blob_current(n, cid_off) ||
            !fx_recover_pushed_return(n, stub, &next))
            return false;
    } else if (r->kind == FX_BLOB_DISPATCH || r->kind == FX_BLOB_ADAPTER) {
        /* the recovered samples' stubs (issue 32): the return address at sp, or the adapter's
         * decode, with the interrupted general registers its rules read (session 17: without
         * them its points after `mov r11, rsp` and `pop rax` were refused, 4 of scalac's 11
         * walk stops in a run), as its recovery had them */
        uintptr_t gpr[16];
        struct fx_regs in = *at;
        if (!from_anchor) {
            fx_recover_gpr(uc, gpr);
            in.gpr = gpr;
        }
        int rc = fx_recover_caller(r, &in, lo, hi, false, &next);
        next.gpr = NULL;
        if (rc != FX_REC_DISPATCH && rc != FX_REC_ADAPTER)
            return false;
    } else if (r->kind == FX_BLOB_C1_BARRIER) {
        /* as recover_sigsafe: the stub's rbp frame, then the caller's slow-case continuation */
        if (fx_recover_caller(r, at, lo, hi, false, &next) != FX_REC_C1_BARRIER)
            return false;
        const struct fx_code_range *n = fx_recover_find_any(tab, next.pc, m);
        if (n == NULL || n->kind != FX_BLOB_NMETHOD || !fx_recover_blob_current(n, cid_off) ||
            !fx_recover_continuation(n, next.pc, &next.pc))
            return false;
    } else if (r->kind == FX_BLOB_STUB && (r->flags & FX_RANGE_INTERPRETER) && !from_anchor &&
               !*typed) {
        /* the interpreter's method entry building the entered method's frame (recover_interp.c,
         * from the interrupted rbx and r13), for samples wanting no type words only (the
         * recovered ones, whose recovery ran this rule: an ordinary sample in the interpreter
         * keeps the rbp walk, without the rule's Method* reads, system calls, on each) */
        uintptr_t gpr[16];
        fx_recover_gpr(uc, gpr);
        struct fx_regs in = {at->pc, at->sp, at->fp, gpr};
        fx_asgct_frame entered;
        if (fx_recover_caller_sigsafe(r, &fx_sig.interp, &in, lo, hi, false, &next, &entered) !=
            FX_REC_INTERP_ENTRY)
            return false;
        next.gpr = NULL;
    } else if (r->kind == FX_BLOB_NMETHOD) {
        int rc = fx_recover_caller(r, at, lo, hi, fx_recover_blob_current(r, cid_off), &next);
        if (rc == FX_REC_MH_INTRINSIC) {
            /* a method handle intrinsic (8.5l): frameless, its caller's call to it proven */
            const struct fx_code_range *n = fx_recover_find_any(tab, next.pc, m);
            if (n == NULL || n->kind != FX_BLOB_NMETHOD || !fx_recover_blob_current(n, cid_off) ||
                !fx_recover_mh_called(r, n, next.pc))
                return false;
            *mh = true;
        } else if (rc != FX_REC_PROLOGUE && rc != FX_REC_EPILOGUE && rc != FX_REC_ICCHECK) {
            return false;
        }
        *typed = false;
    } else {
        return false;
    }
    if (next.sp <= at->sp || next.sp >= hi)
        return false;
    *at = next;
    return true;
}
#endif

bool fx_leaf_unanchored_sigsafe(const struct fx_thread *t, const void *ucontext,
                                struct fx_heap_memo *m)
{
#if defined(__x86_64__)
    const ucontext_t *uc = ucontext;
    long sp_off = __atomic_load_n(&fx_sig.anchor_sp_off, __ATOMIC_RELAXED);
    if (uc == NULL || t->env == NULL || sp_off == 0)
        return false;
    uintptr_t last_sp;
    memcpy(&last_sp, (const char *)t->env + sp_off, sizeof(last_sp));
    if (last_sp != 0)
        return false;
    __atomic_add_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    const struct fx_code_table *tab = __atomic_load_n(&fx_sig.code_table, __ATOMIC_SEQ_CST);
    bool in_code = tab == NULL ||
                   fx_recover_find_any(tab, (uintptr_t)uc->uc_mcontext.gregs[REG_RIP], m) != NULL;
    __atomic_sub_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    return !in_code;
#else
    (void)t, (void)ucontext, (void)m;
    return false;
#endif
}

int fx_recover_leaf_native_sigsafe(struct fx_thread *t, void *ucontext, fx_asgct_trace *trace,
                                   uint32_t depth, struct fx_heap_memo *m)
{
#if defined(__x86_64__)
    struct fx_regs caller;
    if (!fx_native_walk_to_java_sigsafe(t, ucontext, &caller))
        return FX_REC_NOT_FOUND;
    __atomic_add_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    const struct fx_code_table *tab = __atomic_load_n(&fx_sig.code_table, __ATOMIC_SEQ_CST);
    const struct fx_code_range *n = fx_recover_find_any(tab, caller.pc, m);
    /* The step to the caller may have gone by rbp, which at a leaf's first instruction or in a
     * frameless leaf is still the compiled caller's: the "caller" found would be the caller's
     * own caller, a Java frame dropped. So the call before caller.pc must have gone to native
     * code, outside the code cache, as a leaf call does, not into an nmethod or a stub. */
    uintptr_t target = 0;
    bool called =
            n != NULL && n->kind == FX_BLOB_NMETHOD &&
            fx_recover_blob_current(n, __atomic_load_n(&fx_sig.compile_id_off, __ATOMIC_RELAXED)) &&
            fx_recover_after_call(n, caller.pc) && fx_recover_call_target(n, caller.pc, &target) &&
            fx_recover_find(tab, target) == NULL && fx_native_in_mapped_file_sigsafe(target);
    __atomic_sub_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    if (!called)
        return FX_REC_NOT_CALLED;
    ucontext_t cc;
    fx_recover_patch(&cc, ucontext, &caller);
    fx_asgct_trace up = {.env_id = t->env, .num_frames = 0, .frames = trace->frames};
    fx_sig.asgct(&up, (jint)depth, &cc);
    if (up.num_frames <= 0)
        return FX_REC_WALK;
    if (fx_recover_bci0_sigsafe(&trace->frames[0], caller.pc, m)) /* 8.5a: maybe deoptimized */
        return FX_REC_BCI0;
    trace->num_frames = up.num_frames;
    return FX_REC_LEAF_NATIVE;
#else
    (void)t, (void)ucontext, (void)trace, (void)depth, (void)m;
    return FX_REC_NOT_FOUND;
#endif
}

uint32_t fx_native_below_sigsafe(const struct fx_thread *t, const void *ucontext, uint64_t *types,
                                 uint64_t *below, uint32_t cap, uint32_t *n_below,
                                 struct fx_heap_memo *m)
{
    *n_below = 0;
#if defined(__x86_64__)
    if (ucontext == NULL || t->stack_lo == 0)
        return 0;
    bool walk = below != NULL && __atomic_load_n(&fx_native.enabled, __ATOMIC_RELAXED) != 0;
    __atomic_add_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    const struct fx_code_table *tab = __atomic_load_n(&fx_sig.code_table, __ATOMIC_SEQ_CST);
    long cid_off = __atomic_load_n(&fx_sig.compile_id_off, __ATOMIC_RELAXED);
    bool from_anchor, crossed, vm_stub, typed = types != NULL;
    uint64_t none[1]; /* no types wanted: room 0, nothing written */
    if (types == NULL)
        types = none;
    struct fx_regs at = top_sigsafe(t, ucontext, tab, m, &from_anchor, &crossed, &vm_stub);
    bool mh_top = false; /* the top a method handle intrinsic stepped over (8.5l) */
    /* after a crossed stub the pc is a return address: the prologue and epilogue rules are an
     * interrupted pc's (on JDK 17 a return address may sit right before an epilogue's add rsp) */
    bool stepped = !crossed && top_step_sigsafe(tab, m, cid_off, from_anchor, ucontext, t->stack_lo,
                                                t->stack_hi, &at, &typed, &mh_top);
    /* the top a C1 OSR frame at a pc before its OSR entry (recover.c, fx_recover_osr): its
     * walk's end is counted, the rule's oracle (a frame not built there would send the walk to
     * a word that is no return address: it stops, named) */
    const struct fx_code_range *top =
            stepped || crossed ? NULL : fx_recover_find_any(tab, at.pc, m);
    bool osr_pre = top != NULL && top->kind == FX_BLOB_NMETHOD && (top->flags & FX_RANGE_OSR) &&
                   top->level >= 1 && top->level <= 3 && top->verified != FX_OFF_UNKNOWN &&
                   at.pc < top->begin + top->verified;
    /* the top a C2 frame after a byte 0x50-0x57 (recover.c, c2_push_before: the instruction
     * there decoded, session 23): its walk's end is counted as the OSR rule's is, the refused
     * ones too (no Java frame walked from the top) */
    bool c2_lone = top != NULL && top->kind == FX_BLOB_NMETHOD && top->level == 4 &&
                   at.pc > top->begin && ((const uint8_t *)at.pc)[-1] >= 0x50 &&
                   ((const uint8_t *)at.pc)[-1] <= 0x57;
    uint32_t first = 0;
    uint8_t last = FX_NSTOP_NO_ENTRY;
    uint32_t nt = 0, nw = 0, pcs = 0; /* nt: physical Java frames walked, the first typed */
    for (uint32_t seg = 0;; seg++) {
        struct fx_regs end;
        uint32_t refused = m != NULL ? m->refused : 0;
        uint32_t room = typed && nt < FX_TYPES_MAX ? FX_TYPES_MAX - nt : 0;
        uint8_t why;
        uint32_t k = fx_recover_segment(
                tab, m, cid_off, &at, seg > 0 || stepped || crossed, t->stack_lo, t->stack_hi,
                types + (room > 0 ? nt : 0), room,
                walk && nt < FX_JAVA_WALK_MAX ? FX_JAVA_WALK_MAX - nt : room, &end, &why);
        nt += k;
        if (seg == 0)
            first = k;
        if (!walk)
            break;
        if (k == 0 || end.pc == 0 || seg == FX_BELOW_SEGS) {
            /* past the sample's code heap lookups: named for it (fx_heap_memo) */
            uint8_t stop = seg == FX_BELOW_SEGS                 ? FX_NSTOP_DEPTH
                           : m != NULL && m->refused != refused ? FX_NSTOP_HEAP_BUDGET
                                                                : FX_NSTOP_NO_ENTRY;
            below[nw++] = (uint64_t)stop << 8;
            if (seg == 0 && k == 0 && vm_stub) /* not Java code at the top: named so */
                why = FX_SEG_VM_STUB;
            if (stop == FX_NSTOP_NO_ENTRY && why < FX_SEG_STOPS) /* the finer reason, counted */
                __atomic_add_fetch(&fx_native.no_entry[why], 1, __ATOMIC_RELAXED);
            break;
        }
        uint8_t stop;
        /* the call stub the Java walk ended in (issue 32: async-profiler's `call_stub` frame
         * between JavaCalls::call_helper and the first Java frame), proven by end.pc's range */
        const struct fx_code_range *cs = fx_recover_find(tab, end.pc);
        uint64_t stub = cs != NULL && cs->kind == FX_BLOB_STUB && (cs->flags & FX_RANGE_CALL_STUB)
                                ? FX_BELOW_CALL_STUB | (cs->name & 0xFFFF)
                                                               << FX_BELOW_STUB_NAME_SHIFT
                                : 0;
        uint32_t nn = fx_native_walk_entry_sigsafe(t, &end, below + nw + 1, cap - pcs, &stop);
        bool more = stop == FX_NSTOP_JAVA && nn > 0;
        last = stop;
        if (stop == FX_NSTOP_JAVA && nn == 0)
            stop = FX_NSTOP_EMPTY;
        below[nw] =
                nn | (uint64_t)stop << 8 | (more ? FX_BELOW_MORE : 0) | (uint64_t)nt << 24 | stub;
        nw += 1 + nn;
        pcs += nn;
        if (!more)
            break;
        at = end;
        /* the native walk reached a return address in a stub that called the VM, which called
         * Java back (session 17): its frame crossed to its Java caller where HotSpot's own
         * walk crosses it, the frame complete there (is_frame_complete_at: a RuntimeStub, the
         * resolve blobs); a Runtime1 stub is frame_never_safe, AsyncGetCallTrace's frames end
         * at it (safe_for_sender), and so does this walk */
        const struct fx_code_range *s = fx_recover_find(tab, at.pc);
        if (s != NULL && s->complete != FX_OFF_UNKNOWN && at.pc >= s->begin + s->complete)
            cross_stub_sigsafe(s, &at, t->stack_lo, t->stack_hi);
    }
    __atomic_sub_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    if (osr_pre && walk)
        __atomic_add_fetch(last == FX_NSTOP_CHAIN_END ? &fx_native.osr_pre_root
                                                      : &fx_native.osr_pre_cut,
                           1, __ATOMIC_RELAXED);
    if (mh_top && stepped && walk)
        __atomic_add_fetch(last == FX_NSTOP_CHAIN_END ? &fx_native.mh_root : &fx_native.mh_cut, 1,
                           __ATOMIC_RELAXED);
    if (c2_lone && walk)
        __atomic_add_fetch(first == 0                   ? &fx_native.c2_lone_refused
                           : last == FX_NSTOP_CHAIN_END ? &fx_native.c2_lone_root
                                                        : &fx_native.c2_lone_cut,
                           1, __ATOMIC_RELAXED);
    *n_below = nw;
    return !typed ? 0 : nt < FX_TYPES_MAX ? nt : FX_TYPES_MAX;
#else
    (void)t, (void)ucontext, (void)types, (void)below, (void)cap, (void)m;
    return 0;
#endif
}
