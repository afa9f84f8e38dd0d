/* SPDX-License-Identifier: Apache-2.0 */
/* What a per-thread perf event costs a thread that mostly sleeps (issue 16, ManyThreads): N
 * threads each wake ITER times (20 ms sleeps), each with no event, a task-clock event (fxagent's
 * cpu engine), a task-clock event with the kernel callchain and its mmap ring (kstack=yes once
 * the thread has a ring), or a timer_create thread-CPU-clock timer (engine=timer). No signal fires
 * (the threads do not run 10 ms of CPU): the cost is the kernel's at each context switch, which is
 * why fxagent gives a thread its ring only once it is seen running (fx_kstack_due). Prints the
 * process CPU time. usage: switch_cost none|perf|ring|timer THREADS ITER */
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum kind {
    NONE,
    PERF,
    RING,
    TIMER
};
static enum kind kind;
static int iterations;

static void arm(void)
{
    if (kind == NONE)
        return;
    if (kind == TIMER) {
        struct sigevent ev;
        memset(&ev, 0, sizeof(ev));
        ev.sigev_notify = SIGEV_THREAD_ID;
        ev.sigev_signo = SIGPROF; /* ignored by main: a sleeping thread never reaches 10 ms */
        ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
        timer_t t;
        struct itimerspec its = {{0, 10000000}, {0, 10000000}};
        if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &t) != 0 ||
            timer_settime(t, 0, &its, NULL)) {
            perror("switch_cost: timer_create");
            exit(1);
        }
        return;
    }
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = 10000000;
    if (kind == RING) {
        a.sample_type = PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_TIME;
        a.exclude_callchain_user = 1;
        a.use_clockid = 1;
        a.clockid = CLOCK_MONOTONIC;
    }
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    if (fd < 0) {
        perror("switch_cost: perf_event_open");
        exit(1);
    }
    if (kind == RING &&
        mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED) {
        perror("switch_cost: mmap");
        exit(1);
    }
}

static void *sleeper(void *unused)
{
    (void)unused;
    arm();
    struct timespec ts = {0, 20000000};
    for (int i = 0; i < iterations; i++)
        nanosleep(&ts, NULL);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: switch_cost none|perf|ring|timer THREADS ITER\n");
        return 2;
    }
    kind = strcmp(argv[1], "ring") == 0    ? RING
           : strcmp(argv[1], "perf") == 0  ? PERF
           : strcmp(argv[1], "timer") == 0 ? TIMER
                                           : NONE;
    signal(SIGPROF, SIG_IGN);
    int n = atoi(argv[2]);
    iterations = atoi(argv[3]);
    if (n < 1 || n > 4096 || iterations < 1) {
        fprintf(stderr, "switch_cost: THREADS 1..4096, ITER >= 1\n");
        return 2;
    }
    pthread_t *t = calloc((size_t)n, sizeof(*t));
    if (t == NULL)
        return 1;
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, sleeper, NULL) != 0) {
            perror("switch_cost: pthread_create");
            return 1;
        }
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    struct timespec r;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &r);
    printf("kind=%s threads=%d wakeups=%d cpu_s=%.3f\n", argv[1], n, iterations,
           (double)r.tv_sec + (double)r.tv_nsec / 1e9);
    free(t);
    return 0;
}
