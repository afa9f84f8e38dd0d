/* SPDX-License-Identifier: Apache-2.0 */
/* The per-thread engine of cpu mode: perf_events task-clock (a per-task hrtimer, precise below
 * the scheduler tick), else timer_create on the thread's CPU clock (fires on ticks only; each
 * signal carries its overrun count as the sample weight). With engine=auto a thread starts on
 * the timer and gets its perf event once it is seen running (two samples within a second,
 * fx_kstack_due): a perf event costs its thread ~2.7 us at every context switch, a timer ~0.3
 * (bench/run_switch_cost.sh), and most threads of a server sleep. The registry (threads.c) arms and
 * disarms a thread with it (every start arms with that recording's options, every stop deletes);
 * the process-wide engines are in engines.c. Arming happens outside signal context; the handler
 * only re-arms perf events. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

static int perf_state;          /* atomic: 0 untried, 1 works, -1 unavailable (auto falls back) */
static int perf_exclude_kernel; /* atomic: 1 after EACCES without it (perf_event_paranoid) */
static char perf_error[160];    /* under perf_error_lock: threads arm concurrently */
static pthread_mutex_t perf_error_lock = PTHREAD_MUTEX_INITIALIZER;

/* glibc's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED): the CPU clock of any thread by tid. */
static clockid_t thread_cpu_clock(pid_t tid)
{
    return (clockid_t)((~(unsigned)tid) << 3) | 6;
}

static int64_t thread_cpu_ns(pid_t tid)
{
    return fx_clock_ns(thread_cpu_clock(tid)); /* -1: the thread is gone */
}

/* Coverage: the CPU time a thread spends with its timer armed is what its samples should
 * stand for; less means signals lost (kernel time with exclude_kernel, overflows merged into
 * one pending signal, ring drops) or each thread's last, partial interval. */
static void armed_begin(struct fx_thread *t)
{
    t->cpu_armed_since = thread_cpu_ns(t->tid);
}

int64_t fx_timer_armed_cpu_ns(const struct fx_thread *t)
{
    int64_t now = t->cpu_armed_since >= 0 ? thread_cpu_ns(t->tid) : -1;
    return t->cpu_armed_ns + (now >= t->cpu_armed_since ? now - t->cpu_armed_since : 0);
}

static void armed_end(struct fx_thread *t)
{
    t->cpu_armed_ns = fx_timer_armed_cpu_ns(t);
    t->cpu_armed_since = -1;
}

/* want_chain: ask for the kernel callchain if kernel frames are wanted (kstack.c); *chain: the
 * event carries it, so its ring is to be mapped. */
static int perf_open(pid_t tid, uint64_t period_ns, bool want_chain, bool *chain)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = period_ns;
    a.disabled = 1;
    a.wakeup_events = 1;
    a.exclude_kernel = (unsigned)__atomic_load_n(&perf_exclude_kernel, __ATOMIC_RELAXED);
    *chain = want_chain && fx_kstack_attr(&a);
    int fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && *chain) { /* without the callchain: the samples must not depend on it */
        fx_kstack_attr_failed(&a, errno);
        *chain = false;
        fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    }
    if (fd < 0 && errno == EACCES && !a.exclude_kernel) {
        /* perf_event_paranoid >= 2 without CAP_PERFMON: user-mode samples only. The kernel
         * time between signals is then not in weight x interval, so the handler must read the
         * thread's CPU clock for threadCPUDelta and the idle-gap check. */
        __atomic_store_n(&perf_exclude_kernel, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&fx_sig.read_cpu_clock, 1, __ATOMIC_RELAXED);
        a.exclude_kernel = 1;
        fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    }
    return fd;
}

/* Overflow -> SIGPROF (POLL_IN) to exactly this thread. The event is enabled without an
 * overflow limit (IOC_ENABLE, never IOC_REFRESH): the kernel only counts a limit down when one
 * was set, so it never disables the event and the handler never re-arms it. A limit would cost
 * a system call per sample (REFRESH 1), or risk its final POLL_HUP merging with a pending
 * POLL_IN (one standard signal) and the thread silently going unsampled (REFRESH N). */
