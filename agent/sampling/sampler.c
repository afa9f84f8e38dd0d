/* SPDX-License-Identifier: Apache-2.0 */
/* The sampler's setup and its switch: what must hold before any SIGPROF is sent (nobody else
 * handles SIGPROF, AsyncGetCallTrace exists, a ring takes a full-depth sample, engine=perf
 * works), the handler's install, sampling on and off, and the sampler as an event source. */
#include "internal.h"

#include "fx_tctx.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <time.h>

/* JDK 25's JFR CPU-time sampler, another profiler, or the application may own SIGPROF: we do
 * not take a signal someone else handles. */
static int check_sigprof_free(struct fx_errbuf *eb)
{
    struct sigaction old;
    if (sigaction(SIGPROF, NULL, &old) != 0)
        return FX_OK;
    bool custom = (old.sa_flags & SA_SIGINFO)
                          ? old.sa_sigaction != NULL
                          : (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN);
    if (!custom || old.sa_sigaction == fx_signal_handler_on_sigprof)
        return FX_OK;
    fx_errbuf_set(
            eb,
            "SIGPROF already has a handler (another profiler, or JFR's CPU-time sampler); fxagent will not replace it");
    return FX_ESTATE;
}

/* What timing an empty stretch of code with two CPU-clock reads measures: the smallest of a
 * few back-to-back pairs (the handler subtracts it from each timed signal). */
static int64_t clock_read_cost(void)
{
    int64_t best = INT64_MAX;
    for (int i = 0; i < 64; i++) {
        int64_t a = fx_clock_ns(CLOCK_THREAD_CPUTIME_ID);
        int64_t d = fx_clock_ns(CLOCK_THREAD_CPUTIME_ID) - a;
        best = d < best ? d : best;
    }
    return best;
}

/* The launcher loads libjvm RTLD_GLOBAL, so the default namespace has it; an embedding that
 * did not gets the explicit library. */
static int resolve_asgct(struct fx_errbuf *eb)
{
    void *fn = dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
    if (fn == NULL) {
        void *jvm = dlopen("libjvm.so", RTLD_NOW | RTLD_NOLOAD);
        fn = jvm ? dlsym(jvm, "AsyncGetCallTrace") : NULL;
    }
    if (fn == NULL) {
        fx_errbuf_set(eb, "this JVM has no AsyncGetCallTrace (fxagent needs HotSpot)");
        return FX_EUNSUPPORTED;
    }
    fx_sig.asgct = (fx_asgct_fn)fn;
    fx_sig.clock_read_ns = clock_read_cost();
    return FX_OK;
}

/* A ring takes records of at most half its size (fx_ring.h): with a deep `depth` and a small
 * `ring`, every deep stack would be dropped, so the combination is refused up front. */
static int check_ring_fits_depth(const struct fx_options *o, struct fx_errbuf *eb)
{
    uint64_t cap = 64;
    while (cap < o->ring_bytes)
        cap *= 2;
    uint64_t native = o->cstack != FX_CSTACK_NO ? FX_NATIVE_MAX * sizeof(uint64_t) : 0;
    native += sizeof(uint64_t); /* a mounted virtual thread's id (issue 22) */
    if (o->cstack != FX_CSTACK_NO && o->kstack == FX_KSTACK_YES && o->mode == FX_MODE_CPU)
        native += (1 + FX_KERNEL_MAX) * sizeof(uint64_t); /* the kernel frames and their count */
    native += (1 + FX_TYPES_MAX) * sizeof(uint64_t);  /* frame types and their count (issue 32) */
    native += (1 + FX_FOUND_KEPT) * sizeof(uint64_t); /* their nmethods found during the sample */
    if (o->cstack != FX_CSTACK_NO) /* the native frames below the Java ones, their count */
        native += (1 + FX_BELOW_WORDS) * sizeof(uint64_t);
    native += 2 * sizeof(uint64_t) + sizeof(struct fx_tctx_rec); /* a compile task; a context */
    uint64_t rec = fx_ring_record_size_sigsafe(
            (uint32_t)(sizeof(struct fx_sample_rec) + (uint64_t)o->depth * sizeof(fx_asgct_frame) +
                       native));
    if (rec <= cap / 2)
        return FX_OK;
    fx_errbuf_set(
            eb,
            "options 'depth=%u' and 'ring=%llu': a full-depth sample needs a ring of at least %llu bytes; raise ring or lower depth",
            o->depth, (unsigned long long)o->ring_bytes, (unsigned long long)rec * 2);
    return FX_ERANGE;
}

int fx_sampling_check(struct fx_errbuf *eb)
{
    int rc = check_ring_fits_depth(fx_opt(), eb);
    if (rc == FX_OK)
        rc = check_sigprof_free(eb);
    if (rc == FX_OK)
        rc = resolve_asgct(eb);
    if (rc == FX_OK)
        rc = fx_timer_probe(fx_opt(), eb);
    return rc;
}

