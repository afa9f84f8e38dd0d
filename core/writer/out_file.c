/* SPDX-License-Identifier: Apache-2.0 */
/* Safe output. The target's kind decides how it is written (fx_out_file.h):
 * - missing, an empty file or a profile (gzip or JSON), or a symlink to one: a temporary
 *   file, f->tmp_path, that this
 *   process created (O_EXCL|O_NOFOLLOW, so never a pre-planted link) beside the target, which
 *   changes only by the final rename. A symlink is replaced by the rename, not written through
 *   (a link planted in /tmp cannot aim a root JVM's profile at /etc/shadow).
 * - a character device or a FIFO, or a symlink to one (/dev/null, /dev/stdout when it is a
 *   pipe), and a path through a process's /proc/PID/fd to the file of its stdout or stderr (a
 *   magic link to an open file, which rename would never reach; appended to): written into
 *   directly, f->direct, never created, truncated,
 *   renamed or removed. A FIFO is opened O_NONBLOCK first, so one without a reader is refused
 *   at once instead of hanging the JVM's exit.
 * - anything else (a file that is not a profile, a folder, a block device, a socket, a
 *   terminal): not written; the profile goes to the fallback folder with the reason. */
#include "fx_out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

int fx_out_file_fallback_path(const char *target, bool special, char *out, size_t cap)
{
    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    /* "null", "stdout" or "1" alone would not say what the file is, and "1" in /tmp would
     * meet every other "1". */
    const char *ext =
            special && !ends_with(base, ".json.gz") && !ends_with(base, ".json") ? ".json.gz" : "";
    int n = snprintf(out, cap, "%s/%s%s", fx_out_file_fallback_dir(), base, ext);
    return n > 0 && (size_t)n < cap ? FX_OK : FX_ERANGE;
}

/* Opens the temporary in the fallback folder after the target refused the profile (f->reason
 * says why). `pointless`: the fallback folder is the one that just refused. */
static int open_fallback(struct fx_out_file *f, const char *target, bool special, int err,
                         bool pointless, struct fx_errbuf *eb)
{
    char *path = fx_malloc(PATH_MAX);
    if (!path || is_process_limit(err) || pointless ||
        fx_out_file_fallback_path(target, special, path, PATH_MAX) != FX_OK) {
        fx_errbuf_set(eb, "could not write %s (%s)", target, f->reason);
        fx_free(path);
        return err == ENOMEM || !path ? FX_ENOMEM : FX_EIO;
    }
    const char *fb = fx_out_file_fallback_dir();
    int fb_err = create_tmp(fb, strrchr(path, '/') + 1, f->mode, &f->tmp_path, &f->fd);
    if (fb_err) {
        fx_errbuf_set(eb, "could not write %s (%s); nor in the fallback folder %s: %s", target,
                      f->reason, fb, strerror(fb_err));
        fx_free(path);
        fx_out_file_abort(f);
        return fb_err == ENOMEM ? FX_ENOMEM : FX_EIO;
    }
    f->target = path;
    f->fell_back = true;
    return FX_OK;
}

/* True if `dir` (a real path) is a process's open-file folder, /proc/PID/fd or
 * /proc/PID/task/TID/fd, whose entries are magic links to open files, not names in a folder. */
static bool is_proc_fd_dir(const char *dir)
{
    return strncmp(dir, "/proc/", 6) == 0 && ends_with(dir, "/fd");
}

/* The folder part of `path` into out ("." when it has none). */
static void parent_of(const char *path, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(out, cap, ".");
    else
        snprintf(out, cap, "%.*s", (int)(slash == path ? 1 : slash - path), path);
}

/* Whether a step of target's chain of links (40 at most, as the kernel allows) is in a /proc
 * fd folder: /dev/stdout -> /proc/self/fd/1, /dev/fd/2, /proc/self/fd/1 itself. */
static bool through_proc_fd(const char *target)
{
    struct {
        char cur[PATH_MAX], parent[PATH_MAX], real[PATH_MAX], link[PATH_MAX];
    } *b = fx_malloc(sizeof(*b));
    if (!b)
        return false;
    bool found = false;
    snprintf(b->cur, PATH_MAX, "%s", target);
    for (int hop = 0; hop < 40 && !found; hop++) {
        parent_of(b->cur, b->parent, PATH_MAX);
        struct stat st;
        if (!realpath(b->parent, b->real))
            break;
        found = is_proc_fd_dir(b->real);
        if (found || lstat(b->cur, &st) != 0 || !S_ISLNK(st.st_mode))
            break;
        ssize_t n = readlink(b->cur, b->link, PATH_MAX - 1);
        if (n < 0)
            break;
        b->link[n] = '\0';
        int w = b->link[0] == '/' ? snprintf(b->cur, PATH_MAX, "%s", b->link)
                                  : snprintf(b->cur, PATH_MAX, "%s/%s", b->real, b->link);
        if (w < 0 || w >= PATH_MAX)
            break;
    }
    fx_free(b);
    return found;
}

enum how {
    WRITE_SAFE,    /* temporary file + rename */
    WRITE_DIRECT,  /* into the device, FIFO or open file itself */
    WRITE_REFUSED, /* not at all */
};

static const char *kind_name(mode_t m)
{
    return S_ISDIR(m)    ? "a folder"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

/* An existing file is replaced only if it is empty or starts like a profile (gzip, or JSON's
 * '{'): a mistyped file=/etc/hosts or file=app.jar must not cost the file. Profiles replace
 * profiles (a dump at the same name, a validate report) as before. */
static enum how replaceable(const char *target, char *why, size_t cap)
{
    int fd = open(target, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, cap, "it exists and cannot be read to tell whether it is a profile: %s",
                 strerror(errno));
        return WRITE_REFUSED;
    }
    unsigned char b[2];
    ssize_t n = read(fd, b, sizeof(b));
    close(fd);
    if (n == 0 || (n > 0 && b[0] == '{') || (n == 2 && b[0] == 0x1f && b[1] == 0x8b))
        return WRITE_SAFE;
    snprintf(
            why, cap,
            "it exists and is not a profile (neither gzip nor JSON); fxagent replaces only profiles");
    return WRITE_REFUSED;
}