static void perf_failed(const char *what, int e)
{
    pthread_mutex_lock(&perf_error_lock);
    snprintf(perf_error, sizeof(perf_error), "%s: %s", what, strerror(e));
    pthread_mutex_unlock(&perf_error_lock);
}

/* Signals of fd's overflows go to thread tid, as SIGPROF. */
static int perf_own(int fd, pid_t tid)
{
    struct f_owner_ex owner = {.type = F_OWNER_TID, .pid = tid};
    if (fcntl(fd, F_SETFL, O_ASYNC) != 0 || fcntl(fd, F_SETSIG, SIGPROF) != 0 ||
        fcntl(fd, F_SETOWN_EX, &owner) != 0) {
        perf_failed("fcntl on a perf event", errno);
        return FX_EUNSUPPORTED;
    }
    return FX_OK;
}

/* The start of fx_kstack_due's count: t's samples from now on. */
static void due_from_now(struct fx_thread *t)
{
    t->kstack_tried = false;
    t->kstack_mark = __atomic_load_n(&t->handled, __ATOMIC_RELAXED);
    t->kstack_mark_ns = fx_now_ns();
}

/* An enabled event without the callchain, its signals to t, or -1 (nothing left open). */
static int plain_event(struct fx_thread *t)
{
    bool chain;
    int fd = perf_open(t->tid, fx_opt()->interval_ns, false, &chain);
    if (fd < 0) {
        perf_failed("perf_event_open", errno);
        return -1;
    }
    if (perf_own(fd, t->tid) != FX_OK || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* An enabled event with the kernel callchain and a ring newly mapped for it, or -1 (nothing left
 * open; a refused callchain is counted by kstack.c; a ring that was published stays mapped until
 * the thread is freed). Only for a thread without a ring: one kept from an earlier arm (its quiet
 * wait timed out) would be another event's. */
static int chain_event(struct fx_thread *t)
{
    if (t->kring_map != NULL)
        return -1;
    bool chain;
    int fd = perf_open(t->tid, fx_opt()->interval_ns, true, &chain);
    if (fd < 0)
        return -1;
    if (!chain || perf_own(fd, t->tid) != FX_OK) {
        close(fd);
        return -1;
    }
    fx_kstack_map(t, fd);
    if (t->kring_map == NULL || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
        __atomic_store_n(&t->kring, NULL, __ATOMIC_RELEASE);
        close(fd);
        return -1;
    }
    return fd;
}

/* Armed without the kernel callchain: the ring comes once the thread runs (kstack.c). */
static int perf_arm(struct fx_thread *t)
{
    int fd = plain_event(t);
    if (fd < 0)
        return FX_EUNSUPPORTED;
    due_from_now(t);
    t->perf_fd = fd;
    t->engine = FX_ENGINE_KIND_PERF;
    return FX_OK;
}

/* The new event is set up and its ring published before it is enabled, and the old one is
 * disabled after: at most a signal of each lands around the swap, never a gap in the count.
 * A signal of either may find no record of its own in the ring: counted as such (kernel_frames.c).
 * A ring that was published stays mapped until the thread is freed or its buffers are. */
void fx_timer_kstack_upgrade(struct fx_thread *t)
{
    t->kstack_tried = true;
    int fd = t->engine == FX_ENGINE_KIND_PERF ? chain_event(t) : -1;
    if (fd < 0)
        return; /* the thread keeps its event */
    int old = t->perf_fd;
    t->perf_fd = fd;
    ioctl(old, PERF_EVENT_IOC_DISABLE, 0);
    close(old);
}

static int timer_arm(struct fx_thread *t)
{
    struct sigevent sev;
    memset(&sev, 0, sizeof(sev));
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev._sigev_un._tid = t->tid; /* sigev_notify_thread_id: glibc 2.36 lacks the name */
    if (timer_create(thread_cpu_clock(t->tid), &sev, &t->timer) != 0)
        return FX_EUNSUPPORTED;
    t->engine = FX_ENGINE_KIND_TIMER;
    struct timespec iv = fx_timespec_of_ns(fx_opt()->interval_ns);
    struct itimerspec its = {.it_interval = iv, .it_value = iv};
    if (timer_settime(t->timer, 0, &its, NULL) != 0) {
        timer_delete(t->timer);
        t->engine = FX_ENGINE_NONE;
        return FX_EUNSUPPORTED;
    }
    return FX_OK;
}

void fx_timer_perf_upgrade(struct fx_thread *t)
{
    t->kstack_tried = true;
    t->perf_later = false;
    int fd = fx_kstack_wanted() ? chain_event(t) : -1;
    if (fd < 0 && (fd = plain_event(t)) < 0) { /* the thread keeps its timer, and the next */
        __atomic_store_n(&perf_state, -1, __ATOMIC_RELAXED);
        return;
    }
    __atomic_store_n(&perf_state, 1, __ATOMIC_RELAXED);
    /* Enabled before the timer goes: at most one signal of each around the swap, no gap. */
    t->perf_fd = fd;
    t->engine = FX_ENGINE_KIND_PERF;
    timer_delete(t->timer);
}

static int arm_engine(struct fx_thread *t)
{
    t->perf_later = false;
    if (fx_opt()->engine == FX_ENGINE_AUTO &&
        __atomic_load_n(&perf_state, __ATOMIC_RELAXED) >= 0) { /* the timer first: file comment */
        int rc = timer_arm(t);
        if (rc == FX_OK) {
            due_from_now(t);
            t->perf_later = true;
        }
        return rc;
    }
    if (fx_opt()->engine != FX_ENGINE_TIMER &&
        __atomic_load_n(&perf_state, __ATOMIC_RELAXED) >= 0) {
        int rc = perf_arm(t);
        if (rc == FX_OK || fx_opt()->engine == FX_ENGINE_PERF) {
            __atomic_store_n(&perf_state, rc == FX_OK ? 1 : perf_state, __ATOMIC_RELAXED);
            return rc;
        }
        if (__atomic_load_n(&perf_state, __ATOMIC_RELAXED) == 0)
            __atomic_store_n(&perf_state, -1, __ATOMIC_RELAXED);
    }
    return timer_arm(t);
}

int fx_timer_arm(struct fx_thread *t)
{
    t->cpu_armed_since = -1;
    if (fx_opt()->mode != FX_MODE_CPU)
        return FX_OK;
    int rc = arm_engine(t);
    if (rc == FX_OK)
        armed_begin(t);
    return rc;
}

/* ThreadEnd on the thread itself, or a stop or VMDeath for every thread (under the registry
 * lock): the timer is deleted, the perf event closed; no new signal is generated for it. */
void fx_timer_disarm(struct fx_thread *t)
{
    armed_end(t);
    if (t->engine == FX_ENGINE_KIND_PERF) {
        int fd = t->perf_fd;
        t->perf_fd = -1; /* before the number can be reused by another thread's open */
        ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
        close(fd);
    } else if (t->engine == FX_ENGINE_KIND_TIMER) {
        timer_delete(t->timer);
    }
    t->engine = FX_ENGINE_NONE;
    fx_kstack_unmap_own(t); /* other threads' rings wait for a quiet handler (kstack.c) */
}

/* Agent_OnLoad or a start: with engine=perf, refuse to start if perf_events cannot be used. */
int fx_timer_probe(const struct fx_options *o, struct fx_errbuf *eb)
{
    if (o->mode != FX_MODE_CPU || o->engine != FX_ENGINE_PERF)
        return FX_OK;
    bool chain;
    int fd = perf_open(0, o->interval_ns, true, &chain);
    if (fd < 0) {
        fx_errbuf_set(
                eb,
                "option 'engine=perf': perf_event_open failed (%s); use engine=auto or engine=timer",
                strerror(errno));
        return FX_EUNSUPPORTED;
    }
    close(fd);
    return FX_OK;
}

bool fx_timer_excludes_kernel(void)
{
    return __atomic_load_n(&perf_exclude_kernel, __ATOMIC_RELAXED) != 0;
}

void fx_timer_perf_error(char *buf, size_t cap)
{
    pthread_mutex_lock(&perf_error_lock);
    snprintf(buf, cap, "%s", perf_error);
    pthread_mutex_unlock(&perf_error_lock);
}
