/* SPDX-License-Identifier: Apache-2.0 */
/* Virtual threads (issue 22), the sampling side: which virtual thread each carrier runs, one of
 * two ways chosen at each start (the profile's meta.extra "Virtual threads" says which):
 *  - "JavaThread field" (JDK 24+, agent loaded at launch, vtwait=0, not validate mode): no mount
 *    events. HotSpot keeps in JavaThread::_monitor_owner_id the java.lang.Thread id of what the
 *    carrier runs (Thread.setCurrentThread, at each mount and unmount); VMStructs exports its
 *    offset and the handler reads it in its own JavaThread (signal_handler.c, fx_sig.vt_owner_off).
 *    Names come from the standard VirtualThreadStart event, once per virtual thread, in a JVMTI
 *    environment of our own (the main one's callbacks table is sized by the headers we build
 *    against, which may predate it). The mount events cost ~0.25 us per mount and unmount pair
 *    on a yield loop (docs/BENCHMARKS.md), which this way does not pay.
 *  - "mount events", else (JDK 21-23, an attach, vtwait= on, validate mode):
 *    the capability can_support_virtual_threads and HotSpot's extension events
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
 * Not read by the handler: the field's offset is published in fx_sig.vt_owner_off.
 * It calls only base/; threads.c and the handler do not call it. */
#include "internal.h"

#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MOUNT_EVENT    "com.sun.hotspot.events.VirtualThreadMount"
#define UNMOUNT_EVENT  "com.sun.hotspot.events.VirtualThreadUnmount"
#define SEEN_SLOTS     16384 /* power of two: ids whose name was read (a cache, not a set) */
#define VT_START_EVENT 87    /* JVMTI_EVENT_VIRTUAL_THREAD_START (JDK 21+ headers only) */
#define NAME_QUEUE     1024

/* jvmtiCapabilities.can_support_virtual_threads (JDK 21+) is bit 4 of byte 5; the headers the
 * agent builds against may be JDK 17's, where that bit is still padding. */
#define CAP_VT_BYTE 5
#define CAP_VT_BIT  0x10

enum route {
    ROUTE_OFF,
    ROUTE_FIELD,
    ROUTE_EVENTS
};
static const char *const route_names[] = {"off", "JavaThread field", "mount events"};
static const char TRANSITIONS_ON[] =
        "on: every mount and unmount calls into the VM while a JVMTI agent is loaded "
        "(-XX:+UnlockExperimentalVMOptions -XX:-DoJVMTIVirtualThreadTransitions: off)";
static const char TRANSITIONS_OFF[] =
        "off (-XX:-DoJVMTIVirtualThreadTransitions): no virtual-thread events, names unknown";

static struct {
    int on; /* atomic: the events exist (their indexes), set by fx_vthreads_setup */
    bool at_launch, cap, events_on;
    enum route route;        /* this recording's */
    const char *why;         /* why not the JavaThread field, NULL if it is */
    const char *transitions; /* HotSpot's DoJVMTIVirtualThreadTransitions, as the profile says */
    jvmtiEnv *names_env;     /* our own environment for VirtualThreadStart (the field's names) */
    jfieldID tid_field, name_field, eetop;
    long thread_state_off;                         /* JavaThread::_thread_state, -1 unknown */
    long owner_off;                                /* JavaThread::_monitor_owner_id, -1 */
    uint64_t mounts, unmounts, no_carrier;         /* atomic */
    uint64_t names_read, names_queued, names_lost; /* atomic */
    uint64_t seen[SEEN_SLOTS];                     /* atomic: direct-mapped */
    pthread_mutex_t lock;                          /* the queue; held for a copy only */
    uint32_t n;
    struct fx_vthread_name q[NAME_QUEUE];
} vt = {.thread_state_off = -1, .owner_off = -1, .lock = PTHREAD_MUTEX_INITIALIZER};

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
    fx_vtwait_mount(jni, vthread, id);
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

/* The capability on an environment; false if the VM lacks it or refuses. */
static bool add_capability(jvmtiEnv *jvmti)
{
    jvmtiCapabilities pot, want;
    memset(&pot, 0, sizeof(pot));
    memset(&want, 0, sizeof(want));
    if ((*jvmti)->GetPotentialCapabilities(jvmti, &pot) != JVMTI_ERROR_NONE ||
        !(((unsigned char *)&pot)[CAP_VT_BYTE] & CAP_VT_BIT))
        return false;
    ((unsigned char *)&want)[CAP_VT_BYTE] |= CAP_VT_BIT;
    return (*jvmti)->AddCapabilities(jvmti, &want) == JVMTI_ERROR_NONE;
}

/* Agent_OnLoad or attach, with the JVMTI setup: the capability (JVMTI calls on virtual threads
 * work with it: lock=, alloc=, validate; it costs a mount nothing measurable on top of what any
 * JVMTI environment costs, docs/BENCHMARKS.md) and the events' indexes, if the VM has them. */
