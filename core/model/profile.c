/* SPDX-License-Identifier: Apache-2.0 */
/* The profile model's per-thread data (samples, markers) and counters; the interned tables are
 * in profile_tables.c, meta and meta.extra in profile_meta.c. Samples cost 16 bytes each (time,
 * stack, CPU delta), plus 4 only in threads where some sample weighs more than 1. A failed call
 * changes nothing. Tests: unit.profile, unit.profile_slots (the thread slots). */
#include "fx_profile.h"

#include <string.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_profile_internal.h"
#include "fx_profile_model.h"

struct fx_profile *fx_profile_new(void)
{
    struct fx_profile *p = fx_calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->interval_ms = 1.0;
    p->pid = getpid();
    fx_profile_vacant_init(p);
    return p;
}

void fx_profile_vacant_init(struct fx_profile *p)
{
    p->vacant = (struct fx_thread){0};
    p->vacant.vacant = p->vacant.unregistered = true;
    p->vacant.unregister_ns = INT64_MIN; /* gone for every snapshot (fx_profile_thread_gone) */
}

unsigned fx_samples_cols(struct fx_samples *s, struct fx_col *cols)
{
    unsigned n = FX_COLS_SET(cols, FX_COL(s, time_ns), FX_COL(s, stack), FX_COL(s, cpu_ns),
                             FX_COL(s, weight));
    return s->weight ? n : n - 1;
}

unsigned fx_markers_cols(struct fx_markers *m, struct fx_col *cols)
{
    unsigned n = FX_COLS_SET(cols, FX_COL(m, name), FX_COL(m, start_ns), FX_COL(m, end_ns),
                             FX_COL(m, phase), FX_COL(m, category), FX_COL(m, schema),
                             FX_COL(m, values_at), FX_COL(m, cause_stack));
    return m->cause_stack ? n : n - 1;
}

unsigned fx_counter_cols(struct fx_counter *c, struct fx_col *cols)
{
    return FX_COLS_SET(cols, FX_COL(c, time_ns), FX_COL(c, value));
}

static void thread_destroy(struct fx_thread *t)
{
    fx_free(t->name);
    struct fx_col cols[FX_MAX_COLS];
    fx_cols_free(cols, fx_samples_cols(&t->samples, cols));
    fx_cols_free(cols, fx_markers_cols(&t->markers, cols));
    fx_cols_free(cols, fx_allocs_cols(&t->allocs, cols));
    fx_free(t->markers.values);
    fx_mpack_free(t->pack);
}

