/* SPDX-License-Identifier: Apache-2.0 */
/* The OTLP profiles writer (fx_otlp.h). Every dictionary table is an fx_strtab of the entries'
 * encoded bytes: interning the encoding both deduplicates and numbers them, and the empty
 * encoding, interned first, is the zero value index 0 must hold. Samples are encoded as they
 * come into the open profile's buffer; a closed profile is appended to the scope's. Field
 * numbers are opentelemetry-proto's (profiles/v1development/profiles.proto,
 * collector/profiles/v1development/profiles_service.proto, common/v1, resource/v1). */
#include "fx_otlp.h"

#include <stdbool.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_pb.h"
#include "fx_strtab.h"

enum {
    REQUEST_RESOURCE_PROFILES = 1,
    REQUEST_DICTIONARY = 2,
    RESOURCE_PROFILES_RESOURCE = 1,
    RESOURCE_PROFILES_SCOPE_PROFILES = 2,
    RESOURCE_ATTRIBUTES = 1,
    KEY_VALUE_KEY = 1,
    KEY_VALUE_VALUE = 2,
    ANY_VALUE_STRING = 1,
    ANY_VALUE_INT = 3,
    SCOPE_PROFILES_SCOPE = 1,
    SCOPE_PROFILES_PROFILES = 2,
    SCOPE_NAME = 1,
    SCOPE_VERSION = 2,
    DICT_MAPPING = 1,
    DICT_LOCATION = 2,
    DICT_FUNCTION = 3,
    DICT_LINK = 4,
    DICT_STRING = 5,
    DICT_ATTRIBUTE = 6,
    DICT_STACK = 7,
    PROFILE_SAMPLE_TYPE = 1,
    PROFILE_SAMPLES = 2,
    PROFILE_TIME = 3,
    PROFILE_DURATION = 4,
    PROFILE_PERIOD_TYPE = 5,
    PROFILE_PERIOD = 6,
    PROFILE_ATTRIBUTES = 11,
    VALUE_TYPE_TYPE = 1,
    VALUE_TYPE_UNIT = 2,
    SAMPLE_STACK = 1,
    SAMPLE_ATTRIBUTES = 2,
    SAMPLE_LINK = 3,
    SAMPLE_VALUES = 4,
    SAMPLE_TIMESTAMPS = 5,
    STACK_LOCATIONS = 1,
    LOCATION_LINES = 3,
    LINE_FUNCTION = 1,
    LINE_LINE = 2,
    FUNCTION_NAME = 1,
    FUNCTION_SYSTEM_NAME = 2,
    FUNCTION_FILENAME = 3,
    FUNCTION_START_LINE = 4,
    ATTRIBUTE_KEY = 1,
    ATTRIBUTE_VALUE = 2,
    LINK_TRACE_ID = 1,
    LINK_SPAN_ID = 2,
};

enum {
    T_FUNCTION,
    T_LOCATION,
    T_STACK,
    T_ATTRIBUTE,
    T_COUNT
};

static const unsigned table_field[T_COUNT] = {DICT_FUNCTION, DICT_LOCATION, DICT_STACK,
                                              DICT_ATTRIBUTE};

struct fx_otlp {
    int err;
    bool open;
    struct fx_strtab strings, tables[T_COUNT];
    struct fx_strtab links;    /* Link encodings; [0] the zero link the spec asks for */
    struct fx_membuf resource; /* Resource's fields */
    struct fx_membuf profiles; /* ScopeProfiles.profiles, each closed profile */
    struct fx_membuf head;     /* the open profile's fields but its samples */
    struct fx_membuf samples;  /* the open profile's samples */
    struct fx_membuf msg, inner, scratch;
};

static int32_t str(struct fx_otlp *o, const char *s)
{
    uint32_t id = 0;
    if (o->err == FX_OK && s && *s)
        o->err = fx_strtab_intern(&o->strings, s, strlen(s), &id);
    return (int32_t)id;
}

/* Interns o->msg (an entry's encoding) into table t, empties it, and returns its index. */
static int entry(struct fx_otlp *o, unsigned t, int32_t *index)
{
    uint32_t id = 0;
    if (o->err == FX_OK)
        o->err = fx_strtab_intern(&o->tables[t], o->msg.data ? o->msg.data : "", o->msg.len, &id);
    o->msg.len = 0;
    if (o->err == FX_OK && id > INT32_MAX)
        o->err = FX_EFULL;
    *index = o->err == FX_OK ? (int32_t)id : 0;
    return o->err;
}

