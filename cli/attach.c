/* SPDX-License-Identifier: Apache-2.0 */
/* HotSpot's attach protocol, version 1, which every JDK from 8 to 25 accepts: the request is
 * "1\0" + operation "\0" + exactly three arguments, each "\0"-terminated; the reply is the
 * completion status as a decimal line, then free text, then EOF. No signal is ever sent to a
 * process that does not catch SIGQUIT, so a non-JVM is never killed by mistake. */
#include "fxprof.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "fx_alloc.h"

#define SIGQUIT_BIT      (1ull << (SIGQUIT - 1))
#define REPLY_MAX        (256u << 20) /* a thread dump of a huge JVM still fits */
#define OP_NAME_MAX      16           /* AttachOperation::name_length_max */
#define BACKOFF_MIN_MS   20
#define BACKOFF_MAX_MS   400
#define STARTING_POLL_MS 50
#define FORK_MS          1000 /* how long a shell's child is given to exec */

static void status_field(struct fx_attach_target *t, const char *line, bool *have_ns)
{
    unsigned long a, b;
    if (!strncmp(line, "Name:", 5)) {
        snprintf(t->name, sizeof t->name, "%s", line + 5 + strspn(line + 5, " \t"));
        t->name[strcspn(t->name, "\n")] = '\0';
    } else if (sscanf(line, "Tgid: %lu", &a) == 1) {
        t->tgid = (pid_t)a;
    } else if (sscanf(line, "Uid: %lu %lu", &a, &b) == 2) {
        t->uid = (uid_t)b;
    } else if (sscanf(line, "Gid: %lu %lu", &a, &b) == 2) {
        t->gid = (gid_t)b;
    } else if (!strncmp(line, "NSpid:", 6)) {
        /* The last entry is the pid in the innermost namespace, the JVM's own view. */
        const char *last = strrchr(line, '\t');
        last = last ? last : line + 6;
        long v = strtol(last, NULL, 10);
        if (v > 0) {
            t->nspid = (pid_t)v;
            *have_ns = true;
        }
    } else if (!strncmp(line, "State:", 6)) {
        t->state = line[6 + strspn(line + 6, " \t")];
    } else if (!strncmp(line, "SigIgn:", 7)) {
        t->sig_ign = strtoull(line + 7, NULL, 16);
    } else if (!strncmp(line, "SigCgt:", 7)) {
        t->sig_cgt = strtoull(line + 7, NULL, 16);
    }
}

static int read_status(struct fx_attach_target *t, struct fx_errbuf *eb)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)t->pid);
    FILE *f = fopen(path, "re");
    if (!f) {
        fx_errbuf_set(eb, "no process with pid %d", (int)t->pid);
        return FX_ENOTFOUND;
    }
    char line[512];
    bool have_ns = false;
    while (fgets(line, sizeof line, f))
        status_field(t, line, &have_ns);
    fclose(f);
    if (!have_ns) /* kernels before 4.1 have no NSpid: assume our namespace */
        t->nspid = t->pid;
    return FX_OK;
}

static void find_tmpdir(struct fx_attach_target *t)
{
    /* The JVM puts its socket in its own /tmp (HotSpot ignores java.io.tmpdir for this), which
     * is reachable through /proc/PID/root even inside a container's mount namespace. */
    snprintf(t->tmpdir, sizeof t->tmpdir, "/proc/%d/root/tmp", (int)t->pid);
    if (access(t->tmpdir, W_OK) != 0)
        snprintf(t->tmpdir, sizeof t->tmpdir, "/tmp");
    char root[64];
    snprintf(root, sizeof root, "/proc/%d/root/", (int)t->pid);
    struct stat theirs, ours;
    t->same_root = stat(root, &theirs) != 0 || stat("/", &ours) != 0 ||
                   (theirs.st_dev == ours.st_dev && theirs.st_ino == ours.st_ino);
}

/* fx_attach_target_open's checks once; *starting says whether the process may still become an
 * attachable JVM (fx_proc_starting), whatever the answer. */
