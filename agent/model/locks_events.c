/* SPDX-License-Identifier: Apache-2.0 */
/* The producers of lock waits (issue 18), on the waiting threads themselves:
 *  - monitors: MonitorContendedEnter notes the wait in the thread's wait slot,
 * MonitorContendedEntered ends it and, when it reached lock=, records it with the object's class,
 * the owner the lookup thread found (locks_owner.c) and the thread's stack (GetStackTrace);
 *  - parks: Unsafe.park is re-bound (RegisterNatives, from boot-loader code: locks_bind.c) to
 *    park_hook while a recording has lock=, and back to the original at its stop. The hook reads
 * the thread's parkBlocker (and, for an AbstractOwnableSynchronizer, its exclusive owner) before it
 * parks, times the original, and records a wait with a blocker that reached lock=. The original's
 * address comes from the NativeMethodBind event when the agent was loaded at startup (the JVM binds
 * Unsafe's natives after Agent_OnLoad), else, attached late, from libjvm's symbol Unsafe_Park
 * (.symtab). Records go to one queue (locks_shared.h); nothing here touches the model. */
#include "locks_shared.h"

#include <stdio.h>
#include <string.h>

struct fx_evq fx_lock_queue = FX_EVQ_INITIALIZER;
struct fx_lock_figures fx_lock_fig;

typedef void(JNICALL *park_fn)(JNIEnv *, jobject, jboolean, jlong);

/* Shared by the hooks (atomics) and the start/stop (control's lock). */
static struct {
    uint64_t min_ns;  /* atomic: lock= of the running recording, 0 while stopped */
    park_fn original; /* atomic: Unsafe.park as the JVM bound it */
    bool from_bind;   /* the original came from NativeMethodBind */
    bool hooked;      /* park_hook is bound */
    jclass thread_cls, aos_cls, unsafe_cls; /* global references */
    jfieldID blocker_fid, owner_fid;
    char note[160];
} lk;

