/* SPDX-License-Identifier: Apache-2.0 */
/* JVM events and fxagent.Markers calls become markers in two steps. Producers record: the GC
 * callbacks (where JVMTI allows almost nothing) a timestamp, compiler threads a jmethodID with
 * its code size and inlining count, application threads (the natives) a name and text. Each
 * appends one record to a bounded queue, a byte ring whose producers share a mutex held only for
 * a memcpy, and whose consumer needs no lock; a full queue drops the record and counts it. The
 * model's owner (the drain thread, then VMDeath) turns records into markers and never holds a
 * queue lock while it calls the JVM, so a producer stopped at a safepoint blocks no one.
 *
 * Where markers go: a thread's own markers (user markers; a JIT marker whose compiler thread is
 * registered) on its track; JVM-wide ones (GC, the profiler's own) on the main thread's track,
 * once: copying a GC pause to every thread that had samples during it would multiply the marker
 * table by the thread count for no new fact, and the timeline overview of the main track shows
 * it. HotSpot hides its compiler threads from JVMTI, so JIT markers land on the main track too. */
#include "fx_agent.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_jvm_markers.h"
#include "fx_profile.h"
#include "fx_ring.h"

#define GC_QUEUE_BYTES   (16u * 1024)
#define JIT_QUEUE_BYTES  (256u * 1024)
#define USER_QUEUE_BYTES (512u * 1024)
#define USER_NAME_MAX    255  /* bytes of a marker name kept; longer ones are cut */
#define USER_TEXT_MAX    1023 /* bytes of a marker text kept */
#define OPEN_MAX         4096 /* user intervals begun and not yet ended */
#define GC_PENDING_MAX   64   /* pauses waiting for the MXBean counts */
#define GC_WAIT_CYCLES   3    /* drain cycles a pause waits for them */

struct evq {
    pthread_mutex_t lock; /* producers only */
    struct fx_ring ring;
    int ready; /* atomic: the ring exists */
};

enum gc_kind {
    GC_START = 1,
    GC_FINISH = 2
};

struct gc_rec {
    int64_t t;
    uint32_t kind;
    uint32_t pad;
};

struct jit_rec {
    int64_t t;
    jmethodID method;
    int32_t code_size;
    int32_t inlined;
    int32_t tid; /* the compiler thread; HotSpot hides those from JVMTI, so usually unknown */
    int32_t pad;
};

enum user_kind {
    USER_MARK = 1,
    USER_BEGIN = 2,
    USER_END = 3
};

struct user_rec {
    int64_t t;
    int64_t handle;
    int32_t tid;
    uint16_t name_len, text_len;
    uint8_t kind;
    uint8_t pad[7];
    char bytes[]; /* name, then text */
};

struct open_interval {
    int64_t handle, start_ns;
    uint32_t thread;
    bool start_written; /* a START marker is in the model: the end becomes an END marker */
    uint16_t name_len, text_len;
    char *bytes; /* name, then text */
};

struct gc_pause {
    int64_t start_ns, end_ns;
};

/* Producer side: shared by every thread, atomics and the queues' locks. */
static struct {
    struct evq gc, jit, user;
    int64_t next_handle; /* atomic */
} ps = {
        .gc = {.lock = PTHREAD_MUTEX_INITIALIZER},
        .jit = {.lock = PTHREAD_MUTEX_INITIALIZER},
        .user = {.lock = PTHREAD_MUTEX_INITIALIZER},
};

/* Consumer side: the model's owner only. Caches are valid for one model (`p`). */
static struct {
    struct fx_profile *p;
    bool have_host, started_marker;
    uint32_t host;
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
} cs;

static bool markers_on(void)
{
    return fx_ag.opt.markers != FX_MARKERS_OFF;
}

/* --- the queues --- */

/* Once per process: producers may be inside a ring, so a second setup (a restart) keeps it. */
static int evq_init(struct evq *e, size_t bytes)
{
    if (__atomic_load_n(&e->ready, __ATOMIC_ACQUIRE))
        return FX_OK;
    int rc = fx_ring_init(&e->ring, bytes);
    if (rc == FX_OK)
        __atomic_store_n(&e->ready, 1, __ATOMIC_RELEASE);
    return rc;
}

