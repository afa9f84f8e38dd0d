/* SPDX-License-Identifier: Apache-2.0 */
/* The interned tables of the profile model: strings, funcs, frames, stacks, and the resource and
 * source lists derived from func keys. Every get-or-create first reserves room in each table it
 * may touch, then inserts, so a failure leaves all tables as they were.
 * Tests: unit.profile. */
#include "fx_profile.h"

#include <string.h>

#include "fx_alloc.h"
#include "fx_profile_internal.h"
#include "fx_profile_model.h"

static const char *const sub_other[] = {"Other"};
/* "Recovered...": frames put on top of a stack by stack recovery (issue 20); the oracle of
 * tests/it/stack_shape_check.py finds them by this prefix. */
/* Issue 18: what a thread sampled off CPU in wall mode was doing (enum fx_idle_subcategory). */
static const char *const sub_idle[] = {"Other",    "Runnable", "Blocked (monitor)", "Waiting",
                                       "Sleeping", "Parked",   "Native / I-O",      "Pinned"};
static const char *const sub_java[] = {"Other",   "Interpreted",   "JIT (C1)", "JIT (C2)",
                                       "Inlined", "Native method", "Recovered"};
static const char *const sub_native[] = {"Other", "libjvm", "libc/kernel", "JNI library"};
static const char *const sub_gc[] = {"Other", "Young", "Mixed", "Full", "Concurrent"};
static const char *const sub_jit[] = {"Other", "C1", "C2"};
static const char *const sub_vm[] = {"Other", "Safepoint",      "Class loading",
                                     "Stub",  "Recovered stub", "Receiver class"};
static const char *const sub_kernel[] = {"Other", "System call", "Page fault"};

#define CAT(name, color, subs)                            \
    {                                                     \
        name, color, subs, sizeof(subs) / sizeof(subs[0]) \
    }

/* PROFILE-FORMAT.md §12.1; the order is the writer's ABI (enum fx_category). */
static const struct fx_category_info categories[FX_CAT_COUNT] = {
        [FX_CAT_OTHER] = CAT("Other", "grey", sub_other),
        [FX_CAT_IDLE] = CAT("Idle", "transparent", sub_idle),
        [FX_CAT_JAVA] = CAT("Java", "yellow", sub_java),
        [FX_CAT_NATIVE] = CAT("Native", "lightblue", sub_native),
        [FX_CAT_GC] = CAT("GC", "orange", sub_gc),
        [FX_CAT_JIT] = CAT("JIT compiler", "green", sub_jit),
        [FX_CAT_VM] = CAT("VM", "purple", sub_vm),
        [FX_CAT_ALLOC] = CAT("Allocation", "magenta", sub_other),
        [FX_CAT_KERNEL] = CAT("Kernel", "red", sub_kernel),
};

const struct fx_category_info *fx_profile_category(unsigned i)
{
    return i < FX_CAT_COUNT ? &categories[i] : NULL;
}

int fx_profile_grow(uint32_t *cap, uint32_t count, const struct fx_col *cols, unsigned ncols)
{
    if (count < *cap)
        return FX_OK;
    if (*cap >= (1u << 31))
        return FX_EFULL;
    uint32_t ncap = *cap ? *cap * 2 : 16;
    for (unsigned c = 0; c < ncols; c++) {
        void *np = fx_reallocarray(*cols[c].p, ncap, cols[c].size);
        if (!np)
            return FX_ENOMEM;
        *cols[c].p = np;
    }
    *cap = ncap;
    return FX_OK;
}

/* Grows a plain array of structs (threads, counters, ...) by doubling. */
int fx_profile_grow_array(void **arr, uint32_t *cap, uint32_t count, size_t size)
{
    struct fx_col col = {arr, size};
    return fx_profile_grow(cap, count, &col, 1);
}

void fx_cols_move(const struct fx_col *cols, unsigned ncols, uint32_t to, uint32_t from, uint32_t n)
{
    if (to == from || n == 0)
        return;
    for (unsigned c = 0; c < ncols; c++) {
        char *base = *cols[c].p;
        memmove(base + (size_t)to * cols[c].size, base + (size_t)from * cols[c].size,
                (size_t)n * cols[c].size);
    }
}

void fx_cols_free(const struct fx_col *cols, unsigned ncols)
{
    for (unsigned c = 0; c < ncols; c++) {
        fx_free(*cols[c].p);
        *cols[c].p = NULL;
    }
}

unsigned fx_funcs_cols(struct fx_funcs *f, struct fx_col *cols)
{
    return FX_COLS_SET(cols, FX_COL(f, name), FX_COL(f, resource), FX_COL(f, source),
                       FX_COL(f, line), FX_COL(f, is_java), FX_COL(f, resource_row),
                       FX_COL(f, source_row));
}

