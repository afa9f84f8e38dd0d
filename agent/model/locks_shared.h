/* SPDX-License-Identifier: Apache-2.0 */
/* Private to agent/model: lock waits (issue 18) between their producers (locks_events.c: the
 * JVMTI monitor callbacks and the Unsafe.park wrapper, on the waiting threads) and their
 * consumer (locks.c, the model's owner). One queue of records; figures as atomics. */
#ifndef FX_LOCKS_H
#define FX_LOCKS_H

#include <sys/syscall.h>
#include <unistd.h>

#include "markers_queue.h"

#define LOCK_QUEUE_BYTES (1024u * 1024)
#define LOCK_FRAMES_MAX  256 /* frames of a waiting stack kept (jvmtiFrameInfo, 16 bytes each) */
#define LOCK_NAME_MAX    200 /* bytes of a class or owner name kept */
#define LOCK_OWNER_MAX   64  /* bytes of a monitor owner's name kept (or why it is unknown) */

enum lock_kind {
    LOCK_MONITOR = 1,
    LOCK_PARK = 2
};

/* One recorded wait: the header, nframes jvmtiFrameInfo (leaf first), the class name (a JVM
 * signature, "Ljava/lang/Object;"), the owner's name. */
struct lock_rec {
    int64_t t0, t1;
    int32_t tid;
    uint8_t kind;
    uint8_t truncated;
    uint16_t nframes;
    uint16_t class_len, owner_len;
    uint32_t pad;
};

/* What the producers count (atomics) and how the park wrapper was installed. */
struct fx_lock_figures {
    uint64_t monitor_seen, monitor_recorded, park_seen, park_recorded;
    uint64_t slots_full;                /* MonitorContendedEnter with no free wait slot */
    uint64_t monitor_short, park_short; /* waits that ended below lock= */
    uint64_t entered_calls;             /* MonitorContendedEntered callbacks */
    /* Time in our callbacks, 1 in TIMED_ONE_IN: every MonitorContendedEnter, and the
     * MonitorContendedEntered of a wait below lock= (the storm's price). */
    uint64_t enter_ns, enter_timed, short_ns, short_timed;
    uint64_t owner_failed; /* GetObjectMonitorUsage or GetThreadInfo failed */
    uint64_t stack_failed; /* GetStackTrace failed: recorded without a stack */
    uint64_t callback_ns;  /* time in the recording of a wait (stack, names, queue) */
};

/* locks_owner.c: monitor owners looked up and why not (atomics). */
struct fx_lock_owner_figures {
    uint64_t lookups, lookup_ns, lookup_max_ns; /* GetObjectMonitorUsage */
    uint64_t shared;        /* a lookup's owner given to another waiter of the same monitor */
    uint64_t budget;        /* not looked up: the budget (LOOKUPS_PER_S, the 1 % rule) */
    uint64_t off;           /* recorded waits with lockowner=off */
    uint64_t during_lookup; /* recorded waits that ended while their lookup ran */
    uint64_t before_lookup; /* recorded waits that ended before the lookup thread saw them */
    uint64_t hurried;       /* waits that woke the lookup thread from its idle period */
};

static inline void lock_add(uint64_t *counter, uint64_t n)
{
    __atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

static inline int32_t lock_tid(void)
{
    return (int32_t)syscall(SYS_gettid);
}

extern struct fx_evq fx_lock_queue;
extern struct fx_lock_figures fx_lock_fig;

extern struct fx_lock_owner_figures fx_lock_owner_fig;

/* locks_owner.c, below locks_events.c: the monitor waits in flight and their owners. */
int fx_lock_owner_start(JNIEnv *jni, uint64_t min_ns, bool lookups);
void fx_lock_owner_stop(void);
bool fx_lock_owner_lookups(void);
/* MonitorContendedEnter: notes the wait in the thread's slot; false: no free slot. */
bool fx_lock_wait_begin(JNIEnv *jni, jobject object);
enum lock_wait {
    LOCK_WAIT_NONE,  /* no wait noted (its enter came before the start, or found no slot) */
    LOCK_WAIT_SHORT, /* below min_ns */
    LOCK_WAIT_LONG,  /* *t0, *t1 and owner[] are set: the owner's name, "" if none held it
                        when looked up, or "unknown (why)" */
};
/* MonitorContendedEntered: ends the thread's wait. */
enum lock_wait fx_lock_wait_end(JNIEnv *jni, uint64_t min_ns, int64_t *t0, int64_t *t1, char *owner,
                                size_t cap);
/* The name of thread t into buf ("" when unknown, counted in owner_failed). */
void fx_lock_thread_name(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, char *buf, size_t cap);

/* locks_events.c: arm and disarm the producers for a recording with lock_ns > 0. FX_OK, or an
 * error already logged (the monitors may work while parks do not: *park_note says why). */
int fx_lock_events_start(JNIEnv *jni, uint64_t lock_ns);
void fx_lock_events_stop(JNIEnv *jni);
/* locks_bind.c: cls.name(sig) bound to fn by RegisterNatives called from Java code of the boot
 * loader, so the JDK prints no "Re-registering of platform native method" (issue 30); false:
 * not bound (the class could not be defined, or RegisterNatives failed). */
bool fx_lock_bind_native(JNIEnv *jni, jclass cls, const char *name, const char *sig, void *fn);
/* locks_idle.c: a park's waiting stack (n jvmtiFrameInfo, leaf first) shows a thread waiting
 * for work (an idle pool thread in a queue's take, ...), not contention. Model owner only. */
bool fx_lock_idle_wait(JNIEnv *jni, const void *frames, uint32_t n);
/* How the park wrapper got the original Unsafe.park, or why parks are not recorded. */
const char *fx_lock_park_note(void);

#endif
