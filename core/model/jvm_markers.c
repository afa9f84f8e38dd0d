/* SPDX-License-Identifier: Apache-2.0 */
/* The schemas of the JVM's markers and the counter descriptors (PROFILE-FORMAT.md §8, §10).
 * Schemas are static: the model keeps pointers to them. Field keys never use "type" or "cause"
 * (the front-end reads those itself). */
#include "fx_jvm_markers.h"

#include <string.h>

static const struct fx_marker_field gc_fields[] = {
        {"seq", "Pause #", FX_FMT_INTEGER},
        {"collector", "Collector", FX_FMT_STRING},
        {"heapBefore", "Heap used before", FX_FMT_BYTES},
        {"heapAfter", "Heap used after", FX_FMT_BYTES},
};

static const struct fx_marker_schema gc_schema = {
        .name = FX_JVM_GC_SCHEMA,
        .tooltip_label = "GC pause #{marker.data.seq}: {marker.data.collector}",
        .table_label = "{marker.data.collector} #{marker.data.seq}",
        .chart_label = "{marker.data.collector}",
        .description = "A stop-the-world pause between JVMTI GarbageCollectionStart and "
                       "GarbageCollectionFinish. The collector and heap figures come from the "
                       "GC's MXBeans when one collection can be matched to the pause; otherwise "
                       "the collector is 'unknown' and the heap figures are 0.",
        .display = FX_DISPLAY_CHART | FX_DISPLAY_TABLE | FX_DISPLAY_TIMELINE_OVERVIEW |
                   FX_DISPLAY_TIMELINE_MEMORY,
        .fields = gc_fields,
        .n_fields = sizeof(gc_fields) / sizeof(gc_fields[0]),
};

static const struct fx_marker_field jit_fields[] = {
        {"method", "Method", FX_FMT_UNIQUE_STRING},
        {"codeSize", "Code size", FX_FMT_BYTES},
        {"inlined", "Methods inlined", FX_FMT_INTEGER},
};

static const struct fx_marker_schema jit_schema = {
        .name = FX_JVM_JIT_SCHEMA,
        .tooltip_label = "JIT compiled: {marker.data.method}",
        .table_label = "{marker.data.method} ({marker.data.codeSize})",
        .chart_label = "{marker.data.method}",
        .description = "Compiled code installed for a method (JVMTI CompiledMethodLoad). The event "
                       "has no start time and names no compiler or tier. Inlined: distinct "
                       "methods in the code's inlining records, -1 if it had none.",
        .display = FX_DISPLAY_CHART | FX_DISPLAY_TABLE,
        .fields = jit_fields,
        .n_fields = sizeof(jit_fields) / sizeof(jit_fields[0]),
};

static const struct fx_marker_field user_fields[] = {
        {"text", "Text", FX_FMT_STRING},
};

static const struct fx_marker_schema user_schema = {
        .name = FX_JVM_USER_SCHEMA,
        .tooltip_label = "{marker.name}: {marker.data.text}",
        .table_label = "{marker.name}: {marker.data.text}",
        .chart_label = "{marker.data.text}",
        .description = "A marker from the application (fxagent.Markers).",
        .display = FX_DISPLAY_CHART | FX_DISPLAY_TABLE | FX_DISPLAY_TIMELINE_OVERVIEW,
        .fields = user_fields,
        .n_fields = 1,
};

static const struct fx_marker_field dump_fields[] = {
        {"file", "File", FX_FMT_STRING},
        {"samples", "Samples", FX_FMT_INTEGER},
        {"bytes", "Size", FX_FMT_BYTES},
        {"duration", "Write time", FX_FMT_DURATION},
};

static const struct fx_marker_schema dump_schema = {
        .name = FX_JVM_DUMP_SCHEMA,
        .tooltip_label = "fxagent dump: {marker.data.file}",
        .table_label = "{marker.data.file} ({marker.data.samples} samples)",
        .chart_label = "{marker.data.file}",
        .description = "fxagent writing a profile. A dump cannot contain its own end, so each one "
                       "appears in the next profile written.",
        .display = FX_DISPLAY_CHART | FX_DISPLAY_TABLE | FX_DISPLAY_TIMELINE_OVERVIEW,
        .fields = dump_fields,
        .n_fields = sizeof(dump_fields) / sizeof(dump_fields[0]),
};