static int open_once(pid_t pid, struct fx_attach_target *t, enum fx_proc_start *starting,
                     struct fx_errbuf *eb)
{
    memset(t, 0, sizeof *t);
    t->pid = pid;
    int rc = read_status(t, eb);
    if (rc != FX_OK)
        return rc;
    if (t->tgid && t->tgid != pid) { /* /proc shows threads too */
        fx_errbuf_set(eb, "%d is a thread of process %d; give the process id", (int)pid,
                      (int)t->tgid);
        return FX_EINVAL;
    }
    if (kill(pid, 0) != 0) {
        if (errno == ESRCH) {
            fx_errbuf_set(eb, "no process with pid %d", (int)pid);
            return FX_ENOTFOUND;
        }
        fx_errbuf_set(
                eb,
                "not allowed to signal process %d (%s, uid %u): run fxprof as that user or as root",
                (int)pid, t->name, (unsigned)t->uid);
        return FX_ESTATE;
    }
    if (t->state == 'Z' || t->state == 'X') {
        fx_errbuf_set(eb, "process %d (%s) has exited (a zombie, not yet reaped by its parent)",
                      (int)pid, t->name);
        return FX_ESTATE;
    }
    struct fx_proc_maps m;
    rc = fx_proc_read_maps(pid, NULL, &m, eb);
    if (rc == FX_ESTATE && geteuid() != t->uid)
        /* e.g. root without CAP_SYS_PTRACE (a container's default) and another user's JVM */
        fx_errbuf_set(
                eb,
                "cannot read /proc/%d/maps, so fxprof cannot tell whether process %d (%s) is a JVM: not signalled; run fxprof as its user (uid %u)",
                (int)pid, (int)pid, t->name, (unsigned)t->uid);
    if (rc != FX_OK)
        return rc;
    if (!m.libjvm) {
        *starting = fx_proc_starting(pid, &m);
        fx_errbuf_set(eb, "process %d (%s) is not a HotSpot JVM: no libjvm.so is mapped", (int)pid,
                      t->name);
        return FX_EINVAL;
    }
    /* A stopped JVM keeps the SIGQUIT pending and answers nothing until it is resumed. */
    if (t->state == 'T' || t->state == 't') {
        fx_errbuf_set(
                eb,
                "process %d (%s) is stopped (Ctrl-Z, SIGSTOP or a debugger): resume it first (kill -CONT %d); not signalled",
                (int)pid, t->name, (int)pid);
        return FX_ESTATE;
    }
    const char *source;
    if (fx_proc_attach_disabled(pid, m.perfdata, &source)) {
        fx_errbuf_set(
                eb,
                "process %d (%s) was started with -XX:+DisableAttachMechanism (%s): it cannot be attached to; not signalled",
                (int)pid, t->name, source);
        return FX_EUNSUPPORTED;
    }
    snprintf(t->perfdata, sizeof t->perfdata, "%s", m.perfdata);
    find_tmpdir(t);
    *starting = fx_proc_starting(pid, &m);
    return FX_OK;
}

/* A JVM a script launched a moment ago cannot be attached to yet (no libjvm.so, no SIGQUIT
 * handler, not in the live phase where agents may load): wait for it, bounded, and say so. */
int fx_attach_target_open(pid_t pid, struct fx_attach_target *t, struct fx_errbuf *eb)
{
    int64_t begin = fx_cli_now_ms(), until = begin + FX_PROC_STARTING_MS;
    bool said = false;
    for (;;) {
        enum fx_proc_start starting = FX_PROC_READY;
        int rc = open_once(pid, t, &starting, eb);
        /* a fork execs within milliseconds; one that does not is a subshell, never a JVM */
        if (starting == FX_PROC_READY ||
            (starting == FX_PROC_FORKED && fx_cli_now_ms() - begin >= FORK_MS))
            return rc;
        bool stop = fx_cli_interrupted(), late = fx_cli_now_ms() >= until;
        if (stop)
            fx_errbuf_set(eb, "interrupted while process %d (%s) was starting: not signalled",
                          (int)pid, t->name);
        else if (late && (rc == FX_OK || starting == FX_PROC_STARTING))
            fx_errbuf_set(eb, "process %d (%s) is still starting after %d s: not signalled",
                          (int)pid, t->name, FX_PROC_STARTING_MS / 1000);
        if (stop || late)
            return rc == FX_OK ? FX_ESTATE : rc;
        if (starting == FX_PROC_STARTING && !said) {
            fprintf(stderr, "fxprof: process %d (", (int)pid);
            fx_cli_put_escaped(stderr, t->name);
            fprintf(stderr, ") is still starting: waiting up to %d s for it\n",
                    FX_PROC_STARTING_MS / 1000);
            said = true;
        }
        fx_cli_sleep_ms(STARTING_POLL_MS);
    }
}

