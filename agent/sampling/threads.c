/* SPDX-License-Identifier: Apache-2.0 */
/* The registry of sampled threads and the tid table the signal handler reads.
 *
 * Lifecycle and the free handshake (STYLE.md §5):
 *  1. ThreadStart (on the new thread) allocates the ring and the frame buffer, publishes the
 *     thread in fx_sig.table (release store of the tid) and in the list, then arms its timer.
 *  2. ThreadEnd (on the same thread) disarms the timer, removes the tid from the table and sets
 *     `ended` with a release store. From then on no handler can reach the struct: only the
 *     owning thread's handler ever looks its tid up, and that thread is now past the removal.
 *  3. The drain thread, seeing `ended` (acquire), empties the ring one last time and only then
 *     unlinks and frees the struct (fx_threads_reap). Nothing else frees a struct fx_thread.
 * At VMDeath timers are deleted but nothing is freed: threads may still be running.
 *
 * Buffers (a ring and a frame buffer of `depth` entries per thread) of a registered thread are
 * freed at a stop and built again, with the new recording's ring= and depth=, at the next start
 * (fx_threads_free_buffers, fx_threads_build_buffers). Both run on control's thread, under its
 * lock, with the drain thread paused between two ticks (the ring's consumer), and only while no
 * handler can touch them: sampling is disabled (fx_sig.enabled 0, seq_cst) and every timer and
 * perf event is gone, and fx_sampling_quiet saw fx_sig.in_flight at 0 after that. A handler
 * reads the buffers only after it counted itself in flight and then saw `enabled` set, so a
 * handler that began before the disable is waited for, and one that begins after it returns
 * without reading them; that is the grace period, counted rather than timed. If the wait ends
 * with a handler still in flight (a thread stopped in a debugger mid-handler), nothing is freed
 * or re-sized: the threads keep their old buffers, said once on stderr. The new buffers are
 * published to handlers by the release store of `enabled` (fx_sampling_enable) after them. A
 * thread that read the options before a start changed them but registers after it gets its
 * buffers again at registration (buffers_gen). */
#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_ring.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct fx_thread *head;
static struct fx_threads_stats stats;
static bool stopped;         /* VMDeath or stop: no new thread is registered */
static uint32_t buffers_gen; /* atomic: bumped by each fx_threads_build_buffers */

/* A scan of existing threads (attach, restart): tids whose ThreadEnd came while they were not
 * registered. Such a thread may still be listed, and registering it would arm a timer for a
 * thread that gets no ThreadEnd any more: it is skipped. */
#define ENDED_MAX 1024
static pid_t ended_tids[ENDED_MAX];
static unsigned n_ended;
static bool scanning, ended_overflow;

void fx_threads_lock(void)
{
    pthread_mutex_lock(&lock);
}

void fx_threads_unlock(void)
{
    pthread_mutex_unlock(&lock);
}

/* No lock needed: head is published with a release store after the new node's next is set,
 * and nodes behind a snapshot are only unlinked by the drain thread (the caller of reap) or
 * under the lock the wall sampler holds. */
struct fx_thread *fx_threads_head(void)
{
    return __atomic_load_n(&head, __ATOMIC_ACQUIRE);
}

bool fx_threads_is_own(const char *name)
{
    return name != NULL && strncmp(name, "fxagent ", 8) == 0;
}

void fx_threads_stats(struct fx_threads_stats *out)
{
    fx_threads_lock();
    *out = stats;
    fx_threads_unlock();
}

/* Under lock. Reuses the first removed slot on the probe path; a thread that finds no slot
 * within FX_TID_MAX_PROBE is not sampled (counted), which keeps the handler's probe bounded. */
static struct fx_tid_slot *table_find(pid_t tid)
{
    uint32_t h = fx_signal_handler_hash_sigsafe(tid);
    for (uint32_t i = 0; i < FX_TID_MAX_PROBE; i++) {
        struct fx_tid_slot *s = &fx_sig.table[(h + i) & (FX_TID_SLOTS - 1)];
        if (s->tid == tid)
            return s;
        if (s->tid == 0)
            return NULL;
    }
    return NULL;
}