static const struct fx_marker_field start_fields[] = {
        {"engine", "Engine", FX_FMT_STRING},
        {"mode", "Mode", FX_FMT_STRING},
        {"interval", "Interval", FX_FMT_DURATION},
};

static const struct fx_marker_schema start_schema = {
        .name = FX_JVM_START_SCHEMA,
        .tooltip_label = "sampling started: {marker.data.mode}, {marker.data.engine}",
        .table_label = "sampling started ({marker.data.mode}, {marker.data.engine})",
        .chart_label = "{marker.data.mode}",
        .description = "fxagent began sampling.",
        .display = FX_DISPLAY_CHART | FX_DISPLAY_TABLE,
        .fields = start_fields,
        .n_fields = sizeof(start_fields) / sizeof(start_fields[0]),
};

static int str(struct fx_profile *p, const char *s, size_t len, fx_str_id *out)
{
    return fx_profile_string(p, s ? s : "", s ? len : 0, out);
}

/* Interns the marker's name and schema, then adds it. */
static int add(struct fx_profile *p, fx_thread_id thread, const char *name, size_t name_len,
               uint8_t phase, uint8_t cat, int64_t start_ns, int64_t end_ns,
               const struct fx_marker_schema *s, const union fx_marker_value *v)
{
    fx_str_id n;
    fx_schema_id schema;
    int rc = fx_profile_schema(p, s, &schema);
    if (rc == FX_OK)
        rc = str(p, name, name_len, &n);
    return rc == FX_OK ? fx_profile_marker(p, thread, n, phase, cat, start_ns, end_ns, schema, v)
                       : rc;
}

int fx_jvm_markers_gc(struct fx_profile *p, fx_thread_id thread, int64_t start_ns, int64_t end_ns,
                      const struct fx_jvm_gc *gc)
{
    const char *coll = gc->collector ? gc->collector : "unknown";
    union fx_marker_value v[4] = {{.i = gc->seq},
                                  {.s = FX_STR_NONE},
                                  {.i = gc->heap_before < 0 ? 0 : gc->heap_before},
                                  {.i = gc->heap_after < 0 ? 0 : gc->heap_after}};
    int rc = fx_profile_cstring(p, coll, &v[1].s);
    if (rc != FX_OK)
        return rc;
    return add(p, thread, FX_JVM_GC_NAME, strlen(FX_JVM_GC_NAME), FX_PHASE_INTERVAL, FX_CAT_GC,
               start_ns, end_ns, &gc_schema, v);
}

int fx_jvm_markers_jit(struct fx_profile *p, fx_thread_id thread, int64_t t_ns,
                       const struct fx_jvm_jit *j)
{
    union fx_marker_value v[3] = {{.s = FX_STR_NONE}, {.i = j->code_size}, {.i = j->inlined}};
    int rc = str(p, j->method, j->method_len, &v[0].s);
    if (rc != FX_OK)
        return rc;
    return add(p, thread, FX_JVM_JIT_NAME, strlen(FX_JVM_JIT_NAME), FX_PHASE_INSTANT, FX_CAT_JIT,
               t_ns, t_ns, &jit_schema, v);
}

int fx_jvm_markers_user(struct fx_profile *p, fx_thread_id thread, uint8_t phase, int64_t start_ns,
                        int64_t end_ns, const char *name, size_t name_len, const char *text,
                        size_t text_len)
{
    union fx_marker_value v[1];
    int rc = str(p, text, text_len, &v[0].s);
    if (rc != FX_OK)
        return rc;
    return add(p, thread, name ? name : "", name ? name_len : 0, phase, FX_CAT_OTHER, start_ns,
               end_ns, &user_schema, v);
}

