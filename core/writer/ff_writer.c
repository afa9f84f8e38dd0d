/* SPDX-License-Identifier: Apache-2.0 */
/* The Firefox Profiler processed-format writer: walks the model's columns and streams them
 * through the JSON emitter, in the v66 shape of PROFILE-FORMAT.md §3-§13 (key order as in its
 * §13 example). Only fixed-size scratch is allocated (the emitter, one marker permutation and its
 * copy while it is sorted) and 4
 * bytes a thread for its track name (ff_writer_names.c), so memory during a dump stays flat
 * whatever the profile's samples. meta and counters are in
 * ff_writer_meta.c, the shared tables and libs in ff_writer_tables.c, files in ff_writer_file.c.
 * Tests: unit.ff_writer. */
#include "fx_ff_writer.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_ff_writer_internal.h"
#include "fx_json.h"
#include "fx_profile.h"
#include "fx_profile_internal.h"
#include "fx_sort.h"

/* --- threads (§6, §7, §10) --- */

static void write_sample_times(struct fx_json *j, const struct fx_profile *p,
                               const struct fx_samples *s)
{
    fx_json_key(j, "timeDeltas");
    fx_json_arr_begin(j);
    int64_t prev = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        int64_t us = rel_us(p, s->time_ns[i]);
        put_ms(j, us - prev);
        prev = us;
    }
    fx_json_arr_end(j);
}

/* CPU deltas in whole microseconds (meta.sampleUnits, §11): the last three digits of a ns delta
 * are noise the graph cannot show, yet cost about 1.8 B/sample gzipped. Each element is the
 * rounded running sum minus what was already written, so the thread's total stays within
 * 0.5 µs of the clock's, where rounding each delta alone would drift by up to 0.5 µs a sample. */
static void write_cpu_deltas(struct fx_json *j, const struct fx_samples *s)
{
    fx_json_key(j, "threadCPUDelta");
    fx_json_arr_begin(j);
    uint64_t sum_ns = 0, written_us = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        if (i == 0) {
            fx_json_u64(j, 0); /* ignored by the front-end: nothing precedes it */
        } else if (s->cpu_ns[i] == FX_CPU_UNKNOWN) {
            fx_json_null(j);
        } else {
            sum_ns += s->cpu_ns[i];
            uint64_t us = (sum_ns + 500) / 1000;
            fx_json_u64(j, us - written_us);
            written_us = us;
        }
    }
    fx_json_arr_end(j);
}

/* tracing-ms weights are µs in the model: always written (null would mean 1 ms each), in ms. */
static void write_weights(struct fx_json *j, const struct fx_samples *s, uint8_t type)
{
    if (type != FX_WEIGHT_TRACING_MS) {
        if (s->weight)
            col_u32(j, "weight", s->weight, s->count, false, 1);
        else
            kv_null(j, "weight");
        return;
    }
    fx_json_key(j, "weight");
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < s->count; i++)
        put_ms(j, s->weight ? s->weight[i] : 1);
    fx_json_arr_end(j);
}

static void write_samples(struct fx_json *j, const struct fx_profile *p, const struct fx_thread *t)
{
    static const char *const weight_types[FX_WEIGHT_TYPE_COUNT] = {"samples", "tracing-ms",
                                                                   "bytes"};
    const struct fx_samples *s = &t->samples;
    fx_json_key(j, "samples");
    fx_json_obj_begin(j);
    col_u32(j, "stack", s->stack, s->count, true, 0);
    write_sample_times(j, p, s);
    write_weights(j, s, t->weight_type);
    kv_str(j, "weightType", weight_types[t->weight_type]);
    /* A thread without samples (an empty track: cpu mode writes threads that never ran) has no
     * CPU deltas at all. With an empty column profiler-cli 0.10's activity slices (`thread
     * info`) loop without end and its daemon dies out of memory; without it the front-end takes
     * the thread as having no CPU figures, which is the truth. */
    if (s->count > 0)
        write_cpu_deltas(j, s);
    kv_length(j, s->count);
    fx_json_obj_end(j);
}

/* The time the front-end orders a marker by: IntervalEnd has only its end. */
static int64_t marker_time(const struct fx_markers *m, uint32_t i)
{
    return m->phase[i] == FX_PHASE_END ? m->end_ns[i] : m->start_ns[i];
}

/* The time as an unsigned key (the sign bit flipped: signed order), for the radix sort. */
struct order {
    uint64_t t;
    uint32_t i;
};

