/* SPDX-License-Identifier: Apache-2.0 */
/* The producers of markers: the GC callbacks (where JVMTI allows almost nothing) record a
 * timestamp, compiler threads a jmethodID with its code size and inlining count, application
 * threads (the fxagent.Markers natives) a name and text. Each appends one record to a bounded
 * queue (markers_queue.h); a full queue drops the record and counts it. markers.c turns the
 * records into markers. */
#include "markers_queue.h"

#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct fx_marker_queues fx_mq = {
        .gc = FX_EVQ_INITIALIZER,
        .jit = FX_EVQ_INITIALIZER,
        .user = FX_EVQ_INITIALIZER,
};

bool fx_markers_on(void)
{
    return fx_opt()->markers != FX_MARKERS_OFF;
}

/* --- producers: JVMTI callbacks --- */

/* GarbageCollectionStart/Finish: JVMTI allows no JNI and almost no JVMTI here; a clock read
 * and a memcpy into preallocated memory are all this does. */
static void gc_event(uint32_t kind)
{
    struct gc_rec r = {.t = fx_now_ns(), .kind = kind};
    fx_evq_push(&fx_mq.gc, &r, sizeof(r), NULL, 0, NULL, 0);
}

static void JNICALL on_gc_start(jvmtiEnv *jvmti)
{
    (void)jvmti;
    gc_event(GC_START);
}

static void JNICALL on_gc_finish(jvmtiEnv *jvmti)
{
    (void)jvmti;
    gc_event(GC_FINISH);
}

void fx_markers_fill_callbacks(jvmtiEventCallbacks *cb)
{
    cb->GarbageCollectionStart = on_gc_start;
    cb->GarbageCollectionFinish = on_gc_finish;
}

/* GC events only while a recording with markers runs: a stopped agent gets no callback. */
static void gc_events(jvmtiEnv *jvmti, jvmtiEventMode mode)
{
    jvmtiCapabilities have;
    memset(&have, 0, sizeof(have));
    if (jvmti == NULL || (*jvmti)->GetCapabilities(jvmti, &have) != JVMTI_ERROR_NONE ||
        !have.can_generate_garbage_collection_events) {
        if (mode == JVMTI_ENABLE)
            fx_log("this JVM gives no garbage collection events: no GC markers");
        return;
    }
    static const jvmtiEvent gc[] = {JVMTI_EVENT_GARBAGE_COLLECTION_START,
                                    JVMTI_EVENT_GARBAGE_COLLECTION_FINISH};
    for (size_t i = 0; i < 2; i++)
        fx_jvmti_failed((*jvmti)->SetEventNotificationMode(jvmti, mode, gc[i], NULL),
                        "SetEventNotificationMode(GC)");
}

/* Each start with markers: the queues (freed at the stop before) and the GC events. */
int fx_markers_setup(void)
{
    if (!fx_markers_on())
        return FX_OK;
    int rc = fx_evq_init(&fx_mq.gc, GC_QUEUE_BYTES);
    if (rc == FX_OK)
        rc = fx_evq_init(&fx_mq.jit, JIT_QUEUE_BYTES);
    if (rc == FX_OK)
        rc = fx_evq_init(&fx_mq.user, USER_QUEUE_BYTES);
    if (rc != FX_OK) {
        fx_log("out of memory for the marker queues: no markers");
        return rc;
    }
    gc_events(fx_jvmti(), JVMTI_ENABLE);
    return FX_OK;
}

/* A stop: no GC event while stopped (the queues stay until the stop's file is written). */
void fx_markers_stop_events(void)
{
    gc_events(fx_jvmti(), JVMTI_DISABLE);
}

/* Stopped, the stop's pass over (it drained them), the consumer paused: the queues' pages go
 * back; the next start with markers makes them again. */
void fx_markers_free_queues(void)
{
    fx_evq_free(&fx_mq.gc);
    fx_evq_free(&fx_mq.jit);
    fx_evq_free(&fx_mq.user);
}

