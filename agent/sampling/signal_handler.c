/* SPDX-License-Identifier: Apache-2.0 */
/* THE SIGNAL PATH. Everything that runs when SIGPROF interrupts a thread is in this file, plus
 * the static inline fx_ring_*_sigsafe helpers of include/fx_ring.h. Read it in one sitting.
 *
 * Purpose: on SIGPROF, ask HotSpot for the interrupted thread's Java stack (AsyncGetCallTrace)
 * into a buffer that thread already owns, and push one struct fx_sample_rec into its ring.
 * Where ASGCT fails in Java code because the pc is where HotSpot has no frame (a dispatch stub,
 * an nmethod's prologue or epilogue, an I2C/C2I adapter, C1's G1 post-barrier stub, the
 * interpreter's method entry), the stack is recovered from the caller's context where the rules
 * of recover*.c prove it (x86-64 only; docs/VALIDATION.md section 8), else the failure stays and
 * is counted; those rules are part of this path. Native frames (cstack=fp) are walked by
 * native_walk.c, also of this path, and stored after the Java frames; the kernel frames of the
 * perf sample that raised the signal (kstack=yes) are read from the thread's perf ring
 * (include/fx_perfring.h) and stored after those. When the thread's probe holds a request
 * (probe.c: the oracle, validate mode), the trace goes into the probe buffer instead, and the
 * request's generation is published as done; a probe's own signal (SI_QUEUE) never becomes a
 * sample. Nothing here waits for anyone.
 *
 * Invariants (established outside signal context, relied on here):
 *  - fx_sig.asgct is resolved in Agent_OnLoad, before any timer or signal source exists.
 *  - A thread's struct fx_thread (ring, frame buffer, JNIEnv, perf fd) is complete before it
 *    is published in fx_sig.table with a release store of its tid, and before its timer is
 *    armed; it stays valid until the drain frees it, which happens only after the owning thread
 *    removed its own tid (ThreadEnd) and the ring was emptied (threads.c). Only the owning
 *    thread's handler looks its tid up, so lookup and removal never race on one entry.
 *  - Its ring, frame buffer and depth are read only after `enabled` was seen set, inside the
 *    fx_sig.in_flight bracket; they change (freed at a stop, re-sized at a start) only while
 *    `enabled` is clear and after in_flight was seen at 0 (threads.c, "Buffers"). Either may
 *    be NULL (allocation failed): checked, counted, no sample.
 *  - SIGPROF is installed without SA_NODEFER, so the handler never nests on one thread: the
 *    frame buffer, the probe buffer, t->memo and the ring's producer side have one writer.
 *  - A probe's buffer and depth are set before its request is published (release), and are
 *    not changed while a request is pending or claimed and unfinished (probe.c).
 *  - The thread is found by its kernel tid in a fixed lock-free table instead of a __thread
 *    variable: no TLS first-touch (no __tls_get_addr), and it works for threads fxagent did
 *    not start.
 *  - A published code table (fx_sig.code_table) is immutable but for its recent table's appends
 *    (coderecent.h); freed or reused only once code_readers was 0 after its replacement.
 *  - t->stack_lo/stack_hi are set before the thread is published (a thread that is not a Java
 *    thread may get them later, hi before lo: sample.h), and `native_only` never changes.
 *  - t->kring (with its data offset and size) is published with a release store after the ring
 *    is mapped and before the perf event is enabled; it is cleared and unmapped only by the
 *    thread itself or where no handler is in flight (kstack.c). kfloor_ns is this thread's.
 *
 * Allowed calls (checked by the CTest unit.signal_path_allowlist against
 * agent/signal_allowlist.txt; nm -u of this object must list nothing else):
 *  - AsyncGetCallTrace, through the fx_sig.asgct pointer (no symbol);
 *  - clock_gettime (CLOCK_MONOTONIC via the vDSO; CLOCK_THREAD_CPUTIME_ID, a plain syscall, where
 *    fx_sig.read_cpu_clock is set and on the 1 in FX_TIMED_ONE_IN signals whose cost is measured);
 *  - syscall(SYS_gettid): a raw system call, no locks or allocation; and in receiver_sig.c,
 *    syscall(SYS_process_vm_readv) on this process: a checked read of one object's klass word
 *    (codeheap_sig.c: ~8 a lookup of a method compiled since the code table, 24 a sample);
 *  - memcpy, memset (async-signal-safe since POSIX.1-2008 TC2);
 *  - errno (__errno_location), saved on entry and restored on every return;
 *  - __atomic_* builtins (inline instructions, no library calls; the probe's 4-byte CAS is a
 *    lock cmpxchg).
 * Not allowed: malloc/free or fx_alloc, stdio or logging, locks or spin-waits, JNI/JVMTI other
 * than ASGCT, pthread_getspecific, __thread without tls_model("initial-exec"). */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "fx_ring.h"
