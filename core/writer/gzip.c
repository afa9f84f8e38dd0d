/* SPDX-License-Identifier: Apache-2.0 */
/* A gzip sink: one deflate stream (windowBits 15+16 gives the gzip header and trailer), fed
 * with Z_NO_FLUSH and ended once with Z_FINISH, so the file is exactly one gzip member.
 * Compressed bytes collect in `out` and go downstream only when it is full or at the end; the
 * first error is sticky, after it nothing reaches the downstream sink.
 * Threaded (fx_gzip_new_threaded): the parallel sink of gzip_par.c behind this one's calls
 * (every core deflating blocks of the same member), or, without its memory or threads, this
 * one's stream in the caller's thread. */
#include "fx_gzip.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_zlib_alloc.h"

#define OUT_SIZE 65536

struct fx_gzip {
    struct fx_sink down;
    z_stream zs;
    int err;
    bool finished;
    struct fx_gzpar *par; /* threaded: every call goes to it */
    unsigned char out[OUT_SIZE];
};

struct fx_gzip *fx_gzip_new(struct fx_sink down, int level)
{
    struct fx_gzip *gz = fx_calloc(1, sizeof(*gz));
    if (!gz)
        return NULL;
    if (level < 1 || level > 9)
        level = 6;
    gz->down = down;
    gz->zs.zalloc = fx_zlib_alloc;
    gz->zs.zfree = fx_zlib_free;
    if (deflateInit2(&gz->zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        fx_free(gz);
        return NULL;
    }
    gz->zs.next_out = gz->out;
    gz->zs.avail_out = OUT_SIZE;
    return gz;
}

static void fail(struct fx_gzip *gz, int err)
{
    if (!gz->err)
        gz->err = err;
}

/* Hands the compressed bytes collected so far downstream. */
static void drain(struct fx_gzip *gz)
{
    size_t n = OUT_SIZE - gz->zs.avail_out;
    gz->zs.next_out = gz->out;
    gz->zs.avail_out = OUT_SIZE;
    if (n == 0 || gz->err)
        return;
    int rc = gz->down.write(gz->down.ctx, gz->out, n);
    if (rc != FX_OK)
        fail(gz, rc < 0 ? rc : FX_EIO);
}

/* One deflate call with room in `out`; returns zlib's code, or Z_STREAM_ERROR once the stream
 * is in error. */
static int step(struct fx_gzip *gz, int flush)
{
    if (gz->zs.avail_out == 0)
        drain(gz);
    if (gz->err)
        return Z_STREAM_ERROR;
    int zrc = deflate(&gz->zs, flush);
    if (zrc != Z_OK && zrc != Z_STREAM_END && zrc != Z_BUF_ERROR)
        fail(gz, FX_EZLIB);
    return gz->err ? Z_STREAM_ERROR : zrc;
}

static void deflate_all(struct fx_gzip *gz, const unsigned char *p, size_t len)
{
    while (len > 0 && !gz->err) {
        /* avail_in is a uInt: feed huge buffers in pieces */
        uInt chunk = len > UINT_MAX ? UINT_MAX : (uInt)len;
        gz->zs.next_in = (Bytef *)p;
        gz->zs.avail_in = chunk;
        while (gz->zs.avail_in > 0 && !gz->err)
            step(gz, Z_NO_FLUSH);
        p += chunk - gz->zs.avail_in;
        len -= chunk - gz->zs.avail_in;
    }
    gz->zs.next_in = NULL;
    gz->zs.avail_in = 0;
}

static void finish_stream(struct fx_gzip *gz)
{
    while (!gz->err && step(gz, Z_FINISH) != Z_STREAM_END)
        continue;
    drain(gz);
}

static int gzip_write(void *ctx, const void *buf, size_t len)
{
    struct fx_gzip *gz = ctx;
    if (gz->finished)
        fail(gz, FX_ESTATE);
    deflate_all(gz, buf, len);
    return gz->err;
}

struct fx_sink fx_gzip_sink(struct fx_gzip *gz)
{
    if (gz->par)
        return fx_gzpar_sink(gz->par);
    return (struct fx_sink){.write = gzip_write, .ctx = gz};
}

int fx_gzip_finish(struct fx_gzip *gz)
{
    if (gz->par)
        return fx_gzpar_finish(gz->par);
    if (gz->finished)
        return gz->err;
    if (gz->err)
        return gz->err;
    finish_stream(gz);
    gz->finished = true;
    return gz->err;
}

struct fx_gzip *fx_gzip_new_threaded(struct fx_sink down, int level)
{
    /* the parallel sink, and then no stream of this one's (its 268 KiB of zlib state were set
     * up and never used); without it, this stream in the caller's thread */
    struct fx_gzpar *par = fx_gzpar_new(down, level);
    if (!par)
        return fx_gzip_new(down, level);
    struct fx_gzip *gz = fx_calloc(1, sizeof(*gz));
    if (!gz) {
        fx_gzpar_free(par);
        return NULL;
    }
    gz->down = down;
    gz->par = par;
    return gz;
}

void fx_gzip_free(struct fx_gzip *gz)
{
    if (!gz)
        return;
    if (gz->par)
        fx_gzpar_free(gz->par);
    else
        deflateEnd(&gz->zs);
    fx_free(gz);
}
