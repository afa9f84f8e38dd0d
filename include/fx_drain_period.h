/* SPDX-License-Identifier: Apache-2.0 */
/* The drain's adaptive period (issue 31): a pure function of what the last pass found, so a
 * unit test runs it without a JVM (unit.drain_period). The drain wakes every FX_DRAIN_FAST_NS
 * while anything waits for it (code past the handler's full recent table, codemap.c, a queue
 * filling up, a request) or while a ring was more than an eighth full when the pass began; each
 * quiet pass after that doubles the period, up to FX_DRAIN_SLOW_NS and up to what keeps the
 * smallest ring at most a quarter full if every thread ran flat out from now on (one record of
 * the largest size seen per sampling interval: a thread is signalled at most once an interval).
 * While the handler finds nmethods the code map lacks (codemap=heap, codemap_heap.c) the period
 * doubles no further than FX_DRAIN_FOUND_NS: until the drain adds one, each sample meeting it
 * looks it up in the code heaps again (~8 system calls in the handler), but a pass of its own
 * every 10 ms for that cost javac's drain ~130 µs each, 800-900 passes a run (session 25).
 * A wake-up of the drain costs ~28 % of its CPU on a long run (docs/BENCHMARKS.md). */
#ifndef FX_DRAIN_PERIOD_H
#define FX_DRAIN_PERIOD_H

#include <stdbool.h>
#include <stdint.h>

#define FX_DRAIN_FAST_NS    10000000ull  /* 10 ms: the lag of code past a full recent table */
#define FX_DRAIN_FOUND_NS   40000000ull  /* 40 ms: the longest wait while the handler finds code */
#define FX_DRAIN_SLOW_NS    100000000ull /* 100 ms */
#define FX_DRAIN_FILL_FAST  125u         /* permille of a ring: fuller at a pass start, fast */
#define FX_DRAIN_RECORD_MIN 512u         /* bytes a record is taken to need before any is seen */

struct fx_drain_load {
    uint64_t period_ns;     /* the period the pass just done ran at */
    uint64_t interval_ns;   /* the sampling interval (0: no sampling, no bound from the rings) */
    uint32_t fill_permille; /* the fullest ring at the pass start, in permille of its size */
    uint64_t ring_min;      /* bytes of the smallest ring (0: no ring yet) */
    uint64_t record_max;    /* bytes of the largest record drained so far */
    bool waiting;           /* code published, a queue filling, a request: fast */
    bool found;             /* the handler found code the map lacked: FX_DRAIN_FOUND_NS at most */
};

/* The period of the next wait, FX_DRAIN_FAST_NS..FX_DRAIN_SLOW_NS. */
uint64_t fx_drain_period_next(const struct fx_drain_load *l);

#endif
