/* SPDX-License-Identifier: Apache-2.0 */
/* fxcheck: threads, their samples and markers, and counters (PROFILE-FORMAT.md §6–§8, §10, §11).
 * Times are rebuilt the way the front-end does (a running double sum over timeDeltas) before
 * their order is checked, since that is what binary searches and ranges will see. */
#include "fxcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool has(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key) != NULL;
}

double *ck_times(struct ck *c, const char *path, const cJSON *table, long n)
{
    bool abs = has(table, "time"), deltas = has(table, "timeDeltas");
    if (abs == deltas) {
        ck_fail(c, path, abs ? "type" : "missing", "needs exactly one of 'time' and 'timeDeltas'");
        return NULL;
    }
    const char *key = abs ? "time" : "timeDeltas";
    struct ck_col col;
    if (!ck_col_read(c, path, table, key, &col))
        return NULL;
    char cpath[160];
    snprintf(cpath, sizeof cpath, "%s.%s", path, key);
    double *t = NULL;
    if (n >= 0 && col.n != n)
        ck_fail(c, cpath, "column-length", "%ld elements, but length is %ld", col.n, n);
    else if (n >= 0) {
        t = ck_xcalloc((size_t)n, sizeof *t);
        struct ck_colrep r = {c, cpath, 0};
        double sum = 0;
        for (long i = 0; i < n; i++) {
            if (col.cell[i] != CELL_NUM)
                ck_elem_fail(&r, i, "type", "a time must be a number");
            sum = abs ? col.v[i] : sum + col.v[i];
            t[i] = sum;
        }
        ck_colrep_end(&r);
        if (r.bad) {
            free(t);
            t = NULL;
        }
    }
    ck_col_free(&col);
    return t;
}

/* Ranges come from the first and last sample, selections binary-search (pitfall 11). */
static void check_sorted(struct ck *c, const char *path, const double *t, long n)
{
    char tpath[160];
    snprintf(tpath, sizeof tpath, "%s.time", path);
    struct ck_colrep r = {c, tpath, 0};
    for (long i = 1; i < n; i++)
        if (t[i] < t[i - 1])
            ck_elem_fail(&r, i, "time-order", "time %.6f ms is before the previous %.6f ms", t[i],
                         t[i - 1]);
    ck_colrep_end(&r);
}

static void check_weight(struct ck *c, const char *path, const cJSON *s, long n)
{
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(s, "weight");
    if (!w)
        ck_fail(c, path, "missing", "'weight' is required (null when every sample weighs 1)");
    else if (cJSON_IsArray(w) && n >= 0 && cJSON_GetArraySize(w) != n)
        ck_fail(c, path, "weight", "'weight' has %d elements, but length is %ld",
                cJSON_GetArraySize(w), n);
    else if (!cJSON_IsNull(w) && !cJSON_IsArray(w))
        ck_fail(c, path, "weight", "'weight' must be null or an array of the samples' length");
    const cJSON *wt = cJSON_GetObjectItemCaseSensitive(s, "weightType");
    static const char *const types[] = {"samples", "tracing-ms", "bytes"};
    bool ok = false;
    for (size_t k = 0; cJSON_IsString(wt) && k < 3; k++)
        ok |= !strcmp(wt->valuestring, types[k]);
    if (!ok)
        ck_fail(c, path, wt ? "value" : "missing",
                "'weightType' must be \"samples\", \"tracing-ms\" or \"bytes\"");
}

/* Same length as the samples, else NaN CPU percentages; units needed, else ignored (§11). */
static void check_cpu_delta(struct ck *c, const char *path, const cJSON *s, long n)
{
    if (!has(s, "threadCPUDelta"))
        return;
    char cpath[160];
    snprintf(cpath, sizeof cpath, "%s.threadCPUDelta", path);
    if (!has(c->meta, "sampleUnits"))
        ck_fail(c, cpath, "cpu-delta", "present but meta.sampleUnits is missing, so it is ignored");
    struct ck_col col;
    if (!ck_col_read(c, path, s, "threadCPUDelta", &col))
        return;
    if (n >= 0 && col.n != n)
        ck_fail(c, cpath, "cpu-delta", "%ld elements, but the samples' length is %ld", col.n, n);
    struct ck_colrep r = {c, cpath, 0};
    for (long i = 0; i < col.n; i++)
        if (col.cell[i] == CELL_NUM ? col.v[i] < 0 : col.cell[i] != CELL_NULL)
            ck_elem_fail(&r, i, "cpu-delta", "a delta must be a number >= 0 or null");
    ck_colrep_end(&r);
    ck_col_free(&col);
}