#include "fx_tctx.h"
#include "internal.h"
#include "native_walk.h"
#include "recover_anchor.h"
#include "recover_partial.h"
#include "recover_vmcode.h"

struct fx_sigstate fx_sig;

/* Signal-safe: pure arithmetic. Shared with threads.c, which inserts with the same probe. */
uint32_t fx_signal_handler_hash_sigsafe(int32_t tid)
{
    return ((uint32_t)tid * 2654435761u) & (FX_TID_SLOTS - 1);
}

/* Signal-safe: acquire loads only; at most FX_TID_MAX_PROBE slots; stops at a never-used slot. */
struct fx_thread *fx_signal_handler_lookup_sigsafe(int32_t tid)
{
    uint32_t h = fx_signal_handler_hash_sigsafe(tid);
    for (uint32_t i = 0; i < FX_TID_MAX_PROBE; i++) {
        struct fx_tid_slot *s = &fx_sig.table[(h + i) & (FX_TID_SLOTS - 1)];
        int32_t k = __atomic_load_n(&s->tid, __ATOMIC_ACQUIRE);
        if (k == tid)
            return __atomic_load_n(&s->thread, __ATOMIC_RELAXED);
        if (k == 0)
            return NULL;
    }
    return NULL;
}

/* Signal-safe: vDSO or a plain syscall; 0 if the clock cannot be read. */
static int64_t clock_ns_sigsafe(clockid_t c)
{
    int64_t ns = fx_clock_ns(c); /* include/fx_clock.h: clock_gettime only */
    return ns < 0 ? 0 : ns;
}

/* Signal-safe: how many intervals this signal stands for. A POSIX timer's overrun count comes
 * with its siginfo (timer_getoverrun's number, without the syscall); the thread CPU clock fires
 * only on a scheduler tick, so at 1 ms on a 250 Hz kernel one signal carries about 3 overruns. */
static uint32_t weight_sigsafe(const siginfo_t *si)
{
    if (si != NULL && si->si_code == SI_TIMER && si->si_overrun > 0)
        return 1u + (uint32_t)si->si_overrun;
    return 1;
}

#if defined(__x86_64__)
/* Signal-safe: the blob pc is in, by the code table (codemap.c), or for a method compiled since,
 * by HotSpot's code heaps (codeheap_sig.c, m; *fresh then, if given). The reader count brackets
 * the table's use (the drain frees a replaced one only when no handler holds it). */
static bool find_blob_sigsafe(uintptr_t pc, struct fx_code_range *out, bool *fresh,
                              struct fx_heap_memo *m)
{
    __atomic_add_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    const struct fx_code_table *tab = __atomic_load_n(&fx_sig.code_table, __ATOMIC_SEQ_CST);
    const struct fx_code_range *r = fx_recover_find_any(tab, pc, m);
    if (r != NULL)
        memcpy(out, r, sizeof(*out));
    if (fresh != NULL)
        *fresh = fx_heap_memo_holds(m, r);
    __atomic_sub_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    return r != NULL;
}

/* Signal-safe: is the nmethod at r->blob still the compilation r was made from
 * (recover_anchor.c)? Only a range that passes may name or recover anything. */
static bool blob_current_sigsafe(const struct fx_code_range *r)
{
    return fx_recover_blob_current(r, __atomic_load_n(&fx_sig.compile_id_off, __ATOMIC_RELAXED));
}

/* Signal-safe: ASGCT failed in Java code (-5, -6). If the pc is in a known blob with no frame of
 * its own here (fx_recover.h), ASGCT runs again from the caller's context (a copy of the ucontext
 * on this stack, RIP/RSP/RBP patched) into frames[1..], frames[0] the blob's frame. Returns the
 * FX_REC_* case or a failure (< 0); *blob: the blob's frame when known and current (else lineno
 * 0); *fresh: the blob found in the code heaps (m: the sample's lookups), not in the table. */
