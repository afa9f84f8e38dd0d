/* SPDX-License-Identifier: Apache-2.0 */
/* The one converter of Firefox profiles to other formats (core/convert/), for `fxprof convert`
 * and the agent's push= (issue 33, docs/FLEET.md): a pushed profile is byte for byte what
 * `fxprof convert` makes of the file the agent has just written.
 *  - walk.c: per track and stack, one value per pprof sample type (issue 30: one unit per
 *    view, never added together); fxprof's collapsed output walks it too;
 *  - convert_pprof.c: pprof, every view a pair of sample types;
 *  - convert_otlp.c: an OTLP ExportProfilesServiceRequest, one profile per view; the push's
 *    entry point. */
#ifndef FX_CONVERT_H
#define FX_CONVERT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fx_err.h"
#include "fx_pfile.h"

/* The values of a stack, in the order of the pprof file's sample types. */
enum fx_convert_value {
    FX_V_SAMPLES,       /* samples/count: the mode's samples (weight) */
    FX_V_TIME,          /* cpu|wall/nanoseconds: samples x interval */
    FX_V_CONTENTIONS,   /* contentions/count: lock waits */
    FX_V_DELAY,         /* delay/nanoseconds: their time */
    FX_V_ALLOC_OBJECTS, /* alloc_objects/count: allocation samples (not objects: each stands
                           for ~alloc= bytes) */
    FX_V_ALLOC_SPACE,   /* alloc_space/bytes: their estimated bytes */
    FX_V_INUSE_OBJECTS, /* inuse_objects/count: those not freed in the file */
    FX_V_INUSE_SPACE,   /* inuse_space/bytes */
    FX_V_IDLE_WAITS,    /* idle_waits/count: idle waits (waiting for work), never contentions */
    FX_V_IDLE_DELAY,    /* idle_delay/nanoseconds: their time */
    FX_V_COUNT
};

/* A walk over a parsed profile; zero it, set root and keep_idle, then fx_convert_walk;
 * fx_convert_walk_destroy frees it. */
struct fx_walk {
    const struct cJSON *root;
    bool keep_idle; /* keep the agent's [idle] samples in the samples */
    struct fx_pfile_tables t;
    double *v; /* [(nstacks + 1) * FX_V_COUNT]: row 0 is "no stack", row s + 1 stack s */
    uint32_t rows;
    double interval_ns; /* meta.interval, set by the walk */
    double idle;        /* [idle] samples left out */
    const char *thread;
    /* Issue 33: the track's trace spans; fn's values are those of samples in span `span` (NULL:
     * in none), each (stack, span) once. Only the mode's samples carry spans. */
    struct fx_pfile_spans spans;
    const struct fx_pfile_span *span;
    struct fx_walk_pair *pairs; /* the samples in a span (walk.c) */
    size_t npairs, pairscap;
};

/* Calls fn for every (track, stack) with a value, track by track; v holds FX_V_COUNT values. */
typedef int (*fx_walk_fn)(struct fx_walk *k, int32_t stack, const double *v, void *ctx);
int fx_convert_walk(struct fx_walk *k, fx_walk_fn fn, void *ctx, struct fx_errbuf *eb);
void fx_convert_walk_destroy(struct fx_walk *k);

/* The whole profile as one gzipped pprof file into f; *idle_out: [idle] samples left out. */
int fx_convert_pprof(const struct cJSON *root, bool keep_idle, FILE *f, double *idle_out,
                     struct fx_errbuf *eb);

/* The profile as one OTLP ExportProfilesServiceRequest into f; *idle_out as above. */
int fx_convert_otlp(const struct cJSON *root, bool keep_idle, FILE *f, double *idle_out,
                    struct fx_errbuf *eb);

struct fx_convert_period {
    int64_t from_s, until_s; /* the profile's range, UNIX seconds */
    double samples;          /* CPU/wall observations in it ([idle] left out) */
    char service[256];       /* the service name used: given, else the main class or jar */
};

/* The push's conversion of the profile at `path` into f: otlp (true) as an
 * ExportProfilesServiceRequest with service (NULL: the main class or jar) and labels (K=V;K=V,
 * or NULL) as resource attributes, else gzipped pprof. */
int fx_convert_for_push(const char *path, bool otlp, const char *service, const char *labels,
                        FILE *f, struct fx_convert_period *period, struct fx_errbuf *eb);

#endif
