/* SPDX-License-Identifier: Apache-2.0 */
/* The recording's window, kept by the model's owner (the drain thread; VMDeath after it):
 *  - the memory bound (model + sample rings): once the model passes what the rings leave of
 *    `memory`, the oldest half of the samples is dropped, counted and dated; past an eighth of
 *    it the interned tables take no new row and such samples get the "[stack table full]" stack;
 *  - periods: a reset (loop, dump,reset, a restart) drops what was written, rebuilds the tables
 *    with only what is kept, and moves t0;
 *  - requests from other threads (dump, status, restart), served between two drain passes, so
 *    the model keeps exactly one writer: a dump gets a deep copy to write on its own thread
 *    while the drain goes on emptying rings.
 * Invariant: only the owner touches the model and `win`; requesters see results only through
 * the request slot, under rq.lock. */
#include "internal.h"

#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fx_push.h"
#include "fx_ring.h"

#define REQUEST_WAIT_S 30 /* a drain pass never takes this long; a stuck drain does */

/* memory= covers the model and the sample rings (threads.c keeps the rings within a quarter of
 * it, but at their 32 KiB floor). The model gets what the rings leave, never less than a quarter;
 * its interned tables stop at an eighth, so by doubling they stay within a quarter. */
#define TABLE_SHARE_DIV 8u
#define MODEL_FLOOR_DIV 4u

static struct {
    size_t bound; /* atomic: fx_opt()->memory_bytes when the recording began */
    fx_stack_id full_stack;
    bool have_full_stack;
    uint64_t full_samples, late, compactions;
    uint64_t dropped_total, dropped, drop_events; /* dropped: in the current period */
    int64_t drop_from, drop_to;                   /* time range of `dropped` */
    int64_t period_ns, begin_ns;                  /* t0 of the period; oldest time held */
    double period_epoch_ms;
    time_t period_time;
} win;

enum req_state {
    REQ_IDLE,
    REQ_PENDING,
    REQ_TAKEN,
    REQ_DONE
};

static struct {
    pthread_mutex_t lock, one;
    pthread_cond_t cond;
    enum req_state state;
    bool drain_gone;
    struct fx_window_request *r;
    struct fx_periodic *owner; /* woken after a request is posted */
} rq = {.lock = PTHREAD_MUTEX_INITIALIZER,
        .one = PTHREAD_MUTEX_INITIALIZER,
        .cond = PTHREAD_COND_INITIALIZER};

static double epoch_at(int64_t t_ns)
{
    return fx_rec()->start_epoch_ms + (double)(t_ns - fx_rec()->start_ns) / 1e6;
}

static void new_period(int64_t t_ns)
{
    win.period_ns = win.begin_ns = t_ns;
    win.period_epoch_ms = epoch_at(t_ns);
    win.period_time = fx_rec()->start_time + (time_t)((t_ns - fx_rec()->start_ns) / 1000000000);
    win.dropped = 0;
    win.drop_from = win.drop_to = 0;
}

int fx_window_init(struct fx_profile *p)
{
    size_t bound = (size_t)fx_opt()->memory_bytes;
    __atomic_store_n(&win.bound, bound, __ATOMIC_RELAXED);
    fx_profile_set_table_limit(p, bound / TABLE_SHARE_DIV);
    win.have_full_stack =
            fx_profile_label_stack(p, "[stack table full]", FX_CAT_OTHER, &win.full_stack) == FX_OK;
    new_period(fx_rec()->start_ns);
    return win.have_full_stack ? FX_OK : FX_ENOMEM;
}

bool fx_window_full_stack(fx_stack_id *out)
{
    if (!win.have_full_stack)
        return false;
    win.full_samples++;
    *out = win.full_stack;
    return true;
}

/* Records from before the current period were already written with it (or belong to a
 * recording that was stopped): counted, not added. */
bool fx_window_admit(int64_t time_ns)
{
    if (time_ns >= win.period_ns)
        return true;
    win.late++;
    return false;
}

static size_t model_bound(size_t bound)
{
    /* with push=, the push thread's share of memory= (what it holds while it converts a period
     * and sends it: output/push.c) is not the model's */
    size_t push = fx_opt()->push != NULL ? bound / FX_PUSH_MEMORY_DIV : 0;
    size_t rings = (size_t)fx_threads_ring_bytes(NULL);
    size_t floor = bound / MODEL_FLOOR_DIV, rest = bound - push;
    return rings < rest - floor ? rest - rings : floor;
}

