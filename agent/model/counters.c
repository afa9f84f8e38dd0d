/* SPDX-License-Identifier: Apache-2.0 */
/* Counters sampled by the model's owner every COUNTER_PERIOD_NS: Java heap used and committed
 * (java.lang.Runtime through JNI: two calls, no allocation), the process RSS (/proc/self/statm),
 * classes loaded (ClassPrepare events counted atomically, plus those prepared before the agent
 * saw events) and samples per second. A counter that cannot be read is left out of that round;
 * the model stores absolute values, the writer the deltas line-accumulated graphs want. */
#include "internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fx_jvm_markers.h"
#include "fx_profile.h"

#define COUNTER_PERIOD_NS 100000000 /* 100 ms */
/* A round is due a little early: the drain's slowest period is this period too
 * (fx_drain_period.h), and a pass due at 100 ms may come at 99.9 ms; at 10 ms it changes
 * nothing. */
#define COUNTER_SLACK_NS 5000000

/* Written by ClassPrepare callbacks on any thread (atomics). */
static uint64_t classes_prepared;
static int64_t classes_base;

/* Owned by the model's owner. */
static struct {
    struct fx_profile *p; /* the model the ids belong to */
    bool registered, failed;
    fx_counter_id ids[FX_JVM_COUNTER_COUNT];
    int64_t last_ns, rate_ns;
    uint64_t rate_samples;
    jobject runtime; /* global reference */
    jmethodID total, free_;
    bool runtime_failed;
    uint64_t rounds, read_errors;
} co;

void fx_counters_class_prepared(void)
{
    __atomic_add_fetch(&classes_prepared, 1, __ATOMIC_RELAXED);
}

/* Classes prepared before VMStart send no event; those between VMStart and this call were
 * counted by both, hence the subtraction. */
void fx_counters_classes_at_start(uint64_t prepared)
{
    int64_t seen = (int64_t)__atomic_load_n(&classes_prepared, __ATOMIC_RELAXED);
    __atomic_store_n(&classes_base, (int64_t)prepared - seen, __ATOMIC_RELAXED);
}

static bool no_exception(JNIEnv *jni)
{
    return !fx_jni_failed(jni);
}

/* java.lang.Runtime is a boot class: FindClass works from an agent thread. */
static bool runtime_init(JNIEnv *jni)
{
    if (co.runtime != NULL || co.runtime_failed)
        return co.runtime != NULL;
    co.runtime_failed = true;
    jclass cls = (*jni)->FindClass(jni, "java/lang/Runtime");
    jmethodID get =
            cls ? (*jni)->GetStaticMethodID(jni, cls, "getRuntime", "()Ljava/lang/Runtime;") : NULL;
    co.total = get ? (*jni)->GetMethodID(jni, cls, "totalMemory", "()J") : NULL;
    co.free_ = co.total ? (*jni)->GetMethodID(jni, cls, "freeMemory", "()J") : NULL;
    jobject rt = co.free_ ? (*jni)->CallStaticObjectMethod(jni, cls, get) : NULL;
    if (no_exception(jni) && rt != NULL) {
        co.runtime = (*jni)->NewGlobalRef(jni, rt);
        co.runtime_failed = co.runtime == NULL;
    }
    (*jni)->DeleteLocalRef(jni, rt);
    (*jni)->DeleteLocalRef(jni, cls);
    no_exception(jni);
    return co.runtime != NULL;
}

static bool heap(JNIEnv *jni, int64_t *used, int64_t *committed)
{
    if (jni == NULL || !runtime_init(jni))
        return false;
    jlong total = (*jni)->CallLongMethod(jni, co.runtime, co.total);
    jlong free_ = no_exception(jni) ? (*jni)->CallLongMethod(jni, co.runtime, co.free_) : -1;
    if (!no_exception(jni) || total <= 0 || free_ < 0)
        return false;
    *committed = total;
    *used = total - free_;
    return true;
}

