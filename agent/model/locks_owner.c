/* SPDX-License-Identifier: Apache-2.0 */
/* The monitor waits in flight (issue 18) and their owners: one wait slot per thread waiting
 * for a monitor (found by pthread_self(), a register read where gettid is a system call: no
 * JVMTI thread-local storage, no __thread), and the thread
 * "fxagent lock owners", which names the owner of a monitor only for waits that already
 * lasted half of lock=. The owner must be read while the wait lasts (at MonitorContendedEntered
 * it has let go), and HotSpot's GetObjectMonitorUsage is a VM operation (a safepoint: 0.15 ms
 * on a quiet JVM, 18 ms under load, docs/BENCHMARKS.md "Lock waits"); asked at every contended
 * enter it cost a safepoint per enter. Here a storm of short waits asks for nothing, and the
 * lookups that are asked for are bounded: at most LOOKUPS_PER_S a second, and in time by a
 * bucket that fills at 1 % of the wall time up to BURST_NS and pays for each lookup's duration
 * (so at most 1 % of the time at our safepoints over a run, and none after slow lookups until
 * they are paid for); one lookup serves all the waiters of one monitor in a tick; a wait not
 * looked up says why (its owner reads "unknown (why)", and a counter).
 * A leaf of locks_events.c: it calls only base/. */
#include "locks_shared.h"

#include <string.h>

#define SLOTS         4096 /* threads waiting for a monitor at once; more are counted */
#define PROBES        64
#define LOOKUPS_PER_S 100
#define TICK_BATCH    64        /* waits handed to one tick's lookups */
#define BURST_NS      100000000 /* the time bucket's size: 100 ms of lookups */
#define IDLE_TICKS    8         /* ticks that found no wait before the thread slows down */
#define IDLE_PERIOD   100000000 /* its period then; the next wait hurries it back */

enum slot_state {
    SLOT_FREE = 0, /* or being filled by its thread */
    SLOT_WAITING,  /* the lookup thread may take it */
    SLOT_LOOKING,  /* the lookup thread reads its object: it frees the slot if the wait ended */
    SLOT_DONE,     /* owner[] is final */
    SLOT_ENDED,    /* the wait ended during its lookup */
};

struct wait_slot {
    int64_t t0;
    jobject object; /* a global reference while the owner may be looked up, else NULL */
    uint32_t state; /* atomic */
    char owner[LOCK_OWNER_MAX];
};

/* The threads apart from the slots: the lookup thread's scan reads 32 KiB, not the slots. */
static uint64_t slot_key[SLOTS]; /* atomic: the waiting thread's pthread_self(), 0 free */
static struct wait_slot slots[SLOTS];

static struct {
    uint64_t min_ns;       /* lock= of the running recording */
    bool lookups;          /* lockowner=on */
    int32_t waiting;       /* atomic: slots claimed */
    int64_t window_ns;     /* the second LOOKUPS_PER_S counts in (lookup thread only) */
    uint32_t window_count; /* lookups in it */
    int64_t bucket_ns;     /* lookup time the budget still allows (may be negative) */
    int64_t bucket_at;     /* when it was filled last */
    uint64_t period_ns;    /* the period while waits are in flight: lock=/4 */
    uint32_t idle_ticks;   /* ticks in a row that found no wait (lookup thread only) */
    bool slow;             /* the period is IDLE_PERIOD (lookup thread only) */
    uint32_t asleep;       /* atomic: set with slow; the first wait to see it hurries the thread */
} ow;

static struct fx_periodic owners;

struct fx_lock_owner_figures fx_lock_owner_fig;

static uint32_t state_of(struct wait_slot *s)
{
    return __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
}

