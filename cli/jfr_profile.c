/* SPDX-License-Identifier: Apache-2.0 */
/* A JFR recording as a profile model (issue 35), through the streaming reader (fx_jfr.h):
 * one thread per Java thread (its name and OS tid), jdk.ExecutionSample as samples with their
 * stacks (frames typed by JFR's frame type, with line numbers), jdk.NativeMethodSample as
 * samples whose leaf says the thread waited in native code, jdk.ObjectAllocationSample as
 * allocations of its weight in bytes with the class as leaf (as fxagent's alloc=; JFR records
 * no frees), and every event type's count in Profile Info. Each chunk's pools are its own, so the
 * caches from pool keys (threads, stacks, methods, frame types) live for one chunk; a chunk's
 * samples are sorted by time before they enter the model (JFR writes per-thread buffers, not one
 * timeline). */
#include "fxprof.h"

#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_jfr.h"
#include "fx_jtype.h"
#include "fx_profile.h"
#include "jfr_profile.h"

static uint32_t cls_of(const struct fx_jfr *r, const char *name)
{
    return fx_jfr_class_find(r, name);
}

static struct ev_fields event_fields(const struct fx_jfr *r, const char *name, const char *thread)
{
    uint32_t k = fx_jfr_class_find(r, name);
    return (struct ev_fields){k, fx_jfr_field(r, k, "startTime"), fx_jfr_field(r, k, thread),
                              fx_jfr_field(r, k, "stackTrace")};
}

static void read_layout(struct conv *c)
{
    struct fx_jfr *r = c->r;
    struct layout *l = &c->l;
    for (unsigned i = 1; i < 3; i++)
        l->alloc[i] = (struct ev_fields){UINT32_MAX, -1, -1, -1};
    l->exec = event_fields(r, "jdk.ExecutionSample", "sampledThread");
    l->native = event_fields(r, "jdk.NativeMethodSample", "sampledThread");
    static const char *const allocs[3][3] = {
            {"jdk.ObjectAllocationSample", "weight", NULL},
            {"jdk.ObjectAllocationInNewTLAB", "tlabSize", "allocationSize"},
            {"jdk.ObjectAllocationOutsideTLAB", NULL, "allocationSize"}};
    l->async_profiler = false;
    for (uint32_t k = 0; k < fx_jfr_class_count(r) && !l->async_profiler; k++)
        l->async_profiler = !strncmp(fx_jfr_class_name(r, k), "profiler.", 9);
    /* the JDK's own TLAB events (when enabled) are only counted: its ObjectAllocationSample
     * samples the same allocations */
    for (unsigned i = 0; i < (l->async_profiler ? 3u : 1u); i++) {
        l->alloc[i] = event_fields(r, allocs[i][0], "eventThread");
        l->a_class[i] = fx_jfr_field(r, l->alloc[i].cls, "objectClass");
        l->a_weight[i] = allocs[i][1] ? fx_jfr_field(r, l->alloc[i].cls, allocs[i][1]) : -1;
        l->a_size[i] = allocs[i][2] ? fx_jfr_field(r, l->alloc[i].cls, allocs[i][2]) : -1;
    }
    l->cpu = event_fields(r, "jdk.CPUTimeSample", "eventThread");
    l->cpu_lost = event_fields(r, "jdk.CPUTimeSamplesLost", "eventThread");
    uint32_t t = cls_of(r, "java.lang.Thread");
    l->t_os_name = fx_jfr_field(r, t, "osName");
    l->t_os_id = fx_jfr_field(r, t, "osThreadId");
    l->t_java_name = fx_jfr_field(r, t, "javaName");
    l->t_java_id = fx_jfr_field(r, t, "javaThreadId");
    uint32_t st = cls_of(r, "jdk.types.StackTrace");
    l->st_truncated = fx_jfr_field(r, st, "truncated");
    l->st_frames = fx_jfr_field(r, st, "frames");
    uint32_t f = cls_of(r, "jdk.types.StackFrame");
    l->f_method = fx_jfr_field(r, f, "method");
    l->f_line = fx_jfr_field(r, f, "lineNumber");
    l->f_type = fx_jfr_field(r, f, "type");
    uint32_t m = cls_of(r, "jdk.types.Method");
    l->m_type = fx_jfr_field(r, m, "type");
    l->m_name = fx_jfr_field(r, m, "name");
    l->c_name = fx_jfr_field(r, cls_of(r, "java.lang.Class"), "name");
    l->s_string = fx_jfr_field(r, cls_of(r, "jdk.types.Symbol"), "string");
    l->ft_desc = fx_jfr_field(r, cls_of(r, "jdk.types.FrameType"), "description");
}

