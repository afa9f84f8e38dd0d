/* SPDX-License-Identifier: Apache-2.0 */
/* The writer's meta object (categories, marker schemas, display hints, meta.extra) and the
 * counters (§4, §8, §10.2, §12.1). Nothing here depends on the profile's size but the scan for
 * initialVisibleThreads (each thread's samples and markers, once), which needs no allocation.
 * Tests: unit.ff_writer. */
#include "fx_ff_writer.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fx_ff_writer_internal.h"
#include "fx_json.h"
#include "fx_jvm_markers.h"
#include "fx_profile_internal.h"

/* At most this many threads are listed in meta.initialVisibleThreads (the busiest). */
#define MAX_VISIBLE 64
/* Gecko format version, informational for processed files; samply writes the same. */
#define GECKO_VERSION 24

const char *fx_ff_writer_process_name(const struct fx_profile *p)
{
    if (p->meta[FX_META_PROCESS_NAME])
        return p->meta[FX_META_PROCESS_NAME];
    return p->meta[FX_META_PRODUCT] ? p->meta[FX_META_PRODUCT] : "fxagent";
}

void fx_ff_writer_pid(struct fx_json *j, const struct fx_profile *p)
{
    char pid[24];
    snprintf(pid, sizeof(pid), "%" PRId64, p->pid);
    fx_json_str(j, pid);
}

/* --- meta --- */

static void write_categories(struct fx_json *j)
{
    fx_json_key(j, "categories");
    fx_json_arr_begin(j);
    for (unsigned c = 0; c < FX_CAT_COUNT; c++) {
        const struct fx_category_info *ci = fx_profile_category(c);
        fx_json_obj_begin(j);
        kv_str(j, "name", ci->name);
        kv_str(j, "color", ci->color);
        fx_json_key(j, "subcategories");
        fx_json_arr_begin(j);
        for (unsigned s = 0; s < ci->n_subcategories; s++)
            fx_json_str(j, ci->subcategories[s]);
        fx_json_arr_end(j);
        fx_json_obj_end(j);
    }
    fx_json_arr_end(j);
}

static const char *format_name(enum fx_field_format f)
{
    switch (f) {
    case FX_FMT_STRING:
        return "string";
    case FX_FMT_UNIQUE_STRING:
        return "unique-string";
    case FX_FMT_INTEGER:
        return "integer";
    case FX_FMT_BYTES:
        return "bytes";
    case FX_FMT_DURATION:
        return "duration";
    case FX_FMT_DECIMAL:
        return "decimal";
    case FX_FMT_PERCENTAGE:
        return "percentage";
    }
    return "string";
}

static void write_display(struct fx_json *j, unsigned display)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{FX_DISPLAY_CHART, "marker-chart"},
                 {FX_DISPLAY_TABLE, "marker-table"},
                 {FX_DISPLAY_TIMELINE_OVERVIEW, "timeline-overview"},
                 {FX_DISPLAY_TIMELINE_MEMORY, "timeline-memory"}};
    fx_json_key(j, "display");
    fx_json_arr_begin(j);
    for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (display & names[i].bit)
            fx_json_str(j, names[i].name);
    }
    fx_json_arr_end(j);
}

static void write_schema(struct fx_json *j, const struct fx_marker_schema *s)
{
    fx_json_obj_begin(j);
    kv_str(j, "name", s->name);
    const char *labels[] = {"tooltipLabel", "tableLabel", "chartLabel", "description"};
    const char *values[] = {s->tooltip_label, s->table_label, s->chart_label, s->description};
    for (unsigned i = 0; i < 4; i++) {
        if (values[i])
            kv_str(j, labels[i], values[i]);
    }
    write_display(j, s->display);
    fx_json_key(j, "fields");
    fx_json_arr_begin(j);
    for (unsigned f = 0; f < s->n_fields; f++) {
        fx_json_obj_begin(j);
        kv_str(j, "key", s->fields[f].key);
        if (s->fields[f].label)
            kv_str(j, "label", s->fields[f].label);
        kv_str(j, "format", format_name(s->fields[f].format));
        fx_json_obj_end(j);
    }
    fx_json_arr_end(j);
    fx_json_obj_end(j);
}

