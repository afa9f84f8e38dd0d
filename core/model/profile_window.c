/* SPDX-License-Identifier: Apache-2.0 */
/* The model's window: dropping what is older than a time (the memory bound, loop resets), the
 * limit on interned tables, and deep copies that a writer can stream on another thread while the
 * owner keeps adding. A copy starts from a zeroed struct and fills the fields it knows, so a field
 * added to struct fx_profile later is left empty in copies (never shared, never freed twice):
 * extend fx_profile_snapshot when adding one. */
#include "fx_profile.h"

#include <string.h>

#include "fx_alloc.h"
#include "fx_profile_internal.h"
#include "fx_profile_model.h"

/* --- table limit --- */

void fx_profile_set_table_limit(struct fx_profile *p, size_t bytes)
{
    p->table_limit = bytes;
}

size_t fx_profile_table_memory(const struct fx_profile *p)
{
    return fx_profile_tables_memory(p);
}

/* --- dropping --- */

/* First index whose time is >= t (times are non-decreasing). */
static uint32_t first_at_or_after(const int64_t *time, uint32_t n, int64_t t)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (time[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The time columns the memory bound counts rows of: samples and allocation rows, each in
 * non-decreasing time. */
#define ROW_TABLES 2
static uint32_t row_times(const struct fx_thread *t, unsigned k, const int64_t **time)
{
    *time = k == 0 ? t->samples.time_ns : t->allocs.time_ns;
    return k == 0 ? t->samples.count : t->allocs.count;
}

int64_t fx_profile_oldest_sample(const struct fx_profile *p)
{
    int64_t oldest = INT64_MAX;
    for (uint32_t i = 0; i < p->nthreads; i++) {
        for (unsigned k = 0; k < ROW_TABLES; k++) {
            const int64_t *time;
            if (row_times(p->threads[i], k, &time) && time[0] < oldest)
                oldest = time[0];
        }
    }
    return oldest;
}

static int64_t newest_sample(const struct fx_profile *p)
{
    int64_t newest = INT64_MIN;
    for (uint32_t i = 0; i < p->nthreads; i++) {
        for (unsigned k = 0; k < ROW_TABLES; k++) {
            const int64_t *time;
            uint32_t n = row_times(p->threads[i], k, &time);
            if (n && time[n - 1] > newest)
                newest = time[n - 1];
        }
    }
    return newest;
}

static uint64_t count_before(const struct fx_profile *p, int64_t t)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < p->nthreads; i++) {
        for (unsigned k = 0; k < ROW_TABLES; k++) {
            const int64_t *time;
            uint32_t rows = row_times(p->threads[i], k, &time);
            n += first_at_or_after(time, rows, t);
        }
    }
    return n;
}

