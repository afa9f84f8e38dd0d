/* SPDX-License-Identifier: Apache-2.0 */
/* agent/sampling, the types it shares with the parts above it: what AsyncGetCallTrace returns,
 * the record a signal handler pushes into a thread's ring, and the per-thread sampling state.
 * Invariant: a struct fx_thread is reachable from the signal handler only between its
 * registration in the tid table and its removal, and is freed only by the drain thread after
 * both that removal and an empty ring (handshake in threads.c). */
#ifndef FX_SAMPLE_H
#define FX_SAMPLE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <jni.h>
#include <jvmti.h>

#include "fx_perfring.h"
#include "fx_profile.h"
#include "fx_recover.h"
#include "fx_ring.h"

/* --- AsyncGetCallTrace: not in any JDK header; the layout is HotSpot's (forte.cpp). --- */
typedef struct {
    jint lineno; /* the BCI for Java frames; -3 for a native method */
    jmethodID method_id;
} fx_asgct_frame;

typedef struct {
    JNIEnv *env_id;
    jint num_frames; /* > 0 frames, 0 no Java frame, < 0 an FX_ASGCT_* code */
    fx_asgct_frame *frames;
} fx_asgct_trace;

typedef void (*fx_asgct_fn)(fx_asgct_trace *trace, jint depth, void *ucontext);

/* ASGCT outcome codes (HotSpot forte.cpp, ticks_*); the index into the outcome counters is
 * -code, 0 being "no Java frame". */
enum {
    FX_ASGCT_NO_JAVA_FRAME = 0,
    FX_ASGCT_NO_CLASS_LOAD = -1,
    FX_ASGCT_GC_ACTIVE = -2,
    FX_ASGCT_UNKNOWN_NOT_JAVA = -3,
    FX_ASGCT_NOT_WALKABLE_NOT_JAVA = -4,
    FX_ASGCT_UNKNOWN_JAVA = -5,
    FX_ASGCT_NOT_WALKABLE_JAVA = -6,
    FX_ASGCT_UNKNOWN_STATE = -7,
    FX_ASGCT_THREAD_EXIT = -8,
    FX_ASGCT_DEOPT = -9,
    FX_ASGCT_SAFEPOINT = -10,
    FX_ASGCT_CODES = 11, /* codes 0..-10; anything lower counts as "other" */
};

/* Thread state stored by the wall-clock sampler before it signals a thread. */
enum fx_wall_state {
    FX_WS_NONE = 0, /* not wall mode, or unknown */
    FX_WS_RUNNABLE,
    FX_WS_BLOCKED,
    FX_WS_WAITING,
    FX_WS_TIMED_WAITING,
    FX_WS_PINNED,        /* a carrier blocked with a virtual thread mounted (vthreads.c) */
    FX_WS_SLEEPING,      /* issue 18: Thread.sleep */
    FX_WS_PARKED,        /* LockSupport.park */
    FX_WS_IN_NATIVE,     /* RUNNABLE in native code (JNI, I/O) */
    FX_WS_PINNED_NATIVE, /* a carrier in native code with a virtual thread mounted (vthreads.c) */
    FX_WS_COUNT
};

/* One sample in a thread's ring. frames[] holds max(num_frames, 0) ASGCT frames, leaf first,
 * plus, when `recovery` is a failure with a known blob (FX_REC_NAMED), the one blob frame;
 * then native_frames return addresses (cstack=fp), from frames + native_at; then, when
 * `kernel` is not FX_KREC_OFF, the kernel frames of the perf callchain (kstack=yes); then, with
 * `types`, a uint64_t count and that many frame type words (fx_recover.h, FX_TYPE_*); then,
 * with `found`, a count and FX_TYPE_FOUND's words (codeheap.h); with `below`, the native frames
 * below (FX_BELOW_*); `task`: 2 words (compile_task.h); `receiver`: 1 (receiver.h); `tctx` last.
 * After a recovery (an FX_REC_* case > 0) frames[0] is the blob's frame, then ASGCT's trace from
 * the caller's context. Linenos: a blob's, method_id its jmethodID (FX_LINE_NMETHOD) or a stub
 * name index (FX_LINE_STUB, codemap.c); a partial stack's pseudo-frames (recover_partial.h). */
