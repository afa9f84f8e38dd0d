/* SPDX-License-Identifier: Apache-2.0 */
/* The drain's adaptive period (include/fx_drain_period.h): the policy alone, no clock, no
 * state; agent/model/drain.c gathers its inputs each pass and applies what it returns. */
#include "fx_drain_period.h"

/* How long flat-out sampling takes to fill a quarter of the smallest ring: every thread is
 * signalled at most once an interval, each signal one record of at most record_max bytes (the
 * largest seen, or the guess before any). */
static uint64_t ring_bound(const struct fx_drain_load *l)
{
    if (l->interval_ns == 0 || l->ring_min == 0)
        return FX_DRAIN_SLOW_NS;
    uint64_t rec = l->record_max > FX_DRAIN_RECORD_MIN ? l->record_max : FX_DRAIN_RECORD_MIN;
    uint64_t records = l->ring_min / 4 / rec;
    if (records > FX_DRAIN_SLOW_NS / l->interval_ns)
        return FX_DRAIN_SLOW_NS;
    return records * l->interval_ns;
}

uint64_t fx_drain_period_next(const struct fx_drain_load *l)
{
    if (l->waiting || l->fill_permille > FX_DRAIN_FILL_FAST)
        return FX_DRAIN_FAST_NS;
    uint64_t next = l->period_ns < FX_DRAIN_SLOW_NS / 2 ? l->period_ns * 2 : FX_DRAIN_SLOW_NS;
    uint64_t bound = ring_bound(l);
    if (l->found && bound > FX_DRAIN_FOUND_NS)
        bound = FX_DRAIN_FOUND_NS;
    if (next > bound)
        next = bound;
    return next < FX_DRAIN_FAST_NS ? FX_DRAIN_FAST_NS : next;
}
