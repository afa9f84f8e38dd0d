/* SPDX-License-Identifier: Apache-2.0 */
/* The model and its drain: a periodic agent thread that drains every source (fx_sources_drain: the
 * markers, the CPU/wall sampler) and then bounds the model and frees ended threads. Its period
 * adapts (fx_drain_period.h): 10 ms while code went past the full recent table (codemap.c), a queue
 * fills or a ring was 1/8 full, up to 100 ms while none does. The sampler's share is here: each
 * thread's ring becomes model stacks (stacks.c) and samples, each new jmethodID resolved in the
 * pass it first appears (methods.c). The drain is the only writer of the model until fx_drain_stop
 * returns; then VMDeath owns the model and drains once more itself. Its OS name says whether the
 * sampler runs or was stopped, for `fxprof list` (fx_agent_state.h).
 *
 * Idle gaps (PROFILE-FORMAT.md §11.3): with CPU-time signals an idle thread is simply not
 * sampled, and the front-end would stretch its neighbouring samples across the gap. When a
 * thread's next sample shows it was off the CPU for more than two intervals (wall time between
 * the samples minus the CPU time between them), one "[idle]" sample (Idle category, CPU delta 0)
 * is inserted one interval after the previous sample, with weight 0: it ends the activity
 * graph's fill at the gap (the graph is the same as with weight 1, checked in the real UI) but
 * counts for nothing in the call tree, where it stood for 44-48 % of a thread's samples. Wall
 * mode samples idle threads anyway. */
#include "internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include "fx_agent_state.h"
#include "fx_drain_period.h"
#include "fx_evq.h"
#include "fx_ring.h"

/* The signal handler's own figures (struct fx_thread), summed over threads. */
struct handler_cost {
    uint64_t cpu_ns, timed, max_ns, handled;
    struct fx_recovery_counts rec; /* the handlers' own counts */
    int64_t armed_cpu_ns;          /* the threads' CPU time while armed (coverage, cpu mode) */
};

static void add_cost(struct handler_cost *c, const struct fx_thread *t)
{
    c->cpu_ns += __atomic_load_n(&t->handler_ns, __ATOMIC_RELAXED);
    c->timed += __atomic_load_n(&t->handler_timed, __ATOMIC_RELAXED);
    c->handled += __atomic_load_n(&t->handled, __ATOMIC_RELAXED);
    for (int i = 0; i < FX_REC_CASES; i++)
        c->rec.recovered[i] += __atomic_load_n(&t->recovered[i], __ATOMIC_RELAXED);
    for (int i = 0; i < FX_REC_FAILS; i++)
        c->rec.failed[i] += __atomic_load_n(&t->rec_failed[i], __ATOMIC_RELAXED);
    c->rec.codeheap += __atomic_load_n(&t->rec_codeheap, __ATOMIC_RELAXED);
    uint64_t mx = __atomic_load_n(&t->handler_max_ns, __ATOMIC_RELAXED);
    c->max_ns = mx > c->max_ns ? mx : c->max_ns;
}

/* The model's owner only, but `samples` (atomic: status and counters read it anywhere). */
static struct {
    struct fx_profile *profile;
    struct fx_methods *methods;
    uint32_t methods_gen; /* the model's generation the cached func ids belong to */
    uint64_t methods_resolved, methods_unknown; /* by caches dropped at earlier resets */
    uint64_t records, samples, idle_inserted, model_errors;
    uint64_t weight_sum, cpu_sum_ns, cpu_gaps, wall_sum_ns, wall_gaps;
    uint64_t covered_ns;        /* cpu mode: weight x interval of each sample's own recording */
    struct handler_cost reaped; /* of reaped threads */
    uint64_t drops;             /* of reaped threads */
    int64_t thread_cpu_ns; /* the drain thread's CPU time, read at a dump it serves or its exit */
    bool serving;          /* the drain thread serves a request (dump, status): drain_report */
    uint64_t passes, slow_passes; /* wake-ups of the drain; those after a wait over 10 ms */
    uint64_t record_max;          /* bytes of the largest ring record drained */
    uint64_t pass_begin_ns, span_max_ns, ring_min; /* a ring's longest wait; the smallest ring */
    struct fx_drain_load load;                     /* the period's inputs, gathered by the pass */
    bool idle; /* fx_model_idle until the next recording: a pass (status) builds no cache again */
} dr;

