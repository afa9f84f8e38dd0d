/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof open (and compare: two profiles, for the profiler's /compare/ view): serves one profile to
 * profiler.firefox.com's from-url loader (PROFILE-FORMAT.md §16.2) from 127.0.0.1, under a path
 * with 128 random bits, and nothing else: CORS headers only on that path, one request per
 * connection, every buffer and every wait bounded. It serves until Ctrl-C, so a reload of the
 * profiler's tab works; --timeout ends it only while nobody has fetched the file yet, and --once
 * ends it once the file has been sent in full (after a grace period for a retry). */
#include "fxprof.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_args.h"
#include "diff.h"
#include "sources.h"

#define MAX_CONNS          16
#define REQ_CAP            8192
#define READ_MS            10000 /* to send a whole request head */
#define STALL_MS           30000 /* without any progress in sending */
#define DRAIN_MS           2000  /* for the client to close after our response */
#define GRACE_MS           3000  /* after the profile went out, for a retried request */
#define DEFAULT_TIMEOUT_MS (10 * 60 * 1000)
#define CHUNK              (1 << 20)
#define ORIGIN             "https://profiler.firefox.com"
#define VIEWER             ORIGIN "/from-url/"

extern char **environ;

enum conn_state {
    C_FREE = 0,
    C_READ,
    C_WRITE,
    C_DRAIN,
};

struct conn {
    enum conn_state state;
    int fd;
    int64_t deadline;
    size_t rlen;
    char req[REQ_CAP];
    char head[1024];
    size_t hlen, hoff;
    off_t boff, bend; /* file bytes still to send */
    bool profile;     /* a GET of the profile: the file counts as served once it is sent */
    int file;         /* which of the server's files */
};

/* One profile served, under its own secret path. */
struct sfile {
    const char *name; /* as given */
    int fd;
    off_t size;
    bool gzip;
    bool fetched;
    int thread;    /* compare: the thread its view selects */
    char path[64]; /* "/<32 hex>/profile.json"; compare: ".../base.json", ".../new.json" */
};

struct server {
    int lfd;
    struct sfile files[2];
    int nfiles;
    bool served; /* every file was fetched */
    int64_t served_at, end_at;
    pid_t browser;
    bool once; /* --once */
    struct conn conns[MAX_CONNS];
};

struct open_args {
    const char *file, *file2; /* file2: compare's NEW */
    bool compare;
    bool no_browser;
    int port;
    int64_t timeout_ms;
    bool once;
    const char *thread;     /* compare --thread NAME */
    const char *sources[8]; /* --sources: embedded into a temporary copy before serving */
    size_t nsources;
};

static int usage(bool compare)
{
    if (compare)
        printf("usage: fxprof compare BASE NEW [--no-browser] [--port N] [--timeout DURATION]\n"
               "                      [--once] [--sources PATH]... [--thread NAME]\n"
               "Serves both profiles on 127.0.0.1, each under its own secret path, and prints the\n"
               "link of the Firefox Profiler's comparison of them (its /compare/ view: both call\n"
               "trees merged, NEW's samples against BASE's) for one thread of each: --thread NAME,\n"
               "else each profile's first selected thread (fxagent's: main). The other options:\n\n");
    printf("usage: fxprof open FILE [--no-browser] [--port N] [--timeout DURATION] [--once]\n"
           "                  [--sources PATH]...\n"
           "Serves FILE (.json or .json.gz) on 127.0.0.1 for profiler.firefox.com and prints the\n"
           "link that opens it; runs xdg-open on it when a display is available. Serves until\n"
           "Ctrl-C, so reloading the profiler's tab works.\n"
           "  --no-browser      only print the link\n"
           "  --port N          listen on port N (default: any free port)\n"
           "  --timeout D       give up if nobody fetched the profile within D: seconds or with\n"
           "                    a unit, e.g. 90 or 10m (default 10m)\n"
           "  --once            stop once the profile has been fetched\n"
           "  --sources PATH    embed the Java sources first, as fxprof sources --from PATH\n"
           "                    does, into a temporary copy (repeatable; FILE is unchanged)\n"
           "The link works only in a browser on this machine. Nothing is uploaded unless you\n"
           "press Upload in the profiler.\n"
           "exit codes: 0 fetched (Ctrl-C after a fetch is 0 too), 1 failed (or not fetched before\n"
           "--timeout), 2 bad command line, 130 interrupted before a fetch\n");
    return FX_CLI_OK;
}

static int parse_args(int argc, char **argv, struct open_args *a)
{
    const char *cmd = a->compare ? "compare" : "open";
    static const struct option longs[] = {
            {"no-browser", no_argument, NULL, 'n'},    {"port", required_argument, NULL, 'p'},
            {"timeout", required_argument, NULL, 't'}, {"once", no_argument, NULL, 'o'},
            {"help", no_argument, NULL, 'h'},          {"sources", required_argument, NULL, 's'},
            {"thread", required_argument, NULL, 'T'},  {NULL, 0, NULL, 0}};
    struct fx_errbuf eb = {{0}};
    char *end;
    int o;
    optind = 0;
    while ((o = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        switch (o) {
        case 'n':
            a->no_browser = true;
            break;
        case 'o':
            a->once = true;
            break;
        case 'T':
            if (!a->compare)
                return fx_cli_usage(cmd, "--thread is compare's option");
            a->thread = optarg;
            break;
        case 's':
            if (a->nsources == sizeof a->sources / sizeof *a->sources)
                return fx_cli_usage(cmd, "at most 8 --sources");
            a->sources[a->nsources++] = optarg;
            break;
        case 'p':
            a->port = (int)strtol(optarg, &end, 10);
            if (*optarg < '0' || *optarg > '9' || *end || a->port > 65535)
                return fx_cli_usage(cmd, "--port '%s' is not a port (0 to 65535)", optarg);
            break;
        case 't':
            if (fx_cli_parse_timeout("--timeout", optarg, &a->timeout_ms, &eb) != FX_OK)
                return fx_cli_usage(cmd, "%s", eb.msg);
            break;
        default:
            return fx_cli_opt_rest(cmd, o, argv);
        }
    }
    if (!a->compare)
        return fx_cli_one_file("open", argc, argv, &a->file);
    if (optind != argc - 2)
        return fx_cli_usage("compare", "expected two files, BASE and NEW");
    a->file = argv[optind];
    a->file2 = argv[optind + 1];
    return FX_CLI_OK;
}

/* ---- setup ---- */

/* Gzip (magic 1f 8b) goes out as Content-Encoding: gzip, which the browser inflates; anything
 * else must at least start like JSON, to catch a wrong file before the browser does. */
static int open_file(struct sfile *s, const char *file, struct fx_errbuf *eb)
{
    unsigned char head[64];
    struct stat st;
    s->name = file;
    s->fd = open(file, O_RDONLY | O_CLOEXEC);
    if (s->fd < 0 || fstat(s->fd, &st) != 0) {
        fx_errbuf_set(eb, "cannot open %s: %s", file, strerror(errno));
        return FX_EIO;
    }
    ssize_t n = S_ISREG(st.st_mode) ? pread(s->fd, head, sizeof head, 0) : -1;
    if (n <= 0) {
        fx_errbuf_set(eb, "%s is not a regular, non-empty file", file);
        return FX_EINVAL;
    }
    s->size = st.st_size;
    s->gzip = n >= 2 && head[0] == 0x1f && head[1] == 0x8b;
    ssize_t i = 0;
    while (i < n && strchr(" \t\r\n", head[i]))
        i++;
    if (!s->gzip && (i == n || head[i] != '{')) {
        fx_errbuf_set(eb, "%s is neither gzip nor JSON: not a profile", file);
        return FX_EINVAL;
    }
    return FX_OK;
}

static int listen_on(struct server *s, int port, int *bound, struct fx_errbuf *eb)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK); /* never reachable from another machine */
    socklen_t len = sizeof sa;
    int one = 1;
    s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->lfd < 0 || setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(s->lfd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(s->lfd, MAX_CONNS) != 0 ||
        getsockname(s->lfd, (struct sockaddr *)&sa, &len) != 0) {
        fx_errbuf_set(eb, "cannot listen on 127.0.0.1:%d: %s", port, strerror(errno));
        return FX_EIO;
    }
    *bound = ntohs(sa.sin_port);
    return FX_OK;
}

