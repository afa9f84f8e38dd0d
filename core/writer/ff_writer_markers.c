/* SPDX-License-Identifier: Apache-2.0 */
/* A marker's data object (§10: its schema's fields, then its stack as data.cause), the fast path
 * that formats a numeric schema's in place, and a thread's packed markers
 * (fx_profile_pack_markers: a JFR conversion's millions of traced calls) written where they are:
 * a permutation of (time, byte offset) sorted as ff_writer.c sorts columns, then each column a
 * pass that reads every marker at its offset, so a packed thread costs 20 bytes a marker while
 * written (32 while sorted), not the columns' 42 and more. Tests: unit.ff_writer,
 * unit.profile_pack.
 */
#include <stddef.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_ff_writer_internal.h"
#include "fx_json.h"
#include "fx_profile_internal.h"
#include "fx_sort.h"

static void write_field_value(struct fx_json *j, const struct fx_profile *p, enum fx_field_format f,
                              const union fx_marker_value *v)
{
    size_t len;
    const char *s;
    switch (f) {
    case FX_FMT_STRING:
        s = fx_strtab_get(&p->strings, v->s.i, &len);
        fx_json_strn(j, s, len);
        return;
    case FX_FMT_UNIQUE_STRING:
        fx_json_u64(j, v->s.i);
        return;
    case FX_FMT_INTEGER:
    case FX_FMT_BYTES:
        fx_json_i64(j, v->i);
        return;
    case FX_FMT_DURATION:
        fx_json_double(j, v->d, 3);
        return;
    case FX_FMT_DECIMAL:
    case FX_FMT_PERCENTAGE:
        fx_json_double(j, v->d, 6);
        return;
    }
    fx_json_null(j);
}

/* A marker stack's time (data.cause.time): a marker's start (a wait's stack is the waiter's at
 * its start, a traced call's is taken in the call), an END marker's end. data.cause.time is
 * optional (CauseBacktrace's `time?`) and the front-end reads a cause without it as the marker's
 * start (the tooltip's "cause age", start - time, is 0 either way): written only where it is not
 * the start, an END marker's. A traced call's marker is ~18 bytes shorter (of ~115). */

static bool plain(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x80 || *s == '"' || *s == '\\')
            return false;
    return true;
}

void fx_ff_fast_schemas(const struct fx_profile *p, struct fx_ff_fast *f)
{
    for (uint32_t i = 0; i < p->nschemas && i < FX_FF_FAST_MAX; i++) {
        const struct fx_marker_schema *s = p->schemas[i];
        size_t max = strlen(s->name) + 64 + 24 + 20; /* {"type":"",  ,"cause":{..}} */
        bool ok = plain(s->name) && max < 1024;
        for (unsigned k = 0; ok && k < s->n_fields; k++) {
            enum fx_field_format fmt = s->fields[k].format;
            ok = plain(s->fields[k].key) &&
                 (fmt == FX_FMT_UNIQUE_STRING || fmt == FX_FMT_INTEGER || fmt == FX_FMT_BYTES);
            max += strlen(s->fields[k].key) + 4 + 21;
            ok = ok && max < 4096;
        }
        f[i] = (struct fx_ff_fast){ok, (unsigned)max};
    }
}

static char *put_lit(char *o, const char *s)
{
    size_t n = strlen(s);
    memcpy(o, s, n);
    return o + n;
}

/* The data object of a fast schema's marker (the same bytes as the general path below); false
 * for a cause time fx_json_fmt_ms cannot write (a marker 31 years from the start). */