/* An execution, native method or (JDK 25) CPU-time sample, told by the event's class. */
static int sample(struct conv *c, const struct fx_jfr_obj *ev, struct fx_errbuf *eb)
{
    const struct layout *l = &c->l;
    bool native = ev->cls == l->native.cls, cpu = ev->cls == l->cpu.cls;
    const struct ev_fields *f = native ? &l->native : cpu ? &l->cpu : &l->exec;
    int ft = f->time, fth = f->thread, fs = f->stack;
    uint32_t n = fx_jfr_field_count(c->r, ev->cls);
    struct fx_jfr_value v[16];
    if (ft < 0 || fth < 0 || fs < 0 || n > 16) {
        fx_errbuf_set(eb, "%s has no startTime, thread or stackTrace field",
                      fx_jfr_class_name(c->r, ev->cls));
        return FX_EINVAL;
    }
    int rc = fx_jfr_fields(c->r, ev, v, n, eb);
    fx_thread_id th;
    fx_stack_id st;
    if (rc == FX_OK)
        rc = fx_jfr_profile_thread(c, &v[fth], cpu, &th, eb);
    if (rc == FX_OK)
        rc = fx_jfr_profile_stack(c, &v[fs], native, &st, eb);
    if (rc != FX_OK)
        return rc;
    if (fx_grow(&c->rows, &c->cap_rows, c->n_rows, 1, sizeof *c->rows, 1024))
        return FX_ENOMEM;
    int64_t t = fx_jfr_ticks_to_ns(c->r, v[ft].i);
    c->rows[c->n_rows++] = (struct srow){t, 0, th.i, st.i};
    *(native ? &c->native_samples : cpu ? &c->cpu_samples : &c->samples) += 1;
    return FX_OK;
}

/* The allocated class as a leaf frame (category Allocation), named as in Java: JFR names a
 * class java/lang/String and an array [B. */
static int class_frame(struct conv *c, const struct fx_jfr_value *ref, fx_frame_id *out,
                       struct fx_errbuf *eb)
{
    uint64_t v64;
    if (fx_jfr_map_get(&c->cache, C_CLASS, (uint64_t)ref->i, &v64)) {
        *out = (fx_frame_id){(uint32_t)v64};
        return FX_OK;
    }
    struct fx_jfr_value k[16];
    char name[STR_CAP] = "[unknown class]";
    if (fx_jfr_profile_deref(c, ref, k, c->l.c_name, eb) == FX_OK)
        fx_jfr_profile_symbol(c, &k[c->l.c_name], name, eb);
    if (name[0] == '[') {
        if (fx_jtype_name(name, strlen(name), c->buf2, STR_CAP) >= 0)
            snprintf(name, sizeof name, "%s", c->buf2);
    } else {
        for (char *s = name; *s; s++)
            *s = *s == '/' ? '.' : *s;
    }
    int rc = fx_jfr_profile_label_frame(c->p, name, FX_CAT_ALLOC, 0, out);
    return rc == FX_OK ? fx_jfr_map_put(&c->cache, C_CLASS, (uint64_t)ref->i, out->i) : rc;
}

/* An allocation sample of the JDK (jdk.ObjectAllocationSample: its weight), or a TLAB event of
 * async-profiler's alloc: a new TLAB's size stands for what its thread
 * allocated in it, an allocation outside a TLAB for its own size, as async-profiler's converter
 * weighs them. */