int fx_model_init(void)
{
    struct fx_profile *p = fx_profile_new();
    if (p == NULL)
        return FX_ENOMEM;
    fx_profile_set_start(p, fx_rec()->start_ns, fx_rec()->start_epoch_ms);
    dr.profile = p;
    if (fx_window_init(p) != FX_OK)
        fx_log("out of memory at start: samples past the table limit will be lost");
    return FX_OK;
}

struct fx_profile *fx_model_profile(void)
{
    return dr.profile;
}

/* The "[idle]" sample for a gap (see the file comment). */
static void maybe_idle(struct fx_profile *p, struct fx_thread *t, const struct fx_sample_rec *r,
                       int64_t cpu_delta)
{
    int64_t iv = (int64_t)fx_opt()->interval_ns;
    if (fx_opt()->mode == FX_MODE_WALL || !t->have_last || t->batch_lost)
        return;
    if ((r->time_ns - t->last_time_ns) - cpu_delta <= 2 * iv)
        return;
    fx_stack_id idle;
    if (fx_profile_label_stack(p, "[idle]", FX_CAT_IDLE, &idle) == FX_OK &&
        fx_profile_sample(p, t->profile_index, t->last_time_ns + iv, idle, 0, 0) == FX_OK)
        dr.idle_inserted++;
}

static void account(struct fx_thread *t, const struct fx_sample_rec *r, int64_t cpu_delta)
{
    dr.samples++;
    dr.weight_sum += r->weight;
    if (fx_opt()->mode == FX_MODE_CPU) /* a start may change the interval: summed as it was */
        dr.covered_ns += (uint64_t)r->weight * fx_opt()->interval_ns;
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
        return (int64_t)r->weight * (int64_t)fx_opt()->interval_ns;
    if (!t->have_last || t->last_cpu_ns == FX_CPU_NOT_READ || r->cpu_ns < t->last_cpu_ns)
        return 0;
    return r->cpu_ns - t->last_cpu_ns;
}

/* Wall mode: did the thread run since its previous sample? At least a tenth of the wall time
 * between them on its CPU clock (a thread in a blocking system call uses microseconds; a busy one
 * sharing a CPU with a few others still passes). The first sample of a thread is taken as
 * running, as before issue 18. */
static bool on_cpu(const struct fx_thread *t, const struct fx_sample_rec *r, int64_t cpu_delta)
{
    if (!t->have_last || r->cpu_ns == FX_CPU_NOT_READ)
        return true;
    return cpu_delta * 10 >= r->time_ns - t->last_time_ns;
}

static void one_record(JNIEnv *jni, struct fx_profile *p, struct fx_thread *t,
                       const struct fx_sample_rec *r, uint32_t len)
{
    dr.records++;
    if (!fx_window_admit(r->time_ns))
        return;
    fx_stack_id stack;
    struct fx_vt_route vt = {.index = t->profile_index, .keep = -1, .frozen = -1};
    int64_t cpu_delta = cpu_since_last(t, r);
    int rc = fx_model_vthreads_route(p, r, len, &vt); /* issue 22 */
    if (rc == FX_OK)
        rc = fx_stacks_of_record(dr.methods, jni, p, t, r, len, on_cpu(t, r, cpu_delta), &vt,
                                 &stack);
    if (rc == FX_OK) /* depth= counts every frame kept (issue 32 item 7) */
        rc = fx_stack_depth_cap(p, vt.root, fx_opt()->depth, fx_opt()->depth_cut, &stack);
    bool full = rc == FX_EFULL && fx_window_full_stack(&stack); /* tables at their limit */
    if (full)
        rc = FX_OK;
    if (rc != FX_OK) {
        dr.model_errors++;
        return;
    }
    maybe_idle(p, t, r, cpu_delta);
    if (fx_profile_sample(p, vt.index, r->time_ns, stack, cpu_delta, r->weight) != FX_OK) {
        dr.model_errors++;
        return;
    }
    account(t, r, cpu_delta);
    fx_sources_sample(p, t, r, len, vt.index.i); /* e.g. the trace context's spans (issue 33) */
    if (vt.frozen >= 0 && !full) /* the sample shows the frozen-callers frame (stacks.c) */
        fx_model_vthreads_frozen_shown();
}