/* encodeURIComponent: everything but A-Z a-z 0-9 - _ . ! ~ * ' ( ) is percent-encoded. */
static void uri_component(const char *in, char *out, size_t cap)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && o + 4 < cap; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
            strchr("-_.!~*'()", *p))
            out[o++] = (char)*p;
        else
            o += (size_t)snprintf(out + o, cap - o, "%%%02X", *p);
    }
    out[o] = '\0';
}

static void start_browser(struct server *s, const char *link)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    for (int fd = 0; fd < 3; fd++)
        posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", fd ? O_WRONLY : O_RDONLY, 0);
    char *argv[] = {"xdg-open", (char *)link, NULL};
    int err = posix_spawnp(&s->browser, "xdg-open", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (err != 0) {
        s->browser = 0;
        fprintf(stderr, "fxprof: cannot run xdg-open (%s): open the link yourself\n",
                strerror(err));
    }
}

/* Prints where file i is served and puts its from-url view link into out. */
static void view_link(const struct server *s, int i, int port, char *out, size_t cap)
{
    char url[128];
    const struct sfile *f = &s->files[i];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, f->path);
    printf("Serving %s (%lld bytes%s) at %s\n", f->name, (long long)f->size,
           f->gzip ? ", gzip" : "", url);
    snprintf(out, cap, "%s", VIEWER);
    uri_component(url, out + strlen(out), cap - strlen(out) - 1);
    /* A compared view must name its thread (merge-compare.ts: "No thread has been selected"). */
    size_t len = strlen(out);
    snprintf(out + len, cap - len, s->nfiles > 1 ? "/calltree/?thread=%d" : "/", f->thread);
}

