/* SPDX-License-Identifier: Apache-2.0 */
/* libfxdebugframe.so: native code whose only unwind information is .debug_frame (issue 32).
 * Built with -g -fno-asynchronous-unwind-tables -fno-unwind-tables -fomit-frame-pointer
 * (java-test/mixed/CMakeLists.txt): no .eh_frame entries and no frame pointers for these
 * functions, so a walk from fxdf_level3 finds its callers only through the .debug_frame CFI,
 * which the build then moves to a separate debug file named by .gnu_debuglink (as async-profiler's
 * DebugFrameApp library), stripping the library.
 * JniBurn.debugFrame calls Java_fxagent_mixed_JniBurn_debugFrame -> fxdf_level1 -> fxdf_level2
 * -> fxdf_level3, which spins; a profile must show the three in that order under the JNI
 * method. Each call is followed by work, so none is a tail call; none is inlined. */
#include <jni.h>
#include <stdint.h>

JNIEXPORT jlong JNICALL Java_fxagent_mixed_JniBurn_debugFrame(JNIEnv *env, jclass cls, jint rounds);
__attribute__((visibility("default"))) uint64_t fxdf_level1(int rounds);
__attribute__((visibility("default"))) uint64_t fxdf_level2(int rounds);
__attribute__((visibility("default"))) uint64_t fxdf_level3(int rounds);

static volatile uint64_t sink;

__attribute__((noinline, visibility("default"))) uint64_t fxdf_level3(int rounds)
{
    uint64_t x = 88172645463325252u;
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < 65536; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
    }
    return x;
}

__attribute__((noinline, visibility("default"))) uint64_t fxdf_level2(int rounds)
{
    uint64_t v = fxdf_level3(rounds);
    sink = v;
    return v + 1;
}

__attribute__((noinline, visibility("default"))) uint64_t fxdf_level1(int rounds)
{
    uint64_t v = fxdf_level2(rounds);
    sink = v;
    return v + 1;
}

JNIEXPORT jlong JNICALL Java_fxagent_mixed_JniBurn_debugFrame(JNIEnv *env, jclass cls, jint rounds)
{
    (void)env;
    (void)cls;
    uint64_t v = fxdf_level1(rounds);
    sink = v;
    return (jlong)(v + 1);
}