/* Appends hdr + a + b as one record; false if the queue is missing or full (the ring counts
 * drops). */
static bool evq_push(struct evq *e, const void *hdr, uint32_t hdr_len, const void *a,
                     uint32_t a_len, const void *b, uint32_t b_len)
{
    if (!__atomic_load_n(&e->ready, __ATOMIC_ACQUIRE))
        return false;
    pthread_mutex_lock(&e->lock);
    uint8_t *dst = fx_ring_reserve_sigsafe(&e->ring, hdr_len + a_len + b_len);
    if (dst != NULL) {
        memcpy(dst, hdr, hdr_len);
        if (a_len)
            memcpy(dst + hdr_len, a, a_len);
        if (b_len)
            memcpy(dst + hdr_len + a_len, b, b_len);
        fx_ring_commit_sigsafe(&e->ring);
    }
    pthread_mutex_unlock(&e->lock);
    return dst != NULL;
}

static uint64_t evq_drops(struct evq *e)
{
    return __atomic_load_n(&e->ready, __ATOMIC_ACQUIRE) ? fx_ring_drops(&e->ring) : 0;
}

/* --- producers: JVMTI callbacks --- */

/* GarbageCollectionStart/Finish: JVMTI allows no JNI and almost no JVMTI here; a clock read
 * and a memcpy into preallocated memory are all this does. */
static void gc_event(uint32_t kind)
{
    struct gc_rec r = {.t = fx_agent_now_ns(), .kind = kind};
    evq_push(&ps.gc, &r, sizeof(r), NULL, 0, NULL, 0);
}

static void JNICALL on_gc_start(jvmtiEnv *jvmti)
{
    (void)jvmti;
    gc_event(GC_START);
}

static void JNICALL on_gc_finish(jvmtiEnv *jvmti)
{
    (void)jvmti;
    gc_event(GC_FINISH);
}

void fx_markers_fill_callbacks(jvmtiEventCallbacks *cb)
{
    cb->GarbageCollectionStart = on_gc_start;
    cb->GarbageCollectionFinish = on_gc_finish;
}

static void enable_gc_events(jvmtiEnv *jvmti)
{
    jvmtiCapabilities have;
    memset(&have, 0, sizeof(have));
    if ((*jvmti)->GetCapabilities(jvmti, &have) != JVMTI_ERROR_NONE ||
        !have.can_generate_garbage_collection_events) {
        fx_agent_log("this JVM gives no garbage collection events: no GC markers");
        return;
    }
    static const jvmtiEvent gc[] = {JVMTI_EVENT_GARBAGE_COLLECTION_START,
                                    JVMTI_EVENT_GARBAGE_COLLECTION_FINISH};
    for (size_t i = 0; i < 2; i++)
        fx_agent_jvmti_failed((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, gc[i], NULL),
                              "SetEventNotificationMode(GC)");
}

int fx_markers_setup(jvmtiEnv *jvmti)
{
    if (!markers_on())
        return FX_OK;
    int rc = evq_init(&ps.gc, GC_QUEUE_BYTES);
    if (rc == FX_OK)
        rc = evq_init(&ps.jit, JIT_QUEUE_BYTES);
    if (rc == FX_OK)
        rc = evq_init(&ps.user, USER_QUEUE_BYTES);
    if (rc != FX_OK) {
        fx_agent_log("out of memory for the marker queues: no markers");
        return rc;
    }
    enable_gc_events(jvmti);
    return FX_OK;
}

void fx_markers_compiled_method_load(jmethodID method, jint code_size, const void *compile_info)
{
    if (!__atomic_load_n(&ps.jit.ready, __ATOMIC_ACQUIRE))
        return;
    struct jit_rec r = {.t = fx_agent_now_ns(),
                        .method = method,
                        .code_size = code_size,
                        .inlined = fx_jit_info_inlined(method, compile_info),
                        .tid = (int32_t)syscall(SYS_gettid)};
    evq_push(&ps.jit, &r, sizeof(r), NULL, 0, NULL, 0);
}

/* --- producers: fxagent.Markers natives (application threads; not signal context) --- */

