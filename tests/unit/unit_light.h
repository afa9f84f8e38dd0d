/* SPDX-License-Identifier: Apache-2.0 */
/* Test helper: the size of the unit tests' exhaustive loops (every byte of an input damaged,
 * 200,000 random numbers), cut when FXAGENT_UNIT_LIGHT=1. tests/reliability/valgrind_unit.sh sets
 * it: memcheck runs a binary 30-50 times slower, and what it looks for (an invalid read, a leak)
 * shows on a tenth of the inputs as on all of them; the whole loops run natively as unit.X. */
#ifndef UNIT_LIGHT_H
#define UNIT_LIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

static inline bool unit_light(void)
{
    const char *e = getenv("FXAGENT_UNIT_LIGHT");
    return e != NULL && e[0] == '1';
}

/* n, or a tenth of it (at least 1) when light. */
static inline size_t unit_count(size_t n)
{
    return unit_light() ? (n / 10 > 0 ? n / 10 : 1) : n;
}

/* 1, or step when light: a loop over every byte visits every step-th (a prime step meets every
 * field of a format at some offset). */
static inline size_t unit_step(size_t step)
{
    return unit_light() ? step : 1;
}

#endif
