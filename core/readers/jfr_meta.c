/* SPDX-License-Identifier: Apache-2.0 */
/* The JFR metadata event (issue 35): a string table, then a tree of elements (a name, string
 * attributes, children) whose "class" elements declare every type of the chunk with its
 * "field" children in wire order. Only classes and fields are kept (annotations and settings
 * are skipped); a field's type is resolved to a class index once every class is read. The
 * primitives are classes with reserved names (boolean ... double, java.lang.String).
 * Tests: unit.jfr. */
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_jfr_internal.h"

struct meta_parse {
    struct jfr_meta *m;
    struct jfr_cur c;
    size_t cap_classes;
    size_t cap_fields; /* of the class being read */
    struct fx_errbuf *eb;
};

static const struct {
    const char *name;
    uint8_t prim;
} prims[] = {{"boolean", JFR_BOOLEAN}, {"byte", JFR_BYTE},     {"char", JFR_CHAR},
             {"short", JFR_SHORT},     {"int", JFR_INT},       {"long", JFR_LONG},
             {"float", JFR_FLOAT},     {"double", JFR_DOUBLE}, {"java.lang.String", JFR_STRING}};

static int read_strings(struct meta_parse *mp)
{
    struct jfr_meta *m = mp->m;
    uint64_t n = jfr_varint(&mp->c);
    if (mp->c.err || n > (uint64_t)(mp->c.end - mp->c.p))
        return FX_EINVAL;
    m->strings = fx_calloc(n ? n : 1, sizeof *m->strings);
    if (!m->strings)
        return FX_ENOMEM;
    m->n_strings = (uint32_t)n;
    for (uint64_t i = 0; i < n; i++) {
        struct fx_jfr_value v;
        jfr_string_value(&mp->c, &v);
        if (mp->c.err || v.enc == 2)
            return FX_EINVAL;
        size_t cap = (size_t)v.len * 3 + 1;
        m->strings[i] = fx_malloc(cap);
        if (!m->strings[i])
            return FX_ENOMEM;
        m->strings[i][0] = '\0';
        if (v.enc >= 3 && jfr_utf8(&v, mp->c.end, m->strings[i], cap, NULL) != FX_OK)
            return FX_EINVAL;
    }
    return FX_OK;
}

static const char *str(struct meta_parse *mp)
{
    uint64_t i = jfr_varint(&mp->c);
    if (mp->c.err || i >= mp->m->n_strings) {
        mp->c.err = true;
        return "";
    }
    return mp->m->strings[i];
}

static int64_t num(const char *s)
{
    return s ? strtoll(s, NULL, 10) : 0;
}

static int element(struct meta_parse *mp, int depth, struct jfr_class *in_class);

/* Attributes of a class or field element, by key. */
struct attrs {
    const char *name, *id, *super, *type, *ref, *dim;
};

static void read_attrs(struct meta_parse *mp, struct attrs *a)
{
    uint64_t n = jfr_varint(&mp->c);
    for (uint64_t i = 0; i < n && !mp->c.err; i++) {
        const char *k = str(mp), *v = str(mp);
        if (!strcmp(k, "name"))
            a->name = v;
        else if (!strcmp(k, "id"))
            a->id = v;
        else if (!strcmp(k, "superType"))
            a->super = v;
        else if (!strcmp(k, "class"))
            a->type = v;
        else if (!strcmp(k, "constantPool"))
            a->ref = v;
        else if (!strcmp(k, "dimension"))
            a->dim = v;
    }
}

static int add_field(struct meta_parse *mp, struct jfr_class *k, const struct attrs *a)
{
    if (!a->name || !a->type) {
        fx_errbuf_set(mp->eb, "the metadata has a field without a name or class");
        return FX_EINVAL;
    }
    if (fx_grow(&k->fields, &mp->cap_fields, k->n_fields, 1, sizeof *k->fields, 8))
        return FX_ENOMEM;
    k->fields[k->n_fields++] = (struct jfr_field){.name = a->name,
                                                  .type_id = num(a->type),
                                                  .cls = UINT32_MAX,
                                                  .ref = a->ref && !strcmp(a->ref, "true"),
                                                  .array = a->dim && num(a->dim) == 1};
    return FX_OK;
}

static int add_class(struct meta_parse *mp, const struct attrs *a, int depth)
{
    struct jfr_meta *m = mp->m;
    if (!a->name || !a->id) {
        fx_errbuf_set(mp->eb, "the metadata has a class without a name or id");
        return FX_EINVAL;
    }
    if (fx_grow(&m->classes, &mp->cap_classes, m->n_classes, 1, sizeof *m->classes, 64))
        return FX_ENOMEM;
    struct jfr_class *k = &m->classes[m->n_classes++];
    *k = (struct jfr_class){.name = a->name, .super = a->super, .id = num(a->id)};
    for (size_t i = 0; i < sizeof prims / sizeof *prims; i++)
        if (!strcmp(a->name, prims[i].name))
            k->prim = prims[i].prim;
    k->is_event = a->super && !strcmp(a->super, "jdk.jfr.Event");
    mp->cap_fields = 0;
    uint64_t n = jfr_varint(&mp->c);
    for (uint64_t i = 0; i < n && !mp->c.err; i++) {
        int rc = element(mp, depth + 1, k);
        if (rc != FX_OK)
            return rc;
    }
    return mp->c.err ? FX_EINVAL : FX_OK;
}