/* ---- the API ---- */

struct fx_otlp *fx_otlp_new(void)
{
    struct fx_otlp *o = fx_calloc(1, sizeof *o);
    uint32_t id;
    if (!o)
        return NULL;
    int err = fx_strtab_intern(&o->strings, "", 0, &id);
    for (unsigned t = 0; t < T_COUNT && err == FX_OK; t++)
        err = fx_strtab_intern(&o->tables[t], "", 0, &id);
    /* link_table[0]: the spec asks for 16 and 8 zero bytes, for strict codecs */
    static const unsigned char zeros[16];
    fx_pb_bytes(&err, &o->msg, LINK_TRACE_ID, zeros, 16);
    fx_pb_bytes(&err, &o->msg, LINK_SPAN_ID, zeros, 8);
    if (err == FX_OK)
        err = fx_strtab_intern(&o->links, o->msg.data, o->msg.len, &id);
    o->msg.len = 0;
    if (err != FX_OK) {
        fx_otlp_free(o);
        return NULL;
    }
    return o;
}

void fx_otlp_free(struct fx_otlp *o)
{
    if (!o)
        return;
    fx_strtab_destroy(&o->strings);
    fx_strtab_destroy(&o->links);
    for (unsigned t = 0; t < T_COUNT; t++)
        fx_strtab_destroy(&o->tables[t]);
    struct fx_membuf *bufs[] = {&o->resource, &o->profiles, &o->head,   &o->samples,
                                &o->msg,      &o->inner,    &o->scratch};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        fx_membuf_destroy(bufs[i]);
    fx_free(o);
}

static int resource_attr(struct fx_otlp *o, const char *key, const char *s, int64_t i)
{
    fx_pb_bytes(&o->err, &o->msg, KEY_VALUE_KEY, key, strlen(key));
    if (s)
        fx_pb_bytes(&o->err, &o->inner, ANY_VALUE_STRING, s, strlen(s));
    else
        fx_pb_int(&o->err, &o->inner, ANY_VALUE_INT, i);
    fx_pb_msg(&o->err, &o->msg, KEY_VALUE_VALUE, &o->inner);
    fx_pb_msg(&o->err, &o->resource, RESOURCE_ATTRIBUTES, &o->msg);
    return o->err;
}

int fx_otlp_resource_str(struct fx_otlp *o, const char *key, const char *value)
{
    return resource_attr(o, key, value ? value : "", 0);
}

int fx_otlp_resource_int(struct fx_otlp *o, const char *key, int64_t value)
{
    return resource_attr(o, key, NULL, value);
}

int fx_otlp_function(struct fx_otlp *o, const char *name, const char *file, int64_t start_line,
                     int32_t *index)
{
    int32_t n = str(o, name);
    fx_pb_int(&o->err, &o->msg, FUNCTION_NAME, n);
    fx_pb_int(&o->err, &o->msg, FUNCTION_SYSTEM_NAME, n);
    fx_pb_int(&o->err, &o->msg, FUNCTION_FILENAME, str(o, file));
    fx_pb_int(&o->err, &o->msg, FUNCTION_START_LINE, start_line);
    return entry(o, T_FUNCTION, index);
}

int fx_otlp_location(struct fx_otlp *o, int32_t function, int64_t line, int32_t *index)
{
    fx_pb_int(&o->err, &o->inner, LINE_FUNCTION, function);
    fx_pb_int(&o->err, &o->inner, LINE_LINE, line);
    fx_pb_msg(&o->err, &o->msg, LOCATION_LINES, &o->inner);
    return entry(o, T_LOCATION, index);
}

/* A packed repeated int32 (or int64) field from `v`; nothing when n is 0. */
static void packed(struct fx_otlp *o, struct fx_membuf *b, unsigned field, const int32_t *v32,
                   const int64_t *v64, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fx_pb_varint(&o->err, &o->scratch, (uint64_t)(v32 ? (int64_t)v32[i] : v64[i]));
    if (n)
        fx_pb_msg(&o->err, b, field, &o->scratch);
}