/* ---- starting the attach listener ---- */

static bool catches_sigquit(const struct fx_attach_target *t)
{
    struct fx_attach_target now = {.pid = t->pid}; /* fresh: the handler may be new */
    struct fx_errbuf eb = {{0}};
    if (read_status(&now, &eb) != FX_OK)
        return false;
    return (now.sig_cgt & SIGQUIT_BIT) && !(now.sig_ign & SIGQUIT_BIT);
}

/* The listener starts when a SIGQUIT finds .attach_pid<nspid> in the JVM's cwd or /tmp. */
static int create_trigger(const struct fx_attach_target *t, char *path, size_t cap,
                          struct fx_errbuf *eb)
{
    snprintf(path, cap, "/proc/%d/cwd/.attach_pid%d", (int)t->pid, (int)t->nspid);
    int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0660);
    if (fd < 0) {
        snprintf(path, cap, "%s/.attach_pid%d", t->tmpdir, (int)t->nspid);
        fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0660);
    }
    if (fd < 0) {
        fx_errbuf_set(eb, "cannot create %s to start the attach listener of process %d: %s", path,
                      (int)t->pid, strerror(errno));
        return FX_EIO;
    }
    close(fd);
    return FX_OK;
}

static bool socket_exists(const char *sock)
{
    struct stat st;
    return lstat(sock, &st) == 0;
}

/* The JVM exited (or is a zombie) since it was checked: a JVM that is shutting down never
 * opens its socket, and waiting the whole timeout for it would only delay the answer. */
static bool exited(const struct fx_attach_target *t)
{
    struct fx_attach_target now = *t;
    struct fx_errbuf eb = {{0}};
    return read_status(&now, &eb) != FX_OK || now.state == 'Z' || now.state == 'X';
}

static int wait_for_socket(const struct fx_attach_target *t, const char *sock, int64_t timeout_ms)
{
    int64_t start = fx_cli_now_ms(), delay = BACKOFF_MIN_MS;
    bool resent = false;
    while (!socket_exists(sock) && !fx_cli_interrupted()) {
        int64_t spent = fx_cli_now_ms() - start;
        if (spent >= timeout_ms)
            return FX_ENOTFOUND;
        if (exited(t))
            return FX_ESTATE;
        /* A SIGQUIT that arrived while the JVM was busy starting up is lost; one more at half
         * time gives it a second chance, as the JDK's own client does. */
        if (!resent && spent > timeout_ms / 2 && catches_sigquit(t)) {
            kill(t->pid, SIGQUIT);
            resent = true;
        }
        fx_cli_sleep_ms(delay < timeout_ms - spent ? delay : timeout_ms - spent);
        delay = delay * 2 < BACKOFF_MAX_MS ? delay * 2 : BACKOFF_MAX_MS;
    }
    return socket_exists(sock) ? FX_OK : FX_ENOTFOUND;
}

static int start_listener(const struct fx_attach_target *t, const char *sock, int64_t timeout_ms,
                          struct fx_errbuf *eb)
{
    if (!catches_sigquit(t)) {
        fx_errbuf_set(eb,
                      "process %d (%s) does not handle SIGQUIT (started with -Xrs): not signalled",
                      (int)t->pid, t->name);
        return FX_ESTATE;
    }
    char trigger[128];
    int rc = create_trigger(t, trigger, sizeof trigger, eb);
    if (rc != FX_OK)
        return rc;
    if (kill(t->pid, SIGQUIT) != 0) {
        fx_errbuf_set(eb, "cannot send SIGQUIT to process %d: %s", (int)t->pid, strerror(errno));
        rc = FX_EIO;
    } else {
        rc = wait_for_socket(t, sock, timeout_ms);
        if (rc == FX_ESTATE)
            fx_errbuf_set(eb, "process %d exited before it opened its attach socket", (int)t->pid);
        else if (rc != FX_OK)
            fx_errbuf_set(
                    eb,
                    "process %d did not open its attach socket %s within %lld ms (-XX:+DisableAttachMechanism?)",
                    (int)t->pid, sock, (long long)timeout_ms);
    }
    unlink(trigger);
    return rc;
}

