/* SPDX-License-Identifier: Apache-2.0
 * Tests: unit.src, it.fxprof_sources. */
/* The model's share of embedding Java sources (issue 34, include/fx_src.h): which rows of the
 * sources table frames name and how hot each is, the texts the next write puts in the
 * table's content column (borrowed, never copied: they can be megabytes), and reading back a
 * meta.extra string (the "JVM" group says where the JDK and the class path are). */
#include "fx_profile_internal.h"

#include "fx_alloc.h"

uint32_t fx_profile_source_count(const struct fx_profile *p)
{
    return p->sources.count;
}

const char *fx_profile_source_name(const struct fx_profile *p, uint32_t row)
{
    size_t len;
    return row < p->sources.count ? fx_profile_string_at(p, (fx_str_id){p->sources.str[row]}, &len)
                                  : NULL;
}

/* A sample's weight as the file's call tree counts it: tracing-ms weights are µs in the model
 * and ms in the file (fxprof reads the file); bytes weigh one sample, as fxprof counts them. */
static double weight_of(const struct fx_thread *t, uint32_t i)
{
    if (!t->samples.weight || t->weight_type == FX_WEIGHT_BYTES)
        return 1;
    double w = t->samples.weight[i];
    return t->weight_type == FX_WEIGHT_TRACING_MS ? w / 1000 : w;
}

int fx_profile_source_heat(const struct fx_profile *p, double *heat, bool *named)
{
    uint32_t n = p->sources.count;
    uint32_t *stamp = fx_calloc(n ? n : 1, sizeof(*stamp)), tick = 0;
    if (!stamp)
        return FX_ENOMEM;
    for (uint32_t r = 0; r < n; r++) {
        heat[r] = 0;
        named[r] = false;
    }
    for (uint32_t f = 0; f < p->frames.count; f++) {
        uint32_t src = p->funcs.source_row[p->frames.func[f]];
        if (src < n)
            named[src] = true;
    }
    for (uint32_t th = 0; th < p->nthreads; th++) {
        if (fx_profile_thread_left_out(p, (fx_thread_id){th}))
            continue;
        const struct fx_thread *t = p->threads[th];
        for (uint32_t i = 0; i < t->samples.count; i++) {
            double w = weight_of(t, i);
            ++tick;
            /* each file once per sample, however many of its frames the stack holds */
            for (uint32_t st = t->samples.stack[i]; st < p->stacks.count;
                 st = p->stacks.prefix[st]) {
                uint32_t src = p->funcs.source_row[p->frames.func[p->stacks.frame[st]]];
                if (src < n && stamp[src] != tick) {
                    stamp[src] = tick;
                    heat[src] += w;
                }
            }
        }
    }
    fx_free(stamp);
    return FX_OK;
}

void fx_profile_set_source_content(struct fx_profile *p, const char *const *text, uint32_t n)
{
    p->source_content = text && n == p->sources.count ? text : NULL;
}

const char *fx_profile_extra_find(const struct fx_profile *p, const char *group, const char *label)
{
    for (uint32_t g = 0; g < p->nextra; g++) {
        const struct fx_extra_group *eg = &p->extra[g];
        if (strcmp(eg->label, group) != 0)
            continue;
        for (uint32_t i = 0; i < eg->count; i++)
            if (!eg->entries[i].is_int && !strcmp(eg->entries[i].label, label))
                return eg->entries[i].s;
    }
    return NULL;
}