int fx_otlp_stack(struct fx_otlp *o, const int32_t *locations, size_t n, int32_t *index)
{
    packed(o, &o->msg, STACK_LOCATIONS, locations, NULL, n);
    return entry(o, T_STACK, index);
}

static int attr(struct fx_otlp *o, const char *key, const char *s, int64_t i, int32_t *index)
{
    fx_pb_int(&o->err, &o->msg, ATTRIBUTE_KEY, str(o, key));
    if (s)
        fx_pb_bytes(&o->err, &o->inner, ANY_VALUE_STRING, s, strlen(s));
    else
        fx_pb_int(&o->err, &o->inner, ANY_VALUE_INT, i);
    fx_pb_msg(&o->err, &o->msg, ATTRIBUTE_VALUE, &o->inner);
    return entry(o, T_ATTRIBUTE, index);
}

int fx_otlp_attr_str(struct fx_otlp *o, const char *key, const char *value, int32_t *index)
{
    return attr(o, key, value ? value : "", 0, index);
}

int fx_otlp_attr_int(struct fx_otlp *o, const char *key, int64_t value, int32_t *index)
{
    return attr(o, key, NULL, value, index);
}

static void value_type(struct fx_otlp *o, unsigned field, const char *type, const char *unit)
{
    fx_pb_int(&o->err, &o->inner, VALUE_TYPE_TYPE, str(o, type));
    fx_pb_int(&o->err, &o->inner, VALUE_TYPE_UNIT, str(o, unit));
    fx_pb_msg(&o->err, &o->head, field, &o->inner);
}

int fx_otlp_profile_begin(struct fx_otlp *o, const struct fx_otlp_profile *p)
{
    if (o->err == FX_OK && o->open)
        o->err = FX_EINVAL;
    if (o->err != FX_OK)
        return o->err;
    o->open = true;
    o->head.len = o->samples.len = 0;
    value_type(o, PROFILE_SAMPLE_TYPE, p->type, p->unit);
    fx_pb_fixed64(&o->err, &o->head, PROFILE_TIME, p->time_unix_nano);
    fx_pb_int(&o->err, &o->head, PROFILE_DURATION, (int64_t)p->duration_nano);
    if (p->period_type) {
        value_type(o, PROFILE_PERIOD_TYPE, p->period_type, p->period_unit);
        fx_pb_int(&o->err, &o->head, PROFILE_PERIOD, p->period);
    }
    return o->err;
}

int fx_otlp_link(struct fx_otlp *o, const uint8_t trace_id[16], const uint8_t span_id[8],
                 int32_t *index)
{
    uint32_t id = 0;
    fx_pb_bytes(&o->err, &o->msg, LINK_TRACE_ID, trace_id, 16);
    fx_pb_bytes(&o->err, &o->msg, LINK_SPAN_ID, span_id, 8);
    if (o->err == FX_OK)
        o->err = fx_strtab_intern(&o->links, o->msg.data, o->msg.len, &id);
    o->msg.len = 0;
    if (o->err == FX_OK && id > INT32_MAX)
        o->err = FX_EFULL;
    *index = o->err == FX_OK ? (int32_t)id : 0;
    return o->err;
}

int fx_otlp_sample(struct fx_otlp *o, int32_t stack, const int32_t *attrs, size_t nattrs,
                   const int64_t *values, const uint64_t *timestamps, size_t n)
{
    return fx_otlp_sample_linked(o, stack, attrs, nattrs, 0, values, timestamps, n);
}

int fx_otlp_sample_linked(struct fx_otlp *o, int32_t stack, const int32_t *attrs, size_t nattrs,
                          int32_t link, const int64_t *values, const uint64_t *timestamps, size_t n)
{
    if (o->err == FX_OK && !o->open)
        o->err = FX_EINVAL;
    fx_pb_int(&o->err, &o->msg, SAMPLE_STACK, stack);
    packed(o, &o->msg, SAMPLE_ATTRIBUTES, attrs, NULL, nattrs);
    if (link > 0)
        fx_pb_int(&o->err, &o->msg, SAMPLE_LINK, link);
    packed(o, &o->msg, SAMPLE_VALUES, NULL, values, n);
    if (timestamps && n) {
        fx_pb_tag(&o->err, &o->msg, SAMPLE_TIMESTAMPS, FX_PB_LEN);
        fx_pb_varint(&o->err, &o->msg, (uint64_t)n * 8);
        for (size_t i = 0; i < n; i++) {
            unsigned char le[8];
            for (int k = 0; k < 8; k++)
                le[k] = (unsigned char)(timestamps[i] >> (8 * k));
            fx_pb_put(&o->err, &o->msg, le, sizeof le);
        }
    }
    fx_pb_msg(&o->err, &o->samples, PROFILE_SAMPLES, &o->msg);
    return o->err;
}