/* Binary search over time; each step counts with one binary search per thread. */
int64_t fx_profile_cut_time(const struct fx_profile *p, uint64_t n)
{
    int64_t oldest = fx_profile_oldest_sample(p);
    if (n == 0 || oldest == INT64_MAX)
        return INT64_MIN;
    int64_t lo = oldest + 1, hi = newest_sample(p) + 1;
    if (count_before(p, hi) < n)
        return hi;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (count_before(p, mid) >= n)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Capacities stay 16 * 2^k, as fx_profile_grow makes them, so that dropping half of a
 * column's rows gives half of its memory back. A failed shrink keeps the larger block. */
static void shrink_samples(struct fx_samples *s)
{
    struct fx_col cols[FX_MAX_COLS];
    unsigned ncols = fx_samples_cols(s, cols);
    if (s->count == 0) {
        fx_cols_free(cols, ncols);
        *s = (struct fx_samples){0};
        return;
    }
    uint32_t cap = 16;
    while (cap < s->count)
        cap *= 2;
    if (cap >= s->cap)
        return;
    for (unsigned c = 0; c < ncols; c++) {
        void *np = fx_reallocarray(*cols[c].p, cap, cols[c].size);
        if (!np)
            return; /* the columns shrunk so far still hold cap rows: cap stays the old value */
        *cols[c].p = np;
    }
    s->cap = cap;
}

static uint32_t drop_samples(struct fx_samples *s, int64_t t)
{
    uint32_t k = first_at_or_after(s->time_ns, s->count, t);
    if (k == 0)
        return 0;
    struct fx_col cols[FX_MAX_COLS];
    fx_cols_move(cols, fx_samples_cols(s, cols), 0, k, s->count - k);
    s->count -= k;
    /* The first sample's CPU delta is ignored by the front-end (nothing precedes it). */
    shrink_samples(s);
    return k;
}

/* Start and end phases stay: their partner may be newer, and a lone half breaks the pair. */
static bool marker_is_old(const struct fx_markers *m, uint32_t i, int64_t t)
{
    if (m->phase[i] == FX_PHASE_INSTANT)
        return m->start_ns[i] < t;
    return m->phase[i] == FX_PHASE_INTERVAL && m->end_ns[i] < t;
}

static unsigned marker_nvalues(const struct fx_profile *p, const struct fx_markers *m, uint32_t i)
{
    return m->schema[i] == FX_NONE_ID ? 0 : p->schemas[m->schema[i]]->n_fields;
}

/* Compacts in place, in order, a run of kept rows at a time: a kept row and its values only
 * ever move down, so each row's values are still at its values_at when it is moved. */
static void drop_markers(const struct fx_profile *p, struct fx_markers *m, int64_t t)
{
    struct fx_col cols[FX_MAX_COLS];
    unsigned ncols = fx_markers_cols(m, cols);
    uint32_t out = 0, vout = 0;
    for (uint32_t i = 0; i < m->count;) {
        if (marker_is_old(m, i, t)) {
            i++;
            continue;
        }
        uint32_t end = i + 1;
        while (end < m->count && !marker_is_old(m, end, t))
            end++;
        fx_cols_move(cols, ncols, out, i, end - i);
        for (uint32_t r = out; r < out + (end - i); r++) {
            unsigned nv = marker_nvalues(p, m, r);
            if (nv)
                memmove(&m->values[vout], &m->values[m->values_at[r]], nv * sizeof(*m->values));
            m->values_at[r] = vout;
            vout += nv;
        }
        out += end - i;
        i = end;
    }
    m->count = out;
    m->nvalues = vout;
}

static void drop_counter_values(struct fx_counter *c, int64_t t)
{
    uint32_t k = first_at_or_after(c->time_ns, c->count, t);
    struct fx_col cols[FX_MAX_COLS];
    fx_cols_move(cols, fx_counter_cols(c, cols), 0, k, c->count - k);
    c->count -= k;
}

uint64_t fx_profile_drop_before(struct fx_profile *p, int64_t t_ns)
{
    uint64_t dropped = 0;
    if (p->packed) /* packed markers are not dropped: nothing is, so all stays consistent */
        return 0;
    for (uint32_t i = 0; i < p->nthreads; i++) {
        if (!fx_profile_thread_ok(p, i)) /* p->vacant: nothing to drop, and never written */
            continue;
        dropped += drop_samples(&p->threads[i]->samples, t_ns);
        drop_markers(p, &p->threads[i]->markers, t_ns);
        fx_profile_drop_allocs(p, i, t_ns);
    }
    for (uint32_t i = 0; i < p->ncounters; i++)
        drop_counter_values(&p->counters[i], t_ns);
    if (t_ns > p->kept_from_ns)
        p->kept_from_ns = t_ns;
    for (uint32_t i = 0; i < p->nthreads; i++)
        fx_profile_thread_vacate_if_done(p, i);
    fx_profile_recount_threads(p); /* the columns shrank: O(threads), as the drop itself */
    return dropped;
}

/* --- copies --- */

/* A tight copy of n elements; NULL for none. Clears *ok on failure. */
static void *dup_array(const void *src, size_t n, size_t size, bool *ok)
{
    if (!n || !src || !*ok)
        return NULL;
    void *d = fx_reallocarray(NULL, n, size);
    if (!d) {
        *ok = false;
        return NULL;
    }
    memcpy(d, src, n * size);
    return d;
}

static char *dup_str(const char *s, bool *ok)
{
    if (!s || !*ok)
        return NULL;
    char *d = fx_strdup(s);
    *ok = d != NULL;
    return d;
}

#define DUP(dst, src, field, n, ok) \
    ((dst)->field = dup_array((src)->field, (n), sizeof(*(src)->field), (ok)))

/* n rows of the first ncols columns of src into the columns of dst (same table kind, so the
 * same lists), as tight arrays. */
static void dup_cols(const struct fx_col *dst, const struct fx_col *src, unsigned ncols, uint32_t n,
                     bool *ok)
{
    for (unsigned c = 0; c < ncols; c++)
        *dst[c].p = dup_array(*src[c].p, n, src[c].size, ok);
}

/* A table's columns copied from s to d through its column list (s is only read); sets d's count
 * and cap. */
#define DUP_TABLE(d, s, cols_fn, ok)                                     \
    do {                                                                 \
        struct fx_col dc_[FX_MAX_COLS], sc_[FX_MAX_COLS];                \
        cols_fn((d), dc_);                                               \
        dup_cols(dc_, sc_, cols_fn((void *)(s), sc_), (s)->count, (ok)); \
        (d)->count = (d)->cap = (s)->count;                              \
    } while (0)

static void copy_rowidx(struct fx_rowidx *d, const struct fx_rowidx *s, bool *ok)
{
    d->slots = dup_array(s->slots, s->cap, sizeof(*s->slots), ok);
    d->cap = d->slots ? s->cap : 0;
}

static void copy_strtab(struct fx_strtab *d, const struct fx_strtab *s, bool *ok)
{
    DUP(d, s, bytes, s->bytes_len, ok);
    DUP(d, s, end, s->count, ok);
    d->bytes_len = d->bytes_cap = s->bytes_len;
    d->count = d->cap = s->count;
    copy_rowidx(&d->idx, &s->idx, ok);
}

static void copy_tables(struct fx_profile *d, const struct fx_profile *s, bool *ok)
{
    copy_strtab(&d->strings, &s->strings, ok);
    DUP_TABLE(&d->funcs, &s->funcs, fx_funcs_cols, ok);
    copy_rowidx(&d->funcs.idx, &s->funcs.idx, ok);
    DUP_TABLE(&d->frames, &s->frames, fx_frames_cols, ok);
    copy_rowidx(&d->frames.idx, &s->frames.idx, ok);
    DUP_TABLE(&d->stacks, &s->stacks, fx_stacks_cols, ok);
    copy_rowidx(&d->stacks.idx, &s->stacks.idx, ok);
    const struct fx_idlist *sl[] = {&s->resources, &s->sources};
    struct fx_idlist *dl[] = {&d->resources, &d->sources};
    for (unsigned i = 0; i < 2; i++) {
        DUP(dl[i], sl[i], str, sl[i]->count, ok);
        dl[i]->count = dl[i]->cap = sl[i]->count;
        copy_rowidx(&dl[i]->idx, &sl[i]->idx, ok);
    }
}

static void copy_thread(struct fx_thread *d, const struct fx_thread *s, bool *ok)
{
    d->name = dup_str(s->name, ok);
    d->tid = s->tid;
    d->register_ns = s->register_ns;
    d->unregister_ns = s->unregister_ns;
    d->unregistered = s->unregistered;
    d->weight_type = s->weight_type;
    d->idle_waits = s->idle_waits;
    d->companion_of = s->companion_of; /* an index of s: copy_threads maps it */
    d->suffix_len = s->suffix_len;
    DUP_TABLE(&d->samples, &s->samples, fx_samples_cols, ok);
    DUP_TABLE(&d->markers, &s->markers, fx_markers_cols, ok);
    DUP(&d->markers, &s->markers, values, s->markers.nvalues, ok);
    DUP_TABLE(&d->allocs, &s->allocs, fx_allocs_cols, ok);
    d->markers.nvalues = d->markers.values_cap = s->markers.nvalues;
}

/* A thread that lived in the window stays, even empty: a track with no sample says the thread
 * did not run (cpu and itimer modes, docs/PRODUCTION.md). A vacant slot, or a thread that is
 * gone (fx_profile_thread_gone), is not part of this profile. */
static bool shows_nothing(const struct fx_thread *t)
{
    return t->samples.count == 0 && fx_thread_markers(t) == 0 && t->allocs.count == 0;
}

/* A thread with nothing to show on the main thread's OS thread (its tid), while main shows
 * something: the same thread under another JVM name, whose empty track says nothing new. The
 * launcher's main thread becomes "DestroyJavaVM" once main() returns, and waits there for the
 * other threads (empty in cpu mode). Only main is compared: O(1) a thread at each dump. */
static bool thread_is_alias(const struct fx_profile *p, uint32_t i)
{
    uint32_t m = p->main_thread;
    return m < p->nthreads && m != i && p->threads[m]->tid == p->threads[i]->tid &&
           shows_nothing(p->threads[i]) && !shows_nothing(p->threads[m]);
}

bool fx_profile_thread_left_out(const struct fx_profile *p, fx_thread_id thread)
{
    uint32_t i = thread.i;
    return !fx_profile_thread_ok(p, i) || fx_profile_thread_gone(p, p->threads[i]) ||
           thread_is_alias(p, i);
}

bool fx_profile_thread_is_companion(const struct fx_profile *p, fx_thread_id thread)
{
    return fx_profile_thread_ok(p, thread.i) && p->threads[thread.i]->companion_of != 0;
}

uint32_t fx_profile_threads_without_samples(const struct fx_profile *p)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->nthreads; i++)
        n += p->threads[i]->samples.count == 0 && !fx_profile_thread_left_out(p, (fx_thread_id){i});
    return n;
}