static int alloc_sample(struct conv *c, unsigned kind, const struct fx_jfr_obj *ev,
                        struct fx_errbuf *eb)
{
    const struct layout *l = &c->l;
    uint32_t n = fx_jfr_field_count(c->r, ev->cls);
    struct fx_jfr_value v[16];
    const struct ev_fields *f = &l->alloc[kind];
    int fw = l->a_weight[kind], fz = l->a_size[kind];
    if (f->time < 0 || f->thread < 0 || f->stack < 0 || l->a_class[kind] < 0 ||
        (fw < 0 && fz < 0) || n > 16) {
        c->alloc_lost++; /* a layout this converter does not know */
        return FX_OK;
    }
    int rc = fx_jfr_fields(c->r, ev, v, n, eb);
    fx_thread_id th;
    fx_stack_id st;
    fx_frame_id cf;
    if (rc == FX_OK)
        rc = fx_jfr_profile_thread(c, &v[f->thread], false, &th, eb);
    if (rc == FX_OK)
        rc = fx_jfr_profile_stack(c, &v[f->stack], false, &st, eb);
    if (rc == FX_OK)
        rc = class_frame(c, &v[l->a_class[kind]], &cf, eb);
    if (rc == FX_OK)
        rc = fx_profile_stack(c->p, st, cf, &st);
    if (rc != FX_OK)
        return rc;
    int64_t bytes = fw >= 0 && v[fw].i > 0 ? v[fw].i : fz >= 0 ? v[fz].i : 0;
    if (bytes <= 0) {
        c->alloc_lost++;
        return FX_OK;
    }
    if (fx_grow(&c->rows, &c->cap_rows, c->n_rows, 1, sizeof *c->rows, 1024))
        return FX_ENOMEM;
    int64_t t = fx_jfr_ticks_to_ns(c->r, v[f->time].i);
    c->rows[c->n_rows++] = (struct srow){t, bytes, th.i, st.i};
    c->allocs++;
    c->tlab_allocs += kind > 0;
    return FX_OK;
}

static int by_time(const void *a, const void *b)
{
    const struct srow *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* jdk.CPUTimeSamplesLost: samples JDK 25's CPU-time sampler dropped (its queue was full). */
static void lost_cpu(struct conv *c, const struct fx_jfr_obj *ev, struct fx_errbuf *eb)
{
    int f = fx_jfr_field(c->r, ev->cls, "lostSamples");
    uint32_t n = fx_jfr_field_count(c->r, ev->cls);
    struct fx_jfr_value v[16];
    if (f >= 0 && n <= 16 && fx_jfr_fields(c->r, ev, v, n, eb) == FX_OK && v[f].i > 0)
        c->cpu_lost += (uint64_t)v[f].i;
}

/* jdk.ActiveSetting "period" of jdk.ExecutionSample ("10 ms", "20 ms"): the profile's
 * interval. The last one read wins (a recording started again with another period). */
static void setting(struct conv *c, const struct fx_jfr_obj *ev, struct fx_errbuf *eb)
{
    int fid = fx_jfr_field(c->r, ev->cls, "id"), fname = fx_jfr_field(c->r, ev->cls, "name"),
        fval = fx_jfr_field(c->r, ev->cls, "value");
    uint32_t n = fx_jfr_field_count(c->r, ev->cls);
    struct fx_jfr_value v[16];
    if (fid < 0 || fname < 0 || fval < 0 || n > 16 || fx_jfr_fields(c->r, ev, v, n, eb) != FX_OK ||
        v[fid].i != fx_jfr_class_id(c->r, c->l.exec.cls) ||
        fx_jfr_string(c->r, &v[fname], c->buf, STR_CAP, NULL) != FX_OK ||
        strcmp(c->buf, "period") || fx_jfr_string(c->r, &v[fval], c->buf, STR_CAP, NULL) != FX_OK)
        return;
    static const struct {
        const char *unit;
        double ms;
    } units[] = {{"ns", 1e-6}, {"us", 1e-3}, {"ms", 1}, {"s", 1e3}, {"m", 6e4}, {"h", 3.6e6}};
    char *end;
    double x = strtod(c->buf, &end);
    while (*end == ' ')
        end++;
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if (x > 0 && !strcmp(end, units[i].unit))
            c->interval_ms = x * units[i].ms;
}

/* The chunk's samples, in time order, into the model; its event counts into the totals. */
static int end_chunk(struct conv *c)
{
    if (c->n_rows > 1) /* rows is NULL until a first sample (qsort's arguments are nonnull) */
        qsort(c->rows, c->n_rows, sizeof *c->rows, by_time);
    for (size_t i = 0; i < c->n_rows; i++) {
        const struct srow *s = &c->rows[i];
        int rc = s->bytes ? fx_profile_alloc(c->p, (fx_thread_id){s->thread}, s->t,
                                             (fx_stack_id){s->stack}, s->bytes, ++c->address)
                          : fx_profile_sample(c->p, (fx_thread_id){s->thread}, s->t,
                                              (fx_stack_id){s->stack}, -1, 1);
        if (rc != FX_OK)
            return rc;
    }
    c->n_rows = 0;
    for (uint32_t k = 0; k < fx_jfr_class_count(c->r); k++) {
        if (!c->per_class[k])
            continue;
        const char *name = fx_jfr_class_name(c->r, k);
        size_t t = 0;
        while (t < c->n_types && strcmp(c->types[t].name, name))
            t++;
        if (t == c->n_types) {
            if (fx_grow(&c->types, &c->cap_types, c->n_types, 1, sizeof *c->types, 64))
                return FX_ENOMEM;
            if (!(c->types[t].name = fx_strdup(name)))
                return FX_ENOMEM;
            c->types[t].n = 0;
            c->n_types++;
        }
        c->types[t].n += c->per_class[k];
    }
    return FX_OK;
}

static int chunk(struct conv *c, struct fx_errbuf *eb)
{
    const struct fx_jfr_chunk_info *ci = fx_jfr_chunk(c->r);
    if (!c->first_ns || ci->start_ns < c->first_ns)
        c->first_ns = ci->start_ns;
    if (ci->start_ns + ci->duration_ns > c->last_ns)
        c->last_ns = ci->start_ns + ci->duration_ns;
    read_layout(c);
    c->ap_chunks += c->l.async_profiler;
    c->setting_cls = fx_jfr_class_find(c->r, "jdk.ActiveSetting");
    fx_jfr_markers_layout(c);
    fx_jfr_counters_layout(c);
    fx_jfr_map_clear(&c->cache);
    c->gen++; /* the stacks' memo: every slot of the last chunk reads as empty */
    fx_jfr_resolve_chunk(c);
    c->last_thread[0].ok = c->last_thread[1].ok = false;
    fx_free(c->per_class);
    c->per_class = fx_calloc(fx_jfr_class_count(c->r) + 1, sizeof *c->per_class);
    if (!c->per_class)
        return FX_ENOMEM;
    struct fx_jfr_obj ev;
    int rc;
    while ((rc = fx_jfr_next_event(c->r, &ev, eb)) == 1) {
        c->per_class[ev.cls]++;
        if (ev.cls == c->l.exec.cls || ev.cls == c->l.native.cls || ev.cls == c->l.cpu.cls)
            rc = sample(c, &ev, eb);
        else if (ev.cls == c->l.cpu_lost.cls)
            lost_cpu(c, &ev, eb);
        else if (ev.cls == c->l.alloc[0].cls || ev.cls == c->l.alloc[1].cls ||
                 ev.cls == c->l.alloc[2].cls)
            rc = alloc_sample(c,
                              ev.cls == c->l.alloc[0].cls   ? 0
                              : ev.cls == c->l.alloc[1].cls ? 1
                                                            : 2,
                              &ev, eb);
        else if (ev.cls == c->setting_cls)
            setting(c, &ev, eb);
        else if ((rc = fx_jfr_counters_event(c, &ev, eb)) == 0)
            rc = fx_jfr_markers_event(c, &ev, eb);
        if (rc != 1 && rc != FX_OK)
            return rc;
    }
    if (rc >= 0)
        rc = fx_jfr_counters_flush(c);
    return rc < 0 ? rc : end_chunk(c);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct type_count *)a)->name, ((const struct type_count *)b)->name);
}

