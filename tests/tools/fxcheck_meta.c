/* SPDX-License-Identifier: Apache-2.0 */
/* fxcheck: meta — the version stamp, categories (a grey default, "Other" at subcategory 0),
 * sample units, thread index lists and marker schemas (PROFILE-FORMAT.md §4, §10.2, §12.1). */
#include "fxcheck.h"

#include <stdio.h>
#include <string.h>

#define PROCESSED_VERSION 66

static bool in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list))
            return true;
    return false;
}

static const char *const category_colors[] = {
        "transparent", "purple",  "green", "orange",   "yellow",   "lightblue", "blue",
        "brown",       "magenta", "red",   "lightred", "darkgrey", "grey",      NULL};

static const char *const marker_displays[] = {
        "marker-chart",     "marker-table", "timeline-overview",
        "timeline-memory",  "timeline-ipc", "timeline-fileio",
        "timeline-network", "stack-chart",  NULL};

static const char *const field_formats[] = {"url",
                                            "file-path",
                                            "sanitized-string",
                                            "string",
                                            "unique-string",
                                            "flow-id",
                                            "terminating-flow-id",
                                            "duration",
                                            "time",
                                            "seconds",
                                            "milliseconds",
                                            "microseconds",
                                            "nanoseconds",
                                            "bytes",
                                            "percentage",
                                            "integer",
                                            "decimal",
                                            "hexadecimal",
                                            "pid",
                                            "tid",
                                            "list",
                                            NULL};

/* §10.1: special-cased by the front-end or rewritten by upgraders. */
static const char *const reserved_types[] = {
        "Network", "IPC",  "CompositorScreenshot", "GCMajor", "GCMinor", "GCSlice",
        "FileIO",  "Text", "UserTiming",           "Jank",    "tracing", "PreferenceRead",
        NULL};

bool ck_reserved_type(const char *type)
{
    return in_list(type, reserved_types);
}

static const cJSON *want(struct ck *c, const cJSON *obj, const char *path, const char *key,
                         bool (*is)(const cJSON *), const char *what)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) {
        ck_fail(c, path, "missing", "'%s' is missing (%s)", key, what);
        return NULL;
    }
    if (!is(v)) {
        ck_fail(c, path, "type", "'%s' must be %s", key, what);
        return NULL;
    }
    return v;
}

static bool is_number(const cJSON *v)
{
    return cJSON_IsNumber(v);
}

static bool is_string(const cJSON *v)
{
    return cJSON_IsString(v);
}

static bool is_array(const cJSON *v)
{
    return cJSON_IsArray(v);
}

static void check_category(struct ck *c, const cJSON *cat, long i, bool *grey)
{
    char path[64];
    snprintf(path, sizeof path, "meta.categories[%ld]", i);
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(cat, "name");
    const cJSON *color = cJSON_GetObjectItemCaseSensitive(cat, "color");
    const cJSON *subs = cJSON_GetObjectItemCaseSensitive(cat, "subcategories");
    if (!cJSON_IsString(name))
        ck_fail(c, path, "category", "'name' must be a string");
    if (!cJSON_IsString(color))
        ck_fail(c, path, "category", "'color' must be a string");
    else if (!in_list(color->valuestring, category_colors))
        ck_fail(c, path, "category", "unknown color '%s' (drawn grey)", color->valuestring);
    else if (!strcmp(color->valuestring, "grey"))
        *grey = true;
    if (!cJSON_IsArray(subs) || cJSON_GetArraySize(subs) == 0) {
        ck_fail(c, path, "category",
                "'subcategories' must be a non-empty array (index 0 is \"Other\")");
        return;
    }
    c->n_subcats[i] = cJSON_GetArraySize(subs);
    for (const cJSON *s = subs->child; s; s = s->next)
        if (!cJSON_IsString(s))
            ck_fail(c, path, "category", "subcategory names must be strings");
}

static void check_categories(struct ck *c)
{
    const cJSON *cats = want(c, c->meta, "meta", "categories", is_array, "an array");
    if (!cats) {
        c->n[T_CAT] = -1; /* reported once here, not at every category index */
        return;
    }
    long n = cJSON_GetArraySize(cats);
    c->n[T_CAT] = n;
    c->n_subcats = ck_xcalloc((size_t)n, sizeof *c->n_subcats);
    if (n == 0 || n > 256)
        ck_fail(c, "meta.categories", "category", "%ld categories (1..256 allowed)", n);
    bool grey = false;
    long i = 0;
    for (const cJSON *cat = cats->child; cat; cat = cat->next, i++)
        check_category(c, cat, i, &grey);
    if (!grey)
        ck_fail(c, "meta.categories", "category",
                "no grey category: the default category index becomes -1 (§12.1)");
}

