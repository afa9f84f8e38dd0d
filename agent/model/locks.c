/* SPDX-License-Identifier: Apache-2.0 */
/* Lock waits in the model (issue 18), the consumer of locks_events.c's queue, a source: each
 * wait becomes a "Lock wait" interval (JvmLockWait) on the waiting thread's track with the
 * waiting stack as its cause, and one sample, weighted by the wait in µs, on a second track of
 * the same thread named "NAME: lock waits" (weightType tracing-ms, a companion track: written
 * beside the thread's, under its name), so the call tree of that track answers "which code waits
 * most". The wait's end is a sample without a stack and of weight 0 (issue 30): the track's graph
 * and stack chart show each wait where it is, nothing between waits. A park that waits for work
 * (locks_idle.c: an idle pool thread) is an "Idle wait" marker and goes to a track "NAME: idle
 * waits" instead, apart from contention. Model owner only, but for start and stop (control's
 * lock). */
#include "locks_shared.h"

#include <stdio.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_jtype.h"
#include "fx_jvm_markers.h"
#include "fx_ring.h"

struct waits_track {
    struct fx_thread *t; /* the waiting thread (the registry keeps ended threads until reaped) */
    int32_t tid;
    fx_thread_id index; /* its lock waits track (or idle waits track) */
    bool idle;
    bool unregistered;
};

/* Owned by the model's owner. */
static struct {
    struct fx_methods *methods;
    uint32_t methods_gen;
    struct waits_track *tracks;
    uint32_t ntracks, tracks_cap;
    uint64_t model_errors, no_thread, drained, idle;
    uint64_t drops_base; /* the queue's drops (per JVM) when this recording began */
    bool ever_started;
} lc;

static bool ended(struct fx_thread *t)
{
    return __atomic_load_n(&t->ended, __ATOMIC_ACQUIRE) != 0;
}

/* The thread's lock waits track (idle waits track), added at its first wait beside its own. */
static int waits_track(struct fx_profile *p, struct fx_thread *t, fx_thread_id thread, bool idle,
                       fx_thread_id *out)
{
    for (uint32_t i = 0; i < lc.ntracks; i++) {
        if (lc.tracks[i].t == t && lc.tracks[i].tid == t->tid && lc.tracks[i].idle == idle) {
            *out = lc.tracks[i].index;
            return FX_OK;
        }
    }
    if (lc.ntracks == lc.tracks_cap) {
        uint32_t cap = lc.tracks_cap ? lc.tracks_cap * 2 : 16;
        struct waits_track *n = fx_reallocarray(lc.tracks, cap, sizeof(*n));
        if (n == NULL)
            return FX_ENOMEM;
        lc.tracks = n;
        lc.tracks_cap = cap;
    }
    int rc = fx_profile_thread_add_companion(p, thread, idle ? ": idle waits" : ": lock waits",
                                             t->start_ns, out);
    if (rc == FX_OK)
        rc = fx_profile_thread_set_weight_type(p, *out, FX_WEIGHT_TRACING_MS);
    if (rc == FX_OK && idle)
        rc = fx_profile_thread_set_idle_waits(p, *out); /* counted apart (issue 30 item 6) */
    if (rc == FX_OK)
        lc.tracks[lc.ntracks++] = (struct waits_track){t, t->tid, *out, idle, false};
    return rc;
}

/* The lock waits track of a thread that ended ends with it, as its own track does (drain.c);
 * it stays listed until the thread is reaped, for a wait still queued. */
static void end_waits_tracks(struct fx_profile *p)
{
    for (uint32_t i = 0; i < lc.ntracks; i++) {
        struct waits_track *b = &lc.tracks[i];
        if (!b->unregistered && ended(b->t)) {
            fx_profile_thread_unregister(p, b->index, b->t->end_ns);
            b->unregistered = true;
        }
    }
}

void fx_locks_thread_reaped(struct fx_profile *p, struct fx_thread *t)
{
    for (uint32_t i = 0; i < lc.ntracks;) {
        if (lc.tracks[i].t == t) {
            fx_profile_thread_release(p, lc.tracks[i].index);
            lc.tracks[i] = lc.tracks[--lc.ntracks];
        } else {
            i++;
        }
    }
}