static void announce(struct server *s, const struct open_args *a, int port)
{
    char view[2][512], link[2048];
    for (int i = 0; i < s->nfiles; i++)
        view_link(s, i, port, view[i], sizeof view[i]);
    snprintf(link, sizeof link, "%s", a->compare ? ORIGIN "/compare/?profiles[]=" : view[0]);
    /* The compare route takes the two views, public/ or from-url/, as profiles[] (the
     * profiler's receive-profile.ts, retrieveProfilesToCompare). */
    for (int i = 0; a->compare && i < 2; i++) {
        if (i)
            strcat(link, "&profiles[]=");
        uri_component(view[i], link + strlen(link), sizeof link - strlen(link) - 1);
    }
    printf("Open %sin the Firefox Profiler: %s\n", a->compare ? "the comparison " : "", link);
    fflush(stdout);
    const char *x11 = getenv("DISPLAY"), *wl = getenv("WAYLAND_DISPLAY");
    if (!a->no_browser && ((x11 && *x11) || (wl && *wl)))
        start_browser(s, link);
    fprintf(stderr, "fxprof: waiting for the profiler to fetch %s (Ctrl-C to stop)\n",
            a->compare ? "both" : "it");
}

/* ---- connections ---- */

static void conn_close(struct conn *c)
{
    if (c->state != C_FREE)
        close(c->fd);
    c->state = C_FREE;
}

static void respond(struct server *s, struct conn *c, int status, const struct fx_http_request *r)
{
    int fi = -1;
    for (int i = 0; r && i < s->nfiles; i++)
        fi = !strcmp(r->target, s->files[i].path) ? i : fi;
    bool secret = fi >= 0;
    const struct sfile *f = &s->files[secret ? fi : 0];
    bool get = r && !strcmp(r->method, "GET"), head = r && !strcmp(r->method, "HEAD");
    bool preflight = r && !strcmp(r->method, "OPTIONS");
    if (!status)
        status = !secret ? 404 : get || head ? 200 : preflight ? 204 : 405;
    char body[64] = ""; /* errors carry their status line as a short text body */
    if (status != 200 && status != 204)
        snprintf(body, sizeof body, "%d %s\n", status, fx_http_reason(status));
    struct fx_http_response res = {.status = status,
                                   .content_type = status == 200 ? "application/json"
                                                   : *body       ? "text/plain"
                                                                 : NULL,
                                   .gzip = status == 200 && f->gzip,
                                   .content_length = status == 200 ? (long long)f->size
                                                                   : (long long)strlen(body),
                                   .cors = secret,
                                   .allow_headers = secret ? r->request_headers : NULL,
                                   .private_network = secret && r->private_network};
    c->hlen = fx_http_head(&res, c->head, sizeof c->head);
    if (c->hlen + strlen(body) <= sizeof c->head) {
        memcpy(c->head + c->hlen, body, strlen(body));
        c->hlen += strlen(body);
    }
    c->hoff = 0;
    c->boff = 0;
    c->bend = status == 200 && get ? f->size : 0;
    c->file = secret ? fi : 0;
    c->profile = status == 200 && get;
    c->state = C_WRITE;
    c->deadline = fx_cli_now_ms() + STALL_MS;
}

static void conn_read(struct server *s, struct conn *c)
{
    ssize_t n = recv(c->fd, c->req + c->rlen, sizeof c->req - c->rlen, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        conn_close(c);
        return;
    }
    c->rlen += (size_t)n;
    struct fx_http_request r;
    int st = fx_http_parse(c->req, c->rlen, sizeof c->req, &r);
    if (st == FX_HTTP_INCOMPLETE)
        return;
    respond(s, c, st, st ? NULL : &r);
}