static bool move(struct wait_slot *s, uint32_t from, uint32_t to)
{
    return __atomic_compare_exchange_n(&s->state, &from, to, false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
}

static void slot_release(JNIEnv *jni, uint32_t i)
{
    struct wait_slot *s = &slots[i];
    if (s->object != NULL)
        (*jni)->DeleteGlobalRef(jni, s->object);
    s->object = NULL;
    __atomic_store_n(&s->state, SLOT_FREE, __ATOMIC_RELAXED);
    __atomic_store_n(&slot_key[i], 0, __ATOMIC_RELEASE);
    __atomic_fetch_sub(&ow.waiting, 1, __ATOMIC_RELAXED);
}

/* A pthread_t is the address of its thread's descriptor (stacks apart): the product's high bits. */
static uint32_t hash(uint64_t key)
{
    return (uint32_t)((key * 0x9E3779B97F4A7C15u) >> 40);
}

static uint64_t self_key(void)
{
    return (uint64_t)(uintptr_t)pthread_self();
}

/* The thread's slot in a wait (WAITING, LOOKING or DONE), or -1. A thread waits for one monitor
 * at a time; a slot of its own in ENDED is the lookup thread's to free. */
static int slot_find(uint64_t key)
{
    for (uint32_t i = 0, h = hash(key); i < PROBES; i++) {
        uint32_t k = (h + i) % SLOTS;
        if (__atomic_load_n(&slot_key[k], __ATOMIC_ACQUIRE) != key)
            continue;
        uint32_t st = state_of(&slots[k]);
        if (st == SLOT_WAITING || st == SLOT_LOOKING || st == SLOT_DONE)
            return (int)k;
    }
    return -1;
}

void fx_lock_thread_name(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, char *buf, size_t cap)
{
    buf[0] = '\0';
    jvmtiThreadInfo info;
    memset(&info, 0, sizeof(info));
    if (t == NULL || (*jvmti)->GetThreadInfo(jvmti, t, &info) != JVMTI_ERROR_NONE) {
        lock_add(&fx_lock_fig.owner_failed, 1);
        return;
    }
    if (info.name != NULL) {
        strncpy(buf, info.name, cap - 1);
        buf[cap - 1] = '\0';
        (*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
    }
    (*jni)->DeleteLocalRef(jni, info.thread_group);
    (*jni)->DeleteLocalRef(jni, info.context_class_loader);
}

bool fx_lock_wait_begin(JNIEnv *jni, jobject object)
{
    uint64_t key = self_key();
    int stale = slot_find(key); /* an enter whose entered never came (lock= stopped between) */
    if (stale >= 0 &&
        __atomic_exchange_n(&slots[stale].state, SLOT_ENDED, __ATOMIC_ACQ_REL) != SLOT_LOOKING)
        slot_release(jni, (uint32_t)stale);
    for (uint32_t i = 0, h = hash(key); i < PROBES; i++) {
        uint32_t k = (h + i) % SLOTS;
        uint64_t free_key = 0;
        if (!__atomic_compare_exchange_n(&slot_key[k], &free_key, key, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_RELAXED))
            continue;
        __atomic_fetch_add(&ow.waiting, 1, __ATOMIC_SEQ_CST);
        /* seq_cst with owners_tick's store of asleep and load of waiting: one sees the other */
        if (__atomic_load_n(&ow.asleep, __ATOMIC_SEQ_CST) &&
            __atomic_exchange_n(&ow.asleep, 0, __ATOMIC_SEQ_CST)) {
            lock_add(&fx_lock_owner_fig.hurried, 1);
            fx_periodic_hurry(&owners, ow.period_ns);
        }
        struct wait_slot *s = &slots[k];
        s->owner[0] = '\0';
        s->object = ow.lookups ? (*jni)->NewGlobalRef(jni, object) : NULL;
        s->t0 = fx_now_ns();
        __atomic_store_n(&s->state, SLOT_WAITING, __ATOMIC_RELEASE);
        return true;
    }
    return false;
}

static void set_owner(char *owner, size_t cap, const char *why, uint64_t *counter)
{
    strncpy(owner, why, cap - 1);
    owner[cap - 1] = '\0';
    lock_add(counter, 1);
}

enum lock_wait fx_lock_wait_end(JNIEnv *jni, uint64_t min_ns, int64_t *t0, int64_t *t1, char *owner,
                                size_t cap)
{
    int k = slot_find(self_key());
    if (k < 0)
        return LOCK_WAIT_NONE; /* its enter came before the start, or found no slot */
    struct wait_slot *s = &slots[k];
    *t0 = s->t0;
    *t1 = fx_now_ns();
    bool recorded = min_ns != 0 && *t1 - *t0 >= (int64_t)min_ns;
    uint32_t was = __atomic_exchange_n(&s->state, SLOT_ENDED, __ATOMIC_ACQ_REL);
    struct fx_lock_owner_figures *f = &fx_lock_owner_fig;
    owner[0] = '\0';
    if (!recorded)
        ;                      /* no owner needed */
    else if (was == SLOT_DONE) /* the lookup thread's name (or its reason) */
        strncpy(owner, s->owner, cap - 1);
    else if (!ow.lookups)
        set_owner(owner, cap, "unknown (lockowner=off)", &f->off);
    else if (was == SLOT_LOOKING)
        set_owner(owner, cap, "unknown (lookup too slow)", &f->during_lookup);
    else
        set_owner(owner, cap, "unknown (not looked up yet)", &f->before_lookup);
    owner[cap - 1] = '\0';
    if (was != SLOT_LOOKING)
        slot_release(jni, (uint32_t)k);
    return recorded ? LOCK_WAIT_LONG : LOCK_WAIT_SHORT;
}

/* The time bucket and LOOKUPS_PER_S; counts a lookup it allows. */
static bool budget_allows(int64_t now)
{
    ow.bucket_ns += (now - ow.bucket_at) / 100;
    ow.bucket_at = now;
    if (ow.bucket_ns > BURST_NS)
        ow.bucket_ns = BURST_NS;
    if (ow.bucket_ns <= 0)
        return false;
    if (now - ow.window_ns >= 1000000000) {
        ow.window_ns = now;
        ow.window_count = 0;
    }
    if (ow.window_count >= LOOKUPS_PER_S)
        return false;
    ow.window_count++;
    return true;
}

/* GetObjectMonitorUsage on `object`: the owner's name into owner[] ("" if none). */
static void look_up(jvmtiEnv *jvmti, JNIEnv *jni, jobject object, char *owner)
{
    struct fx_lock_owner_figures *f = &fx_lock_owner_fig;
    int64_t c0 = fx_now_ns();
    jvmtiMonitorUsage u;
    memset(&u, 0, sizeof(u));
    owner[0] = '\0';
    if ((*jvmti)->GetObjectMonitorUsage(jvmti, object, &u) == JVMTI_ERROR_NONE) {
        (*jvmti)->Deallocate(jvmti, (unsigned char *)u.waiters);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)u.notify_waiters);
        if (u.owner != NULL) {
            fx_lock_thread_name(jvmti, jni, u.owner, owner, LOCK_OWNER_MAX);
            (*jni)->DeleteLocalRef(jni, u.owner);
        }
    } else {
        lock_add(&fx_lock_fig.owner_failed, 1);
    }
    int64_t c1 = fx_now_ns(), d = c1 - c0;
    ow.bucket_ns -= d;
    lock_add(&f->lookups, 1);
    lock_add(&f->lookup_ns, (uint64_t)d);
    if ((uint64_t)d > __atomic_load_n(&f->lookup_max_ns, __ATOMIC_RELAXED))
        __atomic_store_n(&f->lookup_max_ns, (uint64_t)d, __ATOMIC_RELAXED);
}

