/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_ring.h"

#ifndef sigev_notify_thread_id /* glibc < 2.37 lacks the name */
#define sigev_notify_thread_id _sigev_un._tid
#endif

static bool push(struct fx_ring *r, const void *data, uint32_t len)
{
    void *p = fx_ring_reserve_sigsafe(r, len);
    if (!p)
        return false;
    memcpy(p, data, len);
    fx_ring_commit_sigsafe(r);
    return true;
}

static void fill_pattern(uint8_t *p, uint32_t len, uint32_t seed)
{
    for (uint32_t i = 0; i < len; i++)
        p[i] = (uint8_t)(seed * 31u + i * 7u);
}

static bool pattern_ok(const uint8_t *p, uint32_t len, uint32_t seed)
{
    for (uint32_t i = 0; i < len; i++) {
        if (p[i] != (uint8_t)(seed * 31u + i * 7u))
            return false;
    }
    return true;
}

/* Each Check assertion costs a write to the runner's pipe: hot loops use pattern_ok. */
static void check_pattern(const uint8_t *p, uint32_t len, uint32_t seed)
{
    ck_assert_ptr_nonnull(p);
    ck_assert_msg(pattern_ok(p, len, seed), "record %u corrupted", seed);
}

/* ---- single thread ------------------------------------------------------------------------- */

START_TEST(test_ring_init_rounds_capacity_to_power_of_two)
{
    struct fx_ring r;
    ck_assert_int_eq(fx_ring_init(&r, 1), FX_OK);
    ck_assert_uint_eq(r.cap, 64);
    fx_ring_destroy(&r);
    ck_assert_int_eq(fx_ring_init(&r, 64), FX_OK);
    ck_assert_uint_eq(r.cap, 64);
    fx_ring_destroy(&r);
    ck_assert_int_eq(fx_ring_init(&r, 1000), FX_OK);
    ck_assert_uint_eq(r.cap, 1024);
    ck_assert(fx_ring_empty(&r));
    ck_assert_uint_eq(fx_ring_drops(&r), 0);
    fx_ring_destroy(&r);
    ck_assert_ptr_null(r.buf);
    fx_ring_destroy(&r); /* destroy of a destroyed (zeroed) ring is a no-op */
    ck_assert_int_eq(fx_ring_init(&r, ((size_t)1 << 31) + 1), FX_ERANGE);
}
END_TEST

START_TEST(test_ring_init_without_memory_leaves_ring_untouched)
{
    struct fx_ring r;
    memset(&r, 0, sizeof(r));
    fx_alloc_fail_after(1);
    ck_assert_int_eq(fx_ring_init(&r, 4096), FX_ENOMEM);
    ck_assert_ptr_null(r.buf);
    ck_assert_uint_eq(r.cap, 0);
    fx_ring_destroy(&r);
}
END_TEST

START_TEST(test_ring_records_come_out_in_push_order)
{
    struct fx_ring r;
    ck_assert_int_eq(fx_ring_init(&r, 1024), FX_OK);
    ck_assert_ptr_null(fx_ring_peek(&r, &(uint32_t){0}));
    for (int i = 0; i < 20; i++) {
        char s[16];
        int n = snprintf(s, sizeof(s), "record-%d", i);
        ck_assert(push(&r, s, (uint32_t)n + 1));
    }
    for (int i = 0; i < 20; i++) {
        char want[16];
        int n = snprintf(want, sizeof(want), "record-%d", i);
        uint32_t len = 0;
        const char *p = fx_ring_peek(&r, &len);
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_ge(len, (uint32_t)n + 1);
        ck_assert_uint_le(len, (uint32_t)n + 1 + 7);
        ck_assert_str_eq(p, want);
        ck_assert_ptr_eq(fx_ring_peek(&r, &len), p); /* peek does not consume */
        fx_ring_release(&r);
    }
    ck_assert_ptr_null(fx_ring_peek(&r, &(uint32_t){0}));
    ck_assert(fx_ring_empty(&r));
    ck_assert_uint_eq(r.pushed, 20);
    fx_ring_destroy(&r);
}
END_TEST

