/* SPDX-License-Identifier: Apache-2.0 */
/* JFR events as markers (issue 35), one per event, named as the event type so that the count
 * reads against `jfr summary`'s, each with a schema of its own (PROFILE-FORMAT.md §10.2):
 *   - waits on the waiting thread's track with the stack it waited in (data.cause):
 *     jdk.ThreadPark, JavaMonitorEnter, JavaMonitorWait, ThreadSleep (what it waited for) and
 *     jdk.VirtualThreadPinned (the blocking operation, why the carrier was pinned);
 *   - GC, which has no Java thread, on the main thread's track: jdk.GarbageCollection (collector,
 *     cause, pauses) and its phases (jdk.GCPhasePause, Level1..4, GCPhaseConcurrent, Level1..2)
 *     nested under it in the marker chart;
 *   - jdk.Compilation on the compiler thread's track (method, compiler, tier, code size);
 *   - JDK 25's method tracing (JEP 520): jdk.MethodTrace, an interval per traced call on its
 *     thread with its stack; jdk.MethodTiming, an instant per timed method on the main track with
 *     its invocations and min/avg/max time (JFR writes one at each chunk's end);
 *   - jdk.OldObjectSample, a live-heap hint: an object sampled at allocation that was still
 *     alive when the recording ended, an interval from its allocation to then, on the allocating
 *     thread with the allocation's stack, its class, size and age.
 * Fields are found by name in each chunk's metadata; a field a chunk lacks is left 0 or "". */
#include "fxprof.h"

#include <stdio.h>
#include <string.h>

#include "fx_jtype.h"
#include "jfr_profile.h"

enum {
    H_TEXT = 0,
    H_NS_TEXT,
    H_BOOL,
    H_INT,
    H_TICKS
};

#define F(k, l, f)       \
    {                    \
        k, l, FX_FMT_##f \
    }
#define SCHEMA(var, nm, tip, table, chart, desc, disp, flds)                                     \
    static const struct fx_marker_schema var = {.name = nm,                                      \
                                                .tooltip_label = tip,                            \
                                                .table_label = table,                            \
                                                .chart_label = chart,                            \
                                                .description = desc,                             \
                                                .display = FX_DISPLAY_CHART | FX_DISPLAY_TABLE | \
                                                           (disp),                               \
                                                .fields = flds,                                  \
                                                .n_fields = sizeof flds / sizeof *flds}

static const struct fx_marker_field wait_f[] = {F("detail", "Detail", STRING)};
SCHEMA(wait_s, "FxJfrEvent", "{marker.name}: {marker.data.detail}",
       "{marker.name}: {marker.data.detail}", "{marker.data.detail}",
       "A JFR event with a duration (fxprof convert of a recording)", FX_DISPLAY_TIMELINE_OVERVIEW,
       wait_f);
static const struct fx_marker_field gc_f[] = {
        F("collector", "Collector", STRING), F("gcCause", "Cause", STRING),
        F("sumOfPauses", "Sum of pauses", DURATION), F("longestPause", "Longest pause", DURATION),
        F("gcId", "GC id", INTEGER)};
SCHEMA(gc_s, "FxJfrGc", "GC: {marker.data.collector} ({marker.data.gcCause})",
       "{marker.data.collector}: {marker.data.gcCause}", "{marker.data.collector}",
       "A garbage collection (JFR jdk.GarbageCollection): from its start to its end, pauses "
       "included",
       FX_DISPLAY_TIMELINE_OVERVIEW | FX_DISPLAY_TIMELINE_MEMORY, gc_f);
static const struct fx_marker_field phase_f[] = {F("phase", "Phase", STRING),
                                                 F("gcId", "GC id", INTEGER)};
SCHEMA(phase_s, "FxJfrGcPhase", "{marker.name}: {marker.data.phase}",
       "{marker.name}: {marker.data.phase} (GC {marker.data.gcId})", "{marker.data.phase}",
       "A phase of a garbage collection (JFR jdk.GCPhasePause*, jdk.GCPhaseConcurrent*)", 0,
       phase_f);