int fx_jvm_markers_dump(struct fx_profile *p, fx_thread_id thread, int64_t start_ns, int64_t end_ns,
                        const struct fx_jvm_dump *d)
{
    union fx_marker_value v[4] = {{.s = FX_STR_NONE},
                                  {.i = d->samples},
                                  {.i = d->bytes},
                                  {.d = (double)(end_ns - start_ns) / 1e6}};
    int rc = fx_profile_cstring(p, d->path ? d->path : "", &v[0].s);
    if (rc != FX_OK)
        return rc;
    return add(p, thread, FX_JVM_DUMP_NAME, strlen(FX_JVM_DUMP_NAME), FX_PHASE_INTERVAL,
               FX_CAT_OTHER, start_ns, end_ns, &dump_schema, v);
}

int fx_jvm_markers_start(struct fx_profile *p, fx_thread_id thread, int64_t t_ns,
                         const struct fx_jvm_start *s)
{
    union fx_marker_value v[3] = {{.s = FX_STR_NONE}, {.s = FX_STR_NONE}, {.d = s->interval_ms}};
    int rc = fx_profile_cstring(p, s->engine ? s->engine : "", &v[0].s);
    if (rc == FX_OK)
        rc = fx_profile_cstring(p, s->mode ? s->mode : "", &v[1].s);
    if (rc != FX_OK)
        return rc;
    return add(p, thread, FX_JVM_START_NAME, strlen(FX_JVM_START_NAME), FX_PHASE_INSTANT,
               FX_CAT_OTHER, t_ns, t_ns, &start_schema, v);
}

/* --- issue 18: lock waits --- */

static const struct fx_marker_field lock_fields[] = {
        {"duration", "Waited", FX_FMT_DURATION},
        {"lockClass", "Lock class", FX_FMT_STRING},
        {"owner", "Owner thread", FX_FMT_STRING},
        {"kind", "Kind", FX_FMT_STRING},
};

static const struct fx_marker_schema lock_schema = {
        .name = FX_JVM_LOCK_SCHEMA,
        .tooltip_label = "Waited {marker.data.duration} for {marker.data.lockClass} "
                         "({marker.data.kind}, owner {marker.data.owner})",
        .table_label = "{marker.data.lockClass} ({marker.data.kind}) held by {marker.data.owner}",
        .chart_label = "{marker.data.lockClass}",
        .description = "A thread waited at least lock= for a lock. monitor: a synchronized block "
                       "or method (JVMTI MonitorContendedEnter to Entered), the owner read when "
                       "the wait began; park: Unsafe.park with a blocker (ReentrantLock, "
                       "ReentrantReadWriteLock, Semaphore, a Condition, a queue), the owner "
                       "being an AbstractOwnableSynchronizer's exclusive owner when the park "
                       "began. The stack is the waiting thread's. \"Idle wait\": a park of a "
                       "thread waiting for work (a pool thread in a queue's take, "
                       "ForkJoinPool.awaitWork), not contention.",
        .display = FX_DISPLAY_CHART | FX_DISPLAY_TABLE,
        .fields = lock_fields,
        .n_fields = sizeof(lock_fields) / sizeof(lock_fields[0]),
};

int fx_jvm_markers_lock(struct fx_profile *p, fx_thread_id thread, int64_t start_ns, int64_t end_ns,
                        const struct fx_jvm_lock *l)
{
    union fx_marker_value v[4] = {{.d = (double)(end_ns - start_ns) / 1e6},
                                  {.s = FX_STR_NONE},
                                  {.s = FX_STR_NONE},
                                  {.s = FX_STR_NONE}};
    int rc = fx_profile_string(p, l->lock_class, l->lock_class_len, &v[1].s);
    if (rc == FX_OK)
        rc = fx_profile_string(p, l->owner, l->owner_len, &v[2].s);
    if (rc == FX_OK)
        rc = fx_profile_cstring(p, l->kind, &v[3].s);
    if (rc != FX_OK)
        return rc;
    const char *name = l->idle ? FX_JVM_IDLE_NAME : FX_JVM_LOCK_NAME;
    return add(p, thread, name, strlen(name), FX_PHASE_INTERVAL, FX_CAT_IDLE, start_ns, end_ns,
               &lock_schema, v);
}

/* --- issue 22: virtual threads' waits --- */

static const struct fx_marker_field vtwait_fields[] = {
        {"duration", "Waited", FX_FMT_DURATION},
        {"vthread", "Virtual thread", FX_FMT_STRING},
        {"kind", "Kind", FX_FMT_STRING},
};