uint32_t fx_profile_threads_aliased(const struct fx_profile *p)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->nthreads; i++)
        n += fx_profile_thread_ok(p, i) && !fx_profile_thread_gone(p, p->threads[i]) &&
             thread_is_alias(p, i);
    return n;
}

/* An "[idle]" sample: a root stack whose function is "[idle]" (drain.c, vthreads.c), as
 * fxprof's fx_pfile_is_idle reads it back. */
static bool is_idle_stack(const struct fx_profile *p, uint32_t s)
{
    if (s >= p->stacks.count || p->stacks.prefix[s] != FX_NONE_ID)
        return false;
    uint32_t f = p->stacks.frame[s];
    if (f >= p->frames.count || p->frames.func[f] >= p->funcs.count)
        return false;
    size_t len;
    const char *name = fx_strtab_get(&p->strings, p->funcs.name[p->frames.func[f]], &len);
    return name && len == 6 && !memcmp(name, "[idle]", 6);
}

static void thread_totals(const struct fx_profile *p, const struct fx_thread *t,
                          struct fx_profile_totals *o)
{
    const struct fx_samples *s = &t->samples;
    for (uint32_t i = 0; i < s->count; i++) {
        uint64_t w = s->weight ? s->weight[i] : 1;
        if (t->weight_type == FX_WEIGHT_TRACING_MS && t->idle_waits) {
            o->idle_waits += s->stack[i] != FX_NONE_ID;
            o->idle_wait_us += w;
        } else if (t->weight_type == FX_WEIGHT_TRACING_MS) {
            o->waits += s->stack[i] != FX_NONE_ID;
            o->wait_us += w;
        } else if (t->weight_type == FX_WEIGHT_SAMPLES) {
            bool idle = s->stack[i] != FX_NONE_ID && is_idle_stack(p, s->stack[i]);
            o->idle += idle ? w : 0;
            o->cpu += idle ? 0 : w;
            o->cpu_rows += !idle;
        }
    }
    for (uint32_t i = 0; i < t->allocs.count; i++) {
        if (t->allocs.bytes[i] > 0) {
            o->allocations++;
            o->alloc_bytes += t->allocs.bytes[i];
        }
    }
}

