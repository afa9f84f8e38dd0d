/* SPDX-License-Identifier: Apache-2.0 */
/* Virtual threads' waits in the model (issue 22 item 4), the consumer of sampling/vtwait.c's
 * queue: each wait of at least vtwait= becomes a "Virtual thread wait" interval
 * (JvmVirtualThreadWait) whose cause is the virtual thread's stack where it waited. It goes on
 * the virtual thread's own track (added, like a sample would, while under the track cap), or
 * past the cap on one shared track "virtual threads waiting (past the track cap)", where the
 * marker names the virtual thread. Each wait has a kind read from its top frames (sleep, I/O,
 * park, blocked); a yield is not a wait (the thread stayed runnable, it only waited for a
 * carrier): counted, and shown as a "Waiting for a carrier" interval only.
 * Where a wait ends (issue 30 item 5): a timed park (a sleep, a parkNanos: VirtualThread.parkNanos
 * among its top frames) with VirtualThread.timeout known (JDK 24+) ended when its timer made it
 * runnable, its unmount + timeout, if the mount came later: from there to the mount it waited
 * for a carrier, a "Waiting for a carrier" interval of its own (same schema, kind "carrier")
 * after the wait marker. Other waits (an untimed park, I/O, a monitor; JDK 21-23) have no wake
 * time the agent can read: they end at the mount, the carrier wait included, and are counted
 * so. A timed park woken early by an unpark ends at most at its timeout (an upper bound).
 * Model owner only; calls vthreads.c, never the reverse. */
#include "internal.h"

#include <stdbool.h>
#include <string.h>

#include "fx_jvm_markers.h"

static struct {
    bool shared_added;
    fx_thread_id shared; /* the track of waits past the cap */
    uint64_t markers, on_shared, model_errors, yields;
    uint64_t carrier_waits, untimed; /* issue 30 item 5 */
    int64_t carrier_ns;
} vw;

#define KIND_FRAMES 24 /* how deep the kind is looked for, from the leaf */

enum wait_kind {
    KIND_BLOCKED,
    KIND_PARK,
    KIND_IO,
    KIND_SLEEP,
    KIND_YIELD
};

static const char *const kind_names[] = {"blocked", "park", "I/O", "sleep", "yield"};

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* One frame's kind, or -1: class is a JVM signature ("Ljava/lang/Thread;"). *timed is set at
 * VirtualThread.parkNanos, the park that VirtualThread.timeout times. */
static int frame_kind(const char *cls, const char *name, bool *timed)
{
    bool vt = strcmp(cls, "Ljava/lang/VirtualThread;") == 0;
    bool th = strcmp(cls, "Ljava/lang/Thread;") == 0;
    if (vt && strcmp(name, "parkNanos") == 0)
        *timed = true;
    if ((vt && strcmp(name, "tryYield") == 0) || (th && strcmp(name, "yield") == 0))
        return KIND_YIELD;
    if ((vt || th) && starts(name, "sleep"))
        return KIND_SLEEP;
    if (starts(cls, "Lsun/nio/ch/") || starts(cls, "Ljava/net/") || starts(cls, "Ljava/nio/") ||
        starts(cls, "Ljdk/internal/net/"))
        return KIND_IO;
    if (vt && starts(name, "park"))
        return KIND_PARK;
    return -1;
}

/* The strongest kind among the top frames (a sleep parks, so sleep outranks park); no park
 * frame at all is a monitor: JDK 24+ unmounts a virtual thread blocked on one in the VM. */
static enum wait_kind kind_of(JNIEnv *jni, const struct fx_vtwait_rec *r, bool *timed)
{
    *timed = false;
    jvmtiEnv *jvmti = fx_jvmti();
    const jvmtiFrameInfo *f = (const jvmtiFrameInfo *)(r + 1);
    int kind = KIND_BLOCKED;
    for (uint32_t i = 0; jvmti != NULL && i < r->nframes && i < KIND_FRAMES; i++) {
        char *name = NULL, *cls = NULL;
        jclass c = NULL;
        if ((*jvmti)->GetMethodName(jvmti, f[i].method, &name, NULL, NULL) == JVMTI_ERROR_NONE &&
            (*jvmti)->GetMethodDeclaringClass(jvmti, f[i].method, &c) == JVMTI_ERROR_NONE &&
            (*jvmti)->GetClassSignature(jvmti, c, &cls, NULL) == JVMTI_ERROR_NONE) {
            int k = frame_kind(cls, name, timed);
            kind = k > kind ? k : kind;
        }
        (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)cls);
        if (c != NULL)
            (*jni)->DeleteLocalRef(jni, c);
    }
    return (enum wait_kind)kind;
}

/* The recorded frames (leaf first) as a model stack, root first. */
static int cause_stack(JNIEnv *jni, struct fx_profile *p, struct fx_methods *m,
                       const struct fx_vtwait_rec *r, fx_stack_id *out)
{
    const jvmtiFrameInfo *f = (const jvmtiFrameInfo *)(r + 1);
    *out = FX_STACK_NONE;
    if (r->nframes == 0)
        return fx_profile_label_stack(p, "[virtual thread wait: no stack]", FX_CAT_OTHER, out);
    int rc = r->truncated ? fx_profile_label_stack(p, "[truncated]", FX_CAT_OTHER, out) : FX_OK;
    for (uint32_t i = r->nframes; rc == FX_OK && i > 0; i--) {
        fx_frame_id fr;
        rc = fx_methods_frame(m, jni, p, f[i - 1].method, (jint)f[i - 1].location, &fr);
        if (rc == FX_OK)
            rc = fx_profile_stack(p, *out, fr, out);
    }
    return rc;
}