/* Empties one ring. `was_ended` was read before draining, so an empty ring is then final.
 * When to add a thread without samples to the model: tracks.c (fx_tracks_of_every_thread). */
static void drain_thread(JNIEnv *jni, struct fx_profile *p, struct fx_thread *t)
{
    bool was_ended = __atomic_load_n(&t->ended, __ATOMIC_ACQUIRE) != 0;
    uint64_t used = fx_ring_used(&t->ring), cap = t->ring.cap; /* the period's inputs */
    if (cap > 0) {
        uint32_t permille = (uint32_t)(used * 1000 / cap);
        dr.load.fill_permille = permille > dr.load.fill_permille ? permille : dr.load.fill_permille;
        dr.load.ring_min = dr.load.ring_min == 0 || cap < dr.load.ring_min ? cap : dr.load.ring_min;
        dr.ring_min = dr.ring_min == 0 || cap < dr.ring_min ? cap : dr.ring_min;
    }
    /* Dropped samples leave a gap that is not idleness; where in this pass's records it falls
     * is unknown, so none of them may start an "[idle]" guess. */
    uint64_t drops = fx_ring_drops(&t->ring);
    t->batch_lost = drops != t->seen_drops;
    t->seen_drops = drops;
    const void *rec;
    uint32_t len;
    fx_thread_id index;
    /* A thread that is not a Java thread is a track from its first sample: the tids seen in
     * /proc before their ThreadStart would leave empty tracks (vm_threads.c). */
    if (!t->in_profile && fx_tracks_of_every_thread() && !t->native_only &&
        fx_tracks_index(p, t, &index) != FX_OK) {
        dr.model_errors++;
        return; /* tried again at the next pass */
    }
    while ((rec = fx_ring_peek(&t->ring, &len)) != NULL) {
        if (fx_tracks_index(p, t, &index) != FX_OK) {
            dr.model_errors++;
            return; /* the records wait for the next cycle */
        }
        if (len >= sizeof(struct fx_sample_rec))
            one_record(jni, p, t, rec, len);
        dr.record_max = len > dr.record_max ? len : dr.record_max;
        fx_ring_release(&t->ring);
    }
    if (was_ended && !t->finished) {
        fx_sources_thread_ended(p, t);
        if (t->in_profile)
            fx_profile_thread_unregister(p, t->profile_index, t->end_ns);
        fx_tracks_refresh_name(jni, p, t); /* its track takes the thread's last name */
        t->finished = true;
    }
}

/* A thread is freed one pass after the one that finished it: the markers, drained first in
 * each pass, may still hold an event it queued just before its end, and that event's track is
 * found by the thread's tid (markers.c thread_of). Its tracks are released then: nothing adds
 * to them any more, and once the window no longer holds them the model frees them (a thread per
 * task kept an entry per task, forever: issue 23). */
