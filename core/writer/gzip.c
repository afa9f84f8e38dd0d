/* SPDX-License-Identifier: Apache-2.0 */
/* A gzip sink: one deflate stream (windowBits 15+16 gives the gzip header and trailer), fed
 * with Z_NO_FLUSH and ended once with Z_FINISH, so the file is exactly one gzip member.
 * Compressed bytes collect in `out` and go downstream only when it is full or at the end; the
 * first error is sticky, after it nothing reaches the downstream sink.
 * Threaded (fx_gzip_new_threaded): the writer's bytes are copied into NBLK blocks of BLK bytes
 * (or written there in place by a JSON writer, fx_sink.swap: a memmove of every byte saved), a
 * ring between the writer (fills block produced % NBLK) and the deflating thread (empties
 * block consumed % NBLK), so that compressing overlaps producing; the writer waits only when
 * every block is full. deflate with Z_NO_FLUSH emits the same bytes however its input is cut
 * (it waits for a full lookahead before it matches), so the file is the same either way. */
#include "fx_gzip.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "fx_alloc.h"
#include "fx_err.h"

#define OUT_SIZE 65536
#define NBLK     4
#define BLK      (1u << 20)

struct fx_gzip {
    struct fx_sink down;
    z_stream zs;
    int err; /* threaded: the deflating thread's own until it is joined */
    bool finished;
    /* threaded only */
    bool threaded, started, closing, aborting; /* started: mu and cv to destroy */
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned char *blk[NBLK];
    size_t len[NBLK];
    uint64_t produced, consumed; /* blocks handed over, blocks compressed */
    size_t fill;                 /* bytes in block produced % NBLK */
    int perr;                    /* err as the thread last published it, under mu */
    int werr;                    /* the writer's copy of perr */
    unsigned char out[OUT_SIZE];
};

/* zlib's own allocations go through fx_alloc too, so injected failures reach deflateInit2. */
static voidpf zalloc(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    return fx_calloc(items, size);
}

static void zfree(voidpf opaque, voidpf p)
{
    (void)opaque;
    fx_free(p);
}

