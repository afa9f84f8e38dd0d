/* SPDX-License-Identifier: Apache-2.0 */
/* zlib's own allocations through fx_alloc, so injected allocation failures reach deflateInit2
 * (gzip.c's stream and gzip_par.c's workers'). Tests: unit.gzip. */
#ifndef FX_ZLIB_ALLOC_H
#define FX_ZLIB_ALLOC_H

#include <zlib.h>

#include "fx_alloc.h"

static inline voidpf fx_zlib_alloc(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    return fx_calloc(items, size);
}

static inline void fx_zlib_free(voidpf opaque, voidpf p)
{
    (void)opaque;
    fx_free(p);
}

#endif
