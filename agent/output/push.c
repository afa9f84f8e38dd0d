/* SPDX-License-Identifier: Apache-2.0 */
/* push=URL (issue 33, docs/FLEET.md), a source: every file the recording writes (a loop=
 * period, a stop's, the one at exit) is queued by its path after it is written; the push
 * thread (a plain pthread of the agent's: it never enters Java) converts it with fxprof
 * convert's own code (include/fx_convert.h) to pprof for Pyroscope's /ingest or to OTLP, and
 * POSTs it with a time-out. A refused or failed push (no connection, a 5xx, no answer) is
 * retried with back-off (fx_push_backoff_ms); a 4xx is the backend refusing this profile for
 * good, counted, not retried. At most FX_PUSH_QUEUE periods wait: past that the oldest is dropped
 * and counted. The counts are in the next profile's meta.extra ("Push"), and failures and drops in
 * one stderr line a minute at most. dump.c queues each file it has written
 * (fx_output_push_written) itself, not through the drain's after-dump, which is gone at VM
 * death; VMDeath, after the last file, waits up to FLUSH_MS for the queue to empty
 * (fx_output_push_flush, control/lifecycle.c), then the thread ends: a file that comes later
 * is said on stderr, never lost silently. The application's threads never wait on the network
 * otherwise. Memory: the thread's own blocks are tallied while it converts and sends
 * (fx_alloc_tally), within a share of memory= (FX_PUSH_MEMORY_DIV) that the model leaves; a
 * period that would take more is not pushed, counted. An OTLP body is gzipped (every OTLP/HTTP
 * server must accept it). Owns: the queue (fx_push_queue), the thread, the counts. */
#include "output.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fx_alloc.h"
#include "fx_convert.h"
#include "fx_gzip.h"
#include "fx_push.h"
#include "fx_sink.h"

#define TIMEOUT_MS 5000  /* one POST, connect to status line */
#define FLUSH_MS   10000 /* what VM death waits for the queue */
#define WARN_MS    60000 /* one stderr line per minute at most */
/* The first guess of what converting holds per byte of JSON beyond the read buffer, before one
 * was measured (cJSON's tree and the body: 6-13 measured here, docs/FLEET.md "Memory"). */
#define FIRST_PER_BYTE 16.0

/* Where and as what one file goes: the recording's push=, push_format=, service=, labels= when
 * it was written (a restart may give new ones: commands.c). */
struct target {
    struct fx_push_url url;
    enum fx_push_format format;
    char *service, *labels; /* NULL: none */
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond; /* CLOCK_MONOTONIC */
    bool started, stopping, busy;
    struct fx_push_queue q;
    struct target waiting[FX_PUSH_QUEUE]; /* each queued file's, by its number % FX_PUSH_QUEUE */
    uint64_t delivered, refused, failed_attempts;
    /* the last delivered push: its cost on the push thread (docs/FLEET.md "Cost") */
    double last_convert_ms, last_send_ms;
    size_t last_bytes, last_plain, last_peak;
    /* memory (docs/FLEET.md "Memory"): the push thread's own allocations while it converts
     * and sends; the highest so far; held beyond the read buffer per byte of JSON by the last
     * conversion (the next guess) */
    struct fx_alloc_tally tally;
    size_t peak;
    double per_byte;
    uint64_t too_large; /* periods not pushed: converting them would pass the push's share */
    int64_t last_warn_ns;
    uint64_t warned_dropped, warned_failed, warned_refused, warned_too_large;
    char last_error[256];
} push = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void target_free(struct target *t)
{
    fx_free(t->service), fx_free(t->labels);
    memset(t, 0, sizeof *t);
}

static int target_copy(struct target *dst, const struct target *src)
{
    *dst = *src;
    dst->service = src->service ? fx_strdup(src->service) : NULL;
    dst->labels = src->labels ? fx_strdup(src->labels) : NULL;
    if ((src->service && !dst->service) || (src->labels && !dst->labels)) {
        target_free(dst);
        return FX_ENOMEM;
    }
    return FX_OK;
}