static const struct fx_marker_field comp_f[] = {F("method", "Method", UNIQUE_STRING),
                                                F("compiler", "Compiler", STRING),
                                                F("level", "Tier", INTEGER),
                                                F("succeeded", "Succeeded", STRING),
                                                F("osr", "On-stack replacement", STRING),
                                                F("codeSize", "Code size", BYTES),
                                                F("compileId", "Compile id", INTEGER)};
SCHEMA(comp_s, "FxJfrCompilation", "JIT {marker.data.compiler}: {marker.data.method}",
       "{marker.data.compiler} (tier {marker.data.level}): {marker.data.method}",
       "{marker.data.method}", "A JIT compilation (JFR jdk.Compilation)", 0, comp_f);
static const struct fx_marker_field pin_f[] = {F("operation", "Blocking operation", STRING),
                                               F("reason", "Pinned reason", STRING),
                                               F("carrier", "Carrier thread", STRING)};
SCHEMA(pin_s, "FxJfrPinned", "Pinned: {marker.data.operation} ({marker.data.reason})",
       "Pinned: {marker.data.operation} ({marker.data.reason})", "{marker.data.operation}",
       "A virtual thread blocked while pinned to its carrier (JFR jdk.VirtualThreadPinned)",
       FX_DISPLAY_TIMELINE_OVERVIEW, pin_f);
static const struct fx_marker_field trace_f[] = {F("method", "Method", UNIQUE_STRING)};
SCHEMA(trace_s, "FxJfrMethodTrace", "{marker.data.method}", "{marker.data.method}",
       "{marker.data.method}",
       "A call of a traced method (JDK 25 JFR jdk.MethodTrace, -XX:StartFlightRecording:"
       "jdk.MethodTrace#filter=...)",
       FX_DISPLAY_TIMELINE_OVERVIEW, trace_f);
static const struct fx_marker_field timing_f[] = {
        F("method", "Method", UNIQUE_STRING), F("invocations", "Invocations", INTEGER),
        F("minimum", "Minimum", DURATION), F("average", "Average", DURATION),
        F("maximum", "Maximum", DURATION)};
SCHEMA(timing_s, "FxJfrMethodTiming",
       "{marker.data.method}: {marker.data.invocations} calls, avg {marker.data.average}",
       "{marker.data.method}: {marker.data.invocations} calls, min {marker.data.minimum}, avg "
       "{marker.data.average}, max {marker.data.maximum}",
       "{marker.data.method}",
       "A timed method's calls so far (JDK 25 JFR jdk.MethodTiming, written at each chunk's end)",
       0, timing_f);
static const struct fx_marker_field old_f[] = {
        F("objectClass", "Class", STRING), F("objectSize", "Size", BYTES),
        F("objectAge", "Age", DURATION), F("arrayElements", "Array elements", INTEGER),
        F("heapUsed", "Heap used when last known", BYTES)};
SCHEMA(old_s, "FxJfrOldObject", "Still alive: {marker.data.objectClass} ({marker.data.objectSize})",
       "Still alive: {marker.data.objectClass} ({marker.data.objectSize})",
       "{marker.data.objectClass}",
       "An object JFR sampled at its allocation and found alive when the recording ended "
       "(jdk.OldObjectSample): a hint of what stays on the heap, not the live heap",
       0, old_f);

#define GCPHASE(t)                                      \
    {                                                   \
        t, NULL, FX_CAT_GC, &phase_s, {"name", "gcId"}, \
        {                                               \
            0                                           \
        }                                               \
    }