int fx_sampling_check_options(const struct fx_options *o, struct fx_errbuf *eb)
{
    int rc = check_ring_fits_depth(o, eb);
    if (rc == FX_OK && !fx_sampling_handler_kept()) {
        fx_errbuf_set(eb, "another component replaced fxagent's SIGPROF handler");
        rc = FX_ESTATE;
    }
    if (rc == FX_OK)
        rc = fx_timer_probe(o, eb);
    return rc;
}

int fx_sampling_install(struct fx_errbuf *eb)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = fx_signal_handler_on_sigprof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART; /* no SA_NODEFER: the handler never nests */
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGPROF, &sa, NULL) != 0) {
        fx_errbuf_set(eb, "cannot install the SIGPROF handler: %s", strerror(errno));
        return FX_EUNSUPPORTED;
    }
    return FX_OK;
}

void fx_sampling_enable(void)
{
    __atomic_store_n(&fx_sig.read_cpu_clock,
                     fx_opt()->mode != FX_MODE_CPU || fx_timer_excludes_kernel(),
                     __ATOMIC_RELAXED); /* published by the release store below */
    __atomic_store_n(&fx_sig.enabled, 1, __ATOMIC_RELEASE);
}

/* seq_cst: against the handler's in-flight count (fx_sampling_quiet). */
void fx_sampling_disable(void)
{
    __atomic_store_n(&fx_sig.enabled, 0, __ATOMIC_SEQ_CST);
}

/* A handler never blocks, so it ends as soon as its thread runs again; a thread held
 * mid-handler (a debugger) is the only way past the wait. */
#define QUIET_WAIT_NS 2000000000
#define QUIET_POLL_NS 100000

bool fx_sampling_quiet(void)
{
    struct timespec poll = {0, QUIET_POLL_NS};
    for (int64_t waited = 0; waited < QUIET_WAIT_NS; waited += QUIET_POLL_NS) {
        if (__atomic_load_n(&fx_sig.in_flight, __ATOMIC_SEQ_CST) == 0)
            return true;
        nanosleep(&poll, NULL);
    }
    return false;
}

/* Said once: a start after it keeps the old buffers and their depth (threads.c). */
static bool quiet_or_say(const char *what)
{
    if (__atomic_load_n(&fx_sig.enabled, __ATOMIC_SEQ_CST) == 0 && fx_sampling_quiet())
        return true;
    fx_log("a signal handler is still running after 2 s (a thread held in a debugger?): the "
           "threads' sample buffers are %s",
           what);
    return false;
}

void fx_sampling_free_buffers(void)
{
    fx_vtwait_free(); /* no signal writes there: the mount callbacks check it under its lock */
    if (quiet_or_say("kept until a later stop"))
        fx_threads_free_buffers();
}

void fx_sampling_build_buffers(void)
{
    if (quiet_or_say("not re-sized: ring= and depth= apply to new threads only"))
        fx_threads_build_buffers();
}

int fx_sampling_start(JNIEnv *jni)
{
    fx_native_maps_start(); /* before any signal can walk */
    fx_vthreads_start(jni);
    fx_vm_threads_prune(); /* not re-armed: threads that ended while stopped */
    fx_threads_arm_all();
    fx_threads_start_existing(jni);
    fx_vm_threads_start(); /* after the Java threads: what is left is not Java */
    int rc = fx_engines_start(jni);
    if (rc != FX_OK)
        fx_log("the %s engine could not start: no samples will be taken",
               fx_opt()->mode == FX_MODE_WALL ? "wall" : "itimer");
    return rc;
}

void fx_sampling_stop(void)
{
    fx_vtwait_stop();
    fx_vm_threads_stop();
    fx_threads_disarm_all();
    fx_engines_stop();
}

bool fx_sampling_handler_kept(void)
{
    struct sigaction now;
    return sigaction(SIGPROF, NULL, &now) != 0 || now.sa_sigaction == fx_signal_handler_on_sigprof;
}

fx_asgct_fn fx_sampling_asgct(void)
{
    return fx_sig.asgct;
}

void fx_sampling_counts(struct fx_signal_counts *out)
{
    out->no_thread = __atomic_load_n(&fx_sig.no_thread, __ATOMIC_RELAXED);
    out->disabled = __atomic_load_n(&fx_sig.disabled, __ATOMIC_RELAXED);
    out->rearm_failed = __atomic_load_n(&fx_sig.rearm_failed, __ATOMIC_RELAXED);
    out->probe_late = __atomic_load_n(&fx_sig.probe_late, __ATOMIC_RELAXED);
    out->no_buffer = __atomic_load_n(&fx_sig.no_buffer, __ATOMIC_RELAXED);
}

/* The counters are the signal path's (atomics); no handler is in flight at a restart. */
void fx_sampling_new_recording(void)
{
    uint64_t *counters[] = {&fx_sig.no_thread, &fx_sig.disabled, &fx_sig.rearm_failed,
                            &fx_sig.probe_late, &fx_sig.no_buffer};
    for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
        __atomic_store_n(counters[i], 0, __ATOMIC_RELAXED);
    fx_threads_new_recording();
    fx_engines_new_recording();
    fx_kstack_new_recording();
    fx_native_maps_new_recording();
    fx_vm_threads_new_recording();
    fx_vthreads_new_recording();
}
