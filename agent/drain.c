/* SPDX-License-Identifier: Apache-2.0 */
/* The drain: a JVMTI agent thread that empties every thread's ring every DRAIN_PERIOD_NS and
 * turns raw ASGCT frames into model stacks and samples, resolving each new jmethodID in the
 * cycle it first appears (methods.c). It is the only writer of the profile model until
 * fx_drain_stop returns; then VMDeath owns the model and drains once more itself.
 *
 * Idle gaps (PROFILE-FORMAT.md §11.3): with CPU-time signals an idle thread is simply not
 * sampled, and the front-end would stretch its neighbouring samples across the gap. When a
 * thread's next sample shows it was off the CPU for more than two intervals (wall time between
 * the samples minus the CPU time between them), one "[idle]" sample (Idle category, CPU delta 0)
 * is inserted one interval after the previous sample. Wall mode samples idle threads anyway. */
#include "fx_agent.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "fx_profile.h"
#include "fx_ring.h"

#define DRAIN_PERIOD_NS 10000000 /* 10 ms */

static const char *const asgct_labels[FX_ASGCT_CODES] = {
        "[AGCT: no Java frames]",
        "[AGCT: no class load events]",
        "[AGCT: GC active]",
        "[AGCT: not in Java]",
        "[AGCT: not walkable (native)]",
        "[AGCT: unknown Java]",
        "[AGCT: not walkable (Java)]",
        "[AGCT: unknown thread state]",
        "[AGCT: thread exiting]",
        "[AGCT: deoptimization]",
        "[AGCT: safepoint]",
};

static const char *const state_labels[FX_WS_COUNT] = {
        NULL, NULL, "[state: BLOCKED]", "[state: WAITING]", "[state: TIMED_WAITING]",
};

/* The signal handler's own figures (struct fx_thread), summed over threads. */
struct handler_cost {
    uint64_t cpu_ns, timed, max_ns, handled;
    uint64_t recovered[FX_REC_CASES], rec_failed[FX_REC_FAILS]; /* the handlers' own counts */
    int64_t armed_cpu_ns; /* the threads' CPU time while armed (coverage, cpu mode) */
};

static void add_cost(struct handler_cost *c, const struct fx_thread *t)
{
    c->cpu_ns += __atomic_load_n(&t->handler_ns, __ATOMIC_RELAXED);
    c->timed += __atomic_load_n(&t->handler_timed, __ATOMIC_RELAXED);
    c->handled += __atomic_load_n(&t->handled, __ATOMIC_RELAXED);
    for (int i = 0; i < FX_REC_CASES; i++)
        c->recovered[i] += __atomic_load_n(&t->recovered[i], __ATOMIC_RELAXED);
    for (int i = 0; i < FX_REC_FAILS; i++)
        c->rec_failed[i] += __atomic_load_n(&t->rec_failed[i], __ATOMIC_RELAXED);
    uint64_t mx = __atomic_load_n(&t->handler_max_ns, __ATOMIC_RELAXED);
    c->max_ns = mx > c->max_ns ? mx : c->max_ns;
}

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stop, running;
    struct fx_methods *methods;
    uint32_t methods_gen; /* the model's generation the cached func ids belong to */
    uint64_t methods_resolved, methods_unknown; /* by caches dropped at earlier resets */
    uint64_t outcomes[FX_ASGCT_CODES], outcome_other, java_stacks;
    uint64_t recovered[FX_REC_CASES], rec_failed[FX_REC_FAILS], rec_named;
    uint64_t records, samples, idle_inserted, truncated, model_errors;
    uint64_t weight_sum, cpu_sum_ns, cpu_gaps, wall_sum_ns, wall_gaps;
    struct handler_cost reaped; /* of reaped threads */
    uint64_t drops;             /* of reaped threads */
} dr = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static bool ended(struct fx_thread *t)
{
    return __atomic_load_n(&t->ended, __ATOMIC_ACQUIRE) != 0;
}

