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
#include "fx_options.h"
#include "fx_profile.h"
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

/* One sample in a thread's ring. frames[] holds max(num_frames, 0) ASGCT frames, leaf first. */
struct fx_sample_rec {
    int64_t time_ns; /* CLOCK_MONOTONIC when the handler started */
    int64_t cpu_ns;  /* CLOCK_THREAD_CPUTIME_ID of the sampled thread at that moment */
    int32_t num_frames;
    uint32_t weight;   /* 1 + timer overruns */
    uint8_t state;     /* enum fx_wall_state */
    uint8_t truncated; /* num_frames == depth: the root side was cut */
    uint8_t pad[6];
    fx_asgct_frame frames[];
};

enum fx_engine_kind {
    FX_ENGINE_NONE = 0, /* not armed (itimer and wall need no per-thread timer) */
    FX_ENGINE_KIND_PERF,
    FX_ENGINE_KIND_TIMER,
};

struct fx_thread {
    /* Read by the signal handler; set before the thread is registered, never changed after. */
    struct fx_ring ring;
    fx_asgct_frame *frames; /* depth entries: ASGCT's output buffer */
    JNIEnv *env;
    uint32_t depth;
    int perf_fd; /* -1 unless the perf_events engine armed this thread */

    /* Written by the wall sampler, read by the handler (atomics). */
    uint8_t wall_state;

    /* Written by the handler only (this thread's producer side), read relaxed by the drain. */
    uint64_t handler_ns; /* thread CPU time spent in the handler, summed */
    uint64_t handler_max_ns;
    uint64_t handled;

    /* Owned by threads.c / timer.c, outside signal context. */
    pid_t tid;
    char *name;
    jthread ref; /* global reference */
    enum fx_engine_kind engine;
    timer_t timer;
    int64_t start_ns, end_ns;
    int ended; /* atomic: disarmed and unregistered, the producer is gone */
    struct fx_thread *next;

    /* Owned by the drain thread. */
    uint32_t profile_index;
    bool in_profile;
    bool have_last;
    bool finished; /* ended, ring drained for the last time, unregistered in the model */
    int64_t last_time_ns, last_cpu_ns;
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
    uint64_t no_thread;    /* signals on threads that are not registered */
    uint64_t disabled;     /* signals after sampling stopped */
    uint64_t rearm_failed; /* perf events that could not be refreshed */
    struct fx_tid_slot table[FX_TID_SLOTS];
};

extern struct fx_sigstate fx_sig;

void fx_signal_handler_on_sigprof(int sig, siginfo_t *si, void *ucontext);
uint32_t fx_signal_handler_hash_sigsafe(int32_t tid);

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
};

extern struct fx_agent fx_ag;

void JNICALL fx_agent_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
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

/* --- threads.c: registry, tid table, thread lifecycle --- */

/* The calling thread (ThreadStart, or the VMInit thread for itself). */
int fx_threads_start_current(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
/* ThreadEnd on the ending thread: disarm, unregister, mark ended. */
void fx_threads_end_current(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
/* Threads that existed before VMInit: registered through VMStructs where possible. */
void fx_threads_start_existing(jvmtiEnv *jvmti, JNIEnv *jni);
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

/* --- vmstructs.c: HotSpot's exported type table --- */

/* The OS thread id of a JavaThread* (the java.lang.Thread eetop field), or -1. */
pid_t fx_vmstructs_tid_of(const void *java_thread);
bool fx_vmstructs_available(void);

/* --- timer.c: the sampling engines --- */

/* Per-thread engine (cpu mode); a no-op for itimer and wall. */
int fx_timer_arm(struct fx_thread *t);
void fx_timer_disarm(struct fx_thread *t);
/* Stops t's signal source from another thread, keeping its fd (VMDeath). */
void fx_timer_pause(struct fx_thread *t);
/* Agent_OnLoad: fails with one line in eb if the chosen engine cannot work at all. */
int fx_timer_probe(struct fx_errbuf *eb);
/* Process-wide part: itimer's setitimer, wall's sampler thread. */
int fx_timer_start(JNIEnv *jni);
void fx_timer_stop(void);
const char *fx_timer_engine_name(void);
/* The requested interval the engine ended up with, and why it may be coarser. */
const char *fx_timer_note(void);
uint64_t fx_timer_wall_ticks(void);

/* --- methods.c: jmethodID -> model frames, resolved while the class is alive --- */

struct fx_methods;
struct fx_methods *fx_methods_new(void);
void fx_methods_free(struct fx_methods *m);
/* The frame for (method, bci); an unresolvable method becomes the "[unknown method]" frame.
 * Returns FX_OK or FX_ENOMEM. */
int fx_methods_frame(struct fx_methods *m, jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p,
                     jmethodID id, jint bci, fx_frame_id *frame);
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
uint64_t fx_drain_over_memory(void); /* samples not recorded: the model reached `memory` */

/* --- dump.c --- */

void fx_dump_at_death(jvmtiEnv *jvmti, JNIEnv *jni);

#endif
