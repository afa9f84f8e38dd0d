/* SPDX-License-Identifier: Apache-2.0 */
/* Pushing profiles (fx_push.h): URL and labels checks, Pyroscope's target, one POST. The POST is
 * a non-blocking connect and poll()ed writes and reads against one deadline, so a backend that
 * accepts and never answers costs the push thread timeout_ms, never more. */
#include "fx_push.h"

#include "fx_alloc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BOUNDARY "fxagent-7d1f0c5e9b"
const char fx_push_multipart_type[] = "multipart/form-data; boundary=" BOUNDARY;
const char fx_push_multipart_head[] =
        "--" BOUNDARY
        "\r\nContent-Disposition: form-data; name=\"profile\"; filename=\"profile.pprof\"\r\n"
        "Content-Type: application/octet-stream\r\n\r\n";
const char fx_push_multipart_tail[] = "\r\n--" BOUNDARY "--\r\n";

int fx_push_url_parse(const char *url, struct fx_push_url *u, struct fx_errbuf *eb)
{
    memset(u, 0, sizeof *u);
    if (!strncmp(url, "https://", 8)) {
        fx_errbuf_set(
                eb,
                "option 'push': '%.60s' is https: only http:// is supported (put a local collector or proxy in front for TLS); accepted: http://HOST[:PORT]/PATH",
                url);
        return FX_EINVAL;
    }
    if (strncmp(url, "http://", 7)) {
        fx_errbuf_set(
                eb,
                "option 'push': '%.60s' is not an http:// URL; accepted: http://HOST[:PORT]/PATH, e.g. http://127.0.0.1:4040/ingest",
                url);
        return FX_EINVAL;
    }
    const char *h = url + 7, *slash = strchr(h, '/');
    size_t hl = slash ? (size_t)(slash - h) : strlen(h);
    const char *colon = memchr(h, ':', hl);
    size_t namel = colon ? (size_t)(colon - h) : hl, portl = colon ? hl - namel - 1 : 2;
    if (namel == 0 || namel >= sizeof u->host || portl == 0 || portl >= sizeof u->port ||
        (slash && strlen(slash) >= sizeof u->path)) {
        fx_errbuf_set(
                eb,
                "option 'push': '%.60s' has no host, a bad port or a path too long; accepted: http://HOST[:PORT]/PATH",
                url);
        return FX_EINVAL;
    }
    memcpy(u->host, h, namel);
    memcpy(u->port, colon ? colon + 1 : "80", portl);
    for (size_t i = 0; i < portl; i++)
        if (!isdigit((unsigned char)u->port[i])) {
            fx_errbuf_set(
                    eb,
                    "option 'push': '%.60s' has a port that is not a number; accepted: http://HOST[:PORT]/PATH",
                    url);
            return FX_EINVAL;
        }
    snprintf(u->path, sizeof u->path, "%s", slash ? slash : "/");
    return FX_OK;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && !strcmp(s + n - t, tail);
}

enum fx_push_format fx_push_format_of(const struct fx_push_url *u, enum fx_push_format given)
{
    if (given != FX_PUSH_AUTO)
        return given;
    char path[sizeof u->path];
    snprintf(path, sizeof path, "%.*s", (int)strcspn(u->path, "?"), u->path);
    if (ends_with(path, "/ingest"))
        return FX_PUSH_PYROSCOPE;
    if (ends_with(path, "/v1development/profiles"))
        return FX_PUSH_OTLP;
    return FX_PUSH_AUTO;
}

int fx_push_option_check(const char *name, const char *value, struct fx_errbuf *eb)
{
    struct fx_push_url u;
    if (!strcmp(name, "push"))
        return fx_push_url_parse(value, &u, eb);
    return !strcmp(name, "labels") ? fx_push_labels_check(value, eb) : FX_OK;
}