static const struct spec {
    const char *type, *thread;
    uint8_t category;
    const struct fx_marker_schema *schema;
    const char *src[JFR_MARKER_FIELDS]; /* the JFR field of each schema field */
    uint8_t how[JFR_MARKER_FIELDS];
} types[JFR_MARKER_TYPES] = {
        {"jdk.ThreadPark", "eventThread", FX_CAT_IDLE, &wait_s, {"parkedClass"}, {0}},
        {"jdk.JavaMonitorEnter", "eventThread", FX_CAT_IDLE, &wait_s, {"monitorClass"}, {0}},
        {"jdk.JavaMonitorWait", "eventThread", FX_CAT_IDLE, &wait_s, {"monitorClass"}, {0}},
        {"jdk.ThreadSleep", "eventThread", FX_CAT_IDLE, &wait_s, {"time"}, {H_NS_TEXT}},
        {"jdk.VirtualThreadPinned",
         "eventThread",
         FX_CAT_IDLE,
         &pin_s,
         {"blockingOperation", "pinnedReason", "carrierThread"},
         {0}},
        {"jdk.GarbageCollection",
         NULL,
         FX_CAT_GC,
         &gc_s,
         {"name", "cause", "sumOfPauses", "longestPause", "gcId"},
         {0, 0, H_TICKS, H_TICKS}},
        GCPHASE("jdk.GCPhasePause"),
        GCPHASE("jdk.GCPhasePauseLevel1"),
        GCPHASE("jdk.GCPhasePauseLevel2"),
        GCPHASE("jdk.GCPhasePauseLevel3"),
        GCPHASE("jdk.GCPhasePauseLevel4"),
        GCPHASE("jdk.GCPhaseConcurrent"),
        GCPHASE("jdk.GCPhaseConcurrentLevel1"),
        GCPHASE("jdk.GCPhaseConcurrentLevel2"),
        {"jdk.Compilation",
         "eventThread",
         FX_CAT_JIT,
         &comp_s,
         {"method", "compiler", "compileLevel", "succeded", "isOsr", "codeSize", "compileId"},
         {0, 0, 0, H_BOOL, H_BOOL}},
        {"jdk.MethodTrace", "eventThread", FX_CAT_JAVA, &trace_s, {"method"}, {0}},
        {"jdk.MethodTiming",
         NULL,
         FX_CAT_JAVA,
         &timing_s,
         {"method", "invocations", "minimum", "average", "maximum"},
         {0, 0, H_TICKS, H_TICKS, H_TICKS}},
        {"jdk.OldObjectSample",
         "eventThread",
         FX_CAT_ALLOC,
         &old_s,
         {"object", "objectSize", "objectAge", "arrayElements", "lastKnownHeapUsage"},
         {0, 0, H_TICKS}},
};

void fx_jfr_markers_layout(struct conv *c)
{
    for (unsigned i = 0; i < JFR_MARKER_TYPES; i++) {
        uint32_t k = fx_jfr_class_find(c->r, types[i].type);
        struct mk_fields *m = &c->mk[i];
        *m = (struct mk_fields){.cls = k,
                                .time = fx_jfr_field(c->r, k, "startTime"),
                                .duration = fx_jfr_field(c->r, k, "duration"),
                                .thread = types[i].thread ? fx_jfr_field(c->r, k, types[i].thread)
                                                          : -1,
                                .stack = fx_jfr_field(c->r, k, "stackTrace"),
                                .alloc_time = fx_jfr_field(c->r, k, "allocationTime")};
        for (unsigned f = 0; f < JFR_MARKER_FIELDS; f++)
            m->f[f] = types[i].src[f] ? fx_jfr_field(c->r, k, types[i].src[f]) : -1;
    }
}

static void copy_out(char *buf, size_t cap, const char *s, bool dots)
{
    size_t len = strnlen(s, cap - 1);
    memmove(buf, s, len);
    buf[len] = '\0';
    for (char *p = buf; dots && *p; p++)
        *p = *p == '/' ? '.' : *p;
}

/* A value as text: a string, a number, a Class's or an old object's class name, a Method as
 * pkg.Class.method, else the first string of the pool entry (GC names and causes are pool
 * entries holding one string, a thread's first string is its OS name). */
