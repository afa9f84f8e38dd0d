/* SPDX-License-Identifier: Apache-2.0 */
/* The agent library as a target in another mount namespace sees it: the path itself when the
 * target opens the same file under it, else a copy in the target's /tmp named after its content,
 * written only where nobody else could have planted one (fx_attach_library in fxprof.h). Split
 * from attach.c, which speaks the protocol. */
#include "fxprof.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fx_alloc.h"

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static int slurp(const char *path, unsigned char **out, size_t *len, struct fx_errbuf *eb)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0 || st.st_size > (64 << 20)) {
        fx_errbuf_set(eb, "cannot read %s", path);
        if (fd >= 0)
            close(fd);
        return FX_EIO;
    }
    unsigned char *buf = fx_malloc((size_t)st.st_size);
    ssize_t n = buf ? read(fd, buf, (size_t)st.st_size) : -1;
    close(fd);
    if (n != st.st_size) {
        fx_free(buf);
        fx_errbuf_set(eb, "cannot read %s", path);
        return FX_EIO;
    }
    *out = buf;
    *len = (size_t)n;
    return FX_OK;
}

/* An existing copy is used only if the target's user or we own it and nobody else can write
 * to it: in a shared /tmp, another user could have planted a library under that name. */
static bool trusted_copy(const struct fx_attach_target *t, const char *path, size_t len)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size == len &&
           (st.st_uid == geteuid() || st.st_uid == t->uid) && !(st.st_mode & 022);
}

static int write_copy(const char *path, const unsigned char *buf, size_t len, struct fx_errbuf *eb)
{
    char tmp[PATH_MAX + 24], hex[17];
    int rc = fx_cli_random_hex(hex, sizeof hex, 8, eb);
    if (rc != FX_OK)
        return rc;
    snprintf(tmp, sizeof tmp, "%s.%s", path, hex);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    ssize_t n = fd >= 0 ? write(fd, buf, len) : -1;
    if (fd < 0 || n != (ssize_t)len || fchmod(fd, 0644) != 0 || close(fd) != 0 ||
        rename(tmp, path) != 0) {
        fx_errbuf_set(eb, "cannot copy libfxagent.so to %s: %s", path, strerror(errno));
        if (fd >= 0)
            unlink(tmp);
        return FX_EIO;
    }
    return FX_OK;
}

/* Whether the target opens the same file under `lib` as we do. Sharing the root is not enough:
 * a private /tmp (systemd's PrivateTmp, unshare) hides an agent kept under /tmp. A target whose
 * /proc/PID/root we may not read is assumed to see what we see, as before. */
static bool sees_our_file(const struct fx_attach_target *t, const char *lib)
{
    char theirs_path[PATH_MAX + 32];
    struct stat ours, theirs;
    if (snprintf(theirs_path, sizeof theirs_path, "/proc/%d/root%s", (int)t->pid, lib) >=
                (int)sizeof theirs_path ||
        stat(lib, &ours) != 0)
        return true;
    if (stat(theirs_path, &theirs) != 0)
        return errno != ENOENT && errno != ENOTDIR;
    return theirs.st_dev == ours.st_dev && theirs.st_ino == ours.st_ino;
}

int fx_attach_library(const struct fx_attach_target *t, const char *lib, char *out, size_t cap,
                      struct fx_errbuf *eb)
{
    if (t->same_root && sees_our_file(t, lib))
        return snprintf(out, cap, "%s", lib) < (int)cap ? FX_OK : FX_ERANGE;
    if (strncmp(t->tmpdir, "/proc/", 6) != 0) {
        fx_errbuf_set(
                eb, "process %d does not see %s and its /tmp is out of reach through /proc/%d/root",
                (int)t->pid, lib, (int)t->pid);
        return FX_ESTATE;
    }
    unsigned char *buf;
    size_t len;
    int rc = slurp(lib, &buf, &len, eb);
    if (rc != FX_OK)
        return rc;
    /* Named by content: every later attach names the same file, so the JVM finds the agent it
     * already loaded (the same inode) and start, dump and stop reach one agent. */
    char name[40], local[PATH_MAX];
    snprintf(name, sizeof name, "fxagent-%016llx.so", (unsigned long long)fnv1a(buf, len));
    snprintf(local, sizeof local, "%s/%s", t->tmpdir, name);
    if (!trusted_copy(t, local, len))
        rc = write_copy(local, buf, len, eb);
    fx_free(buf);
    if (rc == FX_OK && snprintf(out, cap, "/tmp/%s", name) >= (int)cap)
        rc = FX_ERANGE;
    return rc;
}