/* Random sizes through a small ring: many wrap-arounds, each needing a padding record. */
START_TEST(test_ring_variable_sizes_wrap_with_padding)
{
    struct fx_ring r;
    ck_assert_int_eq(fx_ring_init(&r, 256), FX_OK);
    uint64_t rng = 0x2545F4914F6CDD1Dull;
    uint32_t fifo_len[64], fifo_seed[64];
    unsigned fifo_head = 0, fifo_tail = 0;
    uint32_t attempts = 0, drops = 0, pads = 0, bad = 0;
    uint8_t buf[128];
    for (uint32_t seq = 0; seq < 20000; seq++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        uint32_t len = (uint32_t)(rng % 101);
        uint64_t off = r.head & (r.cap - 1);
        bool needs_pad = off + fx_ring_record_size_sigsafe(len) > r.cap;
        fill_pattern(buf, len, seq);
        attempts++;
        if (push(&r, buf, len)) {
            pads += needs_pad;
            fifo_len[fifo_head % 64] = len;
            fifo_seed[fifo_head++ % 64] = seq;
        } else {
            drops++;
        }
        for (unsigned k = (unsigned)(rng >> 40) % 3; k > 0 && fifo_tail != fifo_head; k--) {
            uint32_t got;
            const uint8_t *p = fx_ring_peek(&r, &got);
            if (!p) {
                bad++;
                break;
            }
            uint32_t want = fifo_len[fifo_tail % 64];
            bad += got < want || got > want + 7 || !pattern_ok(p, want, fifo_seed[fifo_tail % 64]);
            fifo_tail++;
            fx_ring_release(&r);
        }
    }
    ck_assert_uint_eq(bad, 0);
    ck_assert_uint_eq(fx_ring_drops(&r), drops);
    ck_assert_uint_eq(r.pushed + drops, attempts);
    ck_assert_uint_gt(pads, 100);
    ck_assert_uint_gt(r.head, 100 * r.cap);
    ck_assert_uint_le(r.head - r.tail, r.cap);
    fx_ring_destroy(&r);
}
END_TEST

START_TEST(test_ring_full_drops_and_counts_without_overwriting)
{
    struct fx_ring r;
    ck_assert_int_eq(fx_ring_init(&r, 256), FX_OK);
    uint8_t buf[24];
    uint32_t seq = 0;
    for (; seq < 8; seq++) { /* 8 records of 32 bytes fill 256 exactly */
        fill_pattern(buf, sizeof(buf), seq);
        ck_assert(push(&r, buf, sizeof(buf)));
    }
    for (int i = 0; i < 5; i++) {
        memset(buf, 0xEE, sizeof(buf));
        ck_assert(!push(&r, buf, sizeof(buf)));
    }
    ck_assert_uint_eq(fx_ring_drops(&r), 5);
    for (uint32_t want = 0; want < 3; want++) {
        uint32_t len;
        const uint8_t *p = fx_ring_peek(&r, &len);
        check_pattern(p, sizeof(buf), want);
        fx_ring_release(&r);
    }
    for (; seq < 11; seq++) { /* room for exactly the three released */
        fill_pattern(buf, sizeof(buf), seq);
        ck_assert(push(&r, buf, sizeof(buf)));
    }
    ck_assert(!push(&r, buf, sizeof(buf)));
    ck_assert_uint_eq(fx_ring_drops(&r), 6);
    for (uint32_t want = 3; want < 11; want++) {
        uint32_t len;
        const uint8_t *p = fx_ring_peek(&r, &len);
        ck_assert_ptr_nonnull(p);
        check_pattern(p, sizeof(buf), want);
        fx_ring_release(&r);
    }
    ck_assert(fx_ring_empty(&r));
    fx_ring_destroy(&r);
}
END_TEST

START_TEST(test_ring_record_over_half_the_ring_is_dropped)
{
    struct fx_ring r;
    ck_assert_int_eq(fx_ring_init(&r, 256), FX_OK);
    ck_assert_ptr_null(fx_ring_reserve_sigsafe(&r, 121)); /* 136 bytes > 128 */
    ck_assert_uint_eq(fx_ring_drops(&r), 1);
    ck_assert_ptr_nonnull(fx_ring_reserve_sigsafe(&r, 120));
    fx_ring_commit_sigsafe(&r);
    ck_assert(!fx_ring_empty(&r));
    fx_ring_destroy(&r);
}
END_TEST

/* ---- records with sequence numbers and checksums, shared by the concurrent tests ------------- */

static uint64_t word_of(uint64_t seq, uint64_t i)
{
    uint64_t x = seq * 0x9E3779B97F4A7C15ull + i + 1;
    x ^= x >> 31;
    return x * 0xBF58476D1CE4E5B9ull;
}

/* Layout: seq, n, n words, checksum. Writes through plain stores: usable in a signal handler. */
static bool push_seq_sigsafe(struct fx_ring *r, uint64_t seq)
{
    uint64_t n = seq % 13;
    uint64_t *p = fx_ring_reserve_sigsafe(r, (uint32_t)((n + 3) * sizeof(uint64_t)));
    if (!p)
        return false;
    uint64_t sum = seq ^ n;
    p[0] = seq;
    p[1] = n;
    for (uint64_t i = 0; i < n; i++) {
        p[2 + i] = word_of(seq, i);
        sum ^= p[2 + i] + i;
    }
    p[2 + n] = sum;
    fx_ring_commit_sigsafe(r);
    return true;
}

