/* SPDX-License-Identifier: Apache-2.0 */
/* Allocation samples and the live heap (issue 17, alloc=SIZE), an event source. Producers are
 * two JVMTI callbacks: SampledObjectAlloc (the allocating thread, after HotSpot's heap sampler
 * picked the object) takes the thread's stack with GetStackTrace, the class's signature, tags
 * the object with a new number and queues one record; ObjectFree (a tagged object died) queues
 * the tag. One queue keeps them in order, so a free never comes before its allocation. The
 * consumer, the model's owner, turns records into nativeAllocations rows: the allocated class
 * as the leaf frame (category Allocation), the weight an unbiased estimate of the bytes the
 * sample stands for (docs/DESIGN-NOTES.md "Issue 17": size / P(sampled), with P = 1 -
 * exp(-size / interval) for HotSpot's exponential sampler), the tag as the memory address. A
 * free is the model's to pair (fx_profile_alloc_free); one whose allocation the model no longer
 * holds is counted, never written. HotSpot posts ObjectFree late (collect_frees says why and
 * how a dump asks for them). Owns: the queue, the tag counter, the consumer's counts, whether
 * the events are on. */
#include "internal.h"
#include "markers_queue.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "alloc_walk.h"
#include "fx_clock.h"
#include "fx_jtype.h"
#include "fx_ring.h"

#define QUEUE_BYTES  (1u << 20)          /* ~700 samples of 64 frames between two 10 ms passes */
#define ALLOC_FRAMES FX_ALLOC_FRAMES_MAX /* frames kept per sample (depth= if smaller) */
#define NAME_MAX_SIG 255                 /* bytes of a class signature kept */
#define TIMED_ONE_IN 64                  /* callbacks whose CPU time is read (a system call each) */

enum rec_kind {
    REC_ALLOC = 1,
    REC_FREE = 2
};

struct rec {
    int64_t t, size, interval;
    uint64_t tag;
    int32_t tid;
    uint16_t nframes, sig_len;
    uint8_t kind, truncated;
    uint16_t native_words; /* issue 32 item 6: the callback's native walk (alloc_native.c) */
    uint8_t pad[4];
    /* REC_ALLOC: nframes jvmtiFrameInfo (leaf first), native_words words, sig_len bytes of
     * the class's signature */
};

/* Producer side: any thread. */
static struct {
    struct fx_evq e;          /* made at a start with alloc=, freed stopped and idle (fx_evq.h) */
    uint64_t next_tag;        /* atomic; per JVM: a tag names one object while it lives */
    uint64_t stack_errors;    /* atomic */
    uint64_t frees;           /* atomic: ObjectFree events queued, for collect_frees' count */
    uint64_t collected;       /* atomic: of these, posted while a dump or stop asked for them */
    uint64_t calls;           /* atomic: SampledObjectAlloc callbacks, for the 1 in TIMED_ONE_IN */
    uint64_t timed, timed_ns; /* atomic: callbacks timed, their CPU ns (the callback's price) */
} q = {.e = FX_EVQ_INITIALIZER, .next_tag = 1};

/* Whether the events are on: a dump asks for late frees only then (collect_frees), and never
 * turns back on what a stop turned off. The lock orders the two; no application thread takes
 * it. */
static struct {
    pthread_mutex_t lock;
    bool on;
} ev = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Consumer side: the model's owner only. */
static struct {
    struct fx_profile *p;
    struct fx_methods *methods;
    uint32_t methods_gen;
    bool have_counter;
    fx_counter_id counter;
    int64_t interval;
    uint64_t samples, frees, frees_unheld, late, no_thread, lost, full, truncated, bad_class;
    int64_t est_bytes, size_bytes, counted_bytes;
    uint64_t drops_base; /* the ring's drops (per JVM) when this recording began */
} cs;

static bool push_rec(const struct rec *r, const jvmtiFrameInfo *frames, const char *sig)
{
    return fx_evq_push(&q.e, r, (uint32_t)sizeof(*r), frames,
                       r->nframes * (uint32_t)sizeof(*frames) + r->native_words * 8u, sig,
                       r->sig_len);
}

/* --- producers: JVMTI callbacks --- */

/* The kernel tid, cached: gettid is a system call, ~1-2 us per sample on a loaded VM (a sixth
 * of the callback, docs/BENCHMARKS.md "The allocation view's price"). Never read in signal
 * context. */
