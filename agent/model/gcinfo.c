/* SPDX-License-Identifier: Apache-2.0 */
/* Which collector ran the pauses JVMTI reported, and the heap around the last one. JVMTI's GC
 * events carry nothing but their time, so the drain thread compares the GC MXBeans' collection
 * counts with the pauses matched so far: when exactly one bean has collections outstanding, its
 * name is the collector of every pause in the batch, and when it has exactly as many as the
 * batch has pauses, its last collection describes the last pause: heap used before and after,
 * summed over the heap pools. Anything ambiguous stays unknown rather than guessed. JNI from the
 * drain thread only (never from a GC callback); local references live in one local frame per call.
 *
 * Two sources give the same objects and figures. First HotSpot's management interface in libjvm
 * (JVM_GetManagement, jmm.h): its GetMemoryManagers/GetMemoryPools return the very objects the
 * MXBeans are, GetLongAttribute(JMM_GC_COUNT) is what getCollectionCount calls, and GetLastGCStat
 * fills per-pool MemoryUsage arrays, which is what GcInfo is built from. That skips
 * ManagementFactory's platform-component and service loading and GcInfo's CompositeData, the
 * bulk of the first pause's cost (docs/BENCHMARKS.md "GC attribution"). When libjvm has no such
 * interface of a known version or a call fails during set-up, the MXBeans through
 * java.lang.management as before; meta.extra says which source served and its set-up's CPU. */
#include "internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_BEANS     8
#define MAX_POOLS     16
#define NAME_MAX_     64
#define ALL_POOLS_MAX 64

/* HotSpot's jmmInterface_1_ (jmm.h) is a table of functions; the entries used here sit at
 * slots 5, 6, 12 and 26 in JMM_VERSION_3 (JDK 14-20) and, JMM_VERSION_4 (JDK 21 on) having
 * inserted GetTotalThreadAllocatedMemory at 9, at 5, 6, 13 and 27 (read off libjvm's table on
 * JDK 17 and 25). HotSpot hands out its table only for its own version, so asking tells which. */
enum {
    JMM_V3 = 0x20030000,
    JMM_V4 = 0x20040000,
    JMM_GC_COUNT_ = 10,
    JMM_SLOTS_ = 28
};
struct jmm_gc_stat {
    jlong gc_index, start_time, end_time;
    jobjectArray usage_before_gc, usage_after_gc;
    jint ext_values_size;
    jvalue *ext_values;
    jint n_ext;
};
struct jmm {
    jint(JNICALL *GetVersion)(JNIEnv *env);
    jobjectArray(JNICALL *GetMemoryPools)(JNIEnv *env, jobject mgr);
    jobjectArray(JNICALL *GetMemoryManagers)(JNIEnv *env, jobject pool);
    jlong(JNICALL *GetLongAttribute)(JNIEnv *env, jobject obj, int att);
    void(JNICALL *GetLastGCStat)(JNIEnv *env, jobject mgr, struct jmm_gc_stat *stat);
};

static struct {
    bool inited, failed;
    unsigned n, n_pools;
    jobject bean[MAX_BEANS]; /* global references */
    char name[MAX_BEANS][NAME_MAX_];
    jlong matched[MAX_BEANS]; /* collections already matched to pauses */
    jobject pool[MAX_POOLS];  /* names (String) of the heap pools, global references */
    jmethodID get_count, get_last, before, after, map_get, get_used;
    jclass sun_bean; /* com.sun.management.GarbageCollectorMXBean, or NULL */
    /* The jmm source: heap pools as indices into all pools, two MemoryUsage[] to fill. */
    const struct jmm *jmm; /* &jmm_fns once set up, else NULL */
    struct jmm jmm_fns;
    unsigned n_all_pools, heap_pool[MAX_POOLS];
    jobjectArray usage_before, usage_after; /* global references */
    const char *via, *fallback;             /* the source that served; why not jmm */
    int64_t setup_cpu_ns;                   /* set-up and the first heap read */
    bool first_heap_done;
} gi;