/* A leaf or root pseudo-frame that is not Java. */
static int label_frame(struct fx_profile *p, const char *label, uint8_t cat, fx_frame_id *out)
{
    fx_str_id name;
    fx_func_id f;
    int rc = fx_profile_cstring(p, label, &name);
    if (rc != FX_OK)
        return rc;
    struct fx_func_key k = {.name = name,
                            .resource = FX_STR_NONE,
                            .source = FX_STR_NONE,
                            .line = -1,
                            .is_java = false};
    rc = fx_profile_func(p, &k, &f);
    if (rc != FX_OK)
        return rc;
    struct fx_frame_key fk = {.func = f, .line = -1, .category = cat};
    return fx_profile_frame(p, &fk, out);
}

static int outcome_stack(struct fx_profile *p, int32_t code, fx_stack_id *out)
{
    if (code < -(FX_ASGCT_CODES - 1)) {
        dr.outcome_other++;
        return fx_profile_label_stack(p, "[AGCT: other error]", FX_CAT_OTHER, out);
    }
    dr.outcomes[-code]++;
    uint8_t cat = code == FX_ASGCT_GC_ACTIVE ? FX_CAT_GC : FX_CAT_OTHER;
    return fx_profile_label_stack(p, asgct_labels[-code], cat, out);
}

/* The frame of the blob a pc was in (a FX_LINE_STUB / FX_LINE_NMETHOD record frame): a stub by
 * HotSpot's name in the VM category, a compiled method as its Java method; on top of a
 * recovered stack in a "Recovered" subcategory (PROFILE-FORMAT.md §12.1). */
static int blob_frame(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p, const fx_asgct_frame *b,
                      bool recovered, fx_frame_id *out)
{
    if (b->lineno == FX_LINE_NMETHOD)
        return fx_methods_blob_frame(dr.methods, jvmti, jni, p, b->method_id, recovered, out);
    const char *name = fx_codemap_stub_name((uint64_t)(uintptr_t)b->method_id);
    fx_str_id s;
    fx_func_id f;
    int rc = fx_profile_cstring(p, name != NULL ? name : "[unknown stub]", &s);
    struct fx_func_key k = {.name = s,
                            .resource = FX_STR_NONE,
                            .source = FX_STR_NONE,
                            .line = -1,
                            .is_java = false};
    if (rc == FX_OK)
        rc = fx_profile_func(p, &k, &f);
    if (rc != FX_OK)
        return rc;
    struct fx_frame_key fk = {.func = f,
                              .line = -1,
                              .category = FX_CAT_VM,
                              .subcategory = recovered ? FX_VM_RECOVERED_STUB : FX_VM_STUB};
    return fx_profile_frame(p, &fk, out);
}

/* Root = the last ASGCT frame, leaf = frame 0; "[truncated]" above a stack cut at the depth.
 * After a recovery frame 0 is the blob's frame (fx_sample_rec). */
static int java_stack(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p,
                      const struct fx_sample_rec *r, fx_stack_id *out)
{
    fx_stack_id s = FX_STACK_NONE;
    int rc = FX_OK;
    bool recovered = r->recovery > 0 && r->recovery < FX_REC_CASES;
    dr.java_stacks++;
    if (recovered)
        dr.recovered[r->recovery]++;
    if (r->truncated) {
        dr.truncated++;
        rc = fx_profile_label_stack(p, "[truncated]", FX_CAT_OTHER, &s);
    }
    for (int32_t i = r->num_frames - 1; i >= 0 && rc == FX_OK; i--) {
        fx_frame_id f;
        if (i == 0 && recovered)
            rc = blob_frame(jvmti, jni, p, &r->frames[0], true, &f);
        else
            rc = fx_methods_frame(dr.methods, jvmti, jni, p, r->frames[i].method_id,
                                  r->frames[i].lineno, &f);
        if (rc == FX_OK)
            rc = fx_profile_stack(p, s, f, &s);
    }
    *out = s;
    return rc;
}