/* ---- one request ---- */

/* Refuses a socket the target's user does not own: in a shared /tmp anyone could have put
 * one there for a pid whose JVM has not created its own yet. */
static int check_socket(const struct fx_attach_target *t, const char *sock, struct fx_errbuf *eb)
{
    struct stat st;
    if (lstat(sock, &st) != 0 || !S_ISSOCK(st.st_mode)) {
        fx_errbuf_set(eb, "%s is not a socket", sock);
        return FX_EINVAL;
    }
    if (st.st_uid != t->uid) {
        fx_errbuf_set(eb, "%s is owned by uid %u, not by the JVM's uid %u: not connecting", sock,
                      (unsigned)st.st_uid, (unsigned)t->uid);
        return FX_ESTATE;
    }
    return FX_OK;
}

static int connect_socket(const char *sock, int *out, struct fx_errbuf *eb)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(sock) >= sizeof sa.sun_path) {
        fx_errbuf_set(eb, "socket path %s is too long for AF_UNIX", sock);
        return FX_ERANGE;
    }
    strcpy(sa.sun_path, sock);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        fx_errbuf_set(eb, "cannot connect to %s: %s", sock, strerror(errno));
        if (fd >= 0)
            close(fd);
        return FX_EIO;
    }
    *out = fd;
    return FX_OK;
}

/* The whole request in one buffer, refusing what a version 1 listener would drop silently. */
static int build_request(const char *op, const char *const args[FX_ATTACH_ARGS], char *buf,
                         size_t cap, size_t *len, struct fx_errbuf *eb)
{
    if (strlen(op) == 0 || strlen(op) > OP_NAME_MAX) {
        fx_errbuf_set(eb, "attach operation '%s' must have 1 to %d characters", op, OP_NAME_MAX);
        return FX_EINVAL;
    }
    size_t n = 0;
    memcpy(buf, "1", 2);
    n = 2;
    memcpy(buf + n, op, strlen(op) + 1);
    n += strlen(op) + 1;
    for (int i = 0; i < FX_ATTACH_ARGS; i++) {
        const char *a = args && args[i] ? args[i] : "";
        size_t al = strlen(a);
        if (al > FX_ATTACH_ARG_MAX || n + al + 1 > cap) {
            fx_errbuf_set(eb, "attach argument %d has %zu bytes; the protocol allows %d", i + 1, al,
                          FX_ATTACH_ARG_MAX);
            return FX_ERANGE;
        }
        memcpy(buf + n, a, al + 1);
        n += al + 1;
    }
    *len = n;
    return FX_OK;
}

static int send_all(int fd, const char *buf, size_t len, struct fx_errbuf *eb)
{
    while (len > 0) {
        ssize_t w = send(fd, buf, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR && !fx_cli_interrupted())
            continue;
        if (w <= 0) {
            fx_errbuf_set(eb, "sending the request: %s", strerror(errno));
            return FX_EIO;
        }
        buf += w;
        len -= (size_t)w;
    }
    return FX_OK;
}

static int grow(struct fx_attach_reply *r, size_t *cap)
{
    if (*cap - r->len > 1)
        return FX_OK;
    size_t ncap = *cap ? *cap * 2 : 4096;
    char *p = fx_reallocarray(r->text, ncap, 1);
    if (!p)
        return FX_ENOMEM;
    r->text = p;
    *cap = ncap;
    return FX_OK;
}

