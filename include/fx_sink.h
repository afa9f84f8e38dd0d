/* SPDX-License-Identifier: Apache-2.0 */
/* A byte sink: where a streamed profile goes (a file, a gzip stream over a file, memory).
 * write returns FX_OK or a negative fx_err; a sink never keeps the caller's buffer. */
#ifndef FX_SINK_H
#define FX_SINK_H

#include <stddef.h>

struct fx_sink {
    int (*write)(void *ctx, const void *buf, size_t len);
    void *ctx;
    /* Optional (NULL: none), for a writer that fills the sink's own memory instead of copying
     * into it (the threaded gzip's blocks): the caller wrote len bytes at the *buf given last
     * (len 0 at the start), and takes *buf, *cap (> 0) for the next; FX_OK or a negative fx_err. */
    int (*swap)(void *ctx, size_t len, char **buf, size_t *cap);
};

/* A growable memory sink, for tests and small documents. */
struct fx_membuf {
    char *data;
    size_t len, cap;
};

struct fx_sink fx_membuf_sink(struct fx_membuf *mb);
void fx_membuf_destroy(struct fx_membuf *mb);

#endif