static void counter_destroy(struct fx_counter *c)
{
    char *strs[] = {c->name, c->category, c->description, c->unit, c->color};
    for (unsigned i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        fx_free(strs[i]);
    struct fx_col cols[FX_MAX_COLS];
    fx_cols_free(cols, fx_counter_cols(c, cols));
}

void fx_profile_free(struct fx_profile *p)
{
    if (!p)
        return;
    fx_profile_tables_destroy(p);
    fx_profile_libs_destroy(&p->libs);
    fx_live_destroy(&p->live);
    for (uint32_t i = 0; i < p->nthreads; i++) {
        if (p->threads[i] && p->threads[i] != &p->vacant) { /* NULL: a failed snapshot's */
            thread_destroy(p->threads[i]);
            fx_free(p->threads[i]);
        }
    }
    fx_free(p->threads);
    fx_free(p->schemas);
    fx_free(p->kinds);
    for (uint32_t i = 0; i < p->ncounters; i++)
        counter_destroy(&p->counters[i]);
    fx_free(p->counters);
    for (uint32_t i = 0; i < p->nextra; i++)
        fx_profile_extra_destroy(&p->extra[i]);
    fx_free(p->extra);
    for (unsigned i = 0; i < FX_META_COUNT; i++)
        fx_free(p->meta[i]);
    fx_free(p);
}

/* --- threads --- */

/* Puts t in the first vacant slot, or a new one at the end. */
static int thread_slot(struct fx_profile *p, struct fx_thread *t, uint32_t *out)
{
    for (uint32_t i = 0; p->nvacant > 0 && i < p->nthreads; i++) {
        if (p->threads[i] == &p->vacant) { /* no read of the tracks on the way */
            p->nvacant--;
            p->threads[i] = t;
            *out = i;
            return FX_OK;
        }
    }
    int rc = fx_profile_grow_array((void **)&p->threads, &p->threads_cap, p->nthreads,
                                   sizeof(*p->threads));
    if (rc == FX_OK) {
        p->threads[p->nthreads] = t;
        *out = p->nthreads++;
    }
    return rc;
}

int fx_profile_thread_add(struct fx_profile *p, const char *name, int64_t tid, int64_t register_ns,
                          fx_thread_id *out)
{
    if (!name)
        return FX_EINVAL;
    char *copy = fx_strdup(name);
    struct fx_thread *t = copy ? fx_calloc(1, sizeof(*t)) : NULL;
    uint32_t i;
    int rc = t ? thread_slot(p, t, &i) : FX_ENOMEM;
    if (rc != FX_OK) {
        fx_free(copy);
        fx_free(t);
        return rc;
    }
    t->name = copy;
    t->name_len = (uint32_t)strlen(copy);
    t->tid = tid;
    t->register_ns = register_ns;
    t->holds = 1;
    fx_profile_thread_recount(p, t);
    out->i = i;
    return FX_OK;
}

void fx_profile_thread_hold(struct fx_profile *p, fx_thread_id id)
{
    uint32_t thread = id.i;
    if (fx_profile_thread_ok(p, thread))
        p->threads[thread]->holds++;
}

void fx_profile_thread_release(struct fx_profile *p, fx_thread_id id)
{
    uint32_t thread = id.i;
    if (!fx_profile_thread_ok(p, thread) || p->threads[thread]->holds == 0)
        return;
    p->threads[thread]->holds--;
    fx_profile_thread_vacate_if_done(p, thread);
}

/* Nothing of it is in the profile any more and nobody will add to it: its memory goes now, the
 * track itself too (a server that starts a thread per task would otherwise keep one entry per
 * task, forever; only the slot's pointer stays, until a new thread takes it). */
void fx_profile_thread_vacate_if_done(struct fx_profile *p, uint32_t i)
{
    struct fx_thread *t = p->threads[i];
    if (t->vacant || t->holds > 0 || !fx_profile_thread_gone(p, t))
        return;
    thread_destroy(t);
    p->threads_bytes -= t->counted;
    fx_free(t);
    p->threads[i] = &p->vacant;
    p->nvacant++;
    if (p->main_thread == i)
        p->main_thread = 0; /* the default: the first thread a snapshot keeps */
}

int fx_profile_thread_set_name(struct fx_profile *p, fx_thread_id id, const char *name)
{
    uint32_t thread = id.i;
    if (!fx_profile_thread_ok(p, thread) || !name)
        return FX_EINVAL;
    char *copy = fx_strdup(name);
    if (!copy)
        return FX_ENOMEM;
    fx_free(p->threads[thread]->name);
    p->threads[thread]->name = copy;
    p->threads[thread]->name_len = (uint32_t)strlen(copy);
    fx_profile_thread_recount(p, p->threads[thread]);
    return FX_OK;
}

int fx_profile_thread_add_companion(struct fx_profile *p, fx_thread_id owner_id, const char *suffix,
                                    int64_t register_ns, fx_thread_id *out)
{
    uint32_t owner = owner_id.i;
    if (!fx_profile_thread_ok(p, owner) || !suffix)
        return FX_EINVAL;
    const char *on = p->threads[owner]->name ? p->threads[owner]->name : "";
    int64_t tid = p->threads[owner]->tid;
    size_t n = strlen(on), k = strlen(suffix);
    char *name = fx_malloc(n + k + 1);
    if (!name)
        return FX_ENOMEM;
    memcpy(name, on, n);
    memcpy(name + n, suffix, k + 1);
    int rc = fx_profile_thread_add(p, name, tid, register_ns, out);
    fx_free(name);
    if (rc == FX_OK) {
        p->threads[out->i]->companion_of = owner + 1;
        p->threads[out->i]->suffix_len = (uint32_t)k;
    }
    return rc;
}

void fx_profile_thread_unregister(struct fx_profile *p, fx_thread_id id, int64_t t_ns)
{
    uint32_t thread = id.i;
    if (!fx_profile_thread_ok(p, thread))
        return;
    p->threads[thread]->unregistered = true;
    p->threads[thread]->unregister_ns = t_ns;
}

int fx_profile_thread_set_weight_type(struct fx_profile *p, fx_thread_id id,
                                      enum fx_weight_type type)
{
    uint32_t thread = id.i;
    if (!fx_profile_thread_ok(p, thread) || (unsigned)type >= FX_WEIGHT_TYPE_COUNT)
        return FX_EINVAL;
    p->threads[thread]->weight_type = (uint8_t)type;
    return FX_OK;
}

int fx_profile_thread_set_idle_waits(struct fx_profile *p, fx_thread_id id)
{
    uint32_t thread = id.i;
    if (!fx_profile_thread_ok(p, thread))
        return FX_EINVAL;
    p->threads[thread]->idle_waits = true;
    return FX_OK;
}

void fx_profile_set_main_thread(struct fx_profile *p, fx_thread_id id)
{
    uint32_t thread = id.i;
    if (fx_profile_thread_ok(p, thread))
        p->main_thread = thread;
}

uint32_t fx_profile_thread_count(const struct fx_profile *p)
{
    return p->nthreads;
}

uint32_t fx_profile_threads_held(const struct fx_profile *p)
{
    return p->nthreads - p->nvacant;
}

/* --- samples --- */

static int samples_reserve(struct fx_samples *s, bool need_weight)
{
    struct fx_col cols[FX_MAX_COLS];
    int rc = fx_profile_grow(&s->cap, s->count, cols, fx_samples_cols(s, cols));
    if (rc != FX_OK || !need_weight || s->weight)
        return rc;
    /* The first weight other than 1: the column appears, with an implicit 1 for earlier
     * samples. Until then the writer emits weight: null (PROFILE-FORMAT.md §7). */
    uint32_t *w = fx_reallocarray(NULL, s->cap, sizeof(*w));
    if (!w)
        return FX_ENOMEM;
    for (uint32_t i = 0; i < s->count; i++)
        w[i] = 1;
    s->weight = w;
    return FX_OK;
}

static uint32_t cpu_column(int64_t cpu_delta_ns)
{
    if (cpu_delta_ns < 0)
        return FX_CPU_UNKNOWN;
    return cpu_delta_ns >= FX_CPU_UNKNOWN ? FX_CPU_UNKNOWN - 1 : (uint32_t)cpu_delta_ns;
}

int fx_profile_sample(struct fx_profile *p, fx_thread_id id, int64_t time_ns, fx_stack_id stack,
                      int64_t cpu_delta_ns, uint32_t weight)
{
    uint32_t thread = id.i;
    if (!fx_profile_thread_ok(p, thread) || (stack.i != FX_NONE_ID && stack.i >= p->stacks.count))
        return FX_EINVAL;
    struct fx_samples *s = &p->threads[thread]->samples;
    uint32_t cap = s->cap;
    bool weighted = s->weight != NULL;
    int rc = samples_reserve(s, weight != 1);
    if (s->cap != cap || (s->weight != NULL) != weighted) /* even failed: one may have grown */
        fx_profile_thread_recount(p, p->threads[thread]);
    if (rc != FX_OK)
        return rc;
    uint32_t i = s->count++;
    /* Clamped, never reordered: the front-end binary-searches sample times. */
    s->time_ns[i] = i && time_ns < s->time_ns[i - 1] ? s->time_ns[i - 1] : time_ns;
    s->stack[i] = stack.i;
    s->cpu_ns[i] = cpu_column(cpu_delta_ns);
    if (s->weight)
        s->weight[i] = weight;
    return FX_OK;
}

uint64_t fx_profile_sample_count(const struct fx_profile *p)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < p->nthreads; i++)
        n += p->threads[i]->samples.count;
    return n;
}

