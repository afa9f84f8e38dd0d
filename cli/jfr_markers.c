/* SPDX-License-Identifier: Apache-2.0 */
/* JFR events with a duration as markers (issue 35): jdk.ThreadPark, jdk.JavaMonitorEnter,
 * jdk.JavaMonitorWait and jdk.ThreadSleep on the waiting thread's track, each with the stack
 * it waited in (data.cause) and what it waited for (the parked-on or monitor class, the
 * sleep's length); jdk.GarbageCollection (no thread of its own) on the main thread's track
 * with the collector's name and the cause. The marker is named as the event type, so its
 * count reads against `jfr summary`'s. Fields are found by name in each chunk's metadata. */
#include "fxprof.h"

#include <stdio.h>
#include <string.h>

#include "jfr_profile.h"

static const struct fx_marker_field fields[] = {{"detail", "Detail", FX_FMT_STRING}};

static const struct fx_marker_schema schema = {
        .name = "FxJfrEvent",
        .tooltip_label = "{marker.name}: {marker.data.detail}",
        .table_label = "{marker.name}: {marker.data.detail}",
        .chart_label = "{marker.data.detail}",
        .description = "A JFR event with a duration (fxprof convert of a recording)",
        .display = FX_DISPLAY_CHART | FX_DISPLAY_TABLE | FX_DISPLAY_TIMELINE_OVERVIEW,
        .fields = fields,
        .n_fields = 1};

static const struct {
    const char *type, *thread, *detail, *detail2;
    uint8_t category;
} types[JFR_MARKER_TYPES] = {
        {"jdk.ThreadPark", "eventThread", "parkedClass", NULL, FX_CAT_IDLE},
        {"jdk.JavaMonitorEnter", "eventThread", "monitorClass", NULL, FX_CAT_IDLE},
        {"jdk.JavaMonitorWait", "eventThread", "monitorClass", NULL, FX_CAT_IDLE},
        {"jdk.ThreadSleep", "eventThread", "time", NULL, FX_CAT_IDLE},
        {"jdk.GarbageCollection", NULL, "name", "cause", FX_CAT_GC},
};

void fx_jfr_markers_layout(struct conv *c)
{
    for (unsigned i = 0; i < JFR_MARKER_TYPES; i++) {
        uint32_t k = fx_jfr_class_find(c->r, types[i].type);
        c->mk[i] = (struct mk_fields){
                .cls = k,
                .time = fx_jfr_field(c->r, k, "startTime"),
                .duration = fx_jfr_field(c->r, k, "duration"),
                .thread = types[i].thread ? fx_jfr_field(c->r, k, types[i].thread) : -1,
                .stack = fx_jfr_field(c->r, k, "stackTrace"),
                .detail = fx_jfr_field(c->r, k, types[i].detail)};
    }
}

/* A value as text: a string, a number, a Class's name, or the first string of a pool entry
 * (GC names and causes are pool entries holding one string). */
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
        if (fx_jfr_profile_deref(c, v, f, 0, eb) != FX_OK)
            return;
        struct fx_jfr_obj o;
        fx_jfr_deref(c->r, v, &o);
        if (c->l.c_name >= 0 && (int)fx_jfr_field_count(c->r, o.cls) > c->l.c_name &&
            !strcmp(fx_jfr_class_name(c->r, o.cls), "java.lang.Class")) {
            fx_jfr_profile_symbol(c, &f[c->l.c_name], c->buf2, eb);
            size_t len = strnlen(c->buf2, cap - 1);
            memcpy(buf, c->buf2, len);
            buf[len] = '\0';
            for (char *s = buf; *s; s++)
                *s = *s == '/' ? '.' : *s;
            return;
        }
        for (uint32_t i = 0; i < fx_jfr_field_count(c->r, o.cls); i++)
            if (f[i].kind == FX_JFR_STRING && fx_jfr_string(c->r, &f[i], buf, cap, NULL) == FX_OK)
                return;
    }
}

int fx_jfr_markers_event(struct conv *c, const struct fx_jfr_obj *ev, struct fx_errbuf *eb)
{
    unsigned i = 0;
    while (i < JFR_MARKER_TYPES && c->mk[i].cls != ev->cls)
        i++;
    const struct mk_fields *m = &c->mk[i];
    uint32_t n = fx_jfr_field_count(c->r, ev->cls);
    if (i == JFR_MARKER_TYPES || m->time < 0 || m->duration < 0 || n > 16)
        return 0;
    struct fx_jfr_value v[16];
    int rc = fx_jfr_fields(c->r, ev, v, n, eb);
    fx_thread_id th = c->main_thread;
    if (rc == FX_OK && m->thread >= 0)
        rc = fx_jfr_profile_thread(c, &v[m->thread], false, &th, eb);
    else if (rc == FX_OK && !c->any_thread)
        rc = fx_jfr_profile_thread(c, &(struct fx_jfr_value){.kind = FX_JFR_REF}, false, &th, eb);
    char detail[256] = "", d2[128] = "";
    if (m->detail >= 0)
        describe(c, &v[m->detail], detail, sizeof detail, eb);
    if (types[i].category == FX_CAT_IDLE && m->detail >= 0 && v[m->detail].kind == FX_JFR_INT)
        snprintf(detail, sizeof detail, "%.3f ms", (double)v[m->detail].i / 1e6);
    int f2 = types[i].detail2 ? fx_jfr_field(c->r, ev->cls, types[i].detail2) : -1;
    if (f2 >= 0) {
        describe(c, &v[f2], d2, sizeof d2, eb);
        size_t len = strlen(detail);
        snprintf(detail + len, sizeof detail - len, " (%s)", d2);
    }
    fx_schema_id sid;
    union fx_marker_value val;
    fx_str_id name;
    if (rc == FX_OK)
        rc = fx_profile_schema(c->p, &schema, &sid);
    if (rc == FX_OK)
        rc = fx_profile_cstring(c->p, detail, &val.s);
    if (rc == FX_OK)
        rc = fx_profile_cstring(c->p, types[i].type, &name);
    int64_t t0 = fx_jfr_ticks_to_ns(c->r, v[m->time].i);
    int64_t t1 = fx_jfr_ticks_to_ns(c->r, v[m->time].i + v[m->duration].i);
    if (rc == FX_OK)
        rc = fx_profile_marker(c->p, th, name, FX_PHASE_INTERVAL, types[i].category, t0, t1, sid,
                               &val);
    fx_stack_id st;
    if (rc == FX_OK && m->stack >= 0 && v[m->stack].kind == FX_JFR_REF && v[m->stack].i != 0 &&
        fx_jfr_profile_stack(c, &v[m->stack], false, &st, eb) == FX_OK)
        rc = fx_profile_marker_stack(c->p, th, st);
    if (rc != FX_OK)
        return rc;
    c->markers++;
    return 1;
}
