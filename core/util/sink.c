/* SPDX-License-Identifier: Apache-2.0 */
/* The growable memory sink: data holds len bytes plus a NUL (so tests can treat it as a string);
 * on a failed write the buffer is unchanged.
 * Tests: unit.otlp, unit.jvm_markers. */
#include "fx_sink.h"

#include <string.h>

#include "fx_alloc.h"
#include "fx_err.h"

static int grow(struct fx_membuf *mb, size_t need)
{
    size_t cap = mb->cap ? mb->cap : 256;
    while (cap < need) {
        if (__builtin_mul_overflow(cap, 2, &cap))
            return FX_ENOMEM;
    }
    char *d = fx_reallocarray(mb->data, cap, 1);
    if (!d)
        return FX_ENOMEM;
    mb->data = d;
    mb->cap = cap;
    return FX_OK;
}

static int membuf_write(void *ctx, const void *buf, size_t len)
{
    struct fx_membuf *mb = ctx;
    size_t need;
    if (__builtin_add_overflow(mb->len, len, &need) || __builtin_add_overflow(need, 1, &need))
        return FX_ENOMEM;
    if (need > mb->cap) {
        int rc = grow(mb, need);
        if (rc != FX_OK)
            return rc;
    }
    if (len)
        memcpy(mb->data + mb->len, buf, len);
    mb->len += len;
    mb->data[mb->len] = '\0';
    return FX_OK;
}

struct fx_sink fx_membuf_sink(struct fx_membuf *mb)
{
    return (struct fx_sink){.write = membuf_write, .ctx = mb};
}

void fx_membuf_destroy(struct fx_membuf *mb)
{
    if (!mb)
        return;
    fx_free(mb->data);
    mb->data = NULL;
    mb->len = 0;
    mb->cap = 0;
}