static int recover_sigsafe(struct fx_thread *t, void *ucontext, fx_asgct_trace *trace,
                           uint32_t depth, fx_asgct_frame *blob, bool *fresh,
                           struct fx_heap_memo *m)
{
    const ucontext_t *uc = ucontext;
    const greg_t *g = uc->uc_mcontext.gregs;
    uintptr_t gpr[16]; /* for the adapter and interpreter entry rules */
    fx_recover_gpr(uc, gpr);
    struct fx_regs in = {(uintptr_t)g[REG_RIP], (uintptr_t)g[REG_RSP], (uintptr_t)g[REG_RBP], gpr};
    struct fx_code_range r;
    if (!find_blob_sigsafe(in.pc, &r, fresh, m)) /* VM code called from Java (8.5e, 8.5i) */
        return fx_recover_vmcode_sigsafe(t, ucontext, trace, depth, blob, m);
    bool current = blob_current_sigsafe(&r);
    if (r.kind == FX_BLOB_NMETHOD && !current)
        return FX_REC_LAYOUT;
    blob->lineno = r.kind == FX_BLOB_NMETHOD ? FX_LINE_NMETHOD : FX_LINE_STUB;
    blob->method_id = (jmethodID)(uintptr_t)r.name;
    struct fx_regs caller; /* by fx_recover_caller's rules, or the interpreter's method entry */
    int rc = fx_recover_caller_sigsafe(&r, &fx_sig.interp, &in, t->stack_lo, t->stack_hi, current,
                                       &caller, blob);
    if (rc <= 0 || !fx_recover_called_sigsafe(rc, &r, in.pc, caller.pc, m))
        return rc <= 0 ? rc : FX_REC_NOT_CALLED; /* a frameless callee's call proven, 8.5k-l */
    if (rc == FX_REC_C1_BARRIER) { /* returns into C1's slow-case code: resume at its branch */
        struct fx_code_range n;
        if (!find_blob_sigsafe(caller.pc, &n, NULL, m) || !blob_current_sigsafe(&n) ||
            !fx_recover_continuation(&n, caller.pc, &caller.pc))
            return FX_REC_DECODE;
    }
    /* issue 32: a stub's caller follows a call (8.5d; a frameless stub's: to it, then pops) */
    struct fx_code_range n;
    bool pushed = rc == FX_REC_FRAMELESS, unknown_caller = false;
    int why = FX_REC_NOT_CALLED; /* FX_REC_NO_PCDESC: a partial stack (recover_partial.c) */
    if (rc == FX_REC_STUB_FRAME || pushed) {
        unknown_caller = !find_blob_sigsafe(caller.pc, &n, NULL, m);
        if (unknown_caller ? pushed
                           : n.kind != FX_BLOB_NMETHOD || !blob_current_sigsafe(&n) ||
                                     (pushed ? !fx_recover_pushed_return(&n, r.begin, &caller)
                                             : (why = fx_recover_stub_refused(&r, &n, caller.pc))))
            return fx_recover_partial_sigsafe(t, uc, trace, depth, blob, &n, &caller, m, why);
    }
    if (depth < 2)
        return FX_REC_WALK;
    ucontext_t cc;
    fx_recover_patch(&cc, uc, &caller);
    fx_asgct_trace up = {.env_id = t->env, .num_frames = 0, .frames = trace->frames + 1};
    fx_sig.asgct(&up, (jint)depth - 1, &cc);
    if (up.num_frames <= 0)
        return FX_REC_WALK;
    if (unknown_caller) {
        /* ASGCT named a frame at caller.pc - 1, so it lies in a code blob of the code cache,
         * whose memory is committed: the call's bytes before it can be read. */
        n = (struct fx_code_range){.begin = caller.pc - 5, .end = caller.pc};
        if ((why = fx_recover_stub_refused(&r, &n, caller.pc)) != 0)
            return why;
    }
    /* A caller whose return address HotSpot patched to its deoptimization handler: pc - 1 lies
     * in the nmethod's stub section, where no PcDesc is, and AsyncGetCallTrace then names the
     * frame as its nmethod's root method at bci 0 without its inlined frames (forte.cpp,
     * vframeStreamCommon::fill_from_frame for a thread in Java). Refused where that fallback
     * could have named it (fx_recover_bci0_sigsafe, docs/VALIDATION.md 8.5a). */
    if (fx_recover_bci0_sigsafe(&trace->frames[1], caller.pc, m))
        return FX_REC_BCI0;
    trace->frames[0] = *blob;
    trace->num_frames = up.num_frames + 1;
    return rc;
}

/* Signal-safe: one more in a counter only this thread's handler writes; none for a probe. */
static void bump_sigsafe(uint64_t *c, bool count)
{
    if (count)
        __atomic_store_n(c, *c + 1, __ATOMIC_RELAXED);
}

/* Signal-safe: ASGCT said "not in Java" (-3): the Java frames from the thread's frame anchor
 * (recover_anchor.c), read in its JavaThread (JNIEnv inside it), walked in the code table under
 * the reader bracket, into trace (depth frames; af: fx_recover_anchor's); as recover_sigsafe */