static bool finished(struct fx_thread *t)
{
    if (!t->finished)
        return false;
    if (!t->reap_next) {
        t->reap_next = true;
        return false;
    }
    fx_sources_thread_reaped(dr.profile, t);
    fx_tracks_release(dr.profile, t);
    add_cost(&dr.reaped, t);
    dr.reaped.armed_cpu_ns += fx_timer_armed_cpu_ns(t); /* fx_threads_reap holds the lock */
    uint64_t d = fx_ring_drops(&t->ring);
    dr.drops += d;
    if (d > 0 && dr.profile != NULL) {
        char label[160];
        snprintf(label, sizeof(label), "ring drops: %s (tid %d)", t->name, (int)t->tid);
        fx_profile_extra_int(dr.profile, "Losses", label, (int64_t)d);
    }
    return true;
}

/* The sampler's share of a pass: the code ranges stack recovery reads, then every ring. */
static void drain_rings(JNIEnv *jni, struct fx_profile *p)
{
    if (dr.methods != NULL && dr.methods_gen != fx_profile_generation(p)) {
        /* The tables were rebuilt at a reset (window.c): the cached func ids are void. The
         * methods of the next period are resolved again, once each. */
        dr.methods_resolved += fx_methods_count(dr.methods);
        dr.methods_unknown += fx_methods_unknown(dr.methods);
        fx_methods_free(dr.methods);
        dr.methods = NULL;
    }
    if (dr.methods == NULL && (dr.idle || (dr.methods = fx_methods_new()) == NULL))
        return; /* stopped: the rings hold nothing of a recording (a start finds them late) */
    dr.methods_gen = fx_profile_generation(p);
    /* code past the handler's full recent table: fast; codemap=heap's finds: 40 ms at most */
    dr.load.waiting = fx_codemap_refresh(&dr.load.found) || dr.load.waiting;
    if (fx_native_maps_refresh())
        dr.load.waiting = true;
    fx_model_vthreads_pass(jni);
    fx_vm_threads_refresh();  /* threads that are not Java threads, every 100 ms */
    fx_threads_kstack_pass(); /* perf events and kernel callchains for threads seen running */
    for (struct fx_thread *t = fx_threads_head(); t != NULL; t = t->next)
        drain_thread(jni, p, t);
}

struct fx_methods *fx_drain_methods(void)
{
    return dr.methods;
}

void fx_drain_once(JNIEnv *jni)
{
    struct fx_profile *p = dr.profile;
    if (p == NULL)
        return;
    /* A ring waits at most from the previous pass's start (or sampling's) to this drain's end */
    uint64_t since = dr.pass_begin_ns ? dr.pass_begin_ns : (uint64_t)fx_rec()->sampling_begin_ns;
    dr.pass_begin_ns = (uint64_t)fx_now_ns();
    fx_sources_drain(jni, p); /* before any reaping: records may name ended threads */
    uint64_t span = (uint64_t)fx_now_ns() - since;
    dr.span_max_ns = span > dr.span_max_ns && since ? span : dr.span_max_ns;
    fx_window_bound(p); /* the memory bound: the oldest samples go (window.c) */
    if (fx_phase() != FX_PHASE_DEAD)
        fx_threads_reap(jni, finished);
}

static uint64_t ring_drops(void)
{
    uint64_t drops = dr.drops;
    for (struct fx_thread *t = fx_threads_head(); t != NULL; t = t->next)
        drops += fx_ring_drops(&t->ring);
    return drops;
}

/* The sampler's state for /proc (fx_agent_state.h): set by its start and stop (control's lock),
 * shown by the drain thread in its own OS name, which only it can set, before the pass that
 * serves a stop's snapshot (so a stop command returns with the name already changed). */
static struct {
    int sampling; /* atomic */
    int shown;    /* drain thread only: what its name says, -1 nothing yet */
} state = {0, -1};

static void show_state(void)
{
    int sampling = __atomic_load_n(&state.sampling, __ATOMIC_ACQUIRE);
    if (sampling != state.shown &&
        prctl(PR_SET_NAME, sampling ? FX_STATE_COMM_SAMPLING : FX_STATE_COMM_STOPPED) == 0)
        state.shown = sampling;
}