/* --- markers --- */

/* data.type names the schema and data.cause is read as the marker's stack ({stack: index}) by
 * the front-end, so fields with those keys would break the marker (PROFILE-FORMAT.md §10.1). */
static bool fields_ok(const struct fx_marker_schema *s)
{
    for (unsigned f = 0; f < s->n_fields; f++) {
        const char *k = s->fields[f].key;
        if (!k || !*k || strcmp(k, "type") == 0 || strcmp(k, "cause") == 0)
            return false;
    }
    return true;
}

int fx_profile_schema(struct fx_profile *p, const struct fx_marker_schema *s, fx_schema_id *out)
{
    if (!s || !s->name || s->n_fields > FX_MARKER_MAX_FIELDS || (s->n_fields && !s->fields) ||
        !fields_ok(s))
        return FX_EINVAL;
    for (uint32_t i = 0; i < p->nschemas; i++) {
        if (p->schemas[i] == s) {
            out->i = i;
            return FX_OK;
        }
    }
    int rc = fx_profile_grow_array((void **)&p->schemas, &p->schemas_cap, p->nschemas,
                                   sizeof(*p->schemas));
    if (rc != FX_OK)
        return rc;
    p->schemas[p->nschemas] = s;
    out->i = p->nschemas++;
    return FX_OK;
}