static int anchor_sigsafe(struct fx_thread *t, fx_asgct_trace *trace, uint32_t depth,
                          fx_asgct_frame *blob, uint8_t *stop, struct fx_heap_memo *m,
                          struct fx_anchor_facts *af)
{
    long sp_off = __atomic_load_n(&fx_sig.anchor_sp_off, __ATOMIC_RELAXED);
    long pc_off = __atomic_load_n(&fx_sig.anchor_pc_off, __ATOMIC_RELAXED);
    long fp_off = __atomic_load_n(&fx_sig.anchor_fp_off, __ATOMIC_RELAXED);
    struct fx_regs last = {0, 0, 0, NULL};
    if (sp_off != 0 && pc_off != 0) {
        memcpy(&last.sp, (const char *)t->env + sp_off, sizeof(last.sp));
        memcpy(&last.pc, (const char *)t->env + pc_off, sizeof(last.pc));
        if (fp_off != 0) /* an interpreted last Java frame's rbp (the interpreter sets it) */
            memcpy(&last.fp, (const char *)t->env + fp_off, sizeof(last.fp));
    }
    /* issue 32: interpreted frames named once the layout is published (pid last) */
    const struct fx_interp_layout *il =
            __atomic_load_n(&fx_sig.interp.pid, __ATOMIC_ACQUIRE) != 0 ? &fx_sig.interp : NULL;
    uint32_t n = 0;
    __atomic_add_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    int rc = fx_recover_anchor(__atomic_load_n(&fx_sig.code_table, __ATOMIC_SEQ_CST), m,
                               __atomic_load_n(&fx_sig.compile_id_off, __ATOMIC_RELAXED), &last, il,
                               t->stack_lo, t->stack_hi, trace->frames, depth, &n, blob, stop, af);
    __atomic_sub_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    if (rc > 0)
        trace->num_frames = (jint)n;
    return rc;
}

/* Signal-safe: after AsyncGetCallTrace failed into trace (depth frames at trace->frames), the
 * recoveries of fx_recover.h; returns the record's recovery byte (0: none tried), sets *kept, the
 * frames to keep. A sample counts the outcome in t's figures (count), a probe does not. */
static uint8_t recover_any_sigsafe(struct fx_thread *t, void *ucontext, fx_asgct_trace *trace,
                                   uint32_t depth, uint32_t *kept, bool count, uint8_t *stop,
                                   struct fx_heap_memo *m)
{
    fx_asgct_frame blob = {.lineno = 0, .method_id = NULL};
    bool fresh = false;
    int rc;
    if (ucontext == NULL || depth == 0)
        return 0;
    /* -4 too (issue 32): the anchor walkable, but ASGCT found no Java frame from it: its
     * first frame is a Runtime1 stub, made frame_never_safe, so frame::safe_for_sender refuses
     * it; the anchor walk crosses it by its frame size, as HotSpot's own walks do */
    if (trace->num_frames == FX_ASGCT_UNKNOWN_NOT_JAVA ||
        trace->num_frames == FX_ASGCT_NOT_WALKABLE_NOT_JAVA ||
        fx_vmcode_anchored_sigsafe(t, ucontext, trace->num_frames, m)) /* and 8.5i's anchored */
        rc = anchor_sigsafe(t, trace, depth, &blob, stop, m, NULL);
    else if (trace->num_frames == FX_ASGCT_UNKNOWN_JAVA ||
             trace->num_frames == FX_ASGCT_NOT_WALKABLE_JAVA)
        rc = recover_sigsafe(t, ucontext, trace, depth, &blob, &fresh, m);
    else if (trace->num_frames > 0 && fx_leaf_unanchored_sigsafe(t, ucontext, m))
        rc = fx_recover_vmcode_sigsafe(t, ucontext, trace, depth, &blob, m); /* not ASGCT's */
    else if (trace->num_frames != FX_ASGCT_DEOPT || /* -9: 8.5m, 0 where it does not apply */
             (rc = fx_recover_deopt_sigsafe(t, ucontext, trace, depth, stop, m)) == 0)
        return 0;
    if (rc <= 0 && trace->num_frames > 0) /* that guess refused: the Java frames are not known */
        trace->num_frames = FX_ASGCT_UNKNOWN_JAVA;
    if (rc > 0) {
        bump_sigsafe(&t->recovered[rc], count);
        if (fresh)
            bump_sigsafe(&t->rec_codeheap, count);
        *kept = (uint32_t)trace->num_frames;
        return (uint8_t)rc;
    }
    bump_sigsafe(&t->rec_failed[-rc], count);
    if (blob.lineno == 0)
        return (uint8_t)(FX_REC_FAILED | -rc);
    trace->frames[0] = blob;
    *kept = 1;
    return (uint8_t)(FX_REC_NAMED | -rc);
}
#endif

/* Signal-safe: the virtual thread mounted on this carrier. With fx_sig.vt_owner_off (JDK 24+,
 * no mount events): JavaThread::_monitor_owner_id, which HotSpot sets to the mounted virtual
 * thread's id at each mount and back to the carrier's own at each unmount, read with one aligned
 * load in this thread's own JavaThread (its JNIEnv lies inside it; vmstructs.c checked the offset
 * against the JavaThread's size). Else the slot the mount events write (struct fx_thread,
 * vt_seq/vt_id): only this thread's mount and unmount callbacks write it and this handler may
 * have interrupted one of them, never the reverse, so compiler fences order the reads (a
 * seqlock whose writer cannot run while the reader does). */