static int track(struct fx_profile *p, const struct fx_vtwait_rec *r, fx_thread_id *index)
{
    int rc = fx_model_vthreads_track(p, r->id, r->t0, index);
    if (rc != FX_EFULL)
        return rc;
    vw.on_shared++;
    if (!vw.shared_added) {
        rc = fx_profile_thread_add(p, "virtual threads waiting (past the track cap)", 0, r->t0,
                                   &vw.shared);
        if (rc != FX_OK)
            return rc;
        vw.shared_added = true;
    }
    *index = vw.shared;
    return FX_OK;
}

static int one(JNIEnv *jni, struct fx_profile *p, struct fx_methods *m,
               const struct fx_vtwait_rec *r, uint32_t len)
{
    if (len < sizeof(*r) + r->nframes * sizeof(jvmtiFrameInfo))
        return FX_EINVAL;
    bool timed;
    enum wait_kind kind = kind_of(jni, r, &timed);
    /* The wake: its timer's, for a timed park that the mount came after (file comment); a
     * yield's unmount, since it stayed runnable: all of it was a wait for a carrier. */
    int64_t woke = r->t1;
    if (kind == KIND_YIELD)
        woke = r->t0;
    else if (timed && r->timeout_ns > 0 && r->t0 + r->timeout_ns < r->t1)
        woke = r->t0 + r->timeout_ns;
    else if (!timed || r->timeout_ns < 0)
        vw.untimed++;
    fx_thread_id thread;
    fx_stack_id stack;
    char label[96];
    size_t n = fx_model_vthreads_label(r->id, label, sizeof(label));
    int rc = track(p, r, &thread);
    if (rc == FX_OK && kind == KIND_YIELD)
        vw.yields++;
    else if (rc == FX_OK) {
        rc = cause_stack(jni, p, m, r, &stack);
        if (rc == FX_OK)
            rc = fx_jvm_markers_vtwait(p, thread, r->t0, woke, label, n, kind_names[kind]);
        if (rc == FX_OK)
            rc = fx_profile_marker_stack(p, thread, stack);
        if (rc == FX_OK)
            vw.markers++;
    }
    if (rc == FX_OK && woke < r->t1) {
        rc = fx_jvm_markers_vtcarrier(p, thread, woke, r->t1, label, n);
        if (rc == FX_OK) {
            vw.carrier_waits++;
            vw.carrier_ns += r->t1 - woke;
        }
    }
    return rc;
}

/* After the sampler's pass (registered after it): its method cache names the waits' frames. */
static void waits_drain(JNIEnv *jni, struct fx_profile *p)
{
    struct fx_methods *m = fx_drain_methods();
    if (m == NULL)
        return; /* stopped: the sampler holds no cache, and the queue nothing of a recording */
    const struct fx_vtwait_rec *r;
    uint32_t len;
    while ((r = fx_vtwait_peek(&len)) != NULL) {
        if (len < sizeof(*r) || one(jni, p, m, r, len) != FX_OK)
            vw.model_errors++;
        fx_vtwait_release();
    }
}

static void waits_report(JNIEnv *jni, struct fx_profile *p, const struct fx_span *span)
{
    (void)jni;
    (void)span;
    if (!fx_vthreads_on())
        return;
    struct fx_vtwait_figures f;
    fx_vtwait_figures(&f);
    const struct fx_extra_row rows[] = {
            {"vtwait= (ns)", fx_opt()->vtwait_ns, FX_EXTRA_ALWAYS},
            {"waits of at least vtwait=", f.long_waits, FX_EXTRA_ALWAYS},
            {"waits recorded with a stack", f.recorded, FX_EXTRA_ALWAYS},
            {"waits left out: rate limit (1000/s)", f.rate_limited, FX_EXTRA_LOSS},
            {"waits left out: queue full", f.queue_full, FX_EXTRA_LOSS},
            {"waits not timed: unmount time overwritten (16384 slots)", f.overwritten,
             FX_EXTRA_LOSS},
            {"waits without a stack (GetStackTrace failed)", f.stack_failed, FX_EXTRA_LOSS},
            {"wait markers", vw.markers, FX_EXTRA_ALWAYS},
            {"waits left out: yields (runnable, not waiting)", vw.yields, FX_EXTRA_ALWAYS},
            {"waits ended at the mount (no wake time: untimed, or no timeout field)", vw.untimed,
             FX_EXTRA_ALWAYS},
            {"waiting for a carrier: markers", vw.carrier_waits, FX_EXTRA_ALWAYS},
            {"waiting for a carrier: total ms", (uint64_t)(vw.carrier_ns / 1000000),
             FX_EXTRA_ALWAYS},
            {"of which on the shared track (past the cap)", vw.on_shared, FX_EXTRA_NONZERO},
            {"wait model errors", vw.model_errors, FX_EXTRA_LOSS},
            {"recording a wait: mean ns", f.recorded ? f.callback_ns / f.recorded : 0,
             FX_EXTRA_ALWAYS},
    };
    fx_profile_extra_rows(p, "Virtual threads", rows, sizeof(rows) / sizeof(rows[0]));
}

/* The shared track stays (a thread of the profile). */
static void waits_reset(struct fx_profile *p)
{
    (void)p;
    vw.markers = vw.on_shared = vw.model_errors = vw.yields = 0;
    vw.carrier_waits = vw.untimed = 0;
    vw.carrier_ns = 0;
}

/* Virtual threads' waits, a view: reached by the drain through the source table only. */
const struct fx_source fx_vthread_waits_source = {
        .name = "virtual thread waits",
        .drain = waits_drain,
        .before_dump = waits_report,
        .reset = waits_reset,
};