void fx_profile_totals(const struct fx_profile *p, struct fx_profile_totals *out)
{
    memset(out, 0, sizeof(*out));
    for (uint32_t i = 0; i < p->nthreads; i++)
        if (!fx_profile_thread_left_out(p, (fx_thread_id){i}))
            thread_totals(p, p->threads[i], out);
}

static void copy_threads(struct fx_profile *d, const struct fx_profile *s, bool *ok)
{
    fx_profile_vacant_init(d); /* d has no vacant slot, but a profile's vacant track is set */
    d->threads = fx_calloc(s->nthreads ? s->nthreads : 1, sizeof(*d->threads));
    *ok = *ok && d->threads;
    d->threads_cap = d->threads ? (s->nthreads ? s->nthreads : 1) : 0;
    /* s's index -> d's index + 1 (0: left out), for the companions' owners */
    uint32_t *at = fx_calloc(s->nthreads ? s->nthreads : 1, sizeof(*at));
    *ok = *ok && at;
    for (uint32_t i = 0; *ok && i < s->nthreads; i++) {
        if (fx_profile_thread_left_out(s, (fx_thread_id){i}))
            continue;
        if (i == s->main_thread)
            d->main_thread = d->nthreads;
        at[i] = d->nthreads + 1;
        struct fx_thread *t = fx_calloc(1, sizeof(*t));
        *ok = t != NULL;
        d->threads[d->nthreads++] = t; /* NULL: fx_profile_free skips it */
        if (t)
            copy_thread(t, s->threads[i], ok);
    }
    for (uint32_t i = 0; *ok && i < d->nthreads; i++) {
        uint32_t o = d->threads[i]->companion_of;
        d->threads[i]->companion_of = o != 0 && o - 1 < s->nthreads ? at[o - 1] : 0;
    }
    fx_free(at);
}