static void check_samples(struct ck *c, const char *tpath, const cJSON *s)
{
    char path[96];
    snprintf(path, sizeof path, "%s.samples", tpath);
    static const struct ck_colspec specs[] = {{"stack", K_IDX_NULL, T_STACK}};
    long n = ck_table(c, path, s, specs, 1, NULL);
    if (!cJSON_IsObject(s))
        return;
    double *t = ck_times(c, path, s, n);
    if (t)
        check_sorted(c, path, t, n);
    free(t);
    check_weight(c, path, s, n);
    check_cpu_delta(c, path, s, n);
}

enum field_kind {
    FIELD_INDEX,
    FIELD_TEXT,
    FIELD_NUMBER,
    FIELD_OTHER
};

static enum field_kind field_kind(const char *fmt)
{
    static const char *const index_fmts[] = {"unique-string", "flow-id", "terminating-flow-id"};
    static const char *const text_fmts[] = {"url", "file-path", "sanitized-string", "string"};
    static const char *const num_fmts[] = {
            "duration", "time",       "seconds", "milliseconds", "microseconds", "nanoseconds",
            "bytes",    "percentage", "integer", "decimal",      "hexadecimal"};
    for (size_t k = 0; k < sizeof index_fmts / sizeof *index_fmts; k++)
        if (!strcmp(fmt, index_fmts[k]))
            return FIELD_INDEX;
    for (size_t k = 0; k < sizeof text_fmts / sizeof *text_fmts; k++)
        if (!strcmp(fmt, text_fmts[k]))
            return FIELD_TEXT;
    for (size_t k = 0; k < sizeof num_fmts / sizeof *num_fmts; k++)
        if (!strcmp(fmt, num_fmts[k]))
            return FIELD_NUMBER;
    return FIELD_OTHER;
}

/* Text where an index is declared, or the reverse, renders wrongly (§10.2, pitfall 8). */
static void check_field_value(struct ck *c, struct ck_colrep *r, long i, const cJSON *field,
                              const cJSON *data)
{
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(field, "key");
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(field, "format");
    if (!cJSON_IsString(key) || !cJSON_IsString(fmt))
        return;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(data, key->valuestring);
    if (!v || cJSON_IsNull(v))
        return;
    switch (field_kind(fmt->valuestring)) {
    case FIELD_INDEX:
        if (!cJSON_IsNumber(v) || !ck_is_int(v->valuedouble) || v->valuedouble < 0 ||
            (c->n[T_STR] >= 0 && v->valuedouble >= (double)c->n[T_STR]))
            ck_elem_fail(r, i, "unique-string", "field '%s' (%s) must be a string index",
                         key->valuestring, fmt->valuestring);
        break;
    case FIELD_TEXT:
        if (!cJSON_IsString(v))
            ck_elem_fail(r, i, "value", "field '%s' (%s) must be text", key->valuestring,
                         fmt->valuestring);
        break;
    case FIELD_NUMBER:
        if (!cJSON_IsNumber(v))
            ck_elem_fail(r, i, "value", "field '%s' (%s) must be a number", key->valuestring,
                         fmt->valuestring);
        break;
    case FIELD_OTHER:
        break;
    }
}

/* The front-end reads data.cause as the marker's stack ({stack, time?, tid?}) whatever the
 * schema says: a string there made profiler-cli's `marker info` throw "index undefined not in
 * StringTable" (found with the GC schema's old `cause` field). */
