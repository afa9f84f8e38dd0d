/* SPDX-License-Identifier: Apache-2.0 */
/* The process-wide part of the sampling engines, and the engine in words:
 *  cpu    per Java thread (cpu_timer.c, armed by the registry): nothing process-wide;
 *  itimer setitimer(ITIMER_PROF): the kernel picks the thread;
 *  wall   a sampler agent thread stores each registered thread's JVMTI state in its slot and
 *         tgkill()s it, idle or not. */
#include "internal.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

static uint64_t wall_ticks; /* atomic */

static uint8_t wall_state_of(jint s)
{
    if (s & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER)
        return FX_WS_BLOCKED;
    if (s & JVMTI_THREAD_STATE_SLEEPING)
        return FX_WS_SLEEPING;
    if (s & JVMTI_THREAD_STATE_PARKED)
        return FX_WS_PARKED;
    if (s & JVMTI_THREAD_STATE_WAITING_WITH_TIMEOUT)
        return FX_WS_TIMED_WAITING;
    if (s & JVMTI_THREAD_STATE_WAITING)
        return FX_WS_WAITING;
    if (s & JVMTI_THREAD_STATE_IN_NATIVE)
        return FX_WS_IN_NATIVE;
    return FX_WS_RUNNABLE;
}

/* Under the registry lock, so no thread is freed while we signal it; an ended thread's tid
 * is no longer ours to signal. */
static void wall_tick(JNIEnv *jni, void *arg)
{
    (void)arg;
    jvmtiEnv *jvmti = fx_jvmti();
    pid_t pid = getpid();
    fx_threads_lock();
    for (struct fx_thread *t = fx_threads_head(); t != NULL; t = t->next) {
        if (__atomic_load_n(&t->ended, __ATOMIC_ACQUIRE) || t->native_only) /* no JVMTI state */
            continue;
        jint s = 0;
        if ((*jvmti)->GetThreadState(jvmti, t->ref, &s) != JVMTI_ERROR_NONE ||
            !(s & JVMTI_THREAD_STATE_ALIVE))
            continue;
        __atomic_store_n(&t->wall_state, fx_vthreads_wall_state(jni, t, s, wall_state_of(s)),
                         __ATOMIC_RELEASE);
        syscall(SYS_tgkill, pid, t->tid, SIGPROF);
    }
    fx_threads_unlock();
    __atomic_fetch_add(&wall_ticks, 1, __ATOMIC_RELAXED);
}

static struct fx_periodic wall = {.name = "fxagent sampler", .tick = wall_tick};
static int started = -1; /* enum fx_mode of the running engine; -1 none (stop stops that one) */

uint64_t fx_engine_wall_ticks(void)
{
    return __atomic_load_n(&wall_ticks, __ATOMIC_RELAXED);
}

void fx_engines_new_recording(void)
{
    __atomic_store_n(&wall_ticks, 0, __ATOMIC_RELAXED);
}

int fx_engines_start(JNIEnv *jni)
{
    const struct fx_options *o = fx_opt();
    int rc = FX_OK;
    if (o->mode == FX_MODE_ITIMER) {
        struct timeval iv = {(time_t)(o->interval_ns / 1000000000),
                             (suseconds_t)(o->interval_ns % 1000000000 / 1000)};
        struct itimerval it = {.it_interval = iv, .it_value = iv};
        rc = setitimer(ITIMER_PROF, &it, NULL) == 0 ? FX_OK : FX_EUNSUPPORTED;
    } else if (o->mode == FX_MODE_WALL) {
        wall.period_ns = o->interval_ns;
        rc = fx_periodic_start(jni, &wall);
    }
    started = rc == FX_OK ? (int)o->mode : -1;
    return rc;
}

/* The engine that was started, whatever the options say by now. */
void fx_engines_stop(void)
{
    if (started == FX_MODE_ITIMER) {
        struct itimerval zero;
        memset(&zero, 0, sizeof(zero));
        setitimer(ITIMER_PROF, &zero, NULL);
    } else if (started == FX_MODE_WALL) {
        fx_periodic_stop(&wall);
    }
    started = -1;
}

/* Into the caller's buffer: the attach thread (start, status) and the drain thread (a dump's
 * meta, the start marker) ask at the same time. */
void fx_engine_name(char *buf, size_t cap)
{
    struct fx_threads_stats st;
    char why[160];
    if (fx_opt()->mode == FX_MODE_ITIMER) {
        snprintf(buf, cap, "itimer: setitimer(ITIMER_PROF), process-wide");
        return;
    }
    if (fx_opt()->mode == FX_MODE_WALL) {
        snprintf(buf, cap, "wall: sampler thread, tgkill(SIGPROF) to every Java thread");
        return;
    }
    fx_threads_stats(&st);
    fx_timer_perf_error(why, sizeof(why));
    if (fx_opt()->engine == FX_ENGINE_AUTO && why[0] == '\0' && st.timer + st.perf > 0)
        snprintf(buf, cap,
                 "cpu: timer_create on each thread's CPU clock, perf_events task-clock once the "
                 "thread is seen running (%llu threads so far; %llu on the timer)",
                 (unsigned long long)st.perf, (unsigned long long)st.timer);
    else if (st.timer == 0)
        snprintf(buf, cap, "cpu: perf_events task-clock per thread");
    else if (st.perf > 0)
        snprintf(buf, cap, "cpu: mixed, %llu threads perf_events, %llu timer_create",
                 (unsigned long long)st.perf, (unsigned long long)st.timer);
    else if (why[0] != '\0')
        snprintf(buf, cap,
                 "cpu: timer_create on each thread's CPU clock (perf_events unavailable: %s)", why);
    else
        snprintf(buf, cap, "cpu: timer_create on each thread's CPU clock");
}

const char *fx_engine_note(void)
{
    struct fx_threads_stats st;
    if (fx_opt()->mode == FX_MODE_WALL)
        return "one signal per thread per interval, whatever its state";
    if (fx_opt()->mode == FX_MODE_ITIMER)
        return "process CPU timer: fires on scheduler ticks, one thread per signal, no overrun weights";
    fx_threads_stats(&st);
    if (st.timer > 0)
        return "thread CPU clock timers fire on scheduler ticks only; each signal is weighted 1 + overruns";
    if (fx_timer_excludes_kernel())
        return "perf_events limited to user mode (perf_event_paranoid): time in the kernel is not sampled";
    return "perf_events task-clock: one signal per interval of thread CPU time, user and kernel";
}