static bool write_fast_data(struct fx_json *j, const struct fx_profile *p,
                            const struct fx_markers *m, uint32_t i, unsigned max)
{
    const struct fx_marker_schema *s = p->schemas[m->schema[i]];
    bool cause = m->cause_stack && m->cause_stack[i] != FX_NONE_ID;
    bool timed = cause && m->phase[i] == FX_PHASE_END; /* its time: above */
    int64_t us = timed ? rel_us(p, m->end_ns[i]) : 0;
    if (us <= -FX_JSON_MS_EXACT || us >= FX_JSON_MS_EXACT)
        return false;
    char *o = fx_json_raw_begin(j, max);
    if (!o)
        return true;
    o = put_lit(o, "{\"type\":\"");
    o = put_lit(o, s->name);
    *o++ = '"';
    /* indexed per field, as below: a schema without fields may have m->values NULL */
    for (unsigned f = 0; f < s->n_fields; f++) {
        const union fx_marker_value *v = &m->values[m->values_at[i] + f];
        *o++ = ',';
        *o++ = '"';
        o = put_lit(o, s->fields[f].key);
        *o++ = '"';
        *o++ = ':';
        o = s->fields[f].format == FX_FMT_UNIQUE_STRING ? fx_json_fmt_u64(o, v->s.i)
                                                        : fx_json_fmt_i64(o, v->i);
    }
    if (cause) {
        o = put_lit(o, ",\"cause\":{");
        if (timed) {
            o = put_lit(o, "\"time\":");
            o = fx_json_fmt_ms(o, us);
            *o++ = ',';
        }
        o = put_lit(o, "\"stack\":");
        o = fx_json_fmt_u64(o, m->cause_stack[i]);
        *o++ = '}';
    }
    *o++ = '}';
    fx_json_raw_end(j, o);
    return true;
}

void fx_ff_marker_data(struct fx_json *j, const struct fx_profile *p, const struct fx_markers *m,
                       uint32_t i, const struct fx_ff_fast *fast)
{
    if (m->schema[i] == FX_NONE_ID) {
        fx_json_null(j);
        return;
    }
    if (fast && fast[m->schema[i]].ok && write_fast_data(j, p, m, i, fast[m->schema[i]].max))
        return;
    const struct fx_marker_schema *s = p->schemas[m->schema[i]];
    fx_json_obj_begin(j);
    kv_str(j, "type", s->name);
    /* Indexed per field: with no field values yet, m->values is NULL, and NULL + 0 is UB. */
    for (unsigned f = 0; f < s->n_fields; f++) {
        fx_json_key(j, s->fields[f].key);
        write_field_value(j, p, s->fields[f].format, &m->values[m->values_at[i] + f]);
    }
    /* CauseBacktrace (the front-end's src/types/markers.ts): the stack, and when it was taken
     * where that is not the marker's start (above). */
    if (m->cause_stack && m->cause_stack[i] != FX_NONE_ID) {
        fx_json_key(j, "cause");
        fx_json_obj_begin(j);
        if (m->phase[i] == FX_PHASE_END) {
            fx_json_key(j, "time");
            put_ms(j, rel_us(p, m->end_ns[i]));
        }
        fx_json_key(j, "stack");
        fx_json_u64(j, m->cause_stack[i]);
        fx_json_obj_end(j);
    }
    fx_json_obj_end(j);
}

/* --- packed markers --- */

struct at {
    uint64_t t;   /* the marker's time, sign bit flipped (signed order as unsigned) */
    uint64_t off; /* its byte offset in the pack (insertion order: the ties' order) */
};

