/* SPDX-License-Identifier: Apache-2.0 */
/* The oracle: inside a native method the calling thread is stopped at a known, walkable point,
 * so AsyncGetCallTrace and JVMTI GetStackTrace must return the same frames (jmethodID, and bci,
 * or "native" as ASGCT -3 / JVMTI -1), up to the depth limit; any difference is an error.
 * The ASGCT trace comes from the production SIGPROF handler (a probe the thread sends itself,
 * probe.c), so the check covers the handler's path; only a thread the agent has not registered
 * falls back to calling ASGCT directly, and the result says which path was taken. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jni.h>
#include <jvmti.h>

#include "fx_alloc.h"
#include "internal.h"

#define DEFAULT_DEPTH       2048
#define MAX_DEPTH           65535
#define FULL_REPORT_ROWS    80 /* longer stacks: head, the rows around the first difference, tail */
#define REPORT_CONTEXT_ROWS 8
#define SELF_WAIT_NS        1000000000 /* a self-probe is answered before the signal call returns */
#define BUSY_TRIES          1500       /* x BUSY_PAUSE_NS: validate mode holds a probe ~100 ms */
#define BUSY_PAUSE_NS       1000000
#define PACK_VIA_SIGNAL     ((jlong)1 << 49)

/* How the ASGCT trace was obtained. */
enum asgct_path {
    PATH_SIGNAL = 0,   /* the SIGPROF handler, with the thread's real ucontext */
    PATH_UNREGISTERED, /* direct call: the thread is not registered (or no agent setup) */
    PATH_BUSY,         /* direct call: validate mode kept the thread's probe too long */
    PATH_NO_ANSWER,    /* direct call: the handler did not answer, or is not fxagent's */
    PATH_NO_PROBE,     /* direct call: the probe cannot be used (no memory, retired, not sent) */
};

static const char *const path_names[] = {
        "ASGCT taken by the SIGPROF handler",
        "ASGCT called directly: this thread is not registered with the agent",
        "ASGCT called directly: the thread's probe stayed busy",
        "ASGCT called directly: the SIGPROF handler did not answer or is not fxagent's",
        "ASGCT called directly: the probe could not be used",
};

/* Only used when the agent has no environment or ASGCT pointer yet (a scratch agent). */
static jvmtiEnv *oracle_jvmti;
static fx_asgct_fn oracle_asgct;
static pthread_mutex_t oracle_lock = PTHREAD_MUTEX_INITIALIZER;

JNIEXPORT jlong JNICALL Java_fxagent_Oracle_check0(JNIEnv *env, jclass cls, jint depth);

/* An embedding launcher may load libjvm without RTLD_GLOBAL, hence the second lookup. */
static fx_asgct_fn find_asgct(void)
{
    void *sym = dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
    if (sym == NULL) {
        void *jvm = dlopen("libjvm.so", RTLD_LAZY | RTLD_NOLOAD);
        if (jvm != NULL) {
            sym = dlsym(jvm, "AsyncGetCallTrace");
            dlclose(jvm);
        }
    }
    fx_asgct_fn fn;
    memcpy(&fn, &sym, sizeof fn); /* ISO C has no object-to-function pointer cast */
    return fn;
}

/* The agent's environment; before the agent has one, the oracle's own: GetStackTrace and the
 * name lookups need no capability. */
static jvmtiEnv *get_jvmti(JNIEnv *env)
{
    jvmtiEnv *jvmti = fx_jvmti();
    if (jvmti != NULL) {
        return jvmti;
    }
    jvmti = __atomic_load_n(&oracle_jvmti, __ATOMIC_ACQUIRE);
    if (jvmti != NULL) {
        return jvmti;
    }
    pthread_mutex_lock(&oracle_lock);
    if (oracle_jvmti == NULL) {
        JavaVM *vm = NULL;
        void *got = NULL;
        if ((*env)->GetJavaVM(env, &vm) == JNI_OK &&
            (*vm)->GetEnv(vm, &got, JVMTI_VERSION_1_2) == JNI_OK) {
            __atomic_store_n(&oracle_jvmti, (jvmtiEnv *)got, __ATOMIC_RELEASE);
        }
    }
    jvmti = oracle_jvmti;
    pthread_mutex_unlock(&oracle_lock);
    return jvmti;
}