static bool values_ok(const struct fx_profile *p, const struct fx_marker_schema *s,
                      const union fx_marker_value *v)
{
    for (unsigned f = 0; f < s->n_fields; f++) {
        enum fx_field_format fmt = s->fields[f].format;
        bool is_str = fmt == FX_FMT_STRING || fmt == FX_FMT_UNIQUE_STRING;
        if (is_str && v[f].s.i >= p->strings.count)
            return false;
    }
    return true;
}

static int markers_reserve(struct fx_markers *m, unsigned nvalues)
{
    if (m->count < m->cap && m->nvalues + nvalues <= m->values_cap)
        return FX_OK; /* room in every column: the common case, no column list made */
    struct fx_col cols[FX_MAX_COLS];
    int rc = fx_profile_grow(&m->cap, m->count, cols, fx_markers_cols(m, cols));
    if (rc != FX_OK || !nvalues)
        return rc;
    if (m->nvalues > UINT32_MAX - FX_MARKER_MAX_FIELDS)
        return FX_EFULL;
    uint32_t cap = m->values_cap ? m->values_cap : 64;
    while (cap < m->nvalues + nvalues)
        cap *= 2;
    if (cap == m->values_cap)
        return FX_OK;
    union fx_marker_value *v = fx_reallocarray(m->values, cap, sizeof(*v));
    if (!v)
        return FX_ENOMEM;
    m->values = v;
    m->values_cap = cap;
    return FX_OK;
}

int fx_profile_marker(struct fx_profile *p, fx_thread_id id, fx_str_id name, uint8_t phase,
                      uint8_t category, int64_t start_ns, int64_t end_ns, fx_schema_id schema_id,
                      const union fx_marker_value *values)
{
    uint32_t thread = id.i, schema = schema_id.i;
    const struct fx_marker_schema *s = NULL;
    if (schema != FX_NONE_ID) {
        if (schema >= p->nschemas)
            return FX_EINVAL;
        s = p->schemas[schema];
        if (s->n_fields && (!values || !values_ok(p, s, values)))
            return FX_EINVAL;
    }
    if (!fx_profile_thread_ok(p, thread) || name.i >= p->strings.count || phase > FX_PHASE_END ||
        category >= FX_CAT_COUNT)
        return FX_EINVAL;
    if (p->packed)
        return fx_mpack_add(p, thread, &(struct fx_mkind){name.i, schema, phase, category},
                            start_ns, end_ns, values);
    struct fx_markers *m = &p->threads[thread]->markers;
    unsigned nvalues = s ? s->n_fields : 0;
    uint32_t cap = m->cap, values_cap = m->values_cap;
    int rc = markers_reserve(m, nvalues);
    if (m->cap != cap || m->values_cap != values_cap)
        fx_profile_thread_recount(p, p->threads[thread]);
    if (rc != FX_OK)
        return rc;
    uint32_t i = m->count++;
    m->name[i] = name.i;
    m->start_ns[i] = phase == FX_PHASE_END ? 0 : start_ns;
    m->end_ns[i] = phase == FX_PHASE_INTERVAL || phase == FX_PHASE_END ? end_ns : 0;
    m->phase[i] = phase;
    m->category[i] = category;
    m->schema[i] = schema;
    m->values_at[i] = m->nvalues;
    if (m->cause_stack)
        m->cause_stack[i] = FX_NONE_ID;
    if (nvalues)
        memcpy(&m->values[m->nvalues], values, nvalues * sizeof(*values));
    m->nvalues += nvalues;
    return FX_OK;
}

