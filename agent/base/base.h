/* SPDX-License-Identifier: Apache-2.0 */
/* agent/base: what every part of the agent stands on, and nothing above it calls back into.
 *  - the clock and the one-line log;
 *  - the JVM handles, written once at setup (the JavaVM, the JVMTI environment), and the JVM
 *    services every part asks for: agent threads, system properties, a pending JNI exception;
 *  - the recording: its options and its times, written by control/ only, read by every part;
 *    the JVM's phase (live between VMInit and VMDeath, then dead);
 *  - one periodic agent thread (drain, validator, loop, wall sampler each run one);
 *  - event sources: the entry points a part plugs in with (start, stop, drain, before and after a
 *    dump, reset for a new recording), called in registration order, so the model and the
 *    writers never name a source;
 *  - other copies of libfxagent.so in this process (copies.c).
 * Rule: base/ includes only include/ and system headers; it calls no other part.
 * Tests: unit.clock, it.bad_option, it.cycle. */
#ifndef FX_BASE_H
#define FX_BASE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <jni.h>
#include <jvmti.h>

#include "fx_clock.h"
#include "fx_err.h"
#include "fx_options.h"
#include "fx_profile.h"

/* --- the clock (fx_clock_ns: include/fx_clock.h) --- */

/* CLOCK_MONOTONIC: every time the agent stores. */
static inline int64_t fx_now_ns(void)
{
    return fx_clock_ns(CLOCK_MONOTONIC);
}

static inline struct timespec fx_timespec_of_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    return ts;
}

/* --- log.c --- */

/* One "fxagent: ..." line on stderr, in one write(2). */
void fx_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* --- jvm.c: the JVM's handles and services --- */

/* Setup, before any agent thread or JVMTI callback exists (NULL, NULL: a failed setup). */
void fx_jvm_set(JavaVM *vm, jvmtiEnv *jvmti);
JavaVM *fx_jvm(void);
jvmtiEnv *fx_jvmti(void); /* NULL before a setup succeeded */
/* Logs a JVMTI failure with its name; returns true if err != JVMTI_ERROR_NONE. */
bool fx_jvmti_failed(jvmtiError err, const char *what);
/* Creates a java.lang.Thread named `name` and runs `fn` on it as a JVMTI agent thread. */
int fx_run_thread(JNIEnv *jni, const char *name, jvmtiStartFunction fn, void *arg);
/* A copy of the system property (fx_free it), or NULL. */
char *fx_property(const char *key);
/* Clears a pending exception; true if there was one (the call before it failed). */
bool fx_jni_failed(JNIEnv *jni);
/* The method NAME (signature SIG, or any when NULL) of the boot class CLS, or NULL. JNI's
 * FindClass initializes the class: only for classes already initialized (by the JVM, or by the
 * application once it used them); java.lang.VirtualThread's initializer builds the default
 * scheduler and reads the jdk.virtualThreadScheduler.* properties the application may still set. */
jmethodID fx_jvm_method(JNIEnv *jni, const char *cls, const char *name, const char *sig);
/* The address of NAME in libjvm's own symbol table (HotSpot's internal functions and flags,
 * which dlsym does not see; reads the file), or NULL (stripped, or no such symbol). */
void *fx_jvm_symbol(const char *name);

/* --- recording.c: the options and times of the current recording, and the JVM's phase --- */

struct fx_recording {
    struct fx_options opt;
    int64_t start_ns;      /* t0: CLOCK_MONOTONIC at Agent_OnLoad, a start by attach, a restart */
    double start_epoch_ms; /* wall clock at the same moment */
    time_t start_time;
    int64_t sampling_begin_ns, sampling_end_ns;
    bool live_start; /* started in the live phase (attach, restart): see sampling's registry */
};

/* Read by every part; stable while a recording runs (control/ changes it only between a stop
 * and a start, or before the first start). */
const struct fx_recording *fx_rec(void);
const struct fx_options *fx_opt(void);
/* control/ only. */
struct fx_recording *fx_rec_edit(void);
/* t0 of a recording: start_ns, start_epoch_ms, start_time from the clocks now. */
void fx_rec_mark_start(void);

enum fx_phase {
    FX_PHASE_LOADED = 0, /* before VMInit, or attached and not started */
    FX_PHASE_LIVE,       /* VMInit done (or a start by attach) and no VMDeath yet */
    FX_PHASE_DEAD,       /* VMDeath started */
};
void fx_phase_set(enum fx_phase p);
enum fx_phase fx_phase(void);

/* --- periodic.c: an agent thread that runs `tick` every period until stopped --- */

struct fx_periodic {
    const char *name; /* the Java thread's name ("fxagent drain") */
    uint64_t period_ns;
    void (*tick)(JNIEnv *jni, void *arg);
    void (*exiting)(void *arg); /* optional: on the thread, after its last tick */
    void *arg;
    /* Private to periodic.c. */
    pthread_mutex_t lock;
    pthread_cond_t cond;    /* on CLOCK_MONOTONIC */
    struct timespec next;   /* the next deadline */
    uint64_t new_period_ns; /* fx_periodic_set_period's, applied after the tick */
    uint64_t hurry_ns;      /* fx_periodic_hurry's during a tick, applied after it */
    bool ready, stop, running, paused, kicked, in_tick, reclock;
};