static int order_cmp(const void *a, const void *b)
{
    const struct order *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Markers in chronological order (ties keep insertion order, so START stays before its END).
 * NULL when they already are, or when the permutation cannot be allocated: then insertion
 * order is written, which still loads. */
static struct order *marker_order(const struct fx_markers *m)
{
    uint32_t i = 1;
    while (i < m->count && marker_time(m, i - 1) <= marker_time(m, i))
        i++;
    if (i >= m->count)
        return NULL;
    struct order *o = fx_reallocarray(NULL, m->count, sizeof(*o));
    if (!o)
        return NULL;
    for (i = 0; i < m->count; i++)
        o[i] = (struct order){(uint64_t)marker_time(m, i) ^ 1ull << 63, i};
    /* stable by time, the rows in insertion order: (time, row) as order_cmp; the radix sort
     * is several times faster on a JFR recording's millions of traced calls, the comparison
     * sort is there when its copy cannot be had */
    if (!fx_sort_by_u64(o, m->count, sizeof(*o), offsetof(struct order, t)))
        fx_sort(o, m->count, sizeof(*o), order_cmp);
    return o;
}

static uint32_t at(const struct order *perm, uint32_t k)
{
    return perm ? perm[k].i : k;
}

static void write_marker_times(struct fx_json *j, const struct fx_profile *p,
                               const struct fx_markers *m, const struct order *perm)
{
    fx_json_key(j, "startTime");
    fx_json_arr_begin(j);
    for (uint32_t k = 0; k < m->count; k++) {
        uint32_t i = at(perm, k);
        put_ms(j, m->phase[i] == FX_PHASE_END ? 0 : rel_us(p, m->start_ns[i]));
    }
    fx_json_arr_end(j);
    fx_json_key(j, "endTime");
    fx_json_arr_begin(j);
    for (uint32_t k = 0; k < m->count; k++) {
        uint32_t i = at(perm, k);
        bool has_end = m->phase[i] == FX_PHASE_INTERVAL || m->phase[i] == FX_PHASE_END;
        put_ms(j, has_end ? rel_us(p, m->end_ns[i]) : 0);
    }
    fx_json_arr_end(j);
}

/* A column of per-marker small values (name, phase, category) in permutation order. */
static void col_marker(struct fx_json *j, const char *key, const struct fx_markers *m,
                       const struct order *perm, int which)
{
    fx_json_key(j, key);
    fx_json_arr_begin(j);
    for (uint32_t k = 0; k < m->count; k++) {
        uint32_t i = at(perm, k);
        uint32_t v = which == 0 ? m->name[i] : which == 1 ? m->phase[i] : m->category[i];
        fx_json_u64(j, v);
    }
    fx_json_arr_end(j);
}

static void write_markers(struct fx_json *j, const struct fx_profile *p, const struct fx_markers *m)
{
    struct order *perm = marker_order(m);
    struct fx_ff_fast fast[FX_FF_FAST_MAX];
    bool has_fast = p->nschemas <= FX_FF_FAST_MAX && m->count > 0;
    if (has_fast)
        fx_ff_fast_schemas(p, fast);
    fx_json_key(j, "markers");
    fx_json_obj_begin(j);
    fx_json_key(j, "data");
    fx_json_arr_begin(j);
    for (uint32_t k = 0; k < m->count; k++)
        fx_ff_marker_data(j, p, m, at(perm, k), has_fast ? fast : NULL);
    fx_json_arr_end(j);
    col_marker(j, "name", m, perm, 0);
    write_marker_times(j, p, m, perm);
    col_marker(j, "phase", m, perm, 1);
    col_marker(j, "category", m, perm, 2);
    kv_length(j, m->count);
    fx_json_obj_end(j);
    fx_free(perm);
}

/* The balanced form of src/types/profile.ts (RawBalancedNativeAllocationsTable): times in ms
 * from the start, weight in bytes (frees negative), the address that pairs a free with its
 * allocation, and the allocating thread's id on every row (frees are kept on that thread). */
static void write_allocs(struct fx_json *j, const struct fx_profile *p, const struct fx_thread *t)
{
    const struct fx_allocs *a = &t->allocs;
    fx_json_key(j, "nativeAllocations");
    fx_json_obj_begin(j);
    fx_json_key(j, "time");
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < a->count; i++)
        put_ms(j, rel_us(p, a->time_ns[i]));
    fx_json_arr_end(j);
    fx_json_key(j, "weight");
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < a->count; i++)
        fx_json_i64(j, a->bytes[i]);
    fx_json_arr_end(j);
    kv_str(j, "weightType", "bytes");
    col_u32(j, "stack", a->stack, a->count, true, 0);
    fx_json_key(j, "memoryAddress");
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < a->count; i++)
        fx_json_u64(j, a->address[i]);
    fx_json_arr_end(j);
    col_const(j, "threadId", a->count, false, t->tid);
    kv_length(j, a->count);
    fx_json_obj_end(j);
}