#define FX_LINE_STUB       (-1000)
#define FX_LINE_NMETHOD    (-1001)
#define FX_LINE_INLINE_GAP (-1002)
#define FX_LINE_CALLER_GAP (-1003)
#define FX_REC_FAILED      0x40 /* recovery: FX_REC_FAILED | -case, no blob frame */
#define FX_REC_NAMED       0x80 /* recovery: FX_REC_NAMED | -case, with the blob frame */
struct fx_sample_rec {
    int64_t time_ns; /* CLOCK_MONOTONIC when the handler started */
    int64_t cpu_ns;  /* the thread's CPU clock then; FX_CPU_NOT_READ in cpu mode (the period) */
    int32_t num_frames;
    uint32_t weight;       /* 1 + timer overruns */
    uint8_t state;         /* enum fx_wall_state */
    uint8_t truncated : 1; /* num_frames == depth: the root side was cut */
    uint8_t vthread : 3;   /* enum fx_vt_rec; FX_VT_ID: a uint64_t id after the native frames */
    uint8_t walk_stop : 3, types : 1; /* fx_walk_stop; frame types after the kernel part */
    uint8_t recovery;      /* 0: not tried; FX_REC_* case; FX_REC_FAILED/NAMED | -reason: failed */
    uint8_t native_frames; /* return addresses (uint64_t, leaf first) at frames + native_at */
    uint16_t native_at;    /* the fx_asgct_frame entries stored before them */
    uint8_t native_stop : 5, below : 1, task : 1, tctx : 1; /* fx_native_stop; the parts above */
    uint8_t kernel : 3, receiver : 1, found : 1; /* enum fx_perfring_state; unless FX_KREC_OFF,
        a count and that many kernel addresses follow (fx_rec_kernel_at); receiver.h's word */
    fx_asgct_frame frames[];
};
_Static_assert(sizeof(struct fx_sample_rec) == 32, "the ring record header stays 32 bytes");

/* What the carrier's slot said when the sample was taken (issue 22, vthreads.c). */
enum fx_vt_rec {
    FX_VT_NONE = 0, /* no virtual thread mounted (a platform thread, or a carrier's own code) */
    FX_VT_ID,       /* mounted: its java.lang.Thread id follows the native frames */
    FX_VT_MOUNTING, /* the mount or unmount callback was writing the slot */
    FX_VT_UNSEEN,   /* the slot saw no mount since the thread was registered (attach) */
};

/* Where the parts after the ASGCT frames begin, in bytes from the record's start, in the order
 * the handler writes them: native return addresses (native_frames), a mounted virtual thread's id
 * (vthread == FX_VT_ID), the kernel frames' count and addresses (kernel != FX_KREC_OFF). */
static inline size_t fx_rec_vt_at(const struct fx_sample_rec *r)
{
    return sizeof(*r) + (size_t)r->native_at * sizeof(fx_asgct_frame) +
           (size_t)r->native_frames * sizeof(uint64_t);
}
static inline size_t fx_rec_kernel_at(const struct fx_sample_rec *r)
{
    return fx_rec_vt_at(r) + (r->vthread == FX_VT_ID ? sizeof(uint64_t) : 0);
}