/* The recording's settings now (fx_opt(): a writer queues while the options hold still). */
static int target_of_options(struct target *t, struct fx_errbuf *eb)
{
    const struct fx_options *o = fx_opt();
    struct target now = {.service = o->service, .labels = o->labels};
    int rc = fx_push_url_parse(o->push, &now.url, eb);
    now.format = fx_push_format_of(&now.url, (enum fx_push_format)o->push_format);
    if (rc == FX_OK && (rc = target_copy(t, &now)) != FX_OK)
        fx_errbuf_set(eb, "push: out of memory");
    return rc;
}

/* Under the lock: at most one line a minute, naming what happened since the last. */
static void warn_locked(void)
{
    int64_t now = fx_now_ns();
    if (push.last_warn_ns && now - push.last_warn_ns < (int64_t)WARN_MS * 1000000)
        return;
    if (push.q.dropped == push.warned_dropped && push.failed_attempts == push.warned_failed &&
        push.refused == push.warned_refused && push.too_large == push.warned_too_large)
        return;
    push.last_warn_ns = now;
    fx_log("push: %llu failed attempts, %llu periods dropped so far (at most %d wait; oldest "
           "first), %llu refused, %llu too large for memory=; last: %s",
           (unsigned long long)push.failed_attempts, (unsigned long long)push.q.dropped,
           FX_PUSH_QUEUE, (unsigned long long)push.refused, (unsigned long long)push.too_large,
           push.last_error);
    push.warned_dropped = push.q.dropped;
    push.warned_failed = push.failed_attempts;
    push.warned_refused = push.refused;
    push.warned_too_large = push.too_large;
}

/* The bytes the file's JSON text has: gzip's ISIZE trailer (the length mod 4 GiB: a period's
 * file is far below that), or the file's size when it is not gzipped. 0 when unreadable. */
static size_t text_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return 0;
    unsigned char magic[2] = {0}, isize[4] = {0};
    size_t n = 0;
    if (fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
        if (fseek(f, -4, SEEK_END) == 0 && fread(isize, 1, 4, f) == 4)
            n = (size_t)isize[0] | (size_t)isize[1] << 8 | (size_t)isize[2] << 16 |
                (size_t)isize[3] << 24;
    } else if (fseek(f, 0, SEEK_END) == 0) {
        long end = ftell(f);
        n = end > 0 ? (size_t)end : 0;
    }
    fclose(f);
    return n;
}

/* The push's share of memory= (the model's bound leaves it: model/window.c). */
static size_t share(void)
{
    return (size_t)fx_opt()->memory_bytes / FX_PUSH_MEMORY_DIV;
}

/* The buffer the converter reads `text` bytes of JSON into (core/convert/pfile.c: 1 MiB,
 * doubled while less than 64 KiB is free), a fixed cost whatever the file's size. */
static size_t read_buffer(size_t text)
{
    size_t cap = (size_t)1 << 20;
    while (cap - text < 65536 && cap < ((size_t)1 << 40))
        cap *= 2;
    return cap;
}

/* What converting `text` bytes of JSON will hold: the read buffer and, per byte of JSON, the
 * last conversion's measured bytes beyond its buffer (cJSON's tree, the body, its gzip). */
static size_t need_for(size_t text)
{
    double per_byte = push.per_byte > 0 ? push.per_byte : FIRST_PER_BYTE;
    return read_buffer(text) + (size_t)((double)text * per_byte);
}

/* A FILE over an fx_membuf, so the body's bytes are the agent's, counted (open_memstream's
 * are malloc's). */
static ssize_t membuf_write(void *cookie, const char *buf, size_t len)
{
    struct fx_membuf *mb = cookie;
    return fx_membuf_sink(mb).write(mb, buf, len) == FX_OK ? (ssize_t)len : -1;
}

