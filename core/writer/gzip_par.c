/* SPDX-License-Identifier: Apache-2.0 */
/* A gzip sink deflated on several threads at once (pigz's method), still exactly one gzip
 * member: the writer's bytes go into blocks of BLK bytes (copied, or written in place by a JSON
 * writer: fx_sink.swap); each block is a raw deflate of its own, primed with the last 32 KiB of
 * the block before as dictionary, ended by Z_SYNC_FLUSH (the last one by Z_FINISH), so the
 * blocks' outputs joined are one deflate stream; the member's CRC is the blocks' CRCs combined
 * (crc32_combine). Workers take the blocks in order, any worker compresses any block, and the
 * one that finishes the oldest block not yet written writes the done blocks downstream in order
 * (header before the first, trailer after the last). A block's bytes depend only on its input
 * and the block before's, not on which thread or when: the file is the same every run.
 * Why: fxprof convert writes GBs of JSON after reading the recording; one deflating thread was
 * slower than the JSON writer and the writer waited for it (docs/BENCHMARKS.md, issue 35).
 * The ring: block j lives in slot j % nslot; the writer takes slot j only when block j - nslot
 * is written and block j - nslot + 1 (whose dictionary it was) too. The first error is sticky:
 * after it the workers still take the blocks but nothing more goes downstream.
 * fx_gzip_new_threaded is this sink. Tests: unit.gzip */
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_gzip.h"
#include "fx_zlib_alloc.h"

#define BLK      (512u * 1024u)
#define DICT     32768u
#define MAX_WORK 4
#define SLACK    4 /* slots beyond the workers': the one filled, one written, its successor */

enum {
    S_FREE,
    S_READY,
    S_BUSY,
    S_DONE
};

struct slot {
    unsigned char *in, *out;
    size_t len, olen;
    uint32_t crc;
    int state;
    bool last;
};

struct fx_gzpar;
struct worker_arg {
    struct fx_gzpar *g;
    unsigned w;
};

struct fx_gzpar {
    struct fx_sink down;
    struct worker_arg args[MAX_WORK];
    unsigned nwork, nslot, nthreads;
    z_stream zs[MAX_WORK];
    bool zinit[MAX_WORK];
    pthread_t th[MAX_WORK];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct slot *s;
    size_t ocap;
    uint64_t produced, claimed, written; /* blocks handed over, taken, written downstream */
    bool writing, closing, aborting, finished;
    int err;  /* sticky, under mu */
    int werr; /* the caller's copy */
    size_t fill;
    uint32_t crc; /* of the blocks written; the in-order writer's */
    uint64_t total;
};

static void set_err(struct fx_gzpar *g, int err)
{
    if (!g->err)
        g->err = err;
}

/* Block k (in slot sl) into its raw deflate bytes; the slot of block k - 1 is still whole. */
static int deflate_block(struct fx_gzpar *g, unsigned w, uint64_t k, struct slot *sl)
{
    z_stream *zs = &g->zs[w];
    if (deflateReset(zs) != Z_OK)
        return FX_EZLIB;
    if (k > 0) {
        const struct slot *prev = &g->s[(k - 1) % g->nslot];
        size_t d = prev->len < DICT ? prev->len : DICT;
        if (d && deflateSetDictionary(zs, prev->in + prev->len - d, (uInt)d) != Z_OK)
            return FX_EZLIB;
    }
    zs->next_in = sl->in;
    zs->avail_in = (uInt)sl->len;
    zs->next_out = sl->out;
    zs->avail_out = (uInt)g->ocap;
    int zrc = deflate(zs, sl->last ? Z_FINISH : Z_SYNC_FLUSH);
    if (zrc != (sl->last ? Z_STREAM_END : Z_OK) || zs->avail_in != 0 || zs->avail_out == 0)
        return FX_EZLIB;
    sl->olen = g->ocap - zs->avail_out;
    sl->crc = (uint32_t)crc32(0, sl->in, (uInt)sl->len);
    return FX_OK;
}

static int put(struct fx_gzpar *g, const void *p, size_t n)
{
    int rc = g->down.write(g->down.ctx, p, n);
    return rc == FX_OK ? FX_OK : rc < 0 ? rc : FX_EIO;
}

static void le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Writes the done blocks downstream in order, under mu (released while writing). */
static void write_done(struct fx_gzpar *g)
{
    if (g->writing)
        return; /* the thread writing takes this block too */
    g->writing = true;
    while (g->written < g->produced && g->s[g->written % g->nslot].state == S_DONE) {
        struct slot *sl = &g->s[g->written % g->nslot];
        int err = g->err ? g->err : g->aborting ? FX_ESTATE : FX_OK; /* aborted: no more */
        uint64_t k = g->written;
        pthread_mutex_unlock(&g->mu);
        if (!err && k == 0) { /* gzip header: deflate, no flags, no time, fastest, Unix */
            static const unsigned char hdr[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 3};
            err = put(g, hdr, sizeof hdr);
        }
        if (!err)
            err = put(g, sl->out, sl->olen);
        g->crc = (uint32_t)crc32_combine(g->crc, sl->crc, (z_off_t)sl->len);
        g->total += sl->len;
        if (!err && sl->last) {
            unsigned char tr[8];
            le32(tr, g->crc);
            le32(tr + 4, (uint32_t)g->total);
            err = put(g, tr, sizeof tr);
        }
        pthread_mutex_lock(&g->mu);
        if (err)
            set_err(g, err);
        sl->state = S_FREE;
        g->written++;
        pthread_cond_broadcast(&g->cv);
    }
    g->writing = false;
}