#define FX_NATIVE_MAX 64 /* native frames per sample at most (native_walk.c) */
/* Why a native walk ended (fx_sample_rec.native_stop; a meta.extra counter each). */
enum fx_native_stop {
    FX_NSTOP_OFF = 0,   /* no walk: cstack=no, no ucontext, not x86-64 */
    FX_NSTOP_JAVA,      /* reached code in anonymous executable memory: HotSpot's code cache */
    FX_NSTOP_CHAIN_END, /* frame pointer 0: the thread's first frame */
    FX_NSTOP_DEPTH,     /* FX_NATIVE_MAX frames */
    FX_NSTOP_NO_MAP,    /* no text map published yet (or two publishes raced the walk) */
    FX_NSTOP_NOT_TEXT,  /* an address in no executable mapping of the text map */
    FX_NSTOP_BAD_FP,    /* frame pointer outside the stack, not above the last frame, or odd */
    FX_NSTOP_NO_BOUNDS, /* the thread's stack bounds are unknown */
    FX_NSTOP_CFI_RULE,  /* cstack=dwarf: CFI outside the subset fx_cfi.h unwinds (an expression) */
    FX_NSTOP_BAD_CFA,   /* cstack=dwarf: the CFA or a saved word outside the stack */
    FX_NSTOP_NO_TABLE,  /* cstack=dwarf: an rbp step failed where the table is not built yet */
    FX_NSTOP_NO_ENTRY,  /* below the Java frames: their walk did not reach the call stub */
    FX_NSTOP_EMPTY,     /* below the Java frames: Java code right under the call stub */
    FX_NSTOP_HEAP_BUDGET, /* below the Java frames: their walk ran out of code heap lookups */
    FX_NSTOP_COUNT
};
_Static_assert(FX_NSTOP_COUNT <= 32, "fx_sample_rec.native_stop has 5 bits");

#define FX_KERNEL_MAX 48 /* kernel frames (kstack=yes, kstack.c) per sample (sample_max_stack) */
enum fx_engine_kind {
    FX_ENGINE_NONE = 0, /* not armed (itimer and wall need no per-thread timer) */
    FX_ENGINE_KIND_PERF,
    FX_ENGINE_KIND_TIMER,
};

/* A probe: one ASGCT trace of a thread by its own SIGPROF handler on request into `frames`, never
 * the ring. The requester (probe.c) owns it, fills `frames`/`want`, publishes a generation in
 * `request` (release); the handler (signal_handler.c) claims it by CAS to 0, writes, stores it in
 * `done` (release). A requester that gives up clears `request` by CAS first: no late write. */
struct fx_probe {
    int owner;          /* atomic: 0 free, 1 held by a requester, 2 retired (probe.c) */
    uint32_t request;   /* atomic: generation asked for, 0 none */
    uint32_t done;      /* atomic: last generation served */
    int32_t num_frames; /* ASGCT's num_frames for `done`, or the recovered stack's count */
    int32_t asgct_code; /* ASGCT's own num_frames for `done`, before any recovery */
    uint8_t recovery;   /* the recovery byte for `done` (sample.h's record), 0: none */
    bool recover;       /* requester: recover failed traces like a sample (validate) */
    /* `recover`, ASGCT not -3: the anchor walk (recover_anchor.c) done anyway, for validate */
    fx_asgct_frame *shadow;                    /* cap entries, allocated by the requester */
    int32_t shadow_rc, shadow_n, shadow_whole; /* whole: it ended at the first entry frame */
    struct fx_anchor_facts shadow_facts;       /* fx_recover.h: validate's 4.2 and 4.9 */
    uint32_t want, cap, gen; /* depth asked for (<= cap); entries in frames; last generation */
    fx_asgct_frame *frames;  /* allocated by the requester outside signal context, freed with t */
};

struct fx_thread {
    /* Read by the signal handler; set before the thread is registered. ring, frames and depth
     * change only between a stop and a start, with no handler in flight (threads.c,
     * "Buffers"); frames and ring.buf are NULL while stopped or when allocation failed. */
    struct fx_ring ring;
    fx_asgct_frame *frames; /* depth entries: ASGCT's output buffer */
    JNIEnv *env;
    uint32_t depth;
    int perf_fd; /* -1 unless the perf_events engine armed this thread (cpu_timer.c) */
    /* The perf event's mmap ring (kstack.c), NULL when there is none; published with a release
     * store after it is mapped, cleared before it is unmapped (only where no handler can be
     * reading it). kfloor_ns: CLOCK_MONOTONIC at the end of this thread's last handler. */
    struct perf_event_mmap_page *kring;
    uint32_t kring_data_off, kring_data_size; /* the data area: offset, bytes (a power of two) */
    int64_t kfloor_ns;

