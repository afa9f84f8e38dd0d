/* SPDX-License-Identifier: Apache-2.0 */
/* Compaction of the interned tables: only the rows that the samples, allocations and markers
 * (names, string fields, cause stacks) still held reach survive, renumbered, in a fresh set of
 * tables swapped in at the end; a failure leaves the model as it was. Every id handed out before
 * a compaction is void after it (the generation). */
#include "fx_profile.h"

#include <string.h>

#include "fx_alloc.h"
#include "fx_profile_internal.h"
#include "fx_profile_model.h"

/* Old row -> new row in the fresh tables; FX_NONE_ID: not (yet) interned there. */
struct remap {
    uint32_t *str, *func, *frame, *stack;
    bool *keep_stack; /* reached from a stack column */
};

static void remap_free(struct remap *m)
{
    fx_free(m->str), fx_free(m->func), fx_free(m->frame), fx_free(m->stack);
    fx_free(m->keep_stack);
}

static uint32_t *none_array(uint32_t n)
{
    uint32_t *a = fx_reallocarray(NULL, n ? n : 1, sizeof(*a));
    if (a)
        memset(a, 0xff, (size_t)(n ? n : 1) * sizeof(*a)); /* every entry FX_NONE_ID */
    return a;
}

static int remap_init(struct remap *m, const struct fx_profile *p)
{
    m->str = none_array(p->strings.count);
    m->func = none_array(p->funcs.count);
    m->frame = none_array(p->frames.count);
    m->stack = none_array(p->stacks.count);
    m->keep_stack = fx_calloc(p->stacks.count ? p->stacks.count : 1, sizeof(*m->keep_stack));
    if (!m->str || !m->func || !m->frame || !m->stack || !m->keep_stack)
        return FX_ENOMEM;
    return FX_OK;
}

/* Every stack column of a thread, then the model-wide ones (the live allocations' map): fn gets
 * each column's array and length, FX_NONE_ID entries being no stack. Marking and remapping both
 * walk this, so a table that gains a stack column (a marker's cause) is one line here. */
typedef void (*stack_column_fn)(uint32_t *col, uint32_t n, void *arg);

static void thread_stack_columns(struct fx_thread *t, stack_column_fn fn, void *arg)
{
    fn(t->samples.stack, t->samples.count, arg);
    fn(t->allocs.stack, t->allocs.count, arg);
    if (t->markers.cause_stack) /* issue 18: created at the first marker with a stack */
        fn(t->markers.cause_stack, t->markers.count, arg);
}

static void each_stack_column(struct fx_profile *p, stack_column_fn fn, void *arg)
{
    for (uint32_t t = 0; t < p->nthreads; t++)
        thread_stack_columns(p->threads[t], fn, arg);
    fn(p->live.stack, p->live.cap, arg);
}

struct walk {
    const struct fx_profile *p;
    struct remap *m;
};

/* Each stack and all its prefixes; stops at a prefix already marked. */
static void mark_column(uint32_t *col, uint32_t n, void *arg)
{
    const struct walk *w = arg;
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t st = col[i]; st != FX_NONE_ID && !w->m->keep_stack[st];
             st = w->p->stacks.prefix[st])
            w->m->keep_stack[st] = true;
    }
}

static void remap_column(uint32_t *col, uint32_t n, void *arg)
{
    const struct walk *w = arg;
    for (uint32_t i = 0; i < n; i++) {
        if (col[i] != FX_NONE_ID)
            col[i] = w->m->stack[col[i]];
    }
}

static int new_str(struct fx_profile *q, const struct fx_profile *p, struct remap *m, uint32_t s,
                   uint32_t *out)
{
    if (s == FX_NONE_ID || m->str[s] != FX_NONE_ID) {
        *out = s == FX_NONE_ID ? FX_NONE_ID : m->str[s];
        return FX_OK;
    }
    size_t len;
    const char *bytes = fx_strtab_get(&p->strings, s, &len);
    fx_str_id id;
    int rc = fx_profile_string(q, bytes, len, &id);
    if (rc == FX_OK)
        *out = m->str[s] = id.i;
    return rc;
}

static int new_func(struct fx_profile *q, const struct fx_profile *p, struct remap *m, uint32_t f,
                    uint32_t *out)
{
    if (m->func[f] != FX_NONE_ID) {
        *out = m->func[f];
        return FX_OK;
    }
    struct fx_func_key k = fx_profile_func_key_at(&p->funcs, f);
    int rc = new_str(q, p, m, k.name.i, &k.name.i);
    if (rc == FX_OK)
        rc = new_str(q, p, m, k.resource.i, &k.resource.i);
    if (rc == FX_OK)
        rc = new_str(q, p, m, k.source.i, &k.source.i);
    fx_func_id id;
    if (rc == FX_OK)
        rc = fx_profile_func(q, &k, &id);
    if (rc == FX_OK)
        *out = m->func[f] = id.i;
    return rc;
}