static void copy_counters(struct fx_profile *d, const struct fx_profile *s, bool *ok)
{
    d->counters = fx_calloc(s->ncounters ? s->ncounters : 1, sizeof(*d->counters));
    *ok = *ok && d->counters;
    d->counters_cap = d->counters ? (s->ncounters ? s->ncounters : 1) : 0;
    for (uint32_t i = 0; *ok && i < s->ncounters; i++) {
        const struct fx_counter *sc = &s->counters[i];
        struct fx_counter *dc = &d->counters[d->ncounters++];
        dc->name = dup_str(sc->name, ok);
        dc->category = dup_str(sc->category, ok);
        dc->description = dup_str(sc->description, ok);
        dc->unit = dup_str(sc->unit, ok);
        dc->color = dup_str(sc->color, ok);
        DUP_TABLE(dc, sc, fx_counter_cols, ok);
    }
}

static void copy_extra(struct fx_profile *d, const struct fx_profile *s, bool *ok)
{
    d->extra = fx_calloc(s->nextra ? s->nextra : 1, sizeof(*d->extra));
    *ok = *ok && d->extra;
    d->extra_cap = d->extra ? (s->nextra ? s->nextra : 1) : 0;
    for (uint32_t i = 0; *ok && i < s->nextra; i++) {
        const struct fx_extra_group *sg = &s->extra[i];
        struct fx_extra_group *dg = &d->extra[d->nextra++];
        dg->label = dup_str(sg->label, ok);
        dg->entries = fx_calloc(sg->count ? sg->count : 1, sizeof(*dg->entries));
        *ok = *ok && dg->entries;
        dg->cap = dg->entries ? (sg->count ? sg->count : 1) : 0;
        for (uint32_t e = 0; *ok && e < sg->count; e++) {
            const struct fx_extra_entry *se = &sg->entries[e];
            struct fx_extra_entry *de = &dg->entries[dg->count++];
            *de = (struct fx_extra_entry){.is_int = se->is_int, .show = se->show, .i = se->i};
            de->label = dup_str(se->label, ok);
            de->s = dup_str(se->s, ok);
        }
    }
}

static void copy_meta(struct fx_profile *d, const struct fx_profile *s, bool *ok)
{
    DUP(d, s, schemas, s->nschemas, ok);
    d->nschemas = d->schemas_cap = d->schemas ? s->nschemas : 0;
    d->start_ns = s->start_ns;
    d->kept_from_ns = s->kept_from_ns;
    d->range_begin_ns = s->range_begin_ns;
    d->range_end_ns = s->range_end_ns;
    d->range_set = s->range_set;
    d->epoch_ms = s->epoch_ms;
    d->interval_ms = s->interval_ms;
    d->pid = s->pid;
    d->table_limit = s->table_limit;
    d->generation = s->generation;
    for (unsigned k = 0; k < FX_META_COUNT; k++)
        d->meta[k] = dup_str(s->meta[k], ok);
    memcpy(d->meta_int, s->meta_int, sizeof(d->meta_int));
    memcpy(d->meta_int_set, s->meta_int_set, sizeof(d->meta_int_set));
}

struct fx_profile *fx_profile_snapshot(const struct fx_profile *p)
{
    if (p->packed) /* packs are not copied */
        return NULL;
    struct fx_profile *d = fx_calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    bool ok = true;
    copy_tables(d, p, &ok);
    copy_threads(d, p, &ok);
    copy_counters(d, p, &ok);
    copy_extra(d, p, &ok);
    copy_meta(d, p, &ok);
    ok = ok && fx_profile_libs_copy(&d->libs, &p->libs);
    if (!ok) {
        fx_profile_free(d);
        return NULL;
    }
    fx_profile_recount_threads(d);
    return d;
}