static void describe(struct conv *c, const struct fx_jfr_value *v, char *buf, size_t cap,
                     struct fx_errbuf *eb)
{
    buf[0] = '\0';
    if (v->kind == FX_JFR_STRING) {
        fx_jfr_string(c->r, v, buf, cap, NULL);
    } else if (v->kind == FX_JFR_INT) {
        snprintf(buf, cap, "%lld", (long long)v->i);
    } else if (v->kind == FX_JFR_REF) {
        struct fx_jfr_value f[16];
        struct fx_jfr_obj o;
        if (fx_jfr_deref(c->r, v, &o) != FX_OK)
            return;
        uint32_t nf = fx_jfr_field_count(c->r, o.cls);
        if (nf == 0 || fx_jfr_profile_deref(c, v, f, (int)nf - 1, eb) != FX_OK)
            return;
        const char *cn = fx_jfr_class_name(c->r, o.cls);
        if (!strcmp(cn, "jdk.types.Method")) {
            copy_out(buf, cap, fx_jfr_profile_method(c, v, eb), false);
            return;
        }
        int ft = fx_jfr_field(c->r, o.cls, "type"); /* jdk.types.OldObject's class */
        /* only into a Class: a hostile file's OldObject typed as itself would recurse */
        if (!strcmp(cn, "jdk.types.OldObject") && ft >= 0 && f[ft].kind == FX_JFR_REF &&
            !strcmp(fx_jfr_class_name(c->r, f[ft].cls), "java.lang.Class")) {
            describe(c, &f[ft], buf, cap, eb);
            return;
        }
        if (c->l.c_name >= 0 && (int)nf > c->l.c_name && !strcmp(cn, "java.lang.Class")) {
            const char *jn = fx_jfr_profile_symbol(c, &f[c->l.c_name], c->buf2, eb);
            /* an array as Java writes it ([B: byte[]), as the allocation samples name it */
            if (jn[0] != '[' || fx_jtype_name(jn, strlen(jn), buf, cap) < 0)
                copy_out(buf, cap, jn, true);
            return;
        }
        for (uint32_t i = 0; i < nf; i++)
            if (f[i].kind == FX_JFR_STRING && fx_jfr_string(c->r, &f[i], buf, cap, NULL) == FX_OK)
                return;
    }
}

/* The schema's values from the event's fields v. */
static int values(struct conv *c, unsigned i, const struct fx_jfr_value *v,
                  union fx_marker_value *out, struct fx_errbuf *eb)
{
    const struct spec *s = &types[i];
    double tps = (double)fx_jfr_chunk(c->r)->ticks_per_second;
    for (unsigned f = 0; f < s->schema->n_fields; f++) {
        int at = c->mk[i].f[f];
        const struct fx_jfr_value *x = at >= 0 ? &v[at] : &(struct fx_jfr_value){0};
        int64_t n = x->kind == FX_JFR_INT ? x->i : 0;
        enum fx_field_format fmt = s->schema->fields[f].format;
        if (fmt == FX_FMT_DURATION) {
            out[f].d = s->how[f] == H_TICKS && tps > 0 ? (double)n * 1e3 / tps : (double)n / 1e6;
        } else if (fmt == FX_FMT_INTEGER || fmt == FX_FMT_BYTES) {
            out[f].i = n;
        } else {
            /* a pool object (a method, a class, a thread) reads the same in every event of the
             * chunk: its text is made once (a traced method's markers: 9% of a conversion) */
            bool pooled = x->kind == FX_JFR_REF && s->how[f] != H_BOOL;
            uint64_t sid;
            struct text_memo *tm =
                    &c->tmemo[((uint64_t)x->i + x->cls) * 0x9E3779B97F4A7C15ull >> 56];
            if (pooled && tm->gen == c->gen && tm->ref == x->i && tm->cls == x->cls) {
                out[f].s = (fx_str_id){tm->sid};
                continue;
            }
            if (pooled && fx_jfr_map_get(&c->cache, C_TEXT + x->cls, (uint64_t)x->i, &sid)) {
                out[f].s = (fx_str_id){(uint32_t)sid};
                *tm = (struct text_memo){x->i, x->cls, out[f].s.i, c->gen};
                continue;
            }
            char text[256];
            if (s->how[f] == H_NS_TEXT && x->kind == FX_JFR_INT)
                snprintf(text, sizeof text, "%.3f ms", (double)n / 1e6);
            else if (s->how[f] == H_BOOL)
                snprintf(text, sizeof text, "%s", at < 0 ? "" : n ? "yes" : "no");
            else
                describe(c, x, text, sizeof text, eb);
            int rc = fx_profile_cstring(c->p, text, &out[f].s);
            if (rc == FX_OK && pooled)
                rc = fx_jfr_map_put(&c->cache, C_TEXT + x->cls, (uint64_t)x->i, out[f].s.i);
            if (rc == FX_OK && pooled)
                *tm = (struct text_memo){x->i, x->cls, out[f].s.i, c->gen};
            if (rc != FX_OK)
                return rc;
        }
    }
    return FX_OK;
}

