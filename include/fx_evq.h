/* SPDX-License-Identifier: Apache-2.0 */
/* An event queue: a byte ring (fx_ring.h) with many producers, which share a mutex held only
 * for a memcpy, and one consumer, which needs no lock. Its pages exist only while a recording
 * needs them: made at a start, freed at a stop once the consumer drained it. Producers read
 * `ready` again under the mutex that init and free take, so none is inside when the pages go.
 * Not for signal handlers (the mutex): JVMTI callbacks, JNI natives, compiler threads.
 *
 * Producer: fx_evq_push(q, hdr, n, a, an, b, bn) (false: no queue, or full and counted).
 * Consumer: while ((p = fx_evq_peek(q, &n))) { read n bytes; fx_evq_release(q); } */
#ifndef FX_EVQ_H
#define FX_EVQ_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fx_ring.h"

struct fx_evq {
    pthread_mutex_t lock; /* producers, init and free */
    struct fx_ring ring;
    int ready; /* atomic, written under lock: the ring exists */
};

#define FX_EVQ_INITIALIZER                \
    {                                     \
        .lock = PTHREAD_MUTEX_INITIALIZER \
    }

/* Makes the ring of `bytes` if it does not exist (FX_OK then too); an fx_err code if not. */
int fx_evq_init(struct fx_evq *q, size_t bytes);
/* Gives the ring's pages back; the consumer must not be reading it. No-op without one. */
void fx_evq_free(struct fx_evq *q);
/* The one call a push makes, after it, when it leaves the ring more than a quarter full (NULL:
 * none): the agent's drain then comes within its fast period (issue 31). Set before the
 * producers start. */
void fx_evq_set_filling(void (*filling)(void));
/* Appends hdr + a + b (a, b may be NULL with length 0) as one record. */
bool fx_evq_push(struct fx_evq *q, const void *hdr, uint32_t hdr_len, const void *a, uint32_t a_len,
                 const void *b, uint32_t b_len);

static inline bool fx_evq_ready(struct fx_evq *q)
{
    return __atomic_load_n(&q->ready, __ATOMIC_ACQUIRE) != 0;
}

/* The consumer's next record, NULL if none or no queue. */
static inline const void *fx_evq_peek(struct fx_evq *q, uint32_t *len)
{
    return fx_evq_ready(q) ? fx_ring_peek(&q->ring, len) : NULL;
}

static inline void fx_evq_release(struct fx_evq *q)
{
    fx_ring_release(&q->ring);
}

/* Records dropped because the ring was full, since it was made; 0 without one. */
static inline uint64_t fx_evq_drops(struct fx_evq *q)
{
    return fx_evq_ready(q) ? fx_ring_drops(&q->ring) : 0;
}

#endif