uint8_t fx_signal_handler_vthread_sigsafe(const struct fx_thread *t, uint64_t *id)
{
    long off = __atomic_load_n(&fx_sig.vt_owner_off, __ATOMIC_RELAXED);
    if (off != 0) {
        *id = 0;
        if (t->env == NULL || t->java_tid == 0)
            return FX_VT_NONE;
        int64_t owner = __atomic_load_n((const int64_t *)(const void *)((const char *)t->env + off),
                                        __ATOMIC_RELAXED);
        if (owner <= 0 || (uint64_t)owner == t->java_tid)
            return FX_VT_NONE;
        *id = (uint64_t)owner;
        return FX_VT_ID;
    }
    uint32_t seq = __atomic_load_n(&t->vt_seq, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_ACQUIRE);
    *id = __atomic_load_n(&t->vt_id, __ATOMIC_RELAXED);
    if (seq == 0)
        return FX_VT_UNSEEN;
    if (seq & 1)
        return FX_VT_MOUNTING;
    return *id != 0 ? FX_VT_ID : FX_VT_NONE;
}

/* Signal-safe: a thread that is not a Java thread gets no ASGCT call; while its stack bounds are
 * unknown, its stack pointer tells vm_threads.c which mapping is its stack. */
static void native_only_sigsafe(struct fx_thread *t, const void *ucontext, fx_asgct_trace *trace)
{
    trace->num_frames = FX_NOT_JAVA_THREAD;
#if defined(__x86_64__)
    if (ucontext != NULL && __atomic_load_n(&t->stack_lo, __ATOMIC_RELAXED) == 0) {
        const ucontext_t *uc = ucontext;
        __atomic_store_n(&t->seen_sp, (uintptr_t)uc->uc_mcontext.gregs[REG_RSP], __ATOMIC_RELAXED);
    }
#else
    (void)t, (void)ucontext;
#endif
}

/* Signal-safe: the kernel frames of the perf sample that raised this signal (kstack.c maps
 * the ring, include/fx_perfring.h says how the record is chosen); FX_KREC_OFF with no ring. */
static uint32_t kernel_sigsafe(struct fx_thread *t, int64_t now_ns, uint64_t *ips, uint8_t *state)
{
    struct perf_event_mmap_page *pg = __atomic_load_n(&t->kring, __ATOMIC_ACQUIRE);
    *state = FX_KREC_OFF;
    if (pg == NULL)
        return 0;
    return fx_perfring_take_sigsafe(pg, (const uint8_t *)pg + t->kring_data_off, t->kring_data_size,
                                    t->kfloor_ns, now_ns, ips, FX_KERNEL_MAX, FX_KERNEL_MAX, state);
}

/* Signal-safe: the end of this thread's handler, below which a record is an older signal's:
 * read after the handler's last system call, so an overflow it took (the thread in our own
 * gettid or clock read) is not mistaken for the next signal's. Only with a ring. */
static void kernel_floor_sigsafe(struct fx_thread *t)
{
    if (__atomic_load_n(&t->kring, __ATOMIC_RELAXED) != NULL)
        t->kfloor_ns = clock_ns_sigsafe(CLOCK_MONOTONIC);
}

/* Signal-safe: a counted part of the record (n, then n words) at tail; the byte past it. */
static uint8_t *put_part_sigsafe(uint8_t *tail, uint64_t n, const uint64_t *w)
{
    memcpy(tail, &n, sizeof(n));
    if (n > 0)
        memcpy(tail + sizeof(n), w, n * sizeof(uint64_t));
    return tail + (1 + n) * sizeof(uint64_t);
}

/* Signal-safe: ASGCT into the thread's own buffer (recovering the stack where fx_recover.h
 * proves the caller's context), then one record into its ring. */