/* One wait into the queue: the current thread's stack, the class of `object`, the owner. */
static void record(jvmtiEnv *jvmti, JNIEnv *jni, jobject object, const char *owner,
                   enum lock_kind kind, int64_t t0, int64_t t1)
{
    int64_t c0 = fx_now_ns();
    jvmtiFrameInfo frames[LOCK_FRAMES_MAX];
    jint n = 0;
    uint32_t depth = fx_opt()->depth < LOCK_FRAMES_MAX ? fx_opt()->depth : LOCK_FRAMES_MAX;
    if ((*jvmti)->GetStackTrace(jvmti, NULL, 0, (jint)depth + 1, frames, &n) != JVMTI_ERROR_NONE) {
        lock_add(&fx_lock_fig.stack_failed, 1);
        n = 0;
    }
    struct lock_rec r = {.t0 = t0, .t1 = t1, .tid = lock_tid(), .kind = (uint8_t)kind};
    if ((uint32_t)n > depth) {
        n = (jint)depth;
        r.truncated = 1;
    }
    char buf[2 * LOCK_NAME_MAX];
    char *sig = NULL;
    jclass cls = object != NULL ? (*jni)->GetObjectClass(jni, object) : NULL;
    if (cls == NULL || (*jvmti)->GetClassSignature(jvmti, cls, &sig, NULL) != JVMTI_ERROR_NONE)
        sig = NULL;
    size_t cl = sig != NULL ? strnlen(sig, LOCK_NAME_MAX) : 0;
    size_t ol = strnlen(owner, LOCK_NAME_MAX);
    if (cl)
        memcpy(buf, sig, cl);
    memcpy(buf + cl, owner, ol);
    r.nframes = (uint16_t)n;
    r.class_len = (uint16_t)cl;
    r.owner_len = (uint16_t)ol;
    fx_evq_push(&fx_lock_queue, &r, sizeof(r), frames, (uint32_t)n * sizeof(frames[0]), buf,
                (uint32_t)(cl + ol));
    if (sig != NULL)
        (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
    if (cls != NULL)
        (*jni)->DeleteLocalRef(jni, cls);
    lock_add(kind == LOCK_MONITOR ? &fx_lock_fig.monitor_recorded : &fx_lock_fig.park_recorded, 1);
    lock_add(&fx_lock_fig.callback_ns, (uint64_t)(fx_now_ns() - c0));
}

/* --- monitors: the wait slots and the owners are locks_owner.c's --- */

/* 1 in TIMED_ONE_IN callbacks times itself (two clock reads), for meta.extra. */
#define TIMED_ONE_IN 64

static int64_t timed_start(uint64_t n)
{
    return n % TIMED_ONE_IN == 0 ? fx_now_ns() : 0;
}

static void timed_end(int64_t c0, uint64_t *ns, uint64_t *count)
{
    if (c0 != 0) {
        lock_add(ns, (uint64_t)(fx_now_ns() - c0));
        lock_add(count, 1);
    }
}

static void JNICALL on_contended_enter(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object)
{
    (void)jvmti, (void)thread;
    if (__atomic_load_n(&lk.min_ns, __ATOMIC_ACQUIRE) == 0)
        return;
    struct fx_lock_figures *f = &fx_lock_fig;
    int64_t c0 = timed_start(__atomic_fetch_add(&f->monitor_seen, 1, __ATOMIC_RELAXED));
    if (!fx_lock_wait_begin(jni, object))
        lock_add(&f->slots_full, 1);
    timed_end(c0, &f->enter_ns, &f->enter_timed);
}

static void JNICALL on_contended_entered(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
                                         jobject object)
{
    (void)thread;
    struct fx_lock_figures *f = &fx_lock_fig;
    int64_t c0 = timed_start(__atomic_fetch_add(&f->entered_calls, 1, __ATOMIC_RELAXED));
    int64_t t0, t1;
    char owner[LOCK_OWNER_MAX];
    uint64_t min = __atomic_load_n(&lk.min_ns, __ATOMIC_ACQUIRE);
    switch (fx_lock_wait_end(jni, min, &t0, &t1, owner, sizeof(owner))) {
    case LOCK_WAIT_LONG:
        record(jvmti, jni, object, owner, LOCK_MONITOR, t0, t1);
        break;
    case LOCK_WAIT_SHORT:
        lock_add(&f->monitor_short, 1);
        timed_end(c0, &f->short_ns, &f->short_timed);
        break;
    case LOCK_WAIT_NONE:
        break;
    }
}

/* --- parks --- */

static void JNICALL park_hook(JNIEnv *jni, jobject unsafe, jboolean absolute, jlong time)
{
    park_fn orig = __atomic_load_n(&lk.original, __ATOMIC_ACQUIRE);
    uint64_t min = __atomic_load_n(&lk.min_ns, __ATOMIC_ACQUIRE);
    jvmtiEnv *jvmti = fx_jvmti();
    jthread self = NULL;
    jobject blocker = NULL;
    if (min != 0 && (*jvmti)->GetCurrentThread(jvmti, &self) == JVMTI_ERROR_NONE)
        blocker = (*jni)->GetObjectField(jni, self, lk.blocker_fid);
    if (blocker == NULL) { /* a bare LockSupport.park(): no lock to name */
        orig(jni, unsafe, absolute, time);
        return;
    }
    jobject owner = (*jni)->IsInstanceOf(jni, blocker, lk.aos_cls)
                            ? (*jni)->GetObjectField(jni, blocker, lk.owner_fid)
                            : NULL;
    int64_t t0 = fx_now_ns();
    orig(jni, unsafe, absolute, time);
    int64_t t1 = fx_now_ns();
    lock_add(&fx_lock_fig.park_seen, 1);
    if (t1 - t0 >= (int64_t)min) {
        char name[64] = "";
        if (owner != NULL)
            fx_lock_thread_name(jvmti, jni, owner, name, sizeof(name));
        record(jvmti, jni, blocker, name, LOCK_PARK, t0, t1);
    } else {
        lock_add(&fx_lock_fig.park_short, 1);
    }
    (*jni)->DeleteLocalRef(jni, blocker);
    if (owner != NULL)
        (*jni)->DeleteLocalRef(jni, owner);
    (*jni)->DeleteLocalRef(jni, self);
}

static bool is_unsafe_park(jvmtiEnv *jvmti, jmethodID method)
{
    char *name = NULL, *sig = NULL, *csig = NULL;
    jclass cls = NULL;
    bool yes = false;
    if ((*jvmti)->GetMethodName(jvmti, method, &name, &sig, NULL) == JVMTI_ERROR_NONE &&
        strcmp(name, "park") == 0 && strcmp(sig, "(ZJ)V") == 0 &&
        (*jvmti)->GetMethodDeclaringClass(jvmti, method, &cls) == JVMTI_ERROR_NONE &&
        (*jvmti)->GetClassSignature(jvmti, cls, &csig, NULL) == JVMTI_ERROR_NONE)
        yes = strcmp(csig, "Ljdk/internal/misc/Unsafe;") == 0;
    (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
    return yes;
}

/* Bindings seen before JVMTI could name their method (the primordial phase, where Unsafe's
 * natives are registered): kept by jmethodID and matched with Unsafe.park's at the first start. */
#define EARLY_BINDS 1024
static struct {
    jmethodID method;
    void *address;
} early[EARLY_BINDS];
static uint32_t n_early; /* atomic */

/* Every native binding while the agent lives (enabled from Agent_OnLoad): only Unsafe.park's is
 * kept, and never our own hook's (our RegisterNatives comes here too). */
static void JNICALL on_native_bind(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID method,
                                   void *address, void **new_address)
{
    (void)jni, (void)thread, (void)new_address;
    if (address == (void *)park_hook || lk.original != NULL)
        return;
    char *name = NULL;
    if ((*jvmti)->GetMethodName(jvmti, method, &name, NULL, NULL) != JVMTI_ERROR_NONE) {
        uint32_t i = __atomic_fetch_add(&n_early, 1, __ATOMIC_ACQ_REL);
        if (i < EARLY_BINDS)
            early[i].method = method, early[i].address = address;
        return;
    }
    (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
    if (!is_unsafe_park(jvmti, method))
        return;
    __atomic_store_n(&lk.original, (park_fn)address, __ATOMIC_RELEASE);
    lk.from_bind = true;
}

/* The early binding of Unsafe.park, matched by jmethodID now that the class can be named. */
static park_fn park_from_early_binds(JNIEnv *jni)
{
    jmethodID park = (*jni)->GetMethodID(jni, lk.unsafe_cls, "park", "(ZJ)V");
    if (park == NULL) {
        (*jni)->ExceptionClear(jni);
        return NULL;
    }
    uint32_t n = __atomic_load_n(&n_early, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n && i < EARLY_BINDS; i++) {
        if (early[i].method == park)
            return (park_fn)early[i].address;
    }
    return NULL;
}

/* Attached late: HotSpot's Unsafe_Park is a local symbol of libjvm's .symtab. */
static park_fn park_from_symbol(void)
{
    return (park_fn)fx_jvm_symbol("Unsafe_Park");
}

static jclass global_class(JNIEnv *jni, const char *name)
{
    jclass c = (*jni)->FindClass(jni, name);
    jclass g = c != NULL ? (*jni)->NewGlobalRef(jni, c) : NULL;
    if (c == NULL)
        (*jni)->ExceptionClear(jni);
    else
        (*jni)->DeleteLocalRef(jni, c);
    return g;
}

static bool park_refs(JNIEnv *jni)
{
    if (lk.unsafe_cls != NULL)
        return true;
    lk.thread_cls = global_class(jni, "java/lang/Thread");
    lk.aos_cls = global_class(jni, "java/util/concurrent/locks/AbstractOwnableSynchronizer");
    lk.unsafe_cls = global_class(jni, "jdk/internal/misc/Unsafe");
    if (lk.thread_cls == NULL || lk.aos_cls == NULL || lk.unsafe_cls == NULL)
        return false;
    lk.blocker_fid = (*jni)->GetFieldID(jni, lk.thread_cls, "parkBlocker", "Ljava/lang/Object;");
    lk.owner_fid =
            (*jni)->GetFieldID(jni, lk.aos_cls, "exclusiveOwnerThread", "Ljava/lang/Thread;");
    if (lk.blocker_fid == NULL || lk.owner_fid == NULL) {
        (*jni)->ExceptionClear(jni);
        return false;
    }
    return true;
}

/* Through locks_bind.c: a plain RegisterNatives here would make the JDK print a warning on the
 * application's stdout. */
static bool bind_park(JNIEnv *jni, void *fn)
{
    return fx_lock_bind_native(jni, lk.unsafe_cls, "park", "(ZJ)V", fn);
}

static void park_start(JNIEnv *jni)
{
    if (lk.hooked)
        return;
    const char *why = NULL;
    if (!park_refs(jni))
        why = "parks not recorded: Unsafe, Thread.parkBlocker or AbstractOwnableSynchronizer "
              "not found";
    park_fn orig = lk.original;
    if (why == NULL && orig == NULL && (orig = park_from_early_binds(jni)) != NULL)
        lk.from_bind = true;
    if (why == NULL && orig == NULL)
        orig = park_from_symbol();
    if (orig != NULL)
        __atomic_store_n(&lk.original, orig, __ATOMIC_RELEASE);
    if (why == NULL && orig == NULL)
        why = "parks not recorded: Unsafe.park's binding was not seen (NativeMethodBind) and "
              "libjvm has no symbol Unsafe_Park";
    else if (why == NULL && !bind_park(jni, (void *)park_hook))
        why = "parks not recorded: RegisterNatives(Unsafe.park) failed (locks_bind.c)";
    if (why != NULL) {
        snprintf(lk.note, sizeof(lk.note), "%s", why);
        fx_log("lock: %s", why);
        return;
    }
    lk.hooked = true;
    snprintf(lk.note, sizeof(lk.note), "Unsafe.park wrapped (RegisterNatives); original from %s",
             lk.from_bind ? "NativeMethodBind" : "libjvm's symbol Unsafe_Park");
}

const char *fx_lock_park_note(void)
{
    return lk.note[0] ? lk.note : "lock= off";
}

static void monitor_events(jvmtiEventMode mode)
{
    jvmtiEnv *jvmti = fx_jvmti();
    fx_jvmti_failed((*jvmti)->SetEventNotificationMode(jvmti, mode,
                                                       JVMTI_EVENT_MONITOR_CONTENDED_ENTER, NULL),
                    "SetEventNotificationMode(MonitorContendedEnter)");
    fx_jvmti_failed((*jvmti)->SetEventNotificationMode(jvmti, mode,
                                                       JVMTI_EVENT_MONITOR_CONTENDED_ENTERED, NULL),
                    "SetEventNotificationMode(MonitorContendedEntered)");
}

int fx_lock_events_start(JNIEnv *jni, uint64_t lock_ns)
{
    int rc = fx_evq_init(&fx_lock_queue, LOCK_QUEUE_BYTES);
    if (rc != FX_OK) {
        fx_log("lock: no memory for the lock queue: lock waits not recorded");
        return rc;
    }
    fx_lock_owner_start(jni, lock_ns, fx_opt()->lockowner == FX_LOCKOWNER_ON);
    __atomic_store_n(&lk.min_ns, lock_ns, __ATOMIC_RELEASE);
    monitor_events(JVMTI_ENABLE);
    park_start(jni);
    return FX_OK;
}

/* The hook stays callable (a thread may be parked inside it) and passes straight through once
 * min_ns is 0; the original binding is restored so nothing of ours stays in the JVM's path. */
void fx_lock_events_stop(JNIEnv *jni)
{
    __atomic_store_n(&lk.min_ns, 0, __ATOMIC_RELEASE);
    monitor_events(JVMTI_DISABLE);
    fx_lock_owner_stop();
    if (lk.hooked && jni != NULL && bind_park(jni, (void *)lk.original))
        lk.hooked = false;
}

/* --- setup: from jvmti_events.c at Agent_OnLoad / attach --- */

void fx_locks_add_capabilities(jvmtiCapabilities *opt)
{
    opt->can_generate_monitor_events = 1;
    opt->can_get_monitor_info = 1;
    opt->can_generate_native_method_bind_events = 1;
}

void fx_locks_fill_callbacks(jvmtiEventCallbacks *cb)
{
    cb->MonitorContendedEnter = on_contended_enter;
    cb->MonitorContendedEntered = on_contended_entered;
    cb->NativeMethodBind = on_native_bind;
}

void fx_locks_setup(void)
{
    jvmtiEnv *jvmti = fx_jvmti();
    jvmtiCapabilities have;
    if ((*jvmti)->GetCapabilities(jvmti, &have) == JVMTI_ERROR_NONE &&
        have.can_generate_native_method_bind_events)
        fx_jvmti_failed((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE,
                                                           JVMTI_EVENT_NATIVE_METHOD_BIND, NULL),
                        "SetEventNotificationMode(NativeMethodBind)");
}
