/* SPDX-License-Identifier: Apache-2.0 */
/* The JVM's markers and counters as the model stores them: one static schema per kind of event
 * (GC pause, JIT compile, user marker, the profiler's own dumps and start) and one descriptor
 * per counter. JVM-free, so unit tests and synthetic profiles write exactly what the agent
 * writes. Every function here is for the model's owner (the drain thread), never a signal
 * handler; on failure nothing was added to the model (strings already interned stay). */
#ifndef FX_JVM_MARKERS_H
#define FX_JVM_MARKERS_H

#include <stddef.h>
#include <stdint.h>

#include "fx_err.h"
#include "fx_profile.h"

/* Marker names (the marker chart's rows) and schema names (data.type). */
#define FX_JVM_GC_NAME      "GC pause"
#define FX_JVM_GC_SCHEMA    "JvmGcPause"
#define FX_JVM_JIT_NAME     "JIT compiled"
#define FX_JVM_JIT_SCHEMA   "JvmJitCompile"
#define FX_JVM_USER_SCHEMA  "JvmUserMarker"
#define FX_JVM_DUMP_NAME    "fxagent dump"
#define FX_JVM_DUMP_SCHEMA  "FxDump"
#define FX_JVM_START_NAME   "sampling started"
#define FX_JVM_START_SCHEMA "FxSession"

/* A stop-the-world pause between JVMTI GarbageCollectionStart and Finish. collector NULL, or a
 * heap figure < 0, means unknown: written as "unknown" and 0 (the schema says so). */
struct fx_jvm_gc {
    int64_t seq; /* 1 for the first pause the agent saw */
    const char *collector;
    int64_t heap_before, heap_after; /* bytes */
};
int fx_jvm_markers_gc(struct fx_profile *p, fx_thread_id thread, int64_t start_ns, int64_t end_ns,
                      const struct fx_jvm_gc *gc);

/* JVMTI CompiledMethodLoad: an instant, since the event carries no compile start. */
struct fx_jvm_jit {
    const char *method; /* "pkg.Class.name(I)J"; any bytes */
    size_t method_len;
    int64_t code_size; /* bytes of machine code */
    int64_t inlined;   /* distinct methods inlined into it; -1 unknown */
};
int fx_jvm_markers_jit(struct fx_profile *p, fx_thread_id thread, int64_t t_ns,
                       const struct fx_jvm_jit *j);

/* A marker from fxagent.Markers: phase FX_PHASE_INSTANT (mark), FX_PHASE_INTERVAL (begin..end),
 * FX_PHASE_START (begin still open at a dump) or FX_PHASE_END (its end, in a later dump). The
 * front-end pairs START and END per thread by name. text may be NULL (written ""). */
int fx_jvm_markers_user(struct fx_profile *p, fx_thread_id thread, uint8_t phase, int64_t start_ns,
                        int64_t end_ns, const char *name, size_t name_len, const char *text,
                        size_t text_len);

/* One profile written by fxagent; recorded after the write, so the next dump shows it. */
struct fx_jvm_dump {
    const char *path;
    int64_t samples, bytes;
};
int fx_jvm_markers_dump(struct fx_profile *p, fx_thread_id thread, int64_t start_ns, int64_t end_ns,
                        const struct fx_jvm_dump *d);

/* The instant sampling began. */
struct fx_jvm_start {
    const char *engine, *mode;
    double interval_ms;
};
int fx_jvm_markers_start(struct fx_profile *p, fx_thread_id thread, int64_t t_ns,
                         const struct fx_jvm_start *s);

/* Issue 18: a lock wait of at least lock=, an interval on the waiting thread (the caller sets
 * its stack with fx_profile_marker_stack). Strings are any bytes; owner "" when unknown. */