unsigned fx_frames_cols(struct fx_frames *f, struct fx_col *cols)
{
    return FX_COLS_SET(cols, FX_COL(f, func), FX_COL(f, line), FX_COL(f, category),
                       FX_COL(f, subcategory), FX_COL(f, inline_depth));
}

unsigned fx_stacks_cols(struct fx_stacks *s, struct fx_col *cols)
{
    return FX_COLS_SET(cols, FX_COL(s, prefix), FX_COL(s, frame));
}

/* --- strings --- */

/* fx_profile_set_table_limit: no new row once the tables hold the limit. */
static bool tables_full(const struct fx_profile *p)
{
    return p->table_limit && fx_profile_tables_memory(p) >= p->table_limit;
}

int fx_profile_string(struct fx_profile *p, const char *s, size_t len, fx_str_id *out)
{
    if (!s && len)
        return FX_EINVAL;
    if (tables_full(p) && fx_strtab_find(&p->strings, s ? s : "", len) == FX_ROWIDX_NONE)
        return FX_EFULL;
    uint32_t id;
    int rc = fx_strtab_intern(&p->strings, s ? s : "", len, &id);
    if (rc == FX_OK)
        out->i = id;
    return rc;
}

int fx_profile_cstring(struct fx_profile *p, const char *s, fx_str_id *out)
{
    if (!s)
        return FX_EINVAL;
    return fx_profile_string(p, s, strlen(s), out);
}

const char *fx_profile_string_at(const struct fx_profile *p, fx_str_id id, size_t *len)
{
    if (id.i >= p->strings.count)
        return NULL;
    return fx_strtab_get(&p->strings, id.i, len);
}

static bool str_ok(const struct fx_profile *p, fx_str_id s, bool none_ok)
{
    return s.i < p->strings.count || (none_ok && s.i == FX_NONE_ID);
}

/* --- id lists (resources, sources) --- */

static uint32_t hash_u32(uint32_t v)
{
    return fx_rowidx_finish(fx_rowidx_mix(0, v));
}

static uint32_t idlist_hash(const void *table, uint32_t row)
{
    return hash_u32(((const struct fx_idlist *)table)->str[row]);
}

static bool idlist_eq(const void *table, uint32_t row, const void *key)
{
    return ((const struct fx_idlist *)table)->str[row] == *(const uint32_t *)key;
}

static uint32_t idlist_find(const struct fx_idlist *l, uint32_t str)
{
    if (str == FX_NONE_ID)
        return FX_NONE_ID;
    return fx_rowidx_find(&l->idx, hash_u32(str), idlist_eq, l, &str);
}

static int idlist_reserve(struct fx_idlist *l)
{
    struct fx_col cols[] = {{(void **)&l->str, sizeof(*l->str)}};
    int rc = fx_profile_grow(&l->cap, l->count, cols, 1);
    if (rc == FX_OK)
        rc = fx_rowidx_reserve(&l->idx, l->count, idlist_hash, l);
    return rc;
}

/* After idlist_reserve: the row of `str`, added if new (none for FX_NONE_ID). */
static uint32_t idlist_add(struct fx_idlist *l, uint32_t str)
{
    uint32_t row = idlist_find(l, str);
    if (row != FX_NONE_ID || str == FX_NONE_ID)
        return row;
    row = l->count++;
    l->str[row] = str;
    fx_rowidx_add(&l->idx, hash_u32(str), row);
    return row;
}

static void idlist_destroy(struct fx_idlist *l)
{
    fx_free(l->str);
    fx_rowidx_destroy(&l->idx);
}

static size_t idlist_memory(const struct fx_idlist *l)
{
    return (size_t)l->cap * sizeof(*l->str) + fx_rowidx_memory(&l->idx);
}

/* --- funcs --- */

static uint32_t func_key_hash(const struct fx_func_key *k)
{
    uint64_t h = fx_rowidx_mix(1, k->name.i);
    h = fx_rowidx_mix(h, ((uint64_t)k->resource.i << 32) | k->source.i);
    h = fx_rowidx_mix(h, ((uint64_t)(uint32_t)k->line << 1) | k->is_java);
    return fx_rowidx_finish(h);
}

struct fx_func_key fx_profile_func_key_at(const struct fx_funcs *f, uint32_t row)
{
    return (struct fx_func_key){
            {f->name[row]}, {f->resource[row]}, {f->source[row]}, f->line[row], f->is_java[row]};
}

static uint32_t func_hash(const void *table, uint32_t row)
{
    struct fx_func_key k = fx_profile_func_key_at(table, row);
    return func_key_hash(&k);
}

static bool func_eq(const void *table, uint32_t row, const void *key)
{
    const struct fx_funcs *f = table;
    const struct fx_func_key *k = key;
    return f->name[row] == k->name.i && f->resource[row] == k->resource.i &&
           f->source[row] == k->source.i && f->line[row] == k->line &&
           f->is_java[row] == (uint8_t)k->is_java;
}

