/* SPDX-License-Identifier: Apache-2.0 */
/* Trace context on samples (issue 33 item 4): fxagent.TraceContext's natives and the drain's
 * share. A thread's first call gets a direct buffer over its own record (include/fx_tctx.h),
 * allocated here, hung on its struct fx_thread and freed with it (threads.c): Java then writes
 * the context with plain stores, the signal handler copies it into each sample, and the drain
 * turns each run of samples of one context into a "Trace span" marker on the samples' track,
 * from the first sample to 1 us after the last (fx_jvm_markers_span), which is what every output
 * reads. Labels are key/value pairs interned to ids once (a table under a mutex, never in the
 * signal path); the drain names them when it writes a marker. */
#include "internal.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_tctx.h"

#define LABELS_MAX    4096 /* interned pairs at most: a label per request would grow forever */
#define LABEL_STR_MAX 255  /* bytes of a key or value (TraceContext.label checks characters) */
#define SPAN_TAIL_NS  1000 /* a span marker ends this long after its last sample */

/* What the thread's allocation holds: the record Java writes (first, so the struct fx_thread's
 * pointer to it is this struct's), then the drain's open span. */
struct slot {
    struct fx_tctx_rec rec; /* Java's and the handler's */
    bool open;              /* drain only from here */
    uint32_t track;
    struct fx_tctx_rec cur; /* the open span's context */
    int64_t first_ns, last_ns;
};

static struct {
    pthread_mutex_t lock; /* the label table */
    char (*pair)[2][LABEL_STR_MAX + 1];
    uint32_t n, cap;
    uint64_t full; /* label() calls refused: the table is full */
    uint64_t threads, no_thread;
    /* drain only */
    uint64_t samples, spans, unknown_labels, marker_errors;
} tc = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* --- producers: fxagent.TraceContext natives (application threads, not signal context) --- */

JNIEXPORT jboolean JNICALL Java_fxagent_TraceContext_enabled0(JNIEnv *env, jclass cls);
JNIEXPORT jobject JNICALL Java_fxagent_TraceContext_buffer0(JNIEnv *env, jclass cls);
JNIEXPORT jint JNICALL Java_fxagent_TraceContext_label0(JNIEnv *env, jclass cls, jstring key,
                                                        jstring value);

JNIEXPORT jboolean JNICALL Java_fxagent_TraceContext_enabled0(JNIEnv *env, jclass cls)
{
    (void)env, (void)cls;
    return JNI_TRUE;
}

/* Only the thread itself sets its own pointer, once: no race with another writer. The handler
 * loads it with acquire after this release store, so it sees the zeroed record. */