void fx_window_bound(struct fx_profile *p)
{
    size_t bound = __atomic_load_n(&win.bound, __ATOMIC_RELAXED);
    if (bound == 0 || fx_profile_memory(p) <= model_bound(bound))
        return;
    uint64_t n = fx_profile_sample_count(p);
    if (n == 0)
        return; /* the tables alone: they stopped growing at their own limit */
    int64_t oldest = fx_profile_oldest_sample(p);
    int64_t cut = fx_profile_cut_time(p, (n + 1) / 2);
    uint64_t d = fx_profile_drop_before(p, cut);
    if (d == 0)
        return;
    if (win.dropped == 0)
        win.drop_from = oldest;
    win.drop_to = cut;
    win.dropped += d;
    win.dropped_total += d;
    win.drop_events++;
    if (cut > win.begin_ns)
        win.begin_ns = cut;
    /* The columns just shrunk: give the freed pages back to the system, or the process keeps
     * them (glibc keeps freed heap memory, and raises its mmap threshold after big frees). */
    malloc_trim(0);
}

static void extra_time(struct fx_profile *p, const char *label, int64_t t_ns)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%.3f ms after the profile's start",
             (double)(t_ns - win.period_ns) / 1e6);
    fx_profile_extra_str(p, "Memory bound", label, buf);
}

static void extra_mib(struct fx_profile *p, const char *label, size_t bytes, const char *note)
{
    char buf[160];
    snprintf(buf, sizeof(buf), "%.2f MiB%s", (double)bytes / 1048576.0, note);
    fx_profile_extra_str(p, "Memory bound", label, buf);
}

/* The agent's memory, as memory= counts it: the model and the rings, at the time of this file. */
static void report_memory(struct fx_profile *p, size_t bound)
{
    uint32_t nrings;
    size_t rings = (size_t)fx_threads_ring_bytes(&nrings), model = fx_profile_memory(p);
    char note[96];
    extra_mib(p, "bound", bound, " (memory=: the model and the sample rings)");
    extra_mib(p, "agent memory at this dump: model + sample rings", model + rings,
              model + rings > bound ? " (over the bound: rings at their 32 KiB floor)" : "");
    extra_mib(p, "model memory at this dump", model, " (samples, tables, markers, counters)");
    extra_mib(p, "model's share of the bound now (what the rings leave)", model_bound(bound), "");
    if (fx_opt()->push != NULL)
        extra_mib(p, "push's share of the bound (push=: converting and sending a period)",
                  bound / FX_PUSH_MEMORY_DIV, "");
    extra_mib(p, "interned tables (strings, funcs, frames, stacks)", fx_profile_table_memory(p),
              "");
    snprintf(note, sizeof(note), " in %u threads' rings (ring= is the most one takes)", nrings);
    extra_mib(p, "sample rings", rings, note);
    fx_profile_extra_str(
            p, "Memory bound", "not counted",
            "the copy of the model a dump writes from (freed after the write); the JVM's own memory");
}

/* meta.extra "Memory bound": what the agent holds, what this file lost to the bound, and when. */
static void report(struct fx_profile *p)
{
    const char *g = "Memory bound";
    size_t bound = __atomic_load_n(&win.bound, __ATOMIC_RELAXED);
    report_memory(p, bound);
    fx_profile_extra_loss(p, g, "dropped (memory bound): samples, oldest first",
                          (int64_t)win.dropped);
    if (win.dropped > 0) {
        extra_time(p, "dropped (memory bound): from", win.drop_from);
        extra_time(p, "dropped (memory bound): to", win.drop_to);
    }
    fx_profile_extra_loss(p, g, "dropped since sampling began", (int64_t)win.dropped_total);
    fx_profile_extra_loss(p, g, "samples with [stack table full] (tables at their limit)",
                          (int64_t)win.full_samples);
    fx_profile_extra_int(p, g, "tables rebuilt at period resets (only what is kept)",
                         (int64_t)win.compactions);
    fx_profile_extra_loss(p, g, "late samples of an earlier period, not added", (int64_t)win.late);
}

/* The file's own totals, one per view (issue 30), as the last group: taken from the model
 * after every other step has run, from the same rule (fx_profile_totals) as the exit line and
 * fxprof summary, so the three give the same figures. Labels are read by fxprof and the tests. */
