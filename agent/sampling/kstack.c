/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel frames, outside signal context (issue 16, kstack=yes): what a perf event must ask for
 * to carry the kernel part of the callchain (PERF_SAMPLE_CALLCHAIN with exclude_callchain_user,
 * the time on CLOCK_MONOTONIC to match a record to its signal), each perf-armed thread's mmap
 * ring (one metadata page and one data page, mapped once the thread is seen running: see
 * fx_kstack_due; unmapped where no handler can be reading it), and why kernel frames cannot be
 * had. The handler reads the ring
 * with include/fx_perfring.h (signal_handler.c). A leaf: cpu_timer.c and threads.c call it.
 *
 * Unmapping: a thread's own disarm (ThreadEnd, or a stop on that very thread) unmaps at once,
 * since its handler cannot run in the middle of it; any other thread's ring is unmapped with
 * its other buffers, once fx_sampling_quiet saw no handler in flight (threads.c, "Buffers"),
 * or when the thread is freed. A ring still mapped at the next arm (the quiet wait timed out)
 * is kept, and that thread takes no kernel frames until it is freed. The model says why a
 * profile has no kernel frames from fx_kstack_facts and the engine's figures. */
#include "internal.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define DATA_PAGES 1 /* a power of two; each thread's rings count against perf_event_mlock_kb */

static struct {
    int excluded;    /* atomic: an event was opened with exclude_kernel (perf_event_paranoid) */
    int open_errno;  /* atomic: an open with a callchain failed (then never asked again) */
    uint64_t mapped; /* atomic: rings mapped */
    uint64_t
            map_fail; /* atomic: rings that could not be mapped (the thread has no kernel frames) */
    int map_errno;    /* atomic: the last mmap failure */
    uint64_t kept_busy;  /* atomic: arms that found the previous ring still mapped */
    uint64_t lazy_armed; /* atomic: rings mapped for threads found due (fx_kstack_due) */
} ks;

bool fx_kstack_wanted(void)
{
    const struct fx_options *o = fx_opt();
    return o->mode == FX_MODE_CPU && o->kstack == FX_KSTACK_YES && o->cstack != FX_CSTACK_NO &&
           __atomic_load_n(&ks.open_errno, __ATOMIC_RELAXED) == 0;
}

bool fx_kstack_attr(struct perf_event_attr *a)
{
    if (!fx_kstack_wanted())
        return false;
    if (a->exclude_kernel) { /* samples in user mode only: there is no kernel callchain */
        __atomic_store_n(&ks.excluded, 1, __ATOMIC_RELAXED);
        return false;
    }
    a->sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
    a->exclude_callchain_user = 1; /* the user part is our own walk's */
    a->sample_max_stack = FX_KERNEL_MAX;
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC; /* the clock of the handler's start time */
    return true;
}

void fx_kstack_attr_failed(struct perf_event_attr *a, int err)
{
    if (err != EACCES) /* EACCES: perf_event_paranoid, said by exclude_kernel instead */
        __atomic_store_n(&ks.open_errno, err != 0 ? err : EINVAL, __ATOMIC_RELAXED);
    a->sample_type = 0;
    a->exclude_callchain_user = 0;
    a->sample_max_stack = 0;
    a->use_clockid = 0;
    a->clockid = 0;
}

/* A thread gets its ring only once it runs: every perf event with a mapped ring costs the kernel
 * about 1 µs at each context switch of its thread (it updates the ring's metadata page), which
 * on 500 threads waking 50 times a second each was +2.8 percentage points of process CPU
 * (docs/BENCHMARKS.md, "Kernel frames"). Two samples within a second: the thread burns at
 * least 2 % of a CPU at 10 ms; an idle pool thread gets a sample every few tens of seconds. */
bool fx_kstack_due(struct fx_thread *t, int64_t now_ns)
{
    if (t->kstack_tried || t->kring_map != NULL)
        return false;
    uint64_t n = __atomic_load_n(&t->handled, __ATOMIC_RELAXED);
    if (n < t->kstack_mark || now_ns - t->kstack_mark_ns > 1000000000) {
        t->kstack_mark = n; /* a new second (or a new recording's counters) */
        t->kstack_mark_ns = now_ns;
        return false;
    }
    return n - t->kstack_mark >= 2;
}

void fx_kstack_map(struct fx_thread *t, int fd)
{
    if (t->kring_map != NULL) {
        __atomic_add_fetch(&ks.kept_busy, 1, __ATOMIC_RELAXED);
        return;
    }
    long page = sysconf(_SC_PAGESIZE);
    size_t len = (size_t)page * (1 + DATA_PAGES);
    void *m = page > 0 ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (m == MAP_FAILED) {
        __atomic_store_n(&ks.map_errno, page > 0 ? errno : EINVAL, __ATOMIC_RELAXED);
        __atomic_add_fetch(&ks.map_fail, 1, __ATOMIC_RELAXED);
        return;
    }
    __atomic_add_fetch(&ks.lazy_armed, 1, __ATOMIC_RELAXED);
    t->kring_map = m;
    t->kring_len = len;
    t->kring_data_off = (uint32_t)page;
    t->kring_data_size = (uint32_t)page * DATA_PAGES;
    __atomic_add_fetch(&ks.mapped, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&t->kring, (struct perf_event_mmap_page *)m, __ATOMIC_RELEASE);
}

void fx_kstack_unmap(struct fx_thread *t)
{
    __atomic_store_n(&t->kring, NULL, __ATOMIC_RELEASE);
    if (t->kring_map != NULL)
        munmap(t->kring_map, t->kring_len);
    t->kring_map = NULL;
}

void fx_kstack_unmap_own(struct fx_thread *t)
{
    if (t->tid == (pid_t)syscall(SYS_gettid))
        fx_kstack_unmap(t);
}

void fx_kstack_facts(struct fx_kstack_facts *out)
{
    *out = (struct fx_kstack_facts){
            .excluded = __atomic_load_n(&ks.excluded, __ATOMIC_RELAXED) != 0,
            .open_errno = __atomic_load_n(&ks.open_errno, __ATOMIC_RELAXED),
            .mapped = __atomic_load_n(&ks.mapped, __ATOMIC_RELAXED),
            .map_fail = __atomic_load_n(&ks.map_fail, __ATOMIC_RELAXED),
            .map_errno = __atomic_load_n(&ks.map_errno, __ATOMIC_RELAXED),
            .kept_busy = __atomic_load_n(&ks.kept_busy, __ATOMIC_RELAXED),
            .lazy_armed = __atomic_load_n(&ks.lazy_armed, __ATOMIC_RELAXED),
    };
}

/* No arm runs (sampling is off): the next start maps each thread's ring again and counts it.
 * Why kernel frames are missing (excluded, open_errno, the last mmap error) is the JVM's. */
void fx_kstack_new_recording(void)
{
    __atomic_store_n(&ks.mapped, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&ks.map_fail, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&ks.kept_busy, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&ks.lazy_armed, 0, __ATOMIC_RELAXED);
}
