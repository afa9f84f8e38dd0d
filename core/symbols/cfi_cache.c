/* SPDX-License-Identifier: Apache-2.0 */
/* Unwind tables kept across JVM starts (include/fx_cfi_cache.h): the file (a
 * header naming the library's identity, then the fx_cfi block as it is in memory) and the
 * checks a file passes before its rows reach a signal handler. Not signal-safe. */
#include "fx_cfi_cache.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_cache_dir.h"

#define MAGIC 0x31494643584655ull /* "UFXCFI1" */
/* 2: .debug_frame rows too, 3: from a debuglink file, 4: PLT rows (issue 32) */
#define VERSION   4u
#define MAX_BYTES (256u << 20) /* a 4 GiB text has fewer rows than this; larger is corrupt */

struct header {
    uint64_t magic;
    uint32_t version, hdr_size;
    uint64_t dev, ino, size, mtime_s, mtime_ns;
    uint64_t bytes; /* the block's size */
    struct fx_cfi_stats stats;
};

static void identity(struct header *h, const struct stat *st)
{
    h->dev = (uint64_t)st->st_dev, h->ino = (uint64_t)st->st_ino, h->size = (uint64_t)st->st_size;
    h->mtime_s = (uint64_t)st->st_mtim.tv_sec, h->mtime_ns = (uint64_t)st->st_mtim.tv_nsec;
}

bool fx_cfi_cache_check(const struct fx_cfi *c, size_t bytes)
{
    if (bytes < sizeof(*c) || c->nsegs > FX_CFI_MAX_SEGS)
        return false;
    size_t room = bytes - sizeof(*c);
    if (c->count > room / sizeof(struct fx_cfi_row))
        return false;
    room -= c->count * sizeof(struct fx_cfi_row);
    if (room != c->nfuncs * sizeof(uint32_t))
        return false;
    for (size_t i = 0; i < c->count; i++) {
        const struct fx_cfi_row *r = &c->rows[i];
        if (r->cfa > FX_CFI_CFA_PLT || r->rbp > FX_CFI_RBP_SAVED || r->pc >= c->end ||
            (i > 0 && r->pc <= c->rows[i - 1].pc))
            return false;
    }
    const uint32_t *funcs = (const uint32_t *)(c->rows + c->count);
    for (size_t i = 0; i < c->nfuncs; i++) {
        if (funcs[i] >= c->end || (i > 0 && funcs[i] < funcs[i - 1]))
            return false;
    }
    return true;
}

int fx_cfi_cache_load(const char *dir, const char *path, const struct stat *st, struct fx_cfi **out,
                      struct fx_cfi_stats *stats, struct fx_errbuf *eb)
{
    *out = NULL;
    char name[1024];
    if (!fx_cache_file_name(dir, path, st, "cfi", name, sizeof(name)))
        return FX_ENOTFOUND;
    struct stat fs;
    int fd, orc = fx_cache_open_or_say(name, &fs, &fd, eb);
    if (orc != FX_OK)
        return orc;
    const char *why = NULL;
    struct header h, want = {0};
    identity(&want, st);
    struct fx_cfi *c = NULL;
    if (!fx_cache_io(fd, &h, sizeof(h), false) || h.magic != MAGIC || h.version != VERSION ||
        h.hdr_size != sizeof(h))
        why = "not an unwind table file of this version";
    else if (h.dev != want.dev || h.ino != want.ino || h.size != want.size ||
             h.mtime_s != want.mtime_s || h.mtime_ns != want.mtime_ns)
        why = "written for another file";
    else if (h.bytes < sizeof(*c) || h.bytes > MAX_BYTES ||
             (uint64_t)fs.st_size != sizeof(h) + h.bytes)
        why = "its size does not match its header";
    else if ((c = fx_malloc(h.bytes)) == NULL)
        why = "no memory";
    else if (!fx_cache_io(fd, c, h.bytes, false) || !fx_cfi_cache_check(c, h.bytes))
        why = "malformed rows";
    close(fd);
    if (why != NULL) {
        fx_free(c);
        fx_errbuf_set(eb, "%s: %s", name, why);
        return FX_EIO;
    }
    *out = c;
    if (stats != NULL)
        *stats = h.stats;
    return FX_OK;
}

int fx_cfi_cache_store(const char *dir, const char *path, const struct stat *st,
                       const struct fx_cfi *c, const struct fx_cfi_stats *stats,
                       struct fx_errbuf *eb)
{
    char name[1024];
    if (!fx_cache_file_name(dir, path, st, "cfi", name, sizeof(name))) {
        fx_errbuf_set(eb, "%s: cache file name too long", dir);
        return FX_EIO;
    }
    size_t bytes = sizeof(*c) + c->count * sizeof(struct fx_cfi_row) + c->nfuncs * sizeof(uint32_t);
    struct header h = {.magic = MAGIC, .version = VERSION, .hdr_size = sizeof(h), .bytes = bytes};
    identity(&h, st);
    if (stats != NULL)
        h.stats = *stats;
    struct fx_cache_part parts[] = {{&h, sizeof(h)}, {c, bytes}};
    return fx_cache_write(name, parts, 2, eb);
}
