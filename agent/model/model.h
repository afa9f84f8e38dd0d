/* SPDX-License-Identifier: Apache-2.0 */
/* agent/model: the profile model and everything that writes into it, on one thread at a time
 * (the model's owner: the drain thread, then VMDeath after fx_drain_stop). Its interface for
 * the parts above it (output, validate, control); it calls sampling/ and base/ only.
 *  - drain.c: the model itself, the drain thread and its pass, the CPU/wall sampler as an
 *    event source (its rings become samples); drain_report.c its meta.extra figures;
 *  - window.c: the memory bound, periods, and requests from other threads (dump, status,
 *    restart) served between two passes;
 *  - markers.c, markers_queue.c: JVM events and fxagent.Markers calls as markers, a source;
 *  - locks.c, locks_events.c: lock waits (lock=) as markers and a blocked-time track, a source;
 *  - counters.c, gcinfo.c, jit_info.c, methods.c, tracks.c: model-private helpers.
 * Tests: unit.ring_drain, it.tracks, it.markers, it.locks, it.alloc, it.vthreads. */
#ifndef FX_MODEL_H
#define FX_MODEL_H

#include "sampling.h"

/* --- drain.c --- */

/* VMInit or a first start: the model, its window, its t0. FX_ENOMEM. */
int fx_model_init(void);
/* The model, or NULL before fx_model_init. Only its owner may touch it. */
struct fx_profile *fx_model_profile(void);
int fx_drain_start(JNIEnv *jni);
/* Stops the drain thread and waits for it; then the caller owns the model. */
void fx_drain_stop(void);
/* A stopped recording: the drain thread blocks with no deadline and runs one pass only per
 * request (fx_window_request wakes it), so a stopped agent wakes up for nothing. Returns once
 * the pass in progress is over: until the next request the rings have no consumer. */
void fx_drain_pause(void);
/* A start: passes every period again. */
void fx_drain_resume(void);
/* Any thread (code loaded, a queue filling): the drain's next pass within its fast period
 * (fx_drain_period.h) if it waits longer; an atomic load when it does not. */
void fx_drain_hurry(void);
/* A stopped recording whose profile was written, the drain paused (control's thread, like the
 * rings' free): the threads that ended in it are freed with their rings (jni: for their global
 * references; NULL leaves them to the next pass) and their tracks released, the caches a next
 * sample would fill again (method names, native symbols) are freed; the model itself stays for
 * a dump of the stopped recording. */
void fx_model_idle(JNIEnv *jni);
/* One pass over every source (the drain thread, or VMDeath after fx_drain_stop). */
void fx_drain_once(JNIEnv *jni);
/* The CPU/wall sampler: starts and stops sampling/, drains the threads' rings. */
extern const struct fx_source fx_drain_source;

/* --- markers.c, markers_queue.c (PROFILE-FORMAT.md §10) --- */

/* Before SetEventCallbacks: adds the GC callbacks. */
void fx_markers_fill_callbacks(jvmtiEventCallbacks *cb);
/* The CompiledMethodLoad callback's share (compiler thread). */
void fx_markers_compiled_method_load(jmethodID method, jint code_size, const void *compile_info);
/* Drained each pass; before a dump: pending events, open user intervals, a last counter sample,
 * live threads' current names, the "Markers and counters" meta.extra; after it, the "fxagent
 * dump" marker, from that preparation to now (the next dump shows it). */
extern const struct fx_source fx_markers_source;

/* --- allocs.c: allocation samples and the live heap (issue 17, alloc=SIZE) --- */

/* Before SetEventCallbacks: adds SampledObjectAlloc and ObjectFree. */
void fx_allocs_fill_callbacks(jvmtiEventCallbacks *cb);
void fx_allocs_onload(void); /* Agent_OnLoad with alloc=: the interval (allocs.c) */
/* start: capabilities, the interval, the events (alloc= of the recording; none when 0); drain:
 * samples and frees into each thread's nativeAllocations; before_dump: "Allocations" in
 * meta.extra. */
extern const struct fx_source fx_allocs_source;
/* --- locks.c, locks_events.c: lock waits (issue 18, lock=) --- */

/* Agent_OnLoad / attach, with the optional capabilities and before SetEventCallbacks. */
void fx_locks_add_capabilities(jvmtiCapabilities *opt);
void fx_locks_fill_callbacks(jvmtiEventCallbacks *cb);
/* After SetEventCallbacks: NativeMethodBind on, so Unsafe.park's binding is seen. */
void fx_locks_setup(void);
/* Starts with a recording that has lock=: monitor events on, Unsafe.park wrapped; stop undoes
 * both. Drained each pass; before a dump, the "Lock waits" meta.extra. */
extern const struct fx_source fx_locks_source;
/* Virtual threads' waits (vtwait=): "Virtual thread wait" and "Waiting for a carrier" markers.
 * Registered after fx_drain_source, whose method cache names their frames. */
extern const struct fx_source fx_vthread_waits_source;
/* fxagent.TraceContext's spans as markers (issue 33, trace_ctx.c): reads the samples' context
 * through the source table's `sample` hook. Registered after fx_drain_source. */
extern const struct fx_source fx_trace_ctx_source;

/* --- counters.c: the JVMTI callbacks' share --- */

/* ClassPrepare callback (any thread): one more class loaded. */
void fx_counters_class_prepared(void);
/* VMInit: `prepared` classes were already prepared (some of them seen by ClassPrepare). */
void fx_counters_classes_at_start(uint64_t prepared);

/* --- window.c: the recording's window, kept by the model's owner --- */

/* Owner, right before a profile is written: every source's and step's before_dump in order,
 * then the window's own report; returns the file's %t. */
time_t fx_window_prepare(JNIEnv *jni, struct fx_profile *p, int64_t end_ns);

enum fx_window_kind {
    FX_WINDOW_SNAPSHOT,   /* a copy of the model to write; `reset` starts a new period */
    FX_WINDOW_STATUS,     /* figures for the status line */
    FX_WINDOW_RESTART,    /* a new recording after a stop: samples dropped, t0 = begin_ns */
    FX_WINDOW_AFTER_DUMP, /* tell the sources a file was written */
    FX_WINDOW_FORGET,     /* a stopped recording was written: its samples and figures go */
};

struct fx_window_status {
    uint64_t samples, held, drops, dropped, full_samples, ring_bytes;
    size_t memory, tables, bound;
    uint32_t threads; /* registered and not ended */
    uint32_t tracks;  /* the model's threads held (fx_profile_threads_held) */
    uint64_t methods; /* jmethodIDs the drain's cache holds (resolved in this period) */
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

#endif