/* After the list: a push URL whose path names no protocol needs push_format=. */
int fx_push_options_check(const char *push, int push_format, struct fx_errbuf *eb)
{
    struct fx_push_url u;
    if (!push || fx_push_url_parse(push, &u, eb) != FX_OK ||
        fx_push_format_of(&u, (enum fx_push_format)push_format) != FX_PUSH_AUTO)
        return FX_OK;
    fx_errbuf_set(
            eb,
            "option 'push': the path '%.60s' is neither .../ingest (Pyroscope) nor .../v1development/profiles (OTLP); accepted: .../ingest, .../v1development/profiles, or either path with push_format=pyroscope or push_format=otlp",
            u.path);
    return FX_EINVAL;
}

int fx_push_labels_check(const char *labels, struct fx_errbuf *eb)
{
    const char *p = labels;
    while (*p) {
        size_t kl = 0;
        while (isalnum((unsigned char)p[kl]) || p[kl] == '_' || (kl && p[kl] == '.'))
            kl++;
        if (kl == 0 || isdigit((unsigned char)*p) || p[kl] != '=') {
            fx_errbuf_set(
                    eb,
                    "option 'labels': '%.60s' is not K=V;K=V; accepted: K=V;K=V, keys of letters, digits, _ and .",
                    labels);
            return FX_EINVAL;
        }
        p += kl + 1;
        size_t vl = strcspn(p, ";");
        if (vl == 0 || strcspn(p, ",{}\"") < vl) {
            fx_errbuf_set(
                    eb,
                    "option 'labels': '%.60s': a value is empty or holds , { } or \"; accepted: K=V;K=V, values without , { } or \"",
                    labels);
            return FX_EINVAL;
        }
        p += vl + (p[vl] == ';');
    }
    return FX_OK;
}

/* Appends s URL-encoded (everything but unreserved characters as %XX). */
static bool put_enc(char *out, size_t cap, size_t *len, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        int w = isalnum(c) || strchr("-._~", c) ? snprintf(out + *len, cap - *len, "%c", c)
                                                : snprintf(out + *len, cap - *len, "%%%02X", c);
        if (w < 0 || (size_t)w >= cap - *len)
            return false;
        *len += (size_t)w;
    }
    return true;
}

int fx_push_pyroscope_target(const struct fx_push_url *u, const char *service, const char *labels,
                             int64_t from_s, int64_t until_s, char *out, size_t cap)
{
    int w = snprintf(out, cap, "%s%sname=", u->path, strchr(u->path, '?') ? "&" : "?");
    if (w < 0 || (size_t)w >= cap)
        return FX_ERANGE;
    size_t len = (size_t)w;
    bool ok = put_enc(out, cap, &len, service, strlen(service));
    if (ok && labels && *labels) {
        /* K=V;K=V -> {K=V,K=V} */
        ok = put_enc(out, cap, &len, "{", 1);
        for (const char *p = labels; ok && *p;) {
            size_t n = strcspn(p, ";");
            ok = put_enc(out, cap, &len, p, n) && (!p[n] || put_enc(out, cap, &len, ",", 1));
            p += n + (p[n] == ';');
        }
        ok = ok && put_enc(out, cap, &len, "}", 1);
    }
    if (!ok)
        return FX_ERANGE;
    w = snprintf(out + len, cap - len,
                 "&from=%" PRId64 "&until=%" PRId64 "&format=pprof&spyName=fxagent", from_s,
                 until_s);
    return w >= 0 && (size_t)w < cap - len ? FX_OK : FX_ERANGE;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for `events` on fd until the deadline; false on time-out or error. */
static bool wait_fd(int fd, short events, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return false;
        struct pollfd p = {.fd = fd, .events = events};
        int r = poll(&p, 1, (int)left);
        if (r > 0)
            return true;
        if (r < 0 && errno != EINTR)
            return false;
    }
}

static bool send_all(int fd, const void *d, size_t n, int64_t deadline)
{
    const char *p = d;
    while (n) {
        if (!wait_fd(fd, POLLOUT, deadline))
            return false;
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (w <= 0)
            return false;
        p += w, n -= (size_t)w;
    }
    return true;
}

