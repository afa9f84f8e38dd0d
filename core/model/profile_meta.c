/* SPDX-License-Identifier: Apache-2.0 */
/* The model's meta (§4: start, range, interval, pid, the known keys) and meta.extra, the groups of
 * labelled figures "Profile Info" shows, set and replaced by label (include/fx_profile.h).
 * Tests: unit.profile, unit.ff_writer. */
#include <string.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_profile.h"
#include "fx_profile_internal.h"
#include "fx_profile_model.h"

static const char *const meta_keys[FX_META_COUNT] = {
        [FX_META_PRODUCT] = "product",  [FX_META_PROCESS_NAME] = "processName",
        [FX_META_OSCPU] = "oscpu",      [FX_META_PLATFORM] = "platform",
        [FX_META_CPU_NAME] = "CPUName", [FX_META_ARGUMENTS] = "arguments",
};

static const char *const meta_int_keys[FX_META_INT_COUNT] = {
        [FX_META_LOGICAL_CPUS] = "logicalCPUs",
        [FX_META_PHYSICAL_CPUS] = "physicalCPUs",
        [FX_META_MAIN_MEMORY] = "mainMemory",
};

const char *fx_profile_meta_key(enum fx_meta_key k)
{
    return meta_keys[k];
}

const char *fx_profile_meta_int_key(unsigned k)
{
    return k < FX_META_INT_COUNT ? meta_int_keys[k] : NULL;
}

void fx_profile_extra_destroy(struct fx_extra_group *g)
{
    for (uint32_t i = 0; i < g->count; i++) {
        fx_free(g->entries[i].label);
        fx_free(g->entries[i].s);
    }
    fx_free(g->entries);
    fx_free(g->label);
}

/* --- meta --- */

void fx_profile_set_start(struct fx_profile *p, int64_t start_ns, double epoch_ms)
{
    p->start_ns = start_ns;
    p->kept_from_ns = start_ns; /* a new period: what came before is gone or not ours */
    p->epoch_ms = epoch_ms;
}

void fx_profile_set_range(struct fx_profile *p, int64_t begin_ns, int64_t end_ns)
{
    p->range_set = true;
    p->range_begin_ns = begin_ns;
    p->range_end_ns = end_ns;
}

void fx_profile_set_interval(struct fx_profile *p, double interval_ms)
{
    if (interval_ms > 0)
        p->interval_ms = interval_ms;
}

void fx_profile_set_pid(struct fx_profile *p, int64_t pid)
{
    p->pid = pid;
}

int fx_profile_set_meta(struct fx_profile *p, const char *key, const char *value)
{
    if (!key || !value)
        return FX_EINVAL;
    for (unsigned k = 0; k < FX_META_COUNT; k++) {
        if (strcmp(key, meta_keys[k]) != 0)
            continue;
        char *copy = fx_strdup(value);
        if (!copy)
            return FX_ENOMEM;
        fx_free(p->meta[k]);
        p->meta[k] = copy;
        return FX_OK;
    }
    return FX_EINVAL;
}

int fx_profile_set_meta_int(struct fx_profile *p, const char *key, int64_t value)
{
    for (unsigned k = 0; key && k < FX_META_INT_COUNT; k++) {
        if (strcmp(key, meta_int_keys[k]) == 0) {
            p->meta_int[k] = value;
            p->meta_int_set[k] = true;
            return FX_OK;
        }
    }
    return FX_EINVAL;
}

static struct fx_extra_group *find_group(struct fx_profile *p, const char *label)
{
    for (uint32_t i = 0; i < p->nextra; i++) {
        if (strcmp(p->extra[i].label, label) == 0)
            return &p->extra[i];
    }
    return NULL;
}

static struct fx_extra_entry *find_entry(struct fx_extra_group *g, const char *label)
{
    for (uint32_t i = 0; g && i < g->count; i++) {
        if (strcmp(g->entries[i].label, label) == 0)
            return &g->entries[i];
    }
    return NULL;
}

/* What a new entry (and perhaps a new group) needs, allocated before anything is added. */
struct extra_new {
    char *glabel, *elabel;
    struct fx_extra_entry *entries; /* a new group's first entries array */
};