    uint8_t wall_state; /* written by the wall sampler, read by the handler (atomics) */
    /* Issue 22 (vthreads.c): written by this carrier's own mount/unmount callbacks, read by its
     * handler, which can interrupt them, not the reverse; vt_seq odd while vt_id changes, 0 until
     * a mount; vt_id 0: none. java_tid: its Thread.tid (0 unknown), set before registration. */
    uint32_t vt_seq;
    uint64_t vt_id, java_tid;
    struct fx_tctx_rec *tctx; /* atomic: fxagent.TraceContext's record (trace_ctx.c), or NULL */

    /* Written by the handler only (this thread's producer side), read relaxed by the drain. */
    uint64_t handler_ns;    /* thread CPU time in the handler, summed over the timed signals */
    uint64_t handler_timed; /* signals whose handler time was measured (1 in FX_TIMED_ONE_IN) */
    uint64_t handler_max_ns, handled;
    /* Recovery: recovered[c] (c > 0), failed[-c] (c < 0); rec_codeheap: blob from the heaps */
    uint64_t recovered[FX_REC_CASES], rec_failed[FX_REC_FAILS], rec_codeheap;
    struct fx_heap_memo memo; /* a sample's code heap lookups (heap_memo.h): not on the stack */

    /* The thread's stack [stack_lo, stack_hi), 0 if unknown; set before registration, except
     * for a thread that is not a Java thread (vm_threads.c), whose bounds may be set later from
     * the stack pointer its handler saw (seen_sp): hi first, then lo, each one word, so a
     * handler sees either 0 in lo (no walk) or both. */
    uintptr_t stack_lo, stack_hi;
    uintptr_t seen_sp; /* atomic: written by the handler while stack_lo is 0 (vm_threads.c) */
    /* A thread of the process that is not a Java thread (GC, JIT, VM, JNI-created): found in
     * /proc by vm_threads.c, no JNIEnv, no AsyncGetCallTrace; set before registration. */
    bool native_only;
    uintptr_t vm_thread; /* atomic: a compiler thread's JavaThread*, else 0 (compile_task.h) */
    uint8_t category, subcategory; /* its frames' category (enum fx_category; 0: Native) */

    struct fx_probe probe; /* see struct fx_probe */
    /* Owned by threads.c / cpu_timer.c, outside signal context. */
    pid_t tid;
    char *name;
    jthread ref; /* global reference */
    enum fx_engine_kind engine;
    timer_t timer;
    void *kring_map; /* the mapping kring points into, until kstack.c unmaps it; its length */
    size_t kring_len;
    uint64_t kstack_mark;   /* kstack.c's lazy arming: `handled` when this second began, */
    int64_t kstack_mark_ns; /* the second's start; whether this arm tried the callchain; a timer */
    bool kstack_tried, perf_later; /* armed first (engine=auto) that becomes perf once it runs */
    int64_t cpu_armed_ns;          /* thread CPU time while its timer was armed, closed stretches */
    int64_t cpu_armed_since;       /* thread CPU time when the open stretch began, or -1 */
    int64_t start_ns, end_ns;
    uint32_t buffers_gen; /* the options its buffers were sized by (threads.c) */
    int ended;            /* atomic: disarmed and unregistered, the producer is gone */
    struct fx_thread *next;

    /* Owned by the drain thread. */
    fx_thread_id profile_index;
    bool in_profile, have_last;
    bool finished;  /* ended, ring drained for the last time, unregistered in the model */
    bool reap_next; /* finished in an earlier drain pass: freed in this one (drain.c) */
    int64_t last_time_ns, last_cpu_ns;
    uint64_t seen_drops; /* the ring's drop count at the previous pass */
    bool batch_lost;     /* this pass's records have a gap (ring drops): no idle-gap guesses */
};
#define FX_CPU_NOT_READ INT64_MIN /* fx_sample_rec.cpu_ns: the thread's CPU clock was not read */
/* fx_sample_rec.num_frames of a non-Java thread (vm_threads.c): no ASGCT, the native walk alone */
#define FX_NOT_JAVA_THREAD (-100)

#endif
