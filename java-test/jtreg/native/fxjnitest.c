/* SPDX-License-Identifier: Apache-2.0 */
/* Native half of jni/JniTest: down-calls that call back up into Java, and a native thread that
 * attaches itself and calls Java, so the oracle runs above native frames and entry frames. */
#include <pthread.h>
#include <stdint.h>

#include <jni.h>

JNIEXPORT jint JNICALL Java_JniTest_down(JNIEnv *env, jclass cls, jint n);
JNIEXPORT jint JNICALL Java_JniTest_fromNativeThread(JNIEnv *env, jclass cls, jint calls);

/* JniTest.down(n) -> JniTest.up(n): Java and native frames alternate on the stack. */
JNIEXPORT jint JNICALL Java_JniTest_down(JNIEnv *env, jclass cls, jint n)
{
    jmethodID up = (*env)->GetStaticMethodID(env, cls, "up", "(I)I");
    if (up == NULL) {
        return -1;
    }
    return (*env)->CallStaticIntMethod(env, cls, up, n) + 1;
}

struct attach_job {
    JavaVM *vm;
    jclass cls; /* global reference */
    jint calls;
    jint result;
};

/* A thread the JVM did not create: its only Java frames are the ones it calls into. */
static void *attached_thread(void *arg)
{
    struct attach_job *job = arg;
    JNIEnv *env = NULL;
    if ((*job->vm)->AttachCurrentThread(job->vm, (void **)&env, NULL) != JNI_OK) {
        job->result = -1;
        return NULL;
    }
    jmethodID entry = (*env)->GetStaticMethodID(env, job->cls, "fromNative", "(I)I");
    for (jint i = 0; entry != NULL && i < job->calls; i++) {
        job->result += (*env)->CallStaticIntMethod(env, job->cls, entry, i);
        if ((*env)->ExceptionCheck(env)) {
            /* Keep the exception for the Java side: report failure, print it. */
            (*env)->ExceptionDescribe(env);
            job->result = -1;
            break;
        }
    }
    (*job->vm)->DetachCurrentThread(job->vm);
    return NULL;
}

/* Runs `calls` calls of JniTest.fromNative on a new attached native thread; returns their sum
 * or -1 on failure. */
JNIEXPORT jint JNICALL Java_JniTest_fromNativeThread(JNIEnv *env, jclass cls, jint calls)
{
    struct attach_job job = {.vm = NULL, .cls = NULL, .calls = calls, .result = 0};
    if ((*env)->GetJavaVM(env, &job.vm) != JNI_OK) {
        return -1;
    }
    job.cls = (*env)->NewGlobalRef(env, cls);
    pthread_t t;
    if (job.cls == NULL || pthread_create(&t, NULL, attached_thread, &job) != 0) {
        return -1;
    }
    pthread_join(t, NULL);
    (*env)->DeleteGlobalRef(env, job.cls);
    return job.result;
}