int fx_otlp_profile_end(struct fx_otlp *o, const int32_t *attrs, size_t nattrs)
{
    if (o->err == FX_OK && !o->open)
        o->err = FX_EINVAL;
    packed(o, &o->head, PROFILE_ATTRIBUTES, attrs, NULL, nattrs);
    /* A message is its fields in any order: the head, then the samples, under one length. */
    fx_pb_tag(&o->err, &o->profiles, SCOPE_PROFILES_PROFILES, FX_PB_LEN);
    fx_pb_varint(&o->err, &o->profiles, (uint64_t)o->head.len + o->samples.len);
    fx_pb_put(&o->err, &o->profiles, o->head.data, o->head.len);
    fx_pb_put(&o->err, &o->profiles, o->samples.data, o->samples.len);
    o->head.len = o->samples.len = 0;
    o->open = false;
    return o->err;
}

/* Table t's entries as repeated field `field` of b (index 0, the empty entry, included). */
static void table(struct fx_otlp *o, struct fx_membuf *b, unsigned field, const struct fx_strtab *t)
{
    for (uint32_t i = 0; i < t->count && o->err == FX_OK; i++) {
        size_t len;
        const char *s = fx_strtab_get(t, i, &len);
        fx_pb_bytes(&o->err, b, field, s, len);
    }
}

static void dictionary(struct fx_otlp *o, struct fx_membuf *d)
{
    fx_pb_bytes(&o->err, d, DICT_MAPPING, "", 0); /* mapping_table[0]: no mappings */
    for (unsigned t = 0; t < T_COUNT; t++)
        table(o, d, table_field[t], &o->tables[t]);
    table(o, d, DICT_LINK, &o->links);
    table(o, d, DICT_STRING, &o->strings);
}

int fx_otlp_finish(struct fx_otlp *o, const char *scope_name, const char *scope_version,
                   struct fx_sink out)
{
    if (o->err == FX_OK && o->open)
        o->err = FX_EINVAL;
    struct fx_membuf *m = &o->msg, *scope = &o->inner, *rp = &o->scratch;
    m->len = scope->len = rp->len = 0;
    /* ResourceProfiles: the resource, then one ScopeProfiles (its scope, then the profiles,
     * streamed from their buffer after the lengths) */
    fx_pb_msg(&o->err, rp, RESOURCE_PROFILES_RESOURCE, &o->resource);
    fx_pb_bytes(&o->err, scope, SCOPE_NAME, scope_name, strlen(scope_name));
    if (scope_version)
        fx_pb_bytes(&o->err, scope, SCOPE_VERSION, scope_version, strlen(scope_version));
    fx_pb_msg(&o->err, m, SCOPE_PROFILES_SCOPE, scope);
    size_t scope_len = m->len + o->profiles.len;
    fx_pb_tag(&o->err, rp, RESOURCE_PROFILES_SCOPE_PROFILES, FX_PB_LEN);
    fx_pb_varint(&o->err, rp, scope_len);
    struct fx_membuf head = {0};
    fx_pb_tag(&o->err, &head, REQUEST_RESOURCE_PROFILES, FX_PB_LEN);
    fx_pb_varint(&o->err, &head, rp->len + scope_len);
    struct fx_membuf dict = {0}, content = {0};
    dictionary(o, &content);
    fx_pb_msg(&o->err, &dict, REQUEST_DICTIONARY, &content);
    const struct fx_membuf *parts[] = {&head, rp, m, &o->profiles, &dict};
    for (size_t i = 0; i < sizeof parts / sizeof *parts && o->err == FX_OK; i++)
        if (parts[i]->len)
            o->err = out.write(out.ctx, parts[i]->data, parts[i]->len);
    fx_membuf_destroy(&head);
    fx_membuf_destroy(&dict);
    fx_membuf_destroy(&content);
    return o->err;
}
