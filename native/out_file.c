/* SPDX-License-Identifier: Apache-2.0 */
/* Safe output. Invariant: while a file is open, f->tmp_path names a file this process created
 * (O_EXCL|O_NOFOLLOW, so never a pre-planted link) and f->target has not been touched; the
 * target changes only by the final rename. A target that is a symlink is replaced by the
 * rename, not written through: the link itself becomes the profile. */
#include "fx_out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fx_alloc.h"

#define CREATE_ATTEMPTS 16

static uint64_t test_seed; /* non-zero: predictable temporary names (tests only) */

void fx_out_file_seed_for_tests(uint64_t seed)
{
    test_seed = seed;
}

const char *fx_out_file_fallback_dir(void)
{
    const char *t = getenv("TMPDIR");
    return t && t[0] == '/' ? t : "/tmp";
}

static char *fmt_path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *fmt_path(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *p = fx_malloc((size_t)n + 1);
    if (!p)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

static uint64_t random_u64(void)
{
    if (test_seed)
        return test_seed++;
    uint64_t r;
    if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
        return r;
    /* No entropy yet (early boot): O_EXCL still makes a guessed name harmless. */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    static uint64_t counter;
    return ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^
           __atomic_add_fetch(&counter, 0x9e3779b97f4a7c15ull, __ATOMIC_RELAXED);
}

/* Creates `.<base>.tmp.<pid>.<random>` in dir; returns 0 or an errno value. The base is cut
 * to 200 bytes so the name stays under NAME_MAX. */
static int create_tmp(const char *dir, const char *base, mode_t mode, char **tmp, int *fd)
{
    for (int i = 0; i < CREATE_ATTEMPTS; i++) {
        char *p = fmt_path("%s/.%.200s.tmp.%ld.%016llx", dir, base, (long)getpid(),
                           (unsigned long long)random_u64());
        if (!p)
            return ENOMEM;
        *fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (*fd >= 0) {
            *tmp = p;
            return 0;
        }
        int err = errno;
        fx_free(p);
        if (err != EEXIST && err != EINTR)
            return err;
    }
    return EEXIST;
}

/* Errors of the whole process, which another folder would not fix. */
static bool is_process_limit(int err)
{
    return err == EMFILE || err == ENFILE || err == ENOMEM;
}

/* Opens the temporary in the fallback folder after the target's folder refused it. */
static int open_fallback(struct fx_out_file *f, const char *dir, const char *base, int err,
                         struct fx_errbuf *eb)
{
    const char *fb = fx_out_file_fallback_dir();
    snprintf(f->reason, sizeof(f->reason), "cannot create a file in %s: %s", dir, strerror(err));
    if (is_process_limit(err) || strcmp(fb, dir) == 0) {
        fx_errbuf_set(eb, "%s", f->reason);
        return err == ENOMEM ? FX_ENOMEM : FX_EIO;
    }
    int fb_err = create_tmp(fb, base, f->mode, &f->tmp_path, &f->fd);
    f->target = fb_err ? NULL : fmt_path("%s/%s", fb, base);
    if (fb_err || !f->target) {
        fx_errbuf_set(eb, "%s; nor in the fallback folder %s: %s", f->reason, fb,
                      strerror(fb_err ? fb_err : ENOMEM));
        fx_out_file_abort(f);
        return fb_err == 0 || fb_err == ENOMEM ? FX_ENOMEM : FX_EIO;
    }
    f->fell_back = true;
    return FX_OK;
}

int fx_out_file_open(struct fx_out_file *f, const char *target, mode_t mode, struct fx_errbuf *eb)
{
    memset(f, 0, sizeof(*f));
    f->fd = -1;
    f->mode = mode ? mode : 0600;
    const char *slash = target ? strrchr(target, '/') : NULL;
    const char *base = slash ? slash + 1 : target;
    if (!base || !base[0] || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
        fx_errbuf_set(eb, "output file '%s': not a file name (give e.g. /tmp/app.json.gz)",
                      target ? target : "(null)");
        return FX_EINVAL;
    }
    char *dir = slash ? fx_strndup(target, slash == target ? 1 : (size_t)(slash - target))
                      : fx_strdup(".");
    if (!dir) {
        fx_errbuf_set(eb, "out of memory opening %s", target);
        return FX_ENOMEM;
    }
    int rc = FX_OK;
    int err = create_tmp(dir, base, f->mode, &f->tmp_path, &f->fd);
    if (err == 0) {
        f->target = fx_strdup(target);
        if (!f->target) {
            fx_out_file_abort(f);
            fx_errbuf_set(eb, "out of memory opening %s", target);
            rc = FX_ENOMEM;
        }
    } else {
        rc = open_fallback(f, dir, base, err, eb);
    }
    fx_free(dir);
    return rc;
}

static int out_write(void *ctx, const void *buf, size_t len)
{
    struct fx_out_file *f = ctx;
    if (f->fd < 0)
        return FX_ESTATE;
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(f->fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return FX_EIO; /* n == 0 cannot make progress either */
        p += n;
        len -= (size_t)n;
    }
    return FX_OK;
}

struct fx_sink fx_out_file_sink(struct fx_out_file *f)
{
    return (struct fx_sink){.write = out_write, .ctx = f};
}

/* The rename is durable only once the folder entry is on disk. Best effort: the profile is
 * already in place, and some file systems refuse fsync on a folder (EINVAL). */
static void sync_dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir =
            slash ? fx_strndup(path, slash == path ? 1 : (size_t)(slash - path)) : fx_strdup(".");
    if (!dir)
        return;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    fx_free(dir);
}

int fx_out_file_commit(struct fx_out_file *f, struct fx_errbuf *eb)
{
    if (!f->tmp_path || f->fd < 0) {
        fx_errbuf_set(eb, "output file %s: commit without an open file",
                      f->target ? f->target : "(none)");
        return FX_ESTATE;
    }
    const char *what = "flush";
    int ok = fsync(f->fd) == 0;
    int err = errno;
    if (close(f->fd) != 0 && ok) {
        ok = 0;
        err = errno;
        what = "close";
    }
    f->fd = -1;
    if (ok && rename(f->tmp_path, f->target) != 0) {
        ok = 0;
        err = errno;
        what = "rename onto";
    }
    if (!ok) {
        fx_errbuf_set(eb, "cannot %s %s: %s", what, f->target, strerror(err));
        unlink(f->tmp_path);
    } else {
        sync_dir_of(f->target);
    }
    fx_free(f->tmp_path);
    f->tmp_path = NULL;
    return ok ? FX_OK : FX_EIO;
}

void fx_out_file_abort(struct fx_out_file *f)
{
    if (f->tmp_path) { /* fd is only meaningful while tmp_path is set: 0 in a zeroed struct */
        if (f->fd >= 0)
            close(f->fd);
        unlink(f->tmp_path);
        fx_free(f->tmp_path);
        f->tmp_path = NULL;
    }
    f->fd = -1;
    fx_free(f->target);
    f->target = NULL;
}