static void check_sample_units(struct ck *c)
{
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(c->meta, "sampleUnits");
    if (!u)
        return;
    if (!cJSON_IsObject(u)) {
        ck_fail(c, "meta.sampleUnits", "type", "must be an object");
        return;
    }
    want(c, u, "meta.sampleUnits", "time", is_string, "a string");
    want(c, u, "meta.sampleUnits", "eventDelay", is_string, "a string");
    const cJSON *cpu = want(c, u, "meta.sampleUnits", "threadCPUDelta", is_string, "a string");
    static const char *const units[] = {"ns", "\xC2\xB5s", "variable CPU cycles", NULL};
    if (cpu && !in_list(cpu->valuestring, units))
        ck_fail(c, "meta.sampleUnits.threadCPUDelta", "cpu-delta",
                "'%s' is not one of \"ns\", \"\\u00b5s\" (U+00B5), \"variable CPU cycles\"",
                cpu->valuestring);
}

static void check_thread_list(struct ck *c, const char *key)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(c->meta, key);
    if (!a)
        return;
    char path[64];
    snprintf(path, sizeof path, "meta.%s", key);
    if (!cJSON_IsArray(a)) {
        ck_fail(c, path, "visible-threads", "must be an array of thread indexes");
        return;
    }
    long i = 0;
    for (const cJSON *e = a->child; e; e = e->next, i++) {
        if (!cJSON_IsNumber(e) || !ck_is_int(e->valuedouble) || e->valuedouble < 0 ||
            e->valuedouble >= (double)c->n[T_THREAD])
            ck_fail(c, path, "visible-threads", "element %ld is not a thread index (0..%ld)", i,
                    c->n[T_THREAD] - 1);
    }
}

/* Label templates accept only a few placeholders (§10.2); anything else renders empty. */
static bool placeholder_ok(const char *p, size_t len)
{
    static const char *const plain[] = {"marker.name",     "marker.start",    "marker.end",
                                        "marker.duration", "marker.category", NULL};
    while (len && *p == ' ')
        p++, len--;
    while (len && p[len - 1] == ' ')
        len--;
    for (const char *const *q = plain; *q; q++)
        if (strlen(*q) == len && !strncmp(p, *q, len))
            return true;
    const char *data = "marker.data.";
    size_t dl = strlen(data);
    if (len <= dl || strncmp(p, data, dl))
        return false;
    for (size_t k = dl; k < len; k++) {
        char ch = p[k];
        if (ch == ' ' || ch == '?')
            return memchr(p + k, ':', len - k) != NULL && memchr(p + k, '\'', len - k) != NULL;
        if (!(ch == '_' || ch == '$' || (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
              (ch >= 'A' && ch <= 'Z')))
            return false;
    }
    return true;
}

static void check_label(struct ck *c, const char *path, const cJSON *schema, const char *key)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(schema, key);
    if (!l)
        return;
    if (!cJSON_IsString(l)) {
        ck_fail(c, path, "marker-schema", "'%s' must be a string", key);
        return;
    }
    for (const char *s = l->valuestring; (s = strchr(s, '{')); s++) {
        const char *e = strchr(s, '}');
        if (!e || !placeholder_ok(s + 1, (size_t)(e - s - 1))) {
            ck_fail(c, path, "marker-schema", "'%s' has an unsupported placeholder in \"%s\"", key,
                    l->valuestring);
            return;
        }
    }
}

static void check_field(struct ck *c, const char *path, const cJSON *f)
{
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(f, "key");
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(f, "format");
    if (!cJSON_IsString(key))
        ck_fail(c, path, "marker-schema", "a field without a string 'key'");
    else if (!strcmp(key->valuestring, "cause") || !strcmp(key->valuestring, "type"))
        ck_fail(c, path, "marker-cause",
                "field key '%s' collides with the front-end's data.%s (use another key)",
                key->valuestring, key->valuestring);
    if (cJSON_IsString(fmt)) {
        if (!in_list(fmt->valuestring, field_formats))
            ck_fail(c, path, "marker-schema", "unknown field format '%s'", fmt->valuestring);
    } else if (!cJSON_IsObject(fmt)) {
        ck_fail(c, path, "marker-schema", "field '%s' has no format",
                cJSON_IsString(key) ? key->valuestring : "?");
    }
}