/* The file behind fd 1 or 2: file=/dev/stdout with stdout in a log file appends to the log, as
 * the operator asked; another open file (the application's jar at /proc/self/fd/5) is not
 * ours to append to. */
static bool is_std_output(const struct stat *st)
{
    struct stat o;
    for (int fd = 1; fd <= 2; fd++) {
        if (fstat(fd, &o) == 0 && o.st_dev == st->st_dev && o.st_ino == st->st_ino)
            return true;
    }
    return false;
}

/* lstat first: a missing target takes the safe path without following anything; only a link
 * is followed, to learn what it leads to. */
static enum how classify(const char *target, bool *append, bool *fifo, char *why, size_t cap)
{
    struct stat l, st;
    *append = *fifo = false;
    if (lstat(target, &l) != 0)
        return WRITE_SAFE; /* missing, or its folder is: created, or the fallback says why */
    if (S_ISREG(l.st_mode))
        return replaceable(target, why, cap);
    bool link = S_ISLNK(l.st_mode);
    if (link && stat(target, &st) != 0)
        return WRITE_SAFE; /* a dangling link is replaced like any link to a file */
    if (!link)
        st = l;
    if (S_ISREG(st.st_mode) && link && through_proc_fd(target)) {
        *append = is_std_output(&st);
        if (!*append)
            snprintf(why, cap, "it names an open file that is not this process's stdout or stderr");
        return *append ? WRITE_DIRECT : WRITE_REFUSED;
    }
    if (S_ISREG(st.st_mode))
        return replaceable(target, why, cap);
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
        *fifo = S_ISFIFO(st.st_mode);
        return WRITE_DIRECT;
    }
    snprintf(why, cap, "it is %s; fxagent writes only to files, character devices and FIFOs",
             kind_name(st.st_mode));
    return WRITE_REFUSED;
}

int fx_out_file_check(const char *target, char *why, size_t cap)
{
    bool append, fifo;
    return classify(target, &append, &fifo, why, cap) == WRITE_REFUSED ? FX_EINVAL : FX_OK;
}

/* Never O_CREAT or O_TRUNC: the file is someone else's. O_NONBLOCK makes a FIFO without a
 * reader fail at once (ENXIO) and is cleared before writing. The kind is checked again on the
 * descriptor: the path may have been replaced since classify. Returns 0 or an errno value,
 * with the reason in `why`. */
static int open_direct(struct fx_out_file *f, const char *target, bool append, bool fifo, char *why,
                       size_t cap)
{
    int fd = open(target, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC | (append ? O_APPEND : 0));
    if (fd < 0) {
        int err = errno;
        snprintf(why, cap, "%s",
                 fifo && err == ENXIO ? "it is a FIFO that no process reads" : strerror(err));
        return err;
    }
    struct stat st;
    const char *bad = NULL;
    int fl;
    if (fstat(fd, &st) != 0)
        bad = strerror(errno);
    else if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode) && !(append && S_ISREG(st.st_mode)))
        bad = "it was replaced while it was opened";
    else if (isatty(fd))
        bad = "it is a terminal";
    else if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
        bad = strerror(errno);
    if (bad) {
        snprintf(why, cap, "%s", bad);
        close(fd);
        return EINVAL;
    }
    f->fd = fd;
    f->direct = true;
    f->target = fx_strdup(target);
    if (!f->target) {
        fx_out_file_abort(f);
        snprintf(why, cap, "%s", strerror(ENOMEM));
        return ENOMEM;
    }
    return 0;
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
    bool append, fifo;
    enum how how = classify(target, &append, &fifo, f->reason, sizeof(f->reason));
    if (how == WRITE_REFUSED)
        return open_fallback(f, target, true, 0, false, eb);
    if (how == WRITE_DIRECT) {
        int err = open_direct(f, target, append, fifo, f->reason, sizeof(f->reason));
        return err == 0 ? FX_OK : open_fallback(f, target, true, err, false, eb);
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
        snprintf(f->reason, sizeof(f->reason), "cannot create a file in %s: %s", dir,
                 strerror(err));
        rc = open_fallback(f, target, false, err, strcmp(fx_out_file_fallback_dir(), dir) == 0, eb);
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
        if (n <= 0) {
            f->write_errno = n < 0 ? errno : EIO;
            return FX_EIO; /* n == 0 cannot make progress either */
        }
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

/* A device or FIFO has nothing to flush to disk (fsync fails there with EINVAL): closing it
 * is the end of the stream, and its error is the only one left to report. */
static int commit_direct(struct fx_out_file *f, struct fx_errbuf *eb)
{
    int rc = close(f->fd) == 0 ? FX_OK : FX_EIO;
    if (rc != FX_OK)
        fx_errbuf_set(eb, "cannot close %s: %s", f->target, strerror(errno));
    f->fd = -1;
    return rc;
}

int fx_out_file_commit(struct fx_out_file *f, struct fx_errbuf *eb)
{
    if (f->direct && f->fd >= 0)
        return commit_direct(f, eb);
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
    } else if (f->direct && f->fd >= 0) {
        close(f->fd); /* never removed: the device or FIFO is not ours */
    }
    f->fd = -1;
    fx_free(f->target);
    f->target = NULL;
}