struct drain_state {
    struct fx_ring *ring;
    int producer_done; /* atomic */
    uint64_t received, last_seq, bad;
    uint64_t sleep_ns; /* 0: yield when empty */
};

static void check_seq_record(struct drain_state *d, const uint64_t *p, uint32_t len)
{
    uint64_t seq = p[0], n = p[1];
    if (len < 3 * sizeof(uint64_t) || n != seq % 13 || len < (n + 3) * sizeof(uint64_t) ||
        (d->received > 0 && seq <= d->last_seq)) {
        d->bad++;
        return;
    }
    uint64_t sum = seq ^ n;
    for (uint64_t i = 0; i < n; i++) {
        d->bad += p[2 + i] != word_of(seq, i);
        sum ^= p[2 + i] + i;
    }
    d->bad += p[2 + n] != sum;
    d->last_seq = seq;
    d->received++;
}

static void *drain(void *arg)
{
    struct drain_state *d = arg;
    for (;;) {
        /* read the flag before peeking: if it is set, everything pushed is visible */
        int done = __atomic_load_n(&d->producer_done, __ATOMIC_ACQUIRE);
        uint32_t len;
        const uint64_t *p = fx_ring_peek(d->ring, &len);
        if (p) {
            check_seq_record(d, p, len);
            fx_ring_release(d->ring);
            continue;
        }
        if (done)
            break;
        if (d->sleep_ns)
            nanosleep(&(struct timespec){0, (long)d->sleep_ns}, NULL);
        else
            sched_yield();
    }
    return NULL;
}

#define PRODUCED 1000000u

static void *produce(void *arg)
{
    struct fx_ring *r = arg;
    for (uint64_t seq = 1; seq <= PRODUCED; seq++) {
        if (!push_seq_sigsafe(r, seq))
            sched_yield(); /* let the consumer in, so most records cross threads */
    }
    return NULL;
}

START_TEST(test_ring_two_threads_lose_nothing_uncounted)
{
    struct fx_ring r;
    ck_assert_int_eq(fx_ring_init(&r, 1 << 16), FX_OK);
    struct drain_state d = {.ring = &r};
    pthread_t prod, cons;
    ck_assert_int_eq(pthread_create(&cons, NULL, drain, &d), 0);
    ck_assert_int_eq(pthread_create(&prod, NULL, produce, &r), 0);
    pthread_join(prod, NULL);
    __atomic_store_n(&d.producer_done, 1, __ATOMIC_RELEASE);
    pthread_join(cons, NULL);
    printf("test_ring: two threads: %llu received, %llu dropped of %u\n",
           (unsigned long long)d.received, (unsigned long long)fx_ring_drops(&r), PRODUCED);
    ck_assert_uint_eq(d.bad, 0);
    ck_assert_uint_gt(d.received, 0);
    ck_assert_uint_eq(d.received + fx_ring_drops(&r), PRODUCED);
    ck_assert_uint_eq(r.pushed, d.received);
    fx_ring_destroy(&r);
}
END_TEST

/* ---- real signals: a SIGPROF handler is the producer ------------------------------------------
 */

static struct fx_ring sig_ring;
static uint64_t sig_handled; /* written by the handler only (one thread) */
static int errno_clobbered;  /* errno differed on return from the handler */
static int worker_tid;       /* atomic */
static int worker_stop;      /* atomic */

static void on_sigprof(int sig)
{
    (void)sig;
    int saved = errno;
    uint64_t seq = __atomic_load_n(&sig_handled, __ATOMIC_RELAXED) + 1;
    __atomic_store_n(&sig_handled, seq, __ATOMIC_RELAXED);
    push_seq_sigsafe(&sig_ring, seq);
    errno = saved;
}

/* Also resets the shared state, so the signal tests can run in one process (CK_FORK=no). */
static void install_handler(void)
{
    __atomic_store_n(&sig_handled, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&worker_tid, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&worker_stop, 0, __ATOMIC_RELAXED);
    errno_clobbered = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sigprof;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    ck_assert_int_eq(sigaction(SIGPROF, &sa, NULL), 0);
}