static int funcs_reserve(struct fx_funcs *f)
{
    struct fx_col cols[FX_MAX_COLS];
    int rc = fx_profile_grow(&f->cap, f->count, cols, fx_funcs_cols(f, cols));
    if (rc == FX_OK)
        rc = fx_rowidx_reserve(&f->idx, f->count, func_hash, f);
    return rc;
}

int fx_profile_func(struct fx_profile *p, const struct fx_func_key *k, fx_func_id *out)
{
    if (!str_ok(p, k->name, false) || !str_ok(p, k->resource, true) || !str_ok(p, k->source, true))
        return FX_EINVAL;
    struct fx_func_key key = *k;
    key.line = k->line < 0 ? -1 : k->line;
    struct fx_funcs *f = &p->funcs;
    uint32_t h = func_key_hash(&key);
    uint32_t row = fx_rowidx_find(&f->idx, h, func_eq, f, &key);
    if (row == FX_ROWIDX_NONE) {
        if (tables_full(p))
            return FX_EFULL;
        int rc = idlist_reserve(&p->resources);
        if (rc == FX_OK)
            rc = idlist_reserve(&p->sources);
        if (rc == FX_OK)
            rc = funcs_reserve(f);
        if (rc != FX_OK)
            return rc;
        row = f->count++;
        f->name[row] = key.name.i;
        f->resource[row] = key.resource.i;
        f->source[row] = key.source.i;
        f->line[row] = key.line;
        f->is_java[row] = key.is_java;
        f->resource_row[row] = idlist_add(&p->resources, key.resource.i);
        f->source_row[row] = idlist_add(&p->sources, key.source.i);
        fx_rowidx_add(&f->idx, h, row);
    }
    out->i = row;
    return FX_OK;
}

/* --- frames --- */

static uint32_t frame_key_hash(const struct fx_frame_key *k)
{
    uint64_t h = fx_rowidx_mix(2, k->func.i);
    uint64_t small =
            ((uint64_t)k->category << 16) | ((uint64_t)k->subcategory << 8) | k->inline_depth;
    h = fx_rowidx_mix(h, ((uint64_t)(uint32_t)k->line << 32) | small);
    return fx_rowidx_finish(h);
}

struct fx_frame_key fx_profile_frame_key_at(const struct fx_frames *f, uint32_t row)
{
    return (struct fx_frame_key){{f->func[row]},
                                 f->line[row],
                                 f->category[row],
                                 f->subcategory[row],
                                 f->inline_depth[row]};
}

static uint32_t frame_hash(const void *table, uint32_t row)
{
    struct fx_frame_key k = fx_profile_frame_key_at(table, row);
    return frame_key_hash(&k);
}

static bool frame_eq(const void *table, uint32_t row, const void *key)
{
    const struct fx_frames *f = table;
    const struct fx_frame_key *k = key;
    return f->func[row] == k->func.i && f->line[row] == k->line &&
           f->category[row] == k->category && f->subcategory[row] == k->subcategory &&
           f->inline_depth[row] == k->inline_depth;
}

static int frames_reserve(struct fx_frames *f)
{
    struct fx_col cols[FX_MAX_COLS];
    int rc = fx_profile_grow(&f->cap, f->count, cols, fx_frames_cols(f, cols));
    if (rc == FX_OK)
        rc = fx_rowidx_reserve(&f->idx, f->count, frame_hash, f);
    return rc;
}

int fx_profile_frame(struct fx_profile *p, const struct fx_frame_key *k, fx_frame_id *out)
{
    if (k->func.i >= p->funcs.count || k->category >= FX_CAT_COUNT ||
        k->subcategory >= categories[k->category].n_subcategories)
        return FX_EINVAL;
    struct fx_frame_key key = *k;
    key.line = k->line < 0 ? -1 : k->line;
    struct fx_frames *f = &p->frames;
    uint32_t h = frame_key_hash(&key);
    uint32_t row = fx_rowidx_find(&f->idx, h, frame_eq, f, &key);
    if (row == FX_ROWIDX_NONE) {
        if (tables_full(p))
            return FX_EFULL;
        int rc = frames_reserve(f);
        if (rc != FX_OK)
            return rc;
        row = f->count++;
        f->func[row] = key.func.i;
        f->line[row] = key.line;
        f->category[row] = key.category;
        f->subcategory[row] = key.subcategory;
        f->inline_depth[row] = key.inline_depth;
        fx_rowidx_add(&f->idx, h, row);
    }
    out->i = row;
    return FX_OK;
}

/* --- stacks --- */

struct stack_key {
    uint32_t prefix, frame;
};

static uint32_t stack_key_hash(uint32_t prefix, uint32_t frame)
{
    return fx_rowidx_finish(fx_rowidx_mix(3, ((uint64_t)prefix << 32) | frame));
}