static fx_asgct_fn get_asgct(void)
{
    fx_asgct_fn fn = fx_sampling_asgct();
    if (fn != NULL) {
        return fn;
    }
    fn = __atomic_load_n(&oracle_asgct, __ATOMIC_ACQUIRE);
    if (fn == NULL) {
        fn = find_asgct();
        __atomic_store_n(&oracle_asgct, fn, __ATOMIC_RELEASE);
    }
    return fn;
}

/* The fallback: a null context; the thread is in native, so HotSpot walks from its last Java
 * frame. */
static int take_direct(JNIEnv *env, fx_asgct_frame *frames, int depth)
{
    fx_asgct_fn asgct = get_asgct();
    if (asgct == NULL) {
        return FX_STACKCMP_ASGCT_MISSING;
    }
    fx_asgct_trace trace = {.env_id = env, .num_frames = 0, .frames = frames};
    asgct(&trace, depth, NULL);
    return trace.num_frames;
}

/* A probe of the calling thread: it signals itself, and its own handler answers. Validate mode
 * may hold the probe while it checks this thread; that is waited out, boundedly. */
static enum asgct_path take_probe(struct fx_thread *self, fx_asgct_frame *frames, int depth,
                                  int32_t *num_frames)
{
    const struct timespec pause = {0, BUSY_PAUSE_NS};
    int rc = fx_probe_begin(self, (uint32_t)depth, false);
    for (int i = 0; rc == FX_ESTATE && i < BUSY_TRIES; i++) {
        nanosleep(&pause, NULL);
        rc = fx_probe_begin(self, (uint32_t)depth, false);
    }
    if (rc != FX_OK) {
        return rc == FX_ESTATE ? PATH_BUSY : PATH_NO_PROBE;
    }
    rc = fx_probe_run(self, SELF_WAIT_NS, frames, num_frames);
    fx_probe_end(self);
    if (rc == FX_OK) {
        return PATH_SIGNAL;
    }
    return rc == FX_ESTATE ? PATH_NO_ANSWER : PATH_NO_PROBE;
}

/* ASGCT's num_frames, through the signal handler when the thread is registered. */
static int take_asgct(JNIEnv *env, fx_asgct_frame *frames, int depth, enum asgct_path *path)
{
    struct fx_thread *self = fx_probe_self();
    *path = PATH_UNREGISTERED;
    if (self != NULL) {
        int32_t n = 0;
        *path = take_probe(self, frames, depth, &n);
        if (*path == PATH_SIGNAL) {
            return n;
        }
    }
    return take_direct(env, frames, depth);
}

/* The carrier of the current thread if that is a mounted virtual thread (JDK 21+), else NULL.
 * Thread.currentCarrierThread is internal; JNI may call it anyway. */
static jobject current_carrier(JNIEnv *env)
{
    jclass thread_cls = (*env)->FindClass(env, "java/lang/Thread");
    if (thread_cls == NULL) {
        (*env)->ExceptionClear(env);
        return NULL;
    }
    jmethodID cur =
            (*env)->GetStaticMethodID(env, thread_cls, "currentThread", "()Ljava/lang/Thread;");
    jmethodID carrier = cur == NULL
                                ? NULL
                                : (*env)->GetStaticMethodID(env, thread_cls, "currentCarrierThread",
                                                            "()Ljava/lang/Thread;");
    jobject result = NULL;
    if (carrier == NULL) {
        (*env)->ExceptionClear(env); /* before JDK 19: no virtual threads */
    } else {
        jobject self = (*env)->CallStaticObjectMethod(env, thread_cls, cur);
        jobject ct = (*env)->CallStaticObjectMethod(env, thread_cls, carrier);
        if (ct != NULL && !(*env)->IsSameObject(env, self, ct)) {
            result = ct;
        } else if (ct != NULL) {
            (*env)->DeleteLocalRef(env, ct);
        }
        if (self != NULL) {
            (*env)->DeleteLocalRef(env, self);
        }
    }
    (*env)->DeleteLocalRef(env, thread_cls);
    return result;
}

/* JVMTI gives a virtual thread's own frames only, down to Continuation.enter; ASGCT walks on
 * into the carrier's frames, so the reference goes on with what fx_stackcmp_join_carrier
 * appends. Returns the frames appended. */