static int sampler_start(JNIEnv *jni)
{
    __atomic_store_n(&state.sampling, 1, __ATOMIC_RELEASE);
    return fx_sampling_start(jni);
}

static void sampler_stop(void)
{
    fx_sampling_stop();
    __atomic_store_n(&state.sampling, 0, __ATOMIC_RELEASE);
}

static struct fx_periodic drain;
static int drain_slow; /* atomic: the drain waits longer than FX_DRAIN_FAST_NS */

void fx_drain_hurry(void)
{
    if (__atomic_load_n(&drain_slow, __ATOMIC_RELAXED) &&
        __atomic_exchange_n(&drain_slow, 0, __ATOMIC_ACQ_REL))
        fx_periodic_hurry(&drain, FX_DRAIN_FAST_NS);
}

/* The next wait (fx_drain_period.h): what this pass found, then the policy. */
static void next_period(void)
{
    dr.load.interval_ns = dr.idle ? 0 : fx_opt()->interval_ns;
    dr.load.record_max = dr.record_max;
    uint64_t next = fx_drain_period_next(&dr.load);
    __atomic_store_n(&drain_slow, next > FX_DRAIN_FAST_NS, __ATOMIC_RELAXED);
    fx_periodic_set_period(&drain, next);
    dr.load = (struct fx_drain_load){.period_ns = next};
}

static void drain_tick(JNIEnv *jni, void *arg)
{
    (void)arg;
    dr.passes++;
    dr.slow_passes += dr.load.period_ns > FX_DRAIN_FAST_NS;
    show_state();
    fx_drain_once(jni);
    struct fx_methods *m = fx_drain_methods();
    struct fx_drain_figures f = {dr.samples, ring_drops(), m != NULL ? fx_methods_count(m) : 0};
    dr.serving = true;
    fx_window_serve(jni, dr.profile, &f); /* dumps, status: between passes (window.c) */
    dr.serving = false;
    next_period(); /* a request kicks the drain: it waits for no deadline */
}

/* Its own CPU time, waits and wake-ups included (issue 31): read at a dump it serves and at its
 * exit (the dump at VM death, after fx_drain_stop), not with a system call at every pass. */
static void drain_exiting(void *arg)
{
    (void)arg;
    dr.thread_cpu_ns = fx_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    fx_window_drain_exiting();
}

static struct fx_periodic drain = {
        .name = "fxagent drain",
        .period_ns = FX_DRAIN_FAST_NS,
        .tick = drain_tick,
        .exiting = drain_exiting,
};

int fx_drain_start(JNIEnv *jni)
{
    fx_window_owner(&drain);
    fx_evq_set_filling(fx_drain_hurry);
    fx_periodic_set_period(&drain, FX_DRAIN_FAST_NS);
    return fx_periodic_start(jni, &drain);
}

void fx_drain_pause(void)
{
    fx_periodic_pause(&drain);
}

void fx_drain_resume(void)
{
    fx_periodic_set_period(&drain, FX_DRAIN_FAST_NS); /* a new recording starts fast */
    dr.load.period_ns = FX_DRAIN_FAST_NS;             /* the drain is paused: no pass reads it */
    __atomic_store_n(&drain_slow, 0, __ATOMIC_RELAXED);
    fx_periodic_resume(&drain);
}

void fx_drain_stop(void)
{
    fx_periodic_stop(&drain);
}

/* The stop's pass drained the markers after every ended thread's last event: no second pass. */
static bool finished_at_stop(struct fx_thread *t)
{
    if (t->finished)
        t->reap_next = true;
    return finished(t);
}

