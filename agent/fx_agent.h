/* SPDX-License-Identifier: Apache-2.0 */
/* Private contract of the agent's files: the per-thread sampling state, the record a signal
 * handler pushes into a thread's ring, and the functions one agent file offers another.
 * Invariant: a struct fx_thread is reachable from the signal handler only between its
 * registration in the tid table and its removal, and is freed only by the drain thread after
 * both that removal and an empty ring (handshake in threads.c). */
#ifndef FX_AGENT_H
#define FX_AGENT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <jni.h>
#include <jvmti.h>

#include "fx_err.h"
#include "fx_ff_writer.h"
#include "fx_jvm_markers.h"
#include "fx_options.h"
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
    FX_WS_COUNT
};

/* One sample in a thread's ring. frames[] holds max(num_frames, 0) ASGCT frames, leaf first,
 * plus, when `recovery` is a failure with a known blob (FX_REC_NAMED), the one blob frame.
 * After a recovery (recovery = an FX_REC_* case > 0) frames[0] is the blob's frame and the rest
 * is ASGCT's trace from the caller's context. A blob frame has a lineno below; its method_id is
 * the nmethod's jmethodID (FX_LINE_NMETHOD) or a stub name index (FX_LINE_STUB, codemap.c). */
#define FX_LINE_STUB    (-1000)
#define FX_LINE_NMETHOD (-1001)
#define FX_REC_FAILED   0x40 /* recovery: FX_REC_FAILED | -case, no blob frame */
#define FX_REC_NAMED    0x80 /* recovery: FX_REC_NAMED | -case, with the blob frame */
struct fx_sample_rec {
    int64_t time_ns; /* CLOCK_MONOTONIC when the handler started */
    int64_t cpu_ns;  /* CLOCK_THREAD_CPUTIME_ID of the sampled thread at that moment, or
                        FX_CPU_NOT_READ in cpu mode (the engine's period is the CPU time) */
    int32_t num_frames;
    uint32_t weight;   /* 1 + timer overruns */
    uint8_t state;     /* enum fx_wall_state */
    uint8_t truncated; /* num_frames == depth: the root side was cut */
    uint8_t recovery;  /* 0: not tried; 1..: the FX_REC_* case recovered; FX_REC_FAILED or
                          FX_REC_NAMED | -reason: tried and failed */
    uint8_t pad[5];
    fx_asgct_frame frames[];
};

enum fx_engine_kind {
    FX_ENGINE_NONE = 0, /* not armed (itimer and wall need no per-thread timer) */
    FX_ENGINE_KIND_PERF,
    FX_ENGINE_KIND_TIMER,
};

/* A probe: one ASGCT trace of a thread taken by its own SIGPROF handler on request (probe.c asks,
 * signal_handler.c answers) into `frames`, never into the ring. The requester owns the probe
 * (`owner`), fills `frames`/`want`, then publishes a generation in `request` (release); the
 * handler claims it by CAS to 0, writes, and stores it in `done` (release). A requester that
 * gives up clears `request` by CAS first, so a late handler cannot write into a reused buffer. */
struct fx_probe {
    int owner;              /* atomic: 0 free, 1 held by a requester, 2 retired (probe.c) */
    uint32_t request;       /* atomic: generation asked for, 0 none */
    uint32_t done;          /* atomic: last generation served */
    int32_t num_frames;     /* ASGCT's num_frames for `done` */
    uint32_t want;          /* depth asked for, <= cap */
    uint32_t cap;           /* entries in frames (requester only) */
    uint32_t gen;           /* requester only: last generation used */
    fx_asgct_frame *frames; /* allocated by the requester outside signal context, freed with t */
};

struct fx_thread {
    /* Read by the signal handler; set before the thread is registered, never changed after. */
    struct fx_ring ring;
    fx_asgct_frame *frames; /* depth entries: ASGCT's output buffer */
    JNIEnv *env;
    uint32_t depth;
    int perf_fd; /* -1 unless the perf_events engine armed this thread (timer.c only) */

