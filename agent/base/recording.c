/* SPDX-License-Identifier: Apache-2.0 */
/* The current recording (options, t0, the sampling range) and the JVM's phase. One writer:
 * control/, at load and between a stop and a start under its lock; every part reads. */
#include "base.h"

static struct fx_recording rec;
static int phase; /* enum fx_phase, atomic */

const struct fx_recording *fx_rec(void)
{
    return &rec;
}

const struct fx_options *fx_opt(void)
{
    return &rec.opt;
}

struct fx_recording *fx_rec_edit(void)
{
    return &rec;
}

void fx_rec_mark_start(void)
{
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    rec.start_ns = fx_now_ns();
    rec.start_epoch_ms = (double)wall.tv_sec * 1e3 + (double)wall.tv_nsec / 1e6;
    rec.start_time = wall.tv_sec;
}

void fx_phase_set(enum fx_phase p)
{
    __atomic_store_n(&phase, (int)p, __ATOMIC_RELEASE);
}

enum fx_phase fx_phase(void)
{
    return (enum fx_phase)__atomic_load_n(&phase, __ATOMIC_ACQUIRE);
}
