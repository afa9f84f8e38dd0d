/* SPDX-License-Identifier: Apache-2.0 */
/* agent/sampling, public: the native half of an allocation sample (issue 32 item 6,
 * alloc_walk.c), walked by the allocating thread in its own JVMTI SampledObjectAlloc callback
 * with the signal path's walkers; model/alloc_native.c turns the words into frames.
 * Tests: it.mixed_stacks (alloc_native_check.py). */
#ifndef FX_ALLOC_WALK_H
#define FX_ALLOC_WALK_H

#include <stdbool.h>
#include <stdint.h>

#include "fx_recover.h"
#include "sample.h"

/* out[0]'s bit: the types and below parts (sample.h's order) follow the return addresses. */
#define FX_ALLOC_WALK_PARTS (UINT64_C(1) << 16)
/* Words of out at most: out[0], FX_NATIVE_MAX return addresses, the two parts. */
#define FX_ALLOC_WALK_WORDS (3 + FX_NATIVE_MAX + FX_TYPES_MAX + FX_BELOW_WORDS)

/* The current thread, in its SampledObjectAlloc callback, walks its own native stack from its
 * caller's frame (the callback's): out[0] = frames | stop << 8 (enum fx_native_stop; no
 * registered thread: no frame, FX_NSTOP_NO_BOUNDS) | FX_ALLOC_WALK_PARTS, the return addresses
 * leaf first, then, when `java` (the allocation has Java frames, not cut at the depth) and the
 * walk below them gave any, the types part (a count, the words) and the below part (a count,
 * the words). Returns the words written, at most cap (FX_ALLOC_WALK_WORDS); 0: no walk
 * (cstack=no). tid: the calling thread's kernel id (the caller caches it: gettid is a system
 * call per sample). */
uint32_t fx_alloc_native_walk(int32_t tid, bool java, uint64_t *out, uint32_t cap);

struct fx_alloc_walk_counts {
    uint64_t walks, no_thread; /* walks asked for; of them, on no registered thread */
    uint64_t virtual;          /* of them, a virtual thread mounted: no walk below Java */
    uint64_t timed, timed_ns;  /* the thread CPU time of 1 in FX_TIMED_ONE_IN walks */
    uint64_t timed_max_ns;
};
void fx_alloc_native_counts(struct fx_alloc_walk_counts *c); /* any thread (relaxed) */
void fx_alloc_native_reset(void); /* a new recording: the counts from zero */

#endif
