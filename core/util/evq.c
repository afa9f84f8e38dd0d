/* SPDX-License-Identifier: Apache-2.0 */
/* The event queue's set-up, tear-down and producer side (fx_evq.h). The mutex serialises the
 * producers, because fx_ring is single-producer, and orders them against init and free. */
#include "fx_evq.h"

#include <string.h>

#include "fx_err.h"

int fx_evq_init(struct fx_evq *q, size_t bytes)
{
    int rc = FX_OK;
    pthread_mutex_lock(&q->lock);
    if (!fx_evq_ready(q)) {
        rc = fx_ring_init(&q->ring, bytes);
        if (rc == FX_OK)
            __atomic_store_n(&q->ready, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&q->lock);
    return rc;
}

void fx_evq_free(struct fx_evq *q)
{
    pthread_mutex_lock(&q->lock);
    if (fx_evq_ready(q)) {
        __atomic_store_n(&q->ready, 0, __ATOMIC_RELEASE);
        fx_ring_destroy(&q->ring);
    }
    pthread_mutex_unlock(&q->lock);
}

static void (*filling_hook)(void); /* atomic */

void fx_evq_set_filling(void (*filling)(void))
{
    __atomic_store_n(&filling_hook, filling, __ATOMIC_RELEASE);
}

/* `ready` is read first without the lock, so a producer of a queue that was never made (the
 * option off) pays nothing, then again under it: the queue may have been freed meanwhile, and
 * its zeroed ring would count a drop that was none. */
bool fx_evq_push(struct fx_evq *q, const void *hdr, uint32_t hdr_len, const void *a, uint32_t a_len,
                 const void *b, uint32_t b_len)
{
    if (!fx_evq_ready(q))
        return false;
    pthread_mutex_lock(&q->lock);
    uint8_t *dst = NULL;
    bool filling = false;
    if (fx_evq_ready(q)) {
        dst = fx_ring_reserve_sigsafe(&q->ring, hdr_len + a_len + b_len);
        if (dst != NULL) {
            memcpy(dst, hdr, hdr_len);
            if (a_len)
                memcpy(dst + hdr_len, a, a_len);
            if (b_len)
                memcpy(dst + hdr_len + a_len, b, b_len);
            fx_ring_commit_sigsafe(&q->ring);
        }
        filling = fx_ring_used(&q->ring) > q->ring.cap / 4;
    }
    pthread_mutex_unlock(&q->lock);
    void (*hook)(void) = __atomic_load_n(&filling_hook, __ATOMIC_ACQUIRE);
    if (filling && hook != NULL)
        hook();
    return dst != NULL;
}