/* An ASGCT failure: its label frame, and above it the blob the pc was in when one is known
 * (the failure stays the root: nothing is claimed about the callers). */
static int failure_stack(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p,
                         const struct fx_sample_rec *r, uint32_t len, fx_stack_id *out)
{
    int rc = outcome_stack(p, r->num_frames, out);
    if (r->recovery == 0 || rc != FX_OK)
        return rc;
    int reason = r->recovery & 0x3F;
    if (reason < FX_REC_FAILS)
        dr.rec_failed[reason]++;
    if (!(r->recovery & FX_REC_NAMED) ||
        len < sizeof(struct fx_sample_rec) + sizeof(fx_asgct_frame))
        return FX_OK;
    dr.rec_named++;
    fx_frame_id f;
    rc = blob_frame(jvmti, jni, p, &r->frames[0], false, &f);
    return rc == FX_OK ? fx_profile_stack(p, *out, f, out) : rc;
}

static int sample_stack(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p,
                        const struct fx_sample_rec *r, uint32_t len, fx_stack_id *out)
{
    int rc = r->num_frames > 0 ? java_stack(jvmti, jni, p, r, out)
                               : failure_stack(jvmti, jni, p, r, len, out);
    if (rc != FX_OK || r->state >= FX_WS_COUNT || state_labels[r->state] == NULL)
        return rc;
    fx_frame_id f;
    rc = label_frame(p, state_labels[r->state], FX_CAT_IDLE, &f);
    return rc == FX_OK ? fx_profile_stack(p, *out, f, out) : rc;
}

/* The "[idle]" sample for a gap (see the file comment). */
static void maybe_idle(struct fx_profile *p, struct fx_thread *t, const struct fx_sample_rec *r,
                       int64_t cpu_delta)
{
    int64_t iv = (int64_t)fx_ag.opt.interval_ns;
    if (fx_ag.opt.mode == FX_MODE_WALL || !t->have_last || t->batch_lost)
        return;
    if ((r->time_ns - t->last_time_ns) - cpu_delta <= 2 * iv)
        return;
    fx_stack_id idle;
    if (fx_profile_label_stack(p, "[idle]", FX_CAT_IDLE, &idle) == FX_OK &&
        fx_profile_sample(p, t->profile_index, t->last_time_ns + iv, idle, 0, 1) == FX_OK)
        dr.idle_inserted++;
}

static void account(struct fx_thread *t, const struct fx_sample_rec *r, int64_t cpu_delta)
{
    dr.samples++;
    dr.weight_sum += r->weight;
    if (t->have_last) {
        dr.cpu_sum_ns += (uint64_t)cpu_delta;
        dr.cpu_gaps++;
        dr.wall_sum_ns += (uint64_t)(r->time_ns - t->last_time_ns);
        dr.wall_gaps++;
    }
    t->have_last = true;
    t->last_time_ns = r->time_ns;
    t->last_cpu_ns = r->cpu_ns;
}

/* CPU time since the thread's previous sample. In cpu mode the handler does not read the
 * thread's CPU clock (a system call per sample): each signal stands for `weight` intervals of
 * it, which is what the perf event and the CPU-clock timer count. */
static int64_t cpu_since_last(const struct fx_thread *t, const struct fx_sample_rec *r)
{
    if (r->cpu_ns == FX_CPU_NOT_READ)
        return (int64_t)r->weight * (int64_t)fx_ag.opt.interval_ns;
    if (!t->have_last || t->last_cpu_ns == FX_CPU_NOT_READ || r->cpu_ns < t->last_cpu_ns)
        return 0;
    return r->cpu_ns - t->last_cpu_ns;
}