void fx_model_idle(JNIEnv *jni)
{
    if (dr.profile != NULL && jni != NULL)
        fx_threads_reap(jni, finished_at_stop);
    if (dr.methods != NULL) {
        dr.methods_resolved += fx_methods_count(dr.methods);
        dr.methods_unknown += fx_methods_unknown(dr.methods);
        fx_methods_free(dr.methods);
        dr.methods = NULL;
    }
    fx_jit_info_idle();
    fx_native_frames_idle();
    fx_kernel_frames_idle();
    dr.idle = true;
}

uint64_t fx_drain_samples(void)
{
    return dr.samples;
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
    double covered = (double)dr.covered_ns;
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
    char engine[320];
    fx_engine_name(engine, sizeof(engine));
    fx_profile_extra_str(p, g, "engine", engine);
    extra_ms(p, g, "interval requested", (double)fx_opt()->interval_ns);
    if (fx_opt()->mode == FX_MODE_WALL && dr.wall_gaps > 0)
        extra_ms(p, g, "interval effective (mean wall time between a thread's samples)",
                 (double)dr.wall_sum_ns / (double)dr.wall_gaps);
    else if (dr.cpu_gaps > 0)
        extra_ms(p, g,
                 fx_opt()->mode == FX_MODE_CPU
                         ? "interval effective (mean intervals per signal, from timer overruns)"
                         : "interval effective (mean thread CPU time between signals)",
                 (double)dr.cpu_sum_ns / (double)dr.cpu_gaps);
    fx_profile_extra_str(p, g, "engine note", fx_engine_note());
    fx_profile_extra_int(p, g, "samples taken (rows drained from the rings)", (int64_t)dr.samples);
    fx_profile_extra_int(p, g, "sample weight total", (int64_t)dr.weight_sum);
    fx_profile_extra_int(p, g, "idle samples inserted", (int64_t)dr.idle_inserted);
    if (fx_tracks_of_every_thread()) /* tracks.c; in wall mode no thread is a track unsampled */
        fx_profile_extra_int(p, g, "threads without samples (empty tracks)",
                             (int64_t)fx_profile_threads_without_samples(p));
    fx_profile_extra_detail(p, g, "threads left out: empty, on main's OS thread (DestroyJavaVM)",
                            (int64_t)fx_profile_threads_aliased(p));
    fx_profile_extra_int(p, g, "signals handled", (int64_t)c->handled);
    /* Thread CPU time, less the timing's own clock reads; measured on 1 signal in 16. */
    fx_profile_extra_int(p, g, "mean CPU ns in handler per signal",
                         c->timed ? (int64_t)(c->cpu_ns / c->timed) : 0);
    fx_profile_extra_int(p, g, "max CPU ns in handler (timed signals)", (int64_t)c->max_ns);
    fx_profile_extra_int(p, g, "signals whose handler CPU time was measured", (int64_t)c->timed);
    if (fx_opt()->mode == FX_MODE_CPU)
        report_coverage(p, g, c->armed_cpu_ns);
    if (dr.thread_cpu_ns > 0)
        extra_ms(p, g, "drain thread CPU time (since it started, at its last pass)",
                 (double)dr.thread_cpu_ns);
    fx_profile_extra_int(p, g, "drain wake-ups (passes)", (int64_t)dr.passes);
    fx_profile_extra_int(p, g, "drain wake-ups after a wait over 10 ms", (int64_t)dr.slow_passes);
    /* A ring drops only if more records (one an interval) came between two drains than it holds */
    extra_ms(p, g, "longest time between two drains of a ring", (double)dr.span_max_ns);
    uint64_t rec = fx_ring_record_size_sigsafe((uint32_t)dr.record_max);
    fx_profile_extra_int(p, g, "records of the largest size the smallest ring holds",
                         (int64_t)(dr.record_max && dr.ring_min > rec ? dr.ring_min / rec - 1 : 0));
    fx_profile_extra_int(
            p, g, "methods resolved",
            (int64_t)(dr.methods_resolved + (dr.methods ? fx_methods_count(dr.methods) : 0)));
    if (fx_opt()->mode == FX_MODE_WALL)
        fx_profile_extra_int(p, g, "wall sampler ticks", (int64_t)fx_engine_wall_ticks());
}