struct fx_gzip *fx_gzip_new(struct fx_sink down, int level)
{
    struct fx_gzip *gz = fx_calloc(1, sizeof(*gz));
    if (!gz)
        return NULL;
    if (level < 1 || level > 9)
        level = 6;
    gz->down = down;
    gz->zs.zalloc = zalloc;
    gz->zs.zfree = zfree;
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

/* The deflating thread: each block handed over, in order; at the end the stream's last bytes
 * (closing) or nothing (aborting). After an error it still takes the blocks, so the writer
 * never waits for good. */
static void *deflater(void *arg)
{
    struct fx_gzip *gz = arg;
    pthread_mutex_lock(&gz->mu);
    for (;;) {
        while (gz->consumed == gz->produced && !gz->closing && !gz->aborting)
            pthread_cond_wait(&gz->cv, &gz->mu);
        if (gz->aborting || gz->consumed == gz->produced)
            break;
        unsigned b = (unsigned)(gz->consumed % NBLK);
        pthread_mutex_unlock(&gz->mu);
        deflate_all(gz, gz->blk[b], gz->len[b]);
        pthread_mutex_lock(&gz->mu);
        gz->consumed++;
        gz->perr = gz->err;
        pthread_cond_broadcast(&gz->cv);
    }
    bool close = gz->closing && !gz->aborting;
    pthread_mutex_unlock(&gz->mu);
    if (close)
        finish_stream(gz);
    return NULL;
}

/* Hands the block being filled to the deflating thread and waits for a free one. */
static void hand_over(struct fx_gzip *gz)
{
    pthread_mutex_lock(&gz->mu);
    gz->len[gz->produced % NBLK] = gz->fill;
    gz->produced++;
    pthread_cond_broadcast(&gz->cv);
    while (gz->produced - gz->consumed >= NBLK)
        pthread_cond_wait(&gz->cv, &gz->mu);
    gz->werr = gz->perr;
    pthread_mutex_unlock(&gz->mu);
    gz->fill = 0;
}

static int threaded_write(struct fx_gzip *gz, const unsigned char *p, size_t len)
{
    while (len > 0 && !gz->werr) {
        size_t n = BLK - gz->fill < len ? BLK - gz->fill : len;
        memcpy(gz->blk[gz->produced % NBLK] + gz->fill, p, n);
        gz->fill += n;
        p += n;
        len -= n;
        if (gz->fill == BLK)
            hand_over(gz);
    }
    return gz->werr;
}

/* fx_sink.swap: the writer filled len bytes of the block in place (no copy); a block with bytes
 * goes to the deflating thread, and the writer takes the next, empty. */
static int gzip_swap(void *ctx, size_t len, char **buf, size_t *cap)
{
    struct fx_gzip *gz = ctx;
    if (gz->finished && !gz->werr)
        gz->werr = FX_ESTATE;
    if (gz->werr)
        return gz->werr;
    gz->fill += len;
    if (gz->fill > 0)
        hand_over(gz);
    if (gz->werr)
        return gz->werr;
    *buf = (char *)gz->blk[gz->produced % NBLK];
    *cap = BLK;
    return FX_OK;
}

static int gzip_write(void *ctx, const void *buf, size_t len)
{
    struct fx_gzip *gz = ctx;
    if (gz->threaded) {
        if (gz->finished && !gz->werr)
            gz->werr = FX_ESTATE;
        return threaded_write(gz, buf, len);
    }
    if (gz->finished)
        fail(gz, FX_ESTATE);
    deflate_all(gz, buf, len);
    return gz->err;
}

struct fx_sink fx_gzip_sink(struct fx_gzip *gz)
{
    return (struct fx_sink){
            .write = gzip_write, .ctx = gz, .swap = gz->threaded ? gzip_swap : NULL};
}

/* Ends the deflating thread: closing (the stream's end written) or aborting. */
static void join(struct fx_gzip *gz, bool close)
{
    if (!gz->threaded)
        return;
    pthread_mutex_lock(&gz->mu);
    if (close && gz->fill > 0 && !gz->werr) { /* the last block, part full */
        gz->len[gz->produced % NBLK] = gz->fill;
        gz->produced++;
    }
    gz->closing = close;
    gz->aborting = !close;
    pthread_cond_broadcast(&gz->cv);
    pthread_mutex_unlock(&gz->mu);
    pthread_join(gz->th, NULL);
    gz->threaded = false;
    if (!gz->err)
        gz->err = gz->werr;
}

int fx_gzip_finish(struct fx_gzip *gz)
{
    if (gz->finished)
        return gz->err ? gz->err : gz->werr;
    if (gz->threaded) {
        join(gz, true);
        gz->finished = true;
        return gz->err;
    }
    if (gz->err)
        return gz->err;
    finish_stream(gz);
    gz->finished = true;
    return gz->err;
}

struct fx_gzip *fx_gzip_new_threaded(struct fx_sink down, int level)
{
    struct fx_gzip *gz = fx_gzip_new(down, level);
    if (!gz)
        return NULL;
    for (unsigned b = 0; b < NBLK; b++)
        if (!(gz->blk[b] = fx_malloc(BLK)))
            return gz; /* compressed here, as fx_gzip_new's (fx_gzip_free frees the blocks) */
    if (pthread_mutex_init(&gz->mu, NULL))
        return gz;
    if (pthread_cond_init(&gz->cv, NULL)) {
        pthread_mutex_destroy(&gz->mu);
        return gz;
    }
    gz->started = gz->threaded = pthread_create(&gz->th, NULL, deflater, gz) == 0;
    if (!gz->threaded) {
        pthread_cond_destroy(&gz->cv);
        pthread_mutex_destroy(&gz->mu);
    }
    return gz;
}

void fx_gzip_free(struct fx_gzip *gz)
{
    if (!gz)
        return;
    join(gz, false);
    if (gz->started) {
        pthread_cond_destroy(&gz->cv);
        pthread_mutex_destroy(&gz->mu);
    }
    for (unsigned b = 0; b < NBLK; b++)
        fx_free(gz->blk[b]);
    deflateEnd(&gz->zs);
    fx_free(gz);
}