int fx_jfr_markers_event(struct conv *c, const struct fx_jfr_obj *ev, struct fx_errbuf *eb)
{
    unsigned i = 0;
    while (i < JFR_MARKER_TYPES && c->mk[i].cls != ev->cls)
        i++;
    if (i == JFR_MARKER_TYPES)
        return 0;
    const struct mk_fields *m = &c->mk[i];
    uint32_t n = fx_jfr_field_count(c->r, ev->cls);
    if (m->time < 0 || n > 16)
        return 0;
    struct fx_jfr_value v[16];
    int rc = fx_jfr_fields(c->r, ev, v, n, eb);
    fx_thread_id th = c->main_thread;
    if (rc == FX_OK && m->thread >= 0)
        rc = fx_jfr_profile_thread(c, &v[m->thread], false, &th, eb);
    else if (rc == FX_OK && !c->any_thread)
        rc = fx_jfr_profile_thread(c, &(struct fx_jfr_value){.kind = FX_JFR_REF}, false, &th, eb);
    union fx_marker_value val[JFR_MARKER_FIELDS];
    /* the type's schema and name, made once a conversion (ids stay: it never compacts), in
     * the order the strings were always made: schema, the values' texts, the name */
    bool made = c->mk_made[i];
    if (rc == FX_OK && !made)
        rc = fx_profile_schema(c->p, types[i].schema, &c->mk_schema[i]);
    if (rc == FX_OK)
        rc = values(c, i, v, val, eb);
    if (rc == FX_OK && !made)
        rc = fx_profile_cstring(c->p, types[i].type, &c->mk_name[i]);
    c->mk_made[i] = rc == FX_OK;
    fx_schema_id sid = c->mk_schema[i];
    fx_str_id name = c->mk_name[i];
    int64_t t = v[m->time].i, t0 = fx_jfr_ticks_to_ns(c->r, t), t1 = t0;
    int64_t end; /* a damaged duration saturates rather than overflows */
    if (m->duration >= 0 && v[m->duration].i > 0)
        t1 = fx_jfr_ticks_to_ns(c->r, __builtin_add_overflow(t, v[m->duration].i, &end) ? INT64_MAX
                                                                                        : end);
    /* an old object: from its allocation to when it was found alive */
    if (m->alloc_time >= 0 && v[m->alloc_time].i > 0 && v[m->alloc_time].i <= t)
        t0 = fx_jfr_ticks_to_ns(c->r, v[m->alloc_time].i);
    uint8_t phase = m->duration >= 0 || t0 < t1 ? FX_PHASE_INTERVAL : FX_PHASE_INSTANT;
    if (rc == FX_OK)
        rc = fx_profile_marker(c->p, th, name, phase, types[i].category, t0, t1, sid, val);
    fx_stack_id st;
    struct fx_jfr_obj so;
    bool has = rc == FX_OK && m->stack >= 0 && v[m->stack].kind == FX_JFR_REF && v[m->stack].i;
    /* a stack resolved before in this chunk (most of a traced method's calls'): found in the
     * pools then, so not looked up in them again */
    bool known = has && fx_jfr_profile_stack_known(c, &v[m->stack], &st);
    if (known)
        rc = fx_profile_marker_stack(c->p, th, st);
    has = has && !known;
    /* a stack the chunk's pools lack (an old object's, at times) is none, as jfr print's null:
     * no cause, counted with the events without a stack trace */
    if (has && fx_jfr_deref(c->r, &v[m->stack], &so) != FX_OK) {
        c->no_stack++;
        has = false;
    }
    /* so is a stack of no frames (jfr print's empty stackTrace, an old object's at times):
     * fx_jfr_profile_stack counts it and gives the label a sample needs, a marker no cause */
    uint64_t no_stack_before = c->no_stack;
    if (has && fx_jfr_profile_stack(c, &v[m->stack], false, &st, eb) == FX_OK &&
        c->no_stack == no_stack_before)
        rc = fx_profile_marker_stack(c->p, th, st);
    if (rc != FX_OK)
        return rc;
    c->markers++;
    return 1;
}
