/* SPDX-License-Identifier: Apache-2.0 */
/* One periodic agent thread, the loop the drain, the validator, the loop dumps and the wall
 * sampler share: deadlines at start + k * period on CLOCK_MONOTONIC (a clock step does not
 * stall it, a slow tick does not shift the next ones), a stop that waits for the tick in
 * progress, and a pause (a stopped recording): the thread then blocks on its condition with no
 * deadline, so it costs no wake-up at all, and ticks once per kick (a request to serve).
 * The drain changes its own period from its tick (fx_periodic_set_period: the next deadline is
 * the last one plus the new period) and other threads bring its next deadline closer
 * (fx_periodic_hurry: code to publish, a queue filling up; issue 31). */
#include "base.h"

#include <errno.h>

static void advance(struct timespec *t, uint64_t ns)
{
    ns += (uint64_t)t->tv_nsec;
    t->tv_sec += (time_t)(ns / 1000000000);
    t->tv_nsec = (long)(ns % 1000000000);
}

/* Under p->lock: waits for the next tick (a deadline, or a kick); false once stopped. A
 * broadcast that is neither (a hurry) waits again for p->next, which it may have moved. */
static bool wait_tick(struct fx_periodic *p)
{
    for (;;) {
        if (p->stop)
            return false;
        if (p->kicked) {
            p->kicked = false;
            return true;
        }
        if (p->paused) {
            pthread_cond_wait(&p->cond, &p->lock);
            continue;
        }
        if (p->reclock) { /* started or resumed: the first deadline is a period from now */
            p->reclock = false;
            clock_gettime(CLOCK_MONOTONIC, &p->next);
            advance(&p->next, p->period_ns);
        }
        if (pthread_cond_timedwait(&p->cond, &p->lock, &p->next) == ETIMEDOUT) {
            advance(&p->next, p->period_ns);
            return true;
        }
    }
}

static int64_t ns_of(const struct timespec *t)
{
    return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

/* Under p->lock: the next deadline at most p->hurry_ns from now. */
static void hurry_locked(struct fx_periodic *p)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    advance(&t, p->hurry_ns);
    p->hurry_ns = 0;
    if (ns_of(&t) < ns_of(&p->next)) {
        p->next = t;
        pthread_cond_broadcast(&p->cond);
    }
}

static void JNICALL periodic_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
    (void)jvmti;
    struct fx_periodic *p = arg;
    pthread_mutex_lock(&p->lock);
    while (wait_tick(p)) {
        p->in_tick = true;
        pthread_mutex_unlock(&p->lock);
        p->tick(jni, p->arg);
        pthread_mutex_lock(&p->lock);
        p->in_tick = false;
        if (p->new_period_ns != 0) { /* set by the tick: counted from the last deadline */
            int64_t last = ns_of(&p->next) - (int64_t)p->period_ns;
            p->period_ns = p->new_period_ns;
            p->new_period_ns = 0;
            p->next = fx_timespec_of_ns((uint64_t)(last + (int64_t)p->period_ns));
        }
        if (p->hurry_ns != 0) /* asked for during the tick */
            hurry_locked(p);
        pthread_cond_broadcast(&p->cond); /* a pause waits for the tick to end */
    }
    pthread_mutex_unlock(&p->lock);
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
    p->stop = p->paused = p->kicked = p->in_tick = false;
    p->reclock = true;
    p->new_period_ns = p->hurry_ns = 0;
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

void fx_periodic_pause(struct fx_periodic *p)
{
    if (!p->ready)
        return;
    pthread_mutex_lock(&p->lock);
    p->paused = true;
    p->kicked = false;
    pthread_cond_broadcast(&p->cond);
    while (p->running && p->in_tick)
        pthread_cond_wait(&p->cond, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

void fx_periodic_resume(struct fx_periodic *p)
{
    if (!p->ready)
        return;
    pthread_mutex_lock(&p->lock);
    if (p->paused) {
        p->paused = false;
        p->reclock = true;
        pthread_cond_broadcast(&p->cond);
    }
    pthread_mutex_unlock(&p->lock);
}

void fx_periodic_kick(struct fx_periodic *p)
{
    if (!p->ready)
        return;
    pthread_mutex_lock(&p->lock);
    p->kicked = true;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

void fx_periodic_set_period(struct fx_periodic *p, uint64_t period_ns)
{
    if (!p->ready || period_ns == 0) {
        p->period_ns = period_ns != 0 ? period_ns : p->period_ns; /* before the first start */
        return;
    }
    pthread_mutex_lock(&p->lock);
    if (p->in_tick)
        p->new_period_ns = period_ns;
    else /* the deadline waited for stays; the ones after it follow the new period */
        p->period_ns = period_ns;
    pthread_mutex_unlock(&p->lock);
}

void fx_periodic_hurry(struct fx_periodic *p, uint64_t within_ns)
{
    if (!p->ready || within_ns == 0)
        return;
    pthread_mutex_lock(&p->lock);
    if (p->running && !p->paused && !p->reclock) {
        p->hurry_ns = within_ns;
        if (!p->in_tick)
            hurry_locked(p);
    }
    pthread_mutex_unlock(&p->lock);
}