static int extra_prepare(struct fx_profile *p, struct fx_extra_group *g, const char *group,
                         const char *label, struct extra_new *n)
{
    n->elabel = fx_strdup(label);
    if (!n->elabel)
        return FX_ENOMEM;
    if (g)
        return fx_profile_grow_array((void **)&g->entries, &g->cap, g->count, sizeof(*g->entries));
    n->glabel = fx_strdup(group);
    n->entries = fx_reallocarray(NULL, 16, sizeof(*n->entries));
    if (!n->glabel || !n->entries)
        return FX_ENOMEM;
    return fx_profile_grow_array((void **)&p->extra, &p->extra_cap, p->nextra, sizeof(*p->extra));
}

static struct fx_extra_entry *extra_add(struct fx_profile *p, struct fx_extra_group *g,
                                        struct extra_new *n)
{
    if (!g) {
        g = &p->extra[p->nextra++];
        *g = (struct fx_extra_group){.label = n->glabel, .entries = n->entries, .cap = 16};
    }
    struct fx_extra_entry *e = &g->entries[g->count++];
    *e = (struct fx_extra_entry){.label = n->elabel};
    return e;
}

static int set_extra(struct fx_profile *p, const char *group, const char *label, const char *s,
                     int64_t i, enum fx_extra_show show)
{
    if (!group || !label)
        return FX_EINVAL;
    char *copy = s ? fx_strdup(s) : NULL;
    if (s && !copy)
        return FX_ENOMEM;
    struct fx_extra_group *g = find_group(p, group);
    struct fx_extra_entry *e = find_entry(g, label);
    if (!e) {
        struct extra_new n = {0};
        if (extra_prepare(p, g, group, label, &n) != FX_OK) {
            char *tofree[] = {copy, n.glabel, n.elabel, (char *)n.entries};
            fx_profile_free_strs(tofree, 4);
            return FX_ENOMEM;
        }
        e = extra_add(p, g, &n);
    }
    fx_free(e->s);
    e->s = copy;
    e->is_int = !s;
    e->i = i;
    e->show = (uint8_t)show;
    return FX_OK;
}

int fx_profile_extra_str(struct fx_profile *p, const char *group, const char *label,
                         const char *value)
{
    return value ? set_extra(p, group, label, value, 0, FX_EXTRA_ALWAYS) : FX_EINVAL;
}

int fx_profile_extra_int(struct fx_profile *p, const char *group, const char *label, int64_t value)
{
    return set_extra(p, group, label, NULL, value, FX_EXTRA_ALWAYS);
}

int fx_profile_extra_count(struct fx_profile *p, const char *group, const char *label,
                           int64_t value, enum fx_extra_show show)
{
    return show <= FX_EXTRA_LOSS ? set_extra(p, group, label, NULL, value, show) : FX_EINVAL;
}

int fx_profile_extra_rows(struct fx_profile *p, const char *group, const struct fx_extra_row *rows,
                          size_t n)
{
    int zeros = 0; /* a row that cannot be set (no memory) is missing, not the rows after it */
    for (size_t i = 0; i < n; i++) {
        fx_profile_extra_count(p, group, rows[i].label, (int64_t)rows[i].value, rows[i].show);
        zeros += rows[i].show == FX_EXTRA_NONZERO && rows[i].value == 0;
    }
    return zeros;
}

int fx_profile_extra_detail(struct fx_profile *p, const char *group, const char *label,
                            int64_t value)
{
    return set_extra(p, group, label, NULL, value, FX_EXTRA_NONZERO);
}

int fx_profile_extra_loss(struct fx_profile *p, const char *group, const char *label, int64_t value)
{
    return set_extra(p, group, label, NULL, value, FX_EXTRA_LOSS);
}

void fx_profile_extra_clear(struct fx_profile *p)
{
    for (uint32_t i = 0; i < p->nextra; i++)
        fx_profile_extra_destroy(&p->extra[i]);
    fx_free(p->extra);
    p->extra = NULL;
    p->nextra = p->extra_cap = 0;
}
