/* SPDX-License-Identifier: Apache-2.0 */
/* Private to agent/model: lock waits (issue 18) between their producers (locks_events.c: the
 * JVMTI monitor callbacks and the Unsafe.park wrapper, on the waiting threads) and their
 * consumer (locks.c, the model's owner). One queue of records; figures as atomics. */
#ifndef FX_LOCKS_H
#define FX_LOCKS_H

#include "markers_queue.h"

#define LOCK_QUEUE_BYTES (1024u * 1024)
#define LOCK_FRAMES_MAX  256 /* frames of a waiting stack kept (jvmtiFrameInfo, 16 bytes each) */
#define LOCK_NAME_MAX    200 /* bytes of a class or owner name kept */

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
    uint64_t slots_full;   /* MonitorContendedEnter with no free wait slot */
    uint64_t owner_failed; /* GetObjectMonitorUsage or GetThreadInfo failed */
    uint64_t stack_failed; /* GetStackTrace failed: recorded without a stack */
    uint64_t owner_ns;     /* time in GetObjectMonitorUsage (the owner of monitors) */
    uint64_t owner_calls;
    uint64_t callback_ns; /* time in the recording of a wait (stack, names, queue) */
};

extern struct evq fx_lock_queue;
extern struct fx_lock_figures fx_lock_fig;

/* locks_events.c: arm and disarm the producers for a recording with lock_ns > 0. FX_OK, or an
 * error already logged (the monitors may work while parks do not: *park_note says why). */
int fx_lock_events_start(JNIEnv *jni, uint64_t lock_ns);
void fx_lock_events_stop(JNIEnv *jni);
/* How the park wrapper got the original Unsafe.park, or why parks are not recorded. */
const char *fx_lock_park_note(void);

#endif