/* index: a thread of the profile; UINT32_MAX: the placeholder of an empty profile. */
static void write_thread_head(const struct fx_ff_ctx *w, uint32_t index, bool is_main, int64_t tid)
{
    struct fx_json *j = w->j;
    if (index == UINT32_MAX)
        kv_str(j, "name", fx_ff_writer_process_name(w->p));
    else
        fx_ff_writer_track_name(w, index);
    kv_bool(j, "isMainThread", is_main);
    kv_str(j, "processType", "default");
    kv_str(j, "processName", fx_ff_writer_process_name(w->p));
    fx_json_key(j, "pid");
    fx_ff_writer_pid(j, w->p);
    kv_i64(j, "tid", tid);
    kv_i64(j, "processStartupTime", 0);
    kv_null(j, "processShutdownTime");
}

static void write_thread(const struct fx_ff_ctx *w, uint32_t index)
{
    struct fx_json *j = w->j;
    const struct fx_profile *p = w->p;
    const struct fx_thread *t = p->threads[index];
    fx_json_obj_begin(j);
    write_thread_head(w, index, w->index[index] == w->main_thread, t->tid);
    int64_t reg = rel_us(p, t->register_ns);
    kv_ms(j, "registerTime", reg > 0 ? reg : 0); /* threads older than t0 start with it */
    if (t->unregistered)
        kv_ms(j, "unregisterTime", rel_us(p, t->unregister_ns));
    else
        kv_null(j, "unregisterTime");
    kv_empty_arr(j, "pausedRanges");
    kv_bool(j, "showMarkersInTimeline", true);
    write_samples(j, p, t);
    if (t->pack) /* packed markers (fx_profile_pack_markers) */
        fx_ff_write_packed_markers(j, p, t);
    else
        write_markers(j, p, &t->markers);
    if (t->allocs.count > 0) /* absent otherwise: the front-end then offers no memory views */
        write_allocs(j, p, t);
    fx_json_obj_end(j);
}

/* The front-end refuses threads: [] ("No threads were captured"), so an empty profile gets
 * one empty thread named after the process. */
static void write_placeholder_thread(const struct fx_ff_ctx *w)
{
    static const struct fx_thread no_thread;
    struct fx_json *j = w->j;
    fx_json_obj_begin(j);
    write_thread_head(w, UINT32_MAX, true, 0);
    kv_i64(j, "registerTime", 0);
    kv_null(j, "unregisterTime");
    kv_empty_arr(j, "pausedRanges");
    kv_bool(j, "showMarkersInTimeline", true);
    write_samples(j, w->p, &no_thread);
    write_markers(j, w->p, &no_thread.markers);
    fx_json_obj_end(j);
}

static void write_threads(const struct fx_ff_ctx *w)
{
    fx_json_key(w->j, "threads");
    fx_json_arr_begin(w->j);
    for (uint32_t k = 0; k < w->nwritten; k++)
        write_thread(w, w->order[k]);
    if (!w->nwritten)
        write_placeholder_thread(w);
    fx_json_arr_end(w->j);
}

int fx_ff_write(const struct fx_profile *p, struct fx_sink sink, struct fx_errbuf *eb)
{
    struct fx_json *j = fx_malloc(sizeof(*j));
    if (!j) {
        fx_errbuf_set(eb, "writing the profile: out of memory for the JSON buffer");
        return FX_ENOMEM;
    }
    struct fx_ff_ctx w = {j, p, 0, NULL, NULL, NULL, 0};
    if (fx_ff_writer_threads_prepare(&w) != FX_OK) {
        fx_free(j);
        fx_errbuf_set(eb, "writing the profile: out of memory for the thread list");
        return FX_ENOMEM;
    }
    fx_json_init(j, sink);
    fx_json_obj_begin(j);
    fx_ff_writer_meta(&w);
    fx_ff_writer_libs(j, &p->libs);
    kv_empty_arr(j, "pages");
    fx_ff_writer_counters(&w);
    kv_empty_arr(j, "profilerOverhead");
    fx_ff_writer_shared(&w);
    write_threads(&w);
    fx_json_obj_end(j);
    int rc = fx_json_finish(j);
    fx_free(j);
    fx_free(w.index);
    if (rc != FX_OK)
        fx_errbuf_set(eb, "writing the profile: %s", fx_strerror(rc));
    return rc;
}
