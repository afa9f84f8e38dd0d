/* SPDX-License-Identifier: Apache-2.0 */
/* Pushing profiles to a backend (issue 33, docs/FLEET.md), JVM-free: the push= URL and what its
 * path says (Pyroscope's /ingest or OTLP/HTTP's /v1development/profiles), labels=, the
 * Pyroscope ingest target, one HTTP/1.1 POST over a plain socket with an overall time-out, and
 * the bounded queue of periods not yet delivered with its back-off. http only: https would take
 * a TLS library into every JVM (docs/FLEET.md says why not libcurl). */
#ifndef FX_PUSH_H
#define FX_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fx_err.h"

enum fx_push_format {
    FX_PUSH_AUTO,      /* from the URL's path */
    FX_PUSH_PYROSCOPE, /* POST PATH?name=SERVICE{k=v}&from=&until=&format=pprof, multipart */
    FX_PUSH_OTLP,      /* POST PATH, application/x-protobuf, ExportProfilesServiceRequest */
};

struct fx_push_url {
    char host[256];
    char port[8];
    char path[1024]; /* "/..." */
};

/* With push=, the push's share of memory= is memory= / FX_PUSH_MEMORY_DIV: the model's bound
 * leaves it, and a period that would take more to convert is not pushed, counted. */
#define FX_PUSH_MEMORY_DIV 4

/* Parses "http://HOST[:PORT]/PATH" (https refused, saying why). */
int fx_push_url_parse(const char *url, struct fx_push_url *u, struct fx_errbuf *eb);
/* The protocol: `given` unless FX_PUSH_AUTO, else the path's: ".../ingest" Pyroscope,
 * ".../v1development/profiles" OTLP; FX_PUSH_AUTO when the path says neither. */
enum fx_push_format fx_push_format_of(const struct fx_push_url *u, enum fx_push_format given);
/* The agent's options (fx_options.h): push= a URL fx_push_url_parse takes, labels= as
 * fx_push_labels_check wants, service= anything; push_format= needed when the path says no
 * protocol (fx_options_parse's check after the list). */
int fx_push_option_check(const char *name, const char *value, struct fx_errbuf *eb);
int fx_push_options_check(const char *push, int push_format, struct fx_errbuf *eb);
/* labels=K=V;K=V: each key [A-Za-z_][A-Za-z0-9_.]*, values without ',', '{', '}', '"'. */
int fx_push_labels_check(const char *labels, struct fx_errbuf *eb);
/* Pyroscope's request target: the URL's path with name=SERVICE{k=v,...} (URL-encoded), from and
 * until (UNIX s), format=pprof and spyName=fxagent. FX_ERANGE if it does not fit. */
int fx_push_pyroscope_target(const struct fx_push_url *u, const char *service, const char *labels,
                             int64_t from_s, int64_t until_s, char *out, size_t cap);
/* POSTs body to u's host at `target` (path and query) with content_type and, unless NULL,
 * content_encoding (e.g. "gzip"), all within
 * timeout_ms. FX_OK when an answer came: *status is its HTTP status. FX_EIO (refused, reset,
 * time-out, not HTTP) with one line in eb. */
int fx_push_post(const struct fx_push_url *u, const char *target, const char *content_type,
                 const char *content_encoding, const void *body, size_t len, int timeout_ms,
                 int *status, struct fx_errbuf *eb);
/* Pyroscope's pprof as multipart/form-data, field "profile": the head and tail around the
 * bytes, and the content type with its boundary. */
extern const char fx_push_multipart_type[];
extern const char fx_push_multipart_head[];
extern const char fx_push_multipart_tail[];

/* The periods not yet delivered, as paths of their files: at most FX_PUSH_QUEUE, the oldest
 * dropped (and counted) to make room. Not thread-safe: the caller locks. */
#define FX_PUSH_QUEUE 16
struct fx_push_queue {
    char *path[FX_PUSH_QUEUE];
    uint64_t seq[FX_PUSH_QUEUE], next_seq;
    unsigned head, count;
    uint64_t dropped; /* dropped to make room, or not queued for want of memory */
};
/* Appends a copy of path, dropping the oldest when full; FX_ENOMEM: not queued (counted). */
int fx_push_queue_add(struct fx_push_queue *q, const char *path);
/* The oldest path (borrowed until it is removed) and its number; NULL when empty. */
const char *fx_push_queue_peek(const struct fx_push_queue *q, uint64_t *seq);
/* Removes the oldest if it is still number `seq` (not dropped while it was being sent). */
void fx_push_queue_done(struct fx_push_queue *q, uint64_t seq);
void fx_push_queue_destroy(struct fx_push_queue *q);

/* What an answer means: 2xx delivered; 5xx and 429 (too many requests) worth a retry; any
 * other (4xx, 1xx, 3xx: this profile or this URL refused) never delivered. */
enum fx_push_verdict {
    FX_PUSH_DELIVERED,
    FX_PUSH_RETRY,
    FX_PUSH_REFUSED
};
enum fx_push_verdict fx_push_verdict_of(int status);

/* The back-off after `failures` failed attempts in a row: 1 s doubling, at most 30 s. */
int64_t fx_push_backoff_ms(unsigned failures);

#endif