JNIEXPORT jboolean JNICALL Java_fxagent_Markers_enabled0(JNIEnv *env, jclass cls);
JNIEXPORT void JNICALL Java_fxagent_Markers_mark0(JNIEnv *env, jclass cls, jstring name,
                                                  jstring text);
JNIEXPORT jlong JNICALL Java_fxagent_Markers_begin0(JNIEnv *env, jclass cls, jstring name,
                                                    jstring text);
JNIEXPORT void JNICALL Java_fxagent_Markers_end0(JNIEnv *env, jclass cls, jlong handle);

/* Copies s as modified UTF-8 into buf (cap bytes), cut to whole characters; returns the length.
 * A character takes at most 3 bytes, so cap / 3 characters always fit. */
static uint16_t copy_string(JNIEnv *env, jstring s, char *buf, jsize cap)
{
    if (s == NULL)
        return 0;
    jsize chars = (*env)->GetStringLength(env, s);
    jsize bytes = (*env)->GetStringUTFLength(env, s);
    if (bytes > cap) {
        chars = cap / 3;
        bytes = -1;
        memset(buf, 0, (size_t)cap + 1); /* JNI does not promise a terminating NUL */
    }
    (*env)->GetStringUTFRegion(env, s, 0, chars, buf);
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        return 0;
    }
    return (uint16_t)(bytes >= 0 ? bytes : (jsize)strnlen(buf, (size_t)cap));
}

static void user_push(JNIEnv *env, uint8_t kind, int64_t handle, jstring name, jstring text)
{
    char nb[USER_NAME_MAX + 1], tb[USER_TEXT_MAX + 1];
    struct user_rec r = {.t = fx_agent_now_ns(),
                         .handle = handle,
                         .tid = (int32_t)syscall(SYS_gettid),
                         .kind = kind};
    r.name_len = copy_string(env, name, nb, USER_NAME_MAX);
    r.text_len = copy_string(env, text, tb, USER_TEXT_MAX);
    evq_push(&ps.user, &r, sizeof(r), nb, r.name_len, tb, r.text_len);
}

static bool user_live(void)
{
    return __atomic_load_n(&ps.user.ready, __ATOMIC_ACQUIRE) &&
           __atomic_load_n(&fx_ag.live, __ATOMIC_ACQUIRE) &&
           !__atomic_load_n(&fx_ag.dead, __ATOMIC_ACQUIRE);
}

JNIEXPORT jboolean JNICALL Java_fxagent_Markers_enabled0(JNIEnv *env, jclass cls)
{
    (void)env, (void)cls;
    return user_live() ? JNI_TRUE : JNI_FALSE;
}

JNIEXPORT void JNICALL Java_fxagent_Markers_mark0(JNIEnv *env, jclass cls, jstring name,
                                                  jstring text)
{
    (void)cls;
    if (user_live())
        user_push(env, USER_MARK, 0, name, text);
}

JNIEXPORT jlong JNICALL Java_fxagent_Markers_begin0(JNIEnv *env, jclass cls, jstring name,
                                                    jstring text)
{
    (void)cls;
    if (!user_live())
        return 0;
    int64_t h = __atomic_add_fetch(&ps.next_handle, 1, __ATOMIC_RELAXED);
    user_push(env, USER_BEGIN, h, name, text);
    return h;
}

JNIEXPORT void JNICALL Java_fxagent_Markers_end0(JNIEnv *env, jclass cls, jlong handle)
{
    (void)cls;
    if (user_live() && handle > 0)
        user_push(env, USER_END, handle, NULL, NULL);
}

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
static int host_thread(struct fx_profile *p, uint32_t *out)
{
    if (cs.have_host) {
        *out = cs.host;
        return FX_OK;
    }
    int rc = FX_ENOTFOUND;
    for (struct fx_thread *t = fx_threads_head(); t != NULL && rc != FX_OK; t = t->next) {
        if (!__atomic_load_n(&t->ended, __ATOMIC_ACQUIRE) && strcmp(t->name, "main") == 0)
            rc = fx_drain_thread_index(p, t, &cs.host);
    }
    if (rc != FX_OK)
        rc = fx_profile_thread_add(p, "[JVM]", getpid(), fx_ag.sampling_begin_ns, &cs.host);
    cs.have_host = rc == FX_OK;
    *out = cs.host;
    return rc;
}