static void report_totals(struct fx_profile *p)
{
    const char *g = "Samples in this file";
    struct fx_profile_totals t;
    fx_profile_totals(p, &t);
    bool wall = fx_opt()->mode == FX_MODE_WALL;
    const struct fx_extra_row rows[] = {
            {wall ? "wall samples (weight; [idle] apart)" : "CPU samples (weight; [idle] apart)",
             t.cpu, FX_EXTRA_ALWAYS},
            {"[idle] samples (off the CPU, in no view's total)", t.idle, FX_EXTRA_NONZERO},
            {"lock waits", t.waits, FX_EXTRA_NONZERO},
            {"lock wait time, us", t.wait_us, FX_EXTRA_NONZERO},
            {"idle waits (waiting for work, not lock waits)", t.idle_waits, FX_EXTRA_NONZERO},
            {"idle wait time, us", t.idle_wait_us, FX_EXTRA_NONZERO},
            {"allocation samples", t.allocations, FX_EXTRA_NONZERO},
            {"allocated bytes (estimated)", (uint64_t)t.alloc_bytes, FX_EXTRA_NONZERO},
    };
    fx_profile_extra_rows(p, g, rows, sizeof(rows) / sizeof(rows[0]));
}

/* --- the owner's side of a request --- */

/* The next period starts with the tables it needs (the markers' strings), not with every stack
 * seen since sampling began: without this a server's steady trickle of new stacks fills the
 * tables in the end and every new stack becomes "[stack table full]". Ids held across drain
 * passes (methods.c via drain.c, jit_info.c, the full stack here) follow the generation. On
 * failure the tables stay as they were: still valid, merely larger. */
static void compact(struct fx_profile *p)
{
    if (fx_profile_compact(p) != FX_OK)
        return;
    win.compactions++;
    win.have_full_stack =
            fx_profile_label_stack(p, "[stack table full]", FX_CAT_OTHER, &win.full_stack) == FX_OK;
    malloc_trim(0);
}

/* Drops what the snapshot holds; per-thread gap state restarts, so no "[idle]" sample and no
 * CPU delta spans two periods. */
static void reset_period(struct fx_profile *p, int64_t now)
{
    fx_profile_drop_before(p, INT64_MAX);
    compact(p);
    for (struct fx_thread *t = fx_threads_head(); t != NULL; t = t->next)
        t->have_last = false;
    new_period(now);
    fx_profile_set_start(p, now, win.period_epoch_ms);
}

/* A start after a stop: the previous recording was drained to its last record and its samples
 * dropped (reset_period); its figures go too, the window's own and every source's (base.h,
 * struct fx_source `reset`), and meta.extra with them. */
static void new_recording(struct fx_profile *p)
{
    fx_profile_extra_clear(p);
    fx_sources_reset(p);
    win.full_samples = win.late = win.compactions = 0;
    win.dropped_total = win.dropped = win.drop_events = 0;
}

/* The steps run in their registration order (control/lifecycle.c): markers, meta, validate,
 * the sampler's figures; the window's own figures last. */
time_t fx_window_prepare(JNIEnv *jni, struct fx_profile *p, int64_t end_ns)
{
    int64_t since = fx_rec()->sampling_begin_ns;
    struct fx_span span = {win.begin_ns > since ? win.begin_ns : since, end_ns};
    fx_sources_before_dump(jni, p, &span);
    report(p);
    report_totals(p);
    return win.period_time;
}

static void serve_snapshot(JNIEnv *jni, struct fx_profile *p, struct fx_window_request *r)
{
    int64_t now = fx_now_ns();
    r->period_time = fx_window_prepare(jni, p, now);
    r->snapshot = fx_profile_snapshot(p);
    r->copy_ns = fx_now_ns() - now;
    r->rc = r->snapshot != NULL ? FX_OK : FX_ENOMEM;
    r->end_ns = now;
    if (r->rc == FX_OK && r->reset)
        reset_period(p, now);
}

