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
    l->exec = event_fields(r, "jdk.ExecutionSample", "sampledThread");
    l->native = event_fields(r, "jdk.NativeMethodSample", "sampledThread");
    l->alloc = event_fields(r, "jdk.ObjectAllocationSample", "eventThread");
    l->cpu = event_fields(r, "jdk.CPUTimeSample", "eventThread");
    l->cpu_lost = event_fields(r, "jdk.CPUTimeSamplesLost", "eventThread");
    l->a_class = fx_jfr_field(r, l->alloc.cls, "objectClass");
    l->a_weight = fx_jfr_field(r, l->alloc.cls, "weight");
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

/* The fields of the object a reference points to, up to field `need` (FX_ENOTFOUND: none). */
int fx_jfr_profile_deref(struct conv *c, const struct fx_jfr_value *ref, struct fx_jfr_value *v,
                         int need, struct fx_errbuf *eb)
{
    struct fx_jfr_obj o;
    if (need < 0 || fx_jfr_deref(c->r, ref, &o) != FX_OK)
        return FX_ENOTFOUND;
    uint32_t n = fx_jfr_field_count(c->r, o.cls);
    if (n > 16 || (uint32_t)need >= n)
        return FX_ENOTFOUND;
    return fx_jfr_fields(c->r, &o, v, n, eb);
}

/* A string field reached through a reference: a Symbol's string, a Class's name. */
const char *fx_jfr_profile_symbol(struct conv *c, const struct fx_jfr_value *ref, char *buf,
                                  struct fx_errbuf *eb)
{
    struct fx_jfr_value v[16];
    buf[0] = '\0';
    if (fx_jfr_profile_deref(c, ref, v, c->l.s_string, eb) == FX_OK)
        fx_jfr_string(c->r, &v[c->l.s_string], buf, STR_CAP, NULL);
    return buf;
}

int fx_jfr_profile_thread(struct conv *c, const struct fx_jfr_value *ref, bool cpu, uint32_t *out,
                          struct fx_errbuf *eb)
{
    uint64_t v64;
    if (fx_jfr_map_get(&c->cache, cpu ? C_CTHREAD : C_THREAD, (uint64_t)ref->i, &v64)) {
        *out = (uint32_t)v64;
        return FX_OK;
    }
    const struct layout *l = &c->l;
    struct fx_jfr_value v[16];
    int64_t java_id = -1, tid = 0;
    const char *name = NO_THREAD;
    if (fx_jfr_profile_deref(c, ref, v, l->t_os_id, eb) == FX_OK) {
        tid = v[l->t_os_id].i;
        if (l->t_java_id >= 0 && v[l->t_java_id].kind == FX_JFR_INT)
            java_id = v[l->t_java_id].i;
        if (l->t_java_name >= 0 &&
            fx_jfr_string(c->r, &v[l->t_java_name], c->buf, STR_CAP, NULL) == FX_OK)
            name = c->buf;
        else if (l->t_os_name >= 0 &&
                 fx_jfr_string(c->r, &v[l->t_os_name], c->buf, STR_CAP, NULL) == FX_OK)
            name = c->buf;
    } else {
        c->no_thread++;
    }
    /* the same Java thread in every chunk is one track (an OS thread id when not Java) */
    uint64_t gkey = java_id > 0 ? (uint64_t)java_id : (uint64_t)tid | 1ull << 62;
    uint32_t idx;
    if (fx_jfr_map_get(&c->threads, cpu, gkey, &v64)) {
        idx = (uint32_t)v64;
    } else {
        if (cpu) { /* JDK 25's CPU-time samples: a track of their own beside the thread's */
            size_t len = strnlen(name, STR_CAP - 16);
            memmove(c->buf, name, len);
            snprintf(c->buf + len, STR_CAP - len, "%s", CPU_SUFFIX);
            name = c->buf;
        }
        int rc = fx_profile_thread_add(c->p, name, tid, fx_jfr_chunk(c->r)->start_ns, &idx);
        if (rc == FX_OK)
            rc = fx_jfr_map_put(&c->threads, cpu, gkey, idx);
        if (rc != FX_OK)
            return rc;
        if (!cpu && (!c->any_thread || (!c->main_set && !strcmp(name, "main"))))
            c->main_thread = idx; /* the track of events without a thread (GC) */
        c->any_thread = c->any_thread || !cpu;
        if (!cpu && !c->main_set && !strcmp(name, "main")) {
            fx_profile_set_main_thread(c->p, idx);
            c->main_set = true;
        }
    }
    *out = idx;
    return fx_jfr_map_put(&c->cache, cpu ? C_CTHREAD : C_THREAD, (uint64_t)ref->i, idx);
}