static void write_schemas(struct fx_json *j, const struct fx_profile *p)
{
    fx_json_key(j, "markerSchema");
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < p->nschemas; i++)
        write_schema(j, p->schemas[i]);
    fx_json_arr_end(j);
}

/* Whether thread t waited on a lock or as a virtual thread: such a thread may have no sample
 * at all (a virtual thread that only waits), its markers being all it shows. */
static bool has_wait_markers(const struct fx_profile *p, const struct fx_thread *t)
{
    for (uint32_t i = 0; i < t->markers.count; i++) {
        uint32_t s = t->markers.schema[i];
        if (s == FX_NONE_ID || s >= p->nschemas)
            continue;
        const char *name = p->schemas[s]->name;
        if (!strcmp(name, FX_JVM_LOCK_SCHEMA) || !strcmp(name, FX_JVM_VTWAIT_SCHEMA))
            return true;
    }
    for (uint32_t s = 0; t->pack && s < p->nschemas; s++) {
        const char *name = p->schemas[s]->name;
        if ((!strcmp(name, FX_JVM_LOCK_SCHEMA) || !strcmp(name, FX_JVM_VTWAIT_SCHEMA)) &&
            fx_mpack_uses_schema(p, t, s))
            return true;
    }
    return false;
}

/* Whether every sample of t is in the Idle category (its leaf frame's, as the front-end
 * colours it); a sample without a stack is not idle. */
static bool all_idle(const struct fx_profile *p, const struct fx_thread *t)
{
    for (uint32_t i = 0; i < t->samples.count; i++) {
        uint32_t s = t->samples.stack[i];
        if (s == FX_NONE_ID || s >= p->stacks.count)
            return false;
        uint32_t f = p->stacks.frame[s];
        if (f >= p->frames.count || p->frames.category[f] != FX_CAT_IDLE)
            return false;
    }
    return true;
}

/* How much thread t deserves a track at first sight, 0 for none. strict: threads that only
 * sat idle (Common-Cleaner, Finalizer, Signal Dispatcher in wall mode) get none, so they do
 * not push the working threads off screen. */
static uint64_t visible_score(const struct fx_profile *p, const struct fx_thread *t, bool strict)
{
    uint64_t score = (uint64_t)t->samples.count + fx_thread_markers(t);
    if (has_wait_markers(p, t))
        return score;
    if (!t->samples.count)
        return 0;
    if (strict && !fx_thread_markers(t) && all_idle(p, t))
        return 0;
    return score;
}

/* The threads that deserve a track most (visible_score, at most MAX_VISIBLE), written in index
 * order; when the strict rule leaves none, those with samples, idle or not. */
static void write_visible_threads(struct fx_json *j, const struct fx_ff_ctx *w)
{
    const struct fx_profile *p = w->p;
    uint32_t top[MAX_VISIBLE];
    uint64_t score[MAX_VISIBLE];
    unsigned n = 0;
    for (int strict = 1; strict >= 0 && !n; strict--) {
        for (uint32_t t = 0; t < p->nthreads; t++) {
            uint64_t c = visible_score(p, p->threads[t], strict);
            if (!c)
                continue;
            if (n == MAX_VISIBLE && c <= score[n - 1])
                continue;
            unsigned k = n < MAX_VISIBLE ? n++ : n - 1; /* kept sorted by score, descending */
            while (k > 0 && score[k - 1] < c) {
                top[k] = top[k - 1];
                score[k] = score[k - 1];
                k--;
            }
            top[k] = t;
            score[k] = c;
        }
    }
    if (!n)
        return;
    fx_json_key(j, "initialVisibleThreads");
    fx_json_arr_begin(j);
    for (uint32_t t = 0; t < p->nthreads; t++) {
        for (unsigned k = 0; k < n; k++) {
            if (top[k] == t)
                fx_json_u64(j, w->index[t]);
        }
    }
    fx_json_arr_end(j);
}

