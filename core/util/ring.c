/* SPDX-License-Identifier: Apache-2.0 */
/* Ring set-up and tear-down; the hot path is inline in fx_ring.h. The capacity is a power of two
 * so positions map to offsets with a mask, and at most 2 GiB so a padding record's length (up to
 * the whole buffer) fits the header's uint32_t. */
#include "fx_ring.h"

#include <string.h>

#include "fx_alloc.h"
#include "fx_err.h"

#define RING_MIN 64u
#define RING_MAX ((size_t)1 << 31)

int fx_ring_init(struct fx_ring *r, size_t cap)
{
    if (cap > RING_MAX)
        return FX_ERANGE;
    size_t c = RING_MIN;
    while (c < cap)
        c <<= 1;
    uint8_t *buf = fx_pages_alloc(c); /* back to the system at destroy (fx_alloc.h) */
    if (!buf)
        return FX_ENOMEM;
    memset(r, 0, sizeof(*r));
    r->buf = buf;
    r->cap = c;
    return FX_OK;
}

void fx_ring_destroy(struct fx_ring *r)
{
    if (!r)
        return;
    fx_pages_free(r->buf, r->cap);
    memset(r, 0, sizeof(*r));
}