/* gzip of the OTLP body (docs/FLEET.md: OTLP/HTTP servers must accept it). */
static int gzip_body(const struct fx_membuf *in, struct fx_membuf *out)
{
    struct fx_gzip *gz = fx_gzip_new(fx_membuf_sink(out), 6);
    if (gz == NULL)
        return FX_ENOMEM;
    struct fx_sink s = fx_gzip_sink(gz);
    int rc = s.write(s.ctx, in->data, in->len);
    if (rc == FX_OK)
        rc = fx_gzip_finish(gz);
    fx_gzip_free(gz);
    return rc;
}

/* Converts (into `body`, counted by the tally) and posts one file: 1 delivered, 0 retry later,
 * -1 never (not convertible, 4xx). */
static int convert_and_post(const char *path, const struct target *to, struct fx_membuf *body,
                            size_t *plain, struct fx_errbuf *eb, int64_t *t1)
{
    struct fx_convert_period per;
    bool otlp = to->format == FX_PUSH_OTLP;
    FILE *f = fopencookie(body, "w", (cookie_io_functions_t){.write = membuf_write});
    if (f && !otlp)
        fputs(fx_push_multipart_head, f);
    int rc = f ? fx_convert_for_push(path, otlp, to->service, to->labels, f, &per, eb) : FX_ENOMEM;
    if (f && !otlp)
        fputs(fx_push_multipart_tail, f);
    if (f && fclose(f) != 0 && rc == FX_OK)
        rc = FX_ENOMEM;
    struct fx_membuf gz = {0};
    *plain = body->len;
    if (rc == FX_OK && otlp && (rc = gzip_body(body, &gz)) == FX_OK) {
        fx_membuf_destroy(body);
        *body = gz;
    } else {
        fx_membuf_destroy(&gz);
    }
    char target[2048];
    if (rc == FX_OK && !otlp &&
        fx_push_pyroscope_target(&to->url, per.service, to->labels, per.from_s, per.until_s, target,
                                 sizeof target) != FX_OK)
        rc = FX_ERANGE;
    *t1 = fx_now_ns();
    if (rc != FX_OK) {
        if (!eb->msg[0])
            fx_errbuf_set(eb, "push: %s could not be converted: %s", path, fx_strerror(rc));
        return -1;
    }
    int status = 0;
    rc = fx_push_post(&to->url, otlp ? to->url.path : target,
                      otlp ? "application/x-protobuf" : fx_push_multipart_type,
                      otlp ? "gzip" : NULL, body->data, body->len, TIMEOUT_MS, &status, eb);
    enum fx_push_verdict v = rc != FX_OK ? FX_PUSH_RETRY : fx_push_verdict_of(status);
    if (rc == FX_OK && v != FX_PUSH_DELIVERED)
        fx_errbuf_set(eb, "push: %s answered HTTP %d", to->url.host, status);
    return v == FX_PUSH_DELIVERED ? 1 : v == FX_PUSH_RETRY ? 0 : -1;
}

/* One file: refused (-1, counted apart) when converting it would take more than the push's
 * share of memory=; else converted and posted under the tally. */