static uint8_t frame_sub(struct conv *c, const struct fx_jfr_value *ref, struct fx_errbuf *eb)
{
    uint64_t v64;
    if (fx_jfr_map_get(&c->cache, C_FTYPE, (uint64_t)ref->i, &v64))
        return (uint8_t)v64;
    struct fx_jfr_value v[16];
    uint8_t sub = FX_JAVA_OTHER; /* "JIT compiled": JFR does not say which compiler */
    if (fx_jfr_profile_deref(c, ref, v, c->l.ft_desc, eb) == FX_OK &&
        fx_jfr_string(c->r, &v[c->l.ft_desc], c->buf2, STR_CAP, NULL) == FX_OK) {
        if (!strcmp(c->buf2, "Interpreted"))
            sub = FX_JAVA_INTERPRETED;
        else if (!strcmp(c->buf2, "Inlined"))
            sub = FX_JAVA_INLINED;
        else if (!strcmp(c->buf2, "Native"))
            sub = FX_JAVA_NATIVE_METHOD;
    }
    fx_jfr_map_put(&c->cache, C_FTYPE, (uint64_t)ref->i, sub);
    return sub;
}

/* "pkg.Class.method" of a Method reference. */
static int func_of(struct conv *c, const struct fx_jfr_value *ref, fx_func_id *out,
                   struct fx_errbuf *eb)
{
    uint64_t v64;
    if (fx_jfr_map_get(&c->cache, C_METHOD, (uint64_t)ref->i, &v64)) {
        *out = (fx_func_id){(uint32_t)v64};
        return FX_OK;
    }
    const struct layout *l = &c->l;
    struct fx_jfr_value m[16], k[16];
    char cls[STR_CAP] = "[unknown class]", meth[STR_CAP] = "[unknown method]";
    if (fx_jfr_profile_deref(c, ref, m, l->m_type > l->m_name ? l->m_type : l->m_name, eb) ==
        FX_OK) {
        if (fx_jfr_profile_deref(c, &m[l->m_type], k, l->c_name, eb) == FX_OK)
            fx_jfr_profile_symbol(c, &k[l->c_name], cls, eb);
        fx_jfr_profile_symbol(c, &m[l->m_name], meth, eb);
    }
    for (char *s = cls; *s; s++)
        if (*s == '/')
            *s = '.';
    snprintf(c->buf, STR_CAP, "%s.%s", cls, meth);
    fx_str_id name;
    int rc = fx_profile_cstring(c->p, c->buf, &name);
    if (rc != FX_OK)
        return rc;
    struct fx_func_key fk = {.name = name,
                             .resource = FX_STR_NONE,
                             .source = FX_STR_NONE,
                             .line = -1,
                             .is_java = true};
    rc = fx_profile_func(c->p, &fk, out);
    if (rc == FX_OK)
        rc = fx_jfr_map_put(&c->cache, C_METHOD, (uint64_t)ref->i, out->i);
    return rc;
}

static int label_frame(struct fx_profile *p, const char *label, uint8_t cat, uint8_t sub,
                       fx_frame_id *out)
{
    fx_str_id name;
    fx_func_id f;
    int rc = fx_profile_cstring(p, label, &name);
    struct fx_func_key k = {
            .name = name, .resource = FX_STR_NONE, .source = FX_STR_NONE, .line = -1};
    if (rc == FX_OK)
        rc = fx_profile_func(p, &k, &f);
    struct fx_frame_key fk = {.func = f, .line = -1, .category = cat, .subcategory = sub};
    return rc == FX_OK ? fx_profile_frame(p, &fk, out) : rc;
}