static void check_cause(struct ck *c, struct ck_colrep *r, long i, const cJSON *data)
{
    const cJSON *cause = cJSON_GetObjectItemCaseSensitive(data, "cause");
    if (!cause || cJSON_IsNull(cause))
        return;
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(cause, "stack");
    if (!cJSON_IsObject(cause) || !cJSON_IsNumber(st))
        ck_elem_fail(r, i, "marker-cause",
                     "data.cause is the marker's stack and must be {stack: <stack index>}");
    else if (!ck_is_int(st->valuedouble) || st->valuedouble < 0 ||
             (c->n[T_STACK] >= 0 && st->valuedouble >= (double)c->n[T_STACK]))
        ck_elem_fail(r, i, "index-range", "data.cause.stack %g is not a stack index",
                     st->valuedouble);
}

static void check_marker_data(struct ck *c, struct ck_colrep *r, long i, const cJSON *data)
{
    if (cJSON_IsNull(data))
        return;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(data, "type");
    if (!cJSON_IsObject(data) || !cJSON_IsString(type)) {
        ck_elem_fail(r, i, "marker-schema", "data must be null or an object with a string 'type'");
        return;
    }
    if (ck_reserved_type(type->valuestring))
        ck_elem_fail(r, i, "reserved-type", "type '%s' is reserved by the front-end (§10.1)",
                     type->valuestring);
    const cJSON *schema = ck_schema_find(c, type->valuestring);
    if (!schema) {
        ck_elem_fail(r, i, "marker-schema", "type '%s' has no schema in meta.markerSchema",
                     type->valuestring);
        return;
    }
    const cJSON *fields = cJSON_GetObjectItemCaseSensitive(schema, "fields");
    if (cJSON_IsArray(fields))
        for (const cJSON *f = fields->child; f; f = f->next)
            check_field_value(c, r, i, f, data);
    check_cause(c, r, i, data);
}

/* Which times a phase reads (§10.1): instant and start read startTime, end reads endTime. */
static void check_phase(struct ck_colrep *r, long i, const struct ck_col *cols)
{
    const struct ck_col *start = &cols[1], *end = &cols[2], *phase = &cols[3];
    if (phase->cell[i] != CELL_NUM)
        return;
    double p = phase->v[i];
    if (!ck_is_int(p) || p < 0 || p > 3) {
        ck_elem_fail(r, i, "marker-phase", "phase %g is not 0..3", p);
        return;
    }
    bool s = start->cell[i] == CELL_NUM, e = end->cell[i] == CELL_NUM;
    if ((p == 0 || p == 2 || p == 1) && !s)
        ck_elem_fail(r, i, "marker-phase", "phase %g needs a startTime", p);
    if ((p == 3 || p == 1) && !e)
        ck_elem_fail(r, i, "marker-phase", "phase %g needs an endTime", p);
    if (p == 1 && s && e && end->v[i] < start->v[i])
        ck_elem_fail(r, i, "marker-phase", "interval ends (%g) before it starts (%g)", end->v[i],
                     start->v[i]);
}

static void check_markers(struct ck *c, const char *tpath, const cJSON *m)
{
    char path[96];
    snprintf(path, sizeof path, "%s.markers", tpath);
    static const struct ck_colspec specs[] = {
            {"name", K_IDX, T_STR},          {"startTime", K_NUM_NULL, T_NONE},
            {"endTime", K_NUM_NULL, T_NONE}, {"phase", K_UINT, T_NONE},
            {"category", K_IDX, T_CAT},
    };
    enum {
        N = sizeof specs / sizeof *specs
    };
    struct ck_col cols[N], data;
    long n = ck_table(c, path, m, specs, N, cols);
    bool have_data = cJSON_IsObject(m) && ck_col_read(c, path, m, "data", &data);
    if (have_data && n >= 0 && data.n != n)
        ck_fail(c, path, "column-length", "'data' has %ld elements, but length is %ld", data.n, n);
    long rows = n;
    for (size_t k = 0; k < N; k++)
        if (rows > cols[k].n)
            rows = cols[k].n;
    struct ck_colrep pr = {c, path, 0};
    for (long i = 0; i < rows; i++)
        check_phase(&pr, i, cols);
    ck_colrep_end(&pr);
    char dpath[128];
    snprintf(dpath, sizeof dpath, "%s.data", path);
    struct ck_colrep dr = {c, dpath, 0};
    for (long i = 0; have_data && i < data.n; i++)
        check_marker_data(c, &dr, i, data.node[i]);
    ck_colrep_end(&dr);
    if (have_data)
        ck_col_free(&data);
    for (size_t k = 0; k < N; k++)
        ck_col_free(&cols[k]);
}

