/* SPDX-License-Identifier: Apache-2.0 */
/* Random but reproducible profile models: one PRNG stream drives every choice in a fixed order,
 * so a seed names a model. Built only through the public fx_profile API, like the agent. */
#include "synth_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_profile.h"

#define MS_NS    1000000LL
#define N_ROOTS  8
#define START_NS 1000000000LL
#define EPOCH_MS 1767225600000.0

uint64_t synth_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

struct gen {
    struct fx_profile *p;
    uint64_t rng;
    fx_func_id *funcs;
    int32_t *func_line;
    uint32_t nfuncs;
    struct fx_errbuf *eb;
};

static int make_func(struct gen *g, uint32_t f, fx_str_id resource)
{
    char name[96], source[64];
    if (f < N_ROOTS) {
        snprintf(name, sizeof name, "java.lang.Thread.run%u", f);
        snprintf(source, sizeof source, "java/lang/Thread.java");
    } else {
        snprintf(name, sizeof name, "com.example.gen.C%04u.m%u", f / 8, f % 8);
        snprintf(source, sizeof source, "com/example/gen/C%04u.java", f / 8);
    }
    struct fx_func_key k = {
            .resource = resource, .line = (int32_t)(10 + (f % 8) * 20), .is_java = true};
    int rc = fx_profile_cstring(g->p, name, &k.name);
    if (rc == FX_OK)
        rc = fx_profile_cstring(g->p, source, &k.source);
    if (rc == FX_OK)
        rc = fx_profile_func(g->p, &k, &g->funcs[f]);
    g->func_line[f] = k.line;
    return rc;
}

static int make_funcs(struct gen *g, unsigned stacks)
{
    g->nfuncs = stacks / 4 + 64;
    g->funcs = fx_reallocarray(NULL, g->nfuncs, sizeof *g->funcs);
    g->func_line = fx_reallocarray(NULL, g->nfuncs, sizeof *g->func_line);
    if (!g->funcs || !g->func_line)
        return FX_ENOMEM;
    fx_str_id jar;
    int rc = fx_profile_cstring(g->p, "gen.jar", &jar);
    for (uint32_t f = 0; rc == FX_OK && f < g->nfuncs; f++)
        rc = make_func(g, f, jar);
    return rc;
}

/* A frame of func f at a random line and JIT tier: several frames per func, as in real data. */
static int push_frame(struct gen *g, uint32_t f, fx_stack_id prefix, fx_stack_id *out)
{
    uint64_t r = synth_next(&g->rng);
    struct fx_frame_key k = {.func = g->funcs[f],
                             .line = g->func_line[f] + (int32_t)(r % 8),
                             .category = FX_CAT_JAVA,
                             .subcategory = (uint8_t)((r >> 8) % 4)};
    fx_frame_id frame;
    int rc = fx_profile_frame(g->p, &k, &frame);
    return rc == FX_OK ? fx_profile_stack(g->p, prefix, frame, out) : rc;
}

struct paths {
    uint32_t *buf; /* stack ids, root first, one run per leaf */
    size_t *off;
    unsigned *depth;
    fx_stack_id *leaf;
};

static unsigned pick_depth(struct gen *g, const struct synth_params *sp)
{
    return sp->min_depth + (unsigned)(synth_next(&g->rng) % (sp->max_depth - sp->min_depth + 1));
}

/* Stack k copies a random prefix of an earlier stack j (never all of it, so the leaf is new),
 * then grows with random funcs to its own depth. */
