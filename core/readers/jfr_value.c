/* SPDX-License-Identifier: Apache-2.0 */
/* JFR values (issue 35): the compressed integers (7 bits a byte, least significant first, the
 * ninth byte whole), the string encodings (null, empty, pool reference, UTF-8, char array,
 * Latin-1), and decoding or skipping a value by its class from the metadata. Every read goes
 * through a bounded cursor, so corrupt bytes set an error instead of reading past the chunk.
 * Tests: unit.jfr. */
#include <string.h>

#include "fx_alloc.h"
#include "fx_jfr_internal.h"

uint8_t jfr_u8(struct jfr_cur *c)
{
    if (c->p >= c->end) {
        c->err = true;
        return 0;
    }
    return *c->p++;
}

static uint64_t be(struct jfr_cur *c, unsigned n)
{
    if ((size_t)(c->end - c->p) < n) {
        c->err = true;
        c->p = c->end;
        return 0;
    }
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v = v << 8 | c->p[i];
    c->p += n;
    return v;
}

static void advance(struct jfr_cur *c, uint64_t n)
{
    if ((uint64_t)(c->end - c->p) < n) {
        c->err = true;
        c->p = c->end;
        return;
    }
    c->p += n;
}

void jfr_string_value(struct jfr_cur *c, struct fx_jfr_value *v)
{
    memset(v, 0, sizeof *v);
    v->kind = FX_JFR_STRING;
    v->enc = jfr_u8(c);
    switch (v->enc) {
    case 0:
    case 1:
        return;
    case 2:
        v->i = (int64_t)jfr_varint(c);
        return;
    case 3:
    case 4:
    case 5: {
        uint64_t n = jfr_varint(c);
        if (n > UINT32_MAX) {
            c->err = true;
            return;
        }
        v->len = (uint32_t)n;
        v->p = c->p;
        if (v->enc != 4) {
            advance(c, n);
            return;
        }
        for (uint64_t k = 0; k < n && !c->err; k++)
            jfr_varint(c);
        return;
    }
    default:
        c->err = true;
    }
}

/* One value of class cls (not a reference nor an array) into v, or skipped when v is NULL. */
static void value(struct fx_jfr *r, struct jfr_cur *c, uint32_t cls, struct fx_jfr_value *v,
                  int depth)
{
    if (cls >= r->meta.n_classes || depth > JFR_MAX_DEPTH) {
        c->err = true;
        return;
    }
    const struct jfr_class *k = &r->meta.classes[cls];
    struct fx_jfr_value tmp;
    if (!v)
        v = &tmp;
    switch (k->prim) {
    case JFR_BOOLEAN:
    case JFR_BYTE:
        *v = (struct fx_jfr_value){.kind = FX_JFR_INT, .cls = cls, .i = (int8_t)jfr_u8(c)};
        if (k->prim == JFR_BOOLEAN)
            v->i = v->i != 0;
        return;
    case JFR_CHAR:
    case JFR_SHORT:
    case JFR_INT:
    case JFR_LONG:
        *v = (struct fx_jfr_value){.kind = FX_JFR_INT, .cls = cls, .i = (int64_t)jfr_varint(c)};
        if (k->prim == JFR_INT)
            v->i = (int32_t)v->i;
        else if (k->prim == JFR_SHORT)
            v->i = (int16_t)v->i;
        return;
    case JFR_FLOAT: {
        uint32_t b = (uint32_t)be(c, 4);
        float f;
        memcpy(&f, &b, 4);
        *v = (struct fx_jfr_value){.kind = FX_JFR_FLOAT, .cls = cls, .d = f};
        return;
    }
    case JFR_DOUBLE: {
        uint64_t b = be(c, 8);
        double d;
        memcpy(&d, &b, 8);
        *v = (struct fx_jfr_value){.kind = FX_JFR_FLOAT, .cls = cls, .d = d};
        return;
    }
    case JFR_STRING:
        jfr_string_value(c, v);
        v->cls = cls;
        return;
    default:
        *v = (struct fx_jfr_value){.kind = FX_JFR_STRUCT, .cls = cls, .p = c->p};
        for (uint32_t f = 0; f < k->n_fields && !c->err; f++)
            jfr_skip(r, c, k->fields[f].cls, k->fields[f].ref, k->fields[f].array, depth + 1);
    }
}