/* Under lock. A tid already present means the thread is registered (GetAllThreads may list a
 * thread before its ThreadStart arrives): the second registration is refused. */
static int table_insert(struct fx_thread *t)
{
    if (table_find(t->tid) != NULL)
        return FX_ESTATE;
    uint32_t h = fx_signal_handler_hash_sigsafe(t->tid);
    for (uint32_t i = 0; i < FX_TID_MAX_PROBE; i++) {
        struct fx_tid_slot *s = &fx_sig.table[(h + i) & (FX_TID_SLOTS - 1)];
        if (s->tid == 0 || s->tid == -1) {
            __atomic_store_n(&s->thread, t, __ATOMIC_RELAXED);
            __atomic_store_n(&s->tid, t->tid, __ATOMIC_RELEASE);
            return FX_OK;
        }
    }
    return FX_EFULL;
}

/* memory= covers the rings too (docs/PRODUCTION.md, "Memory"): they may take a quarter of it,
 * and the model gets what they leave (window.c). A ring is ring= while the rings left room is at
 * least 32 such rings, then halves as that room shrinks, down to RING_FLOOR: a thread is always
 * sampled, so only at the floor can the rings pass their quarter (reported). */
#define RING_FLOOR     (32u * 1024u) /* ~90 ms of 20-frame stacks at 1 ms; ring= if smaller */
#define RING_SHARE_DIV 4u            /* rings: a quarter of memory= */
#define RING_ROOM_DIV  32u           /* a ring takes at most 1/32 of the room left */

static uint64_t ring_total; /* atomic: bytes of the rings allocated and not yet freed */
static uint32_t ring_count; /* atomic: how many */

static size_t ring_size(void)
{
    uint64_t budget = __atomic_load_n(&fx_opt()->memory_bytes, __ATOMIC_RELAXED) / RING_SHARE_DIV;
    uint64_t used = __atomic_load_n(&ring_total, __ATOMIC_RELAXED);
    uint64_t room = used < budget ? budget - used : 0;
    uint64_t size = 64; /* ring=, rounded up to a power of two as fx_ring_init does */
    while (size < fx_opt()->ring_bytes)
        size <<= 1;
    uint64_t floor = size < RING_FLOOR ? size : RING_FLOOR;
    while (size > floor && size > room / RING_ROOM_DIV)
        size /= 2;
    return (size_t)size;
}

static int ring_alloc(struct fx_ring *r)
{
    int rc = fx_ring_init(r, ring_size());
    if (rc == FX_OK) {
        __atomic_add_fetch(&ring_total, r->cap, __ATOMIC_RELAXED);
        __atomic_add_fetch(&ring_count, 1, __ATOMIC_RELAXED);
    }
    return rc;
}

static void ring_free(struct fx_ring *r)
{
    if (r->buf != NULL) {
        __atomic_sub_fetch(&ring_total, r->cap, __ATOMIC_RELAXED);
        __atomic_sub_fetch(&ring_count, 1, __ATOMIC_RELAXED);
    }
    fx_ring_destroy(r);
}

uint64_t fx_threads_ring_bytes(uint32_t *count)
{
    if (count != NULL)
        *count = __atomic_load_n(&ring_count, __ATOMIC_RELAXED);
    return __atomic_load_n(&ring_total, __ATOMIC_RELAXED);
}

/* Pages of their own, like the ring (fx_pages_alloc): freed at a stop, they leave no RSS. */
static void frames_free(struct fx_thread *t)
{
    fx_pages_free(t->frames, ((size_t)t->depth + 1) * sizeof(fx_asgct_frame));
    t->frames = NULL;
}

static void thread_free(JNIEnv *jni, struct fx_thread *t)
{
    if (t == NULL)
        return;
    if (t->ref != NULL && jni != NULL)
        (*jni)->DeleteGlobalRef(jni, t->ref);
    ring_free(&t->ring);
    fx_kstack_unmap(t);
    frames_free(t);
    fx_free(t->probe.frames); /* probe.c allocates it; no handler can reach t any more */
    fx_free(t->probe.shadow);
    fx_free(t->tctx); /* model/trace_ctx.c's allocation: its thread has ended, Java is done */
    fx_free(t->name);
    fx_free(t);
}

