/* SPDX-License-Identifier: Apache-2.0 */
/* Packed markers (issue 35): a profile built once and written once (fxprof convert of a JFR
 * recording, millions of traced calls) keeps each thread's markers as varints in one byte buffer,
 * about 12 bytes a marker where the columns take 42, and the writer reads them where they are
 * (fx_mpack_read; core/writer/ff_writer_markers.c). A marker is: its kind (a
 * row of the profile's (name, phase, category, schema) table), its time as a zigzag delta from the
 * thread's previous marker's, an interval's duration, the schema's values (string ids and
 * integers as varints, doubles as 8 bytes) and, with a schema, its stack + 1 (0: none). The last
 * marker is held unpacked until the next, as fx_profile_marker_stack may still give its stack.
 * The window's operations (drop_before, compact, snapshot) refuse a packed profile: the ids in
 * the bytes are not renumbered. Tests: unit.profile_pack. */
#include <string.h>

#include "fx_alloc.h"
#include "fx_profile_model.h"

int fx_profile_pack_markers(struct fx_profile *p)
{
    if (!p)
        return FX_EINVAL;
    for (uint32_t i = 0; i < p->nthreads; i++)
        if (p->threads[i]->markers.count)
            return FX_EINVAL;
    p->packed = true;
    return FX_OK;
}

static uint8_t *put_varint(uint8_t *o, uint64_t v)
{
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    return o;
}

static uint64_t zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* The kind of (name, phase, category, schema), added when new. */
static bool same_kind(const struct fx_mkind *x, const struct fx_mkind *k)
{
    return x->name == k->name && x->schema == k->schema && x->phase == k->phase &&
           x->category == k->category;
}

static int kind_of(struct fx_profile *p, const struct fx_mkind *k, uint32_t *out)
{
    if (p->last_kind < p->nkinds && same_kind(&p->kinds[p->last_kind], k)) {
        *out = p->last_kind;
        return FX_OK;
    }
    for (uint32_t i = p->nkinds; i-- > 0;) {
        if (same_kind(&p->kinds[i], k)) {
            *out = p->last_kind = i;
            return FX_OK;
        }
    }
    int rc = fx_profile_grow_array((void **)&p->kinds, &p->kinds_cap, p->nkinds, sizeof(*k));
    if (rc != FX_OK)
        return rc;
    p->kinds[p->nkinds] = *k;
    *out = p->last_kind = p->nkinds++;
    return FX_OK;
}

/* The pending marker into the bytes (room made first: at most 10 bytes a varint). */
static int flush_pending(const struct fx_profile *p, struct fx_mpack *k)
{
    if (!k->pending)
        return FX_OK;
    const struct fx_mkind *kd = &p->kinds[k->last.kind];
    const struct fx_marker_schema *s = kd->schema == FX_NONE_ID ? NULL : p->schemas[kd->schema];
    size_t need = 4 * 10 + (s ? s->n_fields * 10u : 0);
    if (k->len + need > k->cap) {
        size_t cap = k->cap ? k->cap : 4096;
        while (cap < k->len + need)
            cap *= 2;
        uint8_t *b = fx_reallocarray(k->buf, cap, 1);
        if (!b)
            return FX_ENOMEM;
        k->buf = b;
        k->cap = cap;
    }
    uint8_t *o = k->buf + k->len;
    const struct fx_mpending *m = &k->last;
    o = put_varint(o, m->kind);
    int64_t a = kd->phase == FX_PHASE_END ? m->end_ns : m->start_ns;
    o = put_varint(o, zigzag((int64_t)((uint64_t)a - (uint64_t)k->prev_ns)));
    k->prev_ns = a;
    if (kd->phase == FX_PHASE_INTERVAL)
        o = put_varint(o, zigzag((int64_t)((uint64_t)m->end_ns - (uint64_t)m->start_ns)));
    for (unsigned f = 0; s && f < s->n_fields; f++) {
        enum fx_field_format fmt = s->fields[f].format;
        if (fmt == FX_FMT_STRING || fmt == FX_FMT_UNIQUE_STRING) {
            o = put_varint(o, m->values[f].s.i);
        } else if (fmt == FX_FMT_INTEGER || fmt == FX_FMT_BYTES) {
            o = put_varint(o, zigzag(m->values[f].i));
        } else {
            memcpy(o, &m->values[f].d, 8);
            o += 8;
        }
    }
    if (s)
        o = put_varint(o, (uint64_t)m->stack + 1);
    k->len = (size_t)(o - k->buf);
    k->pending = false;
    return FX_OK;
}