static void want_kind(struct ck *c, const char *path, const cJSON *t, const char *key,
                      const char *what, bool ok_if(const cJSON *))
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, key);
    if (!v)
        ck_fail(c, path, "missing", "'%s' is missing (%s)", key, what);
    else if (!ok_if(v))
        ck_fail(c, path, "type", "'%s' must be %s", key, what);
}

static bool is_num(const cJSON *v)
{
    return cJSON_IsNumber(v);
}

static bool is_num_or_null(const cJSON *v)
{
    return cJSON_IsNumber(v) || cJSON_IsNull(v);
}

static bool is_num_or_str(const cJSON *v)
{
    return cJSON_IsNumber(v) || cJSON_IsString(v);
}

static bool is_str(const cJSON *v)
{
    return cJSON_IsString(v);
}

static bool is_bool(const cJSON *v)
{
    return cJSON_IsBool(v);
}

static bool is_array(const cJSON *v)
{
    return cJSON_IsArray(v);
}

/* View state is keyed by the string pid, and '-' and '~' break its URL encoding (pitfall 12). */
static const char *check_pid(struct ck *c, const char *path, const cJSON *t)
{
    const cJSON *pid = cJSON_GetObjectItemCaseSensitive(t, "pid");
    if (!cJSON_IsString(pid)) {
        ck_fail(c, path, pid ? "pid" : "missing", "'pid' must be a string");
        return NULL;
    }
    if (!pid->valuestring[0] || strpbrk(pid->valuestring, "-~"))
        ck_fail(c, path, "pid", "pid \"%s\" must be non-empty, without '-' or '~'",
                pid->valuestring);
    return pid->valuestring;
}

static void check_thread_fields(struct ck *c, const char *path, const cJSON *t)
{
    want_kind(c, path, t, "name", "a string", is_str);
    want_kind(c, path, t, "isMainThread", "a boolean", is_bool);
    want_kind(c, path, t, "processType", "a string", is_str);
    want_kind(c, path, t, "tid", "a number or string", is_num_or_str);
    want_kind(c, path, t, "processStartupTime", "a number (ms)", is_num);
    want_kind(c, path, t, "processShutdownTime", "a number or null", is_num_or_null);
    want_kind(c, path, t, "registerTime", "a number (ms)", is_num);
    want_kind(c, path, t, "unregisterTime", "a number or null", is_num_or_null);
    want_kind(c, path, t, "pausedRanges", "an array", is_array);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, "processName");
    if (v && !cJSON_IsString(v))
        ck_fail(c, path, "type", "'processName' must be a string when present");
    v = cJSON_GetObjectItemCaseSensitive(t, "showMarkersInTimeline");
    if (v && !cJSON_IsBool(v))
        ck_fail(c, path, "type", "'showMarkersInTimeline' must be a boolean when present");
}

/* A second main thread for a pid makes the first one vanish from the UI (pitfall 16). */
static void count_main(struct ck *c, const char **mains, long *n_mains, const char *pid,
                       const cJSON *t, long i)
{
    if (!pid || !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, "isMainThread")))
        return;
    for (long k = 0; k < *n_mains; k++)
        if (!strcmp(mains[k], pid)) {
            char path[32];
            snprintf(path, sizeof path, "threads[%ld]", i);
            ck_fail(c, path, "main-thread", "a second isMainThread for pid \"%s\"", pid);
            return;
        }
    mains[(*n_mains)++] = pid;
}