static void *worker(void *arg)
{
    struct fx_gzpar *g = ((struct worker_arg *)arg)->g;
    unsigned w = ((struct worker_arg *)arg)->w;
    pthread_mutex_lock(&g->mu);
    for (;;) {
        while (g->claimed == g->produced && !g->closing && !g->aborting)
            pthread_cond_wait(&g->cv, &g->mu);
        if (g->aborting || g->claimed == g->produced)
            break;
        uint64_t k = g->claimed++;
        struct slot *sl = &g->s[k % g->nslot];
        sl->state = S_BUSY;
        bool skip = g->err != 0;
        pthread_mutex_unlock(&g->mu);
        int rc = skip ? FX_OK : deflate_block(g, w, k, sl);
        pthread_mutex_lock(&g->mu);
        if (rc != FX_OK)
            set_err(g, rc);
        sl->state = S_DONE;
        write_done(g);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

/* Hands the block being filled to the workers and waits for the next slot to be free. */
static void hand_over(struct fx_gzpar *g, bool last)
{
    pthread_mutex_lock(&g->mu);
    struct slot *sl = &g->s[g->produced % g->nslot];
    sl->len = g->fill;
    sl->last = last;
    sl->state = S_READY;
    g->produced++;
    pthread_cond_broadcast(&g->cv);
    while (!last && g->produced - g->written > g->nslot - 2)
        pthread_cond_wait(&g->cv, &g->mu);
    g->werr = g->err;
    pthread_mutex_unlock(&g->mu);
    g->fill = 0;
}

static int par_write(void *ctx, const void *buf, size_t len)
{
    struct fx_gzpar *g = ctx;
    const unsigned char *p = buf;
    if (g->finished && !g->werr)
        g->werr = FX_ESTATE;
    while (len > 0 && !g->werr) {
        size_t n = BLK - g->fill < len ? BLK - g->fill : len;
        memcpy(g->s[g->produced % g->nslot].in + g->fill, p, n);
        g->fill += n;
        p += n;
        len -= n;
        if (g->fill == BLK)
            hand_over(g, false);
    }
    return g->werr;
}

static int par_swap(void *ctx, size_t len, char **buf, size_t *cap)
{
    struct fx_gzpar *g = ctx;
    if (g->finished && !g->werr)
        g->werr = FX_ESTATE;
    if (g->werr)
        return g->werr;
    g->fill += len;
    if (g->fill > 0)
        hand_over(g, false);
    if (g->werr)
        return g->werr;
    *buf = (char *)g->s[g->produced % g->nslot].in;
    *cap = BLK;
    return FX_OK;
}

struct fx_sink fx_gzpar_sink(struct fx_gzpar *g)
{
    return (struct fx_sink){.write = par_write, .ctx = g, .swap = par_swap};
}

/* Ends the workers: after the last block written (close) or at once (abort). */
static void stop(struct fx_gzpar *g, bool close)
{
    if (!g->nthreads)
        return;
    pthread_mutex_lock(&g->mu);
    g->closing = close;
    g->aborting = !close;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
    for (unsigned i = 0; i < g->nthreads; i++)
        pthread_join(g->th[i], NULL);
    g->nthreads = 0;
}

int fx_gzpar_finish(struct fx_gzpar *g)
{
    if (g->finished)
        return g->err ? g->err : g->werr;
    hand_over(g, true); /* the last block, part full or empty: Z_FINISH and the trailer */
    stop(g, true);
    g->finished = true;
    if (!g->err && g->written != g->produced)
        g->err = FX_ESTATE;
    return g->err;
}

void fx_gzpar_free(struct fx_gzpar *g)
{
    if (!g)
        return;
    stop(g, false);
    for (unsigned w = 0; w < MAX_WORK; w++)
        if (g->zinit[w])
            deflateEnd(&g->zs[w]);
    if (g->s)
        for (unsigned i = 0; i < g->nslot; i++)
            fx_free(g->s[i].in), fx_free(g->s[i].out);
    fx_free(g->s);
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    fx_free(g);
}

struct fx_gzpar *fx_gzpar_new(struct fx_sink down, int level)
{
    struct fx_gzpar *g = fx_calloc(1, sizeof(*g));
    if (!g)
        return NULL;
    if (pthread_mutex_init(&g->mu, NULL)) {
        fx_free(g);
        return NULL;
    }
    if (pthread_cond_init(&g->cv, NULL)) {
        pthread_mutex_destroy(&g->mu);
        fx_free(g);
        return NULL;
    }
    if (level < 1 || level > 9)
        level = 6;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    g->down = down;
    g->nwork = cpus < 1 ? 1 : cpus > MAX_WORK ? MAX_WORK : (unsigned)cpus;
    g->nslot = g->nwork + SLACK;
    bool ok = (g->s = fx_calloc(g->nslot, sizeof *g->s)) != NULL;
    for (unsigned w = 0; ok && w < g->nwork; w++) {
        g->zs[w].zalloc = fx_zlib_alloc;
        g->zs[w].zfree = fx_zlib_free;
        ok = g->zinit[w] =
                deflateInit2(&g->zs[w], level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK;
    }
    /* a block's bound, the sync flush's marker and the final block's bits beside */
    g->ocap = ok ? deflateBound(&g->zs[0], BLK) + 64 : 0;
    for (unsigned i = 0; ok && i < g->nslot; i++)
        ok = (g->s[i].in = fx_malloc(BLK)) && (g->s[i].out = fx_malloc(g->ocap));
    for (unsigned w = 0; ok && w < g->nwork; w++) {
        g->args[w] = (struct worker_arg){g, w};
        ok = pthread_create(&g->th[w], NULL, worker, &g->args[w]) == 0;
        g->nthreads += ok;
    }
    if (!ok) {
        fx_gzpar_free(g);
        return NULL;
    }
    return g;
}