void fx_markers_compiled_method_load(jmethodID method, jint code_size, const void *compile_info)
{
    if (!fx_evq_ready(&fx_mq.jit))
        return;
    struct jit_rec r = {.t = fx_now_ns(),
                        .method = method,
                        .code_size = code_size,
                        .inlined = fx_jit_info_inlined(method, compile_info),
                        .tid = (int32_t)syscall(SYS_gettid)};
    fx_evq_push(&fx_mq.jit, &r, sizeof(r), NULL, 0, NULL, 0);
}

/* --- producers: fxagent.Markers natives (application threads; not signal context) --- */

JNIEXPORT jboolean JNICALL Java_fxagent_Markers_enabled0(JNIEnv *env, jclass cls);
JNIEXPORT void JNICALL Java_fxagent_Markers_mark0(JNIEnv *env, jclass cls, jstring name,
                                                  jstring text);
JNIEXPORT jlong JNICALL Java_fxagent_Markers_begin0(JNIEnv *env, jclass cls, jstring name,
                                                    jstring text);
JNIEXPORT void JNICALL Java_fxagent_Markers_end0(JNIEnv *env, jclass cls, jlong handle);

/* Copies s as modified UTF-8 into buf (cap bytes), cut to whole characters; returns the length.
 * A character takes at most 3 bytes, so cap / 3 characters always fit. */
static uint16_t copy_string(JNIEnv *env, jstring s, char *buf, jsize cap)
{
    if (s == NULL)
        return 0;
    jsize chars = (*env)->GetStringLength(env, s);
    jsize bytes = (*env)->GetStringUTFLength(env, s);
    if (bytes > cap) {
        chars = cap / 3;
        bytes = -1;
        memset(buf, 0, (size_t)cap + 1); /* JNI does not promise a terminating NUL */
    }
    (*env)->GetStringUTFRegion(env, s, 0, chars, buf);
    if (fx_jni_failed(env))
        return 0;
    return (uint16_t)(bytes >= 0 ? bytes : (jsize)strnlen(buf, (size_t)cap));
}

static void user_push(JNIEnv *env, uint8_t kind, int64_t handle, jstring name, jstring text)
{
    char nb[USER_NAME_MAX + 1], tb[USER_TEXT_MAX + 1];
    struct user_rec r = {
            .t = fx_now_ns(), .handle = handle, .tid = (int32_t)syscall(SYS_gettid), .kind = kind};
    r.name_len = copy_string(env, name, nb, USER_NAME_MAX);
    r.text_len = copy_string(env, text, tb, USER_TEXT_MAX);
    fx_evq_push(&fx_mq.user, &r, sizeof(r), nb, r.name_len, tb, r.text_len);
}

static bool user_live(void)
{
    return fx_evq_ready(&fx_mq.user) && fx_phase() == FX_PHASE_LIVE;
}

JNIEXPORT jboolean JNICALL Java_fxagent_Markers_enabled0(JNIEnv *env, jclass cls)
{
    (void)env, (void)cls;
    return user_live() ? JNI_TRUE : JNI_FALSE;
}

JNIEXPORT void JNICALL Java_fxagent_Markers_mark0(JNIEnv *env, jclass cls, jstring name,
                                                  jstring text)
{
    (void)cls;
    if (user_live())
        user_push(env, USER_MARK, 0, name, text);
}

JNIEXPORT jlong JNICALL Java_fxagent_Markers_begin0(JNIEnv *env, jclass cls, jstring name,
                                                    jstring text)
{
    (void)cls;
    if (!user_live())
        return 0;
    int64_t h = __atomic_add_fetch(&fx_mq.next_handle, 1, __ATOMIC_RELAXED);
    user_push(env, USER_BEGIN, h, name, text);
    return h;
}

JNIEXPORT void JNICALL Java_fxagent_Markers_end0(JNIEnv *env, jclass cls, jlong handle)
{
    (void)cls;
    if (user_live() && handle > 0)
        user_push(env, USER_END, handle, NULL, NULL);
}
