/* SPDX-License-Identifier: Apache-2.0 */
/* What a sampling signal costs the sampled thread before any profiler code runs: a CPU loop of
 * fixed work, timed by the thread's CPU clock, with no signals, then with SIGPROF from a
 * per-thread perf_events task-clock (fxagent's cpu engine) or a timer_create CPU-clock timer
 * (its fallback), handled by an empty handler. The difference per signal is the kernel's (and,
 * on a VM, the hypervisor's) share of every sample, which no handler optimisation can remove.
 * `perfchain` is `perf` asking for the kernel callchain into an mmap ring, as fxagent's kstack=yes
 * does, with the handler reading the ring (include/fx_perfring.h); a fourth argument `sys` makes
 * the fixed work ITERATIONS one-byte write(2)s to /dev/null instead of a CPU loop, so that the
 * overflows land in the kernel and the callchain has frames.
 * `clocks` instead times N reads of each clock the handler may use (CLOCK_MONOTONIC is a vDSO
 * read, CLOCK_THREAD_CPUTIME_ID a system call), and N gettid system calls.
 * usage: signal_cost none|perf|perfchain|timer INTERVAL_NS ITERATIONS [sys]
 *        (prints one line of key=value)
 *        signal_cost clocks N */
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fx_clock.h"
#include "fx_perfring.h"

static volatile sig_atomic_t signals;
static struct perf_event_mmap_page *ring; /* perfchain: the event's ring */
static long page;
static volatile long kernel_frames;
static volatile int64_t take_ns; /* wall time in the ring reads */

static void on_sigprof(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si, (void)uc;
    signals++;
    if (ring != NULL) {
        uint64_t ips[48];
        uint8_t st;
        int64_t t0 = fx_clock_ns(CLOCK_MONOTONIC);
        kernel_frames += fx_perfring_take_sigsafe(ring, (const uint8_t *)ring + page,
                                                  (uint64_t)page, 0, t0, ips, 48, 48, &st);
        take_ns += fx_clock_ns(CLOCK_MONOTONIC) - t0; /* the ring read, plus one vDSO read */
    }
}

static double cpu_s(void)
{
    return (double)fx_clock_ns(CLOCK_THREAD_CPUTIME_ID) / 1e9;
}

static int arm_perf(long interval_ns, int chain)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = (unsigned long long)interval_ns;
    a.disabled = 1;
    a.wakeup_events = 1;
    if (chain) { /* as agent/sampling/kstack.c asks */
        a.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
        a.exclude_callchain_user = 1;
        a.sample_max_stack = 48;
        a.use_clockid = 1;
        a.clockid = CLOCK_MONOTONIC;
    }
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        a.exclude_kernel = 1; /* perf_event_paranoid 2 without privileges */
        fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    }
    struct f_owner_ex o = {F_OWNER_TID, (pid_t)syscall(SYS_gettid)};
    if (fd < 0 || fcntl(fd, F_SETFL, O_ASYNC) != 0 || fcntl(fd, F_SETSIG, SIGPROF) != 0 ||
        fcntl(fd, F_SETOWN_EX, &o) != 0)
        return -1;
    if (chain) {
        page = sysconf(_SC_PAGESIZE);
        void *m = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED)
            return -1;
        ring = m;
    }
    return ioctl(fd, PERF_EVENT_IOC_REFRESH, 1 << 28) != 0 ? -1 : 0;
}

static int arm_timer(long interval_ns)
{
    struct sigevent sev;
    memset(&sev, 0, sizeof(sev));
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    timer_t tm;
    struct timespec iv = {interval_ns / 1000000000, interval_ns % 1000000000};
    struct itimerspec its = {iv, iv};
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &tm) != 0 || timer_settime(tm, 0, &its, NULL))
        return -1;
    return 0;
}

static double mono_s(void)
{
    return (double)fx_clock_ns(CLOCK_MONOTONIC) / 1e9;
}

static int time_calls(long n)
{
    struct timespec ts;
    double t0 = mono_s();
    for (long i = 0; i < n; i++)
        clock_gettime(CLOCK_MONOTONIC, &ts);
    double t1 = mono_s();
    for (long i = 0; i < n; i++)
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    double t2 = mono_s();
    for (long i = 0; i < n; i++)
        syscall(SYS_gettid);
    double t3 = mono_s();
    printf("monotonic_ns=%.1f thread_cpu_ns=%.1f gettid_ns=%.1f\n", (t1 - t0) / (double)n * 1e9,
           (t2 - t1) / (double)n * 1e9, (t3 - t2) / (double)n * 1e9);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "clocks") == 0)
        return time_calls(atol(argv[2]));
    if (argc != 4 && !(argc == 5 && strcmp(argv[4], "sys") == 0)) {
        fprintf(stderr,
                "usage: signal_cost none|perf|perfchain|timer INTERVAL_NS ITERATIONS [sys]\n");
        return 2;
    }
    int sys = argc == 5, devnull = sys ? open("/dev/null", O_WRONLY | O_CLOEXEC) : -1;
    if (sys && devnull < 0) {
        perror("signal_cost: /dev/null");
        return 1;
    }
    long interval = atol(argv[2]), iters = atol(argv[3]);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_sigprof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    int rc = strcmp(argv[1], "perf") == 0        ? arm_perf(interval, 0)
             : strcmp(argv[1], "perfchain") == 0 ? arm_perf(interval, 1)
             : strcmp(argv[1], "timer") == 0     ? arm_timer(interval)
             : strcmp(argv[1], "none") == 0      ? 0
                                                 : -2;
    if (rc != 0) {
        fprintf(stderr, "signal_cost: cannot arm '%s'\n", argv[1]);
        return 1;
    }
    volatile double x = 0;
    double c0 = cpu_s();
    char byte = 0;
    for (long i = 0; i < iters; i++) {
        if (sys && write(devnull, &byte, 1) != 1)
            return 1;
        x += (double)i * 0.5;
    }
    printf("source=%s%s interval_ns=%ld cpu_s=%.4f signals=%ld kernel_frames=%ld take_ns=%.0f\n",
           argv[1], sys ? "-sys" : "", interval, cpu_s() - c0, (long)signals, (long)kernel_frames,
           signals > 0 ? (double)take_ns / signals : 0.0);
    return 0;
}