/* Ends the lookup thread's hold of slot k: DONE, or, if its wait ended meanwhile, freed. */
static void finish(JNIEnv *jni, uint32_t k)
{
    if (!move(&slots[k], SLOT_LOOKING, SLOT_DONE))
        slot_release(jni, k); /* ENDED: its thread has gone on */
}

/* Whether a wait is in flight. After IDLE_TICKS ticks without one the period becomes IDLE_PERIOD
 * (10 wake-ups a second, not 4 per lock=: the thread's wake-ups were 1.5 % of a core on the lock
 * workload, docs/BENCHMARKS.md "The lock view's price, split (session 19)"), and each idle tick
 * (re-)arms `asleep`, so the next wait to begin hurries the thread back (fx_lock_wait_begin)
 * and is still seen at lock=/4 intervals from its start. seq_cst: the store of asleep before
 * the load of waiting here, the increment of waiting before the load of asleep there. */
static bool tick_has_waits(void)
{
    bool waits = __atomic_load_n(&ow.waiting, __ATOMIC_SEQ_CST) > 0;
    if (!waits && (ow.slow || ++ow.idle_ticks >= IDLE_TICKS)) {
        __atomic_store_n(&ow.asleep, 1, __ATOMIC_SEQ_CST);
        waits = __atomic_load_n(&ow.waiting, __ATOMIC_SEQ_CST) > 0; /* one began meanwhile */
        if (!waits && !ow.slow) {
            ow.slow = true;
            fx_periodic_set_period(&owners, IDLE_PERIOD);
        }
    }
    if (!waits)
        return false;
    ow.idle_ticks = 0;
    if (ow.slow || __atomic_load_n(&ow.asleep, __ATOMIC_RELAXED)) {
        __atomic_store_n(&ow.asleep, 0, __ATOMIC_SEQ_CST);
        if (ow.slow)
            fx_periodic_set_period(&owners, ow.period_ns);
        ow.slow = false;
    }
    return true;
}

