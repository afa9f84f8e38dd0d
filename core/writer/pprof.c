/* SPDX-License-Identifier: Apache-2.0 */
/* The pprof writer (fx_pprof.h). Samples, locations and functions are encoded as protobuf
 * messages the moment they are added, each into its own buffer; strings are interned (index 0
 * is "", as profile.proto requires) and written last with the profile's scalar fields. Field
 * order does not matter to a protobuf reader, so the buffers are simply concatenated. The first
 * error is sticky: every later call returns it and finish writes nothing.
 * Tests: it.fxprof_convert, it.push. */
#include "fx_pprof.h"

#include <stdbool.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_pb.h"
#include "fx_strtab.h"

/* profile.proto field numbers. */
enum {
    PROFILE_SAMPLE_TYPE = 1,
    PROFILE_SAMPLE = 2,
    PROFILE_LOCATION = 4,
    PROFILE_FUNCTION = 5,
    PROFILE_STRING_TABLE = 6,
    PROFILE_TIME_NANOS = 9,
    PROFILE_DURATION_NANOS = 10,
    PROFILE_PERIOD_TYPE = 11,
    PROFILE_PERIOD = 12,
    PROFILE_COMMENT = 13,
    PROFILE_DEFAULT_SAMPLE_TYPE = 14,
    VALUE_TYPE_TYPE = 1,
    VALUE_TYPE_UNIT = 2,
    SAMPLE_LOCATION_ID = 1,
    SAMPLE_VALUE = 2,
    SAMPLE_LABEL = 3,
    LABEL_KEY = 1,
    LABEL_STR = 2,
    LOCATION_ID = 1,
    LOCATION_LINE = 4,
    LINE_FUNCTION_ID = 1,
    LINE_LINE = 2,
    FUNCTION_ID = 1,
    FUNCTION_NAME = 2,
    FUNCTION_SYSTEM_NAME = 3,
    FUNCTION_FILENAME = 4,
    FUNCTION_START_LINE = 5,
};

struct fx_pprof {
    int err;
    unsigned ntypes;
    int default_type; /* index + 1; 0: none */
    int64_t type[FX_PPROF_MAX_TYPES], unit[FX_PPROF_MAX_TYPES];
    bool sampled;
    struct fx_strtab strings;
    struct fx_membuf samples, locations, functions;
    struct fx_membuf msg, inner; /* scratch for the message being built */
};

/* ---- wire format: fx_pb.h, with this writer's sticky error ---- */

static void varint(struct fx_pprof *p, struct fx_membuf *b, uint64_t v)
{
    fx_pb_varint(&p->err, b, v);
}

static void field_int(struct fx_pprof *p, struct fx_membuf *b, unsigned field, int64_t v)
{
    fx_pb_int(&p->err, b, field, v);
}

static void field_bytes(struct fx_pprof *p, struct fx_membuf *b, unsigned field, const void *d,
                        size_t n)
{
    fx_pb_bytes(&p->err, b, field, d, n);
}

static void field_msg(struct fx_pprof *p, struct fx_membuf *b, unsigned field,
                      struct fx_membuf *inner)
{
    fx_pb_msg(&p->err, b, field, inner);
}

static int64_t str(struct fx_pprof *p, const char *s)
{
    uint32_t id = 0;
    if (p->err == FX_OK && s && *s)
        p->err = fx_strtab_intern(&p->strings, s, strlen(s), &id);
    return id;
}

/* ---- the API ---- */

struct fx_pprof *fx_pprof_new(void)
{
    struct fx_pprof *p = fx_calloc(1, sizeof *p);
    uint32_t empty;
    if (p && fx_strtab_intern(&p->strings, "", 0, &empty) != FX_OK) {
        fx_pprof_free(p);
        return NULL;
    }
    return p;
}

void fx_pprof_free(struct fx_pprof *p)
{
    if (!p)
        return;
    fx_strtab_destroy(&p->strings);
    fx_membuf_destroy(&p->samples);
    fx_membuf_destroy(&p->locations);
    fx_membuf_destroy(&p->functions);
    fx_membuf_destroy(&p->msg);
    fx_membuf_destroy(&p->inner);
    fx_free(p);
}

int fx_pprof_sample_type(struct fx_pprof *p, const char *type, const char *unit)
{
    if (p->err == FX_OK && (p->sampled || p->ntypes == FX_PPROF_MAX_TYPES))
        p->err = FX_EINVAL;
    if (p->err != FX_OK)
        return p->err;
    p->type[p->ntypes] = str(p, type);
    p->unit[p->ntypes] = str(p, unit);
    p->ntypes++;
    return p->err;
}

int fx_pprof_default_type(struct fx_pprof *p, int index)
{
    if (p->err == FX_OK && (index < -1 || index >= (int)p->ntypes))
        p->err = FX_EINVAL;
    if (p->err == FX_OK)
        p->default_type = index + 1;
    return p->err;
}

