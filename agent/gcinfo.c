/* SPDX-License-Identifier: Apache-2.0 */
/* Which collector ran the pauses JVMTI reported, and the heap around the last one. JVMTI's GC
 * events carry nothing but their time, so the drain thread compares the GC MXBeans' collection
 * counts before and after: when exactly one bean's count moved, its name is the collector of
 * every pause in the batch, and when it moved by exactly the number of pauses, its last GcInfo
 * (com.sun.management) describes the last pause: heap used before and after, summed over the
 * heap pools. Anything ambiguous stays unknown rather than guessed. JNI from the drain thread
 * only (never from a GC callback); local references live in one local frame per call. */
#include "fx_agent.h"

#include <stdio.h>
#include <string.h>

#define MAX_BEANS 8
#define MAX_POOLS 16
#define NAME_MAX_ 64

static struct {
    bool inited, failed;
    unsigned n, n_pools;
    jobject bean[MAX_BEANS]; /* global references */
    char name[MAX_BEANS][NAME_MAX_];
    jlong count[MAX_BEANS];
    jobject pool[MAX_POOLS]; /* names (String) of the heap pools, global references */
    jmethodID get_count, get_last, before, after, map_get, get_used;
    jclass sun_bean; /* com.sun.management.GarbageCollectorMXBean, or NULL */
} gi;

static bool ok(JNIEnv *jni)
{
    if (!(*jni)->ExceptionCheck(jni))
        return true;
    (*jni)->ExceptionClear(jni);
    return false;
}

static jclass find(JNIEnv *jni, const char *name)
{
    jclass c = (*jni)->FindClass(jni, name);
    return ok(jni) ? c : NULL;
}

static jmethodID method(JNIEnv *jni, jclass c, const char *name, const char *sig)
{
    jmethodID m = c ? (*jni)->GetMethodID(jni, c, name, sig) : NULL;
    return ok(jni) ? m : NULL;
}

/* ManagementFactory.<getter>() as a local List, and its size. */
static jobject list_of(JNIEnv *jni, const char *getter, jint *size)
{
    jclass mf = find(jni, "java/lang/management/ManagementFactory");
    jmethodID get = mf ? (*jni)->GetStaticMethodID(jni, mf, getter, "()Ljava/util/List;") : NULL;
    jobject list = ok(jni) && get ? (*jni)->CallStaticObjectMethod(jni, mf, get) : NULL;
    jmethodID sz = method(jni, find(jni, "java/util/List"), "size", "()I");
    *size = list && sz && ok(jni) ? (*jni)->CallIntMethod(jni, list, sz) : 0;
    return ok(jni) ? list : NULL;
}

static jobject list_get(JNIEnv *jni, jobject list, jint i)
{
    jmethodID get = method(jni, find(jni, "java/util/List"), "get", "(I)Ljava/lang/Object;");
    jobject o = get ? (*jni)->CallObjectMethod(jni, list, get, i) : NULL;
    return ok(jni) ? o : NULL;
}

static void copy_name(JNIEnv *jni, jobject bean, jmethodID get_name, char *out)
{
    jstring s = (*jni)->CallObjectMethod(jni, bean, get_name);
    snprintf(out, NAME_MAX_, "?");
    if (!ok(jni) || s == NULL)
        return;
    const char *utf = (*jni)->GetStringUTFChars(jni, s, NULL);
    if (utf != NULL) {
        snprintf(out, NAME_MAX_, "%s", utf);
        (*jni)->ReleaseStringUTFChars(jni, s, utf);
    }
}

static void init_beans(JNIEnv *jni)
{
    jint n = 0;
    jobject list = list_of(jni, "getGarbageCollectorMXBeans", &n);
    jclass gc = find(jni, "java/lang/management/GarbageCollectorMXBean");
    jmethodID get_name = method(jni, find(jni, "java/lang/management/MemoryManagerMXBean"),
                                "getName", "()Ljava/lang/String;");
    gi.get_count = method(jni, gc, "getCollectionCount", "()J");
    for (jint i = 0; list && get_name && gi.get_count && i < n && gi.n < MAX_BEANS; i++) {
        jobject b = list_get(jni, list, i);
        if (b == NULL || (gi.bean[gi.n] = (*jni)->NewGlobalRef(jni, b)) == NULL)
            continue;
        copy_name(jni, b, get_name, gi.name[gi.n]);
        gi.count[gi.n] = (*jni)->CallLongMethod(jni, b, gi.get_count);
        gi.count[gi.n] = ok(jni) ? gi.count[gi.n] : 0;
        gi.n++;
    }
}

