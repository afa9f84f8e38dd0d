/* SPDX-License-Identifier: Apache-2.0 */
/* JVM events and fxagent.Markers calls become markers in two steps: producers queue records
 * (markers_queue.c); the model's owner (the drain thread, then VMDeath) turns them into markers
 * here, a source (fx_markers_source) drained each pass and before each dump. It never holds a
 * queue lock while it calls the JVM, so a producer stopped at a safepoint blocks no one.
 *
 * Where markers go: a thread's own markers (user markers; a JIT marker whose compiler thread is
 * registered) on its track; JVM-wide ones (GC, the profiler's own) on the main thread's track,
 * once: copying a GC pause to every thread that had samples during it would multiply the marker
 * table by the thread count for no new fact, and the timeline overview of the main track shows
 * it. HotSpot hides its compiler threads from JVMTI, so JIT markers land on the main track too. */
#include "markers_queue.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_jvm_markers.h"
#include "fx_ring.h"

struct open_interval {
    int64_t handle, start_ns;
    fx_thread_id thread;
    bool start_written; /* a START marker is in the model: the end becomes an END marker */
    uint16_t name_len, text_len;
    char *bytes; /* name, then text */
};

struct gc_pause {
    int64_t start_ns, end_ns;
};

/* Consumer side: the model's owner only. Caches are valid for one model (`p`). */
static struct {
    struct fx_profile *p;
    bool have_host, started_marker;
    fx_thread_id host;
    int64_t gc_start_ns; /* 0: no pause open */
    int64_t gc_seq;
    struct gc_pause gc_pending[GC_PENDING_MAX];
    unsigned n_gc_pending, gc_wait;
    struct open_interval *open;
    uint32_t n_open, open_cap;
    int64_t dump_begin_ns;
    uint64_t dump_samples;
    uint64_t gc_pauses, gc_attributed, gc_unmatched, jit_markers, user_markers, user_unmatched;
    uint64_t open_dropped, model_errors, over_memory, cpu_ns, dumps;
    uint64_t mq_base[3]; /* the queues' drop counts when this recording began */
} cs;

/* --- consumer: threads --- */

static void reset_for(struct fx_profile *p)
{
    if (cs.p == p)
        return;
    for (uint32_t i = 0; i < cs.n_open; i++)
        fx_free(cs.open[i].bytes);
    cs.n_open = 0;
    cs.have_host = false;
    cs.started_marker = false;
    cs.p = p;
}

/* The main thread's track, or a "[JVM]" track where there is no live thread named "main". */
static int host_thread(struct fx_profile *p, fx_thread_id *out)
{
    if (cs.have_host) {
        *out = cs.host;
        return FX_OK;
    }
    int rc = FX_ENOTFOUND;
    for (struct fx_thread *t = fx_threads_head(); t != NULL && rc != FX_OK; t = t->next) {
        if (!__atomic_load_n(&t->ended, __ATOMIC_ACQUIRE) && strcmp(t->name, "main") == 0)
            rc = fx_tracks_index(p, t, &cs.host);
    }
    if (rc == FX_OK) /* kept after main ends: its slot must not go to another thread */
        fx_profile_thread_hold(p, cs.host);
    if (rc != FX_OK)
        rc = fx_profile_thread_add(p, "[JVM]", getpid(), fx_rec()->sampling_begin_ns, &cs.host);
    cs.have_host = rc == FX_OK;
    *out = cs.host;
    return rc;
}

/* The track of the Java thread with OS id `tid` (fx_tracks_of_tid), else the host track. */
static int thread_of(struct fx_profile *p, int32_t tid, fx_thread_id *out)
{
    int rc = fx_tracks_of_tid(p, tid, out);
    return rc == FX_ENOTFOUND ? host_thread(p, out) : rc;
}

/* --- consumer: GC --- */