static int element(struct meta_parse *mp, int depth, struct jfr_class *in_class)
{
    if (depth > JFR_MAX_DEPTH) {
        fx_errbuf_set(mp->eb, "the metadata nests deeper than %d elements", JFR_MAX_DEPTH);
        return FX_EINVAL;
    }
    const char *name = str(mp);
    struct attrs a = {0};
    read_attrs(mp, &a);
    if (mp->c.err)
        return FX_EINVAL;
    /* root > metadata > class: a "class" anywhere else (in a hostile file) is skipped */
    if (!strcmp(name, "class") && !in_class && depth == 2)
        return add_class(mp, &a, depth);
    if (!strcmp(name, "field") && in_class) {
        int rc = add_field(mp, in_class, &a);
        if (rc != FX_OK)
            return rc;
        in_class = NULL; /* a field's annotations are not fields */
    } else if (in_class) {
        in_class = NULL; /* annotations, settings */
    }
    uint64_t n = jfr_varint(&mp->c);
    for (uint64_t i = 0; i < n && !mp->c.err; i++) {
        int rc = element(mp, depth + 1, in_class);
        if (rc != FX_OK)
            return rc;
    }
    return mp->c.err ? FX_EINVAL : FX_OK;
}

uint32_t jfr_meta_class_of(const struct jfr_meta *m, int64_t id)
{
    uint64_t v;
    return fx_jfr_map_get(&m->by_id, 0, (uint64_t)id, &v) ? (uint32_t)v : UINT32_MAX;
}

static int resolve(struct jfr_meta *m, struct fx_errbuf *eb)
{
    m->string_cls = UINT32_MAX;
    for (uint32_t i = 0; i < m->n_classes; i++) {
        if (fx_jfr_map_put(&m->by_id, 0, (uint64_t)m->classes[i].id, i) != FX_OK)
            return FX_ENOMEM;
        if (m->classes[i].prim == JFR_STRING)
            m->string_cls = i;
    }
    for (uint32_t i = 0; i < m->n_classes; i++) {
        struct jfr_class *k = &m->classes[i];
        for (uint32_t f = 0; f < k->n_fields; f++) {
            k->fields[f].cls = jfr_meta_class_of(m, k->fields[f].type_id);
            if (k->fields[f].cls == UINT32_MAX) {
                fx_errbuf_set(eb, "the metadata's field %s.%s has an undeclared type %lld", k->name,
                              k->fields[f].name, (long long)k->fields[f].type_id);
                return FX_EINVAL;
            }
        }
    }
    /* a struct of varints alone (a stack frame: method, line, bytecode index, type) is skipped
     * by counting varints, not by visiting its fields' classes (the pools' indexing pass) */
    for (uint32_t i = 0; i < m->n_classes; i++) {
        struct jfr_class *k = &m->classes[i];
        bool all = k->prim == JFR_STRUCT && k->n_fields > 0;
        for (uint32_t f = 0; f < k->n_fields && all; f++) {
            const struct jfr_field *x = &k->fields[f];
            uint8_t pr = m->classes[x->cls].prim;
            all = !x->array &&
                  (x->ref || pr == JFR_CHAR || pr == JFR_SHORT || pr == JFR_INT || pr == JFR_LONG);
        }
        k->varints = all;
    }
    return FX_OK;
}

int jfr_meta_read(struct jfr_meta *m, const uint8_t *p, const uint8_t *end, struct fx_errbuf *eb)
{
    jfr_meta_destroy(m);
    struct meta_parse mp = {.m = m, .c = {p, end, false}, .eb = eb};
    eb->msg[0] = '\0';
    int rc = read_strings(&mp);
    if (rc == FX_OK)
        rc = element(&mp, 0, NULL);
    if (rc == FX_OK)
        rc = resolve(m, eb);
    if (rc != FX_OK) {
        if (!eb->msg[0])
            fx_errbuf_set(eb, "the metadata event is %s",
                          rc == FX_ENOMEM ? "too large for memory" : "corrupt");
        jfr_meta_destroy(m);
    }
    return rc;
}

void jfr_meta_destroy(struct jfr_meta *m)
{
    for (uint32_t i = 0; i < m->n_strings; i++)
        fx_free(m->strings[i]);
    fx_free(m->strings);
    for (uint32_t i = 0; i < m->n_classes; i++)
        fx_free(m->classes[i].fields);
    fx_free(m->classes);
    fx_jfr_map_destroy(&m->by_id);
    *m = (struct jfr_meta){0};
    m->string_cls = UINT32_MAX;
}