static const struct fx_marker_schema vtwait_schema = {
        .name = FX_JVM_VTWAIT_SCHEMA,
        /* The kind first: the track already names the virtual thread (issue 22 review). */
        .tooltip_label = "{marker.data.kind}: {marker.data.vthread} waited {marker.data.duration}",
        .table_label = "{marker.data.kind}: {marker.data.vthread} waited {marker.data.duration}",
        .chart_label = "{marker.data.kind}",
        .description = "A virtual thread was unmounted (parked, sleeping, blocked on I/O or a "
                       "lock) for at least vtwait=: from its unmount to when it could run again. "
                       "A sleep or timed park ends when its timeout made the thread runnable "
                       "(JDK 24+; at most there if an unpark woke it earlier), and a "
                       "'Waiting for a carrier' interval (kind carrier) follows until its next "
                       "mount; other waits end at that mount. The stack is the virtual "
                       "thread's where it waited, read at that mount; the kind (sleep, I/O, "
                       "park, blocked) is read from its top frames. A yield is no wait (the "
                       "thread stayed runnable): only its 'Waiting for a carrier' is shown.",
        .display = FX_DISPLAY_CHART | FX_DISPLAY_TABLE,
        .fields = vtwait_fields,
        .n_fields = sizeof(vtwait_fields) / sizeof(vtwait_fields[0]),
};

/* A virtual thread's interval of the vtwait schema, named name (a wait, or the carrier wait). */
static int vt_interval(struct fx_profile *p, fx_thread_id thread, const char *name,
                       enum fx_category cat, int64_t start_ns, int64_t end_ns, const char *vthread,
                       size_t vthread_len, const char *kind)
{
    union fx_marker_value v[3] = {
            {.d = (double)(end_ns - start_ns) / 1e6}, {.s = FX_STR_NONE}, {.s = FX_STR_NONE}};
    int rc = fx_profile_string(p, vthread, vthread_len, &v[1].s);
    if (rc == FX_OK)
        rc = fx_profile_cstring(p, kind, &v[2].s);
    if (rc != FX_OK)
        return rc;
    return add(p, thread, name, strlen(name), FX_PHASE_INTERVAL, cat, start_ns, end_ns,
               &vtwait_schema, v);
}

int fx_jvm_markers_vtwait(struct fx_profile *p, fx_thread_id thread, int64_t start_ns,
                          int64_t end_ns, const char *vthread, size_t vthread_len, const char *kind)
{
    return vt_interval(p, thread, FX_JVM_VTWAIT_NAME, FX_CAT_IDLE, start_ns, end_ns, vthread,
                       vthread_len, kind);
}

int fx_jvm_markers_vtcarrier(struct fx_profile *p, fx_thread_id thread, int64_t start_ns,
                             int64_t end_ns, const char *vthread, size_t vthread_len)
{
    return vt_interval(p, thread, FX_JVM_VTCARRIER_NAME, FX_CAT_OTHER, start_ns, end_ns, vthread,
                       vthread_len, "carrier");
}

static const struct fx_marker_field vtmounted_fields[] = {
        {"vthread", "Virtual thread", FX_FMT_STRING},
};

static const struct fx_marker_schema vtmounted_schema = {
        .name = FX_JVM_VTMOUNTED_SCHEMA,
        .tooltip_label = "{marker.data.vthread}",
        .table_label = "{marker.data.vthread}",
        .chart_label = "{marker.data.vthread}",
        .description = "The virtual thread this carrier ran, past the track cap (vtracks=): its "
                       "samples are under one root frame per name (trailing digits as *), so "
                       "this interval, from its first sample to one interval after its last, "
                       "says which one it was.",
        .display = FX_DISPLAY_CHART | FX_DISPLAY_TABLE,
        .fields = vtmounted_fields,
        .n_fields = sizeof(vtmounted_fields) / sizeof(vtmounted_fields[0]),
};