static jint add_carrier_frames(JNIEnv *env, jvmtiEnv *jvmti, struct fx_stack *jv, int max)
{
    jobject carrier = current_carrier(env);
    if (carrier == NULL) {
        return 0;
    }
    jint n = 0, added = 0;
    fx_asgct_frame *frames = fx_calloc((size_t)max, sizeof *frames);
    if (frames != NULL &&
        fx_stackcmp_take_jvmti(jvmti, carrier, frames, max, &n) == JVMTI_ERROR_NONE) {
        added = fx_stackcmp_join_carrier(jv, fx_stackcmp_enter_special(env, jvmti), frames, n, max);
    }
    fx_free(frames);
    (*env)->DeleteLocalRef(env, carrier);
    return added;
}

/* A growable message; on allocation failure it keeps what it has and stops growing. */
struct text {
    char *p;
    size_t len;
    size_t cap;
};

__attribute__((format(printf, 2, 3))) static void text_add(struct text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    if (t->len + (size_t)n + 1 > t->cap) {
        size_t cap = (t->cap ? t->cap * 2 : 1024) + (size_t)n;
        char *p = fx_reallocarray(t->p, cap, 1);
        if (p == NULL) {
            return;
        }
        t->p = p;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

static bool row_shown(jint i, jint rows, jint first_diff)
{
    if (rows <= FULL_REPORT_ROWS) {
        return true;
    }
    return i < REPORT_CONTEXT_ROWS * 2 || i >= rows - REPORT_CONTEXT_ROWS ||
           (i >= first_diff - REPORT_CONTEXT_ROWS && i <= first_diff + REPORT_CONTEXT_ROWS);
}

static void add_row(struct text *t, jvmtiEnv *jvmti, JNIEnv *env, jint i,
                    const struct fx_stack *asgct, const struct fx_stack *jv)
{
    char a[512] = "-", g[512] = "-";
    bool in_a = i < asgct->count, in_g = i < jv->count;
    if (in_a) {
        fx_stackcmp_frame_name(jvmti, env, &asgct->frames[i], a, sizeof a);
    }
    if (in_g) {
        fx_stackcmp_frame_name(jvmti, env, &jv->frames[i], g, sizeof g);
    }
    bool differ = !(in_a && in_g && fx_stackcmp_same_frame(&asgct->frames[i], &jv->frames[i]));
    text_add(t, "%s %4d  %-60s  %s\n", differ ? ">>" : "  ", (int)i, a, g);
}

/* When ASGCT lost a run of frames and then agrees again to its bottom, says which: that is
 * the shape of a walk that jumped over part of the stack. */
static void add_gap(struct text *t, const struct fx_stack *asgct, const struct fx_stack *jv,
                    const struct fx_stack_verdict *v)
{
    jint tail = asgct->count - v->first_diff;
    jint resume = jv->count - tail;
    if (v->truncated || tail <= 0 || resume <= v->first_diff) {
        return;
    }
    for (jint i = 0; i < tail; i++) {
        if (!fx_stackcmp_same_frame(&asgct->frames[v->first_diff + i], &jv->frames[resume + i])) {
            return;
        }
    }
    text_add(t,
             "ASGCT skips GetStackTrace frames #%d..#%d (%d frames), then agrees to the bottom\n",
             (int)v->first_diff, (int)resume - 1, (int)(resume - v->first_diff));
}

/* Both stacks side by side, one row per frame, ">>" on the rows that differ. */
static char *report(jvmtiEnv *jvmti, JNIEnv *env, const struct fx_stack *asgct,
                    const struct fx_stack *jv, const struct fx_stack_verdict *v, int depth,
                    enum asgct_path path)
{
    struct text t = {0};
    text_add(&t,
             "fxagent oracle: AsyncGetCallTrace and GetStackTrace disagree at frame %d "
             "(ASGCT num_frames=%d %s, GetStackTrace frames=%d%s%s, depth=%d; %s)\n",
             (int)v->first_diff, (int)asgct->count, fx_stackcmp_status_name(asgct->count),
             (int)(v->truncated ? depth : jv->count), v->truncated ? " (truncated)" : "",
             v->carrier > 0 ? ", virtual thread's then its carrier's" : "", depth,
             path_names[path]);
    add_gap(&t, asgct, jv, v);
    text_add(&t, "   %4s  %-60s  %s\n", "#", "AsyncGetCallTrace", "GetStackTrace");
    jint rows = asgct->count > jv->count ? asgct->count : jv->count;
    bool gap = false;
    for (jint i = 0; i < rows; i++) {
        if (!row_shown(i, rows, v->first_diff)) {
            if (!gap) {
                text_add(&t, "   ...\n");
            }
            gap = true;
            continue;
        }
        gap = false;
        add_row(&t, jvmti, env, i, asgct, jv);
    }
    return t.p;
}

static void throw_named(JNIEnv *env, const char *cls_name, const char *msg)
{
    jclass cls = (*env)->FindClass(env, cls_name);
    if (cls != NULL) {
        (*env)->ThrowNew(env, cls, msg != NULL ? msg : "fxagent oracle: (message lost: no memory)");
    }
}

static int effective_depth(jint requested)
{
    if (requested > 0) {
        return requested > MAX_DEPTH ? MAX_DEPTH : (int)requested;
    }
    /* The agent's depth= option, so check() compares what a sample would keep. */
    uint32_t d = fx_opt()->depth;
    return d > 0 && d <= MAX_DEPTH ? (int)d : DEFAULT_DEPTH;
}

static jlong pack(const struct fx_stack_verdict *v, enum asgct_path path)
{
    jlong carrier = v->carrier > 0xffff ? 0xffff : v->carrier;
    return (jlong)v->compared | (v->truncated ? ((jlong)1 << 32) : 0) | (carrier << 33) |
           (path == PATH_SIGNAL ? PACK_VIA_SIGNAL : 0);
}

/* Takes both stacks and compares them; throws AssertionError on any disagreement. */
static jlong check(JNIEnv *env, jvmtiEnv *jvmti, int depth, fx_asgct_frame *a_buf,
                   fx_asgct_frame *g_buf)
{
    enum asgct_path path;
    struct fx_stack asgct = {.count = take_asgct(env, a_buf, depth, &path), .frames = a_buf};
    struct fx_stack jv = {.count = 0, .frames = g_buf};
    /* One frame more than the limit, so a stack deeper than the limit is known to be cut. */
    jvmtiError err = fx_stackcmp_take_jvmti(jvmti, NULL, g_buf, depth + 1, &jv.count);
    if (err != JVMTI_ERROR_NONE) {
        char msg[128];
        snprintf(msg, sizeof msg, "fxagent oracle: GetStackTrace failed: JVMTI error %d", err);
        throw_named(env, "java/lang/IllegalStateException", msg);
        return 0;
    }
    jint carrier = 0;
    if (asgct.count != jv.count && jv.count <= depth) {
        carrier = add_carrier_frames(env, jvmti, &jv, depth + 1);
    }
    struct fx_stack_verdict v = fx_stackcmp_compare(&asgct, &jv, depth);
    v.carrier = carrier;
    if (v.first_diff >= 0) {
        char *msg = report(jvmti, env, &asgct, &jv, &v, depth, path);
        throw_named(env, "java/lang/AssertionError", msg);
        fx_free(msg);
        return 0;
    }
    return pack(&v, path);
}

/* Returns (frames compared) | (truncated << 32) | (carrier frames << 33) | (via the SIGPROF
 * handler << 49): see fxagent.Oracle. */
JNIEXPORT jlong JNICALL Java_fxagent_Oracle_check0(JNIEnv *env, jclass cls, jint depth)
{
    (void)cls;
    jvmtiEnv *jvmti = get_jvmti(env);
    if (jvmti == NULL) {
        throw_named(env, "java/lang/IllegalStateException",
                    "fxagent oracle: no JVMTI environment (GetEnv failed)");
        return 0;
    }
    int d = effective_depth(depth);
    fx_asgct_frame *a_buf = fx_calloc((size_t)d, sizeof *a_buf);
    fx_asgct_frame *g_buf = fx_calloc((size_t)d + 1, sizeof *g_buf);
    jlong result = 0;
    if (a_buf == NULL || g_buf == NULL) {
        throw_named(env, "java/lang/OutOfMemoryError", "fxagent oracle: stack buffers");
    } else {
        result = check(env, jvmti, d, a_buf, g_buf);
    }
    fx_free(g_buf);
    fx_free(a_buf);
    return result;
}