static void gc_emit(struct fx_profile *p, JNIEnv *jni, bool final)
{
    struct fx_jvm_gc gc[GC_PENDING_MAX];
    unsigned n = cs.n_gc_pending;
    for (unsigned i = 0; i < n; i++)
        gc[i] = (struct fx_jvm_gc){.seq = cs.gc_seq - n + 1 + i,
                                   .collector = NULL,
                                   .heap_before = -1,
                                   .heap_after = -1};
    if (!fx_gcinfo_attribute(jni, gc, n, final || ++cs.gc_wait >= GC_WAIT_CYCLES))
        return;
    fx_thread_id host;
    for (unsigned i = 0; i < n; i++) {
        cs.gc_attributed += gc[i].collector != NULL;
        if (host_thread(p, &host) != FX_OK ||
            fx_jvm_markers_gc(p, host, cs.gc_pending[i].start_ns, cs.gc_pending[i].end_ns,
                              &gc[i]) != FX_OK)
            cs.model_errors++;
    }
    cs.n_gc_pending = 0;
    cs.gc_wait = 0;
}

static void gc_record(struct fx_profile *p, JNIEnv *jni, const struct gc_rec *r)
{
    if (r->kind == GC_START) {
        cs.gc_unmatched += cs.gc_start_ns != 0;
        cs.gc_start_ns = r->t;
        return;
    }
    if (cs.gc_start_ns == 0) {
        cs.gc_unmatched++;
        return;
    }
    if (cs.n_gc_pending == GC_PENDING_MAX)
        gc_emit(p, jni, true);
    cs.gc_pending[cs.n_gc_pending++] = (struct gc_pause){cs.gc_start_ns, r->t};
    cs.gc_seq++;
    cs.gc_pauses++;
    cs.gc_start_ns = 0;
}

static void gc_drain(struct fx_profile *p, JNIEnv *jni, bool final)
{
    const void *rec;
    uint32_t len;
    while ((rec = fx_evq_peek(&fx_mq.gc, &len)) != NULL) {
        if (len >= sizeof(struct gc_rec))
            gc_record(p, jni, rec);
        fx_evq_release(&fx_mq.gc);
    }
    if (cs.n_gc_pending > 0)
        gc_emit(p, jni, final);
}

/* --- consumer: JIT --- */

/* The track of the last record's thread, for one drain of the queue: the events come from the
 * Service Thread (and the compilers) one after another, and the registry walk for each was ~1.5 %
 * of the drain's CPU on javac (issue 31). Only the drain finishes a thread, and not during it. */
struct jit_thread {
    int32_t tid;
    bool known;
    fx_thread_id thread;
};

static int jit_record(JNIEnv *jni, struct fx_profile *p, const struct jit_rec *r,
                      struct jit_thread *last)
{
    fx_str_id name;
    int rc = fx_jit_info_name(jni, p, r->method, &name);
    if (rc == FX_OK && (!last->known || last->tid != r->tid)) {
        last->known = false;
        rc = thread_of(p, r->tid, &last->thread);
        last->known = rc == FX_OK;
        last->tid = r->tid;
    }
    if (rc != FX_OK)
        return rc;
    fx_thread_id thread = last->thread;
    size_t len;
    const char *text = fx_profile_string_at(p, name, &len);
    struct fx_jvm_jit j = {text, len, r->code_size, r->inlined};
    return fx_jvm_markers_jit(p, thread, r->t, &j);
}

static void jit_drain(JNIEnv *jni, struct fx_profile *p)
{
    const void *rec;
    uint32_t len;
    struct jit_thread last = {.known = false};
    while ((rec = fx_evq_peek(&fx_mq.jit, &len)) != NULL) {
        if (len >= sizeof(struct jit_rec)) {
            if (jit_record(jni, p, rec, &last) == FX_OK)
                cs.jit_markers++;
            else
                cs.model_errors++;
        }
        fx_evq_release(&fx_mq.jit);
    }
}

/* --- consumer: user markers --- */

/* An open interval holds its thread's track (fx_profile_thread_hold) until its end is written
 * there, however long after the thread's end that is. */