static int at_cmp(const void *a, const void *b)
{
    const struct at *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* The markers in the order write_markers writes columns: by time, ties in insertion order. */
static struct at *packed_order(const struct fx_profile *p, const struct fx_mpack *k)
{
    struct at *o = fx_reallocarray(NULL, k->count ? k->count : 1, sizeof(*o));
    if (!o)
        return NULL;
    size_t off = 0;
    int64_t a = 0;
    bool sorted = true;
    struct fx_mpending x;
    for (uint32_t i = 0; i < k->count; i++) {
        size_t next = fx_mpack_read(p, k, off, &a, false, &x);
        o[i] = (struct at){(uint64_t)a ^ 1ull << 63, off};
        sorted = sorted && (i == 0 || o[i - 1].t <= o[i].t);
        off = next;
    }
    if (!sorted && !fx_sort_by_u64(o, k->count, sizeof(*o), offsetof(struct at, t)))
        fx_sort(o, k->count, sizeof(*o), at_cmp);
    return o;
}

/* Marker o of the pack as a one-row table (x holds its fields). */
struct row {
    struct fx_mpending x;
    uint32_t name, schema, zero;
    uint8_t phase, category;
    struct fx_markers m;
};

static void read_row(const struct fx_profile *p, const struct fx_mpack *k, const struct at *o,
                     struct row *r)
{
    int64_t a = (int64_t)(o->t ^ 1ull << 63);
    fx_mpack_read(p, k, o->off, &a, true, &r->x);
    const struct fx_mkind *kd = &p->kinds[r->x.kind];
    r->name = kd->name;
    r->schema = kd->schema;
    r->phase = kd->phase;
    r->category = kd->category;
    r->zero = 0;
    r->m = (struct fx_markers){.name = &r->name,
                               .start_ns = &r->x.start_ns,
                               .end_ns = &r->x.end_ns,
                               .phase = &r->phase,
                               .category = &r->category,
                               .schema = &r->schema,
                               .values_at = &r->zero,
                               .cause_stack = &r->x.stack,
                               .count = 1,
                               .values = r->x.values};
}

/* name, phase or category (which 0, 1, 2) of every marker, in order: its kind's. */
static void packed_col(struct fx_json *j, const struct fx_profile *p, const uint32_t *kinds,
                       uint32_t n, const char *key, int which)
{
    fx_json_key(j, key);
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < n; i++) {
        const struct fx_mkind *kd = &p->kinds[kinds[i]];
        fx_json_u64(j, which == 0 ? kd->name : which == 1 ? kd->phase : kd->category);
    }
    fx_json_arr_end(j);
}

/* Each marker is unpacked once, for its data; its kind and end are kept for the columns after
 * (the end where its offset was, 4 bytes more a marker for the kind). */
void fx_ff_write_packed_markers(struct fx_json *j, const struct fx_profile *p,
                                const struct fx_thread *t)
{
    const struct fx_mpack *k = t->pack;
    struct at *o = packed_order(p, k);
    uint32_t *kinds = fx_reallocarray(NULL, k->count ? k->count : 1, sizeof(*kinds));
    if (!o || !kinds) {
        fx_free(o);
        fx_free(kinds);
        j->err = j->err ? j->err : FX_ENOMEM;
        return;
    }
    struct fx_ff_fast fast[FX_FF_FAST_MAX];
    bool has_fast = p->nschemas <= FX_FF_FAST_MAX;
    if (has_fast)
        fx_ff_fast_schemas(p, fast);
    struct row r;
    fx_json_key(j, "markers");
    fx_json_obj_begin(j);
    fx_json_key(j, "data");
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < k->count; i++) {
        read_row(p, k, &o[i], &r);
        fx_ff_marker_data(j, p, &r.m, 0, has_fast ? fast : NULL);
        kinds[i] = r.x.kind;
        o[i].off = (uint64_t)r.x.end_ns; /* the offset is read no more */
    }
    fx_json_arr_end(j);
    packed_col(j, p, kinds, k->count, "name", 0);
    fx_json_key(j, "startTime");
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < k->count; i++) { /* the start: the permutation's time */
        bool end = p->kinds[kinds[i]].phase == FX_PHASE_END;
        put_ms(j, end ? 0 : rel_us(p, (int64_t)(o[i].t ^ 1ull << 63)));
    }
    fx_json_arr_end(j);
    fx_json_key(j, "endTime");
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < k->count; i++) {
        uint8_t ph = p->kinds[kinds[i]].phase;
        bool has_end = ph == FX_PHASE_INTERVAL || ph == FX_PHASE_END;
        put_ms(j, has_end ? rel_us(p, (int64_t)o[i].off) : 0);
    }
    fx_json_arr_end(j);
    packed_col(j, p, kinds, k->count, "phase", 1);
    packed_col(j, p, kinds, k->count, "category", 2);
    kv_length(j, k->count);
    fx_json_obj_end(j);
    fx_free(kinds);
    fx_free(o);
}