int fx_profile_marker_stack(struct fx_profile *p, fx_thread_id id, fx_stack_id stack)
{
    uint32_t thread = id.i;
    if (!fx_profile_thread_ok(p, thread) || stack.i >= p->stacks.count)
        return FX_EINVAL;
    if (p->packed)
        return fx_mpack_stack(p, thread, stack.i);
    struct fx_markers *m = &p->threads[thread]->markers;
    if (m->count == 0 || m->schema[m->count - 1] == FX_NONE_ID)
        return FX_EINVAL; /* no marker, or data null: a cause needs a data object */
    if (!m->cause_stack) {
        /* The column appears with the first stack (as samples.weight does), so threads whose
         * markers have none keep their memory. */
        uint32_t *c = fx_reallocarray(NULL, m->cap, sizeof(*c));
        if (!c)
            return FX_ENOMEM;
        memset(c, 0xff, (size_t)m->cap * sizeof(*c)); /* every row FX_NONE_ID */
        m->cause_stack = c;
        fx_profile_thread_recount(p, p->threads[thread]);
    }
    m->cause_stack[m->count - 1] = stack.i;
    return FX_OK;
}

/* --- counters --- */

int fx_profile_counter(struct fx_profile *p, const struct fx_counter_desc *d, fx_counter_id *out)
{
    if (!d || !d->name)
        return FX_EINVAL;
    const char *src[] = {d->name, d->category ? d->category : "",
                         d->description ? d->description : "", d->unit ? d->unit : "",
                         d->color ? d->color : "grey"};
    char *copy[5];
    for (unsigned i = 0; i < 5; i++) {
        copy[i] = fx_strdup(src[i]);
        if (!copy[i]) {
            fx_profile_free_strs(copy, i);
            return FX_ENOMEM;
        }
    }
    int rc = fx_profile_grow_array((void **)&p->counters, &p->counters_cap, p->ncounters,
                                   sizeof(*p->counters));
    if (rc != FX_OK) {
        fx_profile_free_strs(copy, 5);
        return rc;
    }
    struct fx_counter *c = &p->counters[p->ncounters];
    *c = (struct fx_counter){.name = copy[0],
                             .category = copy[1],
                             .description = copy[2],
                             .unit = copy[3],
                             .color = copy[4]};
    out->i = p->ncounters++;
    return FX_OK;
}

int fx_profile_counter_sample(struct fx_profile *p, fx_counter_id id, int64_t t_ns, int64_t value)
{
    uint32_t counter = id.i;
    if (counter >= p->ncounters)
        return FX_EINVAL;
    struct fx_counter *c = &p->counters[counter];
    struct fx_col cols[FX_MAX_COLS];
    int rc = fx_profile_grow(&c->cap, c->count, cols, fx_counter_cols(c, cols));
    if (rc != FX_OK)
        return rc;
    uint32_t i = c->count++;
    c->time_ns[i] = i && t_ns < c->time_ns[i - 1] ? c->time_ns[i - 1] : t_ns;
    c->value[i] = value;
    return FX_OK;
}

/* --- memory (a thread's: profile_count.c) --- */

/* All but the threads' share: counters and meta.extra groups are few (not one per thread). */
static size_t memory_but_threads(const struct fx_profile *p)
{
    size_t n = sizeof(*p) + fx_profile_tables_memory(p) + fx_profile_libs_memory(&p->libs) +
               fx_profile_live_memory(p);
    n += (size_t)p->threads_cap * sizeof(*p->threads);
    n += (size_t)p->schemas_cap * sizeof(*p->schemas);
    n += (size_t)p->counters_cap * sizeof(*p->counters);
    for (uint32_t i = 0; i < p->ncounters; i++)
        n += (size_t)p->counters[i].cap * 2 * sizeof(int64_t);
    n += (size_t)p->extra_cap * sizeof(*p->extra);
    for (uint32_t i = 0; i < p->nextra; i++)
        n += (size_t)p->extra[i].cap * sizeof(*p->extra[i].entries);
    return n;
}

size_t fx_profile_memory(const struct fx_profile *p)
{
    return memory_but_threads(p) + p->threads_bytes;
}

size_t fx_profile_memory_recount(const struct fx_profile *p)
{
    size_t n = memory_but_threads(p);
    for (uint32_t i = 0; i < p->nthreads; i++)
        n += fx_profile_thread_memory(p->threads[i]);
    return n;
}