static int deliver(const char *path, const struct target *to)
{
    struct fx_errbuf eb = {{0}};
    size_t text = text_size(path), need = need_for(text);
    if (need > share()) {
        pthread_mutex_lock(&push.lock);
        push.too_large++;
        snprintf(push.last_error, sizeof push.last_error,
                 "push: %s would take about %zu KiB to convert (%zu KiB of JSON), more than "
                 "the push's %zu KiB of memory=: not pushed (raise memory= or shorten loop=)",
                 path, need / 1024, text / 1024, share() / 1024);
        pthread_mutex_unlock(&push.lock);
        return -2;
    }
    struct fx_membuf body = {0};
    int64_t t0 = fx_now_ns(), t1 = t0;
    fx_alloc_tally_begin(&push.tally);
    size_t plain = 0;
    int res = convert_and_post(path, to, &body, &plain, &eb, &t1);
    size_t sent = body.len;
    fx_membuf_destroy(&body);
    fx_alloc_tally_end();
    pthread_mutex_lock(&push.lock);
    size_t peak = __atomic_load_n(&push.tally.peak, __ATOMIC_RELAXED);
    if (text > 0 && res >= 0 && peak > read_buffer(text)) /* it ran to its end: the next guess */
        push.per_byte = (double)(peak - read_buffer(text)) / (double)text;
    push.peak = peak > push.peak ? peak : push.peak;
    if (res != 1) {
        snprintf(push.last_error, sizeof push.last_error, "%s", eb.msg);
    } else {
        push.last_convert_ms = (double)(t1 - t0) / 1e6;
        push.last_send_ms = (double)(fx_now_ns() - t1) / 1e6;
        push.last_bytes = sent;
        push.last_plain = plain;
        push.last_peak = peak;
    }
    pthread_mutex_unlock(&push.lock);
    return res;
}

static void *push_thread(void *arg)
{
    (void)arg;
    unsigned failures = 0;
    pthread_mutex_lock(&push.lock);
    while (!push.stopping) {
        uint64_t seq;
        const char *next = fx_push_queue_peek(&push.q, &seq);
        if (next == NULL) {
            pthread_cond_wait(&push.cond, &push.lock);
            continue;
        }
        char *path = fx_strdup(next);
        struct target to;
        bool copied = target_copy(&to, &push.waiting[seq % FX_PUSH_QUEUE]) == FX_OK;
        push.busy = true;
        pthread_mutex_unlock(&push.lock);
        int res = path && copied ? deliver(path, &to) : 0; /* out of memory: retried */
        fx_free(path);
        if (copied)
            target_free(&to);
        pthread_mutex_lock(&push.lock);
        push.busy = false;
        if (res == 1) {
            push.delivered++;
            failures = 0;
        } else if (res == -2) {
            warn_locked();
        } else if (res < 0) {
            push.refused++;
            warn_locked();
        } else {
            push.failed_attempts++;
            failures++;
            warn_locked();
            struct timespec until;
            clock_gettime(CLOCK_MONOTONIC, &until);
            int64_t ns = until.tv_nsec + fx_push_backoff_ms(failures) * 1000000;
            until.tv_sec += ns / 1000000000, until.tv_nsec = ns % 1000000000;
            pthread_cond_broadcast(&push.cond); /* a flush waiting sees the attempt */
            while (!push.stopping && pthread_cond_timedwait(&push.cond, &push.lock, &until) == 0 &&
                   !push.stopping)
                ;
            continue;
        }
        fx_push_queue_done(&push.q, seq); /* unless it was dropped meanwhile */
        pthread_cond_broadcast(&push.cond);
    }
    pthread_mutex_unlock(&push.lock);
    return NULL;
}

/* Under the lock: the thread, once, when the first file is queued. */
static bool start_locked(void)
{
    if (push.started)
        return true;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&push.cond, &ca);
    pthread_condattr_destroy(&ca);
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    push.started = pthread_create(&t, &a, push_thread, NULL) == 0;
    pthread_attr_destroy(&a);
    if (!push.started)
        fx_log("push: could not start the push thread: profiles are not pushed");
    return push.started;
}

/* VM death: waits up to FLUSH_MS for the queue to empty, then ends the thread. */
static void flush_locked(void)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += FLUSH_MS / 1000;
    while ((push.q.count > 0 || push.busy) &&
           pthread_cond_timedwait(&push.cond, &push.lock, &until) == 0)
        ;
    if (push.q.count > 0)
        fx_log("push: %u periods not delivered at exit (%s)", push.q.count, push.last_error);
    push.stopping = true;
    pthread_cond_broadcast(&push.cond);
}