static void report_losses(struct fx_profile *p, uint64_t drops)
{
    const char *g = "Losses";
    struct fx_threads_stats st;
    struct fx_signal_counts sig;
    fx_threads_stats(&st);
    fx_sampling_counts(&sig);
    fx_profile_extra_loss(p, g, "ring drops (all threads)", (int64_t)drops);
    fx_profile_extra_loss(p, g, "truncated stacks",
                          (int64_t)(fx_stacks_truncated() + fx_stack_depth_cuts()));
    fx_profile_extra_loss(
            p, g, "unknown method frames",
            (int64_t)(dr.methods_unknown + (dr.methods ? fx_methods_unknown(dr.methods) : 0)));
    fx_profile_extra_loss(p, g, "model errors", (int64_t)dr.model_errors);
    fx_profile_extra_loss(p, g, "signals on unregistered threads", (int64_t)sig.no_thread);
    fx_profile_extra_detail(p, g, "signals after sampling stopped", (int64_t)sig.disabled);
    fx_profile_extra_loss(p, g, "perf events that could not be re-armed",
                          (int64_t)sig.rearm_failed);
    fx_profile_extra_loss(p, g, "signals on threads without buffers (out of memory)",
                          (int64_t)sig.no_buffer);
    fx_profile_extra_loss(p, g, "threads whose buffers could not be allocated",
                          (int64_t)st.no_memory);
    fx_profile_extra_loss(p, g, "threads not sampled", (int64_t)st.not_sampled);
    fx_profile_extra_loss(p, g, "threads whose timer failed", (int64_t)st.arm_failed);
    fx_profile_extra_int(p, g, "threads sampled", (int64_t)st.registered);
    fx_profile_extra_detail(p, g, "threads found running before VMInit", (int64_t)st.existing);
}

/* Before a dump: the sampler's meta.extra ("Sampling", the stack outcomes, "Losses"). */
static void drain_report(JNIEnv *jni, struct fx_profile *p, const struct fx_span *span)
{
    (void)jni, (void)span;
    if (dr.serving) /* on the drain thread, after its pass (drain_exiting says why here) */
        dr.thread_cpu_ns = fx_clock_ns(CLOCK_THREAD_CPUTIME_ID);
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
    fx_stacks_report(p, &cost.rec);
    fx_native_frames_report(p);
    fx_compile_tasks_report(p);
    fx_model_vthreads_report(p);
    fx_vm_threads_report(p);
    fx_kernel_frames_report(p);
    report_losses(p, drops);
}

/* A new recording: the sampler's figures, the stack outcomes, the native walks' and the signal
 * path's own (per-thread handler counts and ring drops, the signal counters: sampling/ while no
 * handler is in flight) start from zero. The method cache belongs to the tables reset_period
 * rebuilt: dropped now, so its counts are not added to the new recording's. */
static void drain_reset(struct fx_profile *p)
{
    (void)p;
    if (dr.methods != NULL)
        fx_methods_free(dr.methods);
    struct fx_profile *profile = dr.profile;
    memset(&dr, 0, sizeof(dr));
    dr.profile = profile;
    fx_stacks_reset();
    fx_stack_depth_reset();
    fx_native_frames_reset();
    fx_compile_tasks_reset();
    fx_sampling_new_recording();
    fx_model_vthreads_new_recording();
    fx_kernel_frames_new_recording();
    for (struct fx_thread *t = fx_threads_head(); t != NULL; t = t->next)
        t->seen_drops = 0; /* the rings' drop counts were reset with them */
}

const struct fx_source fx_drain_source = {
        .name = "cpu/wall sampler",
        .start = sampler_start,
        .stop = sampler_stop,
        .drain = drain_rings,
        .before_dump = drain_report,
        .reset = drain_reset,
};
