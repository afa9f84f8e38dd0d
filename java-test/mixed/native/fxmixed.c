/* SPDX-License-Identifier: Apache-2.0 */
/* libfxmixed.so: the JNI library of the mixed-mode workloads (issue 16). fxmixed_burn_cpu is
 * the native function a profile must later show by name under JniBurn.burn; it is exported and
 * never inlined so its symbol covers the loop. The call counter lets the smoke test prove the
 * native code ran. CThread.start starts a pthread named "fxmixed-burner" that the JVM never
 * sees (not attached): fxmixed_cthread_main calls fxmixed_cthread_spin until CThread.join; a
 * profile must show it as its own track with these two C frames. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include <jni.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* What javac -h would declare for fxagent.mixed.JniBurn, and the exported burn function. */
JNIEXPORT jlong JNICALL Java_fxagent_mixed_JniBurn_burn(JNIEnv *env, jclass cls, jint millis);
JNIEXPORT jlong JNICALL Java_fxagent_mixed_JniBurn_calls(JNIEnv *env, jclass cls);
__attribute__((visibility("default"))) uint64_t fxmixed_burn_cpu(int millis);
JNIEXPORT jlong JNICALL Java_fxagent_mixed_JniBurn_upcall(JNIEnv *env, jclass cls, jint times);
__attribute__((visibility("default"))) jlong fxmixed_call_java(JNIEnv *env, jclass cls, jint times);
JNIEXPORT jlong JNICALL Java_fxagent_mixed_JniAlloc_allocate(JNIEnv *env, jclass cls, jint count);
__attribute__((visibility("default"))) jlong fxmixed_alloc_objects(JNIEnv *env, jint count);
JNIEXPORT jboolean JNICALL Java_fxagent_mixed_CThread_start(JNIEnv *env, jclass cls);
JNIEXPORT jlong JNICALL Java_fxagent_mixed_CThread_join(JNIEnv *env, jclass cls);
__attribute__((visibility("default"))) void *fxmixed_cthread_main(void *arg);
__attribute__((visibility("default"))) uint64_t fxmixed_cthread_spin(uint64_t x);

static volatile int64_t calls; /* only the workload's one thread calls in */

static int64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spins on integer arithmetic until `millis` of this thread's CPU time have passed. */
__attribute__((noinline, visibility("default"))) uint64_t fxmixed_burn_cpu(int millis)
{
    int64_t until = cpu_ns() + (int64_t)millis * 1000000;
    uint64_t x = 88172645463325252u, spins = 0;
    do {
        for (int i = 0; i < 4096; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        spins++;
    } while (cpu_ns() < until);
    return x ^ spins;
}

JNIEXPORT jlong JNICALL Java_fxagent_mixed_JniBurn_burn(JNIEnv *env, jclass cls, jint millis)
{
    (void)env;
    (void)cls;
    calls++;
    return (jlong)fxmixed_burn_cpu(millis);
}

JNIEXPORT jlong JNICALL Java_fxagent_mixed_JniBurn_calls(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    return calls;
}

/* Issue 32: Java -> JniBurn.upcall -> C (this helper) -> CallStaticLongMethod -> JniBurn.javaBurn,
 * `times` short calls, so that a profile shows the C frames between the two Java parts of one
 * stack (and javaBurn, called thousands of times, is compiled as a method, not left in the
 * on-stack-replacement code of one long loop). Not inlined, the calls in a loop: its frame
 * stays on the stack. */
__attribute__((noinline, visibility("default"))) jlong fxmixed_call_java(JNIEnv *env, jclass cls,
                                                                         jint times)
{
    jmethodID m = (*env)->GetStaticMethodID(env, cls, "javaBurn", "(I)J");
    if (m == NULL)
        return -1;
    jlong v = 0;
    for (jint i = 0; i < times && !(*env)->ExceptionCheck(env); i++)
        v ^= (*env)->CallStaticLongMethod(env, cls, m, (jint)1);
    calls++;
    return v;
}

JNIEXPORT jlong JNICALL Java_fxagent_mixed_JniBurn_upcall(JNIEnv *env, jclass cls, jint times)
{
    return fxmixed_call_java(env, cls, times) ^ 1;
}

/* Issue 32 item 6: Java objects made by C code, `count` byte[256] (NewByteArray) and `count`
 * StringBuilders (NewObject: its constructor, Java called back from here, allocates a byte[]
 * itself). Not inlined: its frame is the one an allocation profile names. */
__attribute__((noinline, visibility("default"))) jlong fxmixed_alloc_objects(JNIEnv *env,
                                                                             jint count)
{
    jclass sb = (*env)->FindClass(env, "java/lang/StringBuilder");
    jmethodID init = sb != NULL ? (*env)->GetMethodID(env, sb, "<init>", "()V") : NULL;
    if (init == NULL)
        return -1;
    jlong sum = 0;
    for (jint i = 0; i < count && !(*env)->ExceptionCheck(env); i++) {
        jbyteArray b = (*env)->NewByteArray(env, 256);
        jobject o = (*env)->NewObject(env, sb, init);
        sum += b != NULL ? (*env)->GetArrayLength(env, b) : 0;
        sum += o != NULL;
        (*env)->DeleteLocalRef(env, b);
        (*env)->DeleteLocalRef(env, o);
    }
    (*env)->DeleteLocalRef(env, sb);
    calls++;
    return sum;
}

JNIEXPORT jlong JNICALL Java_fxagent_mixed_JniAlloc_allocate(JNIEnv *env, jclass cls, jint count)
{
    (void)cls;
    return fxmixed_alloc_objects(env, count) ^ 1;
}

static pthread_t burner;
static volatile int burner_stop; /* set by join, read by the burner */
static uint64_t burner_rounds;   /* atomic */

/* Counts a round. Its call makes fxmixed_cthread_spin a non-leaf function: GCC 12 gives a leaf
 * that needs no stack no frame, even with -fno-omit-frame-pointer, and a frame-pointer walk
 * from inside it would skip its caller. */
__attribute__((noinline)) static void count_round(void)
{
    __atomic_add_fetch(&burner_rounds, 1, __ATOMIC_RELAXED);
}

/* One round of arithmetic; its own frame under fxmixed_cthread_main. */
__attribute__((noinline, visibility("default"))) uint64_t fxmixed_cthread_spin(uint64_t x)
{
    for (int i = 0; i < 65536; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    count_round();
    return x;
}

__attribute__((noinline, visibility("default"))) void *fxmixed_cthread_main(void *arg)
{
    (void)arg;
    uint64_t x = 88172645463325252u;
    while (!__atomic_load_n(&burner_stop, __ATOMIC_RELAXED)) {
        x = fxmixed_cthread_spin(x);
    }
    return (void *)(uintptr_t)(x & 1);
}

JNIEXPORT jboolean JNICALL Java_fxagent_mixed_CThread_start(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    if (pthread_create(&burner, NULL, fxmixed_cthread_main, NULL) != 0)
        return JNI_FALSE;
    pthread_setname_np(burner, "fxmixed-burner");
    return JNI_TRUE;
}

JNIEXPORT jlong JNICALL Java_fxagent_mixed_CThread_join(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    __atomic_store_n(&burner_stop, 1, __ATOMIC_RELAXED);
    pthread_join(burner, NULL);
    return (jlong)__atomic_load_n(&burner_rounds, __ATOMIC_RELAXED);
}
