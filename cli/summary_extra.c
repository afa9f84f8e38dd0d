/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof summary's profile-wide parts: the totals of each view in its own unit (issue 30: the
 * same figures as the agent's exit line and Profile Info's "Samples in this file"), and the
 * agent's counters (meta.extra), as text and as JSON. */
#include "fxprof.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *mode_samples(const cJSON *root)
{
    return strcmp(fx_pfile_mode(root), "wall") ? "CPU samples" : "wall samples";
}

void fx_summary_print_totals(const cJSON *root, const struct fx_pfile_totals *t)
{
    const cJSON *interval = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(root, "meta"), "interval");
    printf("%.0f %s", t->samples, mode_samples(root));
    if (cJSON_IsNumber(interval))
        printf(" (each one interval of %g ms; [idle] apart)", interval->valuedouble);
    if (t->idle > 0)
        printf("; %.0f [idle] samples besides (threads off the CPU), in no view", t->idle);
    if (t->waits > 0 || t->wait_ms > 0)
        printf("; lock waits: %.0f waits, %.1f ms", t->waits, t->wait_ms);
    if (t->idle_waits > 0 || t->idle_wait_ms > 0)
        printf("; idle waits (waiting for work, not lock waits): %.0f waits, %.1f ms",
               t->idle_waits, t->idle_wait_ms);
    if (t->vt_waits > 0)
        printf("; virtual-thread waits: %.0f, %.1f ms", t->vt_waits, t->vt_wait_ms);
    if (t->allocations > 0)
        printf("; allocations: %.0f samples, %.0f bytes (estimated); live at the end: %.0f bytes",
               t->allocations, t->alloc_bytes, t->live_bytes);
    printf("\n");
}

static cJSON *view(cJSON *views, const char *name, const char *unit)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(views, name, o);
    cJSON_AddStringToObject(o, "unit", unit);
    return o;
}

cJSON *fx_summary_json_totals(const cJSON *root, const struct fx_pfile_totals *t)
{
    const cJSON *interval = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(root, "meta"), "interval");
    cJSON *views = cJSON_CreateObject();
    cJSON *o = view(views, "cpu", "samples");
    cJSON_AddStringToObject(o, "counts", mode_samples(root));
    cJSON_AddNumberToObject(o, "samples", t->samples);
    cJSON_AddNumberToObject(o, "withoutStack", t->without_stack);
    if (cJSON_IsNumber(interval))
        cJSON_AddNumberToObject(o, "ms", t->samples * interval->valuedouble);
    o = view(views, "idle", "samples");
    cJSON_AddNumberToObject(o, "samples", t->idle);
    o = view(views, "lock", "ms");
    cJSON_AddNumberToObject(o, "waits", t->waits);
    cJSON_AddNumberToObject(o, "ms", round(t->wait_ms * 1000) / 1000);
    o = view(views, "idlewait", "ms");
    cJSON_AddNumberToObject(o, "waits", t->idle_waits);
    cJSON_AddNumberToObject(o, "ms", round(t->idle_wait_ms * 1000) / 1000);
    o = view(views, "vtwait", "ms");
    cJSON_AddNumberToObject(o, "waits", t->vt_waits);
    cJSON_AddNumberToObject(o, "ms", round(t->vt_wait_ms * 1000) / 1000);
    o = view(views, "alloc", "bytes");
    cJSON_AddNumberToObject(o, "samples", t->allocations);
    cJSON_AddNumberToObject(o, "bytes", t->alloc_bytes);
    o = view(views, "live", "bytes");
    cJSON_AddNumberToObject(o, "samples", t->live);
    cJSON_AddNumberToObject(o, "bytes", t->live_bytes);
    return views;
}

static void print_value(const cJSON *v)
{
    if (cJSON_IsString(v)) {
        fx_cli_put_escaped(stdout, v->valuestring);
    } else if (cJSON_IsNumber(v)) {
        printf("%.15g", v->valuedouble);
    } else {
        char *s = cJSON_PrintUnformatted(v);
        fx_cli_put_escaped(stdout, s ? s : "?");
        cJSON_free(s);
    }
}

/* meta.extra: [{label, entries: [{label, format, value}]}], where the agent puts its ASGCT
 * outcome counts and drops. */
static bool is_zero(const cJSON *v)
{
    return cJSON_IsNumber(v) && v->valuedouble == 0;
}

void fx_summary_print_extra(const struct cJSON *root, bool all)
{
    const cJSON *extra = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(root, "meta"), "extra");
    if (!cJSON_IsArray(extra) || !extra->child)
        return;
    printf("\nProfile info (meta.extra):\n");
    const cJSON *group, *e;
    unsigned hidden = 0;
    cJSON_ArrayForEach(group, extra)
    {
        const cJSON *gl = cJSON_GetObjectItemCaseSensitive(group, "label");
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(group, "entries"))
        {
            const cJSON *el = cJSON_GetObjectItemCaseSensitive(e, "label");
            if (!all && is_zero(cJSON_GetObjectItemCaseSensitive(e, "value"))) {
                hidden++;
                continue;
            }
            printf("  ");
            fx_cli_put_escaped(stdout, cJSON_IsString(gl) ? gl->valuestring : "?");
            printf(": ");
            fx_cli_put_escaped(stdout, cJSON_IsString(el) ? el->valuestring : "?");
            printf(": ");
            print_value(cJSON_GetObjectItemCaseSensitive(e, "value"));
            printf("\n");
        }
    }
    if (hidden)
        printf("  (%u counters that are zero not shown; --all shows them)\n", hidden);
}

/* meta.extra flattened to {group, label, value}, zero counters left out unless --all. */
cJSON *fx_summary_json_extra(const struct cJSON *root, bool all)
{
    cJSON *arr = cJSON_CreateArray();
    const cJSON *group, *e;
    cJSON_ArrayForEach(group, cJSON_GetObjectItemCaseSensitive(
                                      cJSON_GetObjectItemCaseSensitive(root, "meta"), "extra"))
    {
        const cJSON *gl = cJSON_GetObjectItemCaseSensitive(group, "label");
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(group, "entries"))
        {
            const cJSON *el = cJSON_GetObjectItemCaseSensitive(e, "label");
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "value");
            if (!all && is_zero(v))
                continue;
            cJSON *o = cJSON_CreateObject();
            cJSON_AddItemToArray(arr, o);
            cJSON_AddStringToObject(o, "group", cJSON_IsString(gl) ? gl->valuestring : "?");
            cJSON_AddStringToObject(o, "label", cJSON_IsString(el) ? el->valuestring : "?");
            cJSON_AddItemToObject(o, "value", v ? cJSON_Duplicate(v, true) : cJSON_CreateNull());
        }
    }
    return arr;
}
