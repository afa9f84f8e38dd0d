/* SPDX-License-Identifier: Apache-2.0 */
/* Virtual threads (issue 22), the sampling side: which virtual thread each carrier runs.
 *  - JVMTI 21+: the capability can_support_virtual_threads and HotSpot's extension events
 *    com.sun.hotspot.events.VirtualThreadMount / VirtualThreadUnmount (GetExtensionEvents,
 *    SetExtensionEventCallback; a non-NULL callback enables them). HotSpot posts Mount after
 *    VirtualThreadStart and Unmount before VirtualThreadEnd, so the two events cover a virtual
 *    thread's whole life. Both run on the carrier itself, which writes its own slot in its
 *    struct fx_thread (vt_seq, vt_id); its signal handler copies the slot into the sample
 *    (signal_handler.c). Neither side locks or allocates.
 *  - Names: the first mount of an id seen since its cache line was last overwritten reads the
 *    thread's name (a JNI field read and a copy into our buffer) and queues it; the drain takes
 *    the queue (fx_vthreads_take_names). Unnamed virtual threads queue nothing.
 *  - Waits: each unmount and mount also goes to vtwait.c (the waits of at least vtwait=).
 *  - Wall mode: a carrier with a mounted virtual thread is running, or pinned when the carrier's
 *    JavaThread is blocked (fx_vthreads_wall_state); so is one whose JVMTI state says it
 *    carries one while its slot saw no mount yet (mounted before the agent attached).
 * On JDK < 21 (no such events) everything here stays off and costs nothing.
 * It calls only base/; threads.c and the handler do not call it. */
#include "internal.h"

#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MOUNT_EVENT   "com.sun.hotspot.events.VirtualThreadMount"
#define UNMOUNT_EVENT "com.sun.hotspot.events.VirtualThreadUnmount"
#define SEEN_SLOTS    16384 /* power of two: ids whose name was read (a cache, not a set) */
#define NAME_QUEUE    1024

/* jvmtiCapabilities.can_support_virtual_threads (JDK 21+) is bit 4 of byte 5; the headers the
 * agent builds against may be JDK 17's, where that bit is still padding. */
#define CAP_VT_BYTE 5
#define CAP_VT_BIT  0x10

static struct {
    int on; /* atomic: the events are enabled */
    jfieldID tid_field, name_field, eetop;
    long thread_state_off;                         /* JavaThread::_thread_state, -1 unknown */
    uint64_t mounts, unmounts, no_carrier;         /* atomic */
    uint64_t names_read, names_queued, names_lost; /* atomic */
    uint64_t seen[SEEN_SLOTS];                     /* atomic: direct-mapped */
    pthread_mutex_t lock;                          /* the queue; held for a copy only */
    uint32_t n;
    struct fx_vthread_name q[NAME_QUEUE];
} vt = {.thread_state_off = -1, .lock = PTHREAD_MUTEX_INITIALIZER};

/* The kernel tid, cached: a gettid system call per mount would cost ~1 us at 100k mounts/s.
 * Not read in signal context (the handler keeps to its tid table). */
static __thread pid_t self_tid;

static struct fx_thread *self(void)
{
    if (self_tid == 0)
        self_tid = (pid_t)syscall(SYS_gettid);
    return fx_signal_handler_lookup_sigsafe(self_tid);
}

/* The slot's writer side: vt_seq odd while vt_id changes (struct fx_thread). */
static void slot_write(struct fx_thread *t, uint64_t id)
{
    uint32_t seq = __atomic_load_n(&t->vt_seq, __ATOMIC_RELAXED);
    __atomic_store_n(&t->vt_seq, seq | 1u, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&t->vt_id, id, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&t->vt_seq, (seq | 1u) + 1u, __ATOMIC_RELAXED);
}

static void queue_name(JNIEnv *jni, jthread vthread, uint64_t id)
{
    struct fx_vthread_name e = {.id = id};
    jstring s = vt.name_field != NULL ? (*jni)->GetObjectField(jni, vthread, vt.name_field) : NULL;
    if (s == NULL)
        return;
    jsize len = (*jni)->GetStringLength(jni, s);
    jsize utf = (*jni)->GetStringUTFLength(jni, s);
    if (len > 0 && utf < (jsize)sizeof(e.name))
        (*jni)->GetStringUTFRegion(jni, s, 0, len, e.name);
    else if (len > 0) /* too long: cut at a character whose UTF-8 still fits */
        (*jni)->GetStringUTFRegion(jni, s, 0, (jsize)sizeof(e.name) / 3 - 1, e.name);
    (*jni)->DeleteLocalRef(jni, s);
    if ((*jni)->ExceptionCheck(jni)) {
        (*jni)->ExceptionClear(jni);
        return;
    }
    __atomic_fetch_add(&vt.names_read, 1, __ATOMIC_RELAXED);
    if (e.name[0] == '\0')
        return;
    pthread_mutex_lock(&vt.lock);
    bool room = vt.n < NAME_QUEUE;
    if (room)
        vt.q[vt.n++] = e;
    pthread_mutex_unlock(&vt.lock);
    __atomic_fetch_add(room ? &vt.names_queued : &vt.names_lost, 1, __ATOMIC_RELAXED);
}