static char *thread_name(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    jvmtiThreadInfo info;
    memset(&info, 0, sizeof(info));
    if (thread == NULL || (*jvmti)->GetThreadInfo(jvmti, thread, &info) != JVMTI_ERROR_NONE)
        return fx_strdup("?");
    char *name = fx_strdup(info.name != NULL ? info.name : "?");
    (*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
    if (info.thread_group != NULL)
        (*jni)->DeleteLocalRef(jni, info.thread_group);
    if (info.context_class_loader != NULL)
        (*jni)->DeleteLocalRef(jni, info.context_class_loader);
    return name;
}

/* The frame buffer and the ring of the recording's options (the ring keeps its drop count).
 * On failure the buffer is NULL: the handler counts the signal and takes no sample. */
static int buffers_alloc(struct fx_thread *t)
{
    uint32_t depth = fx_opt()->depth;
    if (t->frames == NULL || t->depth != depth) {
        frames_free(t);
        t->depth = depth;
        /* one more than depth=: a stack deeper than the depth is told from one exactly as deep
         * (only the first is cut, "[truncated]"); the record keeps depth frames at most */
        t->frames = fx_pages_alloc(((size_t)depth + 1) * sizeof(fx_asgct_frame));
    }
    size_t want = ring_size();
    if (t->ring.buf != NULL && (t->ring.cap == want || !fx_ring_empty(&t->ring)))
        return t->frames != NULL ? FX_OK : FX_ENOMEM; /* records wait for the drain: kept */
    uint64_t drops = t->ring.drops, pushed = t->ring.pushed;
    ring_free(&t->ring);
    int rc = ring_alloc(&t->ring);
    t->ring.drops = drops;
    t->ring.pushed = pushed;
    return rc == FX_OK && t->frames != NULL ? FX_OK : FX_ENOMEM;
}

/* java.lang.Thread.tid of a thread (0 unknown): the handler tells a carrier's own code from a
 * mounted virtual thread's by it (signal_handler.c, fx_signal_handler_vthread_sigsafe). */
static int64_t java_tid_of(JNIEnv *jni, jthread thread)
{
    static jfieldID tid_field; /* atomic: looked up once, the same on every thread */
    jfieldID f = __atomic_load_n(&tid_field, __ATOMIC_RELAXED);
    if (f == NULL) {
        jclass c = (*jni)->FindClass(jni, "java/lang/Thread");
        if (c != NULL) {
            f = (*jni)->GetFieldID(jni, c, "tid", "J");
            (*jni)->DeleteLocalRef(jni, c);
        }
        if ((*jni)->ExceptionCheck(jni))
            (*jni)->ExceptionClear(jni);
        if (f == NULL)
            return 0;
        __atomic_store_n(&tid_field, f, __ATOMIC_RELAXED);
    }
    return (int64_t)(*jni)->GetLongField(jni, thread, f);
}

/* Everything the handler will read, allocated before the thread is published. */
static struct fx_thread *thread_new(JNIEnv *jni, jthread thread, char *name, pid_t tid, JNIEnv *env)
{
    struct fx_thread *t = fx_calloc(1, sizeof(*t));
    if (t == NULL)
        goto out_free_name;
    t->name = name;
    t->tid = tid;
    t->env = env;
    t->perf_fd = -1;
    t->buffers_gen = __atomic_load_n(&buffers_gen, __ATOMIC_ACQUIRE); /* before the options */
    t->start_ns = fx_now_ns();
    if (buffers_alloc(t) != FX_OK)
        goto out_free_thread;
    if (thread != NULL && (t->ref = (*jni)->NewGlobalRef(jni, thread)) == NULL) /* vm_threads.c */
        goto out_free_thread;
    t->java_tid = thread != NULL ? (uint64_t)java_tid_of(jni, thread) : 0;
    return t;
out_free_thread:
    thread_free(jni, t);
    return NULL;
out_free_name:
    fx_free(name);
    return NULL;
}

/* Under lock. */
static bool ended_during_scan(pid_t tid)
{
    if (!scanning)
        return false;
    for (unsigned i = 0; i < n_ended; i++) {
        if (ended_tids[i] == tid)
            return true;
    }
    return ended_overflow;
}

/* Under lock: disarmed, out of the table, ended (the drain frees it). Only on the thread itself
 * or once it is gone: then no handler can still hold it (signal_handler.c). */
static void unpublish(struct fx_tid_slot *s)
{
    struct fx_thread *t = s->thread;
    fx_timer_disarm(t);
    __atomic_store_n(&s->tid, -1, __ATOMIC_RELEASE);
    t->end_ns = fx_now_ns();
    __atomic_store_n(&t->ended, 1, __ATOMIC_RELEASE);
}

/* Publishes t (table, then list) and arms its timer. Takes ownership of t. `existing`: found
 * by a scan, not registering itself in ThreadStart. A Java thread registering itself replaces
 * the entry vm_threads.c made for its tid (a JNI thread attached since, or one seen in /proc
 * before its ThreadStart): it is the thread itself, so no handler holds the old entry. */
static int publish_and_arm(JNIEnv *jni, struct fx_thread *t, bool existing)
{
    fx_threads_lock();
    struct fx_tid_slot *old = existing || t->native_only ? NULL : table_find(t->tid);
    if (old != NULL && old->thread->native_only)
        unpublish(old);
    int rc = stopped || (existing && ended_during_scan(t->tid)) ? FX_ESTATE : FX_OK;
    if (rc == FX_OK && t->buffers_gen != buffers_gen) { /* a start changed the options since */
        t->buffers_gen = buffers_gen;
        rc = buffers_alloc(t);
    }
    if (rc == FX_OK)
        rc = table_insert(t);
    if (rc != FX_OK) {
        stats.not_sampled += rc != FX_ESTATE;
        stats.no_memory += rc == FX_ENOMEM;
        stats.table_full += rc == FX_EFULL;
        fx_threads_unlock();
        thread_free(jni, t);
        return rc;
    }
    t->next = head;
    __atomic_store_n(&head, t, __ATOMIC_RELEASE);
    stats.registered++;
    rc = fx_timer_arm(t);
    stats.arm_failed += rc != FX_OK && !t->native_only; /* else it ended: vm_threads.c counts */
    stats.perf += t->engine == FX_ENGINE_KIND_PERF;
    stats.timer += t->engine == FX_ENGINE_KIND_TIMER;
    fx_threads_unlock();
    return rc;
}

/* The calling thread's stack, which stack recovery reads within (fx_recover.h); left 0 (no
 * recovery on this thread) if glibc cannot say. */
static void own_stack(struct fx_thread *t)
{
    pthread_attr_t a;
    if (pthread_getattr_np(pthread_self(), &a) != 0)
        return;
    void *lo = NULL;
    size_t size = 0;
    if (pthread_attr_getstack(&a, &lo, &size) == 0 && lo != NULL && size > 0) {
        t->stack_lo = (uintptr_t)lo;
        t->stack_hi = (uintptr_t)lo + size;
    }
    pthread_attr_destroy(&a);
}

int fx_threads_start_current(JNIEnv *jni, jthread thread)
{
    jvmtiEnv *jvmti = fx_jvmti();
    char *name = thread_name(jvmti, jni, thread);
    if (name == NULL || fx_threads_is_own(name)) {
        fx_free(name);
        return FX_OK;
    }
    struct fx_thread *t = thread_new(jni, thread, name, (pid_t)syscall(SYS_gettid), jni);
    if (t == NULL) {
        fx_threads_lock();
        stats.not_sampled++;
        fx_threads_unlock();
        return FX_ENOMEM;
    }
    own_stack(t);
    return publish_and_arm(jni, t, false);
}

void fx_threads_end_current(JNIEnv *jni, jthread thread)
{
    (void)jni, (void)thread;
    pid_t tid = (pid_t)syscall(SYS_gettid);
    fx_threads_lock();
    struct fx_tid_slot *s = table_find(tid);
    if (s != NULL)
        unpublish(s);
    else if (scanning) {
        if (n_ended < ENDED_MAX)
            ended_tids[n_ended++] = tid;
        else
            ended_overflow = true;
    }
    fx_threads_unlock();
}

int fx_threads_start_native(pid_t tid, char *name, uint8_t category, uint8_t subcategory)
{
    struct fx_thread *t = thread_new(NULL, NULL, name, tid, NULL);
    if (t == NULL)
        return FX_ENOMEM;
    t->native_only = true;
    t->category = category;
    t->subcategory = subcategory;
    return publish_and_arm(NULL, t, false);
}

bool fx_threads_end_native(pid_t tid)
{
    fx_threads_lock();
    struct fx_tid_slot *s = table_find(tid);
    bool ours = s != NULL && s->thread->native_only;
    if (ours)
        unpublish(s);
    fx_threads_unlock();
    return ours;
}

void fx_threads_scan_begin(void)
{
    fx_threads_lock();
    scanning = true;
    n_ended = 0;
    ended_overflow = false;
    fx_threads_unlock();
}

/* The engine counts describe this recording's threads: a start re-counts them. */
void fx_threads_arm_all(void)
{
    fx_threads_lock();
    if (!stopped) { /* a first start: nothing was disarmed (new threads arm themselves) */
        fx_threads_unlock();
        return;
    }
    stopped = false;
    stats.perf = stats.timer = 0;
    for (struct fx_thread *t = head; t != NULL; t = t->next) {
        if (__atomic_load_n(&t->ended, __ATOMIC_ACQUIRE))
            continue;
        stats.arm_failed += fx_timer_arm(t) != FX_OK && !t->native_only; /* native: ended */
        stats.perf += t->engine == FX_ENGINE_KIND_PERF;
        stats.timer += t->engine == FX_ENGINE_KIND_TIMER;
    }
    fx_threads_unlock();
}

/* Stop or VMDeath, from another thread: no timer and no perf event is left (a stopped agent
 * sends no signal); nothing is freed here (threads still run). */
void fx_threads_disarm_all(void)
{
    fx_threads_lock();
    stopped = true;
    for (struct fx_thread *t = head; t != NULL; t = t->next) {
        if (!__atomic_load_n(&t->ended, __ATOMIC_ACQUIRE))
            fx_timer_disarm(t);
    }
    fx_threads_unlock();
}

/* Under the lock, as ThreadEnd and a stop disarm under it: a thread's perf event is swapped
 * for one with the callchain only while neither can run. */
void fx_threads_kstack_pass(void)
{
    if (fx_opt()->mode != FX_MODE_CPU)
        return;
    bool kstack = fx_kstack_wanted();
    int64_t now = fx_now_ns();
    fx_threads_lock();
    for (struct fx_thread *t = stopped ? NULL : head; t != NULL; t = t->next) {
        if (__atomic_load_n(&t->ended, __ATOMIC_ACQUIRE))
            continue;
        if (t->engine == FX_ENGINE_KIND_TIMER && t->perf_later && fx_kstack_due(t, now)) {
            fx_timer_perf_upgrade(t);
            if (t->engine == FX_ENGINE_KIND_PERF)
                stats.perf++, stats.timer--;
        } else if (kstack && t->engine == FX_ENGINE_KIND_PERF && fx_kstack_due(t, now))
            fx_timer_kstack_upgrade(t);
    }
    fx_threads_unlock();
}

/* Ended threads keep theirs: the drain empties their rings and frees them with the thread. */
void fx_threads_free_buffers(void)
{
    fx_threads_lock();
    for (struct fx_thread *t = head; t != NULL; t = t->next) {
        if (__atomic_load_n(&t->ended, __ATOMIC_ACQUIRE))
            continue;
        frames_free(t);
        fx_kstack_unmap(t);            /* its perf event is closed and no handler is in flight */
        if (fx_ring_empty(&t->ring)) { /* else its records wait for the drain */
            uint64_t drops = t->ring.drops, pushed = t->ring.pushed;
            ring_free(&t->ring);
            t->ring.drops = drops;
            t->ring.pushed = pushed;
        }
    }
    fx_threads_unlock();
}

void fx_threads_build_buffers(void)
{
    fx_threads_lock();
    __atomic_add_fetch(&buffers_gen, 1, __ATOMIC_RELEASE);
    for (struct fx_thread *t = head; t != NULL; t = t->next) {
        if (__atomic_load_n(&t->ended, __ATOMIC_ACQUIRE))
            continue;
        t->buffers_gen = buffers_gen;
        if (buffers_alloc(t) != FX_OK)
            stats.no_memory++;
    }
    fx_threads_unlock();
}

/* The handler's per-thread counters are written by its thread's handler only: none runs now. */
void fx_threads_new_recording(void)
{
    fx_threads_lock();
    memset(&stats, 0, sizeof(stats));
    for (struct fx_thread *t = head; t != NULL; t = t->next) {
        stats.registered += !__atomic_load_n(&t->ended, __ATOMIC_ACQUIRE);
        t->handler_ns = t->handler_timed = t->handler_max_ns = t->handled = 0;
        memset(t->recovered, 0, sizeof(t->recovered));
        memset(t->rec_failed, 0, sizeof(t->rec_failed));
        t->rec_codeheap = 0;
        __atomic_store_n(&t->ring.drops, 0, __ATOMIC_RELAXED);
        t->cpu_armed_ns = 0;
    }
    fx_threads_unlock();
}

void fx_threads_reap(JNIEnv *jni, bool (*done)(struct fx_thread *t))
{
    struct fx_thread *dead = NULL;
    fx_threads_lock();
    for (struct fx_thread **pp = &head; *pp != NULL;) {
        struct fx_thread *t = *pp;
        if (__atomic_load_n(&t->ended, __ATOMIC_ACQUIRE) && done(t)) {
            __atomic_store_n(pp, t->next, __ATOMIC_RELEASE);
            t->next = dead;
            dead = t;
        } else {
            pp = &t->next;
        }
    }
    fx_threads_unlock();
    while (dead != NULL) {
        struct fx_thread *next = dead->next;
        thread_free(jni, dead);
        dead = next;
    }
}

/* Under lock: true if `thread` is already registered. */
static bool is_registered(JNIEnv *jni, jthread thread)
{
    for (struct fx_thread *t = head; t != NULL; t = t->next) {
        if ((*jni)->IsSameObject(jni, t->ref, thread))
            return true;
    }
    return false;
}

/* --- for threads_existing.c: threads that started before us --- */

bool fx_threads_known(JNIEnv *jni, jthread thread)
{
    fx_threads_lock();
    bool known = is_registered(jni, thread);
    fx_threads_unlock();
    return known;
}

char *fx_threads_name_of(JNIEnv *jni, jthread thread)
{
    return thread_name(fx_jvmti(), jni, thread);
}

int fx_threads_register_existing(JNIEnv *jni, jthread thread, char *name, pid_t tid, JNIEnv *env,
                                 uintptr_t stack_lo, uintptr_t stack_hi)
{
    struct fx_thread *t = thread_new(jni, thread, name, tid, env);
    if (t == NULL)
        return FX_ENOMEM;
    t->stack_lo = stack_lo;
    t->stack_hi = stack_hi;
    int rc = publish_and_arm(jni, t, true);
    if (rc == FX_OK) {
        fx_threads_lock();
        stats.existing++;
        fx_threads_unlock();
    }
    return rc;
}

void fx_threads_count_not_sampled(void)
{
    fx_threads_lock();
    stats.not_sampled++;
    fx_threads_unlock();
}

void fx_threads_scan_end(void)
{
    fx_threads_lock();
    scanning = false;
    fx_threads_unlock();
}
