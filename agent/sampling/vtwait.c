/* SPDX-License-Identifier: Apache-2.0 */
/* Where virtual threads wait (issue 22 item 4), the producer side, called by vthreads.c's mount
 * callbacks on the carrier:
 *  - at an unmount, the time, in one 64-bit word of a direct-mapped table indexed by the
 *    virtual thread's id (its low bits: ids are sequential) and tagged with its next 24 bits;
 *  - at the next mount of that id, the wait's length; a wait of at least vtwait= (and within
 *    the rate limit) is recorded with the virtual thread's stack. The stack is taken then, not
 *    at the unmount: the mount event comes after the continuation resumed, at the frame where it
 *    yielded, so it is the stack the thread waited in, and only waits that qualify pay for it.
 *    With it goes VirtualThread.timeout (JDK 24+; -1 where the field does not exist): a timed
 *    park's (a sleep's) nanoseconds, set at each parkNanos and still this park's at the mount,
 *    which tells the model when its timer made the thread runnable (issue 30 item 5: the rest,
 *    to the mount, is the wait for a carrier; model/vthreads_wait.c).
 * A recorded wait goes to one queue the model drains (model/vthreads_wait.c). Every wait left
 * out is counted. It calls only base/; vthreads.c calls it, nothing else here does. */
#include "internal.h"

#include <string.h>
#include <sys/mman.h>

#include "fx_evq.h"

#define PARK_BITS  14 /* the table has 1 << PARK_BITS words (128 KiB) */
#define TAG_BITS   24
#define TIME_BITS  40 /* microseconds since vw.base_ns: 12 days, compared modulo */
#define TIME_MASK  ((1ull << TIME_BITS) - 1)
#define QUEUE      (512u * 1024)
#define FRAMES_MAX 256
/* At most RATE waits recorded per second, bursts of RATE: a GetStackTrace of a parked virtual
 * thread costs microseconds, so 1000 of them stay well under 1 % of a core. */
#define RATE       1000
#define RATE_STEP  (1000000000 / RATE)
#define RATE_BURST ((int64_t)RATE * RATE_STEP)

static struct {
    uint64_t min_ns; /* atomic: vtwait= while a recording runs, else 0 */
    int64_t base_ns;
    int64_t tat_ns;             /* atomic: the rate limit's theoretical arrival time (GCRA) */
    struct fx_evq q;            /* the recorded waits; made at a start, freed stopped */
    uint64_t coarse_res_us;     /* CLOCK_MONOTONIC_COARSE's resolution, rounded up */
    struct fx_vtwait_figures f; /* atomics */
    uint64_t drops_base;        /* the queue's drops when this recording began */
} vw = {.q = FX_EVQ_INITIALIZER};

/* atomic: tag << TIME_BITS | unmount time in µs; pages of its own, given back at a stop */
static uint64_t park[1u << PARK_BITS] __attribute__((aligned(4096)));

/* VirtualThread.timeout ("J"), looked up at the first recorded wait; atomic: 0 not yet, 1 found,
 * -1 absent (JDK 21-23: the parkNanos of those keeps its deadline in a local). */
static jfieldID timeout_field;
static int timeout_state;

