/* SPDX-License-Identifier: Apache-2.0 */
/* The text map (include/fx_textmap.h): parses a maps file into rows, keeps the executable ones
 * (or, for the stack table, the private read-write ones), sorts them and copies them with their
 * paths into one immutable block; and the writer side of the publication slot. Lines of
 * /proc/PID/maps look like 7f1c2a000000-7f1c2a021000 r-xp 00002000 fe:00 1234
 * /usr/lib/libz.so.1.2.13 and the path (which may hold spaces) is everything after the inode's
 * padding. */
#include "fx_textmap.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_lines.h"
#include "fx_sort.h"

#define DELETED_SUFFIX " (deleted)"

struct row {
    struct fx_textmap_entry e; /* path not yet set */
    size_t path_at;            /* offset into the builder's path bytes */
};

struct builder {
    struct row *rows;
    size_t nrows, cap_rows;
    char *paths; /* NUL-terminated paths, back to back */
    size_t npaths, cap_paths;
};

static int push_path(struct builder *b, const char *p, size_t len, size_t *at)
{
    if (fx_grow(&b->paths, &b->cap_paths, b->npaths, len + 1, 1, 4096) != 0)
        return FX_ENOMEM;
    memcpy(b->paths + b->npaths, p, len);
    b->paths[b->npaths + len] = '\0';
    *at = b->npaths;
    b->npaths += len + 1;
    return FX_OK;
}

static int push_row(struct builder *b, const struct row *r)
{
    if (fx_grow(&b->rows, &b->cap_rows, b->nrows, 1, sizeof(*b->rows), 64) != 0)
        return FX_ENOMEM;
    b->rows[b->nrows++] = *r;
    return FX_OK;
}

static enum fx_textmap_kind classify(const char **path, size_t *len)
{
    size_t suffix = strlen(DELETED_SUFFIX);
    if (*len == 0)
        return FX_TEXTMAP_ANON;
    if (*len > 6 && memcmp(*path, "[anon:", 6) == 0)
        return FX_TEXTMAP_ANON; /* named with PR_SET_VMA_ANON_NAME, still anonymous */
    if ((*path)[0] == '[')
        return FX_TEXTMAP_SPECIAL;
    if (*len > suffix && memcmp(*path + *len - suffix, DELETED_SUFFIX, suffix) == 0) {
        *len -= suffix;
        return FX_TEXTMAP_DELETED;
    }
    return FX_TEXTMAP_FILE;
}

/* One line into r and its path; *keep says whether the mapping is executable (rw false) or
 * private and read-write (rw true). */
static bool parse_line(const char *line, struct row *r, const char **path, size_t *plen, bool rw,
                       bool *keep)
{
    uintmax_t start, end, offset, inode;
    unsigned maj, min;
    char perms[5];
    int at = -1;
    if (sscanf(line, "%jx-%jx %4s %jx %x:%x %ju%n", &start, &end, perms, &offset, &maj, &min,
               &inode, &at) != 7 ||
        at < 0 || strlen(perms) != 4 || start >= end || end > UINTPTR_MAX)
        return false;
    const char *p = line + at;
    while (*p == ' ' || *p == '\t')
        p++;
    *path = p;
    *plen = strlen(p);
    *keep = rw ? perms[0] == 'r' && perms[1] == 'w' && perms[3] == 'p' : perms[2] == 'x';
    r->e = (struct fx_textmap_entry){.start = (uintptr_t)start,
                                     .end = (uintptr_t)end,
                                     .offset = offset,
                                     .inode = inode,
                                     .dev_major = maj,
                                     .dev_minor = min};
    r->e.kind = classify(path, plen);
    return true;
}

static int read_rows(struct fx_lines *in, struct builder *b, bool rw, struct fx_errbuf *eb)
{
    char *line;
    size_t len;
    int rc;
    while ((rc = fx_lines_next(in, &line, &len, eb)) == FX_OK) {
        struct row r;
        const char *path;
        size_t plen;
        bool keep;
        if (!parse_line(line, &r, &path, &plen, rw, &keep)) {
            fx_errbuf_set(eb, "%s:%zu: not a maps line (start-end perms offset dev inode path)",
                          in->path, in->lineno);
            return FX_EINVAL;
        }
        if (!keep)
            continue;
        if (push_path(b, path, plen, &r.path_at) != FX_OK || push_row(b, &r) != FX_OK) {
            fx_errbuf_set(eb, "%s:%zu: out of memory", in->path, in->lineno);
            return FX_ENOMEM;
        }
    }
    return rc == FX_ENOTFOUND ? FX_OK : rc;
}

