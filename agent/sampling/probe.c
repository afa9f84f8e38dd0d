/* SPDX-License-Identifier: Apache-2.0 */
/* The requester's side of a probe (struct fx_probe in sample.h; the handler's side is in
 * signal_handler.c): the oracle asks for its own thread's trace, validate mode for a suspended
 * thread's. Invariant: only the probe's owner reallocates or reads the buffer, and only while
 * no request is pending and no claimed request is unfinished; a probe whose claimed request
 * never finished is retired for good, so no handler can write into memory given back. */
#include "internal.h"

#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fx_alloc.h"

#define OWNER_FREE      0
#define OWNER_HELD      1
#define OWNER_RETIRED   2
#define POLL_NS         20000      /* between looks at `done` while another thread answers */
#define CLAIMED_WAIT_NS 1000000000 /* a claimed request is a handler running at this moment */

static struct fx_probe_stats stats; /* atomics */

static void count(uint64_t *c)
{
    __atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

struct fx_thread *fx_probe_self(void)
{
    if (fx_sig.asgct == NULL)
        return NULL; /* Agent_OnLoad did not run: no handler, no table */
    return fx_signal_handler_lookup_sigsafe((int32_t)syscall(SYS_gettid));
}

int fx_probe_begin(struct fx_thread *t, uint32_t depth, bool recover)
{
    struct fx_probe *p = &t->probe;
    int expect = OWNER_FREE;
    if (!__atomic_compare_exchange_n(&p->owner, &expect, OWNER_HELD, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return expect == OWNER_RETIRED ? FX_EUNSUPPORTED : FX_ESTATE;
    if (p->cap < depth || (recover && p->shadow == NULL)) {
        uint32_t cap = p->cap < depth ? depth : p->cap;
        fx_asgct_frame *f = fx_calloc(cap, sizeof *f), *sh = fx_calloc(cap, sizeof *sh);
        if (f == NULL || sh == NULL) {
            fx_free(f);
            fx_free(sh);
            __atomic_store_n(&p->owner, OWNER_FREE, __ATOMIC_RELEASE);
            return FX_ENOMEM;
        }
        fx_free(p->frames);
        fx_free(p->shadow);
        p->frames = f;
        p->shadow = sh;
        p->cap = cap;
    }
    p->want = depth;
    p->recover = recover;
    return FX_OK;
}

void fx_probe_end(struct fx_thread *t)
{
    int held = OWNER_HELD;
    __atomic_compare_exchange_n(&t->probe.owner, &held, OWNER_FREE, false, __ATOMIC_RELEASE,
                                __ATOMIC_RELAXED);
}

/* Sending SIGPROF is only safe while the handler is ours: with the default action it would
 * terminate the process, and another profiler's handler would not answer. */
static bool handler_is_ours(void)
{
    struct sigaction sa;
    return sigaction(SIGPROF, NULL, &sa) == 0 && (sa.sa_flags & SA_SIGINFO) &&
           sa.sa_sigaction == fx_signal_handler_on_sigprof;
}

/* SI_QUEUE with a marker value tells the handler that this signal is a probe, not a tick. */
static int send_probe(pid_t tid)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = SIGPROF;
    si.si_code = SI_QUEUE;
    si.si_pid = getpid();
    si.si_uid = getuid();
    si.si_value.sival_int = FX_PROBE_SIGVAL;
    long rc = syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, SIGPROF, &si);
    return rc == 0 ? FX_OK : FX_EUNSUPPORTED;
}

/* A signal to the calling thread is handled before the sending syscall returns, so a self-probe
 * is done at the first look; another thread is polled until the deadline. */
static bool wait_done(struct fx_probe *p, uint32_t gen, int64_t wait_ns)
{
    int64_t deadline = fx_now_ns() + wait_ns;
    const struct timespec pause = {0, POLL_NS};
    for (;;) {
        if (__atomic_load_n(&p->done, __ATOMIC_ACQUIRE) == gen)
            return true;
        if (fx_now_ns() >= deadline)
            return false;
        nanosleep(&pause, NULL);
    }
}

/* After a timeout: withdraw the request. If the handler claimed it first, it is running now;
 * its result is still good once done. One that never finishes retires the probe. */
static bool settle(struct fx_probe *p, uint32_t gen)
{
    uint32_t expect = gen;
    if (__atomic_compare_exchange_n(&p->request, &expect, 0, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return false;
    if (wait_done(p, gen, CLAIMED_WAIT_NS))
        return true;
    __atomic_store_n(&p->owner, OWNER_RETIRED, __ATOMIC_RELEASE);
    count(&stats.retired);
    return false;
}

int fx_probe_run(struct fx_thread *t, int64_t wait_ns, fx_asgct_frame *out, int32_t *num_frames)
{
    struct fx_probe *p = &t->probe;
    *num_frames = 0;
    if (!handler_is_ours())
        return FX_ESTATE;
    uint32_t gen = ++p->gen;
    if (gen == 0)
        gen = ++p->gen;
    count(&stats.requested);
    __atomic_store_n(&p->request, gen, __ATOMIC_RELEASE);
    int sent = send_probe(t->tid);
    if (sent != FX_OK) {
        count(&stats.not_sent);
        if (!settle(p, gen))
            return FX_EUNSUPPORTED;
    } else if (!wait_done(p, gen, wait_ns) && !settle(p, gen)) {
        count(&stats.timeouts);
        return FX_ESTATE;
    }
    count(&stats.served);
    int32_t n = __atomic_load_n(&p->num_frames, __ATOMIC_RELAXED);
    *num_frames = n;
    if (n > 0)
        memcpy(out, p->frames, (size_t)(n < (int32_t)p->want ? n : (int32_t)p->want) * sizeof *out);
    return FX_OK;
}

void fx_probe_recovery(const struct fx_thread *t, int32_t *asgct_code, uint8_t *recovery)
{
    *asgct_code = __atomic_load_n(&t->probe.asgct_code, __ATOMIC_RELAXED);
    *recovery = __atomic_load_n(&t->probe.recovery, __ATOMIC_RELAXED);
}

int32_t fx_probe_shadow(const struct fx_thread *t, fx_asgct_frame *out, int32_t *n, bool *whole,
                        struct fx_anchor_facts *af)
{
    const struct fx_probe *p = &t->probe;
    int32_t rc = __atomic_load_n(&p->shadow_rc, __ATOMIC_RELAXED);
    *af = rc > 0 ? p->shadow_facts /* written by this walk before `done` (release) */
                 : (struct fx_anchor_facts){.top_code = 0, .deopt_frame = -1};
    *whole = rc > 0 && __atomic_load_n(&p->shadow_whole, __ATOMIC_RELAXED) != 0;
    *n = rc > 0 ? __atomic_load_n(&p->shadow_n, __ATOMIC_RELAXED) : 0;
    if (*n > (int32_t)p->want)
        *n = (int32_t)p->want;
    if (*n > 0)
        memcpy(out, p->shadow, (size_t)*n * sizeof *out);
    return rc;
}

void fx_probe_stats(struct fx_probe_stats *out)
{
    out->requested = __atomic_load_n(&stats.requested, __ATOMIC_RELAXED);
    out->served = __atomic_load_n(&stats.served, __ATOMIC_RELAXED);
    out->timeouts = __atomic_load_n(&stats.timeouts, __ATOMIC_RELAXED);
    out->retired = __atomic_load_n(&stats.retired, __ATOMIC_RELAXED);
    out->not_sent = __atomic_load_n(&stats.not_sent, __ATOMIC_RELAXED);
}