static __thread int32_t self_tid;

/* The allocating thread pays all of it, per sample: GetStackTrace (most of it: HotSpot builds
 * a vframe per frame; JDK 21+ through a handshake with itself), the class's signature, the tag
 * and the queue. 1 callback in TIMED_ONE_IN is timed in thread CPU time, so meta.extra prices
 * the view whatever the machine's load. */
static void JNICALL on_sampled_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
                                     jclass klass, jlong size)
{
    (void)jni;
    /* Not the first: a JVM's first callback pays one-time costs (~1 ms: this module's TLS,
     * the first method ids), which would be most of a short run's mean. */
    bool timed =
            __atomic_fetch_add(&q.calls, 1, __ATOMIC_RELAXED) % TIMED_ONE_IN == TIMED_ONE_IN - 1;
    int64_t c0 = timed ? fx_clock_ns(CLOCK_THREAD_CPUTIME_ID) : 0;
    if (self_tid == 0)
        self_tid = (int32_t)syscall(SYS_gettid);
    jvmtiFrameInfo frames[ALLOC_FRAMES + FX_ALLOC_WALK_WORDS / 2 + 1]; /* then the walk's */
    jint depth = fx_opt()->depth < ALLOC_FRAMES ? (jint)fx_opt()->depth : ALLOC_FRAMES, n = 0;
    struct rec r = {.t = fx_now_ns(),
                    .size = size,
                    .interval = (int64_t)fx_opt()->alloc_bytes,
                    .tid = self_tid,
                    .kind = REC_ALLOC};
    if ((*jvmti)->GetStackTrace(jvmti, thread, 0, depth, frames, &n) != JVMTI_ERROR_NONE) {
        __atomic_fetch_add(&q.stack_errors, 1, __ATOMIC_RELAXED);
        n = 0;
    }
    r.nframes = (uint16_t)n;
    r.truncated = n == depth;
    r.native_words = (uint16_t)fx_alloc_native_walk(self_tid, n > 0 && !r.truncated,
                                                    (uint64_t *)(frames + n), FX_ALLOC_WALK_WORDS);
    char *sig = NULL;
    if ((*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL) == JVMTI_ERROR_NONE && sig) {
        size_t len = strlen(sig);
        r.sig_len = (uint16_t)(len > NAME_MAX_SIG ? NAME_MAX_SIG : len);
    }
    /* The tag is the allocation's address in the profile: unique, and an object's real address
     * moves with every GC. Set before the record is queued, so its free can only follow. */
    r.tag = __atomic_fetch_add(&q.next_tag, 1, __ATOMIC_RELAXED);
    if ((*jvmti)->SetTag(jvmti, object, (jlong)r.tag) != JVMTI_ERROR_NONE)
        r.tag = 0; /* counted as an allocation without a free to follow */
    push_rec(&r, frames, sig);
    if (sig)
        (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
    if (timed) {
        int64_t spent = fx_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
        __atomic_fetch_add(&q.timed_ns, (uint64_t)(spent > 0 ? spent : 0), __ATOMIC_RELAXED);
        __atomic_fetch_add(&q.timed, 1, __ATOMIC_RELAXED);
    }
}

/* JVMTI allows no JNI and almost no JVMTI here: a clock read and a queued record. */
static void JNICALL on_object_free(jvmtiEnv *jvmti, jlong tag)
{
    (void)jvmti;
    struct rec r = {.t = fx_now_ns(), .tag = (uint64_t)tag, .kind = REC_FREE};
    if (push_rec(&r, NULL, NULL))
        __atomic_fetch_add(&q.frees, 1, __ATOMIC_RELAXED);
}

void fx_allocs_fill_callbacks(jvmtiEventCallbacks *cb)
{
    cb->SampledObjectAlloc = on_sampled_alloc;
    cb->ObjectFree = on_object_free;
}

/* --- consumer --- */

/* The unbiased weight (Horvitz-Thompson): HotSpot's sampler (ThreadHeapSampler) draws the bytes
 * to the next sample from an exponential distribution of mean `interval`, per thread, afresh
 * after each sampled object; so an object of `size` bytes is sampled with probability
 * 1 - exp(-size / interval) whatever came before it, and size over that probability is its
 * expected contribution. Weighting by size alone undercounts small objects ~interval/size
 * times; weighting every sample by the interval overcounts objects larger than it. */
static int64_t weight_of(int64_t size, int64_t interval)
{
    if (size <= 0)
        return 0;
    if (interval <= 0)
        return size; /* every allocation sampled */
    double p = -expm1(-(double)size / (double)interval);
    return p > 0 ? (int64_t)llround((double)size / p) : size;
}

static int class_frame(struct fx_profile *p, const char *sig, uint16_t len, fx_frame_id *out)
{
    char name[NAME_MAX_SIG + 8];
    if (fx_jtype_name(sig, len, name, sizeof(name)) < 0) {
        cs.bad_class++;
        snprintf(name, sizeof(name), "[unknown class]");
    }
    fx_str_id s;
    fx_func_id f;
    int rc = fx_profile_cstring(p, name, &s);
    struct fx_func_key k = {.name = s, .resource = FX_STR_NONE, .source = FX_STR_NONE, .line = -1};
    if (rc == FX_OK)
        rc = fx_profile_func(p, &k, &f);
    struct fx_frame_key fk = {.func = f, .line = -1, .category = FX_CAT_ALLOC};
    return rc == FX_OK ? fx_profile_frame(p, &fk, out) : rc;
}

/* Root (the last frame) first, "[truncated]" below a cut stack, the class on top. */
static int stack_of(JNIEnv *jni, struct fx_profile *p, const struct rec *r,
                    const jvmtiFrameInfo *frames, fx_stack_id *out)
{
    fx_stack_id s = FX_STACK_NONE;
    int rc = FX_OK;
    if (r->truncated) {
        cs.truncated++;
        rc = fx_profile_label_stack(p, "[truncated]", FX_CAT_OTHER, &s);
    }
    if (r->native_words > 0 && rc == FX_OK) /* issue 32 item 6: with its native frames */
        rc = fx_alloc_native_stack(cs.methods, jni, p, frames, r->nframes,
                                   (const uint64_t *)(frames + r->nframes), r->native_words, &s);
    for (int i = r->native_words > 0 ? -1 : (int)r->nframes - 1; i >= 0 && rc == FX_OK; i--) {
        fx_frame_id f;
        rc = fx_methods_frame(cs.methods, jni, p, frames[i].method, (jint)frames[i].location, &f);
        if (rc == FX_OK)
            rc = fx_profile_stack(p, s, f, &s);
    }
    fx_frame_id cf;
    if (rc == FX_OK)
        rc = class_frame(p, (const char *)(frames + r->nframes) + r->native_words * 8u, r->sig_len,
                         &cf);
    if (rc == FX_OK)
        rc = fx_profile_stack(p, s, cf, &s);
    *out = s;
    return rc;
}

/* A new counter starts with the level before this drain at its first record's time: the
 * front-end leaves a counter's first sample out of "range in graph", so without it the first
 * drain's bytes were missing there (505 MB where the call tree said 521 MB). */
static void count_bytes(struct fx_profile *p, int64_t first, int64_t before, int64_t t)
{
    static const struct fx_counter_desc desc = {
            .name = "Allocated (sampled)",
            .category = "Memory",
            .description = "Java heap bytes allocated, estimated from alloc= samples",
            .unit = "bytes",
            .color = "magenta"};
    if (!cs.have_counter) {
        cs.have_counter = fx_profile_counter(p, &desc, &cs.counter) == FX_OK;
        if (cs.have_counter && fx_profile_counter_sample(p, cs.counter, first, before) == FX_OK)
            cs.counted_bytes = before;
    }
    if (cs.have_counter && cs.counted_bytes != cs.est_bytes &&
        fx_profile_counter_sample(p, cs.counter, t, cs.est_bytes) == FX_OK)
        cs.counted_bytes = cs.est_bytes;
}

static void one_alloc(JNIEnv *jni, struct fx_profile *p, const struct rec *r)
{
    cs.samples++;
    cs.interval = r->interval;
    fx_thread_id thread;
    if (!fx_window_admit(r->t)) {
        cs.late++;
        return;
    }
    if (fx_tracks_of_tid(p, r->tid, &thread) != FX_OK) {
        cs.no_thread++;
        return;
    }
    fx_stack_id s;
    int rc = stack_of(jni, p, r, (const jvmtiFrameInfo *)(r + 1), &s);
    if (rc == FX_OK) /* depth= counts the class and "[truncated]" frames too (issue 32) */
        rc = fx_stack_depth_cap(p, FX_STACK_NONE, fx_opt()->depth, fx_opt()->depth_cut, &s);
    if (rc == FX_EFULL && fx_window_full_stack(&s)) {
        cs.full++;
        rc = FX_OK;
    }
    int64_t w = weight_of(r->size, r->interval);
    if (rc == FX_OK && r->tag != 0)
        rc = fx_profile_alloc(p, thread, r->t, s, w, r->tag);
    if (rc != FX_OK || r->tag == 0) {
        cs.lost++;
        return;
    }
    cs.est_bytes += w;
    cs.size_bytes += r->size;
}

static void one_free(struct fx_profile *p, const struct rec *r)
{
    if (fx_profile_alloc_free(p, r->t, r->tag) == FX_OK)
        cs.frees++;
    else
        cs.frees_unheld++; /* dropped, an earlier period's, or never added */
}

static void reset_for(struct fx_profile *p)
{
    if (cs.methods != NULL && (cs.p != p || cs.methods_gen != fx_profile_generation(p))) {
        fx_methods_free(cs.methods); /* the ids it cached were renumbered */
        cs.methods = NULL;
    }
    if (cs.p != p)
        cs.have_counter = false;
    cs.p = p;
    if (cs.methods == NULL)
        cs.methods = fx_methods_new();
    cs.methods_gen = fx_profile_generation(p);
}

static void allocs_drain(JNIEnv *jni, struct fx_profile *p)
{
    if (!fx_evq_ready(&q.e))
        return;
    reset_for(p);
    if (cs.methods == NULL)
        return; /* out of memory: the queue waits, then drops and counts */
    const struct rec *r;
    uint32_t len;
    int64_t first = 0, last = 0, before = cs.est_bytes;
    while ((r = fx_evq_peek(&q.e, &len)) != NULL) {
        if (first == 0 || r->t < first)
            first = r->t; /* the earliest, so that the counter's times never go back */
        if (r->kind == REC_ALLOC)
            one_alloc(jni, p, r);
        else
            one_free(p, r);
        last = r->t;
        fx_evq_release(&q.e);
    }
    if (last != 0)
        count_bytes(p, first, before, last);
}

/* --- the source --- */

/* ObjectFree comes late, and a dump must not be written before it. HotSpot (JDK 16 and later,
 * jvmtiTagMap.cpp) does not post it during the GC that frees the object: the GC pause only
 * marks the tag map as needing cleaning (set_needs_cleaning), and gc_notification then wakes
 * the ServiceThread, which removes the dead entries and posts their ObjectFree events when it
 * gets to run (flush_all_object_free_events). On a loaded machine that is milliseconds to
 * seconds after System.gc() returned: a dump in between showed the freed objects as retained
 * (issue 30: 16 % and 32 % for a method that held all the live bytes). HotSpot posts them at
 * once, on the calling thread or the VM thread and before the call returns, when ObjectFree is
 * enabled or disabled (JvmtiEventControllerPrivate::set_user_enabled calls
 * flush_object_free_events, which also waits for a ServiceThread already posting). So a dump
 * enables the enabled event again: the pending frees are queued when it returns, and the drain
 * that follows pairs them. A stop's disable flushes the same way. The model's owner (a dump) or
 * the lifecycle (a stop) only: never an application thread. */
static void collect_frees(jvmtiEnv *jvmti)
{
    pthread_mutex_lock(&ev.lock);
    if (ev.on) {
        uint64_t before = __atomic_load_n(&q.frees, __ATOMIC_RELAXED);
        (void)(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_OBJECT_FREE,
                                                 NULL); /* an error: the frees come later */
        __atomic_fetch_add(&q.collected, __atomic_load_n(&q.frees, __ATOMIC_RELAXED) - before,
                           __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&ev.lock);
}

static int enable(jvmtiEnv *jvmti, jvmtiEventMode mode)
{
    jvmtiError e1 =
            (*jvmti)->SetEventNotificationMode(jvmti, mode, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
    jvmtiError e2 = (*jvmti)->SetEventNotificationMode(jvmti, mode, JVMTI_EVENT_OBJECT_FREE, NULL);
    return e1 == JVMTI_ERROR_NONE && e2 == JVMTI_ERROR_NONE ? FX_OK : FX_EUNSUPPORTED;
}

static bool capable(jvmtiEnv *jvmti)
{
    jvmtiCapabilities c;
    memset(&c, 0, sizeof(c));
    c.can_generate_sampled_object_alloc_events = 1;
    c.can_tag_objects = 1;
    c.can_generate_object_free_events = 1;
    return (*jvmti)->AddCapabilities(jvmti, &c) == JVMTI_ERROR_NONE;
}

static int allocs_start(JNIEnv *jni)
{
    (void)jni;
    jvmtiEnv *jvmti = fx_jvmti();
    uint64_t interval = fx_opt()->alloc_bytes;
    if (interval == 0)
        return FX_OK;
    if (fx_evq_init(&q.e, QUEUE_BYTES) != FX_OK) { /* freed at the last stop */
        fx_log("alloc=: out of memory for the allocation queue: allocations not sampled");
        return FX_ENOMEM;
    }
    if (!capable(jvmti)) {
        fx_log("alloc=: this JVM cannot sample allocations (JVMTI SampledObjectAlloc, tags)");
        return FX_EUNSUPPORTED;
    }
    if (fx_jvmti_failed((*jvmti)->SetHeapSamplingInterval(jvmti, (jint)interval),
                        "SetHeapSamplingInterval") ||
        enable(jvmti, JVMTI_ENABLE) != FX_OK) {
        fx_log("alloc=: the allocation events could not be enabled: allocations not sampled");
        enable(jvmti, JVMTI_DISABLE);
        return FX_EUNSUPPORTED;
    }
    pthread_mutex_lock(&ev.lock);
    ev.on = true;
    pthread_mutex_unlock(&ev.lock);
    return FX_OK;
}

/* At Agent_OnLoad with alloc=: the interval set now, and again at VMInit (allocs_start). HotSpot's
 * heap sampler draws each thread's bytes to its next sample when the thread is made and after
 * each sample, with the interval then in force (ThreadHeapSampler::pick_next_sample, from its
 * constructor): the threads made before VMInit (main, the VM's own) drew theirs with the
 * default 512 KiB, so a VMInit setting reached them only after that many bytes. A Hello run
 * with alloc=1 -XX:-UseTLAB took 13 samples (JDK 17; 9 stacks on 25) where ~300 were due
 * (async-profiler's count, which sets it at load too), and missed JNI_CreateJavaVM's own:
 * Management::initialize makes the Notification Thread's java.lang.Thread and name right after
 * VMInit. SampledObjectAlloc itself comes at VMInit: HotSpot posts it in the live phase only
 * (jvmtiEventController.cpp: not among the early events). */
void fx_allocs_onload(void)
{
    jvmtiEnv *jvmti = fx_jvmti();
    jvmtiPhase phase;
    uint64_t interval = fx_opt()->alloc_bytes;
    if (interval == 0 || jvmti == NULL || (*jvmti)->GetPhase(jvmti, &phase) != JVMTI_ERROR_NONE ||
        phase != JVMTI_PHASE_ONLOAD)
        return; /* attach: the threads' draws are the running JVM's; allocs_start sets it */
    if (!capable(jvmti) || fx_jvmti_failed((*jvmti)->SetHeapSamplingInterval(jvmti, (jint)interval),
                                           "SetHeapSamplingInterval at load"))
        fx_log("alloc=: the sampling interval not set at load: each thread made before VMInit "
               "takes its first sample after ~512 KiB (the default's draw)");
}

/* The disable posts the pending frees first (collect_frees), counted as collected. */
static void allocs_stop(void)
{
    jvmtiEnv *jvmti = fx_jvmti();
    if (jvmti == NULL || !fx_evq_ready(&q.e))
        return;
    pthread_mutex_lock(&ev.lock);
    uint64_t before = __atomic_load_n(&q.frees, __ATOMIC_RELAXED);
    enable(jvmti, JVMTI_DISABLE);
    __atomic_fetch_add(&q.collected, __atomic_load_n(&q.frees, __ATOMIC_RELAXED) - before,
                       __ATOMIC_RELAXED);
    ev.on = false;
    pthread_mutex_unlock(&ev.lock);
}

/* Stopped, the stop's pass drained it, the consumer paused, the events off; the method names go
 * too (a stopped agent keeps no cache: it.cycle's bound), made again at the next drain. */
static void allocs_idle(void)
{
    fx_evq_free(&q.e);
    fx_methods_free(cs.methods);
    cs.methods = NULL;
}

static void allocs_before_dump(JNIEnv *jni, struct fx_profile *p, const struct fx_span *span)
{
    (void)span;
    if (!fx_evq_ready(&q.e))
        return;
    collect_frees(fx_jvmti());
    allocs_drain(jni, p);
    const char *g = "Allocations";
    fx_profile_extra_int(p, g, "sampling interval (alloc=), bytes", cs.interval);
    fx_profile_extra_str(p, g, "weight",
                         "size / (1 - exp(-size / interval)): unbiased bytes per sample");
    fx_profile_extra_int(p, g, "samples", (int64_t)cs.samples);
    uint64_t timed = __atomic_load_n(&q.timed, __ATOMIC_RELAXED);
    if (timed > 0) /* per JVM, as the handler's: the price of a sample, not this period's sum */
        fx_profile_extra_int(p, g, "mean CPU ns in the allocating thread per sample",
                             (int64_t)(__atomic_load_n(&q.timed_ns, __ATOMIC_RELAXED) / timed));
    fx_profile_extra_detail(p, g, "samples whose CPU time was measured (1 in 64)", (int64_t)timed);
    fx_profile_extra_int(p, g, "estimated bytes allocated", cs.est_bytes);
    fx_profile_extra_int(p, g, "bytes of the sampled objects", cs.size_bytes);
    fx_profile_extra_int(p, g, "frees of sampled objects", (int64_t)cs.frees);
    fx_profile_extra_int(p, g, "sampled objects alive in this profile",
                         (int64_t)fx_profile_alloc_live(p));
    fx_profile_extra_detail(p, g, "frees whose allocation the profile does not hold",
                            (int64_t)cs.frees_unheld);
    fx_profile_extra_detail(p, g, "frees the JVM had not posted yet, collected at a dump or stop",
                            (int64_t)__atomic_load_n(&q.collected, __ATOMIC_RELAXED));
    fx_profile_extra_loss(p, g, "lost: queue full", (int64_t)(fx_evq_drops(&q.e) - cs.drops_base));
    fx_profile_extra_loss(p, g, "lost: no registered thread", (int64_t)cs.no_thread);
    fx_profile_extra_loss(p, g, "lost: model out of memory or untagged", (int64_t)cs.lost);
    fx_profile_extra_loss(p, g, "lost: earlier period", (int64_t)cs.late);
    fx_profile_extra_loss(p, g, "stacks cut at the depth ([truncated])", (int64_t)cs.truncated);
    fx_profile_extra_loss(p, g, "stacks not taken (GetStackTrace failed)",
                          (int64_t)__atomic_load_n(&q.stack_errors, __ATOMIC_RELAXED));
    fx_profile_extra_loss(p, g, "samples with [stack table full]", (int64_t)cs.full);
    fx_alloc_native_report(p, g);
}

/* A new recording (base.h, struct fx_source `reset`): its counts from zero, the estimate and its
 * counter track too. The tags go on: an object of the last recording freed in this one is a
 * free the profile does not hold, counted as such. The interval is the option's, set again by
 * the next sample. Producers are off (allocs_stop), and they only add to stack_errors. */
static void allocs_reset(struct fx_profile *p)
{
    (void)p;
    cs.samples = cs.frees = cs.frees_unheld = cs.late = cs.no_thread = cs.lost = 0;
    cs.full = cs.truncated = cs.bad_class = 0;
    cs.est_bytes = cs.size_bytes = cs.counted_bytes = 0;
    cs.drops_base = fx_evq_drops(&q.e);
    fx_alloc_native_new_recording();
    __atomic_store_n(&q.stack_errors, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&q.collected, 0, __ATOMIC_RELAXED);
}

const struct fx_source fx_allocs_source = {
        .name = "allocations",
        .start = allocs_start,
        .stop = allocs_stop,
        .drain = allocs_drain,
        .before_dump = allocs_before_dump,
        .reset = allocs_reset,
        .idle = allocs_idle,
};