/* Leaf-first jvmtiFrameInfo as a model stack (root first); "[truncated]" on top of a cut. */
static int wait_stack(JNIEnv *jni, struct fx_profile *p, const jvmtiFrameInfo *f, uint32_t n,
                      bool truncated, fx_stack_id *out)
{
    fx_stack_id s = FX_STACK_NONE;
    int rc = FX_OK;
    if (truncated)
        rc = fx_profile_label_stack(p, "[truncated]", FX_CAT_OTHER, &s);
    for (uint32_t i = n; rc == FX_OK && i-- > 0;) {
        fx_frame_id fr;
        jvmtiFrameInfo fi;
        memcpy(&fi, &f[i], sizeof(fi)); /* records are 8-byte aligned; copied all the same */
        rc = fx_methods_frame(lc.methods, jni, p, fi.method, (jint)fi.location, &fr);
        if (rc == FX_OK)
            rc = fx_profile_stack(p, s, fr, &s);
    }
    if (rc == FX_OK && n == 0)
        rc = fx_profile_label_stack(p, "[lock: no stack]", FX_CAT_OTHER, &s);
    *out = s;
    return rc;
}

/* "Ljava/lang/Object;" -> "java.lang.Object", "[I" -> "int[]" (fx_jtype.h); what is not a
 * signature, or too long, with its slashes as dots. */
static size_t class_name(const char *sig, size_t len, char *out, size_t cap)
{
    int jn = fx_jtype_name(sig, len, out, cap);
    if (jn >= 0)
        return (size_t)jn;
    if (len >= 2 && sig[0] == 'L' && sig[len - 1] == ';') {
        sig++;
        len -= 2;
    }
    size_t n = len < cap - 1 ? len : cap - 1;
    for (size_t i = 0; i < n; i++)
        out[i] = sig[i] == '/' ? '.' : sig[i];
    out[n] = '\0';
    return n;
}

static int one_wait(JNIEnv *jni, struct fx_profile *p, const struct lock_rec *r, uint32_t len)
{
    size_t fbytes = (size_t)r->nframes * sizeof(jvmtiFrameInfo);
    if (sizeof(*r) + fbytes + r->class_len + r->owner_len > len)
        return FX_EINVAL;
    struct fx_thread *t = fx_tracks_thread_of_tid(r->tid);
    if (t == NULL) {
        lc.no_thread++;
        return FX_OK;
    }
    const char *bytes = (const char *)(r + 1) + fbytes;
    char cls[LOCK_NAME_MAX + 1];
    size_t cl = r->class_len ? class_name(bytes, r->class_len, cls, sizeof(cls))
                             : (size_t)snprintf(cls, sizeof(cls), "unknown");
    fx_thread_id thread, waits;
    fx_stack_id stack;
    int rc = fx_tracks_index(p, t, &thread);
    const jvmtiFrameInfo *frames = (const jvmtiFrameInfo *)(r + 1);
    if (rc == FX_OK)
        rc = wait_stack(jni, p, frames, r->nframes, r->truncated, &stack);
    if (rc == FX_OK) /* depth= counts the "[truncated]" frame too (issue 32) */
        rc = fx_stack_depth_cap(p, FX_STACK_NONE, fx_opt()->depth, fx_opt()->depth_cut, &stack);
    bool idle = r->kind == LOCK_PARK && fx_lock_idle_wait(jni, frames, r->nframes);
    struct fx_jvm_lock l = {cls,
                            cl,
                            bytes + r->class_len,
                            r->owner_len,
                            r->kind == LOCK_MONITOR ? "monitor" : "park",
                            idle};
    if (l.owner_len == 0) {
        l.owner = "unknown";
        l.owner_len = 7;
    }
    if (rc == FX_OK)
        rc = fx_jvm_markers_lock(p, thread, r->t0, r->t1, &l);
    if (rc == FX_OK)
        rc = fx_profile_marker_stack(p, thread, stack);
    if (rc == FX_OK)
        rc = waits_track(p, t, thread, idle, &waits);
    int64_t us = (r->t1 - r->t0) / 1000;
    /* CPU 0 from the previous wait's end to this start (the graph is empty between waits), none
     * known during the wait (drawn full height); the end: no stack, weight 0. */
    if (rc == FX_OK)
        rc = fx_profile_sample(p, waits, r->t0, stack, 0,
                               us < 1            ? 1
                               : us > UINT32_MAX ? UINT32_MAX
                                                 : (uint32_t)us);
    if (rc == FX_OK)
        rc = fx_profile_sample(p, waits, r->t1, FX_STACK_NONE, -1, 0);
    lc.idle += rc == FX_OK && idle;
    return rc;
}