static void record_sigsafe(struct fx_thread *t, const siginfo_t *si, void *ucontext, int64_t now_ns,
                           int64_t cpu_ns)
{
    fx_asgct_trace trace = {.env_id = t->env, .num_frames = 0, .frames = t->frames};
    if (t->native_only) /* no JNIEnv, no Java frames: the native walk alone (vm_threads.c) */
        native_only_sigsafe(t, ucontext, &trace);
    else /* the buffer holds depth + 1 frames (threads.c): a deeper stack fills it */
        fx_sig.asgct(&trace, (jint)t->depth + 1, ucontext);
    uint8_t recovery = 0, walk_stop = FX_WSTOP_NONE;
    uint32_t kept = trace.num_frames > 0 ? (uint32_t)trace.num_frames : 0;
    struct fx_heap_memo *memo = memset(&t->memo, 0, sizeof(t->memo)); /* its walks', shared */
#if defined(__x86_64__)
    recovery =
            recover_any_sigsafe(t, ucontext, &trace, t->depth + 1, &kept, true, &walk_stop, memo);
#endif
    bool cut = trace.num_frames > 0 && kept > t->depth; /* deeper than depth=: cut there */
    if (cut) {
        kept = t->depth;
        trace.num_frames = (jint)kept;
    }

    /* issue 16: native frames after the Java ones; issue 32: then the ones below and between
     * the Java frames (FX_BELOW), FX_NATIVE_MAX in all, recovered samples' too (no types) */
    uint64_t native[FX_NATIVE_MAX + FX_BELOW_SEGS + 1];
    uint8_t native_stop;
    uint32_t n_native = fx_native_walk_sigsafe(t, ucontext, true, native, &native_stop);
    uint64_t vt_id;
    uint8_t vt = fx_signal_handler_vthread_sigsafe(t, &vt_id);
    uint64_t kernel[FX_KERNEL_MAX]; /* issue 16: the perf callchain's kernel part, after those */
    uint8_t kstate;
    uint64_t n_kernel = kernel_sigsafe(t, now_ns, kernel, &kstate);
    uint64_t types[FX_TYPES_MAX], n_types = 0, *tw = recovery == 0 ? types : NULL;
    uint32_t n_below = 0;
    /* no root side to a stack cut at the depth or to a stopped walk's (stacks.c drops it) */
    if (recovery < FX_REC_CASES && kept > 0 && walk_stop == FX_WSTOP_NONE)
        n_types = fx_native_below_sigsafe(t, ucontext, tw, cut ? NULL : native + n_native,
                                          FX_NATIVE_MAX - n_native, &n_below, memo);
    uint64_t n_found = n_types > 0 ? memo->n_found : 0; /* issue 31: FX_TYPE_FOUND's nmethods */
    uint64_t task[2]; /* issue 32: a compiler thread's compile (compile_task_sig.c), after those */
    bool has_task = t->native_only && fx_compile_task_read_sigsafe(t, task);
    /* issue 32 item 3: a dispatch stub's receiver class (receiver_sig.c), after those */
    bool has_recv = recovery == FX_REC_DISPATCH;
    uint64_t recv = has_recv ? fx_receiver_read_sigsafe(ucontext) : 0;
    struct fx_tctx_rec ctx; /* issue 33: the trace context, last (include/fx_tctx.h) */
    const struct fx_tctx_rec *tc = __atomic_load_n(&t->tctx, __ATOMIC_ACQUIRE);
    bool has_ctx = tc != NULL && fx_tctx_copy_sigsafe(tc, &ctx) != 0;
    uint32_t payload = (uint32_t)(sizeof(struct fx_sample_rec) + kept * sizeof(fx_asgct_frame) +
                                  (n_native + (vt == FX_VT_ID)) * sizeof(uint64_t) +
                                  (kstate != FX_KREC_OFF ? (1 + n_kernel) * sizeof(uint64_t) : 0) +
                                  (n_types > 0 ? (1 + n_types) * sizeof(uint64_t) : 0) +
                                  (n_found > 0 ? (1 + n_found) * sizeof(uint64_t) : 0) +
                                  (n_below > 0 ? (1 + n_below) * sizeof(uint64_t) : 0) +
                                  (has_task ? sizeof(task) : 0) + (has_recv ? sizeof(recv) : 0) +
                                  (has_ctx ? sizeof(ctx) : 0));
    struct fx_sample_rec *r = fx_ring_reserve_sigsafe(&t->ring, payload);
    if (r == NULL)
        return; /* full: fx_ring counted the drop */
    r->time_ns = now_ns;
    r->cpu_ns = cpu_ns;
    r->num_frames = trace.num_frames;
    r->weight = weight_sigsafe(si);
    r->state = __atomic_load_n(&t->wall_state, __ATOMIC_ACQUIRE);
    r->truncated = cut;
    r->walk_stop = walk_stop;
    r->types = n_types > 0;
    r->below = n_below > 0;
    r->task = has_task;
    r->recovery = recovery;
    r->native_frames = (uint8_t)n_native;
    r->native_at = (uint16_t)kept;
    r->native_stop = native_stop;
    r->vthread = vt;
    r->kernel = kstate;
    _Static_assert(FX_KREC_COUNT <= 8, "fx_sample_rec.kernel has 3 bits");
    if (kept > 0)
        memcpy(r->frames, t->frames, kept * sizeof(fx_asgct_frame));
    uint8_t *tail = (uint8_t *)(r->frames + kept);
    if (n_native > 0)
        memcpy(tail, native, n_native * sizeof(uint64_t));
    tail += n_native * sizeof(uint64_t);
    if (vt == FX_VT_ID) {
        memcpy(tail, &vt_id, sizeof(vt_id));
        tail += sizeof(vt_id);
    }
    if (kstate != FX_KREC_OFF)
        tail = put_part_sigsafe(tail, n_kernel, kernel);
    tail = n_types > 0 ? put_part_sigsafe(tail, n_types, types) : tail;
    r->found = n_found > 0;
    tail = n_found > 0 ? put_part_sigsafe(tail, n_found, memo->found) : tail;
    tail = n_below > 0 ? put_part_sigsafe(tail, n_below, native + n_native) : tail;
    if (has_task) {
        memcpy(tail, task, sizeof(task));
        tail += sizeof(task);
    }
    r->receiver = has_recv;
    if (has_recv)
        memcpy(tail, &recv, sizeof(recv));
    /* every part is whole 8-byte words, so the ring's length is the payload (fx_ring.h rounds
     * a record up to 8) and the context, last, ends where the reader looks for it */
    _Static_assert(sizeof(fx_asgct_frame) % 8 == 0 && sizeof(struct fx_tctx_rec) % 8 == 0,
                   "record parts are whole words");
    r->tctx = has_ctx;
    if (has_ctx) /* the ring rounds a record up to 8 bytes: the context ends at payload */
        memcpy((uint8_t *)r + payload - sizeof(ctx), &ctx, sizeof(ctx));
    fx_ring_commit_sigsafe(&t->ring);
}