static void mounted(JNIEnv *jni, jthread vthread)
{
    __atomic_fetch_add(&vt.mounts, 1, __ATOMIC_RELAXED);
    struct fx_thread *t = self();
    if (t == NULL || jni == NULL || vthread == NULL) {
        __atomic_fetch_add(&vt.no_carrier, 1, __ATOMIC_RELAXED);
        return;
    }
    uint64_t id = (uint64_t)(*jni)->GetLongField(jni, vthread, vt.tid_field);
    slot_write(t, id);
    fx_vtwait_mount(id);
    uint64_t *seen = &vt.seen[(id * 0x9E3779B97F4A7C15ull) >> 50];
    if (__atomic_load_n(seen, __ATOMIC_RELAXED) != id) {
        __atomic_store_n(seen, id, __ATOMIC_RELAXED);
        queue_name(jni, vthread, id);
    }
}

/* HotSpot calls extension events through the variadic jvmtiExtensionEvent type: (JNIEnv *,
 * jthread) follow the environment. */
static void JNICALL on_mount(jvmtiEnv *jvmti, ...)
{
    va_list ap;
    va_start(ap, jvmti);
    JNIEnv *jni = va_arg(ap, JNIEnv *);
    jthread vthread = va_arg(ap, jthread);
    va_end(ap);
    mounted(jni, vthread);
}

static void JNICALL on_unmount(jvmtiEnv *jvmti, ...)
{
    __atomic_fetch_add(&vt.unmounts, 1, __ATOMIC_RELAXED);
    (void)jvmti;
    struct fx_thread *t = self();
    if (t != NULL) {
        fx_vtwait_unmount(__atomic_load_n(&t->vt_id, __ATOMIC_RELAXED));
        slot_write(t, 0);
    }
}

/* Agent_OnLoad or attach, with the JVMTI setup: the capability if the VM has it. */
void fx_vthreads_setup(jvmtiEnv *jvmti)
{
    jvmtiCapabilities pot, want;
    memset(&pot, 0, sizeof(pot));
    memset(&want, 0, sizeof(want));
    if ((*jvmti)->GetPotentialCapabilities(jvmti, &pot) != JVMTI_ERROR_NONE ||
        !(((unsigned char *)&pot)[CAP_VT_BYTE] & CAP_VT_BIT))
        return;
    ((unsigned char *)&want)[CAP_VT_BYTE] |= CAP_VT_BIT;
    if ((*jvmti)->AddCapabilities(jvmti, &want) != JVMTI_ERROR_NONE)
        return;
    jint n = 0;
    jvmtiExtensionEventInfo *ev = NULL;
    if ((*jvmti)->GetExtensionEvents(jvmti, &n, &ev) != JVMTI_ERROR_NONE)
        return;
    jint mount = -1, unmount = -1;
    for (jint i = 0; i < n; i++) {
        if (strcmp(ev[i].id, MOUNT_EVENT) == 0)
            mount = ev[i].extension_event_index;
        else if (strcmp(ev[i].id, UNMOUNT_EVENT) == 0)
            unmount = ev[i].extension_event_index;
        for (jint k = 0; k < ev[i].param_count; k++)
            (*jvmti)->Deallocate(jvmti, (unsigned char *)ev[i].params[k].name);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)ev[i].params);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)ev[i].id);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)ev[i].short_description);
    }
    (*jvmti)->Deallocate(jvmti, (unsigned char *)ev);
    if (mount < 0 || unmount < 0)
        return;
    /* Field ids first (fx_vthreads_start), then the callbacks: see there. */
    __atomic_store_n(&vt.on, mount * 1000 + unmount + 1, __ATOMIC_RELEASE);
}