void jfr_skip(struct fx_jfr *r, struct jfr_cur *c, uint32_t cls, bool ref, bool array, int depth)
{
    if (array) {
        uint64_t n = jfr_varint(c);
        /* every element takes at least a byte: a larger count is corrupt, not a long loop */
        if (n > (uint64_t)(c->end - c->p)) {
            c->err = true;
            return;
        }
        for (uint64_t i = 0; i < n && !c->err; i++)
            jfr_skip(r, c, cls, ref, false, depth + 1);
        return;
    }
    if (ref) {
        jfr_varint(c);
    } else if (cls < r->meta.n_classes && r->meta.classes[cls].varints) {
        for (uint32_t f = r->meta.classes[cls].n_fields; f > 0 && !c->err; f--)
            jfr_varint(c);
    } else {
        value(r, c, cls, NULL, depth);
    }
}

/* One field into v; an array is only counted, not skipped, when it is the last field read
 * (last): nothing after it is needed, and fx_jfr_array_next bounds each element's read. */
static void field(struct fx_jfr *r, struct jfr_cur *c, const struct jfr_field *f,
                  struct fx_jfr_value *v, bool last)
{
    if (f->array) {
        const uint8_t *start = c->p;
        struct jfr_cur probe = *c;
        uint64_t n = jfr_varint(&probe);
        if (!last)
            jfr_skip(r, c, f->cls, f->ref, true, 0);
        else if (probe.err || n > (uint64_t)(probe.end - probe.p))
            c->err = true; /* every element takes a byte at least: a larger count is corrupt */
        *v = (struct fx_jfr_value){
                .kind = FX_JFR_ARRAY, .cls = f->cls, .ref = f->ref, .i = (int64_t)n, .p = start};
        return;
    }
    if (f->ref) {
        *v = (struct fx_jfr_value){.kind = FX_JFR_REF, .cls = f->cls, .i = (int64_t)jfr_varint(c)};
        return;
    }
    value(r, c, f->cls, v, 0);
}

int fx_jfr_fields(struct fx_jfr *r, const struct fx_jfr_obj *o, struct fx_jfr_value *v, uint32_t n,
                  struct fx_errbuf *eb)
{
    if (o->cls >= r->meta.n_classes) {
        fx_errbuf_set(eb, "a value of an unknown class");
        return FX_EINVAL;
    }
    const struct jfr_class *k = &r->meta.classes[o->cls];
    if (n > k->n_fields)
        n = k->n_fields;
    struct jfr_cur c = {o->p, o->end, false};
    for (uint32_t f = 0; f < n && !c.err; f++)
        field(r, &c, &k->fields[f], &v[f], f + 1 == n);
    if (c.err) {
        fx_errbuf_set(eb, "chunk at offset %llu: a %s value ends past its bytes",
                      (unsigned long long)r->chunk.offset, k->name);
        return FX_EINVAL;
    }
    return FX_OK;
}

int fx_jfr_deref(struct fx_jfr *r, const struct fx_jfr_value *v, struct fx_jfr_obj *out)
{
    if (v->kind == FX_JFR_STRUCT) {
        *out = (struct fx_jfr_obj){v->cls, v->p, r->cend};
        return FX_OK;
    }
    uint64_t off;
    if (v->kind != FX_JFR_REF || !fx_jfr_map_get(&r->pool, v->cls, (uint64_t)v->i, &off))
        return FX_ENOTFOUND;
    *out = (struct fx_jfr_obj){v->cls, r->c0 + POOL_OFF(off), r->cend};
    return FX_OK;
}

int fx_jfr_entry(struct fx_jfr *r, const struct fx_jfr_value *v, const uint8_t **p, size_t *len)
{
    uint64_t x;
    if (v->kind != FX_JFR_REF || !fx_jfr_map_get(&r->pool, v->cls, (uint64_t)v->i, &x))
        return FX_ENOTFOUND;
    *p = r->c0 + POOL_OFF(x);
    *len = (size_t)POOL_LEN(x);
    return FX_OK;
}

