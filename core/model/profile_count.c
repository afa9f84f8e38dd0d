/* SPDX-License-Identifier: Apache-2.0 */
/* A thread's memory in the profile model, and its share of fx_profile.threads_bytes kept up to
 * date (O(1)) by every file that grows one of its columns (profile.c, profile_allocs.c,
 * marker_pack.c): the sizes it adds up are inline in the headers, so this file calls none of
 * them back; unit.profile checks the kept sum against a fresh count. Tests: unit.profile. */
#include "fx_profile.h"

#include "fx_profile_internal.h"
#include "fx_profile_model.h"

size_t fx_profile_thread_memory(const struct fx_thread *t)
{
    const struct fx_samples *s = &t->samples;
    size_t per_sample = sizeof(int64_t) + 2 * sizeof(uint32_t) + (s->weight ? 4 : 0);
    const struct fx_markers *m = &t->markers;
    size_t per_marker = 2 * sizeof(int64_t) + 3 * sizeof(uint32_t) + 2 + (m->cause_stack ? 4 : 0);
    return (t->vacant ? 0 : sizeof(*t)) + (t->name ? t->name_len + 1u : 0) +
           (size_t)s->cap * per_sample + (size_t)m->cap * per_marker +
           (size_t)m->values_cap * sizeof(*m->values) + fx_allocs_memory(&t->allocs) +
           fx_mpack_memory(t->pack);
}

void fx_profile_thread_recount(struct fx_profile *p, struct fx_thread *t)
{
    size_t n = fx_profile_thread_memory(t);
    p->threads_bytes = p->threads_bytes - t->counted + n;
    t->counted = n;
}

void fx_profile_recount_threads(struct fx_profile *p)
{
    p->threads_bytes = 0;
    for (uint32_t i = 0; i < p->nthreads; i++) {
        if (p->threads[i]->vacant) /* p->vacant: counts nothing, and is never written */
            continue;
        p->threads[i]->counted = 0;
        fx_profile_thread_recount(p, p->threads[i]);
    }
}
