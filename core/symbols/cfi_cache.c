/* SPDX-License-Identifier: Apache-2.0 */
/* Unwind tables kept across JVM starts (include/fx_cfi_cache.h): the directory, the file (a
 * header naming the library's identity, then the fx_cfi block as it is in memory) and the
 * checks a file passes before its rows reach a signal handler. Not signal-safe. */
#include "fx_cfi_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fx_alloc.h"

#define MAGIC     0x31494643584655ull /* "UFXCFI1" */
#define VERSION   2u                  /* 2: .debug_frame rows too (issue 32) */
#define MAX_BYTES (256u << 20)        /* a 4 GiB text has fewer rows than this; larger is corrupt */

struct header {
    uint64_t magic;
    uint32_t version, hdr_size;
    uint64_t dev, ino, size, mtime_s, mtime_ns;
    uint64_t bytes; /* the block's size */
    struct fx_cfi_stats stats;
};

bool fx_cfi_cache_dir(const char *env, const char *xdg, const char *home, char *buf, size_t cap)
{
    int n;
    if (env != NULL && env[0] != '\0') {
        if (strcmp(env, "off") == 0 || strcmp(env, "no") == 0 || env[0] != '/')
            return false;
        n = snprintf(buf, cap, "%s", env);
    } else if (xdg != NULL && xdg[0] == '/') {
        n = snprintf(buf, cap, "%s/fxagent/cfi", xdg);
    } else if (home != NULL && home[0] == '/') {
        n = snprintf(buf, cap, "%s/.cache/fxagent/cfi", home);
    } else {
        return false;
    }
    return n > 0 && (size_t)n < cap;
}

/* dir/NAME-<identity>.cfi into buf; false when it does not fit. */
static bool file_name(const char *dir, const char *path, const struct stat *st, char *buf,
                      size_t cap)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash != NULL ? slash + 1 : path;
    int n = snprintf(buf, cap, "%s/%.64s-%" PRIx64 "-%" PRIx64 "-%" PRIx64 "-%" PRIx64 ".%09ld.cfi",
                     dir, base, (uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
                     (uint64_t)st->st_mtim.tv_sec, (long)st->st_mtim.tv_nsec);
    return n > 0 && (size_t)n < cap;
}

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
        if (r->cfa > FX_CFI_CFA_END || r->rbp > FX_CFI_RBP_SAVED || r->pc >= c->end ||
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

/* Reads (out false) or writes n bytes whole; false on an error or a short file. */
static bool move_all(int fd, void *buf, size_t n, bool out)
{
    for (size_t done = 0; done < n;) {
        ssize_t r = out ? write(fd, (const char *)buf + done, n - done)
                        : read(fd, (char *)buf + done, n - done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        done += (size_t)r;
    }
    return true;
}

int fx_cfi_cache_load(const char *dir, const char *path, const struct stat *st, struct fx_cfi **out,
                      struct fx_cfi_stats *stats, struct fx_errbuf *eb)
{
    *out = NULL;
    char name[1024];
    if (!file_name(dir, path, st, name, sizeof(name)))
        return FX_ENOTFOUND;
    int fd = open(name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return FX_ENOTFOUND;
    struct stat fs;
    struct header h, want = {0};
    identity(&want, st);
    struct fx_cfi *c = NULL;
    const char *why = NULL;
    if (fstat(fd, &fs) != 0 || !S_ISREG(fs.st_mode) || fs.st_uid != geteuid())
        why = "not a regular file of this user";
    else if (!move_all(fd, &h, sizeof(h), false) || h.magic != MAGIC || h.version != VERSION ||
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
    else if (!move_all(fd, c, h.bytes, false) || !fx_cfi_cache_check(c, h.bytes))
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

/* mkdir -p for the last two levels of dir (…/fxagent/cfi), 0700. */
static bool make_dir(const char *dir)
{
    if (mkdir(dir, 0700) == 0 || errno == EEXIST)
        return true;
    char parent[1024];
    snprintf(parent, sizeof(parent), "%s", dir);
    char *slash = strrchr(parent, '/');
    if (errno != ENOENT || slash == NULL || slash == parent)
        return false;
    *slash = '\0';
    if (mkdir(parent, 0700) != 0 && errno != EEXIST)
        return false;
    return mkdir(dir, 0700) == 0 || errno == EEXIST;
}

int fx_cfi_cache_store(const char *dir, const char *path, const struct stat *st,
                       const struct fx_cfi *c, const struct fx_cfi_stats *stats,
                       struct fx_errbuf *eb)
{
    char name[1024], tmp[1100];
    if (!file_name(dir, path, st, name, sizeof(name))) {
        fx_errbuf_set(eb, "%s: cache file name too long", dir);
        return FX_EIO;
    }
    if (!make_dir(dir)) {
        fx_errbuf_set(eb, "%s: %s", dir, strerror(errno));
        return FX_EIO;
    }
    snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", name, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        fx_errbuf_set(eb, "%s: %s", tmp, strerror(errno));
        return FX_EIO;
    }
    size_t bytes = sizeof(*c) + c->count * sizeof(struct fx_cfi_row) + c->nfuncs * sizeof(uint32_t);
    struct header h = {.magic = MAGIC, .version = VERSION, .hdr_size = sizeof(h), .bytes = bytes};
    identity(&h, st);
    if (stats != NULL)
        h.stats = *stats;
    bool ok = move_all(fd, &h, sizeof(h), true) && move_all(fd, (void *)c, bytes, true);
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, name) != 0) {
        fx_errbuf_set(eb, "%s: %s", tmp, strerror(errno));
        unlink(tmp);
        return FX_EIO;
    }
    return FX_OK;
}