static void locks_drain(JNIEnv *jni, struct fx_profile *p)
{
    if (!lc.ever_started || !fx_evq_ready(&fx_lock_queue))
        return;
    if (lc.methods != NULL && lc.methods_gen != fx_profile_generation(p)) {
        fx_methods_free(lc.methods); /* compaction renumbered the model's ids */
        lc.methods = NULL;
    }
    if (lc.methods == NULL) {
        lc.methods = fx_methods_new();
        lc.methods_gen = fx_profile_generation(p);
        if (lc.methods == NULL)
            return;
    }
    const void *rec;
    uint32_t len;
    while ((rec = fx_evq_peek(&fx_lock_queue, &len)) != NULL) {
        if (len < sizeof(struct lock_rec) || one_wait(jni, p, rec, len) != FX_OK)
            lc.model_errors++;
        lc.drained++;
        fx_evq_release(&fx_lock_queue);
    }
    end_waits_tracks(p);
}

static int locks_start(JNIEnv *jni)
{
    uint64_t min = fx_opt()->lock_ns;
    if (min == 0)
        return FX_OK;
    lc.ever_started = true;
    return fx_lock_events_start(jni, min);
}

static void locks_stop(void)
{
    JNIEnv *jni = NULL;
    JavaVM *vm = fx_jvm();
    /* Not a Java thread, or the JVM is dying (re-binding a java.base native then logs a JNI
     * warning): the hook stays bound and passes straight through. */
    if (fx_phase() == FX_PHASE_DEAD || vm == NULL ||
        (*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK)
        jni = NULL;
    if (lc.ever_started)
        fx_lock_events_stop(jni);
}

static uint64_t get(const uint64_t *c)
{
    return __atomic_load_n(c, __ATOMIC_RELAXED);
}

static uint64_t mean(uint64_t total, uint64_t n)
{
    return n ? total / n : 0;
}

/* The figures of paths that may not run in a recording (FX_EXTRA_NONZERO) have a row only when
 * they are not 0, and the group counts the rows so left out. */
static void locks_before_dump(JNIEnv *jni, struct fx_profile *p, const struct fx_span *span)
{
    (void)span;
    if (!lc.ever_started)
        return;
    locks_drain(jni, p);
    const char *g = "Lock waits";
    const struct fx_lock_figures *f = &fx_lock_fig;
    const struct fx_lock_owner_figures *o = &fx_lock_owner_fig;
    uint64_t calls = get(&o->lookups), rec = get(&f->monitor_recorded) + get(&f->park_recorded);
    const struct fx_extra_row rows[] = {
            {"lock= (ns)", fx_opt()->lock_ns, FX_EXTRA_ALWAYS},
            {"monitor: contended enters seen", get(&f->monitor_seen), FX_EXTRA_ALWAYS},
            {"monitor: waits recorded", get(&f->monitor_recorded), FX_EXTRA_ALWAYS},
            {"park: parks with a blocker seen", get(&f->park_seen), FX_EXTRA_ALWAYS},
            {"park: waits recorded", get(&f->park_recorded), FX_EXTRA_ALWAYS},
            {"park: of which idle waits (waiting for work: idle waits tracks)", lc.idle,
             FX_EXTRA_ALWAYS},
            {"dropped: queue full", fx_evq_drops(&fx_lock_queue) - lc.drops_base, FX_EXTRA_LOSS},
            {"dropped: no wait slot", get(&f->slots_full), FX_EXTRA_LOSS},
            {"dropped: thread not registered", lc.no_thread, FX_EXTRA_LOSS},
            {"model errors", lc.model_errors, FX_EXTRA_LOSS},
            {"owner unknown (JVMTI failed)", get(&f->owner_failed), FX_EXTRA_LOSS},
            {"stack unknown (GetStackTrace failed)", get(&f->stack_failed), FX_EXTRA_LOSS},
            {"monitor: waits below lock=", get(&f->monitor_short), FX_EXTRA_NONZERO},
            {"park: waits below lock=", get(&f->park_short), FX_EXTRA_NONZERO},
            {"monitor enter callback: mean ns (1 in 64 timed)",
             mean(get(&f->enter_ns), get(&f->enter_timed)), FX_EXTRA_NONZERO},
            {"monitor entered callback below lock=: mean ns (1 in 64 timed)",
             mean(get(&f->short_ns), get(&f->short_timed)), FX_EXTRA_NONZERO},
            {"monitor owner lookups (GetObjectMonitorUsage)", calls, FX_EXTRA_NONZERO},
            {"monitor owner lookup: mean ns", mean(get(&o->lookup_ns), calls), FX_EXTRA_NONZERO},
            {"monitor owner lookup: max ns", get(&o->lookup_max_ns), FX_EXTRA_NONZERO},
            {"owner from another waiter's lookup", get(&o->shared), FX_EXTRA_NONZERO},
            {"owner not looked up (budget)", get(&o->budget), FX_EXTRA_NONZERO},
            {"owner not looked up (lockowner=off)", get(&o->off), FX_EXTRA_NONZERO},
            {"owner unknown (wait ended during its lookup)", get(&o->during_lookup),
             FX_EXTRA_NONZERO},
            {"owner unknown (wait ended before its lookup)", get(&o->before_lookup),
             FX_EXTRA_NONZERO},
            {"owner lookup thread woken from its idle period", get(&o->hurried), FX_EXTRA_NONZERO},
            {"recording a wait: mean ns", mean(get(&f->callback_ns), rec), FX_EXTRA_NONZERO},
    };
    fx_profile_extra_str(p, g, "park", fx_lock_park_note());
    fx_profile_extra_str(p, g, "lockowner", fx_lock_owner_lookups() ? "on" : "off");
    int zeros = fx_profile_extra_rows(p, g, rows, sizeof(rows) / sizeof(rows[0]));
    fx_profile_extra_detail(p, g, "figures at 0 (rows left out)", zeros);
}

/* Every member a counter the hooks add to with lock_add (locks_shared.h). */
static void zero_counters(uint64_t *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        __atomic_store_n(&c[i], 0, __ATOMIC_RELAXED);
}

/* A new recording (base.h, struct fx_source `reset`): the hooks' and the consumer's counts from
 * zero. The events are off, but Unsafe.park's hook stays bound and a JVMTI callback may still be
 * returning: atomic stores, as the hooks' atomic adds. A wait that began before the stop and
 * ends in this recording is counted recorded here without being seen here. The park note, the
 * hook's binding and the lock waits tracks are the JVM's, kept. */
static void locks_reset(struct fx_profile *p)
{
    (void)p;
    _Static_assert(sizeof(fx_lock_fig) % sizeof(uint64_t) == 0, "counters only");
    _Static_assert(sizeof(fx_lock_owner_fig) % sizeof(uint64_t) == 0, "counters only");
    zero_counters((uint64_t *)&fx_lock_fig, sizeof(fx_lock_fig) / sizeof(uint64_t));
    zero_counters((uint64_t *)&fx_lock_owner_fig, sizeof(fx_lock_owner_fig) / sizeof(uint64_t));
    lc.model_errors = lc.no_thread = lc.drained = lc.idle = 0;
    lc.drops_base = fx_evq_drops(&fx_lock_queue);
}

/* Stopped, the stop's pass drained the queue, the consumer paused, the events off: its pages
 * go back, and the consumer's method names (as drain.c's at fx_model_idle: a stopped agent
 * keeps no cache); the next start with lock= makes them again. */
static void locks_idle(void)
{
    fx_evq_free(&fx_lock_queue);
    fx_methods_free(lc.methods);
    lc.methods = NULL;
}

const struct fx_source fx_locks_source = {
        .name = "locks",
        .start = locks_start,
        .stop = locks_stop,
        .drain = locks_drain,
        .before_dump = locks_before_dump,
        .reset = locks_reset,
        .idle = locks_idle,
        .thread_reaped = fx_locks_thread_reaped,
};