static void sent_all(struct server *s, struct conn *c)
{
    struct sfile *f = &s->files[c->file];
    if (c->profile && !f->fetched) {
        f->fetched = true;
        bool all = s->nfiles == 1 || s->files[!c->file].fetched;
        if (s->nfiles == 1)
            fprintf(stderr, "fxprof: the profile was fetched (%lld bytes)%s\n", (long long)f->size,
                    s->once ? "" : "; still serving it for a reload, Ctrl-C to stop");
        else
            fprintf(stderr, "fxprof: %s was fetched (%lld bytes)%s\n", f->name, (long long)f->size,
                    !all ? ""
                    : s->once
                            ? "; both profiles were fetched"
                            : "; both profiles were fetched, still serving them for a reload, Ctrl-C to stop");
        s->served = all;
    }
    if (c->profile)
        s->served_at = fx_cli_now_ms();
    /* Lingering close: closing with unread input could reset the connection before the client
     * has read our last bytes. */
    shutdown(c->fd, SHUT_WR);
    c->state = C_DRAIN;
    c->deadline = fx_cli_now_ms() + DRAIN_MS;
}

static void conn_write(struct server *s, struct conn *c)
{
    ssize_t n;
    if (c->hoff < c->hlen) {
        n = send(c->fd, c->head + c->hoff, c->hlen - c->hoff, MSG_NOSIGNAL);
        if (n > 0)
            c->hoff += (size_t)n;
    } else {
        off_t left = c->bend - c->boff;
        n = sendfile(c->fd, s->files[c->file].fd, &c->boff, left < CHUNK ? (size_t)left : CHUNK);
        if (n == 0) { /* the file shrank under us: the promised length cannot be met */
            conn_close(c);
            return;
        }
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n < 0) {
        conn_close(c);
        return;
    }
    c->deadline = fx_cli_now_ms() + STALL_MS;
    if (c->hoff == c->hlen && c->boff == c->bend)
        sent_all(s, c);
}