/* The track of the thread with OS id `tid`, else the host track. */
static int thread_of(struct fx_profile *p, int32_t tid, uint32_t *out)
{
    for (struct fx_thread *t = fx_threads_head(); t != NULL; t = t->next) {
        if (t->tid == tid && !t->finished)
            return fx_drain_thread_index(p, t, out);
    }
    return host_thread(p, out);
}

/* Copies the Java thread's current name into the model, if it changed since registration. */
static void refresh_name(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p, struct fx_thread *t)
{
    jvmtiThreadInfo info;
    memset(&info, 0, sizeof(info));
    if (t->ref == NULL || (*jvmti)->GetThreadInfo(jvmti, t->ref, &info) != JVMTI_ERROR_NONE)
        return;
    if (info.name != NULL && strcmp(info.name, t->name) != 0)
        fx_profile_thread_set_name(p, t->profile_index, info.name);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
    if (info.thread_group != NULL)
        (*jni)->DeleteLocalRef(jni, info.thread_group);
    if (info.context_class_loader != NULL)
        (*jni)->DeleteLocalRef(jni, info.context_class_loader);
}

void fx_markers_thread_finished(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p,
                                struct fx_thread *t)
{
    if (t->in_profile)
        refresh_name(jvmti, jni, p, t);
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
    uint32_t host;
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
    while ((rec = fx_ring_peek(&ps.gc.ring, &len)) != NULL) {
        if (len >= sizeof(struct gc_rec))
            gc_record(p, jni, rec);
        fx_ring_release(&ps.gc.ring);
    }
    if (cs.n_gc_pending > 0)
        gc_emit(p, jni, final);
}

/* --- consumer: JIT --- */

static int jit_record(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p, const struct jit_rec *r)
{
    fx_str_id name;
    uint32_t thread;
    int rc = fx_jit_info_name(jvmti, jni, p, r->method, &name);
    if (rc == FX_OK)
        rc = thread_of(p, r->tid, &thread);
    if (rc != FX_OK)
        return rc;
    size_t len;
    const char *text = fx_profile_string_at(p, name, &len);
    struct fx_jvm_jit j = {text, len, r->code_size, r->inlined};
    return fx_jvm_markers_jit(p, thread, r->t, &j);
}

static void jit_drain(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p)
{
    const void *rec;
    uint32_t len;
    while ((rec = fx_ring_peek(&ps.jit.ring, &len)) != NULL) {
        if (len >= sizeof(struct jit_rec)) {
            if (jit_record(jvmti, jni, p, rec) == FX_OK)
                cs.jit_markers++;
            else
                cs.model_errors++;
        }
        fx_ring_release(&ps.jit.ring);
    }
}

/* --- consumer: user markers --- */

