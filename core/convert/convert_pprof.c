/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof convert --to pprof: one file with a pair of sample types per view, each sample with a
 * value for every type (0 where its view is another), as Go's heap profiles do:
 *   samples/count, cpu/nanoseconds (wall/nanoseconds in wall mode)  the recording's samples
 *   contentions/count, delay/nanoseconds                             lock waits
 *   alloc_objects/count, alloc_space/bytes                           allocation samples, bytes
 *   inuse_objects/count, inuse_space/bytes                           those alive at the end
 *   idle_waits/count, idle_delay/nanoseconds                         idle waits (waiting for
 *                                                                    work: not contention)
 * cpu (or wall) is the default type, so `go tool pprof -top` shows CPU time, and
 * `-sample_index=delay` (or alloc_space, inuse_space, idle_delay) another view; nothing adds
 * idle waits to lock waits, nor lock waits or bytes to CPU time. Functions and locations come from
 * the profile's tables (a set per thread in older files gets its own ids), the thread's name is the
 * label 'thread'; a sample in a trace span (fxagent.TraceContext, issue 33) has the labels
 * trace_id, span_id and its own (docs/FLEET.md).
 * Tests: it.fxprof_convert, it.push, it.trace. */
#include "fx_convert.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_gzip.h"
#include "fx_pprof.h"

#define NO_STACK_ID 1 /* function and location 1: "[no stack]" */

struct pprof_state {
    struct fx_pprof *p;
    const void *tables[5]; /* the table set whose functions and locations are emitted */
    uint64_t base_func, base_loc, next_base;
    bool *func_done, *loc_done;
    uint64_t *locs;
    uint32_t locscap;
};

static int file_write(void *ctx, const void *buf, size_t len)
{
    return fwrite(buf, 1, len, ctx) == len ? FX_OK : FX_EIO;
}

/* A new table set (older files have one per thread) gets fresh ids above the last set's. */
static int pprof_tables(struct pprof_state *ps, const struct fx_pfile_tables *t)
{
    if (!memcmp(ps->tables, t->src, sizeof ps->tables))
        return FX_OK;
    memcpy(ps->tables, t->src, sizeof ps->tables);
    fx_free(ps->func_done), fx_free(ps->loc_done);
    ps->func_done = fx_calloc(t->nfuncs + 1, 1);
    ps->loc_done = fx_calloc(t->nframes + 1, 1);
    ps->base_func = ps->next_base;
    ps->base_loc = ps->next_base + t->nfuncs;
    ps->next_base += (uint64_t)t->nfuncs + t->nframes;
    return ps->func_done && ps->loc_done ? FX_OK : FX_ENOMEM;
}

static int pprof_location(struct pprof_state *ps, const struct fx_pfile_tables *t, int32_t frame,
                          uint64_t *id)
{
    int32_t f = t->frame_func[frame];
    int rc = FX_OK;
    *id = ps->base_loc + (uint64_t)frame + 1;
    if (!ps->func_done[f]) {
        int32_t file = t->func_file[f];
        rc = fx_pprof_function(ps->p, ps->base_func + (uint64_t)f + 1, t->strings[t->func_name[f]],
                               file >= 0 ? t->strings[file] : NULL, t->func_line[f]);
        ps->func_done[f] = true;
    }
    if (rc == FX_OK && !ps->loc_done[frame]) {
        rc = fx_pprof_location(ps->p, *id, ps->base_func + (uint64_t)f + 1, t->frame_line[frame]);
        ps->loc_done[frame] = true;
    }
    return rc;
}

/* Issue 33: a span's labels, trace_id, span_id and each "key=value" split, into out (keys
 * copied into keys); returns how many. */
static size_t span_labels(const struct fx_pfile_span *s, const char *out[][2], char keys[][256])
{
    if (!s)
        return 0;
    size_t n = 0;
    out[n][0] = "trace_id", out[n++][1] = s->trace_id;
    out[n][0] = "span_id", out[n++][1] = s->span_id;
    for (int i = 0; i < FX_PFILE_SPAN_LABELS; i++) {
        const char *eq = s->label[i] ? strchr(s->label[i], '=') : NULL;
        if (!eq)
            continue;
        snprintf(keys[i], 256, "%.*s", (int)(eq - s->label[i]), s->label[i]);
        out[n][0] = keys[i], out[n++][1] = eq + 1;
    }
    return n;
}