static void one_record(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p, struct fx_thread *t,
                       const struct fx_sample_rec *r, uint32_t len)
{
    dr.records++;
    if (!fx_window_admit(r->time_ns))
        return;
    fx_stack_id stack;
    int rc = sample_stack(jvmti, jni, p, r, len, &stack);
    if (rc == FX_EFULL && fx_window_full_stack(&stack)) /* tables at their limit (window.c) */
        rc = FX_OK;
    if (rc != FX_OK) {
        dr.model_errors++;
        return;
    }
    int64_t cpu_delta = cpu_since_last(t, r);
    maybe_idle(p, t, r, cpu_delta);
    if (fx_profile_sample(p, t->profile_index, r->time_ns, stack, cpu_delta, r->weight) != FX_OK) {
        dr.model_errors++;
        return;
    }
    account(t, r, cpu_delta);
}

static bool add_to_profile(struct fx_profile *p, struct fx_thread *t)
{
    if (t->in_profile)
        return true;
    if (fx_profile_thread_add(p, t->name, t->tid, t->start_ns, &t->profile_index) != FX_OK)
        return false;
    if (strcmp(t->name, "main") == 0)
        fx_profile_set_main_thread(p, t->profile_index);
    t->in_profile = true;
    return true;
}

int fx_drain_thread_index(struct fx_profile *p, struct fx_thread *t, uint32_t *out)
{
    if (!add_to_profile(p, t))
        return FX_ENOMEM;
    *out = t->profile_index;
    return FX_OK;
}

/* Empties one ring. `was_ended` was read before draining, so an empty ring is then final.
 * A thread enters the model with its first sample: threads that never ran long enough to be
 * sampled would only add empty tracks (they are still counted as "threads sampled"). */
static void drain_thread(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p, struct fx_thread *t)
{
    bool was_ended = ended(t);
    /* Dropped samples leave a gap that is not idleness; where in this pass's records it falls
     * is unknown, so none of them may start an "[idle]" guess. */
    uint64_t drops = fx_ring_drops(&t->ring);
    t->batch_lost = drops != t->seen_drops;
    t->seen_drops = drops;
    const void *rec;
    uint32_t len;
    while ((rec = fx_ring_peek(&t->ring, &len)) != NULL) {
        if (!add_to_profile(p, t)) {
            dr.model_errors++;
            return; /* the records wait for the next cycle */
        }
        if (len >= sizeof(struct fx_sample_rec))
            one_record(jvmti, jni, p, t, rec, len);
        fx_ring_release(&t->ring);
    }
    if (was_ended && !t->finished) {
        if (t->in_profile)
            fx_profile_thread_unregister(p, t->profile_index, t->end_ns);
        fx_markers_thread_finished(jvmti, jni, p, t);
        t->finished = true;
    }
}

static bool finished(struct fx_thread *t)
{
    if (!t->finished)
        return false;
    add_cost(&dr.reaped, t);
    dr.reaped.armed_cpu_ns += fx_timer_armed_cpu_ns(t); /* fx_threads_reap holds the lock */
    uint64_t d = fx_ring_drops(&t->ring);
    dr.drops += d;
    if (d > 0 && fx_ag.profile != NULL) {
        char label[160];
        snprintf(label, sizeof(label), "ring drops: %s (tid %d)", t->name, (int)t->tid);
        fx_profile_extra_int(fx_ag.profile, "Losses", label, (int64_t)d);
    }
    return true;
}

void fx_drain_once(jvmtiEnv *jvmti, JNIEnv *jni)
{
    struct fx_profile *p = fx_ag.profile;
    if (p == NULL)
        return;
    if (dr.methods != NULL && dr.methods_gen != fx_profile_generation(p)) {
        /* The tables were rebuilt at a reset (window.c): the cached func ids are void. The
         * methods of the next period are resolved again, once each. */
        dr.methods_resolved += fx_methods_count(dr.methods);
        dr.methods_unknown += fx_methods_unknown(dr.methods);
        fx_methods_free(dr.methods);
        dr.methods = NULL;
    }
    if (dr.methods == NULL && (dr.methods = fx_methods_new()) == NULL)
        return;
    dr.methods_gen = fx_profile_generation(p);
    fx_codemap_publish();            /* the code ranges stack recovery reads (codemap.c) */
    fx_markers_drain(jvmti, jni, p); /* before any reaping: records may name ended threads */
    for (struct fx_thread *t = fx_threads_head(); t != NULL; t = t->next)
        drain_thread(jvmti, jni, p, t);
    fx_window_bound(p); /* the memory bound: the oldest samples go (window.c) */
    if (!__atomic_load_n(&fx_ag.dead, __ATOMIC_ACQUIRE))
        fx_threads_reap(jni, finished);
}

