/* SPDX-License-Identifier: Apache-2.0 */
/* Idle waits apart from contention (issue 30): a park whose stack shows a thread waiting for
 * work in a JDK blocking queue or pool (an idle pool thread in LinkedBlockingQueue.take, a
 * ForkJoinPool worker in awaitWork) is an idle wait, not lock contention. The rule reads the
 * waiting stack from its leaf (at most IDLE_FRAMES frames):
 *  - Unsafe.* and LockSupport.* frames are the park itself: skipped;
 *  - an AbstractQueued(Long)Synchronizer.acquire* frame first is a lock being acquired (also the
 *    re-acquire of a signalled Condition.await): contention;
 *  - a frame of the WORK table below makes it idle;
 *  - other frames (a Condition's await, SynchronousQueue's transfer, LinkedTransferQueue's
 *    awaitMatch, ...) are passed over; nothing found: contention.
 * Monitors (synchronized) are always contention. docs/DESIGN-NOTES.md (issue 18) lists the
 * table. Model owner only (locks.c's consumer): one cache of method kinds, by jmethodID (HotSpot
 * never reuses one). */
#include "locks_shared.h"

#include <stdint.h>
#include <string.h>

#define IDLE_FRAMES 24
#define CACHE_SLOTS 1024 /* power of two */

enum kind {
    K_UNKNOWN = 0,
    K_PARK,    /* the park itself */
    K_ACQUIRE, /* a lock's acquire */
    K_WORK,    /* waiting for work */
    K_OTHER
};

/* Classes (as JVM signatures) and the methods of each that wait for work (" name " each). */
static const struct {
    const char *cls, *methods;
} WORK[] = {
        {"Ljava/util/concurrent/ThreadPoolExecutor;", " getTask "},
        {"Ljava/util/concurrent/ScheduledThreadPoolExecutor$DelayedWorkQueue;", " take poll "},
        {"Ljava/util/concurrent/LinkedBlockingQueue;", " take poll "},
        {"Ljava/util/concurrent/LinkedBlockingDeque;",
         " take poll takeFirst takeLast pollFirst pollLast "},
        {"Ljava/util/concurrent/ArrayBlockingQueue;", " take poll "},
        {"Ljava/util/concurrent/PriorityBlockingQueue;", " take poll "},
        {"Ljava/util/concurrent/DelayQueue;", " take poll "},
        {"Ljava/util/concurrent/SynchronousQueue;", " take poll "},
        {"Ljava/util/concurrent/LinkedTransferQueue;", " take poll "},
        {"Ljava/util/concurrent/ForkJoinPool;", " awaitWork "},
        {"Ljava/lang/ref/ReferenceQueue;", " remove remove0 "},
};

static struct {
    jmethodID id;
    uint8_t kind;
} cache[CACHE_SLOTS];

static bool listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strstr(list, name); p != NULL; p = strstr(p + 1, name)) {
        if (p[-1] == ' ' && p[n] == ' ')
            return true;
    }
    return false;
}

static enum kind classify(const char *cls, const char *name)
{
    if (!strcmp(cls, "Ljdk/internal/misc/Unsafe;") ||
        !strcmp(cls, "Ljava/util/concurrent/locks/LockSupport;"))
        return K_PARK;
    if ((!strcmp(cls, "Ljava/util/concurrent/locks/AbstractQueuedSynchronizer;") ||
         !strcmp(cls, "Ljava/util/concurrent/locks/AbstractQueuedLongSynchronizer;")) &&
        !strncmp(name, "acquire", 7))
        return K_ACQUIRE;
    for (size_t i = 0; i < sizeof(WORK) / sizeof(WORK[0]); i++) {
        if (!strcmp(cls, WORK[i].cls) && listed(WORK[i].methods, name))
            return K_WORK;
    }
    return K_OTHER;
}

static enum kind method_kind(jvmtiEnv *jvmti, JNIEnv *jni, jmethodID m)
{
    uintptr_t h = ((uintptr_t)m >> 3) * 0x9E3779B97F4A7C15ull;
    uint32_t slot = (uint32_t)(h >> 40) & (CACHE_SLOTS - 1);
    if (cache[slot].id == m && cache[slot].kind != K_UNKNOWN)
        return (enum kind)cache[slot].kind;
    char *name = NULL, *sig = NULL;
    jclass cls = NULL;
    enum kind k = K_OTHER;
    if ((*jvmti)->GetMethodName(jvmti, m, &name, NULL, NULL) == JVMTI_ERROR_NONE &&
        (*jvmti)->GetMethodDeclaringClass(jvmti, m, &cls) == JVMTI_ERROR_NONE &&
        (*jvmti)->GetClassSignature(jvmti, cls, &sig, NULL) == JVMTI_ERROR_NONE)
        k = classify(sig, name);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
    if (cls != NULL)
        (*jni)->DeleteLocalRef(jni, cls); /* the consumer's thread never returns to Java */
    cache[slot].id = m;
    cache[slot].kind = (uint8_t)k;
    return k;
}

bool fx_lock_idle_wait(JNIEnv *jni, const void *frames, uint32_t n)
{
    jvmtiEnv *jvmti = fx_jvmti();
    for (uint32_t i = 0; i < n && i < IDLE_FRAMES; i++) {
        jvmtiFrameInfo fi;
        memcpy(&fi, (const char *)frames + i * sizeof(fi), sizeof(fi));
        switch (method_kind(jvmti, jni, fi.method)) {
        case K_ACQUIRE:
            return false;
        case K_WORK:
            return true;
        default:
            break;
        }
    }
    return false;
}