static int pprof_stack(struct fx_walk *k, int32_t st, const double *v, void *ctx)
{
    struct pprof_state *ps = ctx;
    int rc = pprof_tables(ps, &k->t);
    uint32_t n = 0;
    for (int32_t s = st; s >= 0; s = k->t.stack_prefix[s])
        n++;
    if (rc == FX_OK && n + 1 > ps->locscap) {
        fx_free(ps->locs);
        ps->locs = fx_calloc(n + 1, sizeof *ps->locs);
        ps->locscap = ps->locs ? n + 1 : 0;
        rc = ps->locs ? FX_OK : FX_ENOMEM;
    }
    n = 0;
    if (rc == FX_OK && st < 0)
        ps->locs[n++] = NO_STACK_ID;
    for (int32_t s = st; rc == FX_OK && s >= 0; s = k->t.stack_prefix[s])
        rc = pprof_location(ps, &k->t, k->t.stack_frame[s], &ps->locs[n++]);
    int64_t values[FX_V_COUNT];
    for (unsigned i = 0; i < FX_V_COUNT; i++)
        values[i] = llround(v[i]);
    const char *labels[3 + FX_PFILE_SPAN_LABELS][2] = {{"thread", k->thread}};
    char keys[FX_PFILE_SPAN_LABELS][256];
    size_t nl = 1 + span_labels(k->span, labels + 1, keys);
    return rc == FX_OK ? fx_pprof_sample_labels(ps->p, ps->locs, n, values,
                                                (const char *const(*)[2])labels, nl)
                       : rc;
}

static double meta_number(const cJSON *root, const char *key, double dflt)
{
    const cJSON *v =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "meta"), key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static int sample_types(struct fx_pprof *p, const char *mode)
{
    const char *const types[FX_V_COUNT][2] = {
            {"samples", "count"},       {strcmp(mode, "wall") ? "cpu" : "wall", "nanoseconds"},
            {"contentions", "count"},   {"delay", "nanoseconds"},
            {"alloc_objects", "count"}, {"alloc_space", "bytes"},
            {"inuse_objects", "count"}, {"inuse_space", "bytes"},
            {"idle_waits", "count"},    {"idle_delay", "nanoseconds"}};
    int rc = FX_OK;
    for (unsigned i = 0; i < FX_V_COUNT && rc == FX_OK; i++)
        rc = fx_pprof_sample_type(p, types[i][0], types[i][1]);
    return rc == FX_OK ? fx_pprof_default_type(p, FX_V_TIME) : rc;
}

static int write_pprof(struct fx_walk *k, FILE *out, struct fx_errbuf *eb)
{
    struct pprof_state ps = {.next_base = NO_STACK_ID};
    const char *mode = fx_pfile_mode(k->root);
    ps.p = fx_pprof_new();
    struct fx_gzip *gz = fx_gzip_new((struct fx_sink){.write = file_write, .ctx = out}, 6);
    int rc = ps.p && gz ? FX_OK : FX_ENOMEM;
    if (rc == FX_OK)
        rc = sample_types(ps.p, mode);
    if (rc == FX_OK)
        rc = fx_pprof_function(ps.p, NO_STACK_ID, "[no stack]", NULL, 0);
    if (rc == FX_OK)
        rc = fx_pprof_location(ps.p, NO_STACK_ID, NO_STACK_ID, 0);
    if (rc == FX_OK)
        rc = fx_convert_walk(k, pprof_stack, &ps, eb);
    char comment[200];
    snprintf(comment, sizeof comment,
             "fxprof convert, mode %s; %.0f [idle] samples left out%s; one view per pair of "
             "sample types (-sample_index=delay, alloc_space, inuse_space, idle_delay)",
             mode, k->idle, k->keep_idle ? " (--idle: none)" : "");
    double start = meta_number(k->root, "startTime", 0);
    double t0 = meta_number(k->root, "profilingStartTime", 0);
    double t1 = meta_number(k->root, "profilingEndTime", t0);
    if (rc == FX_OK)
        rc = fx_pprof_finish(ps.p, llround((start + t0) * 1e6), llround((t1 - t0) * 1e6), FX_V_TIME,
                             llround(k->interval_ns), comment, fx_gzip_sink(gz));
    if (rc == FX_OK)
        rc = fx_gzip_finish(gz);
    if (rc == FX_ENOMEM)
        fx_errbuf_set(eb, "out of memory");
    else if (rc != FX_OK && !eb->msg[0])
        fx_errbuf_set(eb, "writing the output failed: %s", strerror(errno));
    fx_gzip_free(gz);
    fx_pprof_free(ps.p);
    fx_free(ps.func_done), fx_free(ps.loc_done), fx_free(ps.locs);
    return rc;
}

int fx_convert_pprof(const struct cJSON *root, bool keep_idle, FILE *f, double *idle_out,
                     struct fx_errbuf *eb)
{
    struct fx_walk k = {.root = root, .keep_idle = keep_idle};
    int rc = write_pprof(&k, f, eb);
    *idle_out = k.idle;
    fx_convert_walk_destroy(&k);
    return rc;
}