static void add(uint64_t *c)
{
    __atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

void fx_vtwait_start(uint64_t min_ns)
{
    /* Made at each start that needs it (the consumer is paused or not started yet), freed at
     * the stop (fx_vtwait_free). Mounts read neither field below until min_ns is set. */
    if (min_ns > 0) {
        if (fx_evq_init(&vw.q, QUEUE) != FX_OK) {
            fx_log("no memory for the virtual thread wait queue: waits are not recorded");
            return;
        }
        struct timespec res;
        vw.coarse_res_us = clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0
                                   ? (uint64_t)res.tv_nsec / 1000 + 1
                                   : UINT64_MAX;
        if (vw.base_ns == 0) /* once: a racing unmount's time stays comparable */
            vw.base_ns = fx_now_ns();
    }
    /* Unmounts before a stop are not waits of this recording (a racing callback may still
     * store one: a wait then spans the stop, which only a restart within it can show). */
    memset(park, 0, sizeof(park));
    __atomic_store_n(&vw.min_ns, min_ns, __ATOMIC_RELEASE);
}

void fx_vtwait_stop(void)
{
    __atomic_store_n(&vw.min_ns, 0, __ATOMIC_RELEASE);
}

/* Stopped, the stop's pass drained the queue, the consumer paused: the queue's pages and the
 * unmount table's go back (a late unmount's store there only faults a zero page in again; the
 * next start clears the table). */
void fx_vtwait_free(void)
{
    fx_evq_free(&vw.q);
    madvise(park, sizeof(park), MADV_DONTNEED);
}

static uint64_t *slot(uint64_t id)
{
    return &park[id & ((1u << PARK_BITS) - 1)];
}

static uint64_t tag(uint64_t id)
{
    /* The top bit is always set: a word in use is never 0. */
    return ((id >> PARK_BITS) & ((1u << (TAG_BITS - 1)) - 1)) | 1u << (TAG_BITS - 1);
}

static uint64_t us_of(int64_t ns)
{
    return (uint64_t)(ns - vw.base_ns) / 1000 & TIME_MASK;
}

void fx_vtwait_unmount(uint64_t id)
{
    if (id == 0 || __atomic_load_n(&vw.min_ns, __ATOMIC_RELAXED) == 0)
        return;
    uint64_t old = __atomic_exchange_n(slot(id), tag(id) << TIME_BITS | us_of(fx_now_ns()),
                                       __ATOMIC_RELAXED);
    if (old != 0 && old >> TIME_BITS != tag(id))
        add(&vw.f.overwritten); /* another virtual thread with the same low bits still waits */
}

/* The rate limit: true if one more wait may be recorded now. */
static bool take_token(int64_t now)
{
    int64_t tat = __atomic_load_n(&vw.tat_ns, __ATOMIC_RELAXED);
    for (;;) {
        int64_t next = (tat > now ? tat : now) + RATE_STEP;
        if (next - now > RATE_BURST)
            return false;
        if (__atomic_compare_exchange_n(&vw.tat_ns, &tat, next, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return true;
    }
}

/* vthread's VirtualThread.timeout, or -1 without the field. The class is final (JDK 21+), so
 * the object's class is the one that declares it. Two carriers racing here find the same id. */
static int64_t timeout_of(JNIEnv *jni, jthread vthread)
{
    int state = __atomic_load_n(&timeout_state, __ATOMIC_ACQUIRE);
    /* Never with an exception pending: the NoSuchFieldError check below would clear it. */
    if (state == 0 && jni != NULL && vthread != NULL && !(*jni)->ExceptionCheck(jni)) {
        jclass c = (*jni)->GetObjectClass(jni, vthread);
        jfieldID f = c != NULL ? (*jni)->GetFieldID(jni, c, "timeout", "J") : NULL;
        if ((*jni)->ExceptionCheck(jni)) /* NoSuchFieldError */
            (*jni)->ExceptionClear(jni);
        if (c != NULL)
            (*jni)->DeleteLocalRef(jni, c);
        timeout_field = f;
        state = f != NULL ? 1 : -1;
        __atomic_store_n(&timeout_state, state, __ATOMIC_RELEASE);
    }
    if (state != 1 || jni == NULL || vthread == NULL)
        return -1;
    return (int64_t)(*jni)->GetLongField(jni, vthread, timeout_field);
}

/* At the mount event the virtual thread is the current thread: GetStackTrace(NULL) walks its
 * frames in place, back to the one it yielded in. */
static void record(JNIEnv *jni, jthread vthread, uint64_t id, int64_t t0, int64_t t1)
{
    jvmtiEnv *jvmti = fx_jvmti();
    jvmtiFrameInfo frames[FRAMES_MAX];
    jint n = 0;
    uint32_t depth = fx_opt()->depth < FRAMES_MAX ? fx_opt()->depth : FRAMES_MAX;
    if (jvmti == NULL ||
        (*jvmti)->GetStackTrace(jvmti, NULL, 0, (jint)depth + 1, frames, &n) != JVMTI_ERROR_NONE) {
        add(&vw.f.stack_failed);
        n = 0;
    }
    struct fx_vtwait_rec r = {.t0 = t0, .t1 = t1, .id = id, .timeout_ns = timeout_of(jni, vthread)};
    if ((uint32_t)n > depth) {
        n = (jint)depth;
        r.truncated = 1;
    }
    r.nframes = (uint16_t)n;
    /* false: a stop freed the queue meanwhile, or it was full (the ring counted the drop) */
    if (fx_evq_push(&vw.q, &r, sizeof(r), frames, (uint32_t)n * sizeof(frames[0]), NULL, 0))
        add(&vw.f.recorded);
}

/* Most mounts end short waits (a yield, a brief park): the coarse clock (a few ns, one tick of
 * resolution, never ahead of CLOCK_MONOTONIC) rules them out, and only a wait that may reach
 * vtwait= pays for the precise clock (about 25-60 ns here). */
void fx_vtwait_mount(JNIEnv *jni, jthread vthread, uint64_t id)
{
    uint64_t min_ns = __atomic_load_n(&vw.min_ns, __ATOMIC_ACQUIRE);
    if (min_ns == 0)
        return;
    uint64_t v = __atomic_load_n(slot(id), __ATOMIC_RELAXED);
    if (v == 0 || v >> TIME_BITS != tag(id))
        return; /* its first mount, or its unmount was overwritten (counted there) */
    uint64_t t0_us = v & TIME_MASK;
    uint64_t coarse_us = (us_of(fx_clock_ns(CLOCK_MONOTONIC_COARSE)) - t0_us) & TIME_MASK;
    if (coarse_us > TIME_MASK / 2 || (coarse_us + vw.coarse_res_us) * 1000 < min_ns)
        return; /* the coarse clock still before the unmount: a short wait */
    int64_t c0 = fx_now_ns();
    uint64_t waited_us = (us_of(c0) - t0_us) & TIME_MASK;
    if (waited_us * 1000 < min_ns)
        return;
    add(&vw.f.long_waits);
    if (!take_token(c0)) {
        add(&vw.f.rate_limited);
        return;
    }
    record(jni, vthread, id, c0 - (int64_t)waited_us * 1000, c0);
    __atomic_fetch_add(&vw.f.callback_ns, (uint64_t)(fx_now_ns() - c0), __ATOMIC_RELAXED);
}

const struct fx_vtwait_rec *fx_vtwait_peek(uint32_t *len)
{
    return fx_evq_peek(&vw.q, len);
}

void fx_vtwait_release(void)
{
    fx_evq_release(&vw.q);
}

void fx_vtwait_figures(struct fx_vtwait_figures *out)
{
    const uint64_t *in = (const uint64_t *)&vw.f;
    uint64_t *o = (uint64_t *)out;
    for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
        o[i] = __atomic_load_n(&in[i], __ATOMIC_RELAXED);
    out->queue_full = fx_evq_ready(&vw.q) ? fx_evq_drops(&vw.q) - vw.drops_base : 0;
}

/* The figures are atomics the mount callbacks add to (they stay on while stopped); the queue
 * counts its drops since it was made, and a recording may begin without a new queue (loop=),
 * so this recording's count from a base. */
void fx_vtwait_new_recording(void)
{
    uint64_t *c = (uint64_t *)&vw.f;
    for (size_t i = 0; i < sizeof(vw.f) / sizeof(uint64_t); i++)
        __atomic_store_n(&c[i], 0, __ATOMIC_RELAXED);
    vw.drops_base = fx_evq_drops(&vw.q);
}
