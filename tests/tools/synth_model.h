/* SPDX-License-Identifier: Apache-2.0 */
/* Deterministic random profile models for fxsynth and the writer benchmark: the same seed gives
 * the same model, byte for byte, on every machine (a fixed PRNG, no libc rand). */
#ifndef SYNTH_MODEL_H
#define SYNTH_MODEL_H

#include <stdint.h>

#include "fx_err.h"

struct fx_profile;

struct synth_params {
    unsigned threads;
    uint64_t samples; /* in total, spread round-robin over the threads */
    unsigned stacks;  /* distinct leaf stacks that samples point at */
    unsigned min_depth, max_depth;
    uint64_t seed;
};

/* Stack prefixes are shared the way real call trees share them: each new stack copies a random
 * prefix of an earlier one, then grows to its own random depth. Samples pick leaf stacks with a
 * skew towards low indexes (u^2), times advance 1 ms with jitter, CPU deltas 0.9..1.1 ms.
 * Reports the distinct leaf stacks actually made (duplicates are rare) and the stack-table rows
 * they span (ids are rows, so the largest id + 1). */
struct synth_stats {
    unsigned leaf_stacks;
    uint32_t stack_rows;
};
int synth_random_model(struct fx_profile *p, const struct synth_params *sp, struct synth_stats *st,
                       struct fx_errbuf *eb);

/* splitmix64: tiny, fast, and good enough for test data. */
uint64_t synth_next(uint64_t *state);

#endif