/* The names of the pools whose type is MemoryType.HEAP. */
static void init_pools(JNIEnv *jni)
{
    jint n = 0;
    jobject list = list_of(jni, "getMemoryPoolMXBeans", &n);
    jclass pool = find(jni, "java/lang/management/MemoryPoolMXBean");
    jclass type = find(jni, "java/lang/management/MemoryType");
    jfieldID heap_f =
            type ? (*jni)->GetStaticFieldID(jni, type, "HEAP", "Ljava/lang/management/MemoryType;")
                 : NULL;
    jobject heap = ok(jni) && heap_f ? (*jni)->GetStaticObjectField(jni, type, heap_f) : NULL;
    jmethodID get_type = method(jni, pool, "getType", "()Ljava/lang/management/MemoryType;");
    jmethodID get_name = method(jni, pool, "getName", "()Ljava/lang/String;");
    for (jint i = 0; list && heap && get_type && get_name && i < n && gi.n_pools < MAX_POOLS; i++) {
        jobject p = list_get(jni, list, i);
        jobject t = p ? (*jni)->CallObjectMethod(jni, p, get_type) : NULL;
        if (!ok(jni) || t == NULL || !(*jni)->IsSameObject(jni, t, heap))
            continue;
        jobject name = (*jni)->CallObjectMethod(jni, p, get_name);
        if (ok(jni) && name != NULL &&
            (gi.pool[gi.n_pools] = (*jni)->NewGlobalRef(jni, name)) != NULL)
            gi.n_pools++;
    }
}

/* GcInfo is in jdk.management, which a JVM may lack: then no heap figures. */
static void init_gcinfo(JNIEnv *jni)
{
    jclass sun = find(jni, "com/sun/management/GarbageCollectorMXBean");
    jclass info = find(jni, "com/sun/management/GcInfo");
    gi.get_last = method(jni, sun, "getLastGcInfo", "()Lcom/sun/management/GcInfo;");
    gi.before = method(jni, info, "getMemoryUsageBeforeGc", "()Ljava/util/Map;");
    gi.after = method(jni, info, "getMemoryUsageAfterGc", "()Ljava/util/Map;");
    gi.map_get = method(jni, find(jni, "java/util/Map"), "get",
                        "(Ljava/lang/Object;)Ljava/lang/Object;");
    gi.get_used = method(jni, find(jni, "java/lang/management/MemoryUsage"), "getUsed", "()J");
    if (sun != NULL && gi.get_last && gi.before && gi.after && gi.map_get && gi.get_used)
        gi.sun_bean = (*jni)->NewGlobalRef(jni, sun);
}

static bool init(JNIEnv *jni)
{
    if (gi.inited)
        return !gi.failed;
    gi.inited = true;
    if (jni == NULL || (*jni)->PushLocalFrame(jni, 256) != JNI_OK) {
        gi.failed = true;
        return false;
    }
    init_beans(jni);
    init_pools(jni);
    init_gcinfo(jni);
    (*jni)->PopLocalFrame(jni, NULL);
    gi.failed = gi.n == 0;
    return !gi.failed;
}

/* Heap used summed over the heap pools of a MemoryUsage map; -1 if unreadable. */
static int64_t heap_used(JNIEnv *jni, jobject map)
{
    int64_t sum = 0;
    for (unsigned i = 0; map != NULL && i < gi.n_pools; i++) {
        jobject u = (*jni)->CallObjectMethod(jni, map, gi.map_get, gi.pool[i]);
        if (!ok(jni))
            return -1;
        if (u == NULL)
            continue;
        jlong used = (*jni)->CallLongMethod(jni, u, gi.get_used);
        if (!ok(jni))
            return -1;
        sum += used;
        (*jni)->DeleteLocalRef(jni, u);
    }
    return map != NULL && gi.n_pools > 0 ? sum : -1;
}

static void last_heap(JNIEnv *jni, unsigned bean, struct fx_jvm_gc *gc)
{
    if (gi.sun_bean == NULL || !(*jni)->IsInstanceOf(jni, gi.bean[bean], gi.sun_bean))
        return;
    jobject info = (*jni)->CallObjectMethod(jni, gi.bean[bean], gi.get_last);
    if (!ok(jni) || info == NULL)
        return;
    jobject before = (*jni)->CallObjectMethod(jni, info, gi.before);
    jobject after = ok(jni) ? (*jni)->CallObjectMethod(jni, info, gi.after) : NULL;
    if (!ok(jni))
        return;
    gc->heap_before = heap_used(jni, before);
    gc->heap_after = heap_used(jni, after);
}

/* Reads every bean's count into now[]; returns the sum of the increases. */
static jlong read_counts(JNIEnv *jni, jlong now[MAX_BEANS])
{
    jlong total = 0;
    for (unsigned i = 0; i < gi.n; i++) {
        now[i] = (*jni)->CallLongMethod(jni, gi.bean[i], gi.get_count);
        now[i] = ok(jni) && now[i] >= gi.count[i] ? now[i] : gi.count[i];
        total += now[i] - gi.count[i];
    }
    return total;
}

bool fx_gcinfo_attribute(JNIEnv *jni, struct fx_jvm_gc *gc, unsigned n, bool final)
{
    if (!init(jni) || n == 0)
        return true;
    if ((*jni)->PushLocalFrame(jni, 64) != JNI_OK)
        return final;
    jlong now[MAX_BEANS];
    jlong total = read_counts(jni, now);
    if (total < (jlong)n && !final) {
        (*jni)->PopLocalFrame(jni, NULL);
        return false;
    }
    unsigned changed = 0, k = 0;
    for (unsigned i = 0; i < gi.n; i++) {
        if (now[i] != gi.count[i]) {
            changed++;
            k = i;
        }
        gi.count[i] = now[i];
    }
    if (changed == 1) {
        for (unsigned i = 0; i < n; i++)
            gc[i].collector = gi.name[k];
        if (total == (jlong)n)
            last_heap(jni, k, &gc[n - 1]);
    }
    (*jni)->PopLocalFrame(jni, NULL);
    return true;
}