static int by_start(const void *a, const void *b)
{
    uintptr_t x = ((const struct row *)a)->e.start, y = ((const struct row *)b)->e.start;
    return x < y ? -1 : x > y;
}

static int check_overlaps(const struct builder *b, const char *src, struct fx_errbuf *eb)
{
    for (size_t i = 1; i < b->nrows; i++) {
        const struct fx_textmap_entry *p = &b->rows[i - 1].e, *e = &b->rows[i].e;
        if (e->start < p->end) {
            fx_errbuf_set(eb,
                          "%s: mappings overlap: %" PRIxPTR "-%" PRIxPTR " and %" PRIxPTR
                          "-%" PRIxPTR,
                          src, p->start, p->end, e->start, e->end);
            return FX_EINVAL;
        }
    }
    return FX_OK;
}

static struct fx_textmap *freeze(const struct builder *b)
{
    size_t head = sizeof(struct fx_textmap), size;
    if (__builtin_mul_overflow(b->nrows, sizeof(struct fx_textmap_entry), &size) ||
        __builtin_add_overflow(size, head + b->npaths, &size))
        return NULL;
    struct fx_textmap *t = fx_malloc(size);
    if (!t)
        return NULL;
    char *paths = (char *)&t->entries[b->nrows];
    if (b->npaths)
        memcpy(paths, b->paths, b->npaths);
    t->count = b->nrows;
    for (size_t i = 0; i < b->nrows; i++) {
        t->entries[i] = b->rows[i].e;
        t->entries[i].path = paths + b->rows[i].path_at;
    }
    return t;
}

static int read_table(const char *maps_path, bool rw, struct fx_textmap **out, struct fx_errbuf *eb)
{
    *out = NULL;
    struct fx_lines in;
    int rc = fx_lines_open(&in, maps_path, eb);
    if (rc != FX_OK)
        return rc;
    struct builder b = {0};
    rc = read_rows(&in, &b, rw, eb);
    fx_lines_close(&in);
    if (rc == FX_OK) {
        fx_sort(b.rows, b.nrows, sizeof(*b.rows), by_start);
        rc = check_overlaps(&b, maps_path, eb);
    }
    if (rc == FX_OK && !(*out = freeze(&b))) {
        fx_errbuf_set(eb, "%s: out of memory for %zu mappings", maps_path, b.nrows);
        rc = FX_ENOMEM;
    }
    fx_free(b.rows);
    fx_free(b.paths);
    return rc;
}

int fx_textmap_read(const char *maps_path, struct fx_textmap **out, struct fx_errbuf *eb)
{
    return read_table(maps_path, false, out, eb);
}

int fx_textmap_read_rw(const char *maps_path, struct fx_textmap **out, struct fx_errbuf *eb)
{
    return read_table(maps_path, true, out, eb);
}

void fx_textmap_free(struct fx_textmap *t)
{
    fx_free(t);
}

bool fx_textmap_slot_reclaim(struct fx_textmap_slot *s)
{
    uint32_t old = (__atomic_load_n(&s->gen, __ATOMIC_SEQ_CST) - 1u) & 1u;
    if (s->retired && __atomic_load_n(&s->readers[old], __ATOMIC_SEQ_CST) == 0) {
        fx_textmap_free(s->retired);
        s->retired = NULL;
    }
    return s->retired != NULL;
}

int fx_textmap_slot_publish(struct fx_textmap_slot *s, struct fx_textmap *t)
{
    if (fx_textmap_slot_reclaim(s))
        return FX_EFULL;
    s->retired = __atomic_exchange_n(&s->current, t, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&s->gen, 1, __ATOMIC_SEQ_CST);
    return FX_OK;
}

void fx_textmap_slot_destroy(struct fx_textmap_slot *s)
{
    fx_textmap_free(s->retired);
    fx_textmap_free(s->current);
    memset(s, 0, sizeof(*s));
}