static void check_schema(struct ck *c, const cJSON *s, long i)
{
    char path[96];
    snprintf(path, sizeof path, "meta.markerSchema[%ld]", i);
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(s, "name");
    if (!cJSON_IsString(name)) {
        ck_fail(c, path, "marker-schema", "'name' must be a string");
        return;
    }
    if (ck_reserved_type(name->valuestring))
        ck_fail(c, path, "reserved-type", "schema name '%s' is reserved by the front-end (§10.1)",
                name->valuestring);
    const cJSON *disp = cJSON_GetObjectItemCaseSensitive(s, "display");
    if (!cJSON_IsArray(disp))
        ck_fail(c, path, "marker-schema", "'display' must be an array");
    else
        for (const cJSON *d = disp->child; d; d = d->next)
            if (!cJSON_IsString(d) || !in_list(d->valuestring, marker_displays))
                ck_fail(c, path, "marker-schema", "unknown display location");
    const cJSON *fields = cJSON_GetObjectItemCaseSensitive(s, "fields");
    if (!cJSON_IsArray(fields))
        ck_fail(c, path, "marker-schema", "'fields' must be an array");
    else
        for (const cJSON *f = fields->child; f; f = f->next)
            check_field(c, path, f);
    check_label(c, path, s, "tooltipLabel");
    check_label(c, path, s, "tableLabel");
    check_label(c, path, s, "chartLabel");
}

static void check_schemas(struct ck *c)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(c->meta, "markerSchema");
    if (!a) {
        ck_fail(c, "meta", "missing", "'markerSchema' is missing (loading fails, pitfall 4)");
        return;
    }
    if (!cJSON_IsArray(a)) {
        ck_fail(c, "meta.markerSchema", "type", "must be an array");
        return;
    }
    c->schemas = a;
    long i = 0;
    for (const cJSON *s = a->child; s; s = s->next, i++)
        check_schema(c, s, i);
}

const cJSON *ck_schema_find(const struct ck *c, const char *type)
{
    if (!c->schemas)
        return NULL;
    for (const cJSON *s = c->schemas->child; s; s = s->next) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(s, "name");
        if (cJSON_IsString(name) && !strcmp(name->valuestring, type))
            return s;
    }
    return NULL;
}

static void check_extra(struct ck *c)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(c->meta, "extra");
    if (!x)
        return;
    if (!cJSON_IsArray(x)) {
        ck_fail(c, "meta.extra", "type", "must be an array of {label, entries}");
        return;
    }
    for (const cJSON *g = x->child; g; g = g->next) {
        const cJSON *entries = cJSON_GetObjectItemCaseSensitive(g, "entries");
        if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(g, "label")) ||
            !cJSON_IsArray(entries)) {
            ck_fail(c, "meta.extra", "type", "a group needs a string 'label' and 'entries' array");
            continue;
        }
        for (const cJSON *e = entries->child; e; e = e->next)
            if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "label")) ||
                !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "format")) ||
                !cJSON_GetObjectItemCaseSensitive(e, "value"))
                ck_fail(c, "meta.extra", "type", "an entry needs 'label', 'format' and 'value'");
    }
}

/* Optional flags the front-end tests for exactly true or false (symbolicated === false asks
 * Mozilla's symbol server). */
static void check_flags(struct ck *c)
{
    static const char *const flags[] = {"symbolicated", "usesOnlyOneStackType",
                                        "sourceCodeIsNotOnSearchfox", "keepProfileThreadOrder"};
    for (size_t k = 0; k < sizeof flags / sizeof *flags; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->meta, flags[k]);
        if (v && !cJSON_IsBool(v))
            ck_fail(c, "meta", "type", "'%s' must be a boolean when present", flags[k]);
    }
}

void ck_meta(struct ck *c)
{
    if (!c->meta) {
        c->n[T_CAT] = -1;
        return;
    }
    const cJSON *v = want(c, c->meta, "meta", "preprocessedProfileVersion", is_number, "a number");
    if (v && v->valuedouble != PROCESSED_VERSION)
        ck_fail(c, "meta.preprocessedProfileVersion", "version",
                "%g, but fxagent writes the v%d shape", v->valuedouble, PROCESSED_VERSION);
    want(c, c->meta, "meta", "interval", is_number, "a number (ms)");
    want(c, c->meta, "meta", "startTime", is_number, "a number (epoch ms)");
    want(c, c->meta, "meta", "processType", is_number, "a number (not the thread's string)");
    want(c, c->meta, "meta", "product", is_string, "a string");
    want(c, c->meta, "meta", "stackwalk", is_number, "0 or 1");
    want(c, c->meta, "meta", "version", is_number, "a number");
    check_categories(c);
    check_sample_units(c);
    check_thread_list(c, "initialVisibleThreads");
    check_thread_list(c, "initialSelectedThreads");
    check_schemas(c);
    check_extra(c);
    check_flags(c);
}
