/* SPDX-License-Identifier: Apache-2.0 */
/* The folder kept across JVM starts (include/fx_cache_dir.h): its choice from the environment,
 * opening a file only when it is this user's own, and writing one whole (temporary name, then
 * rename). Not signal-safe.
 * Tests: unit.cfi_cache, unit.kallsyms_cache. */
#include "fx_cache_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

bool fx_cache_dir(const char *env, const char *xdg, const char *home, const char *sub, char *buf,
                  size_t cap)
{
    int n;
    if (env != NULL && env[0] != '\0') {
        if (strcmp(env, "off") == 0 || strcmp(env, "no") == 0 || env[0] != '/')
            return false;
        n = snprintf(buf, cap, "%s/%s", env, sub);
    } else if (xdg != NULL && xdg[0] == '/') {
        n = snprintf(buf, cap, "%s/fxagent/%s", xdg, sub);
    } else if (home != NULL && home[0] == '/') {
        n = snprintf(buf, cap, "%s/.cache/fxagent/%s", home, sub);
    } else {
        return false;
    }
    return n > 0 && (size_t)n < cap;
}

int fx_cache_open(const char *name, struct stat *st, const char **why)
{
    *why = NULL;
    int fd = open(name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        if (errno != ENOENT)
            *why = "cannot be opened";
        return -1;
    }
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode) || st->st_uid != geteuid() ||
        (st->st_mode & 077) != 0) {
        *why = "not a regular file of this user's own (mode 0600)";
        close(fd);
        return -1;
    }
    return fd;
}

bool fx_cache_file_name(const char *dir, const char *path, const struct stat *st, const char *ext,
                        char *buf, size_t cap)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash != NULL ? slash + 1 : path;
    int n = snprintf(buf, cap, "%s/%.64s-%" PRIx64 "-%" PRIx64 "-%" PRIx64 "-%" PRIx64 ".%09ld.%s",
                     dir, base, (uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
                     (uint64_t)st->st_mtim.tv_sec, (long)st->st_mtim.tv_nsec, ext);
    return n > 0 && (size_t)n < cap;
}

int fx_cache_open_or_say(const char *name, struct stat *st, int *fd, struct fx_errbuf *eb)
{
    const char *why;
    *fd = fx_cache_open(name, st, &why);
    if (*fd >= 0)
        return FX_OK;
    if (why == NULL)
        return FX_ENOTFOUND;
    fx_errbuf_set(eb, "%s: %s", name, why);
    return FX_EIO;
}

bool fx_cache_io(int fd, void *buf, size_t n, bool out)
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

/* mkdir -p of the folder holding name, each level made 0700. */
static bool make_parent(const char *name)
{
    char d[1024];
    int n = snprintf(d, sizeof(d), "%s", name);
    char *slash = strrchr(d, '/');
    if (n <= 0 || (size_t)n >= sizeof(d) || slash == NULL || slash == d)
        return false;
    *slash = '\0';
    if (mkdir(d, 0700) == 0 || errno == EEXIST)
        return true;
    if (errno != ENOENT)
        return false;
    for (char *p = d + 1; *p != '\0'; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        bool ok = mkdir(d, 0700) == 0 || errno == EEXIST;
        *p = '/';
        if (!ok)
            return false;
    }
    return mkdir(d, 0700) == 0 || errno == EEXIST;
}

int fx_cache_write(const char *name, const struct fx_cache_part *parts, size_t nparts,
                   struct fx_errbuf *eb)
{
    char tmp[1100];
    if (!make_parent(name)) {
        fx_errbuf_set(eb, "%s: cannot make its folder: %s", name, strerror(errno));
        return FX_EIO;
    }
    snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", name, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        fx_errbuf_set(eb, "%s: %s", tmp, strerror(errno));
        return FX_EIO;
    }
    bool ok = true;
    for (size_t i = 0; ok && i < nparts; i++)
        ok = fx_cache_io(fd, (void *)parts[i].p, parts[i].n, true);
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, name) != 0) {
        fx_errbuf_set(eb, "%s: %s", tmp, strerror(errno));
        unlink(tmp);
        return FX_EIO;
    }
    return FX_OK;
}