static int finish(struct conv *c)
{
    struct fx_profile *p = c->p;
    const struct fx_jfr_stats *s = fx_jfr_stats(c->r);
    fx_profile_set_start(p, c->first_ns, (double)c->first_ns / 1e6);
    fx_profile_set_range(p, c->first_ns, c->last_ns);
    fx_profile_set_meta(p, "product", "JFR recording (fxprof convert)");
    if (c->interval_ms > 0)
        fx_profile_set_interval(p, c->interval_ms);
    /* the two event types the reader consumes itself, named as jfr summary names them */
    fx_profile_extra_count(p, "JFR events", "jdk.CheckPoint", (int64_t)s->pool_events,
                           FX_EXTRA_NONZERO);
    fx_profile_extra_count(p, "JFR events", "jdk.Metadata", (int64_t)s->metadata_events,
                           FX_EXTRA_NONZERO);
    if (c->n_types > 1)
        qsort(c->types, c->n_types, sizeof *c->types, by_name);
    for (size_t i = 0; i < c->n_types; i++)
        fx_profile_extra_count(p, "JFR events", c->types[i].name, (int64_t)c->types[i].n,
                               FX_EXTRA_ALWAYS);
    const struct fx_extra_row rows[] = {
            {"chunks", s->chunks, FX_EXTRA_ALWAYS},
            {"execution samples", c->samples, FX_EXTRA_ALWAYS},
            {"native method samples", c->native_samples, FX_EXTRA_ALWAYS},
            {"CPU-time samples (JDK 25, tracks NAME" CPU_SUFFIX ")", c->cpu_samples,
             FX_EXTRA_NONZERO},
            {"CPU-time samples the JVM lost (jdk.CPUTimeSamplesLost)", c->cpu_lost, FX_EXTRA_LOSS},
            {"allocation samples (no frees: retained memory is not known)", c->allocs,
             FX_EXTRA_NONZERO},
            {"of which TLAB events (a new TLAB weighs its size)", c->tlab_allocs, FX_EXTRA_NONZERO},
            {"recorded by async-profiler (chunks)", c->ap_chunks, FX_EXTRA_NONZERO},
            {"markers (waits, GC and its phases, compilations, traced and timed methods, old objects)",
             c->markers, FX_EXTRA_ALWAYS},
            {"counter values (heap used/committed, CPU load)", c->cnt.values, FX_EXTRA_NONZERO},
            {"heap summary or CPU load events of an unknown layout", c->cnt.unread, FX_EXTRA_LOSS},
            {"allocation samples of an unknown layout or no weight", c->alloc_lost, FX_EXTRA_LOSS},
            {"stacks truncated by the recording", c->truncated, FX_EXTRA_NONZERO},
            {"events without a stack trace", c->no_stack, FX_EXTRA_LOSS},
            {"events without a thread", c->no_thread, FX_EXTRA_LOSS},
            {"bytes after the last complete chunk", s->bytes_incomplete, FX_EXTRA_LOSS},
    };
    fx_profile_extra_rows(p, "JFR", rows, sizeof rows / sizeof *rows);
    return FX_OK;
}