static int open_add(struct fx_profile *p, const struct user_rec *r, fx_thread_id thread)
{
    if (cs.n_open == OPEN_MAX)
        return FX_EFULL;
    if (cs.n_open == cs.open_cap) {
        uint32_t cap = cs.open_cap ? cs.open_cap * 2 : 64;
        struct open_interval *o = fx_reallocarray(cs.open, cap, sizeof(*o));
        if (o == NULL)
            return FX_ENOMEM;
        cs.open = o;
        cs.open_cap = cap;
    }
    char *bytes = fx_malloc((size_t)r->name_len + r->text_len + 1);
    if (bytes == NULL)
        return FX_ENOMEM;
    memcpy(bytes, r->bytes, (size_t)r->name_len + r->text_len);
    cs.open[cs.n_open++] = (struct open_interval){.handle = r->handle,
                                                  .start_ns = r->t,
                                                  .thread = thread,
                                                  .name_len = r->name_len,
                                                  .text_len = r->text_len,
                                                  .bytes = bytes};
    fx_profile_thread_hold(p, thread);
    return FX_OK;
}

/* Most intervals nest, so the one ending is usually the last begun. */
static int open_find(int64_t handle)
{
    for (uint32_t i = cs.n_open; i-- > 0;) {
        if (cs.open[i].handle == handle)
            return (int)i;
    }
    return -1;
}

static int user_end(struct fx_profile *p, const struct user_rec *r)
{
    int i = open_find(r->handle);
    if (i < 0) {
        cs.user_unmatched++; /* its begin was dropped, or end was called twice */
        return FX_OK;
    }
    struct open_interval o = cs.open[i];
    memmove(&cs.open[i], &cs.open[i + 1], (cs.n_open - (uint32_t)i - 1) * sizeof(*cs.open));
    cs.n_open--;
    uint8_t phase = o.start_written ? FX_PHASE_END : FX_PHASE_INTERVAL;
    int rc = fx_jvm_markers_user(p, o.thread, phase, o.start_ns, r->t, o.bytes, o.name_len,
                                 o.bytes + o.name_len, o.text_len);
    fx_profile_thread_release(p, o.thread);
    fx_free(o.bytes);
    cs.user_markers += rc == FX_OK;
    return rc;
}

static int user_record(struct fx_profile *p, const struct user_rec *r, uint32_t len)
{
    if (sizeof(*r) + (size_t)r->name_len + r->text_len > len)
        return FX_EINVAL;
    if (r->kind == USER_END)
        return user_end(p, r);
    fx_thread_id thread;
    int rc = thread_of(p, r->tid, &thread);
    if (rc != FX_OK)
        return rc;
    if (r->kind == USER_BEGIN) {
        rc = open_add(p, r, thread);
        cs.open_dropped += rc != FX_OK;
        return FX_OK;
    }
    rc = fx_jvm_markers_user(p, thread, FX_PHASE_INSTANT, r->t, r->t, r->bytes, r->name_len,
                             r->bytes + r->name_len, r->text_len);
    cs.user_markers += rc == FX_OK;
    return rc;
}

static void user_drain(struct fx_profile *p)
{
    const void *rec;
    uint32_t len;
    while ((rec = fx_evq_peek(&fx_mq.user, &len)) != NULL) {
        if (len >= sizeof(struct user_rec)) {
            const struct user_rec *r = rec;
            if (user_record(p, r, len) != FX_OK)
                cs.model_errors++;
        }
        fx_evq_release(&fx_mq.user);
    }
}

/* Intervals still open at a dump: START markers (running to the thread's end); their end, in a
 * later dump, becomes the matching END marker. */
static void user_write_open(struct fx_profile *p)
{
    for (uint32_t i = 0; i < cs.n_open; i++) {
        struct open_interval *o = &cs.open[i];
        if (o->start_written)
            continue;
        if (fx_jvm_markers_user(p, o->thread, FX_PHASE_START, o->start_ns, 0, o->bytes, o->name_len,
                                o->bytes + o->name_len, o->text_len) == FX_OK)
            o->start_written = true;
        else
            cs.model_errors++;
    }
}

/* --- the drain's share --- */

