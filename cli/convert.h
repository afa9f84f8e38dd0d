/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof convert's parts (convert.c: arguments, output, the walk, collapsed; convert_pprof.c:
 * pprof). The walk gives, per track and stack, one value per pprof sample type (issue 30: one
 * unit per view, never added together): the mode's samples and their time, lock waits and their
 * delay, idle waits and their delay, allocation samples and bytes, live samples and bytes. */
#ifndef FX_CONVERT_H
#define FX_CONVERT_H

#include <stdbool.h>
#include <stdint.h>

#include "fxprof.h"

/* The values of a stack, in the order of the pprof file's sample types. */
enum convert_value {
    V_SAMPLES,       /* samples/count: the mode's samples (weight) */
    V_TIME,          /* cpu|wall/nanoseconds: samples x interval */
    V_CONTENTIONS,   /* contentions/count: lock waits */
    V_DELAY,         /* delay/nanoseconds: their time */
    V_ALLOC_OBJECTS, /* alloc_objects/count: allocation samples (not objects: each stands for
                        ~alloc= bytes) */
    V_ALLOC_SPACE,   /* alloc_space/bytes: their estimated bytes */
    V_INUSE_OBJECTS, /* inuse_objects/count: those not freed in the file */
    V_INUSE_SPACE,   /* inuse_space/bytes */
    V_IDLE_WAITS,    /* idle_waits/count: idle waits (waiting for work), never contentions */
    V_IDLE_DELAY,    /* idle_delay/nanoseconds: their time */
    V_COUNT
};

struct convert_args {
    const char *file, *to, *out;
    int view; /* collapsed: enum fx_pfile_view */
    bool idle, annotate;
};

struct walk {
    const struct cJSON *root;
    const struct convert_args *a;
    struct fx_pfile_tables t;
    double *v; /* [(nstacks + 1) * V_COUNT]: row 0 is "no stack", row s + 1 stack s */
    uint32_t rows;
    double interval_ns;
    double idle; /* [idle] samples left out */
    const char *thread;
};

/* Calls fn for every (track, stack) with a value, track by track; v holds V_COUNT values. */
typedef int (*stack_fn)(struct walk *k, int32_t stack, const double *v, void *ctx);
int convert_walk(struct walk *k, stack_fn fn, void *ctx, struct fx_errbuf *eb);

/* convert_pprof.c: the whole profile as one pprof file, every view a pair of sample types. */
int convert_pprof(struct walk *k, FILE *out, struct fx_errbuf *eb);

#endif