static int open_add(const struct user_rec *r, uint32_t thread)
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
    uint32_t thread;
    int rc = thread_of(p, r->tid, &thread);
    if (rc != FX_OK)
        return rc;
    if (r->kind == USER_BEGIN) {
        rc = open_add(r, thread);
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
    while ((rec = fx_ring_peek(&ps.user.ring, &len)) != NULL) {
        if (len >= sizeof(struct user_rec)) {
            const struct user_rec *r = rec;
            if (user_record(p, r, len) != FX_OK)
                cs.model_errors++;
        }
        fx_ring_release(&ps.user.ring);
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
    uint32_t host;
    if (cs.started_marker || host_thread(p, &host) != FX_OK)
        return;
    static const char *const modes[] = {"cpu", "itimer", "wall"};
    struct fx_jvm_start s = {fx_timer_engine_name(),
                             (unsigned)fx_ag.opt.mode < 3 ? modes[fx_ag.opt.mode] : "?",
                             (double)fx_ag.opt.interval_ns / 1e6};
    cs.started_marker = fx_jvm_markers_start(p, host, fx_ag.sampling_begin_ns, &s) == FX_OK;
}

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The window (window.c) keeps the model near `memory`, dropping old samples and markers alike;
 * twice the bound means it cannot, and then markers stop too. */
static bool over_memory(struct fx_profile *p)
{
    if (fx_profile_memory(p) <= 2 * fx_ag.opt.memory_bytes)
        return false;
    cs.over_memory++;
    return true;
}

static void drain_all(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p, bool final)
{
    reset_for(p);
    start_marker(p);
    gc_drain(p, jni, final);
    jit_drain(jvmti, jni, p);
    user_drain(p);
}

void fx_markers_drain(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p)
{
    if (!markers_on() || p == NULL || over_memory(p))
        return;
    int64_t cpu0 = thread_cpu_ns();
    drain_all(jvmti, jni, p, false);
    fx_counters_sample(jni, p, fx_agent_now_ns(), false);
    cs.cpu_ns += (uint64_t)(thread_cpu_ns() - cpu0);
}

static void report(struct fx_profile *p)
{
    const char *g = "Markers and counters";
    fx_profile_extra_int(p, g, "GC pauses", (int64_t)cs.gc_pauses);
    fx_profile_extra_int(p, g, "GC pauses matched to a collector", (int64_t)cs.gc_attributed);
    fx_profile_extra_int(p, g, "GC events without their pair", (int64_t)cs.gc_unmatched);
    fx_profile_extra_int(p, g, "JIT markers", (int64_t)cs.jit_markers);
    fx_profile_extra_int(p, g, "user markers", (int64_t)cs.user_markers);
    fx_profile_extra_int(p, g, "user intervals still open", (int64_t)cs.n_open);
    fx_profile_extra_int(p, g, "user ends without a begin", (int64_t)cs.user_unmatched);
    fx_profile_extra_int(p, g, "dropped: GC queue full", (int64_t)evq_drops(&ps.gc));
    fx_profile_extra_int(p, g, "dropped: JIT queue full", (int64_t)evq_drops(&ps.jit));
    fx_profile_extra_int(p, g, "dropped: user queue full", (int64_t)evq_drops(&ps.user));
    fx_profile_extra_int(p, g, "dropped: too many open user intervals", (int64_t)cs.open_dropped);
    fx_profile_extra_int(p, g, "drain cycles skipped: model at twice its memory bound",
                         (int64_t)cs.over_memory);
    fx_profile_extra_int(p, g, "model errors", (int64_t)cs.model_errors);
    fx_profile_extra_int(p, g, "profiles written before this one", (int64_t)cs.dumps);
    char buf[64];
    snprintf(buf, sizeof(buf), "%.3f ms", (double)cs.cpu_ns / 1e6);
    fx_profile_extra_str(p, g, "drain CPU time for markers and counters", buf);
    fx_counters_report(p, g);
}

/* Live threads may have been renamed (thread pools do) since they registered. */
static void refresh_live_names(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p)
{
    for (struct fx_thread *t = fx_threads_head(); t != NULL; t = t->next) {
        if (t->in_profile && !t->finished)
            refresh_name(jvmti, jni, p, t);
    }
}

void fx_markers_before_dump(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p)
{
    refresh_live_names(jvmti, jni, p);
    if (!markers_on())
        return;
    if (!over_memory(p)) {
        int64_t cpu0 = thread_cpu_ns();
        drain_all(jvmti, jni, p, true);
        user_write_open(p);
        fx_counters_sample(jni, p, fx_agent_now_ns(), true);
        cs.cpu_ns += (uint64_t)(thread_cpu_ns() - cpu0);
    }
    report(p);
    cs.dump_begin_ns = fx_agent_now_ns();
    cs.dump_samples =
            fx_profile_sample_count(p); /* a reset may empty the model before after_dump */
}

void fx_markers_after_dump(struct fx_profile *p, const char *path, unsigned long long bytes)
{
    uint32_t host;
    if (!markers_on() || cs.dump_begin_ns == 0 || host_thread(p, &host) != FX_OK)
        return;
    struct fx_jvm_dump d = {path, (int64_t)cs.dump_samples, (int64_t)bytes};
    if (fx_jvm_markers_dump(p, host, cs.dump_begin_ns, fx_agent_now_ns(), &d) != FX_OK)
        cs.model_errors++;
    cs.dumps++;
}