static void write_extra_entry(struct fx_json *j, const char *label, const char *s, int64_t i)
{
    fx_json_obj_begin(j);
    kv_str(j, "label", label);
    kv_str(j, "format", s ? "string" : "integer");
    if (s)
        kv_str(j, "value", s);
    else
        kv_i64(j, "value", i);
    fx_json_obj_end(j);
}

/* A detail or a loss count at 0 is no row: "Profile Info" lists what happened. A group whose
 * loss counts are all 0 says so in one row (an empty list would not tell "none" from "not
 * counted"). */
static void write_extra_group(struct fx_json *j, const struct fx_extra_group *eg)
{
    bool losses = false, lost = false;
    fx_json_obj_begin(j);
    kv_str(j, "label", eg->label);
    fx_json_key(j, "entries");
    fx_json_arr_begin(j);
    for (uint32_t e = 0; e < eg->count; e++) {
        const struct fx_extra_entry *en = &eg->entries[e];
        bool loss = en->is_int && en->show == FX_EXTRA_LOSS;
        losses |= loss;
        lost |= loss && en->i != 0;
        if (en->is_int && en->show != FX_EXTRA_ALWAYS && en->i == 0)
            continue;
        write_extra_entry(j, en->label, en->is_int ? NULL : en->s, en->i);
    }
    if (losses && !lost)
        write_extra_entry(j, "losses", "none", 0);
    fx_json_arr_end(j);
    fx_json_obj_end(j);
}

static void write_extra(struct fx_json *j, const struct fx_profile *p)
{
    if (!p->nextra)
        return;
    fx_json_key(j, "extra");
    fx_json_arr_begin(j);
    for (uint32_t g = 0; g < p->nextra; g++)
        write_extra_group(j, &p->extra[g]);
    fx_json_arr_end(j);
}

static void write_meta_head(struct fx_json *j, const struct fx_profile *p)
{
    fx_json_key(j, "interval");
    fx_json_double(j, p->interval_ms, 6);
    fx_json_key(j, "startTime");
    fx_json_double(j, p->epoch_ms, 3);
    if (p->range_set) {
        kv_ms(j, "profilingStartTime", rel_us(p, p->range_begin_ns));
        if (p->range_end_ns)
            kv_ms(j, "profilingEndTime", rel_us(p, p->range_end_ns));
    }
    kv_i64(j, "processType", 0);
    kv_str(j, "product", p->meta[FX_META_PRODUCT] ? p->meta[FX_META_PRODUCT] : "fxagent");
    kv_str(j, "importedFrom", "fxagent");
    kv_i64(j, "stackwalk", 1);
    kv_bool(j, "debug", false);
    kv_i64(j, "version", GECKO_VERSION);
    kv_i64(j, "preprocessedProfileVersion", FX_PROCESSED_PROFILE_VERSION);
    kv_bool(j, "symbolicated", true);
    static const enum fx_meta_key info[] = {FX_META_PLATFORM, FX_META_OSCPU, FX_META_CPU_NAME,
                                            FX_META_ARGUMENTS};
    for (unsigned i = 0; i < sizeof(info) / sizeof(info[0]); i++) {
        if (p->meta[info[i]])
            kv_str(j, fx_profile_meta_key(info[i]), p->meta[info[i]]);
    }
    for (unsigned i = 0; i < FX_META_INT_COUNT; i++) {
        if (p->meta_int_set[i])
            kv_i64(j, fx_profile_meta_int_key(i), p->meta_int[i]);
    }
}