    /* Written by the wall sampler, read by the handler (atomics). */
    uint8_t wall_state;

    /* Written by the handler only (this thread's producer side), read relaxed by the drain. */
    uint64_t handler_ns;    /* thread CPU time in the handler, summed over the timed signals */
    uint64_t handler_timed; /* signals whose handler time was measured (1 in FX_TIMED_ONE_IN) */
    uint64_t handler_max_ns;
    uint64_t handled;
    /* Stack recovery, per fx_recover_case: recovered[c] for c > 0, failed[-c] for c < 0. */
    uint64_t recovered[FX_REC_CASES];
    uint64_t rec_failed[FX_REC_FAILS];

    /* The thread's stack [stack_lo, stack_hi), 0 if unknown; set before registration. */
    uintptr_t stack_lo, stack_hi;

    struct fx_probe probe; /* see struct fx_probe */

    /* Owned by threads.c / timer.c, outside signal context. */
    pid_t tid;
    char *name;
    jthread ref; /* global reference */
    enum fx_engine_kind engine;
    timer_t timer;
    int64_t cpu_armed_ns;    /* thread CPU time while its timer was armed, closed stretches */
    int64_t cpu_armed_since; /* thread CPU time when the open stretch began, or -1 */
    int64_t start_ns, end_ns;
    int ended; /* atomic: disarmed and unregistered, the producer is gone */
    struct fx_thread *next;

    /* Owned by the drain thread. */
    uint32_t profile_index;
    bool in_profile;
    bool have_last;
    bool finished; /* ended, ring drained for the last time, unregistered in the model */
    int64_t last_time_ns, last_cpu_ns;
    uint64_t seen_drops; /* the ring's drop count at the previous pass */
    bool batch_lost;     /* this pass's records have a gap (ring drops): no idle-gap guesses */
};

/* --- signal_handler.c: the signal path and the state it reads --- */

#define FX_TID_SLOTS     16384 /* power of two */
#define FX_TID_MAX_PROBE 64

struct fx_tid_slot {
    int32_t tid; /* 0 never used, -1 removed, else a registered thread (atomic) */
    struct fx_thread *thread;
};

struct fx_sigstate {
    fx_asgct_fn asgct;     /* resolved before any timer exists */
    int enabled;           /* atomic: 0 once sampling stops; the handler then records nothing */
    int64_t clock_read_ns; /* what timing adds: the cost of a CPU-clock read, measured at load */
    int read_cpu_clock;    /* atomic: the handler reads the thread's CPU clock per sample (itimer
                              and wall modes, perf without kernel time); else each signal *is*
                              weight x interval of it */
    uint64_t no_thread;    /* signals on threads that are not registered */
    uint64_t disabled;     /* signals after sampling stopped */
    uint64_t rearm_failed; /* perf events that could not be enabled again at a restart */
    uint64_t probe_late;   /* probe signals that found no request (the requester gave up) */
    /* Stack recovery (codemap.c publishes, the handler reads; see fx_recover.h). */
    struct fx_code_table *code_table; /* atomic: the current table, or NULL */
    uint64_t code_readers;            /* atomic: handlers between loading code_table and done */
    long compile_id_off;              /* nmethod::_compile_id, -1 unknown (set before tables) */
    struct fx_tid_slot table[FX_TID_SLOTS];
};

extern struct fx_sigstate fx_sig;

void fx_signal_handler_on_sigprof(int sig, siginfo_t *si, void *ucontext);
uint32_t fx_signal_handler_hash_sigsafe(int32_t tid);
/* The registered thread with this tid, or NULL. Stable only for the thread itself (or under
 * fx_threads_lock with `ended` unset): see the invariant at the top of this file. */
