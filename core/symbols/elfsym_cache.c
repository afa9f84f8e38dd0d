/* SPDX-License-Identifier: Apache-2.0 */
/* ELF symbol tables kept across JVM starts (include/fx_elfsym_cache.h): the file (a header
 * naming the library's identity and build-id, the rows, the names) and the checks a file passes
 * before it is mapped in place of reading the library's .symtab. Not signal-safe.
 * Tests: unit.elfsym. */
#include "fx_elfsym_cache.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fx_cache_dir.h"

#define MAGIC     0x314d5953584655ull /* "UFXSYM1" */
#define VERSION   1u
#define MAX_BYTES (512u << 20) /* no library's function names come near; larger is corrupt */

struct header {
    uint64_t magic;
    uint32_t version, hdr_size, row_size, pad;
    uint64_t dev, ino, size, mtime_s, mtime_ns;
    char build_id[48];
    uint64_t n, names_len;
};

static void identity(struct header *h, const struct stat *st, const char *build_id)
{
    memset(h, 0, sizeof(*h));
    h->magic = MAGIC, h->version = VERSION, h->hdr_size = sizeof(*h);
    h->row_size = sizeof(struct fx_elfsym_row);
    h->dev = (uint64_t)st->st_dev, h->ino = (uint64_t)st->st_ino, h->size = (uint64_t)st->st_size;
    h->mtime_s = (uint64_t)st->st_mtim.tv_sec, h->mtime_ns = (uint64_t)st->st_mtim.tv_nsec;
    snprintf(h->build_id, sizeof(h->build_id), "%s", build_id);
}

/* The rows and names of a mapped file whose header matched: NULL when they are well formed. */
static const char *check(const struct header *h, size_t bytes, struct fx_elfsym_table *t)
{
    if (h->n == 0 || h->names_len == 0 || h->n > MAX_BYTES / sizeof(struct fx_elfsym_row) ||
        h->names_len > MAX_BYTES ||
        bytes != sizeof(*h) + h->n * sizeof(struct fx_elfsym_row) + h->names_len)
        return "its size does not match its header";
    t->rows = (const struct fx_elfsym_row *)((const char *)t->map + sizeof(*h));
    t->n = h->n;
    t->names = (const char *)(t->rows + t->n);
    t->names_len = h->names_len;
    if (t->names[t->names_len - 1] != '\0')
        return "malformed names";
    for (size_t i = 0; i < t->n; i++) {
        if (t->rows[i].name_at >= t->names_len || (i > 0 && t->rows[i].addr <= t->rows[i - 1].addr))
            return "malformed rows";
    }
    return NULL;
}

int fx_elfsym_cache_load(const char *dir, const char *path, const struct stat *st,
                         const char *build_id, struct fx_elfsym_table *out, struct fx_errbuf *eb)
{
    memset(out, 0, sizeof(*out));
    char name[1024];
    if (!fx_cache_file_name(dir, path, st, "sym", name, sizeof(name)))
        return FX_ENOTFOUND;
    struct stat fs;
    int fd, orc = fx_cache_open_or_say(name, &fs, &fd, eb);
    if (orc != FX_OK)
        return orc;
    const char *why = NULL;
    struct header h, want;
    identity(&want, st, build_id);
    if (!fx_cache_io(fd, &h, sizeof(h), false) || h.magic != MAGIC || h.version != VERSION ||
        h.hdr_size != sizeof(h) || h.row_size != want.row_size)
        why = "not a symbol table file of this version";
    else if (h.dev != want.dev || h.ino != want.ino || h.size != want.size ||
             h.mtime_s != want.mtime_s || h.mtime_ns != want.mtime_ns ||
             memcmp(h.build_id, want.build_id, sizeof(h.build_id)) != 0)
        why = "written for another file";
    else if ((uint64_t)fs.st_size <= sizeof(h) || (uint64_t)fs.st_size > MAX_BYTES)
        why = "its size does not match its header";
    else if ((out->map = mmap(NULL, (size_t)fs.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) ==
             MAP_FAILED)
        why = "cannot be mapped", out->map = NULL;
    else
        out->map_len = (size_t)fs.st_size, why = check(&h, out->map_len, out);
    close(fd);
    if (why != NULL) {
        fx_elfsym_cache_unmap(out);
        fx_errbuf_set(eb, "%s: %s", name, why);
        return FX_EIO;
    }
    return FX_OK;
}

int fx_elfsym_cache_store(const char *dir, const char *path, const struct stat *st,
                          const char *build_id, const struct fx_elfsym_row *rows, size_t n,
                          const char *names, size_t names_len, struct fx_errbuf *eb)
{
    char name[1024];
    if (!fx_cache_file_name(dir, path, st, "sym", name, sizeof(name))) {
        fx_errbuf_set(eb, "%s: cache file name too long", dir);
        return FX_EIO;
    }
    struct header h;
    identity(&h, st, build_id);
    h.n = n, h.names_len = names_len;
    struct fx_cache_part parts[] = {{&h, sizeof(h)}, {rows, n * sizeof(*rows)}, {names, names_len}};
    return fx_cache_write(name, parts, 3, eb);
}

void fx_elfsym_cache_unmap(struct fx_elfsym_table *t)
{
    if (t->map != NULL)
        munmap(t->map, t->map_len);
    memset(t, 0, sizeof(*t));
}
