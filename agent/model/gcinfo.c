/* SPDX-License-Identifier: Apache-2.0 */
/* Which collector ran the pauses JVMTI reported, and the heap around the last one. JVMTI's GC
 * events carry nothing but their time, so the drain thread compares the GC MXBeans' collection
 * counts with the pauses matched so far: when exactly one bean has collections outstanding, its
 * name is the collector of every pause in the batch, and when it has exactly as many as the
 * batch has pauses, its last GcInfo (com.sun.management) describes the last pause: heap used
 * before and after, summed over the heap pools. Anything ambiguous stays unknown rather than
 * guessed. JNI from the drain thread only (never from a GC callback); local references live in
 * one local frame per call. */
#include "internal.h"

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
    jlong matched[MAX_BEANS]; /* collections already matched to pauses */
    jobject pool[MAX_POOLS];  /* names (String) of the heap pools, global references */
    jmethodID get_count, get_last, before, after, map_get, get_used;
    jclass sun_bean; /* com.sun.management.GarbageCollectorMXBean, or NULL */
} gi;

static bool ok(JNIEnv *jni)
{
    return !fx_jni_failed(jni);
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

/* Reads every bean's count into now[]; returns the collections not yet matched to pauses. */
static jlong read_counts(JNIEnv *jni, jlong now[MAX_BEANS])
{
    jlong credit = 0;
    for (unsigned i = 0; i < gi.n; i++) {
        now[i] = (*jni)->CallLongMethod(jni, gi.bean[i], gi.get_count);
        now[i] = ok(jni) && now[i] >= gi.matched[i] ? now[i] : gi.matched[i];
        credit += now[i] - gi.matched[i];
    }
    return credit;
}

/* A start after a stop (the drain paused): GC events were off while stopped, so the
 * collections since are no pause of ours. Read after the events are on again: a collection in
 * between is then one matched too many, which the batch's wait for counts settles (owing 0). */
void fx_gcinfo_resync(JNIEnv *jni)
{
    if (!gi.inited || gi.failed || jni == NULL || (*jni)->PushLocalFrame(jni, 16) != JNI_OK)
        return;
    jlong now[MAX_BEANS];
    read_counts(jni, now);
    memcpy(gi.matched, now, sizeof(now[0]) * gi.n);
    (*jni)->PopLocalFrame(jni, NULL);
}

/* The beans are looked up at the first pause, not before: java.lang.management costs ~30 ms of
 * class loading, which a program without GCs need not pay. Meanwhile more collections may have
 * happened than the drain has seen pauses, so each bean keeps a count of collections already
 * matched (0 at JVM start: with -agentpath the agent sees every pause since then) and a batch
 * uses up its own number of them. Collections of several beans outstanding: ambiguous, so the
 * pauses stay unknown and the counts are taken as matched. */
bool fx_gcinfo_attribute(JNIEnv *jni, struct fx_jvm_gc *gc, unsigned n, bool final)
{
    if (n == 0 || !init(jni))
        return true;
    if ((*jni)->PushLocalFrame(jni, 64) != JNI_OK)
        return final;
    jlong now[MAX_BEANS];
    jlong credit = read_counts(jni, now);
    if (credit < (jlong)n && !final) {
        (*jni)->PopLocalFrame(jni, NULL);
        return false;
    }
    unsigned owing = 0, k = 0;
    for (unsigned i = 0; i < gi.n; i++) {
        if (now[i] > gi.matched[i]) {
            owing++;
            k = i;
        }
    }
    if (owing == 1) {
        for (unsigned i = 0; i < n; i++)
            gc[i].collector = gi.name[k];
        if (credit == (jlong)n)
            last_heap(jni, k, &gc[n - 1]); /* its last collection is our last pause */
        gi.matched[k] += credit < (jlong)n ? credit : (jlong)n;
    } else {
        memcpy(gi.matched, now, sizeof(now[0]) * gi.n);
    }
    (*jni)->PopLocalFrame(jni, NULL);
    return true;
}