/* A start (VMInit, attach, restart), with JNI: the fields the callbacks read, then the events. */
void fx_vthreads_start(JNIEnv *jni)
{
    int on = __atomic_load_n(&vt.on, __ATOMIC_ACQUIRE);
    if (on <= 0)
        return;
    fx_vtwait_start(fx_opt()->vtwait_ns);
    if (vt.tid_field != NULL)
        return;
    jclass c = (*jni)->FindClass(jni, "java/lang/Thread");
    if (c != NULL) {
        vt.tid_field = (*jni)->GetFieldID(jni, c, "tid", "J");
        vt.name_field = (*jni)->GetFieldID(jni, c, "name", "Ljava/lang/String;");
        vt.eetop = (*jni)->GetFieldID(jni, c, "eetop", "J");
        (*jni)->DeleteLocalRef(jni, c);
    }
    if ((*jni)->ExceptionCheck(jni))
        (*jni)->ExceptionClear(jni);
    vt.thread_state_off = fx_vmstructs_thread_state_offset();
    if (vt.tid_field == NULL)
        return;
    jvmtiEnv *jvmti = fx_jvmti();
    int mount = (on - 1) / 1000, unmount = (on - 1) % 1000;
    /* An extension event needs its callback and, like any event, to be enabled by its index. */
    if ((*jvmti)->SetExtensionEventCallback(jvmti, mount, (jvmtiExtensionEvent)on_mount) !=
                JVMTI_ERROR_NONE ||
        (*jvmti)->SetExtensionEventCallback(jvmti, unmount, (jvmtiExtensionEvent)on_unmount) !=
                JVMTI_ERROR_NONE ||
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, (jvmtiEvent)mount, NULL) !=
                JVMTI_ERROR_NONE ||
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, (jvmtiEvent)unmount, NULL) !=
                JVMTI_ERROR_NONE)
        fx_log("virtual thread mount events could not be enabled: samples name carriers only");
}

bool fx_vthreads_on(void)
{
    return vt.tid_field != NULL;
}

size_t fx_vthreads_take_names(struct fx_vthread_name *out, size_t cap)
{
    pthread_mutex_lock(&vt.lock);
    size_t n = vt.n < cap ? vt.n : cap;
    memcpy(out, vt.q, n * sizeof(*out));
    memmove(vt.q, vt.q + n, (vt.n - n) * sizeof(*out));
    vt.n -= (uint32_t)n;
    pthread_mutex_unlock(&vt.lock);
    return n;
}

void fx_vthreads_counts(struct fx_vthreads_counts *out)
{
    out->mounts = __atomic_load_n(&vt.mounts, __ATOMIC_RELAXED);
    out->unmounts = __atomic_load_n(&vt.unmounts, __ATOMIC_RELAXED);
    out->no_carrier = __atomic_load_n(&vt.no_carrier, __ATOMIC_RELAXED);
    out->names_read = __atomic_load_n(&vt.names_read, __ATOMIC_RELAXED);
    out->names_queued = __atomic_load_n(&vt.names_queued, __ATOMIC_RELAXED);
    out->names_lost = __atomic_load_n(&vt.names_lost, __ATOMIC_RELAXED);
}

/* The mount events stay on while stopped (vtwait.c): atomic stores, as their adds. The name
 * cache stays: a name already queued is the model's. */
void fx_vthreads_new_recording(void)
{
    uint64_t *c[] = {&vt.mounts,     &vt.unmounts,     &vt.no_carrier,
                     &vt.names_read, &vt.names_queued, &vt.names_lost};
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
        __atomic_store_n(c[i], 0, __ATOMIC_RELAXED);
    fx_vtwait_new_recording();
}

/* HotSpot's JavaThreadState (javaThread.hpp): _thread_blocked, stable since JDK 6. */
#define JT_BLOCKED 10

/* HotSpot 21+ (JvmtiEnvBase::get_thread_state) reports a thread carrying a virtual thread as
 * WAITING indefinitely with none of the bits a platform thread's wait has (parked, sleeping,
 * Object.wait, monitor): the only state a carrier mounted before the agent attached (its slot
 * saw no mount yet) can be told by. */
#define WAIT_REASONS                                                                               \
    (JVMTI_THREAD_STATE_PARKED | JVMTI_THREAD_STATE_SLEEPING | JVMTI_THREAD_STATE_IN_OBJECT_WAIT | \
     JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER | JVMTI_THREAD_STATE_WAITING_WITH_TIMEOUT)
static bool carrying_by_state(jint s)
{
    return (s & JVMTI_THREAD_STATE_WAITING) && (s & JVMTI_THREAD_STATE_WAITING_INDEFINITELY) &&
           !(s & WAIT_REASONS);
}

uint8_t fx_vthreads_wall_state(JNIEnv *jni, const struct fx_thread *t, jint jvmti_state,
                               uint8_t carrier_state)
{
    if (__atomic_load_n(&t->vt_id, __ATOMIC_RELAXED) == 0 &&
        !(__atomic_load_n(&vt.on, __ATOMIC_ACQUIRE) > 0 &&
          __atomic_load_n(&t->vt_seq, __ATOMIC_RELAXED) == 0 && carrying_by_state(jvmti_state)))
        return carrier_state;
    /* HotSpot reports a carrier as WAITING while it carries a virtual thread, whatever that
     * thread does: the carrier's JavaThread says whether it runs or is blocked. */
    jlong jt = vt.eetop != NULL && vt.thread_state_off >= 0
                       ? (*jni)->GetLongField(jni, t->ref, vt.eetop)
                       : 0;
    if (jt == 0)
        return FX_WS_RUNNABLE;
    int32_t st;
    memcpy(&st, (const char *)(intptr_t)jt + vt.thread_state_off, sizeof(st));
    return st == JT_BLOCKED ? FX_WS_PINNED : FX_WS_RUNNABLE;
}