static bool drain_sleep(struct timespec *next)
{
    uint64_t ns = (uint64_t)next->tv_nsec + DRAIN_PERIOD_NS;
    next->tv_sec += (time_t)(ns / 1000000000);
    next->tv_nsec = (long)(ns % 1000000000);
    pthread_mutex_lock(&dr.lock);
    while (!dr.stop && pthread_cond_timedwait(&dr.cond, &dr.lock, next) == 0)
        ;
    bool stop = dr.stop;
    pthread_mutex_unlock(&dr.lock);
    return !stop;
}

static void JNICALL drain_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
    (void)arg;
    struct timespec next;
    clock_gettime(CLOCK_REALTIME, &next);
    while (drain_sleep(&next)) {
        fx_drain_once(jvmti, jni);
        fx_window_serve(jvmti, jni); /* dumps, status: between passes (window.c) */
    }
    fx_window_drain_exiting();
    pthread_mutex_lock(&dr.lock);
    dr.running = false;
    pthread_cond_broadcast(&dr.cond);
    pthread_mutex_unlock(&dr.lock);
}

int fx_drain_start(JNIEnv *jni)
{
    dr.running = true;
    int rc = fx_agent_run_thread(jni, "fxagent drain", drain_main, NULL);
    if (rc != FX_OK)
        dr.running = false;
    return rc;
}

void fx_drain_stop(void)
{
    pthread_mutex_lock(&dr.lock);
    dr.stop = true;
    pthread_cond_broadcast(&dr.cond);
    while (dr.running)
        pthread_cond_wait(&dr.cond, &dr.lock);
    pthread_mutex_unlock(&dr.lock);
}

uint64_t fx_drain_samples(void)
{
    return dr.samples;
}

uint64_t fx_drain_ring_drops(void)
{
    uint64_t drops = dr.drops;
    for (struct fx_thread *t = fx_threads_head(); t != NULL; t = t->next)
        drops += fx_ring_drops(&t->ring);
    return drops;
}

static void extra_ms(struct fx_profile *p, const char *group, const char *label, double ns)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%.3f ms", ns / 1e6);
    fx_profile_extra_str(p, group, label, buf);
}

/* Do the samples account for the CPU time they claim to sample? Each cpu-mode sample stands
 * for weight x interval of its thread's CPU time; the threads' CPU time while armed is what
 * they should add up to. The shortfall is every loss at once: ring drops, signals merged while
 * one was pending, kernel time (exclude_kernel), and each thread's last partial interval. */
static void report_coverage(struct fx_profile *p, const char *g, int64_t armed_cpu_ns)
{
    double covered = (double)dr.weight_sum * (double)fx_ag.opt.interval_ns;
    extra_ms(p, g, "thread CPU time while sampled", (double)armed_cpu_ns);
    extra_ms(p, g, "CPU time the samples stand for (weight x interval)", covered);
    if (armed_cpu_ns > 0) {
        char buf[48];
        snprintf(buf, sizeof(buf), "%.1f %%", 100.0 * covered / (double)armed_cpu_ns);
        fx_profile_extra_str(p, g, "coverage (samples / CPU time while sampled)", buf);
    }
}