static int make_stack(struct gen *g, const struct synth_params *sp, struct paths *ps, unsigned k)
{
    unsigned d = pick_depth(g, sp), share = 0;
    if (k > 0) {
        unsigned j = (unsigned)(synth_next(&g->rng) % k);
        unsigned most = ps->depth[j] < d ? ps->depth[j] : d - 1;
        share = (unsigned)(synth_next(&g->rng) % (most + 1));
        memcpy(ps->buf + ps->off[k], ps->buf + ps->off[j], share * sizeof *ps->buf);
    }
    fx_stack_id prev = share ? (fx_stack_id){ps->buf[ps->off[k] + share - 1]} : FX_STACK_NONE;
    for (unsigned lvl = share; lvl < d; lvl++) {
        uint64_t r = synth_next(&g->rng);
        uint32_t f = lvl == 0 ? (uint32_t)(r % N_ROOTS)
                              : N_ROOTS + (uint32_t)(r % (g->nfuncs - N_ROOTS));
        int rc = push_frame(g, f, prev, &prev);
        if (rc != FX_OK)
            return rc;
        ps->buf[ps->off[k] + lvl] = prev.i;
    }
    ps->depth[k] = d;
    ps->leaf[k] = prev;
    ps->off[k + 1] = ps->off[k] + d;
    return FX_OK;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static unsigned count_distinct(const fx_stack_id *leaf, unsigned n)
{
    uint32_t *ids = fx_reallocarray(NULL, n, sizeof *ids);
    if (!ids)
        return 0;
    for (unsigned i = 0; i < n; i++)
        ids[i] = leaf[i].i;
    qsort(ids, n, sizeof *ids, cmp_u32);
    unsigned d = n ? 1 : 0;
    for (unsigned i = 1; i < n; i++)
        d += ids[i] != ids[i - 1];
    fx_free(ids);
    return d;
}

static int make_samples(struct gen *g, const struct synth_params *sp, const fx_stack_id *leaf)
{
    int64_t *t = fx_calloc(sp->threads, sizeof *t);
    if (!t)
        return FX_ENOMEM;
    int rc = FX_OK;
    for (unsigned i = 0; i < sp->threads; i++)
        t[i] = START_NS + (int64_t)i * 97000;
    for (uint64_t s = 0; rc == FX_OK && s < sp->samples; s++) {
        unsigned th = (unsigned)(s % sp->threads);
        t[th] += MS_NS + (int64_t)(synth_next(&g->rng) % 50000);
        double u = (double)(synth_next(&g->rng) >> 11) * 0x1.0p-53;
        unsigned idx = (unsigned)(u * u * sp->stacks);
        int64_t cpu = 900000 + (int64_t)(synth_next(&g->rng) % 200000);
        rc = fx_profile_sample(g->p, (fx_thread_id){th}, t[th], leaf[idx < sp->stacks ? idx : 0],
                               cpu, 1);
    }
    int64_t end = START_NS;
    for (unsigned i = 0; i < sp->threads; i++)
        end = t[i] > end ? t[i] : end;
    fx_profile_set_range(g->p, START_NS, end + MS_NS);
    fx_free(t);
    if (rc != FX_OK)
        fx_errbuf_set(g->eb, "synth: adding a sample failed: %s", fx_strerror(rc));
    return rc;
}

static int make_threads(struct gen *g, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, i == 0 ? "main" : "gen-%u", i);
        fx_thread_id idx;
        int rc = fx_profile_thread_add(g->p, name, 5000 + i, START_NS, &idx);
        if (rc != FX_OK)
            return rc;
    }
    return FX_OK;
}

static uint32_t max_id(const struct paths *ps, unsigned n)
{
    uint32_t m = 0;
    for (size_t i = 0; i < ps->off[n]; i++)
        m = ps->buf[i] > m ? ps->buf[i] : m;
    return m;
}

static int make_stacks(struct gen *g, const struct synth_params *sp, struct paths *ps,
                       struct synth_stats *st)
{
    ps->buf = fx_reallocarray(NULL, (size_t)sp->stacks * sp->max_depth, sizeof *ps->buf);
    ps->off = fx_calloc((size_t)sp->stacks + 1, sizeof *ps->off);
    ps->depth = fx_calloc(sp->stacks, sizeof *ps->depth);
    ps->leaf = fx_calloc(sp->stacks, sizeof *ps->leaf);
    if (!ps->buf || !ps->off || !ps->depth || !ps->leaf)
        return FX_ENOMEM;
    int rc = FX_OK;
    for (unsigned k = 0; rc == FX_OK && k < sp->stacks; k++)
        rc = make_stack(g, sp, ps, k);
    if (rc == FX_OK) {
        st->leaf_stacks = count_distinct(ps->leaf, sp->stacks);
        st->stack_rows = max_id(ps, sp->stacks) + 1;
    }
    return rc;
}

static bool params_ok(const struct synth_params *sp, struct fx_errbuf *eb)
{
    if (sp->threads == 0 || sp->stacks == 0 || sp->min_depth == 0 ||
        sp->min_depth > sp->max_depth || sp->max_depth > 1000) {
        fx_errbuf_set(eb, "synth: need threads >= 1, stacks >= 1, 1 <= min-depth <= max-depth "
                          "<= 1000");
        return false;
    }
    return true;
}

int synth_random_model(struct fx_profile *p, const struct synth_params *sp, struct synth_stats *st,
                       struct fx_errbuf *eb)
{
    if (eb)
        eb->msg[0] = '\0';
    if (!params_ok(sp, eb))
        return FX_EINVAL;
    struct gen g = {.p = p, .rng = sp->seed, .eb = eb};
    struct paths ps = {0};
    fx_profile_set_start(p, START_NS, EPOCH_MS);
    fx_profile_set_interval(p, 1.0);
    fx_profile_set_pid(p, 4242);
    int rc = fx_profile_set_meta(p, "product", "fxsynth: random model");
    if (rc == FX_OK)
        rc = make_funcs(&g, sp->stacks);
    if (rc == FX_OK)
        rc = make_stacks(&g, sp, &ps, st);
    if (rc == FX_OK)
        rc = make_threads(&g, sp->threads);
    if (rc == FX_OK)
        rc = make_samples(&g, sp, ps.leaf);
    if (rc != FX_OK && eb && !eb->msg[0])
        fx_errbuf_set(eb, "synth: building the model failed: %s", fx_strerror(rc));
    fx_free(ps.buf);
    fx_free(ps.off);
    fx_free(ps.depth);
    fx_free(ps.leaf);
    fx_free(g.funcs);
    fx_free(g.func_line);
    return rc;
}