static uint32_t stack_hash(const void *table, uint32_t row)
{
    const struct fx_stacks *s = table;
    return stack_key_hash(s->prefix[row], s->frame[row]);
}

static bool stack_eq(const void *table, uint32_t row, const void *key)
{
    const struct fx_stacks *s = table;
    const struct stack_key *k = key;
    return s->prefix[row] == k->prefix && s->frame[row] == k->frame;
}

int fx_profile_stack(struct fx_profile *p, fx_stack_id prefix, fx_frame_id frame, fx_stack_id *out)
{
    struct fx_stacks *s = &p->stacks;
    if ((prefix.i != FX_NONE_ID && prefix.i >= s->count) || frame.i >= p->frames.count)
        return FX_EINVAL;
    struct stack_key key = {prefix.i, frame.i};
    uint32_t h = stack_key_hash(key.prefix, key.frame);
    uint32_t row = fx_rowidx_find(&s->idx, h, stack_eq, s, &key);
    if (row == FX_ROWIDX_NONE) {
        if (tables_full(p))
            return FX_EFULL;
        struct fx_col cols[FX_MAX_COLS];
        int rc = fx_profile_grow(&s->cap, s->count, cols, fx_stacks_cols(s, cols));
        if (rc == FX_OK)
            rc = fx_rowidx_reserve(&s->idx, s->count, stack_hash, s);
        if (rc != FX_OK)
            return rc;
        row = s->count++;
        s->prefix[row] = key.prefix;
        s->frame[row] = key.frame;
        fx_rowidx_add(&s->idx, h, row);
    }
    out->i = row;
    return FX_OK;
}

int fx_profile_stack_at(const struct fx_profile *p, fx_stack_id s, fx_stack_id *prefix,
                        fx_frame_id *frame)
{
    if (s.i >= p->stacks.count)
        return FX_EINVAL;
    prefix->i = p->stacks.prefix[s.i];
    frame->i = p->stacks.frame[s.i];
    return FX_OK;
}

/* Each step is a get-or-create, so after a failure the earlier steps' rows (a string, a func)
 * stay interned: valid, and reused by the next attempt. */
int fx_profile_label_frame(struct fx_profile *p, const char *label, uint8_t category,
                           uint8_t subcategory, fx_frame_id *out)
{
    if (!label || category >= FX_CAT_COUNT)
        return FX_EINVAL;
    struct fx_func_key fk = {.resource = FX_STR_NONE, .source = FX_STR_NONE, .line = -1};
    int rc = fx_profile_cstring(p, label, &fk.name);
    fx_func_id func;
    if (rc == FX_OK)
        rc = fx_profile_func(p, &fk, &func);
    if (rc == FX_OK) {
        struct fx_frame_key k = {
                .func = func, .line = -1, .category = category, .subcategory = subcategory};
        rc = fx_profile_frame(p, &k, out);
    }
    return rc;
}

int fx_profile_label_stack(struct fx_profile *p, const char *label, uint8_t category,
                           fx_stack_id *out)
{
    fx_frame_id frame;
    int rc = fx_profile_label_frame(p, label, category, 0, &frame);
    if (rc == FX_OK)
        rc = fx_profile_stack(p, FX_STACK_NONE, frame, out);
    return rc;
}

/* --- whole tables --- */

void fx_profile_tables_destroy(struct fx_profile *p)
{
    fx_strtab_destroy(&p->strings);
    struct fx_col cols[FX_MAX_COLS];
    fx_cols_free(cols, fx_funcs_cols(&p->funcs, cols));
    fx_rowidx_destroy(&p->funcs.idx);
    fx_cols_free(cols, fx_frames_cols(&p->frames, cols));
    fx_rowidx_destroy(&p->frames.idx);
    fx_cols_free(cols, fx_stacks_cols(&p->stacks, cols));
    fx_rowidx_destroy(&p->stacks.idx);
    idlist_destroy(&p->resources);
    idlist_destroy(&p->sources);
}

size_t fx_profile_tables_memory(const struct fx_profile *p)
{
    size_t func_row = 6 * sizeof(uint32_t) + sizeof(uint8_t);
    size_t frame_row = 2 * sizeof(uint32_t) + 3 * sizeof(uint8_t);
    size_t stack_row = 2 * sizeof(uint32_t);
    return fx_strtab_memory(&p->strings) + (size_t)p->funcs.cap * func_row +
           fx_rowidx_memory(&p->funcs.idx) + (size_t)p->frames.cap * frame_row +
           fx_rowidx_memory(&p->frames.idx) + (size_t)p->stacks.cap * stack_row +
           fx_rowidx_memory(&p->stacks.idx) + idlist_memory(&p->resources) +
           idlist_memory(&p->sources);
}
