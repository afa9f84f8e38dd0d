/* SPDX-License-Identifier: Apache-2.0 */
/* One periodic agent thread, the loop the drain, the validator, the loop dumps and the wall
 * sampler share: deadlines at start + k * period on CLOCK_MONOTONIC (a clock step does not
 * stall it, a slow tick does not shift the next ones), and a stop that waits for the tick in
 * progress. */
#include "base.h"

static void JNICALL periodic_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
    (void)jvmti;
    struct fx_periodic *p = arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (;;) {
        uint64_t ns = (uint64_t)next.tv_nsec + p->period_ns;
        next.tv_sec += (time_t)(ns / 1000000000);
        next.tv_nsec = (long)(ns % 1000000000);
        pthread_mutex_lock(&p->lock);
        while (!p->stop && pthread_cond_timedwait(&p->cond, &p->lock, &next) == 0)
            ;
        bool stop = p->stop;
        pthread_mutex_unlock(&p->lock);
        if (stop)
            break;
        p->tick(jni, p->arg);
    }
    if (p->exiting != NULL)
        p->exiting(p->arg);
    pthread_mutex_lock(&p->lock);
    p->running = false;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

int fx_periodic_start(JNIEnv *jni, struct fx_periodic *p)
{
    if (!p->ready) { /* first start, before any thread of p exists */
        pthread_mutex_init(&p->lock, NULL);
        pthread_condattr_t a;
        pthread_condattr_init(&a);
        pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
        pthread_cond_init(&p->cond, &a);
        pthread_condattr_destroy(&a);
        p->ready = true;
    }
    pthread_mutex_lock(&p->lock);
    p->stop = false;
    p->running = true;
    pthread_mutex_unlock(&p->lock);
    int rc = fx_run_thread(jni, p->name, periodic_main, p);
    if (rc != FX_OK) {
        pthread_mutex_lock(&p->lock);
        p->running = false;
        pthread_mutex_unlock(&p->lock);
    }
    return rc;
}

void fx_periodic_stop(struct fx_periodic *p)
{
    if (!p->ready)
        return; /* never started */
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_cond_broadcast(&p->cond);
    while (p->running)
        pthread_cond_wait(&p->cond, &p->lock);
    pthread_mutex_unlock(&p->lock);
}