/* Reads to EOF; the deadline covers the whole reply, so a stuck JVM cannot hang fxprof. */
static int read_all(int fd, int64_t timeout_ms, struct fx_attach_reply *r, struct fx_errbuf *eb)
{
    int64_t deadline = fx_cli_now_ms() + timeout_ms;
    size_t cap = 0;
    for (;;) {
        if (grow(r, &cap) != FX_OK || r->len >= REPLY_MAX) {
            fx_errbuf_set(eb, "the JVM's reply is too large (over %u bytes)", REPLY_MAX);
            return FX_ENOMEM;
        }
        int64_t left = deadline - fx_cli_now_ms();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int pr = left > 0 ? poll(&p, 1, (int)(left < 1000 ? left : 1000)) : 0;
        if (fx_cli_interrupted()) {
            fx_errbuf_set(eb, "interrupted while waiting for the JVM's reply");
            return FX_ESTATE;
        }
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr == 0 && left <= 0) {
            fx_errbuf_set(eb, "no complete reply from the JVM within %lld ms",
                          (long long)timeout_ms);
            return FX_EIO;
        }
        if (pr == 0)
            continue;
        ssize_t n = read(fd, r->text + r->len, cap - r->len - 1);
        if (n == 0)
            return FX_OK;
        if (n < 0 && errno != EINTR && errno != EAGAIN) {
            fx_errbuf_set(eb, "reading the JVM's reply: %s", strerror(errno));
            return FX_EIO;
        }
        r->len += n > 0 ? (size_t)n : 0;
        r->text[r->len] = '\0';
    }
}

/* Splits "<status>\n<text>" in place: r->text then holds only the text. */
static int split_status(struct fx_attach_reply *r, struct fx_errbuf *eb)
{
    char *nl = r->text ? memchr(r->text, '\n', r->len) : NULL;
    char *end = NULL;
    long v = nl ? strtol(r->text, &end, 10) : 0;
    if (!nl || end != nl || end == r->text) {
        fx_errbuf_set(eb, "the JVM's reply does not start with a status line (%zu bytes)", r->len);
        return FX_EINVAL;
    }
    r->status = (int)v;
    size_t skip = (size_t)(nl + 1 - r->text);
    memmove(r->text, nl + 1, r->len - skip + 1);
    r->len -= skip;
    return FX_OK;
}

static int exchange(int fd, const char *req, size_t len, int64_t reply_ms,
                    struct fx_attach_reply *r, struct fx_errbuf *eb)
{
    int rc = send_all(fd, req, len, eb);
    if (rc == FX_OK)
        rc = read_all(fd, reply_ms, r, eb);
    if (rc == FX_OK)
        rc = split_status(r, eb);
    return rc;
}

int fx_attach_execute(const struct fx_attach_target *t, const char *op,
                      const char *const args[FX_ATTACH_ARGS], int64_t attach_ms, int64_t reply_ms,
                      struct fx_attach_reply *r, struct fx_errbuf *eb)
{
    memset(r, 0, sizeof *r);
    char req[2 + OP_NAME_MAX + 1 + FX_ATTACH_ARGS * (FX_ATTACH_ARG_MAX + 1)];
    size_t len;
    int rc = build_request(op, args, req, sizeof req, &len, eb);
    if (rc != FX_OK)
        return rc;
    char sock[128];
    snprintf(sock, sizeof sock, "%s/.java_pid%d", t->tmpdir, (int)t->nspid);
    if (!socket_exists(sock))
        rc = start_listener(t, sock, attach_ms, eb);
    if (rc == FX_OK)
        rc = check_socket(t, sock, eb);
    int fd = -1;
    if (rc == FX_OK)
        rc = connect_socket(sock, &fd, eb);
    if (rc == FX_OK)
        rc = exchange(fd, req, len, reply_ms, r, eb);
    if (rc != FX_OK && r->len == 0 && fd >= 0 && exited(t)) /* it died with the request */
        fx_errbuf_set(eb, "process %d exited before it answered (the command may not have run)",
                      (int)t->pid);
    if (fd >= 0)
        close(fd);
    if (rc != FX_OK)
        fx_attach_reply_destroy(r);
    return rc;
}

void fx_attach_reply_destroy(struct fx_attach_reply *r)
{
    fx_free(r->text);
    r->text = NULL;
    r->len = 0;
}

bool fx_attach_load_code(const struct fx_attach_reply *r, int *code)
{
    static const char prefix[] = "return code: ";
    for (const char *line = r->text; line && *line;) {
        if (!strncmp(line, prefix, sizeof prefix - 1)) {
            char *end;
            long v = strtol(line + sizeof prefix - 1, &end, 10);
            if (end != line + sizeof prefix - 1 && (*end == '\n' || *end == '\0')) {
                *code = (int)v;
                return true;
            }
        }
        const char *nl = strchr(line, '\n');
        line = nl ? nl + 1 : NULL;
    }
    return false;
}