int fx_mpack_add(struct fx_profile *p, uint32_t thread, const struct fx_mkind *kind,
                 int64_t start_ns, int64_t end_ns, const union fx_marker_value *values)
{
    struct fx_thread *t = p->threads[thread];
    if (!t->pack && !(t->pack = fx_calloc(1, sizeof(*t->pack))))
        return FX_ENOMEM;
    struct fx_mpack *k = t->pack;
    size_t cap = k->cap;
    uint32_t id;
    int rc = flush_pending(p, k);
    if (rc == FX_OK)
        rc = kind_of(p, kind, &id);
    if (cap != k->cap)
        fx_profile_thread_recount(p, t);
    if (rc != FX_OK)
        return rc;
    if (k->count == UINT32_MAX)
        return FX_EFULL;
    unsigned n = kind->schema == FX_NONE_ID ? 0 : p->schemas[kind->schema]->n_fields;
    k->last = (struct fx_mpending){
            .kind = id,
            .start_ns = kind->phase == FX_PHASE_END ? 0 : start_ns,
            .end_ns = kind->phase == FX_PHASE_INTERVAL || kind->phase == FX_PHASE_END ? end_ns : 0,
            .stack = FX_NONE_ID};
    if (n)
        memcpy(k->last.values, values, n * sizeof(*values));
    k->used |= id < 64 ? 1ull << id : ~0ull;
    k->pending = true;
    k->count++;
    return FX_OK;
}

int fx_mpack_stack(struct fx_profile *p, uint32_t thread, uint32_t stack)
{
    struct fx_mpack *k = p->threads[thread]->pack;
    if (!k || !k->pending || p->kinds[k->last.kind].schema == FX_NONE_ID)
        return FX_EINVAL;
    k->last.stack = stack;
    return FX_OK;
}

bool fx_mpack_uses_schema(const struct fx_profile *p, const struct fx_thread *t, uint32_t schema)
{
    for (uint32_t i = 0; t->pack && i < p->nkinds; i++)
        if (p->kinds[i].schema == schema && (i >= 64 || t->pack->used >> i & 1))
            return true;
    return false;
}

static uint64_t get_varint(const uint8_t **in)
{
    const uint8_t *s = *in;
    uint64_t v = 0;
    for (unsigned sh = 0; sh < 64; sh += 7) {
        uint8_t b = *s++;
        v |= (uint64_t)(b & 0x7f) << sh;
        if (b < 0x80)
            break;
    }
    *in = s;
    return v;
}

/* The marker at *in into x. Its time (the start, an END's end) is *a: given, or the previous
 * marker's plus the packed delta. */
static void unpack_one(const struct fx_profile *p, const uint8_t **in, int64_t *a, bool given,
                       struct fx_mpending *x)
{
    x->kind = (uint32_t)get_varint(in);
    const struct fx_mkind *kd = &p->kinds[x->kind];
    const struct fx_marker_schema *s = kd->schema == FX_NONE_ID ? NULL : p->schemas[kd->schema];
    uint64_t delta = get_varint(in);
    if (!given)
        *a = (int64_t)((uint64_t)*a + (uint64_t)unzigzag(delta));
    x->start_ns = kd->phase == FX_PHASE_END ? 0 : *a;
    x->end_ns = kd->phase == FX_PHASE_END ? *a : 0;
    if (kd->phase == FX_PHASE_INTERVAL)
        x->end_ns = (int64_t)((uint64_t)*a + (uint64_t)unzigzag(get_varint(in)));
    for (unsigned f = 0; s && f < s->n_fields; f++) {
        enum fx_field_format fmt = s->fields[f].format;
        if (fmt == FX_FMT_STRING || fmt == FX_FMT_UNIQUE_STRING) {
            x->values[f].s.i = (uint32_t)get_varint(in);
        } else if (fmt == FX_FMT_INTEGER || fmt == FX_FMT_BYTES) {
            x->values[f].i = unzigzag(get_varint(in));
        } else {
            memcpy(&x->values[f].d, *in, 8);
            *in += 8;
        }
    }
    x->stack = s ? (uint32_t)get_varint(in) - 1 : FX_NONE_ID;
}

size_t fx_mpack_read(const struct fx_profile *p, const struct fx_mpack *k, size_t off, int64_t *a,
                     bool given, struct fx_mpending *x)
{
    if (off >= k->len) { /* the pending marker */
        *x = k->last;
        *a = p->kinds[x->kind].phase == FX_PHASE_END ? x->end_ns : x->start_ns;
        return k->len + 1;
    }
    const uint8_t *in = k->buf + off;
    unpack_one(p, &in, a, given, x);
    return (size_t)(in - k->buf);
}

uint32_t fx_mpack_kind(const struct fx_mpack *k, size_t off)
{
    if (off >= k->len) /* the pending one (buf is NULL while it is the only one) */
        return k->last.kind;
    const uint8_t *in = k->buf + off;
    return (uint32_t)get_varint(&in);
}

void fx_mpack_free(struct fx_mpack *k)
{
    if (k)
        fx_free(k->buf);
    fx_free(k);
}