void fx_vthreads_setup(jvmtiEnv *jvmti)
{
    jvmtiPhase phase = JVMTI_PHASE_LIVE;
    vt.at_launch =
            (*jvmti)->GetPhase(jvmti, &phase) == JVMTI_ERROR_NONE && phase == JVMTI_PHASE_ONLOAD;
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
    if (mount < 0 || unmount < 0 || !(vt.cap = add_capability(jvmti)))
        return;
    /* Field ids first (fx_vthreads_start), then the callbacks: see there. */
    __atomic_store_n(&vt.on, mount * 1000 + unmount + 1, __ATOMIC_RELEASE);
}

/* VirtualThreadStart (our own environment, the JavaThread field's way): the thread's name, once.
 * It runs on the new virtual thread, mounted. */
static void JNICALL on_vthread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread vthread)
{
    (void)jvmti;
    if (jni == NULL || vthread == NULL)
        return;
    uint64_t id = (uint64_t)(*jni)->GetLongField(jni, vthread, vt.tid_field);
    __atomic_store_n(&vt.seen[(id * 0x9E3779B97F4A7C15ull) >> 50], id, __ATOMIC_RELAXED);
    queue_name(jni, vthread, id);
}

/* Our own JVMTI environment for the names (the capability lives there, not in the main one);
 * once per JVM. false if the VM has no such event or refuses. The callbacks table is indexed
 * from VMInit (50) and this event is 87: a table of our own, as the headers we build against
 * may predate it. */
typedef void(JNICALL *event_fn)(void);
static event_fn names_cb[VT_START_EVENT - JVMTI_EVENT_VM_INIT + 1];

static bool names_env(void)
{
    if (vt.names_env != NULL)
        return true;
    JavaVM *vm = fx_jvm();
    jvmtiEnv *env = NULL;
    if (vm == NULL || (*vm)->GetEnv(vm, (void **)&env, JVMTI_VERSION_1_2) != JNI_OK || env == NULL)
        return false;
    names_cb[VT_START_EVENT - JVMTI_EVENT_VM_INIT] = (event_fn)on_vthread_start;
    if (!add_capability(env) ||
        (*env)->SetEventCallbacks(env, (const jvmtiEventCallbacks *)(const void *)names_cb,
                                  (jint)sizeof(names_cb)) != JVMTI_ERROR_NONE ||
        (*env)->SetEventNotificationMode(env, JVMTI_ENABLE, (jvmtiEvent)VT_START_EVENT, NULL) !=
                JVMTI_ERROR_NONE) {
        (*env)->DisposeEnvironment(env);
        return false;
    }
    vt.names_env = env;
    return true;
}

/* The mount events on (the capability first, once) or off. */
static bool mount_events(bool on)
{
    if (on == vt.events_on)
        return true;
    jvmtiEnv *jvmti = fx_jvmti();
    int ix = __atomic_load_n(&vt.on, __ATOMIC_ACQUIRE);
    int mount = (ix - 1) / 1000, unmount = (ix - 1) % 1000;
    if (on && !vt.cap)
        return false;
    /* An extension event needs its callback and, like any event, to be enabled by its index. */
    jvmtiEventMode mode = on ? JVMTI_ENABLE : JVMTI_DISABLE;
    if ((on && ((*jvmti)->SetExtensionEventCallback(jvmti, mount, (jvmtiExtensionEvent)on_mount) !=
                        JVMTI_ERROR_NONE ||
                (*jvmti)->SetExtensionEventCallback(
                        jvmti, unmount, (jvmtiExtensionEvent)on_unmount) != JVMTI_ERROR_NONE)) ||
        (*jvmti)->SetEventNotificationMode(jvmti, mode, (jvmtiEvent)mount, NULL) !=
                JVMTI_ERROR_NONE ||
        (*jvmti)->SetEventNotificationMode(jvmti, mode, (jvmtiEvent)unmount, NULL) !=
                JVMTI_ERROR_NONE)
        return false;
    vt.events_on = on;
    return true;
}

/* Why this start cannot take the JavaThread field (NULL if it can); jni is the caller's. */
static const char *field_refused(JNIEnv *jni, long *off)
{
    *off = 0;
    if (!vt.at_launch)
        return "agent attached (threads mounted before have no name but at a mount)";
    if (fx_opt()->vtwait_ns > 0)
        return "vtwait= on (waits are timed by the mount events)";
    if (fx_opt()->validate)
        return "validate mode";
    jthread self = NULL;
    jvmtiEnv *jvmti = fx_jvmti();
    if (vt.eetop == NULL || (*jvmti)->GetCurrentThread(jvmti, &self) != JVMTI_ERROR_NONE)
        return "no java.lang.Thread.eetop";
    jlong jt = (*jni)->GetLongField(jni, self, vt.eetop);
    (*jni)->DeleteLocalRef(jni, self);
    *off = jt != 0 ? fx_vmstructs_owner_id_env_offset((long)((intptr_t)jni - (intptr_t)jt)) : 0;
    if (*off == 0)
        return "JavaThread::_monitor_owner_id not in VMStructs (JDK < 24)";
    if (!names_env())
        return "no VirtualThreadStart event for the names";
    return NULL;
}

