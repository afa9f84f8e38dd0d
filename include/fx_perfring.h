/* SPDX-License-Identifier: Apache-2.0 */
/* Reading a perf_events mmap ring from a signal handler (issue 16, kernel frames): the kernel
 * part of the callchain of the one sample record that belongs to the signal being handled.
 * Header-inline and JVM-free so the signal path calls it without a symbol and the unit test
 * (tests/unit/test_perfring.c) feeds it synthetic rings.
 *
 * The ring: one metadata page (data_head written by the kernel, data_tail by us) and a data
 * area of `size` bytes (a power of two) holding records back to back, each one
 * struct perf_event_header long `size` bytes, possibly wrapping at the end of the area. The
 * events this is made for have sample_type PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN, so a
 * PERF_RECORD_SAMPLE is {header, u64 time, u64 nr, u64 ips[nr]}.
 *
 * Which record is the signal's: the kernel writes a sample record in the overflow interrupt,
 * before the thread runs again, and raises the signal; a standard signal merges with one
 * already pending, and the thread takes it at its next return to user mode. So the records
 * whose time is at most the handler's start (`until_ns`) are overflows whose signal is this
 * one (merged ones included), and the newest of them is the latest overflow, the one whose
 * user-mode state the handler sees. Records newer than `until_ns` were written while this
 * handler ran (the thread was in the handler's own system calls): skipped. Records not newer
 * than `floor_ns` (the end of the previous handler on this thread) were written while that
 * handler ran after it read the ring: skipped too. Every record is consumed (data_tail is set
 * to the head read), so the ring never fills while signals are handled.
 *
 * Every length is checked against the span the kernel published (head - tail) before a byte is
 * read; reads wrap with the area's mask, so nothing outside the area is ever touched. */
#ifndef FX_PERFRING_H
#define FX_PERFRING_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The outcome of one read (stored per sample; a meta.extra counter each). */
enum fx_perfring_state {
    FX_KREC_OFF = 0,   /* no ring: kernel frames not asked for (nothing stored) */
    FX_KREC_OK,        /* the signal's record: its kernel frames (0 when in user mode) */
    FX_KREC_TRUNCATED, /* as OK, but the callchain filled the frames kept */
    FX_KREC_NO_RECORD, /* no sample record for this signal in the ring */
    FX_KREC_LOST,      /* the ring ran full: the signal's record may have been dropped */
    FX_KREC_BAD,       /* a malformed span or record: nothing taken */
    FX_KREC_COUNT
};

/* Free space below which the newest record may not have fitted: the largest record the events
 * write (header, time, nr, up to sample_max_stack addresses and a few context markers). */
#define FX_PERFRING_MAX_REC(max_stack) (24u + 8u * ((uint32_t)(max_stack) + 8u))

/* Signal-safe: n bytes at ring position pos (any u64; wrapped with size, a power of two). */
static inline void fx_perfring_copy_sigsafe(const uint8_t *data, uint64_t size, uint64_t pos,
                                            void *dst, uint32_t n)
{
    uint64_t off = pos & (size - 1);
    uint64_t first = size - off < n ? size - off : n;
    memcpy(dst, data + off, (size_t)first);
    if (first < n)
        memcpy((uint8_t *)dst + first, data, (size_t)(n - first));
}

static inline uint64_t fx_perfring_u64_sigsafe(const uint8_t *data, uint64_t size, uint64_t pos)
{
    uint64_t v;
    fx_perfring_copy_sigsafe(data, size, pos, &v, sizeof(v));
    return v;
}

/* Signal-safe: the kernel addresses (leaf first, context markers dropped, only those after
 * PERF_CONTEXT_KERNEL) of the record at pos of length len into ips (at most max); sets *state
 * to OK, TRUNCATED or BAD (nr does not fit the record). */
static inline uint32_t fx_perfring_chain_sigsafe(const uint8_t *data, uint64_t size, uint64_t pos,
                                                 uint32_t len, uint64_t *ips, uint32_t max,
                                                 uint8_t *state)
{
    uint64_t nr = fx_perfring_u64_sigsafe(data, size, pos + 16);
    if (nr > (len - 24u) / 8u) {
        *state = FX_KREC_BAD;
        return 0;
    }
    uint32_t n = 0;
    bool kernel = false;
    *state = FX_KREC_OK;
    for (uint64_t i = 0; i < nr; i++) {
        uint64_t ip = fx_perfring_u64_sigsafe(data, size, pos + 24 + 8 * i);
        if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
            kernel = ip == (uint64_t)PERF_CONTEXT_KERNEL;
            continue;
        }
        if (!kernel)
            continue;
        if (n == max) {
            *state = FX_KREC_TRUNCATED;
            break;
        }
        ips[n++] = ip;
    }
    if (n == max)
        *state = FX_KREC_TRUNCATED; /* the kernel keeps at most max too: maybe cut there */
    return n;
}

/* Signal-safe: consumes every record published in the ring (meta's data_head, acquire; then
 * data_tail, release) and returns the kernel frames of the newest sample record with
 * floor_ns < time <= until_ns, leaf first, into ips (at most max); *state says what was found
 * (enum fx_perfring_state). max_stack is the events' sample_max_stack (for the full-ring
 * check). size must be a power of two. */
static inline uint32_t fx_perfring_take_sigsafe(struct perf_event_mmap_page *meta,
                                                const uint8_t *data, uint64_t size,
                                                int64_t floor_ns, int64_t until_ns, uint64_t *ips,
                                                uint32_t max, uint32_t max_stack, uint8_t *state)
{
    uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = __atomic_load_n(&meta->data_tail, __ATOMIC_RELAXED);
    uint64_t span = head - tail;
    *state = FX_KREC_NO_RECORD;
    if (span > size || (span & 7) != 0) {
        *state = FX_KREC_BAD;
        __atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
        return 0;
    }
    uint64_t best = 0;
    uint32_t best_len = 0;
    bool found = false, lost_after = false, bad = false;
    for (uint64_t pos = tail; pos != head;) {
        struct perf_event_header h;
        if (head - pos < sizeof(h)) {
            bad = true;
            break;
        }
        fx_perfring_copy_sigsafe(data, size, pos, &h, sizeof(h));
        if (h.size < sizeof(h) || (h.size & 7) != 0 || h.size > head - pos) {
            bad = true;
            break;
        }
        if (h.type == PERF_RECORD_SAMPLE && h.size >= 24) {
            int64_t t = (int64_t)fx_perfring_u64_sigsafe(data, size, pos + 8);
            if (t > floor_ns && t <= until_ns) {
                best = pos;
                best_len = h.size;
                found = true;
                lost_after = false;
            }
        } else if (h.type == PERF_RECORD_LOST) {
            lost_after = true; /* records after `best` were dropped: maybe the newest */
        }
        pos += h.size;
    }
    uint32_t n = 0;
    if (bad)
        *state = FX_KREC_BAD;
    else if (lost_after || size - span < FX_PERFRING_MAX_REC(max_stack))
        *state = FX_KREC_LOST;
    else if (found)
        n = fx_perfring_chain_sigsafe(data, size, best, best_len, ips, max, state);
    __atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
    return n;
}

#endif
