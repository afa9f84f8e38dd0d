/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof convert --to otlp: a processed profile as one OTLP ExportProfilesServiceRequest
 * (core/writer/otlp.c), one profile per view, each of one sample type:
 *   cpu (or wall)/nanoseconds  the threads' samples, weight x interval ("[idle]" left out
 *                              unless --idle);
 *   delay/nanoseconds          the "NAME: lock waits" tracks (weightType tracing-ms), the wait;
 *   alloc_space/bytes          allocation rows (nativeAllocations weight > 0, or samples of
 *                              weightType bytes), the estimated bytes;
 *   inuse_space/bytes          allocation rows without a free of their address in the file.
 * Every observation keeps its timestamp; samples of one thread and stack are one Sample with
 * the attributes thread.name and thread.id; samples in a trace span (fxagent.TraceContext,
 * issue 33) are a Sample of their own, with the span's Link and its labels as attributes. The
 * resource: service.name (meta.product's main class or jar unless given), host.name (meta.extra JVM
 * "host" when the agent wrote it), process.pid, process.runtime.name/version/description
 * (meta.extra JVM). Which view a thread feeds is view_of(); issue 30's per-view pprof split the
 * same way (docs/FLEET.md).
 * Tests: it.fxprof_convert_otlp, it.push, it.trace. */
#include "fx_convert.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_otlp.h"
#include "fx_sink.h"

struct otlp_opts {
    bool idle;               /* keep the [idle] samples */
    const char *service;     /* service.name; NULL: the profile's main class or jar */
    const char *(*attrs)[2]; /* more resource attributes, key and value */
    size_t nattrs;
};

struct otlp_result {
    unsigned profiles;                  /* views written */
    double observations[FX_VIEW_COUNT]; /* per view */
    double idle;                        /* [idle] samples left out */
};

struct obs {
    int32_t stack; /* the JSON stack, then the OTLP one */
    int32_t span;  /* issue 33: its trace span on the track (fx_pfile_spans), -1: none */
    int64_t value;
    uint64_t ts;
};

struct otlp_state {
    const cJSON *root;
    const struct otlp_opts *opts;
    struct fx_otlp *o;
    struct fx_pfile_tables t;
    struct fx_pfile_spans spans; /* the track's (issue 33) */
    const void *mapped[5];       /* the table set stack_map belongs to */
    int32_t *stack_map;          /* JSON stack -> OTLP stack index, 0: not yet */
    int32_t no_stack;            /* the OTLP stack of "[no stack]" */
    int32_t *locs;
    uint32_t locscap;
    struct obs *obs;
    size_t nobs, obscap;
    int64_t *values;
    uint64_t *ts;
    size_t valcap;
    double interval_ns;
    int64_t start_ns; /* meta.startTime */
    struct otlp_result *res;
    struct fx_errbuf *eb;
};

