/* SPDX-License-Identifier: Apache-2.0 */
/* async-profiler's StackwalkerTests cases, our own code (issue 32; docs/VALIDATION.md section 9):
 * JNI methods of fxagent.mixed.StackGen whose C code burns the CPU under native frames of
 * unusual sizes, each for `millis` of the thread's CPU time:
 *   leafFrame        Java_..._leafFrame -> fxmixed_burn_cpu (fxmixed.c; a plain call)
 *   largeFrame       the JNI function has a 320 KiB frame, then fxmixed_burn_cpu
 *   deepFrame        a 192 KiB JNI frame, then fxsg_deep 7 levels of 128 KiB each (1.1 MiB of
 *                    stack: the JVM runs with -Xss5m), then fxmixed_burn_cpu
 *   largeInnerFrame  fxsg_inner_mid -> fxsg_inner_final (64 KiB frame) called in a loop
 * A walk must find every one of these frames in order, under the Java method. The big arrays
 * are written (volatile) so that the compiler keeps them and the frames are as large as said. */
#include <jni.h>
#include <stdint.h>
#include <time.h>

#include "fxstackgen.h"

/* `count` more levels of 128 KiB frames, then the CPU task. */
__attribute__((noinline, visibility("default"))) uint64_t fxsg_deep(int count, int millis)
{
    volatile char frame[0x20000];
    frame[0] = (char)count;
    frame[sizeof frame - 1] = (char)millis;
    uint64_t v = count == 0 ? fxmixed_burn_cpu(millis) : fxsg_deep(count - 1, millis);
    return v + (uint64_t)frame[0] + (uint64_t)frame[sizeof frame - 1];
}

/* One step of the large inner frame case: a 64 KiB frame, a short burn (about 64 K steps). */
__attribute__((noinline, visibility("default"))) uint64_t fxsg_inner_final(uint64_t x)
{
    volatile char frame[0x10000];
    frame[0] = (char)x;
    for (int i = 0; i < 65536; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    frame[sizeof frame - 1] = (char)x;
    return x + (uint64_t)frame[0] + (uint64_t)frame[sizeof frame - 1];
}

__attribute__((noinline, visibility("default"))) uint64_t fxsg_inner_mid(uint64_t x)
{
    uint64_t a = fxsg_inner_final(x);
    return a ^ fxsg_inner_final(a + 1);
}

JNIEXPORT jlong JNICALL Java_fxagent_mixed_StackGen_leafFrame(JNIEnv *env, jclass cls, jint millis)
{
    (void)env;
    (void)cls;
    return (jlong)fxmixed_burn_cpu(millis) ^ 1;
}

JNIEXPORT jlong JNICALL Java_fxagent_mixed_StackGen_largeFrame(JNIEnv *env, jclass cls, jint millis)
{
    volatile char frame[0x50000];
    frame[sizeof frame - 1] = (char)(env != NULL) + (char)(cls != NULL);
    return (jlong)(fxmixed_burn_cpu(millis) + (uint64_t)frame[sizeof frame - 1]);
}

JNIEXPORT jlong JNICALL Java_fxagent_mixed_StackGen_deepFrame(JNIEnv *env, jclass cls, jint millis)
{
    volatile char frame[0x30000];
    frame[0] = (char)(env != NULL) + (char)(cls != NULL);
    return (jlong)(fxsg_deep(6, millis) ^ (uint64_t)frame[0]);
}

JNIEXPORT jlong JNICALL Java_fxagent_mixed_StackGen_largeInnerFrame(JNIEnv *env, jclass cls,
                                                                    jint millis)
{
    (void)env;
    (void)cls;
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    int64_t until = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec + (int64_t)millis * 1000000;
    uint64_t x = 88172645463325252u;
    do {
        x = fxsg_inner_mid(x);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    } while ((int64_t)now.tv_sec * 1000000000 + now.tv_nsec < until);
    return (jlong)x;
}