static int64_t thread_cpu(void)
{
    return fx_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

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

/* MemoryType.HEAP, and MemoryPoolMXBean's getType and getName. */
static jobject heap_type(JNIEnv *jni, jmethodID *get_type, jmethodID *get_name)
{
    jclass pool = find(jni, "java/lang/management/MemoryPoolMXBean");
    jclass type = find(jni, "java/lang/management/MemoryType");
    jfieldID heap_f =
            type ? (*jni)->GetStaticFieldID(jni, type, "HEAP", "Ljava/lang/management/MemoryType;")
                 : NULL;
    jobject heap = ok(jni) && heap_f ? (*jni)->GetStaticObjectField(jni, type, heap_f) : NULL;
    *get_type = method(jni, pool, "getType", "()Ljava/lang/management/MemoryType;");
    *get_name = method(jni, pool, "getName", "()Ljava/lang/String;");
    return ok(jni) ? heap : NULL;
}

/* The names of the pools whose type is MemoryType.HEAP. */
static void init_pools(JNIEnv *jni)
{
    jint n = 0;
    jobject list = list_of(jni, "getMemoryPoolMXBeans", &n);
    jmethodID get_type, get_name;
    jobject heap = heap_type(jni, &get_type, &get_name);
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

/* libjvm's management interface of a version whose prefix is known, or NULL. An embedding
 * launcher may load libjvm without RTLD_GLOBAL, hence the second lookup. */
static bool jmm_interface(JNIEnv *jni, struct jmm *j)
{
    void *sym = dlsym(RTLD_DEFAULT, "JVM_GetManagement");
    if (sym == NULL) {
        void *jvm = dlopen("libjvm.so", RTLD_LAZY | RTLD_NOLOAD);
        sym = jvm != NULL ? dlsym(jvm, "JVM_GetManagement") : NULL;
    }
    if (sym == NULL)
        return false;
    void *(JNICALL * get)(jint) = NULL;
    memcpy(&get, &sym, sizeof(get));
    jint version = JMM_V3;
    void *const *t = get(version);
    if (t == NULL)
        t = get(version = JMM_V4);
    if (t == NULL)
        return false;
    unsigned v4 = version == JMM_V4;
    memcpy(&j->GetVersion, &t[2], sizeof(void *));
    memcpy(&j->GetMemoryPools, &t[5], sizeof(void *));
    memcpy(&j->GetMemoryManagers, &t[6], sizeof(void *));
    memcpy(&j->GetLongAttribute, &t[12 + v4], sizeof(void *));
    memcpy(&j->GetLastGCStat, &t[26 + v4], sizeof(void *));
    for (unsigned i = 2; i < JMM_SLOTS_ - 1 + v4; i++)
        if (t[i] == NULL)
            return false; /* an unexpected layout: every slot from 2 on is a function */
    return j->GetVersion(jni) == version && ok(jni);
}

static jstring name_of(JNIEnv *jni, jobject o, jmethodID get_name)
{
    jstring s = get_name != NULL ? (*jni)->CallObjectMethod(jni, o, get_name) : NULL;
    return ok(jni) ? s : NULL;
}

/* The GC managers in GetMemoryManagers' order, which is getGarbageCollectorMXBeans' (it filters
 * MemoryImpl.getMemoryManagers, the same call, by type). */
static const char *jmm_beans(JNIEnv *jni)
{
    jobjectArray mgrs = gi.jmm->GetMemoryManagers(jni, NULL);
    jclass gc = find(jni, "java/lang/management/GarbageCollectorMXBean");
    jmethodID get_name = method(jni, find(jni, "java/lang/management/MemoryManagerMXBean"),
                                "getName", "()Ljava/lang/String;");
    if (!ok(jni) || mgrs == NULL || gc == NULL || get_name == NULL)
        return "GetMemoryManagers failed";
    jsize n = (*jni)->GetArrayLength(jni, mgrs);
    for (jsize i = 0; i < n && gi.n < MAX_BEANS; i++) {
        jobject m = (*jni)->GetObjectArrayElement(jni, mgrs, i);
        if (!ok(jni) || m == NULL)
            return "a memory manager unreadable";
        if (!(*jni)->IsInstanceOf(jni, m, gc))
            continue;
        if (name_of(jni, m, get_name) == NULL)
            return "a collector without a name";
        if ((gi.bean[gi.n] = (*jni)->NewGlobalRef(jni, m)) == NULL)
            return "out of global references";
        copy_name(jni, m, get_name, gi.name[gi.n]);
        gi.n++;
    }
    return gi.n > 0 ? NULL : "no collector";
}

/* Which of all pools (GetLastGCStat's indices: MemoryService's order, GetMemoryPools(NULL)'s)
 * are of type HEAP, and the two MemoryUsage arrays GetLastGCStat fills. */
static const char *jmm_pools(JNIEnv *jni)
{
    jobjectArray pools = gi.jmm->GetMemoryPools(jni, NULL);
    jclass usage = find(jni, "java/lang/management/MemoryUsage");
    jmethodID get_type, get_name;
    jobject heap = heap_type(jni, &get_type, &get_name);
    if (!ok(jni) || pools == NULL || heap == NULL || get_type == NULL || usage == NULL)
        return "GetMemoryPools failed";
    jsize n = (*jni)->GetArrayLength(jni, pools);
    if (n > ALL_POOLS_MAX)
        return "too many memory pools";
    for (jsize i = 0; i < n; i++) {
        jobject p = (*jni)->GetObjectArrayElement(jni, pools, i);
        jobject t = ok(jni) && p ? (*jni)->CallObjectMethod(jni, p, get_type) : NULL;
        if (!ok(jni) || t == NULL)
            return "a memory pool unreadable";
        if ((*jni)->IsSameObject(jni, t, heap) && gi.n_pools < MAX_POOLS)
            gi.heap_pool[gi.n_pools++] = (unsigned)i;
    }
    gi.n_all_pools = (unsigned)n;
    jobject b = (*jni)->NewObjectArray(jni, n, usage, NULL);
    jobject a = ok(jni) && b ? (*jni)->NewObjectArray(jni, n, usage, NULL) : NULL;
    gi.usage_before = ok(jni) && a ? (*jni)->NewGlobalRef(jni, b) : NULL;
    gi.usage_after = gi.usage_before ? (*jni)->NewGlobalRef(jni, a) : NULL;
    return gi.usage_after != NULL ? NULL : "no MemoryUsage arrays";
}

/* Undoes a half-done jmm set-up, for the MXBeans' turn. */
static void jmm_undo(JNIEnv *jni, const char *why)
{
    for (unsigned i = 0; i < gi.n; i++)
        (*jni)->DeleteGlobalRef(jni, gi.bean[i]);
    if (gi.usage_before != NULL)
        (*jni)->DeleteGlobalRef(jni, gi.usage_before);
    if (gi.usage_after != NULL)
        (*jni)->DeleteGlobalRef(jni, gi.usage_after);
    gi.usage_before = gi.usage_after = NULL;
    gi.n = gi.n_pools = gi.n_all_pools = 0;
    gi.jmm = NULL;
    gi.fallback = why;
}

static bool init_jmm(JNIEnv *jni)
{
    if (!jmm_interface(jni, &gi.jmm_fns)) {
        gi.fallback = "libjvm has no JVM_GetManagement of version 3 or 4";
        return false;
    }
    gi.jmm = &gi.jmm_fns;
    const char *why = jmm_beans(jni);
    why = why != NULL ? why : jmm_pools(jni);
    if (why == NULL) {
        jlong c = gi.jmm->GetLongAttribute(jni, gi.bean[0], JMM_GC_COUNT_);
        why = ok(jni) && c >= 0 ? NULL : "GetLongAttribute(JMM_GC_COUNT) failed";
    }
    if (why != NULL)
        jmm_undo(jni, why);
    return why == NULL;
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
    int64_t cpu0 = thread_cpu();
    /* The fallback is otherwise unreachable on the JDKs the tests run: the test switch keeps the
     * MXBeans' path proven (it.markers_dump). */
    const char *force = getenv("FXAGENT_TEST_GC_MXBEANS");
    if (force != NULL && force[0] == '1') {
        gi.fallback = "FXAGENT_TEST_GC_MXBEANS=1 in the environment";
    } else if (init_jmm(jni)) {
        gi.via = "HotSpot management interface";
    }
    if (gi.jmm == NULL) {
        gi.via = "GC MXBeans";
        init_beans(jni);
        init_pools(jni);
        init_gcinfo(jni);
    }
    (*jni)->PopLocalFrame(jni, NULL);
    gi.setup_cpu_ns += thread_cpu() - cpu0;
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

/* Heap used summed over the heap pools of a MemoryUsage[] GetLastGCStat filled; -1 if not. */
static int64_t heap_used_jmm(JNIEnv *jni, jobjectArray usage)
{
    int64_t sum = 0;
    for (unsigned i = 0; i < gi.n_pools; i++) {
        jobject u = (*jni)->GetObjectArrayElement(jni, usage, (jsize)gi.heap_pool[i]);
        jlong used = ok(jni) && u ? (*jni)->CallLongMethod(jni, u, gi.get_used) : -1;
        if (!ok(jni) || used < 0)
            return -1;
        sum += used;
        (*jni)->DeleteLocalRef(jni, u);
    }
    return gi.n_pools > 0 ? sum : -1;
}

static void last_heap_jmm(JNIEnv *jni, unsigned bean, struct fx_jvm_gc *gc)
{
    if (gi.get_used == NULL)
        gi.get_used = method(jni, find(jni, "java/lang/management/MemoryUsage"), "getUsed", "()J");
    struct jmm_gc_stat st = {0};
    st.usage_before_gc = gi.usage_before;
    st.usage_after_gc = gi.usage_after;
    if (gi.get_used != NULL)
        gi.jmm->GetLastGCStat(jni, gi.bean[bean], &st);
    if (gi.get_used == NULL || !ok(jni) || st.gc_index == 0)
        return;
    gc->heap_before = heap_used_jmm(jni, gi.usage_before);
    gc->heap_after = heap_used_jmm(jni, gi.usage_after);
}

static void last_heap_mxbean(JNIEnv *jni, unsigned bean, struct fx_jvm_gc *gc)
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

static void last_heap(JNIEnv *jni, unsigned bean, struct fx_jvm_gc *gc)
{
    int64_t cpu0 = gi.first_heap_done ? 0 : thread_cpu();
    if (gi.jmm != NULL)
        last_heap_jmm(jni, bean, gc);
    else
        last_heap_mxbean(jni, bean, gc);
    if (!gi.first_heap_done)
        gi.setup_cpu_ns += thread_cpu() - cpu0;
    gi.first_heap_done = true;
}

/* Reads every bean's count into now[]; returns the collections not yet matched to pauses. */
static jlong read_counts(JNIEnv *jni, jlong now[MAX_BEANS])
{
    jlong credit = 0;
    for (unsigned i = 0; i < gi.n; i++) {
        now[i] = gi.jmm != NULL ? gi.jmm->GetLongAttribute(jni, gi.bean[i], JMM_GC_COUNT_)
                                : (*jni)->CallLongMethod(jni, gi.bean[i], gi.get_count);
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

/* The beans are looked up at the first pause, not before, a cost a program without GCs need not
 * pay: 18-27 ms of the drain's CPU through jmm (~130 classes on JDK 17, ~230 on 25, most of
 * them the first invokedynamic string concatenation, in MemoryPoolImpl's constructor, when the
 * program has not run one yet), 56-85 ms through the MXBeans (+~290 classes: platform
 * components, service loading, GcInfo's openmbean types), load 9-11 (docs/BENCHMARKS.md). Meanwhile
 * more collections may have happened than the drain has seen pauses, so each bean keeps a count of
 * collections already matched (0 at JVM start: with -agentpath the agent sees every pause since
 * then) and a batch uses up its own number of them. Collections of several beans outstanding:
 * ambiguous, so the pauses stay unknown and the counts are taken as matched. */
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

/* meta.extra: which source attributed the pauses and what its set-up cost the drain thread. */
void fx_gcinfo_report(struct fx_profile *p, const char *group)
{
    if (!gi.inited)
        return;
    char buf[32];
    fx_profile_extra_str(p, group, "GC attribution source",
                         gi.failed ? "none (no collector found)" : gi.via);
    if (gi.fallback != NULL)
        fx_profile_extra_str(p, group, "GC attribution: management interface not used",
                             gi.fallback);
    snprintf(buf, sizeof(buf), "%.3f ms", (double)gi.setup_cpu_ns / 1e6);
    fx_profile_extra_str(p, group, "GC attribution set-up CPU time", buf);
}
