/* SPDX-License-Identifier: Apache-2.0 */
/* One reading of a clock in nanoseconds, for every part of the project (agent, cli, bench):
 * header-only and calling clock_gettime alone, so it is async-signal-safe and adds no symbol to
 * the signal path's allow-list. -1 when the clock cannot be read (the CPU clock of a thread that
 * has exited, an unknown clock id); every real reading is >= 0. */
#ifndef FX_CLOCK_H
#define FX_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t fx_clock_ns(clockid_t c)
{
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0)
        return -1;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#endif