int fx_jfr_profile(const char *path, struct fx_profile *p, struct fx_jfr_summary *sum,
                   struct fx_errbuf *eb)
{
    struct conv c = {.p = p};
    /* millions of traced calls: packed, ~12 bytes a marker where columns take 42 */
    int rc = fx_profile_pack_markers(p);
    if (rc != FX_OK) {
        fx_errbuf_set(eb, "%s: the profile to convert into already holds markers", path);
        return rc;
    }
    rc = fx_jfr_open(path, &c.r, eb);
    if (rc != FX_OK)
        return rc;
    /* the next chunk's constant pools indexed on the other core while this one's events are
     * read (without a thread, here as before) */
    (void)fx_jfr_read_ahead(c.r);
    /* the memos (jfr_profile.h); without them (out of memory) the caches alone */
    c.smemo = fx_calloc(1u << SMEMO_BITS, sizeof(struct stack_memo));
    c.nmemo = fx_calloc(1u << NMEMO_BITS, sizeof(struct node_memo));
    while ((rc = fx_jfr_next_chunk(c.r, eb)) == 1) {
        if ((rc = chunk(&c, eb)) != FX_OK)
            break;
    }
    if (rc == 0 && fx_jfr_stats(c.r)->chunks == 0) {
        fx_errbuf_set(eb, "%s: no complete chunk (%llu bytes: cut short or still being written)",
                      path, (unsigned long long)fx_jfr_stats(c.r)->file_size);
        rc = FX_EINVAL;
    }
    if (rc == FX_ENOMEM)
        fx_errbuf_set(eb, "%s: out of memory", path);
    else if (rc < 0 && !eb->msg[0])
        fx_errbuf_set(eb, "%s: corrupt recording (%s)", path, fx_strerror(rc));
    if (rc == 0)
        rc = finish(&c);
    if (sum) {
        const struct fx_jfr_stats *s = fx_jfr_stats(c.r);
        *sum = (struct fx_jfr_summary){.chunks = s->chunks,
                                       .bytes_incomplete = s->bytes_incomplete,
                                       .samples = c.samples,
                                       .native_samples = c.native_samples,
                                       .threads = fx_profile_thread_count(p)};
    }
    for (size_t i = 0; i < c.n_types; i++)
        fx_free(c.types[i].name);
    fx_free(c.types), fx_free(c.rows), fx_free(c.cnt.rows), fx_free(c.per_class), fx_free(c.frames);
    fx_free(c.path), fx_free(c.smemo), fx_free(c.nmemo);
    fx_jfr_map_destroy(&c.cache);
    fx_jfr_resolve_free(&c);
    fx_jfr_map_destroy(&c.threads);
    fx_jfr_close(c.r);
    return rc;
}