/* The frames of a StackTrace, root first into c->frames; *n their count. */
static int stack_frames(struct conv *c, const struct fx_jfr_value *ref, size_t *n,
                        struct fx_errbuf *eb)
{
    const struct layout *l = &c->l;
    struct fx_jfr_value st[16];
    *n = 0;
    int need = l->st_frames > l->st_truncated ? l->st_frames : l->st_truncated;
    int rc = fx_jfr_profile_deref(c, ref, st, need, eb);
    if (rc != FX_OK || l->st_frames < 0 || st[l->st_frames].kind != FX_JFR_ARRAY)
        return FX_ENOTFOUND;
    const struct fx_jfr_value *arr = &st[l->st_frames];
    size_t total = (size_t)arr->i + 1;
    if (fx_grow(&c->frames, &c->cap_frames, 0, total, sizeof *c->frames, 64))
        return FX_ENOMEM;
    if (l->st_truncated >= 0 && st[l->st_truncated].i) {
        c->truncated++;
        if ((rc = label_frame(c->p, TRUNCATED_ROOT, FX_CAT_OTHER, 0, &c->frames[0])) != FX_OK)
            return rc;
        *n = 1;
    }
    /* JFR lists the leaf first: fill from the end so the root comes first */
    size_t at = *n + (size_t)arr->i;
    const uint8_t *cur = NULL;
    uint32_t idx;
    struct fx_jfr_value e, fr[16];
    while ((rc = fx_jfr_array_next(c->r, arr, &cur, &idx, &e, eb)) == 1) {
        struct fx_jfr_obj o;
        if (fx_jfr_deref(c->r, &e, &o) != FX_OK || fx_jfr_field_count(c->r, o.cls) > 16 ||
            fx_jfr_fields(c->r, &o, fr, fx_jfr_field_count(c->r, o.cls), eb) != FX_OK ||
            l->f_method < 0)
            return FX_EINVAL;
        struct fx_frame_key fk = {.line = -1, .category = FX_CAT_JAVA};
        if ((rc = func_of(c, &fr[l->f_method], &fk.func, eb)) != FX_OK)
            return rc;
        if (l->f_line >= 0 && fr[l->f_line].i > 0)
            fk.line = (int32_t)fr[l->f_line].i;
        if (l->f_type >= 0)
            fk.subcategory = frame_sub(c, &fr[l->f_type], eb);
        if ((rc = fx_profile_frame(c->p, &fk, &c->frames[--at])) != FX_OK)
            return rc;
    }
    if (rc < 0)
        return rc;
    *n += (size_t)arr->i;
    return FX_OK;
}

int fx_jfr_profile_stack(struct conv *c, const struct fx_jfr_value *ref, bool native,
                         fx_stack_id *out, struct fx_errbuf *eb)
{
    uint64_t v64;
    uint32_t ns = native ? C_NSTACK : C_STACK;
    if (ref->kind == FX_JFR_REF && fx_jfr_map_get(&c->cache, ns, (uint64_t)ref->i, &v64)) {
        *out = (fx_stack_id){(uint32_t)v64};
        return FX_OK;
    }
    size_t n = 0;
    int rc = ref->kind == FX_JFR_REF ? stack_frames(c, ref, &n, eb) : FX_ENOTFOUND;
    if (rc == FX_ENOTFOUND || (rc == FX_OK && n == 0)) {
        c->no_stack++;
        rc = fx_profile_label_stack(c->p, NO_STACK, FX_CAT_OTHER, out);
        n = 0;
    } else if (rc != FX_OK) {
        return rc;
    } else {
        fx_stack_id s = FX_STACK_NONE;
        for (size_t i = 0; i < n && rc == FX_OK; i++)
            rc = fx_profile_stack(c->p, s, c->frames[i], &s);
        *out = s;
    }
    if (rc == FX_OK && native) {
        fx_frame_id leaf;
        rc = label_frame(c->p, NATIVE_LEAF, FX_CAT_IDLE, FX_IDLE_NATIVE, &leaf);
        if (rc == FX_OK)
            rc = fx_profile_stack(c->p, *out, leaf, out);
    }
    if (rc == FX_OK && ref->kind == FX_JFR_REF)
        rc = fx_jfr_map_put(&c->cache, ns, (uint64_t)ref->i, out->i);
    return rc;
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
    uint32_t th;
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
    c->rows[c->n_rows++] = (struct srow){t, 0, th, st.i};
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
    int rc = label_frame(c->p, name, FX_CAT_ALLOC, 0, out);
    return rc == FX_OK ? fx_jfr_map_put(&c->cache, C_CLASS, (uint64_t)ref->i, out->i) : rc;
}