static int connect_to(const struct fx_push_url *u, int64_t deadline, struct fx_errbuf *eb)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai;
    int rc = getaddrinfo(u->host, u->port, &hints, &ai);
    if (rc != 0) {
        fx_errbuf_set(eb, "push: %s: %s", u->host, gai_strerror(rc));
        return -1;
    }
    int fd = -1, err = 0;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
            err = errno;
            close(fd), fd = -1;
            continue;
        }
        socklen_t sl = sizeof err;
        if (!wait_fd(fd, POLLOUT, deadline) ||
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl) != 0 || err != 0) {
            err = err ? err : ETIMEDOUT;
            close(fd), fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0)
        fx_errbuf_set(eb, "push: %s:%s: %s", u->host, u->port, strerror(err ? err : ECONNREFUSED));
    return fd;
}

int fx_push_post(const struct fx_push_url *u, const char *target, const char *content_type,
                 const char *content_encoding, const void *body, size_t len, int timeout_ms,
                 int *status, struct fx_errbuf *eb)
{
    int64_t deadline = now_ms() + timeout_ms;
    int fd = connect_to(u, deadline, eb);
    if (fd < 0)
        return FX_EIO;
    char head[2048];
    int hl = snprintf(
            head, sizeof head,
            "POST %s HTTP/1.1\r\nHost: %s:%s\r\nUser-Agent: fxagent\r\n"
            "Content-Type: %s\r\n%s%s%sContent-Length: %zu\r\nConnection: close\r\n\r\n",
            target, u->host, u->port, content_type, content_encoding ? "Content-Encoding: " : "",
            content_encoding ? content_encoding : "", content_encoding ? "\r\n" : "", len);
    char resp[512];
    size_t got = 0;
    bool ok = hl > 0 && (size_t)hl < sizeof head && send_all(fd, head, (size_t)hl, deadline) &&
              send_all(fd, body, len, deadline);
    /* the status line is all we need: read until it is complete */
    while (ok && got < sizeof resp - 1 && !memchr(resp, '\n', got)) {
        if (!wait_fd(fd, POLLIN, deadline)) {
            ok = false;
            break;
        }
        ssize_t r = recv(fd, resp + got, sizeof resp - 1 - got, 0);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    resp[got] = '\0';
    int code;
    if (!ok || sscanf(resp, "HTTP/1.%*d %d", &code) != 1) {
        fx_errbuf_set(eb, "push: %s:%s%s: %s", u->host, u->port, target,
                      ok ? "the answer is not HTTP" : "no answer within the time-out");
        return FX_EIO;
    }
    *status = code;
    return FX_OK;
}

enum fx_push_verdict fx_push_verdict_of(int status)
{
    if (status >= 200 && status < 300)
        return FX_PUSH_DELIVERED;
    return status >= 500 || status == 429 ? FX_PUSH_RETRY : FX_PUSH_REFUSED;
}

int64_t fx_push_backoff_ms(unsigned failures)
{
    int64_t ms = 1000;
    for (unsigned i = 1; i < failures && ms < 30000; i++)
        ms *= 2;
    return ms < 30000 ? ms : 30000;
}

static void pop(struct fx_push_queue *q)
{
    fx_free(q->path[q->head]);
    q->path[q->head] = NULL;
    q->head = (q->head + 1) % FX_PUSH_QUEUE;
    q->count--;
}

int fx_push_queue_add(struct fx_push_queue *q, const char *path)
{
    char *copy = fx_strdup(path);
    if (!copy) {
        q->dropped++;
        return FX_ENOMEM;
    }
    if (q->count == FX_PUSH_QUEUE) {
        pop(q);
        q->dropped++;
    }
    unsigned tail = (q->head + q->count) % FX_PUSH_QUEUE;
    q->path[tail] = copy;
    q->seq[tail] = ++q->next_seq;
    q->count++;
    return FX_OK;
}

const char *fx_push_queue_peek(const struct fx_push_queue *q, uint64_t *seq)
{
    if (q->count == 0)
        return NULL;
    *seq = q->seq[q->head];
    return q->path[q->head];
}

void fx_push_queue_done(struct fx_push_queue *q, uint64_t seq)
{
    if (q->count > 0 && q->seq[q->head] == seq)
        pop(q);
}

void fx_push_queue_destroy(struct fx_push_queue *q)
{
    while (q->count > 0)
        pop(q);
}