/* Signal-safe: a SIGPROF sent by probe.c (rt_tgsigqueueinfo with our marker), not a tick. */
static bool is_probe_signal_sigsafe(const siginfo_t *si)
{
    return si != NULL && si->si_code == SI_QUEUE && si->si_value.sival_int == FX_PROBE_SIGVAL;
}

/* Signal-safe: serves this thread's pending probe request, if any (struct fx_probe): the CAS
 * claims it, so a requester that cleared it first (gave up) knows the buffer stays untouched. */
static bool probe_sigsafe(struct fx_thread *t, void *ucontext)
{
    struct fx_probe *p = &t->probe;
    uint32_t gen = __atomic_load_n(&p->request, __ATOMIC_ACQUIRE);
    if (gen == 0 || !__atomic_compare_exchange_n(&p->request, &gen, 0, false, __ATOMIC_ACQUIRE,
                                                 __ATOMIC_RELAXED))
        return false;
    fx_asgct_trace trace = {.env_id = t->env, .num_frames = 0, .frames = p->frames};
    fx_sig.asgct(&trace, (jint)p->want, ucontext);
    uint8_t recovery = 0;
    __atomic_store_n(&p->asgct_code, trace.num_frames, __ATOMIC_RELAXED);
    int32_t shadow_rc = 0, shadow_n = 0, shadow_whole = 0;
#if defined(__x86_64__)
    uint32_t kept = 0;
    uint8_t pstop = FX_WSTOP_NONE;
    fx_asgct_frame blob = {.lineno = 0, .method_id = NULL};
    fx_asgct_trace shadow = {.env_id = t->env, .num_frames = 0, .frames = p->shadow};
    if (p->recover && p->shadow != NULL && trace.num_frames != FX_ASGCT_UNKNOWN_NOT_JAVA) {
        uint8_t shadow_stop;
        struct fx_heap_memo shadow_memo = {.lookups = 0}; /* the validate oracle's own */
        shadow_rc = anchor_sigsafe(t, &shadow, p->want, &blob, &shadow_stop, &shadow_memo,
                                   &p->shadow_facts); /* read only with shadow_rc > 0 */
        shadow_n = shadow.num_frames;
        /* whole: at the first entry frame, not the depth nor a frame it cannot cross */
        shadow_whole = shadow_rc == FX_REC_ANCHOR && shadow_stop == FX_WSTOP_NONE &&
                       shadow_n < (int32_t)p->want;
    }
    struct fx_heap_memo memo = {.lookups = 0};
    if (p->recover) /* validate mode: recovered stacks are compared too */
        recovery = recover_any_sigsafe(t, ucontext, &trace, p->want, &kept, false, &pstop, &memo);
#endif
    __atomic_store_n(&p->shadow_rc, shadow_rc, __ATOMIC_RELAXED);
    __atomic_store_n(&p->shadow_n, shadow_n, __ATOMIC_RELAXED);
    __atomic_store_n(&p->shadow_whole, shadow_whole, __ATOMIC_RELAXED);
    __atomic_store_n(&p->recovery, recovery, __ATOMIC_RELAXED);
    __atomic_store_n(&p->num_frames, trace.num_frames, __ATOMIC_RELAXED);
    __atomic_store_n(&p->done, gen, __ATOMIC_RELEASE);
    return true;
}