/* One tick: takes the waits that lasted min/2 (up to TICK_BATCH), names each monitor's owner
 * once for all its waiters, or says why not. */
static void owners_tick(JNIEnv *jni, void *arg)
{
    (void)arg;
    if (!tick_has_waits())
        return;
    uint32_t batch[TICK_BATCH], n = 0;
    int64_t now = fx_now_ns();
    for (uint32_t k = 0; k < SLOTS && n < TICK_BATCH; k++) {
        if (__atomic_load_n(&slot_key[k], __ATOMIC_ACQUIRE) == 0)
            continue;
        struct wait_slot *s = &slots[k];
        if (state_of(s) == SLOT_WAITING && now - s->t0 >= (int64_t)(ow.min_ns / 2) &&
            move(s, SLOT_WAITING, SLOT_LOOKING))
            batch[n++] = k;
    }
    jvmtiEnv *jvmti = fx_jvmti();
    struct fx_lock_owner_figures *f = &fx_lock_owner_fig;
    for (uint32_t i = 0; i < n; i++) {
        struct wait_slot *s = &slots[batch[i]];
        if (!budget_allows(fx_now_ns())) {
            set_owner(s->owner, sizeof(s->owner), "unknown (budget)", &f->budget);
            finish(jni, batch[i]);
            continue;
        }
        look_up(jvmti, jni, s->object, s->owner);
        for (uint32_t j = i + 1; j < n; j++) { /* the same monitor's other waiters */
            struct wait_slot *o = &slots[batch[j]];
            if ((*jni)->IsSameObject(jni, o->object, s->object)) {
                memcpy(o->owner, s->owner, sizeof(o->owner));
                lock_add(&f->shared, 1);
                finish(jni, batch[j]);
                batch[j] = batch[--n];
                j--;
            }
        }
        finish(jni, batch[i]);
    }
}

static struct fx_periodic owners = {.name = "fxagent lock owners", .tick = owners_tick};

int fx_lock_owner_start(JNIEnv *jni, uint64_t min_ns, bool lookups)
{
    ow.min_ns = min_ns;
    ow.lookups = lookups;
    ow.bucket_ns = BURST_NS;
    ow.bucket_at = fx_now_ns();
    ow.window_ns = ow.bucket_at;
    ow.window_count = 0;
    ow.idle_ticks = 0;
    ow.slow = false;
    __atomic_store_n(&ow.asleep, 0, __ATOMIC_SEQ_CST); /* no hurry of a thread not started */
    if (!lookups)
        return FX_OK;
    /* A wait of min_ns is seen at least once after min_ns / 2 (and before it ends). */
    uint64_t period = min_ns / 4;
    ow.period_ns = period < 1000000 ? 1000000 : period > 50000000 ? 50000000 : period;
    owners.period_ns = ow.period_ns;
    int rc = fx_periodic_start(jni, &owners);
    if (rc != FX_OK) {
        ow.lookups = false;
        fx_log("lock: no thread for monitor owners: owners not looked up");
    }
    return rc;
}

void fx_lock_owner_stop(void)
{
    fx_periodic_stop(&owners);
}

bool fx_lock_owner_lookups(void)
{
    return ow.lookups;
}