static void conn_drain(struct conn *c)
{
    char sink[4096];
    ssize_t n = recv(c->fd, sink, sizeof sink, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
        conn_close(c);
}

static void conn_accept(struct server *s)
{
    for (int i = 0; i < MAX_CONNS; i++) {
        struct conn *c = &s->conns[i];
        if (c->state != C_FREE)
            continue;
        int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        c->fd = fd;
        c->rlen = 0;
        c->state = C_READ;
        c->deadline = fx_cli_now_ms() + READ_MS;
        return;
    }
}

/* ---- the loop ---- */

static void expire(struct server *s, int64_t now)
{
    for (int i = 0; i < MAX_CONNS; i++) {
        struct conn *c = &s->conns[i];
        if (c->state == C_READ && now >= c->deadline && c->rlen > 0) {
            respond(s, c, 408, NULL); /* a slow head gets an answer, an idle socket none */
        } else if (c->state != C_FREE && now >= c->deadline) {
            conn_close(c);
        }
    }
}

static int poll_timeout(const struct server *s, int64_t now, int *active)
{
    int64_t next = s->served ? now + 1000 : s->end_at;
    if (s->served && s->once && s->served_at + GRACE_MS < next)
        next = s->served_at + GRACE_MS;
    *active = 0;
    for (int i = 0; i < MAX_CONNS; i++) {
        if (s->conns[i].state == C_FREE)
            continue;
        (*active)++;
        if (s->conns[i].deadline < next)
            next = s->conns[i].deadline;
    }
    int64_t ms = next - now;
    return ms < 0 ? 0 : ms > 1000 ? 1000 : (int)ms;
}

static void dispatch(struct server *s, const struct pollfd *pfd, const int *slot, int n)
{
    for (int k = 1; k < n; k++) {
        struct conn *c = &s->conns[slot[k]];
        if (!pfd[k].revents)
            continue;
        if (c->state == C_READ)
            conn_read(s, c);
        else if (c->state == C_WRITE)
            conn_write(s, c);
        else if (c->state == C_DRAIN)
            conn_drain(c);
    }
    if (pfd[0].revents & POLLIN)
        conn_accept(s);
}

static bool finished(const struct server *s, int64_t now, int active)
{
    return fx_cli_interrupted() || (!s->served && now >= s->end_at) ||
           (s->once && s->served && now >= s->served_at + GRACE_MS && active == 0);
}

static void run_loop(struct server *s, const sigset_t *unblocked)
{
    struct pollfd pfd[MAX_CONNS + 1];
    int slot[MAX_CONNS + 1];
    for (;;) {
        int64_t now = fx_cli_now_ms();
        expire(s, now);
        int active, ms = poll_timeout(s, now, &active);
        if (finished(s, now, active))
            return;
        int n = 1;
        pfd[0] = (struct pollfd){.fd = s->lfd, .events = active < MAX_CONNS ? POLLIN : 0};
        for (int i = 0; i < MAX_CONNS; i++) {
            const struct conn *c = &s->conns[i];
            if (c->state == C_FREE)
                continue;
            pfd[n] = (struct pollfd){.fd = c->fd, .events = c->state == C_WRITE ? POLLOUT : POLLIN};
            slot[n++] = i;
        }
        struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
        if (ppoll(pfd, (nfds_t)n, &ts, unblocked) > 0)
            dispatch(s, pfd, slot, n);
        if (s->browser > 0 && waitpid(s->browser, NULL, WNOHANG) == s->browser)
            s->browser = 0;
    }
}

static int serve(struct server *s, const struct open_args *a)
{
    struct fx_errbuf eb = {{0}};
    char hex[33];
    int port;
    const char *cmd = a->compare ? "compare" : "open";
    s->nfiles = a->compare ? 2 : 1;
    if (open_file(&s->files[0], a->file, &eb) != FX_OK ||
        (a->compare && open_file(&s->files[1], a->file2, &eb) != FX_OK) ||
        (a->compare && fx_compare_thread(a->file, a->thread, &s->files[0].thread, &eb)) ||
        (a->compare && fx_compare_thread(a->file2, a->thread, &s->files[1].thread, &eb)) ||
        fx_cli_random_hex(hex, sizeof hex, 16, &eb) != FX_OK ||
        listen_on(s, a->port, &port, &eb) != FX_OK)
        return fx_cli_fail("%s: %s", cmd, eb.msg);
    for (int i = 0; i < s->nfiles; i++)
        snprintf(s->files[i].path, sizeof s->files[i].path, "/%s/%s.json", hex,
                 !a->compare ? "profile"
                 : i         ? "new"
                             : "base");
    /* Interrupts stay blocked except inside ppoll, so none is lost between checks. */
    sigset_t block, unblocked;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, &unblocked);
    fx_cli_catch_interrupts();
    signal(SIGPIPE, SIG_IGN); /* sendfile has no MSG_NOSIGNAL */
    s->end_at = fx_cli_now_ms() + a->timeout_ms;
    s->once = a->once;
    announce(s, a, port);
    run_loop(s, &unblocked);
    if (s->served)
        return FX_CLI_OK;
    if (fx_cli_interrupted()) {
        fx_cli_fail("%s: stopped before the profile%s fetched", cmd,
                    a->compare ? "s were" : " was");
        return FX_CLI_INTERRUPTED;
    }
    return fx_cli_fail(
            "%s: nobody fetched the profile%s within %lld s; the link is no longer valid", cmd,
            a->compare ? "s" : "", (long long)(a->timeout_ms / 1000));
}

int fx_serve_main(int argc, char **argv)
{
    struct open_args a = {.timeout_ms = DEFAULT_TIMEOUT_MS, .compare = !strcmp(argv[0], "compare")};
    int rc = parse_args(argc, argv, &a);
    if (rc < 0)
        return usage(a.compare);
    if (rc != FX_CLI_OK)
        return rc;
    /* --sources: each profile is served from a copy with the sources embedded. */
    char copy[2][4096];
    const char **file[2] = {&a.file, &a.file2};
    int ncopies = 0;
    for (; a.nsources && ncopies < (a.compare ? 2 : 1) && rc == FX_CLI_OK; ncopies++) {
        rc = fx_sources_temp(*file[ncopies], a.sources, a.nsources, copy[ncopies], sizeof copy[0]);
        *file[ncopies] = copy[ncopies];
    }
    struct server s = {.lfd = -1, .files = {{.fd = -1}, {.fd = -1}}};
    if (rc == FX_CLI_OK)
        rc = serve(&s, &a);
    for (int i = 0; i < ncopies; i++)
        fx_sources_temp_remove(copy[i]);
    for (int i = 0; i < MAX_CONNS; i++)
        conn_close(&s.conns[i]);
    if (s.lfd >= 0)
        close(s.lfd);
    for (int i = 0; i < 2; i++)
        if (s.files[i].fd >= 0)
            close(s.files[i].fd);
    return rc;
}
