/* SPDX-License-Identifier: Apache-2.0 */
/* A single-producer/single-consumer byte ring of variable-length records: the producer is one
 * thread's signal handler, the consumer the drain thread.
 *
 * Invariant: head and tail are monotonic byte positions; head - tail <= cap. Only the producer
 * writes head, pending and drops; only the consumer writes tail. The producer publishes a record
 * with a release store of head after writing it; the consumer frees space with a release store
 * of tail after reading. A record that does not fit before the end of the buffer is preceded by
 * a padding record that fills the end, so every record is contiguous. A full ring never blocks:
 * the record is dropped and counted (the consumer reports drops; it never loses them silently).
 *
 * Protocol. Producer (async-signal-safe, no allocation, no locks):
 *   p = fx_ring_reserve_sigsafe(r, n); if (p) { write n bytes at p; fx_ring_commit_sigsafe(r); }
 * Consumer: while ((p = fx_ring_peek(r, &n))) { read n bytes; fx_ring_release(r); } */
#ifndef FX_RING_H
#define FX_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fx_ring_hdr {
    uint32_t len;  /* whole record in bytes, header included, a multiple of 8 */
    uint32_t kind; /* FX_RING_DATA or FX_RING_PAD */
};

enum {
    FX_RING_DATA = 1,
    FX_RING_PAD = 2
};

struct fx_ring {
    uint8_t *buf;
    uint64_t cap;     /* power of two, >= 64 */
    uint64_t head;    /* producer: published end */
    uint64_t pending; /* producer: end of the reserved, unpublished record */
    uint64_t tail;    /* consumer */
    uint64_t drops;   /* producer: records that did not fit */
    uint64_t pushed;  /* producer: records published */
};

/* Allocates cap bytes (rounded up to a power of two, >= 64). Not signal-safe. */
int fx_ring_init(struct fx_ring *r, size_t cap);
void fx_ring_destroy(struct fx_ring *r);

static inline uint32_t fx_ring_record_size_sigsafe(uint32_t payload)
{
    return (uint32_t)((sizeof(struct fx_ring_hdr) + payload + 7u) & ~7u);
}

/* Reserves room for a payload of `payload` bytes and returns where to write it, or NULL if the
 * ring is full (the drop is counted). */
static inline void *fx_ring_reserve_sigsafe(struct fx_ring *r, uint32_t payload)
{
    uint64_t len = fx_ring_record_size_sigsafe(payload);
    uint64_t head = r->head;
    uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
    uint64_t off = head & (r->cap - 1);
    uint64_t contig = r->cap - off;
    uint64_t need = contig < len ? contig + len : len;
    if (len > r->cap / 2 || need > r->cap - (head - tail)) {
        __atomic_store_n(&r->drops, r->drops + 1, __ATOMIC_RELAXED);
        return NULL;
    }
    if (contig < len) {
        struct fx_ring_hdr *pad = (struct fx_ring_hdr *)(r->buf + off);
        pad->len = (uint32_t)contig;
        pad->kind = FX_RING_PAD;
        head += contig;
        off = 0;
    }
    struct fx_ring_hdr *h = (struct fx_ring_hdr *)(r->buf + off);
    h->len = (uint32_t)len;
    h->kind = FX_RING_DATA;
    r->pending = head + len;
    return h + 1;
}

/* Publishes the record reserved last. */
static inline void fx_ring_commit_sigsafe(struct fx_ring *r)
{
    __atomic_store_n(&r->pushed, r->pushed + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&r->head, r->pending, __ATOMIC_RELEASE);
}

/* Consumer: the oldest record's payload and its length (which may exceed what was reserved by
 * up to 7 bytes of alignment), or NULL if the ring is empty. */
static inline const void *fx_ring_peek(struct fx_ring *r, uint32_t *payload_len)
{
    for (;;) {
        uint64_t tail = r->tail;
        uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
        if (tail == head)
            return NULL;
        const struct fx_ring_hdr *h = (const struct fx_ring_hdr *)(r->buf + (tail & (r->cap - 1)));
        if (h->kind == FX_RING_PAD) {
            __atomic_store_n(&r->tail, tail + h->len, __ATOMIC_RELEASE);
            continue;
        }
        *payload_len = h->len - (uint32_t)sizeof(*h);
        return h + 1;
    }
}

/* Consumer: frees the record returned by the last fx_ring_peek. */
static inline void fx_ring_release(struct fx_ring *r)
{
    uint64_t tail = r->tail;
    const struct fx_ring_hdr *h = (const struct fx_ring_hdr *)(r->buf + (tail & (r->cap - 1)));
    __atomic_store_n(&r->tail, tail + h->len, __ATOMIC_RELEASE);
}

/* Either side: drops so far (relaxed read). */
static inline uint64_t fx_ring_drops(const struct fx_ring *r)
{
    return __atomic_load_n(&r->drops, __ATOMIC_RELAXED);
}

/* Consumer: bytes held (records and padding not yet released). */
static inline uint64_t fx_ring_used(const struct fx_ring *r)
{
    return __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) - r->tail;
}

static inline bool fx_ring_empty(const struct fx_ring *r)
{
    return __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) == r->tail;
}

#endif
