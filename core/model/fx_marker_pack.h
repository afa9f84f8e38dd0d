/* SPDX-License-Identifier: Apache-2.0 */
/* Packed markers' layout and calls (core/model/marker_pack.c), part of the model's layout
 * (fx_profile_internal.h includes it): a kind is what a marker shares with the others of its
 * type; a thread's markers are varints in buf, the last one pending until the next. */
#ifndef FX_MARKER_PACK_H
#define FX_MARKER_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fx_profile.h"

struct fx_profile;
struct fx_thread;

struct fx_mkind {
    uint32_t name, schema;
    uint8_t phase, category;
};
struct fx_mpending {
    uint32_t kind, stack;
    int64_t start_ns, end_ns;
    union fx_marker_value values[FX_MARKER_MAX_FIELDS];
};
struct fx_mpack {
    uint8_t *buf;
    size_t len, cap;
    uint32_t count; /* the pending one included */
    bool pending;
    int64_t prev_ns;
    uint64_t used; /* kinds used (bit i: kind i; every bit once one is >= 64) */
    struct fx_mpending last;
};

/* Appends a marker (checked by fx_profile_marker) to the thread's pack; the stack of its last. */
int fx_mpack_add(struct fx_profile *p, uint32_t thread, const struct fx_mkind *kind,
                 int64_t start_ns, int64_t end_ns, const union fx_marker_value *values);
int fx_mpack_stack(struct fx_profile *p, uint32_t thread, uint32_t stack);
/* Whether a marker of t has that schema (packed markers: by the kinds t used). */
bool fx_mpack_uses_schema(const struct fx_profile *p, const struct fx_thread *t, uint32_t schema);
/* For the writer, which reads a thread's packed markers where they are: the marker at byte
 * offset off of k into x (off >= k->len: the pending one, the last), and the offset of the next.
 * *a is its time (the start, an END's end): the previous marker's on entry, this one's on return
 * (reading in order from offset 0 and *a = 0); given: *a is this marker's (as read before). */
size_t fx_mpack_read(const struct fx_profile *p, const struct fx_mpack *k, size_t off, int64_t *a,
                     bool given, struct fx_mpending *x);
/* The kind of the marker at off alone (the columns that need no more). */
uint32_t fx_mpack_kind(const struct fx_mpack *k, size_t off);
void fx_mpack_free(struct fx_mpack *k);
static inline size_t fx_mpack_memory(const struct fx_mpack *k) /* inline: profile_count.c */
{
    return k ? sizeof(*k) + k->cap : 0;
}

#endif