static int alloc_sample(struct conv *c, const struct fx_jfr_obj *ev, struct fx_errbuf *eb)
{
    const struct layout *l = &c->l;
    uint32_t n = fx_jfr_field_count(c->r, ev->cls);
    struct fx_jfr_value v[16];
    const struct ev_fields *f = &l->alloc;
    if (f->time < 0 || f->thread < 0 || f->stack < 0 || l->a_class < 0 || l->a_weight < 0 ||
        n > 16) {
        c->alloc_lost++; /* a layout this converter does not know */
        return FX_OK;
    }
    int rc = fx_jfr_fields(c->r, ev, v, n, eb);
    uint32_t th;
    fx_stack_id st;
    fx_frame_id cf;
    if (rc == FX_OK)
        rc = fx_jfr_profile_thread(c, &v[f->thread], false, &th, eb);
    if (rc == FX_OK)
        rc = fx_jfr_profile_stack(c, &v[f->stack], false, &st, eb);
    if (rc == FX_OK)
        rc = class_frame(c, &v[l->a_class], &cf, eb);
    if (rc == FX_OK)
        rc = fx_profile_stack(c->p, st, cf, &st);
    if (rc != FX_OK)
        return rc;
    if (v[l->a_weight].i <= 0) {
        c->alloc_lost++;
        return FX_OK;
    }
    if (fx_grow(&c->rows, &c->cap_rows, c->n_rows, 1, sizeof *c->rows, 1024))
        return FX_ENOMEM;
    int64_t t = fx_jfr_ticks_to_ns(c->r, v[f->time].i);
    c->rows[c->n_rows++] = (struct srow){t, v[l->a_weight].i, th, st.i};
    c->allocs++;
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
    qsort(c->rows, c->n_rows, sizeof *c->rows, by_time);
    for (size_t i = 0; i < c->n_rows; i++) {
        const struct srow *s = &c->rows[i];
        int rc = s->bytes
                         ? fx_profile_alloc(c->p, s->thread, s->t, (fx_stack_id){s->stack},
                                            s->bytes, ++c->address)
                         : fx_profile_sample(c->p, s->thread, s->t, (fx_stack_id){s->stack}, -1, 1);
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
    c->setting_cls = fx_jfr_class_find(c->r, "jdk.ActiveSetting");
    fx_jfr_markers_layout(c);
    fx_jfr_map_clear(&c->cache);
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
        else if (ev.cls == c->l.alloc.cls)
            rc = alloc_sample(c, &ev, eb);
        else if (ev.cls == c->setting_cls)
            setting(c, &ev, eb);
        else
            rc = fx_jfr_markers_event(c, &ev, eb);
        if (rc != 1 && rc != FX_OK)
            return rc;
    }
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
            {"markers (park, monitor enter and wait, sleep, GC)", c->markers, FX_EXTRA_ALWAYS},
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
    int rc = fx_jfr_open(path, &c.r, eb);
    if (rc != FX_OK)
        return rc;
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
    fx_free(c.types), fx_free(c.rows), fx_free(c.per_class), fx_free(c.frames);
    fx_jfr_map_destroy(&c.cache);
    fx_jfr_map_destroy(&c.threads);
    fx_jfr_close(c.r);
    return rc;
}