static void start_marker(struct fx_profile *p)
{
    fx_thread_id host;
    if (cs.started_marker || host_thread(p, &host) != FX_OK)
        return;
    static const char *const modes[] = {"cpu", "itimer", "wall"};
    char engine[320];
    fx_engine_name(engine, sizeof(engine));
    struct fx_jvm_start s = {engine, (unsigned)fx_opt()->mode < 3 ? modes[fx_opt()->mode] : "?",
                             (double)fx_opt()->interval_ns / 1e6};
    cs.started_marker = fx_jvm_markers_start(p, host, fx_rec()->sampling_begin_ns, &s) == FX_OK;
}

static int64_t thread_cpu_ns(void)
{
    return fx_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* The window (window.c) keeps the model near `memory`, dropping old samples and markers alike;
 * twice the bound means it cannot, and then markers stop too. */
static bool over_memory(struct fx_profile *p)
{
    if (fx_profile_memory(p) <= 2 * fx_opt()->memory_bytes)
        return false;
    cs.over_memory++;
    return true;
}

static void drain_all(JNIEnv *jni, struct fx_profile *p, bool final)
{
    reset_for(p);
    start_marker(p);
    gc_drain(p, jni, final);
    jit_drain(jni, p);
    user_drain(p);
}

/* Nothing queued for drain_all to write, no GC pair pending, the start marker written. */
static bool nothing_queued(const struct fx_profile *p)
{
    uint32_t len;
    return cs.p == p && cs.started_marker && cs.n_gc_pending == 0 &&
           fx_evq_peek(&fx_mq.gc, &len) == NULL && fx_evq_peek(&fx_mq.jit, &len) == NULL &&
           fx_evq_peek(&fx_mq.user, &len) == NULL;
}

/* drain_all runs at every pass, queued or not (when a GC's events reach the model stays as it
 * was); only its timing is left out of a pass with nothing to write and no counter due: two
 * CPU-clock system calls to time nothing, in ~40 % of javac's passes (issue 31). */
static void markers_drain(JNIEnv *jni, struct fx_profile *p)
{
    if (!fx_markers_on() || p == NULL || over_memory(p))
        return;
    if (nothing_queued(p)) {
        int64_t now = fx_now_ns(); /* one reading: a round due now is timed, none is missed */
        if (!fx_counters_due(p, now)) {
            drain_all(jni, p, false);
            fx_counters_sample(jni, p, now, false); /* not due: reads nothing */
            return;
        }
    }
    int64_t cpu0 = thread_cpu_ns();
    drain_all(jni, p, false);
    fx_counters_sample(jni, p, fx_now_ns(), false);
    cs.cpu_ns += (uint64_t)(thread_cpu_ns() - cpu0);
}

static void report(struct fx_profile *p)
{
    const char *g = "Markers and counters";
    fx_profile_extra_int(p, g, "GC pauses", (int64_t)cs.gc_pauses);
    fx_profile_extra_int(p, g, "GC pauses matched to a collector", (int64_t)cs.gc_attributed);
    fx_profile_extra_detail(p, g, "GC events without their pair", (int64_t)cs.gc_unmatched);
    fx_profile_extra_int(p, g, "JIT markers", (int64_t)cs.jit_markers);
    fx_profile_extra_int(p, g, "user markers", (int64_t)cs.user_markers);
    fx_profile_extra_detail(p, g, "user intervals still open", (int64_t)cs.n_open);
    fx_profile_extra_detail(p, g, "user ends without a begin", (int64_t)cs.user_unmatched);
    fx_profile_extra_loss(p, g, "dropped: GC queue full",
                          (int64_t)(fx_evq_drops(&fx_mq.gc) - cs.mq_base[0]));
    fx_profile_extra_loss(p, g, "dropped: JIT queue full",
                          (int64_t)(fx_evq_drops(&fx_mq.jit) - cs.mq_base[1]));
    fx_profile_extra_loss(p, g, "dropped: user queue full",
                          (int64_t)(fx_evq_drops(&fx_mq.user) - cs.mq_base[2]));
    fx_profile_extra_loss(p, g, "dropped: too many open user intervals", (int64_t)cs.open_dropped);
    fx_profile_extra_loss(p, g, "drain cycles skipped: model at twice its memory bound",
                          (int64_t)cs.over_memory);
    fx_profile_extra_loss(p, g, "model errors", (int64_t)cs.model_errors);
    fx_profile_extra_detail(p, g, "profiles written before this one", (int64_t)cs.dumps);
    char buf[64];
    snprintf(buf, sizeof(buf), "%.3f ms", (double)cs.cpu_ns / 1e6);
    fx_profile_extra_str(p, g, "drain CPU time for markers and counters", buf);
    fx_gcinfo_report(p, g);
    fx_counters_report(p, g);
}

/* Live threads may have been renamed (thread pools do) since they registered. */
static void refresh_live_names(JNIEnv *jni, struct fx_profile *p)
{
    for (struct fx_thread *t = fx_threads_head(); t != NULL; t = t->next) {
        if (t->in_profile && !t->finished)
            fx_tracks_refresh_name(jni, p, t);
    }
}

static void markers_before_dump(JNIEnv *jni, struct fx_profile *p, const struct fx_span *span)
{
    (void)span;
    refresh_live_names(jni, p);
    if (!fx_markers_on())
        return;
    if (!over_memory(p)) {
        int64_t cpu0 = thread_cpu_ns();
        drain_all(jni, p, true);
        user_write_open(p);
        fx_counters_sample(jni, p, fx_now_ns(), true);
        cs.cpu_ns += (uint64_t)(thread_cpu_ns() - cpu0);
    }
    report(p);
    cs.dump_begin_ns = fx_now_ns();
    cs.dump_samples =
            fx_profile_sample_count(p); /* a reset may empty the model before after_dump */
}

static void markers_after_dump(struct fx_profile *p, const char *path, unsigned long long bytes)
{
    fx_thread_id host;
    if (!fx_markers_on() || cs.dump_begin_ns == 0 || host_thread(p, &host) != FX_OK)
        return;
    struct fx_jvm_dump d = {path, (int64_t)cs.dump_samples, (int64_t)bytes};
    if (fx_jvm_markers_dump(p, host, cs.dump_begin_ns, fx_now_ns(), &d) != FX_OK)
        cs.model_errors++;
    cs.dumps++;
}

/* A new recording: its figures from zero, and its own start marker (engine, mode, interval).
 * User intervals still open stay open: their end may come in this recording. */
static void markers_reset(struct fx_profile *p)
{
    (void)p;
    cs.gc_pauses = cs.gc_attributed = cs.gc_unmatched = cs.jit_markers = cs.user_markers = 0;
    cs.user_unmatched = cs.open_dropped = cs.model_errors = cs.over_memory = cs.cpu_ns = 0;
    cs.dumps = 0;
    cs.gc_start_ns = 0; /* a pause open at the stop ended while GC events were off */
    cs.started_marker = false;
    cs.mq_base[0] = fx_evq_drops(&fx_mq.gc);
    cs.mq_base[1] = fx_evq_drops(&fx_mq.jit);
    cs.mq_base[2] = fx_evq_drops(&fx_mq.user);
    fx_counters_reset();
}

static int markers_start(JNIEnv *jni)
{
    int rc = fx_markers_setup(); /* no markers is no reason to refuse the start */
    if (rc == FX_OK && fx_markers_on())
        fx_gcinfo_resync(jni);
    return rc;
}

/* A stopped agent: its marker queues given back and no file held open (counters.c). */
static void markers_idle(void)
{
    fx_markers_free_queues();
    fx_counters_idle();
}

const struct fx_source fx_markers_source = {
        .name = "markers",
        .start = markers_start,
        .stop = fx_markers_stop_events,
        .drain = markers_drain,
        .before_dump = markers_before_dump,
        .after_dump = markers_after_dump,
        .reset = markers_reset,
        .idle = markers_idle,
};