static void serve_status(struct fx_profile *p, struct fx_window_request *r,
                         const struct fx_drain_figures *f)
{
    struct fx_window_status *s = &r->status;
    memset(s, 0, sizeof(*s));
    s->samples = f->samples;
    s->held = fx_profile_sample_count(p);
    s->ring_bytes = fx_threads_ring_bytes(NULL);
    s->memory = fx_profile_memory(p) + (size_t)s->ring_bytes; /* what memory= bounds */
    s->tables = fx_profile_table_memory(p);
    s->bound = __atomic_load_n(&win.bound, __ATOMIC_RELAXED);
    s->dropped = win.dropped_total;
    s->full_samples = win.full_samples;
    s->drops = f->ring_drops;
    for (struct fx_thread *t = fx_threads_head(); t != NULL; t = t->next)
        s->threads += !__atomic_load_n(&t->ended, __ATOMIC_ACQUIRE);
    s->tracks = fx_profile_threads_held(p);
    s->methods = f->methods;
    s->period_ns = win.period_ns;
    r->rc = FX_OK;
}

static void serve(JNIEnv *jni, struct fx_profile *p, struct fx_window_request *r,
                  const struct fx_drain_figures *f)
{
    switch (r->kind) {
    case FX_WINDOW_SNAPSHOT:
        serve_snapshot(jni, p, r);
        break;
    case FX_WINDOW_STATUS:
        serve_status(p, r, f);
        break;
    case FX_WINDOW_RESTART:
        reset_period(p, r->begin_ns);
        new_recording(p);
        win.begin_ns = r->begin_ns;
        __atomic_store_n(&win.bound, (size_t)r->bound, __ATOMIC_RELAXED);
        fx_profile_set_table_limit(p, (size_t)r->bound / TABLE_SHARE_DIV);
        r->rc = FX_OK;
        break;
    case FX_WINDOW_AFTER_DUMP:
        fx_sources_after_dump(p, r->path, r->bytes);
        r->rc = FX_OK;
        break;
    case FX_WINDOW_FORGET: /* what a restart would drop, dropped at the stop already */
        reset_period(p, fx_now_ns());
        fx_profile_extra_clear(p);
        r->rc = FX_OK;
        break;
    }
}

void fx_window_serve(JNIEnv *jni, struct fx_profile *p, const struct fx_drain_figures *f)
{
    pthread_mutex_lock(&rq.lock);
    struct fx_window_request *r = rq.state == REQ_PENDING ? rq.r : NULL;
    if (r != NULL)
        rq.state = REQ_TAKEN;
    pthread_mutex_unlock(&rq.lock);
    if (r == NULL || p == NULL)
        return;
    serve(jni, p, r, f);
    pthread_mutex_lock(&rq.lock);
    rq.state = REQ_DONE;
    pthread_cond_broadcast(&rq.cond);
    pthread_mutex_unlock(&rq.lock);
}

void fx_window_drain_exiting(void)
{
    pthread_mutex_lock(&rq.lock);
    rq.drain_gone = true;
    if (rq.state == REQ_PENDING) {
        rq.r->rc = FX_ESTATE;
        rq.state = REQ_DONE;
    }
    pthread_cond_broadcast(&rq.cond);
    pthread_mutex_unlock(&rq.lock);
}

void fx_window_owner(struct fx_periodic *p)
{
    pthread_mutex_lock(&rq.lock);
    rq.owner = p;
    pthread_mutex_unlock(&rq.lock);
}

/* --- the requester's side --- */

/* Posts r and waits until the owner served it. FX_ESTATE when no drain thread serves it: it
 * has exited, or never picked the request up within REQUEST_WAIT_S (then it is withdrawn). */
int fx_window_request(struct fx_window_request *r)
{
    pthread_mutex_lock(&rq.one);
    pthread_mutex_lock(&rq.lock);
    int rc = FX_OK;
    if (rq.drain_gone) {
        rc = FX_ESTATE;
    } else {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += REQUEST_WAIT_S;
        rq.r = r;
        rq.state = REQ_PENDING;
        if (rq.owner != NULL) /* a paused drain ticks for it; a running one a bit sooner */
            fx_periodic_kick(rq.owner);
        while (rq.state == REQ_PENDING && pthread_cond_timedwait(&rq.cond, &rq.lock, &until) == 0)
            ;
        if (rq.state == REQ_PENDING) /* never picked up: withdrawn */
            rc = FX_ESTATE;
        while (rq.state == REQ_TAKEN) /* being served: a pass always ends */
            pthread_cond_wait(&rq.cond, &rq.lock);
        if (rc == FX_OK)
            rc = r->rc;
        rq.state = REQ_IDLE;
        rq.r = NULL;
    }
    pthread_mutex_unlock(&rq.lock);
    pthread_mutex_unlock(&rq.one);
    return rc;
}