struct fx_thread *fx_signal_handler_lookup_sigsafe(int32_t tid);
/* si_value of a probe's SIGPROF (si_code SI_QUEUE): such a signal never becomes a sample. */
#define FX_PROBE_SIGVAL 0x66787072
/* fx_sample_rec.cpu_ns when the handler did not read the thread's CPU clock. */
#define FX_CPU_NOT_READ INT64_MIN
/* The handler times its own CPU cost on about one signal in this many (a power of two). */
#define FX_TIMED_ONE_IN 16

/* --- agent.c: process-wide state --- */

struct fx_agent {
    JavaVM *vm;
    jvmtiEnv *jvmti;
    struct fx_options opt;
    int64_t start_ns;      /* CLOCK_MONOTONIC at Agent_OnLoad */
    double start_epoch_ms; /* wall clock at the same moment */
    time_t start_time;
    int64_t sampling_begin_ns, sampling_end_ns;
    int live;                   /* atomic: between VMInit and VMDeath */
    int dead;                   /* atomic: VMDeath started */
    struct fx_profile *profile; /* owned by the drain thread, then by VMDeath */
    bool live_start;            /* sampling (re)started in the live phase (attach, restart): threads
                                   already running are registered under suspension (threads.c) */
};

extern struct fx_agent fx_ag;

void JNICALL fx_agent_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
/* t0 of a recording: Agent_OnLoad, a start by attach, a restart. */
void fx_agent_record_start(void);
/* Everything Agent_OnLoad checks and sets up (options already in fx_ag.opt): refusals first,
 * then the JVMTI environment, events and the SIGPROF handler. On failure nothing stays set. */
int fx_agent_setup(JavaVM *vm, struct fx_errbuf *eb);
void JNICALL fx_agent_vm_death(jvmtiEnv *jvmti, JNIEnv *jni);
int64_t fx_agent_now_ns(void);
void fx_agent_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Logs a JVMTI failure with its name; returns true if err != JVMTI_ERROR_NONE. */
bool fx_agent_jvmti_failed(jvmtiError err, const char *what);
/* Creates a java.lang.Thread named `name` and runs `fn` on it as a JVMTI agent thread. */
int fx_agent_run_thread(JNIEnv *jni, const char *name, jvmtiStartFunction fn, void *arg);

/* --- jvmti_events.c --- */

int fx_jvmti_events_setup(jvmtiEnv *jvmti);
/* Creates the jmethodIDs of every loaded class (ASGCT needs them). */
void fx_jvmti_events_prepare_loaded_classes(jvmtiEnv *jvmti, JNIEnv *jni);
/* The code that existed before (stubs, nmethods) into codemap.c, without JIT markers. */
void fx_jvmti_events_replay_code(jvmtiEnv *jvmti);

/* --- threads.c: registry, tid table, thread lifecycle --- */