void fx_ff_writer_meta(const struct fx_ff_ctx *w)
{
    struct fx_json *j = w->j;
    const struct fx_profile *p = w->p;
    fx_json_key(j, "meta");
    fx_json_obj_begin(j);
    write_meta_head(j, p);
    write_categories(j);
    write_schemas(j, p);
    fx_json_key(j, "sampleUnits");
    fx_json_obj_begin(j);
    kv_str(j, "time", "ms");
    kv_str(j, "eventDelay", "ms");
    kv_str(j, "threadCPUDelta", FX_FF_CPU_DELTA_UNIT);
    fx_json_obj_end(j);
    kv_bool(j, "usesOnlyOneStackType", true);
    kv_bool(j, "sourceCodeIsNotOnSearchfox", true);
    write_visible_threads(j, w);
    fx_json_key(j, "initialSelectedThreads");
    fx_json_arr_begin(j);
    fx_json_u64(j, w->main_thread);
    fx_json_arr_end(j);
    kv_bool(j, "keepProfileThreadOrder", true);
    fx_json_key(j, "extensions");
    fx_json_obj_begin(j);
    kv_empty_arr(j, "baseURL");
    kv_empty_arr(j, "id");
    kv_empty_arr(j, "name");
    kv_length(j, 0);
    fx_json_obj_end(j);
    write_extra(j, p);
    fx_json_obj_end(j);
}

/* --- counters (§8) --- */

static void write_tooltip_row(struct fx_json *j, const char *source, const char *unit,
                              const char *label)
{
    fx_json_obj_begin(j);
    kv_str(j, "type", "value");
    kv_str(j, "source", source);
    fx_json_key(j, "format");
    fx_json_obj_begin(j);
    kv_str(j, "unit", unit);
    fx_json_obj_end(j);
    kv_str(j, "label", label);
    fx_json_obj_end(j);
}

static void write_counter_display(struct fx_json *j, const struct fx_counter *c)
{
    const char *unit = strcmp(c->unit, "bytes") == 0 ? "bytes" : "number";
    fx_json_key(j, "display");
    fx_json_obj_begin(j);
    kv_str(j, "graphType", "line-accumulated");
    kv_str(j, "unit", c->unit);
    kv_str(j, "color", c->color);
    kv_null(j, "markerSchemaLocation");
    kv_i64(j, "sortWeight", 20);
    kv_str(j, "label", c->name);
    fx_json_key(j, "tooltipRows");
    fx_json_arr_begin(j);
    write_tooltip_row(j, "accumulated", unit, c->name);
    write_tooltip_row(j, "count-range", unit, "range in graph");
    fx_json_arr_end(j);
    fx_json_obj_end(j);
}

/* line-accumulated plots the running sum of count: the first value is the absolute level, the
 * others are deltas from the previous sample. */
static void write_counter_samples(struct fx_json *j, const struct fx_profile *p,
                                  const struct fx_counter *c)
{
    fx_json_key(j, "samples");
    fx_json_obj_begin(j);
    fx_json_key(j, "time");
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < c->count; i++)
        put_ms(j, rel_us(p, c->time_ns[i]));
    fx_json_arr_end(j);
    fx_json_key(j, "count");
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < c->count; i++)
        fx_json_i64(j,
                    i ? (int64_t)((uint64_t)c->value[i] - (uint64_t)c->value[i - 1]) : c->value[0]);
    fx_json_arr_end(j);
    kv_length(j, c->count);
    fx_json_obj_end(j);
}

void fx_ff_writer_counters(const struct fx_ff_ctx *w)
{
    struct fx_json *j = w->j;
    fx_json_key(j, "counters");
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < w->p->ncounters; i++) {
        const struct fx_counter *c = &w->p->counters[i];
        fx_json_obj_begin(j);
        kv_str(j, "name", c->name);
        kv_str(j, "category", c->category);
        kv_str(j, "description", c->description);
        fx_json_key(j, "pid");
        fx_ff_writer_pid(j, w->p);
        kv_i64(j, "mainThreadIndex", w->main_thread);
        write_counter_samples(j, w->p, c);
        write_counter_display(j, c);
        fx_json_obj_end(j);
    }
    fx_json_arr_end(j);
}