static void report_sampling(struct fx_profile *p, const struct handler_cost *c)
{
    const char *g = "Sampling";
    fx_profile_extra_str(p, g, "engine", fx_timer_engine_name());
    extra_ms(p, g, "interval requested", (double)fx_ag.opt.interval_ns);
    if (fx_ag.opt.mode == FX_MODE_WALL && dr.wall_gaps > 0)
        extra_ms(p, g, "interval effective (mean wall time between a thread's samples)",
                 (double)dr.wall_sum_ns / (double)dr.wall_gaps);
    else if (dr.cpu_gaps > 0)
        extra_ms(p, g,
                 fx_ag.opt.mode == FX_MODE_CPU
                         ? "interval effective (mean intervals per signal, from timer overruns)"
                         : "interval effective (mean thread CPU time between signals)",
                 (double)dr.cpu_sum_ns / (double)dr.cpu_gaps);
    fx_profile_extra_str(p, g, "engine note", fx_timer_note());
    fx_profile_extra_int(p, g, "samples", (int64_t)dr.samples);
    fx_profile_extra_int(p, g, "sample weight total", (int64_t)dr.weight_sum);
    fx_profile_extra_int(p, g, "idle samples inserted", (int64_t)dr.idle_inserted);
    fx_profile_extra_int(p, g, "signals handled", (int64_t)c->handled);
    /* Thread CPU time, less the timing's own clock reads; measured on 1 signal in 16. */
    fx_profile_extra_int(p, g, "mean CPU ns in handler per signal",
                         c->timed ? (int64_t)(c->cpu_ns / c->timed) : 0);
    fx_profile_extra_int(p, g, "max CPU ns in handler (timed signals)", (int64_t)c->max_ns);
    fx_profile_extra_int(p, g, "signals whose handler CPU time was measured", (int64_t)c->timed);
    if (fx_ag.opt.mode == FX_MODE_CPU)
        report_coverage(p, g, c->armed_cpu_ns);
    fx_profile_extra_int(
            p, g, "methods resolved",
            (int64_t)(dr.methods_resolved + (dr.methods ? fx_methods_count(dr.methods) : 0)));
    if (fx_ag.opt.mode == FX_MODE_WALL)
        fx_profile_extra_int(p, g, "wall sampler ticks", (int64_t)fx_timer_wall_ticks());
}

static void report_outcomes(struct fx_profile *p)
{
    const char *g = "AsyncGetCallTrace outcomes";
    fx_profile_extra_int(p, g, "Java stack", (int64_t)dr.java_stacks);
    for (int i = 0; i < FX_ASGCT_CODES; i++) {
        char label[80];
        snprintf(label, sizeof(label), "%d %s", -i, asgct_labels[i]);
        fx_profile_extra_int(p, g, label, (int64_t)dr.outcomes[i]);
    }
    if (dr.outcome_other)
        fx_profile_extra_int(p, g, "other codes", (int64_t)dr.outcome_other);
}

static const char *const rec_case_labels[FX_REC_CASES] = {
        NULL,
        "recovered: pc in a vtable/itable stub",
        "recovered: pc in a compiled method's prologue (frame not built)",
        "recovered: pc in a compiled method's epilogue (frame released)",
        "recovered: pc in a compiled method's inline cache check (before its verified entry)",
        "recovered: pc in an I2C/C2I adapter",
        "recovered: pc in g1_post_barrier_slow (caller at its barrier's branch)",
};
static const char *const rec_fail_labels[FX_REC_FAILS] = {
        NULL,
        "not recovered: pc in no known code range",
        "not recovered: pc in another stub (named)",
        "not recovered: pc in a compiled method's body (named)",
        "not recovered: compiled method layout unknown or stale",
        "not recovered: prologue/epilogue/inline cache check instruction not known",
        "not recovered: stack word outside the thread's stack (or bounds unknown)",
        "not recovered: AsyncGetCallTrace failed from the caller's context",
        "not recovered: code table busy",
        "not recovered: caller at bci 0 (a deoptimized caller looks so)",
};