int fx_jvm_markers_vtmounted(struct fx_profile *p, fx_thread_id thread, int64_t start_ns,
                             int64_t end_ns, const char *vthread, size_t vthread_len)
{
    union fx_marker_value v[1] = {{.s = FX_STR_NONE}};
    int rc = fx_profile_string(p, vthread, vthread_len, &v[0].s);
    if (rc != FX_OK)
        return rc;
    return add(p, thread, FX_JVM_VTMOUNTED_NAME, strlen(FX_JVM_VTMOUNTED_NAME), FX_PHASE_INTERVAL,
               FX_CAT_JAVA, start_ns, end_ns, &vtmounted_schema, v);
}

/* --- counters --- */

static const struct fx_counter_desc counters[FX_JVM_COUNTER_COUNT] = {
        [FX_JVM_HEAP_USED] = {"Java heap used", "Memory",
                              "Runtime.totalMemory() - freeMemory(), sampled every 100 ms", "bytes",
                              "orange"},
        [FX_JVM_HEAP_COMMITTED] = {"Java heap committed", "Memory",
                                   "Runtime.totalMemory(), sampled every 100 ms", "bytes",
                                   "yellow"},
        [FX_JVM_RSS] = {"Process RSS", "Memory",
                        "Resident set size of the whole process (/proc/self/statm)", "bytes",
                        "purple"},
        [FX_JVM_CLASSES] = {"Loaded classes", "Java",
                            "Classes loaded and prepared so far (unloading is not subtracted)", "",
                            "green"},
        [FX_JVM_SAMPLE_RATE] = {"Samples per second", "Profiler",
                                "Samples fxagent recorded per second, all threads together", "",
                                "blue"},
};

const char *fx_jvm_markers_counter_name(enum fx_jvm_counter c)
{
    return (unsigned)c < FX_JVM_COUNTER_COUNT ? counters[c].name : NULL;
}

int fx_jvm_markers_counters(struct fx_profile *p, fx_counter_id ids[FX_JVM_COUNTER_COUNT])
{
    for (unsigned c = 0; c < FX_JVM_COUNTER_COUNT; c++) {
        int rc = fx_profile_counter(p, &counters[c], &ids[c]);
        if (rc != FX_OK)
            return rc;
    }
    return FX_OK;
}

/* --- issue 33: trace spans (fxagent.TraceContext) --- */

static const struct fx_marker_field span_fields[] = {
        {"trace_id", "Trace id", FX_FMT_STRING}, {"span_id", "Span id", FX_FMT_STRING},
        {"label1", "Label", FX_FMT_STRING},      {"label2", "Label", FX_FMT_STRING},
        {"label3", "Label", FX_FMT_STRING},      {"label4", "Label", FX_FMT_STRING},
};

static const struct fx_marker_schema span_schema = {
        .name = FX_JVM_SPAN_SCHEMA,
        .tooltip_label = "span {marker.data.span_id} of trace {marker.data.trace_id}",
        .table_label = "span {marker.data.span_id} trace {marker.data.trace_id} "
                       "{marker.data.label1} {marker.data.label2} {marker.data.label3} "
                       "{marker.data.label4}",
        .chart_label = "{marker.data.span_id}",
        .description = "A trace context set with fxagent.TraceContext, from the first sample "
                       "taken while it was set to 1 us after the last: select it to select its "
                       "samples. Labels are key=value.",
        .display = FX_DISPLAY_CHART | FX_DISPLAY_TABLE,
        .fields = span_fields,
        .n_fields = sizeof(span_fields) / sizeof(span_fields[0]),
};

int fx_jvm_markers_span(struct fx_profile *p, fx_thread_id thread, int64_t start_ns, int64_t end_ns,
                        const struct fx_jvm_span *s)
{
    union fx_marker_value v[2 + FX_JVM_SPAN_LABELS];
    const char *text[2 + FX_JVM_SPAN_LABELS] = {s->trace_id, s->span_id};
    memcpy(text + 2, s->label, sizeof(s->label));
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        int rc = fx_profile_cstring(p, text[i] ? text[i] : "", &v[i].s);
        if (rc != FX_OK)
            return rc;
    }
    return add(p, thread, FX_JVM_SPAN_NAME, strlen(FX_JVM_SPAN_NAME), FX_PHASE_INTERVAL,
               FX_CAT_OTHER, start_ns, end_ns, &span_schema, v);
}