void ck_threads(struct ck *c)
{
    const cJSON *threads = cJSON_GetObjectItemCaseSensitive(c->root, "threads");
    if (!cJSON_IsArray(threads)) {
        ck_fail(c, "threads", threads ? "type" : "missing", "must be an array");
        return;
    }
    if (cJSON_GetArraySize(threads) == 0) {
        ck_fail(c, "threads", "threads-empty", "no threads: the front-end refuses the profile");
        return;
    }
    const char **mains = ck_xcalloc((size_t)c->n[T_THREAD], sizeof *mains);
    long n_mains = 0, i = 0;
    for (const cJSON *t = threads->child; t; t = t->next, i++) {
        char path[32];
        snprintf(path, sizeof path, "threads[%ld]", i);
        if (!cJSON_IsObject(t)) {
            ck_fail(c, path, "type", "a thread must be an object");
            continue;
        }
        check_thread_fields(c, path, t);
        count_main(c, mains, &n_mains, check_pid(c, path, t), t, i);
        check_samples(c, path, cJSON_GetObjectItemCaseSensitive(t, "samples"));
        check_markers(c, path, cJSON_GetObjectItemCaseSensitive(t, "markers"));
    }
    free(mains);
}

static bool in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list))
            return true;
    return false;
}

static void check_counter_display(struct ck *c, const char *path, const cJSON *d)
{
    static const char *const graph_types[] = {"line-accumulated", "line-rate", NULL};
    static const char *const colors[] = {"blue",   "green", "grey", "ink",    "magenta", "orange",
                                         "purple", "red",   "teal", "yellow", NULL};
    if (!cJSON_IsObject(d)) {
        ck_fail(c, path, d ? "type" : "missing", "'display' must be an object");
        return;
    }
    const cJSON *gt = cJSON_GetObjectItemCaseSensitive(d, "graphType");
    const cJSON *color = cJSON_GetObjectItemCaseSensitive(d, "color");
    if (!cJSON_IsString(gt) || !in_list(gt->valuestring, graph_types))
        ck_fail(c, path, "value", "display.graphType must be line-accumulated or line-rate");
    if (!cJSON_IsString(color) || !in_list(color->valuestring, colors))
        ck_fail(c, path, "value", "display.color must be a GraphColor");
    want_kind(c, path, d, "unit", "a string", is_str);
    want_kind(c, path, d, "label", "a string", is_str);
    want_kind(c, path, d, "sortWeight", "a number", is_num);
    want_kind(c, path, d, "tooltipRows", "an array", is_array);
}

static void check_counter(struct ck *c, const char *path, const cJSON *k)
{
    want_kind(c, path, k, "name", "a string", is_str);
    want_kind(c, path, k, "category", "a string", is_str);
    want_kind(c, path, k, "description", "a string", is_str);
    check_pid(c, path, k);
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(k, "mainThreadIndex");
    if (!cJSON_IsNumber(mt) || !ck_is_int(mt->valuedouble) || mt->valuedouble < 0 ||
        mt->valuedouble >= (double)c->n[T_THREAD])
        ck_fail(c, path, "index-range", "'mainThreadIndex' must be a thread index");
    char spath[96];
    snprintf(spath, sizeof spath, "%s.samples", path);
    static const struct ck_colspec specs[] = {{"count", K_NUM, T_NONE}};
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(k, "samples");
    long n = ck_table(c, spath, s, specs, 1, NULL);
    if (cJSON_IsObject(s)) {
        double *t = ck_times(c, spath, s, n);
        if (t)
            check_sorted(c, spath, t, n);
        free(t);
    }
    check_counter_display(c, path, cJSON_GetObjectItemCaseSensitive(k, "display"));
}

void ck_counters(struct ck *c)
{
    const cJSON *counters = cJSON_GetObjectItemCaseSensitive(c->root, "counters");
    if (!cJSON_IsArray(counters))
        return;
    long i = 0;
    for (const cJSON *k = counters->child; k; k = k->next, i++) {
        char path[32];
        snprintf(path, sizeof path, "counters[%ld]", i);
        check_counter(c, path, k);
    }
}