/* Stack recovery (issue 20, docs/VALIDATION.md section 8): the stacks in this profile per case
 * ("recovered stacks" is their sum, the contract with tests/it/stack_shape_check.py), the
 * failures that stayed failures, and the handlers' own counts of attempts. */
static void report_recovery(struct fx_profile *p, const struct handler_cost *c)
{
    const char *g = "Stack recovery";
    uint64_t total = 0, tried = 0;
    for (int i = 1; i < FX_REC_CASES; i++) {
        total += dr.recovered[i];
        fx_profile_extra_int(p, g, rec_case_labels[i], (int64_t)dr.recovered[i]);
    }
    fx_profile_extra_int(p, g, "recovered stacks", (int64_t)total);
    for (int i = 1; i < FX_REC_FAILS; i++)
        fx_profile_extra_int(p, g, rec_fail_labels[i], (int64_t)dr.rec_failed[i]);
    fx_profile_extra_int(p, g, "failures named by their blob", (int64_t)dr.rec_named);
    for (int i = 1; i < FX_REC_CASES; i++)
        tried += c->recovered[i];
    for (int i = 1; i < FX_REC_FAILS; i++)
        tried += c->rec_failed[i];
    fx_profile_extra_int(p, g, "handler: attempts (ASGCT -5/-6)", (int64_t)tried);
    uint64_t ok = 0;
    for (int i = 1; i < FX_REC_CASES; i++)
        ok += c->recovered[i];
    fx_profile_extra_int(p, g, "handler: stacks recovered (incl. samples later lost)", (int64_t)ok);
    fx_codemap_report(p, g);
}

static void report_losses(struct fx_profile *p, uint64_t drops)
{
    const char *g = "Losses";
    struct fx_threads_stats st;
    fx_threads_stats(&st);
    fx_profile_extra_int(p, g, "ring drops (all threads)", (int64_t)drops);
    fx_profile_extra_int(p, g, "truncated stacks", (int64_t)dr.truncated);
    fx_profile_extra_int(
            p, g, "unknown method frames",
            (int64_t)(dr.methods_unknown + (dr.methods ? fx_methods_unknown(dr.methods) : 0)));
    fx_profile_extra_int(p, g, "model errors", (int64_t)dr.model_errors);
    fx_profile_extra_int(p, g, "signals on unregistered threads",
                         (int64_t)__atomic_load_n(&fx_sig.no_thread, __ATOMIC_RELAXED));
    fx_profile_extra_int(p, g, "signals after sampling stopped",
                         (int64_t)__atomic_load_n(&fx_sig.disabled, __ATOMIC_RELAXED));
    fx_profile_extra_int(p, g, "perf events that could not be re-armed",
                         (int64_t)__atomic_load_n(&fx_sig.rearm_failed, __ATOMIC_RELAXED));
    fx_profile_extra_int(p, g, "threads not sampled", (int64_t)st.not_sampled);
    fx_profile_extra_int(p, g, "threads whose timer failed", (int64_t)st.arm_failed);
    fx_profile_extra_int(p, g, "threads sampled", (int64_t)st.registered);
    fx_profile_extra_int(p, g, "threads found running before VMInit", (int64_t)st.existing);
}

void fx_drain_report(struct fx_profile *p)
{
    struct handler_cost cost = dr.reaped;
    uint64_t drops = dr.drops;
    for (struct fx_thread *t = fx_threads_head(); t != NULL; t = t->next) {
        uint64_t d = fx_ring_drops(&t->ring);
        add_cost(&cost, t);
        fx_threads_lock();
        cost.armed_cpu_ns += fx_timer_armed_cpu_ns(t);
        fx_threads_unlock();
        drops += d;
        if (d > 0) {
            char label[160];
            snprintf(label, sizeof(label), "ring drops: %s (tid %d)", t->name, (int)t->tid);
            fx_profile_extra_int(p, "Losses", label, (int64_t)d);
        }
    }
    report_sampling(p, &cost);
    report_outcomes(p);
    report_recovery(p, &cost);
    report_losses(p, drops);
}