JNIEXPORT jobject JNICALL Java_fxagent_TraceContext_buffer0(JNIEnv *env, jclass cls)
{
    (void)cls;
    struct fx_thread *t = fx_probe_self();
    if (t == NULL) {
        __atomic_fetch_add(&tc.no_thread, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    struct fx_tctx_rec *r = __atomic_load_n(&t->tctx, __ATOMIC_ACQUIRE);
    if (r == NULL) {
        struct slot *s = fx_calloc(1, sizeof(*s));
        if (s == NULL)
            return NULL;
        r = &s->rec;
        __atomic_store_n(&t->tctx, r, __ATOMIC_RELEASE);
        __atomic_fetch_add(&tc.threads, 1, __ATOMIC_RELAXED);
    }
    jobject b = (*env)->NewDirectByteBuffer(env, r, (jlong)sizeof(*r));
    return fx_jni_failed(env) ? NULL : b;
}

static bool utf(JNIEnv *env, jstring s, char *out)
{
    jsize chars = (*env)->GetStringLength(env, s);
    if ((*env)->GetStringUTFLength(env, s) > LABEL_STR_MAX)
        return false;
    memset(out, 0, LABEL_STR_MAX + 1);
    (*env)->GetStringUTFRegion(env, s, 0, chars, out);
    return !fx_jni_failed(env);
}

/* Under the lock: the id of the pair, adding it; 0 when the table is full. */
static jint intern(const char *k, const char *v)
{
    for (uint32_t i = 0; i < tc.n; i++)
        if (!strcmp(tc.pair[i][0], k) && !strcmp(tc.pair[i][1], v))
            return (jint)i + 1;
    if (tc.n == tc.cap) {
        uint32_t cap = tc.cap ? tc.cap * 2 : 16;
        void *n = tc.n < LABELS_MAX ? fx_reallocarray(tc.pair, cap, sizeof(*tc.pair)) : NULL;
        if (n == NULL) {
            tc.full++;
            return 0;
        }
        tc.pair = n;
        tc.cap = cap;
    }
    memcpy(tc.pair[tc.n][0], k, LABEL_STR_MAX + 1);
    memcpy(tc.pair[tc.n][1], v, LABEL_STR_MAX + 1);
    return (jint)++tc.n;
}

JNIEXPORT jint JNICALL Java_fxagent_TraceContext_label0(JNIEnv *env, jclass cls, jstring key,
                                                        jstring value)
{
    (void)cls;
    char k[LABEL_STR_MAX + 1], v[LABEL_STR_MAX + 1];
    if (key == NULL || value == NULL || !utf(env, key, k) || !utf(env, value, v))
        return 0; /* TraceContext.label checked the lengths in characters; bytes may be more */
    pthread_mutex_lock(&tc.lock);
    jint id = intern(k, v);
    pthread_mutex_unlock(&tc.lock);
    return id;
}

/* --- the drain's share (model owner) --- */

/* "key=value" of label id, or false for 0 or an id the table never gave. */
static bool label_text(uint32_t id, char *out, size_t cap)
{
    bool ok = false;
    pthread_mutex_lock(&tc.lock);
    if (id >= 1 && id <= tc.n) {
        snprintf(out, cap, "%s=%s", tc.pair[id - 1][0], tc.pair[id - 1][1]);
        ok = true;
    }
    pthread_mutex_unlock(&tc.lock);
    return ok;
}

static void close_span(struct fx_profile *p, struct slot *s)
{
    if (!s->open)
        return;
    s->open = false;
    char trace[33], span[17], labels[FX_TCTX_LABELS][2 * LABEL_STR_MAX + 2];
    snprintf(trace, sizeof(trace), "%016" PRIx64 "%016" PRIx64, s->cur.trace_hi, s->cur.trace_lo);
    snprintf(span, sizeof(span), "%016" PRIx64, s->cur.span);
    struct fx_jvm_span m = {.trace_id = trace, .span_id = span};
    for (int i = 0, n = 0; i < FX_TCTX_LABELS; i++) {
        if (s->cur.label[i] == 0)
            continue;
        if (label_text(s->cur.label[i], labels[n], sizeof(labels[n])))
            m.label[n] = labels[n], n++;
        else
            tc.unknown_labels++;
    }
    /* The Firefox Profiler selects the samples in [start, end) of a marker: ending 1 us after
     * the last sample keeps it in the selection, and the next sample of the thread, later than
     * that by a handler's run at least, out of the span (pfile_spans.c's half a us included). */
    if (fx_jvm_markers_span(p, (fx_thread_id){s->track}, s->first_ns, s->last_ns + SPAN_TAIL_NS,
                            &m) == FX_OK)
        tc.spans++;
    else
        tc.marker_errors++;
}

static void trace_sample(struct fx_profile *p, struct fx_thread *t, const struct fx_sample_rec *r,
                         uint32_t len, uint32_t track)
{
    struct slot *s = (struct slot *)(void *)__atomic_load_n(&t->tctx, __ATOMIC_ACQUIRE);
    if (s == NULL)
        return;
    struct fx_tctx_rec c;
    /* every part of a record is a multiple of 8 bytes: the context ends at len */
    bool has = r->tctx && len >= sizeof(*r) + sizeof(c);
    if (has)
        memcpy(&c, (const uint8_t *)r + len - sizeof(c), sizeof(c));
    if (s->open && (!has || c.gen != s->cur.gen || track != s->track))
        close_span(p, s);
    if (!has)
        return;
    tc.samples++;
    if (!s->open) {
        s->open = true;
        s->cur = c;
        s->track = track;
        s->first_ns = r->time_ns;
    }
    s->last_ns = r->time_ns;
}

static void trace_flush(struct fx_profile *p, struct fx_thread *t)
{
    struct slot *s = (struct slot *)(void *)__atomic_load_n(&t->tctx, __ATOMIC_ACQUIRE);
    if (s != NULL)
        close_span(p, s);
}

static void trace_reset_thread(struct fx_thread *t)
{
    struct slot *s = (struct slot *)(void *)__atomic_load_n(&t->tctx, __ATOMIC_ACQUIRE);
    if (s != NULL)
        s->open = false;
}

static void trace_report(struct fx_profile *p)
{
    const char *g = "Trace context";
    if (__atomic_load_n(&tc.threads, __ATOMIC_RELAXED) == 0)
        return; /* fxagent.TraceContext never used: no group */
    pthread_mutex_lock(&tc.lock);
    uint32_t pairs = tc.n;
    uint64_t full = tc.full;
    pthread_mutex_unlock(&tc.lock);
    fx_profile_extra_int(p, g, "threads with a context record",
                         (int64_t)__atomic_load_n(&tc.threads, __ATOMIC_RELAXED));
    fx_profile_extra_int(p, g, "samples with a context", (int64_t)tc.samples);
    fx_profile_extra_int(p, g, "span markers", (int64_t)tc.spans);
    fx_profile_extra_int(p, g, "labels interned", (int64_t)pairs);
    fx_profile_extra_loss(p, g, "labels refused (table of 4096 full)", (int64_t)full);
    fx_profile_extra_loss(p, g, "unknown label ids on spans", (int64_t)tc.unknown_labels);
    fx_profile_extra_loss(p, g, "span markers lost (model full)", (int64_t)tc.marker_errors);
    fx_profile_extra_loss(p, g, "threads refused a record (not sampled)",
                          (int64_t)__atomic_load_n(&tc.no_thread, __ATOMIC_RELAXED));
}

/* Before a dump: each open span goes in this file (continued in the next), then the figures. */
static void trace_before_dump(JNIEnv *jni, struct fx_profile *p, const struct fx_span *span)
{
    (void)jni, (void)span;
    for (struct fx_thread *t = fx_threads_head(); t != NULL; t = t->next)
        trace_flush(p, t);
    trace_report(p);
}

/* A new recording: the counts from zero, no span open. */
static void trace_new_recording(struct fx_profile *p)
{
    (void)p;
    tc.samples = tc.spans = tc.unknown_labels = tc.marker_errors = 0;
    for (struct fx_thread *t = fx_threads_head(); t != NULL; t = t->next)
        trace_reset_thread(t);
}

/* Registered after the sampler (fx_drain_source): it reads the context part of the samples'
 * records as the drain adds them, and closes a thread's span when the thread ends. */
const struct fx_source fx_trace_ctx_source = {
        .name = "trace context",
        .before_dump = trace_before_dump,
        .reset = trace_new_recording,
        .sample = trace_sample,
        .thread_ended = trace_flush,
};