int fx_jfr_pool_each(struct fx_jfr *r, uint32_t cls, int (*fn)(void *ctx, int64_t key), void *ctx)
{
    for (size_t i = 0; i < r->pool.cap; i++) {
        const struct fx_jfr_map_ent *e = &r->pool.e[i];
        int rc = e->cls == cls && cls != UINT32_MAX ? fn(ctx, (int64_t)e->key) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

int fx_jfr_array_next(struct fx_jfr *r, const struct fx_jfr_value *arr, const uint8_t **cursor,
                      uint32_t *index, struct fx_jfr_value *elem, struct fx_errbuf *eb)
{
    struct jfr_cur c = {*cursor ? *cursor : arr->p, r->cend, false};
    if (!*cursor) {
        jfr_varint(&c);
        *index = 0;
    } else if (++*index >= (uint64_t)arr->i) {
        return 0;
    }
    if (arr->i <= 0)
        return 0;
    if (arr->ref)
        *elem = (struct fx_jfr_value){
                .kind = FX_JFR_REF, .cls = arr->cls, .i = (int64_t)jfr_varint(&c)};
    else
        value(r, &c, arr->cls, elem, 0);
    if (c.err) {
        fx_errbuf_set(eb, "chunk at offset %llu: an array element ends past the chunk",
                      (unsigned long long)r->chunk.offset);
        return FX_EINVAL;
    }
    *cursor = c.p;
    return 1;
}

int fx_jfr_array_fields(struct fx_jfr *r, const struct fx_jfr_value *arr, const uint8_t **cursor,
                        uint32_t *index, struct fx_jfr_value *v, uint32_t n, struct fx_errbuf *eb)
{
    if (arr->cls >= r->meta.n_classes || arr->i <= 0)
        return 0;
    struct jfr_cur c = {*cursor ? *cursor : arr->p, r->cend, false};
    if (!*cursor) {
        jfr_varint(&c);
        *index = 0;
    } else if (++*index >= (uint64_t)arr->i) {
        return 0;
    }
    const struct jfr_class *k = &r->meta.classes[arr->cls];
    struct jfr_cur e = c; /* the element's own bytes: inline, or its pool entry's */
    if (arr->ref) {
        uint64_t key = jfr_varint(&c), off = 0;
        if (!c.err && !fx_jfr_map_get(&r->pool, arr->cls, key, &off)) {
            *cursor = c.p;
            return FX_ENOTFOUND;
        }
        e = (struct jfr_cur){r->c0 + POOL_OFF(off), r->cend, c.err};
    }
    if (n > k->n_fields)
        n = k->n_fields;
    if (k->varints) { /* a stack frame: its fields read as varints, no dispatch by class */
        for (uint32_t f = 0; f < k->n_fields && !e.err; f++) {
            uint64_t x = jfr_varint(&e);
            if (f >= n)
                continue;
            const struct jfr_field *fd = &k->fields[f];
            uint8_t pr = r->meta.classes[fd->cls].prim;
            int64_t i = pr == JFR_INT ? (int32_t)x : pr == JFR_SHORT ? (int16_t)x : (int64_t)x;
            v[f] = (struct fx_jfr_value){
                    .kind = fd->ref ? FX_JFR_REF : FX_JFR_INT, .cls = fd->cls, .i = i};
        }
    }
    for (uint32_t f = 0; f < k->n_fields && !e.err && !k->varints; f++) {
        if (f < n)
            field(r, &e, &k->fields[f], &v[f], false);
        else if (!arr->ref) /* the element's other fields, to reach the next */
            jfr_skip(r, &e, k->fields[f].cls, k->fields[f].ref, k->fields[f].array, 1);
    }
    if (!arr->ref)
        c = e;
    if (c.err || e.err) {
        fx_errbuf_set(eb, "chunk at offset %llu: an array element ends past the chunk",
                      (unsigned long long)r->chunk.offset);
        return FX_EINVAL;
    }
    *cursor = c.p;
    return 1;
}

/* Appends code point cp as UTF-8 when it fits (the rest is cut). */
static size_t put_utf8(char *buf, size_t cap, size_t n, uint32_t cp)
{
    char tmp[4];
    size_t k;
    if (cp < 0x80)
        tmp[0] = (char)cp, k = 1;
    else if (cp < 0x800)
        tmp[0] = (char)(0xc0 | cp >> 6), tmp[1] = (char)(0x80 | (cp & 0x3f)), k = 2;
    else
        tmp[0] = (char)(0xe0 | cp >> 12), tmp[1] = (char)(0x80 | ((cp >> 6) & 0x3f)),
        tmp[2] = (char)(0x80 | (cp & 0x3f)), k = 3;
    if (n + k >= cap)
        return n;
    memcpy(buf + n, tmp, k);
    return n + k;
}

int fx_jfr_string(struct fx_jfr *r, const struct fx_jfr_value *v, char *buf, size_t cap,
                  size_t *len)
{
    if (cap == 0)
        return FX_EINVAL;
    buf[0] = '\0';
    if (len)
        *len = 0;
    if (v->kind != FX_JFR_STRING || v->enc == 0)
        return FX_ENOTFOUND;
    struct fx_jfr_value s = *v;
    if (s.enc == 2) {
        uint64_t off;
        if (r->meta.string_cls == UINT32_MAX ||
            !fx_jfr_map_get(&r->pool, r->meta.string_cls, (uint64_t)s.i, &off))
            return FX_ENOTFOUND;
        struct jfr_cur c = {r->c0 + POOL_OFF(off), r->cend, false};
        jfr_string_value(&c, &s);
        if (c.err || s.enc == 2)
            return FX_EINVAL; /* a pool string that refers to a pool again: corrupt */
        if (s.enc == 0)
            return FX_ENOTFOUND;
    }
    return jfr_utf8(&s, r->cend, buf, cap, len);
}

int jfr_utf8(const struct fx_jfr_value *s, const uint8_t *end, char *buf, size_t cap, size_t *len)
{
    size_t n = 0;
    if (s->enc == 3) {
        n = s->len < cap - 1 ? s->len : cap - 1;
        memcpy(buf, s->p, n);
    } else if (s->enc == 5) {
        for (uint32_t k = 0; k < s->len; k++)
            n = put_utf8(buf, cap, n, s->p[k]);
    } else if (s->enc == 4) {
        struct jfr_cur c = {s->p, end, false};
        for (uint32_t k = 0; k < s->len && !c.err; k++)
            n = put_utf8(buf, cap, n, (uint32_t)(jfr_varint(&c) & 0xffff));
        if (c.err)
            return FX_EINVAL;
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    return FX_OK;
}

/* ---- the map ---- */

/* Every bit of the class and the key reaches the slot's bits (murmur3's finaliser): the class
 * once went in above bit 40 and never reached the slot of a map under 2^20 entries, so that
 * the same id in each pool (every pool numbers its entries from 1) shared one slot, and a
 * lookup probed 7 slots on average where linear probing at this load should need 2 or 3. */
static size_t slot(uint32_t cls, uint64_t key, size_t cap)
{
    uint64_t h = key ^ (uint64_t)cls * 0x9E3779B97F4A7C15ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return (size_t)h & (cap - 1);
}

static int rehash(struct fx_jfr_map *m, size_t ncap)
{
    struct fx_jfr_map_ent *e = fx_malloc(ncap * sizeof *e);
    if (!e)
        return FX_ENOMEM;
    for (size_t i = 0; i < ncap; i++)
        e[i].cls = UINT32_MAX;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->e[i].cls == UINT32_MAX)
            continue;
        size_t s = slot(m->e[i].cls, m->e[i].key, ncap);
        while (e[s].cls != UINT32_MAX)
            s = (s + 1) & (ncap - 1);
        e[s] = m->e[i];
    }
    fx_free(m->e);
    m->e = e;
    m->cap = ncap;
    return FX_OK;
}

int fx_jfr_map_put(struct fx_jfr_map *m, uint32_t cls, uint64_t key, uint64_t val)
{
    if ((m->n + 1) * 4 > m->cap * 3) {
        size_t ncap = m->cap ? m->cap * 2 : 1024;
        if (ncap > SIZE_MAX / sizeof *m->e || rehash(m, ncap) != FX_OK)
            return FX_ENOMEM;
    }
    size_t s = slot(cls, key, m->cap);
    while (m->e[s].cls != UINT32_MAX) {
        if (m->e[s].cls == cls && m->e[s].key == key)
            return FX_OK;
        s = (s + 1) & (m->cap - 1);
    }
    m->e[s] = (struct fx_jfr_map_ent){key, val, cls};
    m->n++;
    return FX_OK;
}

bool fx_jfr_map_get(const struct fx_jfr_map *m, uint32_t cls, uint64_t key, uint64_t *val)
{
    if (!m->cap)
        return false;
    size_t s = slot(cls, key, m->cap);
    while (m->e[s].cls != UINT32_MAX) {
        if (m->e[s].cls == cls && m->e[s].key == key) {
            *val = m->e[s].val;
            return true;
        }
        s = (s + 1) & (m->cap - 1);
    }
    return false;
}

void fx_jfr_map_clear(struct fx_jfr_map *m)
{
    for (size_t i = 0; i < m->cap; i++)
        m->e[i].cls = UINT32_MAX;
    m->n = 0;
}

void fx_jfr_map_destroy(struct fx_jfr_map *m)
{
    fx_free(m->e);
    *m = (struct fx_jfr_map){0};
}