/* The second field of /proc/self/statm: resident pages. The file stays open (the model's owner
 * only) and each round reads it anew with pread at offset 0 (a seq_file regenerates there):
 * open, read and close every 100 ms cost the drain thread ~4 % of its CPU on javac, more than
 * the read (issue 31, docs/BENCHMARKS.md "The drain's CPU cut (session 20)"). A failed read
 * closes it, and so does a stopped agent going idle (fx_counters_idle): a stopped agent holds
 * no file of its own; the next round opens it again. */
static int statm_fd = -1;

static bool rss(int64_t *bytes)
{
    static long page;
    int fd = statm_fd;
    char buf[128];
    if (fd < 0 && (fd = statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)) < 0)
        return false;
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    if (n <= 0) {
        fx_counters_idle();
        return false;
    }
    buf[n] = '\0';
    char *end, *at; /* "size resident ...": both fields, as sscanf("%llu %llu") wanted */
    (void)strtoull(buf, &at, 10);
    unsigned long long resident = strtoull(at, &end, 10);
    if (at == buf || end == at)
        return false;
    if (page == 0)
        page = sysconf(_SC_PAGESIZE);
    *bytes = (int64_t)resident * page;
    return true;
}

static bool registered(struct fx_profile *p)
{
    if (co.p != p) {
        co.p = p;
        co.registered = co.failed = false;
        co.last_ns = co.rate_ns = 0;
    }
    if (!co.registered && !co.failed) {
        co.registered = fx_jvm_markers_counters(p, co.ids) == FX_OK;
        co.failed = !co.registered; /* not retried: a retry would register duplicates */
    }
    return co.registered;
}

static void put(struct fx_profile *p, enum fx_jvm_counter k, int64_t t, int64_t v)
{
    if (fx_profile_counter_sample(p, co.ids[k], t, v) != FX_OK)
        co.read_errors++;
}

/* Over at least half a period: a forced round right after a regular one would give noise. */
static void sample_rate(struct fx_profile *p, int64_t now_ns)
{
    uint64_t samples = fx_drain_samples();
    if (co.rate_ns != 0 && now_ns - co.rate_ns < COUNTER_PERIOD_NS / 2)
        return;
    if (co.rate_ns != 0)
        put(p, FX_JVM_SAMPLE_RATE, now_ns,
            (int64_t)((double)(samples - co.rate_samples) * 1e9 / (double)(now_ns - co.rate_ns)));
    co.rate_samples = samples;
    co.rate_ns = now_ns;
}

void fx_counters_sample(JNIEnv *jni, struct fx_profile *p, int64_t now_ns, bool force)
{
    if (!registered(p) ||
        (!force && co.last_ns != 0 && now_ns - co.last_ns < COUNTER_PERIOD_NS - COUNTER_SLACK_NS))
        return;
    int64_t used, committed, resident;
    if (heap(jni, &used, &committed)) {
        put(p, FX_JVM_HEAP_USED, now_ns, used);
        put(p, FX_JVM_HEAP_COMMITTED, now_ns, committed);
    } else {
        co.read_errors++;
    }
    if (rss(&resident))
        put(p, FX_JVM_RSS, now_ns, resident);
    else
        co.read_errors++;
    int64_t classes = __atomic_load_n(&classes_base, __ATOMIC_RELAXED) +
                      (int64_t)__atomic_load_n(&classes_prepared, __ATOMIC_RELAXED);
    put(p, FX_JVM_CLASSES, now_ns, classes);
    sample_rate(p, now_ns);
    co.last_ns = now_ns;
    co.rounds++;
}

bool fx_counters_due(const struct fx_profile *p, int64_t now_ns)
{
    return co.p != p || !co.registered || co.last_ns == 0 ||
           now_ns - co.last_ns >= COUNTER_PERIOD_NS - COUNTER_SLACK_NS;
}

void fx_counters_report(struct fx_profile *p, const char *group)
{
    fx_profile_extra_int(p, group, "counter rounds", (int64_t)co.rounds);
    fx_profile_extra_loss(p, group, "counter read errors", (int64_t)co.read_errors);
}

void fx_counters_idle(void)
{
    if (statm_fd >= 0)
        close(statm_fd);
    statm_fd = -1;
}

void fx_counters_reset(void)
{
    co.rounds = co.read_errors = 0;
}