void fx_output_push_written(const char *path)
{
    if (fx_opt()->push == NULL || path == NULL || *path == '\0')
        return;
    struct target t = {0};
    struct fx_errbuf eb = {{0}};
    int rc = target_of_options(&t, &eb);
    pthread_mutex_lock(&push.lock);
    if (push.stopping) {
        /* after the exit's flush: nothing will send it; say so (issue 33: never silent) */
        fx_log("push: %s not delivered: written after the exit's wait for the pushes", path);
    } else if (rc != FX_OK) {
        fx_log("%s: %s is not pushed", eb.msg, path);
    } else if (start_locked()) {
        uint64_t dropped = push.q.dropped;
        /* full: the oldest goes, counted; numbers are consecutive, so the at most
         * FX_PUSH_QUEUE waiting have distinct slots */
        if (fx_push_queue_add(&push.q, path) == FX_OK) {
            struct target *slot = &push.waiting[push.q.next_seq % FX_PUSH_QUEUE];
            target_free(slot);
            *slot = t;
            memset(&t, 0, sizeof t);
        }
        if (push.q.dropped != dropped) {
            snprintf(push.last_error, sizeof push.last_error, "%s",
                     "queue full: the oldest period dropped");
            warn_locked();
        }
        pthread_cond_broadcast(&push.cond);
    }
    pthread_mutex_unlock(&push.lock);
    target_free(&t);
}

void fx_output_push_flush(void)
{
    if (fx_opt()->push == NULL)
        return;
    pthread_mutex_lock(&push.lock);
    if (push.started && !push.stopping)
        flush_locked();
    push.stopping = true;
    pthread_mutex_unlock(&push.lock);
}

void fx_output_push_memory(size_t *now, size_t *peak)
{
    *now = __atomic_load_n(&push.tally.now, __ATOMIC_RELAXED);
    pthread_mutex_lock(&push.lock);
    *peak = push.peak;
    pthread_mutex_unlock(&push.lock);
}

/* The counts so far, in the profile about to be written: a drop is said in the next one. */
static void push_before_dump(JNIEnv *jni, struct fx_profile *p, const struct fx_span *span)
{
    (void)jni, (void)span;
    if (fx_opt()->push == NULL)
        return;
    pthread_mutex_lock(&push.lock);
    const char *g = "Push";
    fx_profile_extra_str(p, g, "to", fx_opt()->push);
    fx_profile_extra_int(p, g, "periods delivered", (int64_t)push.delivered);
    fx_profile_extra_int(p, g, "periods waiting", push.q.count);
    fx_profile_extra_int(p, g, "periods dropped (queue full, oldest first)",
                         (int64_t)push.q.dropped);
    fx_profile_extra_int(p, g, "periods refused (HTTP 4xx) or not convertible",
                         (int64_t)push.refused);
    fx_profile_extra_int(p, g, "failed attempts (retried)", (int64_t)push.failed_attempts);
    fx_profile_extra_int(p, g, "periods too large for memory= (not pushed)",
                         (int64_t)push.too_large);
    char mem[160];
    snprintf(mem, sizeof mem, "%zu KiB at most of a share of %zu KiB", push.peak / 1024,
             share() / 1024);
    fx_profile_extra_str(p, g, "memory while converting", mem);
    if (push.delivered > 0) {
        char cost[192];
        snprintf(cost, sizeof cost,
                 "%zu bytes (%zu before gzip); %.1f ms to convert, %.1f ms to send; %zu KiB held",
                 push.last_bytes, push.last_plain, push.last_convert_ms, push.last_send_ms,
                 push.last_peak / 1024);
        fx_profile_extra_str(p, g, "last push delivered", cost);
    }
    pthread_mutex_unlock(&push.lock);
}

const struct fx_source fx_output_push_source = {
        .name = "push",
        .before_dump = push_before_dump,
};