int fx_pprof_function(struct fx_pprof *p, uint64_t id, const char *name, const char *file,
                      int64_t start_line)
{
    int64_t n = str(p, name);
    field_int(p, &p->msg, FUNCTION_ID, (int64_t)id);
    field_int(p, &p->msg, FUNCTION_NAME, n);
    field_int(p, &p->msg, FUNCTION_SYSTEM_NAME, n);
    field_int(p, &p->msg, FUNCTION_FILENAME, str(p, file));
    field_int(p, &p->msg, FUNCTION_START_LINE, start_line);
    field_msg(p, &p->functions, PROFILE_FUNCTION, &p->msg);
    return p->err;
}

int fx_pprof_location(struct fx_pprof *p, uint64_t id, uint64_t function_id, int64_t line)
{
    field_int(p, &p->inner, LINE_FUNCTION_ID, (int64_t)function_id);
    field_int(p, &p->inner, LINE_LINE, line);
    field_int(p, &p->msg, LOCATION_ID, (int64_t)id);
    field_msg(p, &p->msg, LOCATION_LINE, &p->inner);
    field_msg(p, &p->locations, PROFILE_LOCATION, &p->msg);
    return p->err;
}

int fx_pprof_sample(struct fx_pprof *p, const uint64_t *locations, size_t n, const int64_t *values,
                    const char *label_key, const char *label_value)
{
    const char *one[1][2] = {{label_key, label_value}};
    return fx_pprof_sample_labels(p, locations, n, values, one, label_key ? 1 : 0);
}

int fx_pprof_sample_labels(struct fx_pprof *p, const uint64_t *locations, size_t n,
                           const int64_t *values, const char *const (*labels)[2], size_t nlabels)
{
    p->sampled = true;
    /* Repeated scalars, packed (proto3's encoding, which every reader accepts). */
    for (size_t i = 0; i < n; i++)
        varint(p, &p->inner, locations[i]);
    if (n)
        field_msg(p, &p->msg, SAMPLE_LOCATION_ID, &p->inner);
    for (unsigned i = 0; i < p->ntypes; i++)
        varint(p, &p->inner, (uint64_t)values[i]);
    field_msg(p, &p->msg, SAMPLE_VALUE, &p->inner);
    for (size_t i = 0; i < nlabels; i++) {
        const char *v = labels[i][1];
        field_int(p, &p->inner, LABEL_KEY, str(p, labels[i][0]));
        /* an empty value is string 0, which a reader cannot tell from "no string": give it a
         * visible one */
        field_int(p, &p->inner, LABEL_STR, str(p, v && *v ? v : "?"));
        field_msg(p, &p->msg, SAMPLE_LABEL, &p->inner);
    }
    field_msg(p, &p->samples, PROFILE_SAMPLE, &p->msg);
    return p->err;
}

static void value_type(struct fx_pprof *p, struct fx_membuf *b, unsigned field, unsigned i)
{
    field_int(p, &p->inner, VALUE_TYPE_TYPE, p->type[i]);
    field_int(p, &p->inner, VALUE_TYPE_UNIT, p->unit[i]);
    field_msg(p, b, field, &p->inner);
}

int fx_pprof_finish(struct fx_pprof *p, int64_t time_nanos, int64_t duration_nanos, int period_type,
                    int64_t period, const char *comment, struct fx_sink out)
{
    struct fx_membuf *m = &p->msg;
    int64_t comment_id = comment ? str(p, comment) : 0;
    m->len = 0;
    for (unsigned i = 0; i < p->ntypes; i++)
        value_type(p, m, PROFILE_SAMPLE_TYPE, i);
    if (period_type >= 0 && (unsigned)period_type < p->ntypes)
        value_type(p, m, PROFILE_PERIOD_TYPE, (unsigned)period_type);
    field_int(p, m, PROFILE_PERIOD, period);
    field_int(p, m, PROFILE_TIME_NANOS, time_nanos);
    field_int(p, m, PROFILE_DURATION_NANOS, duration_nanos);
    /* a string index, as the type's own name (profile.proto: default_sample_type) */
    if (p->default_type > 0)
        field_int(p, m, PROFILE_DEFAULT_SAMPLE_TYPE, p->type[p->default_type - 1]);
    if (comment_id) {
        fx_pb_tag(&p->err, m, PROFILE_COMMENT, FX_PB_VARINT);
        varint(p, m, (uint64_t)comment_id);
    }
    for (uint32_t i = 0; i < p->strings.count && p->err == FX_OK; i++) {
        size_t len;
        const char *s = fx_strtab_get(&p->strings, i, &len);
        field_bytes(p, m, PROFILE_STRING_TABLE, s, len);
    }
    const struct fx_membuf *parts[] = {&p->samples, &p->locations, &p->functions, m};
    for (size_t i = 0; i < sizeof parts / sizeof *parts && p->err == FX_OK; i++)
        if (parts[i]->len)
            p->err = out.write(out.ctx, parts[i]->data, parts[i]->len);
    return p->err;
}