#define FX_JVM_LOCK_SCHEMA "JvmLockWait"
#define FX_JVM_LOCK_NAME   "Lock wait"
#define FX_JVM_IDLE_NAME   "Idle wait" /* a park waiting for work (issue 30), not contention */
struct fx_jvm_lock {
    const char *lock_class; /* "java.util.concurrent.locks.ReentrantLock$NonfairSync" */
    size_t lock_class_len;
    const char *owner; /* the owner thread's name */
    size_t owner_len;
    const char *kind; /* "monitor" or "park" */
    bool idle;        /* waiting for work: named FX_JVM_IDLE_NAME */
};
int fx_jvm_markers_lock(struct fx_profile *p, fx_thread_id thread, int64_t start_ns, int64_t end_ns,
                        const struct fx_jvm_lock *l);

/* Issue 22: a virtual thread unmounted for at least vtwait=, an interval on its track (the
 * caller sets its stack). vthread: "NAME #ID", any bytes; kind: "sleep", "I/O", "park",
 * "blocked" (model/vthreads_wait.c). */
#define FX_JVM_VTWAIT_SCHEMA "JvmVirtualThreadWait"
#define FX_JVM_VTWAIT_NAME   "Virtual thread wait"
int fx_jvm_markers_vtwait(struct fx_profile *p, fx_thread_id thread, int64_t start_ns,
                          int64_t end_ns, const char *vthread, size_t vthread_len,
                          const char *kind);
/* Issue 30 item 5: the same virtual thread runnable again (its wait's timer fired) until its next
 * mount, waiting for a carrier; same schema, kind "carrier", no stack. */
#define FX_JVM_VTCARRIER_NAME "Waiting for a carrier"
int fx_jvm_markers_vtcarrier(struct fx_profile *p, fx_thread_id thread, int64_t start_ns,
                             int64_t end_ns, const char *vthread, size_t vthread_len);
/* Issue 30 item 11: on a carrier's track, which virtual thread past the track cap it ran (its
 * samples are under a root frame per name). vthread: "NAME #ID". */
#define FX_JVM_VTMOUNTED_SCHEMA "JvmVirtualThreadMounted"
#define FX_JVM_VTMOUNTED_NAME   "Virtual thread"
int fx_jvm_markers_vtmounted(struct fx_profile *p, fx_thread_id thread, int64_t start_ns,
                             int64_t end_ns, const char *vthread, size_t vthread_len);

/* Issue 33: a span of fxagent.TraceContext on the thread's track, from the first sample taken
 * while it was set to just after the last (agent/model/trace_ctx.c) (a set or clear is not
 * timestamped: a clock read would cost more than the call); each of its samples lies in [start_ns,
 * end_ns], which is how fxprof convert gives the samples their trace_id, span_id and labels.
 * trace_id: 32 lowercase hex digits, span_id 16; label[i] "key=value" or NULL. */
#define FX_JVM_SPAN_SCHEMA "TraceSpan"
#define FX_JVM_SPAN_NAME   "Trace span"
#define FX_JVM_SPAN_LABELS 4
struct fx_jvm_span {
    const char *trace_id, *span_id;
    const char *label[FX_JVM_SPAN_LABELS];
};
int fx_jvm_markers_span(struct fx_profile *p, fx_thread_id thread, int64_t start_ns, int64_t end_ns,
                        const struct fx_jvm_span *s);

/* --- counters --- */

enum fx_jvm_counter {
    FX_JVM_HEAP_USED = 0,  /* bytes: Runtime.totalMemory() - freeMemory() */
    FX_JVM_HEAP_COMMITTED, /* bytes: Runtime.totalMemory() */
    FX_JVM_RSS,            /* bytes: /proc/self/statm resident pages */
    FX_JVM_CLASSES,        /* classes loaded (prepared), unloading not subtracted */
    FX_JVM_SAMPLE_RATE,    /* samples recorded per second, all threads */
    FX_JVM_COUNTER_COUNT
};

/* The counter's name as written ("Java heap used", ...), for tests. */
const char *fx_jvm_markers_counter_name(enum fx_jvm_counter c);
/* Registers every counter in the model; ids[c] is then the model's index of counter c. On
 * failure the counters registered before the failing one stay in the model. */
int fx_jvm_markers_counters(struct fx_profile *p, fx_counter_id ids[FX_JVM_COUNTER_COUNT]);

#endif