static const cJSON *item(const cJSON *o, const char *key)
{
    return o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

static double meta_num(const cJSON *root, const char *key, double dflt)
{
    const cJSON *v = item(item(root, "meta"), key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* ---- stacks ---- */

static int map_tables(struct otlp_state *s)
{
    if (s->stack_map && !memcmp(s->mapped, s->t.src, sizeof s->mapped))
        return FX_OK;
    fx_free(s->stack_map);
    s->stack_map = fx_calloc(s->t.nstacks + 1, sizeof *s->stack_map);
    memcpy(s->mapped, s->t.src, sizeof s->mapped);
    if (s->locscap < s->t.nstacks + 1) {
        fx_free(s->locs);
        s->locs = fx_calloc(s->t.nstacks + 1, sizeof *s->locs);
        s->locscap = s->locs ? s->t.nstacks + 1 : 0;
    }
    return s->stack_map && s->locs ? FX_OK : FX_ENOMEM;
}

static int location(struct otlp_state *s, int32_t frame, int32_t *index)
{
    const struct fx_pfile_tables *t = &s->t;
    int32_t f = t->frame_func[frame], fn, file = t->func_file[f];
    int rc = fx_otlp_function(s->o, t->strings[t->func_name[f]],
                              file >= 0 ? t->strings[file] : NULL, t->func_line[f], &fn);
    return rc == FX_OK ? fx_otlp_location(s->o, fn, t->frame_line[frame], index) : rc;
}

/* The OTLP stack of JSON stack st (-1: "[no stack]"), leaf first. */
static int stack_index(struct otlp_state *s, int32_t st, int32_t *index)
{
    if (st < 0) {
        *index = s->no_stack;
        return FX_OK;
    }
    if (s->stack_map[st]) {
        *index = s->stack_map[st];
        return FX_OK;
    }
    uint32_t n = 0;
    int rc = FX_OK;
    for (int32_t x = st; rc == FX_OK && x >= 0 && n < s->locscap; x = s->t.stack_prefix[x])
        rc = location(s, s->t.stack_frame[x], &s->locs[n++]);
    if (rc == FX_OK)
        rc = fx_otlp_stack(s->o, s->locs, n, index);
    if (rc == FX_OK)
        s->stack_map[st] = *index;
    return rc;
}

/* ---- observations ---- */

static int add_obs(struct otlp_state *s, int32_t stack, int64_t value, double ms, int32_t span)
{
    if (s->nobs == s->obscap) {
        size_t cap = s->obscap ? s->obscap * 2 : 1024;
        struct obs *n = fx_reallocarray(s->obs, cap, sizeof *n);
        if (!n)
            return FX_ENOMEM;
        s->obs = n;
        s->obscap = cap;
    }
    int64_t ts = s->start_ns + llround(ms * 1e6);
    s->obs[s->nobs++] =
            (struct obs){.stack = stack, .span = span, .value = value, .ts = (uint64_t)ts};
    return FX_OK;
}

static int by_stack_time(const void *x, const void *y)
{
    const struct obs *a = x, *b = y;
    if (a->stack != b->stack)
        return a->stack < b->stack ? -1 : 1;
    if (a->span != b->span)
        return a->span < b->span ? -1 : 1;
    return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static double weight(const struct fx_pfile_samples *sm, uint32_t i)
{
    return sm->weight ? sm->weight[i] : 1;
}

static double when(const struct fx_pfile_samples *sm, uint32_t i)
{
    return sm->time ? sm->time[i] : 0;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* Allocation rows (v = FX_VIEW_ALLOC) or those still alive (FX_VIEW_LIVE: no free of their
 * address). */
static int allocation_obs(struct otlp_state *s, const struct fx_pfile_samples *na,
                          enum fx_pfile_view v)
{
    double *freed = NULL;
    size_t nf = 0;
    if (v == FX_VIEW_LIVE) {
        if (!na->address)
            return FX_OK; /* without addresses nothing tells the living apart */
        freed = fx_calloc(na->n + 1, sizeof *freed);
        if (!freed)
            return FX_ENOMEM;
        for (uint32_t i = 0; i < na->n; i++)
            if (weight(na, i) < 0)
                freed[nf++] = na->address[i];
        qsort(freed, nf, sizeof *freed, cmp_double);
    }
    int rc = FX_OK;
    for (uint32_t i = 0; rc == FX_OK && i < na->n; i++) {
        if (weight(na, i) <= 0 ||
            (freed && bsearch(&na->address[i], freed, nf, sizeof *freed, cmp_double)))
            continue;
        rc = add_obs(s, na->stack[i], llround(weight(na, i)), when(na, i), -1);
    }
    fx_free(freed);
    return rc;
}

/* The view a track's samples feed: fxprof's classification (fx_pfile_track_view), which the
 * pprof output and summary use too; FX_VIEW_COUNT: none. Idle waits (a thread parked waiting for
 * work, lock=, locks_idle.c) are no view of OTLP's: they are not contention. */
static enum fx_pfile_view view_of(const cJSON *th)
{
    enum fx_pfile_view v = fx_pfile_track_view(th);
    return v == FX_VIEW_IDLEWAIT ? FX_VIEW_COUNT : v;
}

/* Collects the thread's observations of view v into s->obs. */
static int thread_obs(struct otlp_state *s, const cJSON *th, enum fx_pfile_view v,
                      struct fx_errbuf *eb)
{
    struct fx_pfile_samples sm, na = {0};
    int rc = fx_pfile_samples(th, s->t.nstacks, &sm, eb);
    fx_pfile_spans_destroy(&s->spans);
    if (rc == FX_OK && v == FX_VIEW_CPU && view_of(th) == v)
        rc = fx_pfile_spans(th, &s->spans, eb);
    if (rc == FX_OK && (v == FX_VIEW_ALLOC || v == FX_VIEW_LIVE))
        rc = fx_pfile_alloc_rows(th, s->t.nstacks, &na, eb);
    s->nobs = 0;
    for (uint32_t i = 0; rc == FX_OK && v != FX_VIEW_LIVE && view_of(th) == v && i < sm.n; i++) {
        double w = weight(&sm, i);
        if (v == FX_VIEW_CPU && !s->opts->idle && fx_pfile_is_idle(&s->t, sm.stack[i])) {
            s->res->idle += w;
            continue;
        }
        double scale = v == FX_VIEW_CPU ? s->interval_ns : v == FX_VIEW_LOCK ? 1e6 : 1;
        int32_t span = s->spans.n && sm.time ? fx_pfile_span_at(&s->spans, sm.time[i]) : -1;
        rc = add_obs(s, sm.stack[i], llround(w * scale), when(&sm, i), span);
    }
    if (rc == FX_OK && na.n)
        rc = allocation_obs(s, &na, v);
    fx_pfile_samples_destroy(&sm);
    fx_pfile_samples_destroy(&na);
    return rc;
}

/* "NAME (tid N)" and "NAME: lock waits (tid N)" are the writer's track names of thread NAME. */
static void thread_name(const cJSON *th, char *out, size_t cap)
{
    const cJSON *name = item(th, "name");
    snprintf(out, cap, "%s", cJSON_IsString(name) ? name->valuestring : "");
    char *tid = strstr(out, " (tid ");
    size_t len = strlen(out);
    if (tid && out[len - 1] == ')')
        *tid = '\0';
    len = strlen(out);
    static const char waits[] = ": lock waits";
    if (len >= sizeof waits - 1 && !strcmp(out + len - (sizeof waits - 1), waits))
        out[len - (sizeof waits - 1)] = '\0';
}

static int64_t json_int(const cJSON *v)
{
    if (cJSON_IsNumber(v))
        return (int64_t)v->valuedouble;
    return cJSON_IsString(v) ? strtoll(v->valuestring, NULL, 10) : 0;
}

static int hex_bytes(const char *hex, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned b;
        if (!hex || sscanf(hex + 2 * i, "%2x", &b) != 1)
            return FX_EINVAL;
        out[i] = (uint8_t)b;
    }
    return FX_OK;
}

/* Issue 33: a span's link (trace and span id) and its labels as attributes after attrs[0..1]. */
static int span_of(struct otlp_state *s, int32_t span, int32_t *attrs, size_t *nattrs,
                   int32_t *link)
{
    *nattrs = 2, *link = 0;
    if (span < 0)
        return FX_OK;
    const struct fx_pfile_span *sp = &s->spans.s[span];
    uint8_t trace[16], id[8];
    int rc = hex_bytes(sp->trace_id, trace, 16);
    if (rc == FX_OK && strlen(sp->trace_id) == 32 && strlen(sp->span_id) == 16)
        rc = hex_bytes(sp->span_id, id, 8);
    else
        rc = FX_EINVAL;
    if (rc == FX_OK)
        rc = fx_otlp_link(s->o, trace, id, link);
    for (int i = 0; rc == FX_OK && i < FX_PFILE_SPAN_LABELS; i++) {
        const char *eq = sp->label[i] ? strchr(sp->label[i], '=') : NULL;
        char key[256];
        if (!eq)
            continue;
        snprintf(key, sizeof key, "%.*s", (int)(eq - sp->label[i]), sp->label[i]);
        rc = fx_otlp_attr_str(s->o, key, eq + 1, &attrs[(*nattrs)++]);
    }
    return rc;
}

/* Emits the collected observations, one Sample per stack and trace span. */
static int emit(struct otlp_state *s, const cJSON *th, enum fx_pfile_view v)
{
    char name[256];
    int32_t attrs[2 + FX_PFILE_SPAN_LABELS], link;
    size_t nattrs;
    thread_name(th, name, sizeof name);
    int rc = fx_otlp_attr_str(s->o, "thread.name", name, &attrs[0]);
    if (rc == FX_OK)
        rc = fx_otlp_attr_int(s->o, "thread.id", json_int(item(th, "tid")), &attrs[1]);
    if (rc == FX_OK && s->valcap < s->nobs) {
        fx_free(s->values), fx_free(s->ts);
        s->values = fx_calloc(s->nobs, sizeof *s->values);
        s->ts = fx_calloc(s->nobs, sizeof *s->ts);
        s->valcap = s->values && s->ts ? s->nobs : 0;
        rc = s->valcap ? FX_OK : FX_ENOMEM;
    }
    /* JSON stacks that differ only in what OTLP does not keep are one OTLP stack, and a
     * Sample's identity is its stack and attributes: group by the OTLP stack. */
    for (size_t i = 0; rc == FX_OK && i < s->nobs; i++)
        rc = stack_index(s, s->obs[i].stack, &s->obs[i].stack);
    if (rc == FX_OK)
        qsort(s->obs, s->nobs, sizeof *s->obs, by_stack_time);
    for (size_t i = 0, j; rc == FX_OK && i < s->nobs; i = j) {
        for (j = i;
             j < s->nobs && s->obs[j].stack == s->obs[i].stack && s->obs[j].span == s->obs[i].span;
             j++) {
            s->values[j - i] = s->obs[j].value;
            s->ts[j - i] = s->obs[j].ts;
            s->res->observations[v]++;
        }
        rc = span_of(s, s->obs[i].span, attrs, &nattrs, &link);
        if (rc == FX_EINVAL)
            fx_errbuf_set(s->eb, "profile: a TraceSpan marker's ids are not 32 and 16 hex digits");
        if (rc == FX_OK)
            rc = fx_otlp_sample_linked(s->o, s->obs[i].stack, attrs, nattrs, link, s->values, s->ts,
                                       j - i);
    }
    return rc;
}

static int view_profile(struct otlp_state *s, enum fx_pfile_view v, struct fx_errbuf *eb)
{
    static const char *const types[FX_VIEW_COUNT][2] = {
            [FX_VIEW_CPU] = {"cpu", "nanoseconds"},
            [FX_VIEW_LOCK] = {"delay", "nanoseconds"},
            [FX_VIEW_IDLEWAIT] = {"idle_delay", "nanoseconds"}, /* never emitted: view_of */
            [FX_VIEW_ALLOC] = {"alloc_space", "bytes"},
            [FX_VIEW_LIVE] = {"inuse_space", "bytes"}};
    bool wall = !strcmp(fx_pfile_mode(s->root), "wall");
    double t0 = meta_num(s->root, "profilingStartTime", 0);
    struct fx_otlp_profile p = {
            .type = v == FX_VIEW_CPU && wall ? "wall" : types[v][0],
            .unit = types[v][1],
            .time_unix_nano = (uint64_t)(s->start_ns + llround(t0 * 1e6)),
            .duration_nano =
                    (uint64_t)llround((meta_num(s->root, "profilingEndTime", t0) - t0) * 1e6),
    };
    if (v == FX_VIEW_CPU) {
        p.period_type = p.type, p.period_unit = p.unit;
        p.period = llround(s->interval_ns);
    }
    int rc = fx_otlp_profile_begin(s->o, &p);
    const cJSON *th;
    cJSON_ArrayForEach(th, item(s->root, "threads"))
    {
        if (rc == FX_OK)
            rc = fx_pfile_tables(s->root, th, &s->t, eb);
        if (rc == FX_OK)
            rc = map_tables(s);
        if (rc == FX_OK)
            rc = thread_obs(s, th, v, eb);
        if (rc == FX_OK && s->nobs)
            rc = emit(s, th, v);
    }
    return rc == FX_OK ? fx_otlp_profile_end(s->o, NULL, 0) : rc;
}

/* Which views the file has: the CPU one always, the others when a thread carries them. */
static void views_present(struct otlp_state *s, bool has[FX_VIEW_COUNT])
{
    const cJSON *th;
    has[FX_VIEW_CPU] = true;
    cJSON_ArrayForEach(th, item(s->root, "threads"))
    {
        enum fx_pfile_view v = view_of(th);
        has[FX_VIEW_LOCK] |= v == FX_VIEW_LOCK;
        has[FX_VIEW_ALLOC] |= v == FX_VIEW_ALLOC || item(th, "nativeAllocations");
        has[FX_VIEW_LIVE] |= item(th, "nativeAllocations") != NULL;
    }
}

/* ---- the resource ---- */

static int resource(struct otlp_state *s)
{
    const cJSON *product = item(item(s->root, "meta"), "product");
    const char *svc = s->opts->service;
    if (!svc && cJSON_IsString(product))
        svc = !strncmp(product->valuestring, "fxagent: ", 9) ? product->valuestring + 9
                                                             : product->valuestring;
    int rc = fx_otlp_resource_str(s->o, "service.name", svc ? svc : "unknown_service:java");
    const char *host = fx_pfile_extra(s->root, "JVM", "host");
    if (rc == FX_OK && host)
        rc = fx_otlp_resource_str(s->o, "host.name", host);
    const cJSON *th = item(s->root, "threads") ? item(s->root, "threads")->child : NULL;
    if (rc == FX_OK && th && json_int(item(th, "pid")) > 0)
        rc = fx_otlp_resource_int(s->o, "process.pid", json_int(item(th, "pid")));
    const char *vm = fx_pfile_extra(s->root, "JVM", "VM");
    const char *version = fx_pfile_extra(s->root, "JVM", "VM version");
    const char *vendor = fx_pfile_extra(s->root, "JVM", "VM vendor");
    if (rc == FX_OK && vm)
        rc = fx_otlp_resource_str(s->o, "process.runtime.name", vm);
    if (rc == FX_OK && version)
        rc = fx_otlp_resource_str(s->o, "process.runtime.version", version);
    if (rc == FX_OK && vm && version && vendor) {
        char d[512];
        snprintf(d, sizeof d, "%s %s %s", vendor, vm, version);
        rc = fx_otlp_resource_str(s->o, "process.runtime.description", d);
    }
    for (size_t i = 0; rc == FX_OK && i < s->opts->nattrs; i++)
        rc = fx_otlp_resource_str(s->o, s->opts->attrs[i][0], s->opts->attrs[i][1]);
    return rc;
}

static int otlp_request(const cJSON *root, const struct otlp_opts *opts, struct fx_sink out,
                        struct otlp_result *res, struct fx_errbuf *eb)
{
    struct otlp_state s = {.root = root, .opts = opts, .res = res, .eb = eb};
    memset(res, 0, sizeof *res);
    s.interval_ns = meta_num(root, "interval", 10) * 1e6;
    /* whole ms and the fraction apart: epoch ns in a double would round to 256 ns */
    double start_ms = meta_num(root, "startTime", 0), whole = floor(start_ms);
    s.start_ns = (int64_t)whole * 1000000 + llround((start_ms - whole) * 1e6);
    s.o = fx_otlp_new();
    int rc = s.o ? resource(&s) : FX_ENOMEM;
    int32_t fn, loc;
    if (rc == FX_OK)
        rc = fx_otlp_function(s.o, "[no stack]", NULL, 0, &fn);
    if (rc == FX_OK)
        rc = fx_otlp_location(s.o, fn, 0, &loc);
    if (rc == FX_OK)
        rc = fx_otlp_stack(s.o, &loc, 1, &s.no_stack);
    bool has[FX_VIEW_COUNT] = {false};
    views_present(&s, has);
    for (enum fx_pfile_view v = FX_VIEW_CPU; rc == FX_OK && v < FX_VIEW_COUNT; v++) {
        if (has[v]) {
            rc = view_profile(&s, v, eb);
            res->profiles++;
        }
    }
    if (rc == FX_OK)
        rc = fx_otlp_finish(s.o, "fxagent", FXAGENT_VERSION, out);
    if (rc == FX_ENOMEM)
        fx_errbuf_set(eb, "out of memory");
    else if (rc != FX_OK && !eb->msg[0])
        fx_errbuf_set(eb, "encoding the OTLP request failed: %s", fx_strerror(rc));
    fx_otlp_free(s.o);
    fx_pfile_tables_destroy(&s.t);
    fx_pfile_spans_destroy(&s.spans);
    fx_free(s.stack_map), fx_free(s.locs), fx_free(s.obs), fx_free(s.values), fx_free(s.ts);
    return rc;
}

/* ctx NULL: a sink that only counts (the push's pprof pass) */
static int file_write(void *ctx, const void *buf, size_t len)
{
    if (!ctx)
        return FX_OK;
    return fwrite(buf, 1, len, ctx) == len ? FX_OK : FX_EIO;
}

int fx_convert_otlp(const cJSON *root, bool keep_idle, FILE *f, double *idle_out,
                    struct fx_errbuf *eb)
{
    struct otlp_opts opts = {.idle = keep_idle};
    struct otlp_result res;
    int rc = otlp_request(root, &opts, (struct fx_sink){.write = file_write, .ctx = f}, &res, eb);
    *idle_out = res.idle;
    return rc;
}

/* ---- the agent's push (fx_convert.h) ---- */

int fx_convert_for_push(const char *path, bool otlp, const char *service, const char *labels,
                        FILE *f, struct fx_convert_period *period, struct fx_errbuf *eb)
{
    cJSON *root;
    int rc = fx_pfile_load(path, &root, eb);
    if (rc != FX_OK)
        return rc;
    double start = meta_num(root, "startTime", 0), t0 = meta_num(root, "profilingStartTime", 0);
    period->from_s = (int64_t)floor((start + t0) / 1000);
    period->until_s = (int64_t)ceil((start + meta_num(root, "profilingEndTime", t0)) / 1000);
    const cJSON *product = item(item(root, "meta"), "product");
    const char *main = cJSON_IsString(product) ? product->valuestring : "java";
    snprintf(period->service, sizeof period->service, "%s",
             service                          ? service
             : !strncmp(main, "fxagent: ", 9) ? main + 9
                                              : main);
    char *copy = labels ? strdup(labels) : NULL;
    const char *attrs[16][2];
    size_t n = 0;
    for (char *save = NULL, *kv = copy ? strtok_r(copy, ";", &save) : NULL; kv && n < 16;
         kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '=');
        if (eq) {
            *eq = '\0';
            attrs[n][0] = kv, attrs[n][1] = eq + 1, n++;
        }
    }
    struct otlp_opts opts = {.service = service, .attrs = attrs, .nattrs = n};
    struct otlp_result res = {0};
    /* the OTLP pass also counts the observations; pprof's file gets the same count from it */
    rc = otlp_request(root, &opts, (struct fx_sink){.write = file_write, .ctx = otlp ? f : NULL},
                      &res, eb);
    period->samples = res.observations[FX_VIEW_CPU];
    if (rc == FX_OK && !otlp)
        rc = fx_convert_pprof(root, false, f, &res.idle, eb);
    free(copy);
    cJSON_Delete(root);
    return rc;
}