/* While any JVMTI environment exists, HotSpot (JDK 21+) makes every mount and unmount call into
 * the VM for JVMTI's sake (JvmtiVTMSTransitionDisabler), whatever the agent asks for: that is
 * nearly all of the per-mount cost of a JVMTI profiler (docs/BENCHMARKS.md, issue 22). The
 * experimental -XX:-DoJVMTIVirtualThreadTransitions turns it off, and with it every
 * virtual-thread event: the JavaThread field still works, names do not come. */
static const char *transitions_flag(void)
{
    const bool *flag = fx_jvm_symbol("DoJVMTIVirtualThreadTransitions");
    if (flag == NULL)
        return "unknown (DoJVMTIVirtualThreadTransitions not in libjvm's symbols)";
    return *flag ? TRANSITIONS_ON : TRANSITIONS_OFF;
}

/* A start (VMInit, attach, restart), with JNI: the fields the callbacks read, then the way. */
void fx_vthreads_start(JNIEnv *jni)
{
    int on = __atomic_load_n(&vt.on, __ATOMIC_ACQUIRE);
    if (on <= 0)
        return;
    fx_vtwait_start(fx_opt()->vtwait_ns);
    if (vt.tid_field == NULL) {
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
        vt.owner_off = fx_vmstructs_owner_id_offset();
        vt.transitions = transitions_flag();
    }
    if (vt.tid_field == NULL)
        return;
    long off = 0;
    vt.why = field_refused(jni, &off);
    if (vt.why == NULL && mount_events(false)) {
        vt.route = ROUTE_FIELD;
        __atomic_store_n(&fx_sig.vt_owner_off, off, __ATOMIC_RELEASE);
        return;
    }
    __atomic_store_n(&fx_sig.vt_owner_off, 0L, __ATOMIC_RELEASE);
    if (vt.transitions == TRANSITIONS_OFF) {
        vt.route = ROUTE_OFF; /* HotSpot would post no mount event */
        fx_log("virtual threads not tracked (%s): HotSpot posts no mount events with "
               "-XX:-DoJVMTIVirtualThreadTransitions; samples name carriers only",
               vt.why);
        return;
    }
    vt.route = ROUTE_EVENTS;
    if (vt.why == NULL)
        vt.why = "the mount events could not be turned off";
    if (!mount_events(true)) {
        vt.route = ROUTE_OFF;
        fx_log("virtual thread mount events could not be enabled: samples name carriers only");
    }
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
    out->route = route_names[vt.route];
    out->why = vt.route == ROUTE_FIELD ? NULL : vt.why;
    out->transitions = vt.transitions;
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

/* HotSpot's JavaThreadState (javaThread.hpp): _thread_in_native, _thread_blocked, stable
 * since JDK 6. */
#define JT_IN_NATIVE 4
#define JT_BLOCKED   10

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

/* The carrier's JavaThread (java.lang.Thread.eetop), 0 if it has none or is unknown. */
static jlong java_thread(JNIEnv *jni, const struct fx_thread *t)
{
    return vt.eetop != NULL && t->ref != NULL ? (*jni)->GetLongField(jni, t->ref, vt.eetop) : 0;
}

/* Carries a virtual thread now: by the JavaThread field (its way), else by the events' slot or,
 * mounted before the agent attached (the slot saw no mount yet), by its JVMTI state. */
static bool carrying(jlong jt, const struct fx_thread *t, jint jvmti_state)
{
    if (__atomic_load_n(&fx_sig.vt_owner_off, __ATOMIC_ACQUIRE) != 0) {
        int64_t owner = 0;
        if (jt != 0 && vt.owner_off > 0)
            memcpy(&owner, (const char *)(intptr_t)jt + vt.owner_off, sizeof(owner));
        return owner > 0 && t->java_tid != 0 && (uint64_t)owner != t->java_tid;
    }
    return __atomic_load_n(&t->vt_id, __ATOMIC_RELAXED) != 0 ||
           (__atomic_load_n(&vt.on, __ATOMIC_ACQUIRE) > 0 &&
            __atomic_load_n(&t->vt_seq, __ATOMIC_RELAXED) == 0 && carrying_by_state(jvmti_state));
}

uint8_t fx_vthreads_wall_state(JNIEnv *jni, const struct fx_thread *t, jint jvmti_state,
                               uint8_t carrier_state)
{
    jlong jt = java_thread(jni, t);
    if (!carrying(jt, t, jvmti_state))
        return carrier_state;
    /* HotSpot reports a carrier as WAITING while it carries a virtual thread, whatever that
     * thread does: the carrier's JavaThread says whether it runs or is blocked. */
    if (jt == 0 || vt.thread_state_off < 0)
        return FX_WS_RUNNABLE;
    int32_t st;
    memcpy(&st, (const char *)(intptr_t)jt + vt.thread_state_off, sizeof(st));
    if (st == JT_BLOCKED)
        return FX_WS_PINNED;
    /* In native code it cannot unmount either: pinned if it is not on CPU (the drain's test). */
    return st == JT_IN_NATIVE ? FX_WS_PINNED_NATIVE : FX_WS_RUNNABLE;
}