/* Ticks at start + k * period (a slow tick does not shift the ones after it). */
int fx_periodic_start(JNIEnv *jni, struct fx_periodic *p);
/* Stops the thread and waits until its current tick (and `exiting`) are done. */
void fx_periodic_stop(struct fx_periodic *p);
/* No tick from now on but one per fx_periodic_kick: the thread blocks without a deadline (no
 * wake-up). Returns once the tick in progress, if any, is done. */
void fx_periodic_pause(struct fx_periodic *p);
/* Ticks again, the first one a period from now. */
void fx_periodic_resume(struct fx_periodic *p);
/* One tick as soon as the thread is free, paused or not (deadlines do not move). */
void fx_periodic_kick(struct fx_periodic *p);
/* From the tick: the deadlines after this tick are period_ns apart, counted from its own.
 * Outside a tick (the owner, while no tick runs): the deadlines after the next one. */
void fx_periodic_set_period(struct fx_periodic *p, uint64_t period_ns);
/* Any thread: the next tick at most within_ns from now (nothing while paused; during a tick,
 * once the tick has set the next deadline). */
void fx_periodic_hurry(struct fx_periodic *p, uint64_t within_ns);

/* --- sources.c: event sources and the steps before and after a dump --- */

struct fx_span {
    int64_t begin_ns, end_ns; /* the range a profile covers */
};

/* Any entry may be NULL. `drain`, `before_dump`, `after_dump` and `reset` run on the model's
 * owner (the drain thread, or VMDeath after it stopped); `start` and `stop` under control's lock.
 * `reset` is the one place a source forgets the previous recording (issue 23): a start after a
 * stop calls it after that recording's last records were drained and its samples dropped, while
 * sampling is off and no handler is in flight, before any engine of the new recording is armed.
 * Every figure a source writes into meta.extra (counters, outcome tallies, drops) restarts there
 * from zero, so each recording's profile shows only its own; meta.extra itself is emptied just
 * before (a label the new recording does not set again is not carried over). A first start
 * needs no reset: everything is zero. */
/* A sampled thread (agent/sampling's struct fx_thread): a source that keeps something per thread
 * is told when the drain frees one; base never looks inside. */
struct fx_thread;
struct fx_sample_rec;

struct fx_source {
    const char *name;
    int (*start)(JNIEnv *jni);
    void (*stop)(void);
    void (*drain)(JNIEnv *jni, struct fx_profile *p);
    void (*before_dump)(JNIEnv *jni, struct fx_profile *p, const struct fx_span *span);
    void (*after_dump)(struct fx_profile *p, const char *path, unsigned long long bytes);
    void (*reset)(struct fx_profile *p);
    /* Stopped, the stop's file written or its pass over, the drain paused: gives back what only
     * a recording needs (event queues); the next start makes it again. */
    void (*idle)(void);
    /* A thread the drain frees (one pass after its end): what the source kept for it goes. */
    void (*thread_reaped)(struct fx_profile *p, struct fx_thread *t);
    /* Each sample the drain added to the model, with its ring record (len bytes) and the track
     * it went to: a source that reads a part of the record (the trace context, issue 33). */
    void (*sample)(struct fx_profile *p, struct fx_thread *t, const struct fx_sample_rec *r,
                   uint32_t len, uint32_t track);
    /* A thread that ended, its ring drained for the last time (before it leaves the model). */
    void (*thread_ended)(struct fx_profile *p, struct fx_thread *t);
};

/* At setup, before any agent thread exists. FX_EFULL past the table's size. */
int fx_sources_add(const struct fx_source *s);
/* Starts each source in order (a source that cannot start says so itself; the others start). */
void fx_sources_start(JNIEnv *jni);
/* Stops them in reverse order. */
void fx_sources_stop(void);
void fx_sources_drain(JNIEnv *jni, struct fx_profile *p);
void fx_sources_before_dump(JNIEnv *jni, struct fx_profile *p, const struct fx_span *span);
void fx_sources_after_dump(struct fx_profile *p, const char *path, unsigned long long bytes);
/* A new recording after a stop: each source's `reset`, in registration order. */
void fx_sources_reset(struct fx_profile *p);
/* A stopped agent, idle: each source's `idle`. */
void fx_sources_idle(void);
/* A thread freed by the drain: each source's `thread_reaped`. */
void fx_sources_thread_reaped(struct fx_profile *p, struct fx_thread *t);
/* The drain: each sample added, and each thread ended (the hooks `sample`, `thread_ended`). */
void fx_sources_sample(struct fx_profile *p, struct fx_thread *t, const struct fx_sample_rec *r,
                       uint32_t len, uint32_t track);
void fx_sources_thread_ended(struct fx_profile *p, struct fx_thread *t);

/* --- copies.c: other copies of libfxagent.so in this process --- */

/* Called with the address of `symbol` in another loaded object, and that object's path;
 * returns true to stop the search. */
typedef bool (*fx_copies_fn)(void *sym, const char *object, void *arg);
/* Calls fn for each other loaded object that exports `symbol` (this image excluded), kept
 * loaded during the call, until fn returns true; returns whether one did. */
bool fx_copies_find(const char *symbol, fx_copies_fn fn, void *arg);

#endif