/* The calling thread (ThreadStart, or the VMInit thread for itself). */
int fx_threads_start_current(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
/* ThreadEnd on the ending thread: disarm, unregister, mark ended. */
void fx_threads_end_current(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
/* Threads that existed before VMInit: registered through VMStructs where possible. With
 * fx_ag.live_start (attach, restart) each one is suspended while it is registered, so it cannot
 * exit meanwhile, and threads whose ThreadEnd came since fx_threads_scan_begin are skipped. */
void fx_threads_start_existing(jvmtiEnv *jvmti, JNIEnv *jni);
/* Before ThreadEnd events can arrive for a scan (attach: before they are enabled). */
void fx_threads_scan_begin(void);
/* A restart after fx_threads_disarm_all: new threads are armed again, paused ones resume. */
void fx_threads_resume_all(void);
/* Disarms every thread's timer (VMDeath). */
void fx_threads_disarm_all(void);
void fx_threads_lock(void);
void fx_threads_unlock(void);
/* The list head (a snapshot: threads are only ever added at the head, removed by the drain). */
struct fx_thread *fx_threads_head(void);
/* Drain only: unlinks and frees every ended thread whose ring is empty and was drained. */
void fx_threads_reap(JNIEnv *jni, bool (*done)(struct fx_thread *t));
bool fx_threads_is_own(const char *name); /* fxagent's own agent threads are never sampled */

struct fx_threads_stats {
    uint64_t registered, not_sampled, arm_failed, perf, timer, table_full, existing;
};
void fx_threads_stats(struct fx_threads_stats *out);
/* Any thread: bytes of the sample rings allocated now (inside memory=), and how many rings. */
uint64_t fx_threads_ring_bytes(uint32_t *count);

/* --- vmstructs.c: HotSpot's exported type table --- */

/* The OS thread id of a JavaThread* (the java.lang.Thread eetop field), or -1. */
pid_t fx_vmstructs_tid_of(const void *java_thread);
bool fx_vmstructs_available(void);
/* The JavaThread's stack [lo, hi); false if VMStructs does not say. */
bool fx_vmstructs_stack_of(const void *java_thread, uintptr_t *lo, uintptr_t *hi);
struct fx_nmethod_layout {
    uintptr_t blob;         /* the nmethod (CodeBlob header) */
    uintptr_t verified;     /* verified entry point */
    long frame_complete;    /* from code begin; -1: never */
    int32_t compile_id;     /* unique per compilation */
    int32_t entry_bci;      /* -1 for a normal method entry, else an OSR compilation */
    long compile_id_offset; /* of _compile_id in the nmethod */
};
/* The layout of the nmethod whose code begins at code_addr (CompiledMethodLoad's code_addr),
 * found through the code heap's segment map and checked against its code begin; false if
 * VMStructs lacks a field or the blob found does not begin there. */
bool fx_vmstructs_nmethod(uintptr_t code_addr, struct fx_nmethod_layout *out);

/* --- codemap.c: code ranges for stack recovery (issue 20), built outside signal context ---
 * JVMTI callbacks (any thread) queue changes; the drain publishes a new immutable table in
 * fx_sig.code_table when something changed, and frees a replaced table once no handler can
 * still read it (fx_sig.code_readers seen 0 after the publication). */

/* Agent_OnLoad: before the events are enabled. */
int fx_codemap_setup(void);
void fx_codemap_compiled_load(jmethodID method, const void *code_addr, jint code_size);
void fx_codemap_compiled_unload(jmethodID method, const void *code_addr);
void fx_codemap_dynamic_code(const char *name, const void *address, jint length);
/* Drain: publishes pending changes, frees replaced tables no handler can hold. */
void fx_codemap_publish(void);
/* Drain: the name of a stub (FX_LINE_STUB frame), or NULL. */
const char *fx_codemap_stub_name(uint64_t index);
/* Drain: "Stack recovery" meta.extra figures of the table itself. */
void fx_codemap_report(struct fx_profile *p, const char *group);

/* --- timer.c: the sampling engines --- */

/* Per-thread engine (cpu mode); a no-op for itimer and wall. */
int fx_timer_arm(struct fx_thread *t);
void fx_timer_disarm(struct fx_thread *t);
/* Stops t's signal source from another thread, keeping its fd (VMDeath). */
void fx_timer_pause(struct fx_thread *t);
/* Undoes fx_timer_pause (a restart). */
void fx_timer_resume(struct fx_thread *t);
/* Thread CPU time while its timer was armed: what its cpu-mode samples should add up to.
 * Caller holds fx_threads_lock, or the thread has ended. */
int64_t fx_timer_armed_cpu_ns(const struct fx_thread *t);
/* Agent_OnLoad: fails with one line in eb if the chosen engine cannot work at all. */
int fx_timer_probe(struct fx_errbuf *eb);
/* Process-wide part: itimer's setitimer, wall's sampler thread. */
int fx_timer_start(JNIEnv *jni);
void fx_timer_stop(void);
const char *fx_timer_engine_name(void);
/* The requested interval the engine ended up with, and why it may be coarser. */
const char *fx_timer_note(void);
/* perf_events had to exclude kernel time (perf_event_paranoid): see fx_sig.read_cpu_clock. */
bool fx_timer_excludes_kernel(void);
uint64_t fx_timer_wall_ticks(void);

/* --- methods.c: jmethodID -> model frames, resolved while the class is alive --- */

struct fx_methods;
struct fx_methods *fx_methods_new(void);
void fx_methods_free(struct fx_methods *m);
/* The frame for (method, bci); an unresolvable method becomes the "[unknown method]" frame.
 * Returns FX_OK or FX_ENOMEM. */
int fx_methods_frame(struct fx_methods *m, jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p,
                     jmethodID id, jint bci, fx_frame_id *frame);
/* The frame of the compiled method a pc was in without a bci (a prologue or epilogue, or a
 * failure named by its blob): line -1, subcategory Recovered if it tops a recovered stack. */
int fx_methods_blob_frame(struct fx_methods *m, jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p,
                          jmethodID id, bool recovered, fx_frame_id *frame);
uint64_t fx_methods_unknown(const struct fx_methods *m);
uint64_t fx_methods_count(const struct fx_methods *m);

/* --- drain.c --- */

int fx_drain_start(JNIEnv *jni);
/* Stops the drain thread and waits for it; then the caller owns the model. */
void fx_drain_stop(void);
/* One pass over every thread's ring (drain thread, or VMDeath after fx_drain_stop). */
void fx_drain_once(jvmtiEnv *jvmti, JNIEnv *jni);
/* Writes the drain's counters into meta.extra. */
void fx_drain_report(struct fx_profile *p);
uint64_t fx_drain_samples(void);
uint64_t fx_drain_ring_drops(void); /* drain thread: samples lost to full rings, all threads */
/* The model's thread index of t, adding t to the model first if it has no samples yet (markers
 * may reach a thread before its first sample). Model owner only. FX_OK or FX_ENOMEM. */
int fx_drain_thread_index(struct fx_profile *p, struct fx_thread *t, uint32_t *out);

/* --- markers.c: JVM events and fxagent.Markers calls as markers (PROFILE-FORMAT.md §10) ---
 * Producers (GC callbacks, compiler threads, application threads in the natives) only append a
 * small record to a bounded queue (full: dropped and counted); the model's owner turns the
 * records into markers. With markers=off nothing is recorded. */

/* Before SetEventCallbacks: adds the GC callbacks. */
void fx_markers_fill_callbacks(jvmtiEventCallbacks *cb);
/* Agent_OnLoad, after SetEventCallbacks: allocates the queues, enables the GC events. */
int fx_markers_setup(jvmtiEnv *jvmti);
/* The CompiledMethodLoad callback's share (compiler thread). */
void fx_markers_compiled_method_load(jmethodID method, jint code_size, const void *compile_info);
/* Drain cycle (model owner), before the rings are drained: queued events become markers, and
 * the counters are sampled when their period has passed. */
void fx_markers_drain(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p);
/* Drain: t has ended and its ring is empty; its model thread takes the thread's last name. */
void fx_markers_thread_finished(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p,
                                struct fx_thread *t);
/* Right before a profile is written (model owner): pending events, open user intervals, a last
 * counter sample, live threads' current names, and the "Markers and counters" meta.extra. */
void fx_markers_before_dump(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p);
/* Model owner, after the profile prepared by the last fx_markers_before_dump was written (on
 * any thread): the "fxagent dump" marker, from that preparation to now; the next dump shows it. */
void fx_markers_after_dump(struct fx_profile *p, const char *path, unsigned long long bytes);

/* --- jit_info.c: what a JIT marker says about a compiled method --- */

/* CompiledMethodLoad (compiler thread): distinct methods inlined into `root` per the inlining
 * records of compile_info; -1 without such records. No allocation, no JVM call. */
int32_t fx_jit_info_inlined(jmethodID root, const void *compile_info);
/* Model owner: the method's "pkg.Class.name(sig)" string in p, cached per jmethodID. FX_OK or
 * FX_ENOMEM / FX_EFULL from the model. */
int fx_jit_info_name(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p, jmethodID id,
                     fx_str_id *out);

/* --- counters.c: counters sampled by the model's owner --- */

/* ClassPrepare callback (any thread): one more class loaded. */
void fx_counters_class_prepared(void);
/* VMInit: `prepared` classes were already prepared (some of them seen by ClassPrepare). */
void fx_counters_classes_at_start(uint64_t prepared);
/* Samples every counter if `force` or if 100 ms have passed since the last sample. */
void fx_counters_sample(JNIEnv *jni, struct fx_profile *p, int64_t now_ns, bool force);
void fx_counters_report(struct fx_profile *p, const char *group);

/* --- gcinfo.c: which collector ran a pause, heap before/after (GC MXBeans, drain only) --- */

/* Matches the n pauses seen since the last call with the GC MXBeans' collection counts: fills
 * collector and heap figures where one collection explains a pause (unknown: NULL and -1).
 * Returns false, leaving gc[] alone, when the counts have not caught up with the pauses yet
 * and `final` is false. */
bool fx_gcinfo_attribute(JNIEnv *jni, struct fx_jvm_gc *gc, unsigned n, bool final);

/* --- probe.c: an ASGCT trace taken by a thread's own SIGPROF handler (struct fx_probe) --- */

/* The calling thread's struct if it is registered, else NULL. */
struct fx_thread *fx_probe_self(void);
/* Takes t's probe and makes its buffer hold `depth` frames. FX_ESTATE: another requester has
 * it; FX_EUNSUPPORTED: it is retired (see fx_probe_end); FX_ENOMEM. Never blocks. */
int fx_probe_begin(struct fx_thread *t, uint32_t depth);
/* With the probe taken: signals t (SIGPROF, SI_QUEUE, FX_PROBE_SIGVAL), waits at most wait_ns
 * for its handler, copies the trace to out (depth entries). FX_OK; FX_ESTATE if it timed out
 * or the SIGPROF handler is not fxagent's; FX_EUNSUPPORTED if the signal could not be sent. */
int fx_probe_run(struct fx_thread *t, int64_t wait_ns, fx_asgct_frame *out, int32_t *num_frames);
/* Gives the probe back, unless a handler claimed the last request and never finished it: the
 * probe then stays retired, as its buffer may still be written. */
void fx_probe_end(struct fx_thread *t);
struct fx_probe_stats {
    uint64_t requested, served, timeouts, retired, not_sent;
};
void fx_probe_stats(struct fx_probe_stats *out);

/* --- stackcmp.c: ASGCT and JVMTI stacks in one encoding, compared; names for reports --- */

#define FX_ASGCT_NATIVE_LINE      (-3)      /* ASGCT lineno of a native frame (JVMTI location -1) */
#define FX_STACKCMP_ASGCT_MISSING INT32_MIN /* no AsyncGetCallTrace symbol (oracle only) */

/* frames[i] is the i-th frame from the top. */
struct fx_stack {
    jint count; /* ASGCT: num_frames, possibly a negative status; JVMTI: frame count */
    fx_asgct_frame *frames;
};

struct fx_stack_verdict {
    jint compared;   /* frames that agreed, when the stacks agree */
    bool truncated;  /* the JVMTI stack is deeper than depth: its top depth frames compared */
    jint first_diff; /* -1: the stacks agree */
    jint carrier;    /* frames of a virtual thread's carrier in the JVMTI stack (oracle) */
};

/* JVMTI frames in ASGCT's encoding (native: location -1 becomes lineno -3). */
void fx_stackcmp_from_jvmti(const jvmtiFrameInfo *info, jint n, fx_asgct_frame *out);
/* Up to max frames of thread (NULL: the current one); allocates a scratch buffer. */
jvmtiError fx_stackcmp_take_jvmti(jvmtiEnv *jvmti, jthread thread, fx_asgct_frame *frames, int max,
                                  jint *count);
bool fx_stackcmp_same_frame(const fx_asgct_frame *a, const fx_asgct_frame *b);
/* ASGCT must hold exactly min(JVMTI count, depth) frames, each equal to JVMTI's. */
struct fx_stack_verdict fx_stackcmp_compare(const struct fx_stack *asgct,
                                            const struct fx_stack *jvmti, int depth);
/* HotSpot's name of an ASGCT status ("ticks_GC_active"), "frames" if positive. */
const char *fx_stackcmp_status_name(jint code);
/* "pkg.Class.method@bci" or "...@native"; an unnamable method is "<jmethodID 0x...>". */
void fx_stackcmp_frame_name(jvmtiEnv *jvmti, JNIEnv *env, const fx_asgct_frame *f, char *out,
                            size_t cap);
/* jdk.internal.vm.Continuation.enterSpecial (JDK 19+), cached; NULL before. */
jmethodID fx_stackcmp_enter_special(JNIEnv *env, jvmtiEnv *jvmti);

/* --- validate.c: validate mode, a thread comparing suspended threads' stacks --- */

/* Agent_OnLoad: FX_EUNSUPPORTED with one line in eb if the JVM cannot suspend threads. */
int fx_validate_setup(jvmtiEnv *jvmti, struct fx_errbuf *eb);
int fx_validate_start(JNIEnv *jni);
/* Stops the validator thread and waits for it (every thread it suspended is resumed). */
void fx_validate_stop(void);
/* The model's owner, filling meta: the "validate" meta.extra group (no-op without validate). */
void fx_validate_extra(jvmtiEnv *jvmti, struct fx_profile *p);
/* After fx_validate_stop: the validate=REPORT.json file and one stderr line (unless quiet). */
void fx_validate_report(jvmtiEnv *jvmti);

/* --- dump.c: profile files --- */

struct fx_dump_result {
    char requested[4096];          /* the expanded file name asked for */
    struct fx_ff_file_result file; /* where it went (the fallback folder if it could not) */
    unsigned seq;                  /* its %n */
    uint64_t samples;
    uint32_t threads;
    double ms;      /* time to write it */
    double copy_ms; /* a snapshot's: the drain's pause to copy the model; 0 if none */
};

/* Model owner: meta, the sampling range [begin, end], the handler check. */
void fx_dump_fill_meta(jvmtiEnv *jvmti, struct fx_profile *p, int64_t begin_ns, int64_t end_ns);
/* Writes p to `pattern` expanded with %t = when and the next %n (series: a name with %n
 * always, fx_options_sequenced_pattern). Any thread. */
int fx_dump_write(const struct fx_profile *p, const char *pattern, bool series, time_t when,
                  struct fx_dump_result *out, struct fx_errbuf *eb);
/* A relative file= pattern made absolute (fx_options_absolute_file) under the JVM's working
 * folder, or ~/ under $HOME. */
void fx_dump_absolute(struct fx_options *o);
/* Before a start or a dump with file=: FX_EINVAL with one line in eb if the expanded target is
 * of a kind never written (a block device, a socket); logs a warning if its folder cannot be
 * written now (the profile would go to the fallback folder). */
int fx_dump_check_target(const char *pattern, bool series, struct fx_errbuf *eb);
/* "wrote N samples of M threads to PATH (...)", or "could not write X (reason); wrote Y
 * instead (...)" when it went to the fallback folder. */
void fx_dump_describe(const struct fx_dump_result *r, char *line, size_t cap);
/* VMDeath, the drain stopped: the recording's last file, from the model itself. */
void fx_dump_at_death(jvmtiEnv *jvmti, JNIEnv *jni);

/* --- window.c: the recording's window, kept by the model's owner --- */

/* After fx_profile_new, before the drain starts: the bound, the table limit, the
 * "[stack table full]" stack. */
int fx_window_init(struct fx_profile *p);
/* Owner, after each drain pass: past `memory`, the oldest half of the samples goes. */
void fx_window_bound(struct fx_profile *p);
/* Owner: false for a record older than the current period (counted as late). */
bool fx_window_admit(int64_t time_ns);
/* Owner: the stack of a sample whose stack the full tables cannot take (counted). */
bool fx_window_full_stack(fx_stack_id *out);
/* Owner, right before a profile is written: markers, meta, reports; returns its %t. */
time_t fx_window_prepare(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p, int64_t end_ns);
/* The drain thread, between passes: serves the pending request, if any. */
void fx_window_serve(jvmtiEnv *jvmti, JNIEnv *jni);
/* The drain thread, exiting: pending and later requests fail. */
void fx_window_drain_exiting(void);

enum fx_window_kind {
    FX_WINDOW_SNAPSHOT,   /* a copy of the model to write; `reset` starts a new period */
    FX_WINDOW_STATUS,     /* figures for the status line */
    FX_WINDOW_RESTART,    /* a new recording after a stop: samples dropped, t0 = begin_ns */
    FX_WINDOW_AFTER_DUMP, /* tell the markers a file was written */
};

struct fx_window_status {
    uint64_t samples, held, drops, dropped, full_samples, ring_bytes;
    size_t memory, tables, bound;
    uint32_t threads; /* registered and not ended */
    int64_t period_ns;
};

struct fx_window_request {
    enum fx_window_kind kind;
    bool reset;                  /* SNAPSHOT */
    int64_t begin_ns;            /* RESTART */
    uint64_t bound;              /* RESTART: memory= of the new recording */
    const char *path;            /* AFTER_DUMP */
    unsigned long long bytes;    /* AFTER_DUMP */
    int rc;                      /* results */
    struct fx_profile *snapshot; /* SNAPSHOT: the requester frees it */
    time_t period_time;          /* SNAPSHOT: %t of the file */
    int64_t end_ns;              /* SNAPSHOT: when it was taken */
    int64_t copy_ns;             /* SNAPSHOT: the drain's time to prepare and copy the model */
    struct fx_window_status status;
};

/* Any thread but the drain: posts the request and waits until the drain served it. FX_ESTATE
 * when no drain thread serves requests (it exited, or never answered). */
int fx_window_request(struct fx_window_request *r);

/* --- copies.c: other copies of libfxagent.so in this process --- */

/* Called with the address of `symbol` in another loaded object, and that object's path;
 * returns true to stop the search. */
typedef bool (*fx_copies_fn)(void *sym, const char *object, void *arg);
/* Calls fn for each other loaded object that exports `symbol` (this image excluded), kept
 * loaded during the call, until fn returns true; returns whether one did. */
bool fx_copies_find(const char *symbol, fx_copies_fn fn, void *arg);

/* --- commands.c and attach.c: start, stop, dump, status --- */

/* Agent_OnAttach's return codes (jcmd prints "return code: N"; docs/PRODUCTION.md). */
enum {
    FX_RC_OK = 0,
    FX_RC_USAGE = 1,  /* unknown command, bad option, option that does not apply */
    FX_RC_STATE = 2,  /* not running, already running, shutting down */
    FX_RC_FAILED = 3, /* could not start, could not write, no answer */
};

struct fx_outcome {
    int code; /* FX_RC_* */
    char text[1200];
};

/* Sets the outcome; returns code. */
int fx_outcome_set(struct fx_outcome *out, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* True if `key` is an item of the option list `text` (as key or key=value). */
bool fx_attach_given(const char *text, const char *key);
/* Runs one command (the attach listener); `text` is the option list as given. A first start
 * takes o's strings. */
int fx_commands_run(JavaVM *vm, struct fx_options *o, const char *text, struct fx_outcome *out);
/* The end of VMInit's start (either path): RUNNING, the loop thread. */
void fx_commands_started(JNIEnv *jni);
/* Something was started in this image (running, stopped or ending). */
bool fx_commands_active(void);
/* VMDeath: stops a running recording and writes its last file. */
void fx_commands_at_death(jvmtiEnv *jvmti, JNIEnv *jni);

#endif