static int new_frame(struct fx_profile *q, const struct fx_profile *p, struct remap *m, uint32_t f,
                     uint32_t *out)
{
    if (m->frame[f] != FX_NONE_ID) {
        *out = m->frame[f];
        return FX_OK;
    }
    struct fx_frame_key k = fx_profile_frame_key_at(&p->frames, f);
    int rc = new_func(q, p, m, k.func.i, &k.func.i);
    fx_frame_id id;
    if (rc == FX_OK)
        rc = fx_profile_frame(q, &k, &id);
    if (rc == FX_OK)
        *out = m->frame[f] = id.i;
    return rc;
}

/* Rows in order: a prefix is smaller than its stack, so it is always mapped first. */
static int copy_stacks(struct fx_profile *q, const struct fx_profile *p, struct remap *m)
{
    for (uint32_t s = 0; s < p->stacks.count; s++) {
        if (!m->keep_stack[s])
            continue;
        uint32_t prefix = p->stacks.prefix[s];
        fx_stack_id pre = {prefix == FX_NONE_ID ? FX_NONE_ID : m->stack[prefix]};
        fx_frame_id frame;
        int rc = new_frame(q, p, m, p->stacks.frame[s], &frame.i);
        fx_stack_id id;
        if (rc == FX_OK)
            rc = fx_profile_stack(q, pre, frame, &id);
        if (rc != FX_OK)
            return rc;
        m->stack[s] = id.i;
    }
    return FX_OK;
}

static bool is_str_field(const struct fx_marker_schema *s, unsigned f)
{
    return s->fields[f].format == FX_FMT_STRING || s->fields[f].format == FX_FMT_UNIQUE_STRING;
}

/* Marker names and string fields: interned in q (apply = false), or rewritten (apply). */
static int markers_strings(struct fx_profile *q, struct fx_profile *p, struct remap *m, bool apply)
{
    for (uint32_t t = 0; t < p->nthreads; t++) {
        struct fx_markers *mk = &p->threads[t]->markers;
        for (uint32_t i = 0; i < mk->count; i++) {
            uint32_t *ids[1 + FX_MARKER_MAX_FIELDS] = {&mk->name[i]};
            unsigned n = 1;
            const struct fx_marker_schema *s =
                    mk->schema[i] == FX_NONE_ID ? NULL : p->schemas[mk->schema[i]];
            for (unsigned f = 0; s && f < s->n_fields; f++) {
                if (is_str_field(s, f))
                    ids[n++] = &mk->values[mk->values_at[i] + f].s.i;
            }
            for (unsigned k = 0; k < n; k++) {
                uint32_t nid;
                int rc = apply ? FX_OK : new_str(q, p, m, *ids[k], &nid);
                if (rc != FX_OK)
                    return rc;
                if (apply && *ids[k] != FX_NONE_ID)
                    *ids[k] = m->str[*ids[k]];
            }
        }
    }
    return FX_OK;
}

/* p takes q's tables; q is left with none. */
static void swap_tables(struct fx_profile *p, struct fx_profile *q)
{
    fx_profile_tables_destroy(p);
    struct {
        void *to, *from;
        size_t size;
    } const tables[] = {
            {&p->strings, &q->strings, sizeof(q->strings)},
            {&p->funcs, &q->funcs, sizeof(q->funcs)},
            {&p->frames, &q->frames, sizeof(q->frames)},
            {&p->stacks, &q->stacks, sizeof(q->stacks)},
            {&p->resources, &q->resources, sizeof(q->resources)},
            {&p->sources, &q->sources, sizeof(q->sources)},
    };
    for (unsigned i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
        memcpy(tables[i].to, tables[i].from, tables[i].size);
        memset(tables[i].from, 0, tables[i].size);
    }
}

int fx_profile_compact(struct fx_profile *p)
{
    if (p->packed) /* the packs' ids are not renumbered */
        return FX_EINVAL;
    struct remap m = {0};
    struct fx_profile *q = fx_profile_new();
    int rc = q ? remap_init(&m, p) : FX_ENOMEM;
    struct walk w = {p, &m};
    if (rc == FX_OK) {
        each_stack_column(p, mark_column, &w);
        rc = copy_stacks(q, p, &m);
    }
    if (rc == FX_OK)
        rc = markers_strings(q, p, &m, false);
    if (rc == FX_OK) {
        each_stack_column(p, remap_column, &w);
        markers_strings(q, p, &m, true);
        swap_tables(p, q);
        p->generation++;
    }
    remap_free(&m);
    fx_profile_free(q);
    return rc;
}

uint32_t fx_profile_generation(const struct fx_profile *p)
{
    return p->generation;
}