/* Signal-safe: the handler's own cost in thread CPU time (wall time would count preemption, which
 * dominates on a loaded machine), less the two clock reads' (fx_sig.clock_read_ns, measured at
 * load). On 1 signal in FX_TIMED_ONE_IN: the CPU clock is a system call, two more a signal. */
static void account_cost_sigsafe(struct fx_thread *t, int64_t c0)
{
    int64_t spent = clock_ns_sigsafe(CLOCK_THREAD_CPUTIME_ID) - c0 - fx_sig.clock_read_ns;
    uint64_t u = spent > 0 ? (uint64_t)spent : 0;
    __atomic_store_n(&t->handler_ns, t->handler_ns + u, __ATOMIC_RELAXED);
    __atomic_store_n(&t->handler_timed, t->handler_timed + 1, __ATOMIC_RELAXED);
    if (u > t->handler_max_ns)
        __atomic_store_n(&t->handler_max_ns, u, __ATOMIC_RELAXED);
}

/* SIGNAL HANDLER (SA_SIGINFO) for SIGPROF from every engine: perf_events (si_code POLL_IN, one
 * per overflow of an event enabled without an overflow limit, so nothing is ever re-armed here),
 * timer_create (SI_TIMER), setitimer and the wall sampler's tgkill (SI_KERNEL / SI_TKILL); and
 * probe.c's requests (SI_QUEUE), answered into the thread's probe buffer instead of the ring.
 * Cost: one gettid and ASGCT per sample, one CPU-clock read where fx_sig.read_cpu_clock says
 * the engine's period is not the thread's CPU time, two on the timed signals. A system call
 * costs 1.0-1.3 us (bench/run_signal_cost.sh): none is made that the drain can do without. */
void fx_signal_handler_on_sigprof(int sig, siginfo_t *si, void *ucontext)
{
    (void)sig;
    int saved_errno = errno;
    int64_t t0 = clock_ns_sigsafe(CLOCK_MONOTONIC);
    /* Timed 1 signal in FX_TIMED_ONE_IN (chosen by the clock's low bits: no shared counter). */
    bool timed = ((t0 >> 10) & (FX_TIMED_ONE_IN - 1)) == 0;
    int64_t c0 = timed ? clock_ns_sigsafe(CLOCK_THREAD_CPUTIME_ID) : 0;
    struct fx_thread *t = fx_signal_handler_lookup_sigsafe((int32_t)syscall(SYS_gettid));
    if (t == NULL) {
        __atomic_fetch_add(&fx_sig.no_thread, 1, __ATOMIC_RELAXED);
        errno = saved_errno;
        return;
    }
    /* A probe is served by whichever SIGPROF comes first; its own signal is never a sample. */
    bool from_probe = is_probe_signal_sigsafe(si);
    bool served = probe_sigsafe(t, ucontext);
    if (from_probe) {
        if (!served)
            __atomic_fetch_add(&fx_sig.probe_late, 1, __ATOMIC_RELAXED);
        kernel_floor_sigsafe(t);
        errno = saved_errno;
        return;
    }
    /* In flight from before the enabled check until the buffers are left: a stop clears
     * `enabled`, then waits for in_flight 0 (both seq_cst, so either this handler sees 0 or
     * the stop sees it counted) before it may free or re-size them (threads.c). */
    __atomic_add_fetch(&fx_sig.in_flight, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&fx_sig.enabled, __ATOMIC_SEQ_CST)) {
        __atomic_sub_fetch(&fx_sig.in_flight, 1, __ATOMIC_RELEASE);
        __atomic_fetch_add(&fx_sig.disabled, 1, __ATOMIC_RELAXED);
        errno = saved_errno; /* and no re-arm: sampling is over */
        return;
    }
    if (t->frames == NULL || t->ring.buf == NULL) { /* its buffers could not be allocated */
        __atomic_sub_fetch(&fx_sig.in_flight, 1, __ATOMIC_RELEASE);
        __atomic_fetch_add(&fx_sig.no_buffer, 1, __ATOMIC_RELAXED);
        errno = saved_errno;
        return;
    }
    int64_t cpu = __atomic_load_n(&fx_sig.read_cpu_clock, __ATOMIC_RELAXED)
                          ? clock_ns_sigsafe(CLOCK_THREAD_CPUTIME_ID)
                          : FX_CPU_NOT_READ;
    record_sigsafe(t, si, ucontext, t0, cpu);
    __atomic_store_n(&t->handled, t->handled + 1, __ATOMIC_RELAXED);
    if (timed)
        account_cost_sigsafe(t, c0);
    kernel_floor_sigsafe(t);
    __atomic_sub_fetch(&fx_sig.in_flight, 1, __ATOMIC_RELEASE);
    errno = saved_errno;
}