static void set_sigprof_blocked(bool blocked)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPROF);
    pthread_sigmask(blocked ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

/* Ordinary work that the signal interrupts at arbitrary points; errno must survive it. */
static void busy_step(void)
{
    static volatile uint64_t sink;
    errno = 4242;
    for (int i = 0; i < 1000; i++)
        sink = sink * 6364136223846793005ull + (uint64_t)i;
    if (errno != 4242)
        __atomic_store_n(&errno_clobbered, 1, __ATOMIC_RELAXED);
}

static void *signalled_worker(void *arg)
{
    (void)arg;
    __atomic_store_n(&worker_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
    set_sigprof_blocked(false);
    while (!__atomic_load_n(&worker_stop, __ATOMIC_ACQUIRE))
        busy_step();
    set_sigprof_blocked(true);
    return NULL;
}

static void check_signal_run(struct drain_state *d)
{
    uint64_t handled = __atomic_load_n(&sig_handled, __ATOMIC_RELAXED);
    uint64_t drops = fx_ring_drops(&sig_ring);
    printf("test_ring: signals: %llu handled, %llu received, %llu dropped\n",
           (unsigned long long)handled, (unsigned long long)d->received, (unsigned long long)drops);
    ck_assert_uint_gt(handled, 0);
    ck_assert_uint_eq(d->bad, 0);
    ck_assert_uint_eq(d->received + drops, handled);
    ck_assert_int_eq(errno_clobbered, 0);
}

#define TGKILLS 100000

START_TEST(test_ring_sigprof_handler_records_arrive_or_are_counted)
{
    set_sigprof_blocked(true); /* only the worker takes SIGPROF */
    install_handler();
    /* a small ring and a slow consumer, so that handlers also meet a full ring */
    ck_assert_int_eq(fx_ring_init(&sig_ring, 1024), FX_OK);
    struct drain_state d = {.ring = &sig_ring, .sleep_ns = 1000000};
    pthread_t worker, cons;
    ck_assert_int_eq(pthread_create(&worker, NULL, signalled_worker, NULL), 0);
    ck_assert_int_eq(pthread_create(&cons, NULL, drain, &d), 0);
    int tid;
    while (!(tid = __atomic_load_n(&worker_tid, __ATOMIC_ACQUIRE)))
        sched_yield();
    for (int i = 0; i < TGKILLS; i++)
        ck_assert_int_eq(syscall(SYS_tgkill, getpid(), tid, SIGPROF), 0);
    __atomic_store_n(&worker_stop, 1, __ATOMIC_RELEASE);
    pthread_join(worker, NULL);
    __atomic_store_n(&d.producer_done, 1, __ATOMIC_RELEASE);
    pthread_join(cons, NULL);
    check_signal_run(&d);
    fx_ring_destroy(&sig_ring);
}
END_TEST

#define TIMER_SIGNALS 200

/* A POSIX timer on the worker's own CPU clock, delivered to that thread: how the agent samples. */
static void *timed_worker(void *arg)
{
    int *timer_ok = arg;
    struct sigevent sev;
    memset(&sev, 0, sizeof(sev));
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
    timer_t timer;
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer) != 0)
        return NULL;
    struct itimerspec its = {.it_interval = {0, 200000}, .it_value = {0, 200000}};
    *timer_ok = timer_settime(timer, 0, &its, NULL) == 0;
    set_sigprof_blocked(false);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do { /* a wall-clock cap keeps a starved machine from hanging the test */
        busy_step();
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (__atomic_load_n(&sig_handled, __ATOMIC_RELAXED) < TIMER_SIGNALS &&
             now.tv_sec - start.tv_sec < 30);
    timer_delete(timer);
    set_sigprof_blocked(true);
    return NULL;
}

START_TEST(test_ring_cpu_timer_signals_arrive_or_are_counted)
{
    set_sigprof_blocked(true);
    install_handler();
    ck_assert_int_eq(fx_ring_init(&sig_ring, 1024), FX_OK);
    struct drain_state d = {.ring = &sig_ring, .sleep_ns = 100000};
    pthread_t worker, cons;
    int timer_ok = 0;
    ck_assert_int_eq(pthread_create(&cons, NULL, drain, &d), 0);
    ck_assert_int_eq(pthread_create(&worker, NULL, timed_worker, &timer_ok), 0);
    pthread_join(worker, NULL);
    __atomic_store_n(&d.producer_done, 1, __ATOMIC_RELEASE);
    pthread_join(cons, NULL);
    ck_assert_msg(timer_ok, "timer_create/timer_settime failed");
    check_signal_run(&d);
    fx_ring_destroy(&sig_ring);
}
END_TEST

static Suite *ring_suite(void)
{
    Suite *s = suite_create("ring");
    TCase *tc = tcase_create("single_thread");
    tcase_add_test(tc, test_ring_init_rounds_capacity_to_power_of_two);
    tcase_add_test(tc, test_ring_init_without_memory_leaves_ring_untouched);
    tcase_add_test(tc, test_ring_records_come_out_in_push_order);
    tcase_add_test(tc, test_ring_variable_sizes_wrap_with_padding);
    tcase_add_test(tc, test_ring_full_drops_and_counts_without_overwriting);
    tcase_add_test(tc, test_ring_record_over_half_the_ring_is_dropped);
    suite_add_tcase(s, tc);
    tc = tcase_create("concurrent");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_ring_two_threads_lose_nothing_uncounted);
    tcase_add_test(tc, test_ring_sigprof_handler_records_arrive_or_are_counted);
    tcase_add_test(tc, test_ring_cpu_timer_signals_arrive_or_are_counted);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(ring_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
