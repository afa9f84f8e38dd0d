/* SPDX-License-Identifier: Apache-2.0 */
/* The drain's JVM-free half under concurrency, as agent/model/drain.c and agent/model/window.c
 * run it: producer threads fill their own rings while one drain thread empties them into the
 * profile model, bounds its memory and takes snapshots that a writer thread writes while the model
 * keeps growing. Every record pushed must end as a sample, a counted ring drop or a counted window
 * drop. san.tsan_drain runs this under ThreadSanitizer. */
#include <check.h>
#include <cjson/cJSON.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fx_err.h"
#include "fx_ff_writer.h"
#include "fx_profile.h"
#include "fx_ring.h"
#include "fx_sink.h"

#define PRODUCERS      4
#define RECORDS        20000 /* per producer */
#define RING_BYTES     16384 /* small: the producers outrun the drain now and then, and drop */
#define MAX_FRAMES     8
#define METHODS        64
#define WINDOW_SAMPLES 6000 /* the drain halves the model above this (the memory bound) */

/* What a signal handler would record: who, when, and a stack of method ids, leaf first. */
struct rec {
    uint32_t producer, seq;
    int64_t time_ns, cpu_ns;
    int32_t nframes;
    int32_t frames[MAX_FRAMES];
};

struct producer {
    struct fx_ring ring;
    uint32_t id;
    int done; /* atomic: set after the last push */
};

/* One snapshot in flight at a time, as in the agent (agent/output/dump.c). */
struct handoff {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct fx_profile *snap;
    uint64_t snap_samples;
    bool finished;
};

struct run {
    struct producer prod[PRODUCERS];
    struct fx_profile *p;
    struct handoff h;
    bool snapshots;
    char dir[PATH_MAX];
    /* drain results */
    uint64_t received[PRODUCERS], window_dropped, order_errors, model_errors, snaps_taken;
    /* writer results */
    uint64_t written, write_errors, count_mismatches;
};

static uint32_t payload_size(int32_t nframes)
{
    return (uint32_t)(offsetof(struct rec, frames) + (size_t)nframes * sizeof(int32_t));
}

static void *produce(void *arg)
{
    struct producer *pr = arg;
    for (uint32_t seq = 0; seq < RECORDS; seq++) {
        int32_t n = (int32_t)(1 + (seq + pr->id) % MAX_FRAMES);
        struct rec *r = fx_ring_reserve_sigsafe(&pr->ring, payload_size(n));
        if (r != NULL) {
            r->producer = pr->id;
            r->seq = seq;
            r->time_ns = 1000000000LL + (int64_t)seq * 1000;
            r->cpu_ns = (int64_t)seq * 900;
            r->nframes = n;
            for (int32_t i = 0; i < n; i++)
                r->frames[i] = (int32_t)((seq * 7u + (uint32_t)i * 13u + pr->id) % METHODS);
            fx_ring_commit_sigsafe(&pr->ring);
        }
        /* Producer 0 floods its ring, so drops happen; the others keep about the pace of
         * signals, and the drain keeps up with them. */
        if (seq % (pr->id == 0 ? 256u : 4u) == 0)
            nanosleep(&(struct timespec){0, 50000}, NULL);
    }
    __atomic_store_n(&pr->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static int frame_of(struct fx_profile *p, int32_t method, fx_frame_id *out)
{
    char name[32];
    snprintf(name, sizeof(name), "pkg.C.m%d", (int)method);
    struct fx_func_key k = {
            .resource = FX_STR_NONE, .source = FX_STR_NONE, .line = -1, .is_java = true};
    int rc = fx_profile_cstring(p, name, &k.name);
    if (rc != FX_OK)
        return rc;
    struct fx_frame_key fk = {.line = method, .category = 0};
    rc = fx_profile_func(p, &k, &fk.func);
    return rc == FX_OK ? fx_profile_frame(p, &fk, out) : rc;
}

/* Root first, as drain.c's java_stack does with ASGCT frames. */
static int stack_of(struct fx_profile *p, const struct rec *r, fx_stack_id *out)
{
    fx_stack_id s = FX_STACK_NONE;
    for (int32_t i = r->nframes - 1; i >= 0; i--) {
        fx_frame_id f;
        int rc = frame_of(p, r->frames[i], &f);
        if (rc == FX_OK)
            rc = fx_profile_stack(p, s, f, &s);
        if (rc != FX_OK)
            return rc;
    }
    *out = s;
    return FX_OK;
}

struct drain_thread {
    bool in_profile, finished;
    fx_thread_id index;
    int64_t last_seq, last_cpu;
};

static void one_record(struct run *run, struct drain_thread *dt, const struct rec *r)
{
    run->received[r->producer]++;
    if ((int64_t)r->seq <= dt->last_seq)
        run->order_errors++;
    fx_stack_id s;
    int64_t cpu_delta = dt->last_seq >= 0 ? r->cpu_ns - dt->last_cpu : 0;
    dt->last_seq = r->seq;
    dt->last_cpu = r->cpu_ns;
    if (stack_of(run->p, r, &s) != FX_OK ||
        fx_profile_sample(run->p, dt->index, r->time_ns, s, cpu_delta, 1) != FX_OK)
        run->model_errors++;
}

/* Like drain.c's drain_thread: a thread enters the model with its first record and leaves it
 * (unregistered) once it has ended and its ring is empty. */
static void drain_ring(struct run *run, struct producer *pr, struct drain_thread *dt)
{
    bool was_done = __atomic_load_n(&pr->done, __ATOMIC_ACQUIRE) != 0;
    const void *rec;
    uint32_t len;
    while ((rec = fx_ring_peek(&pr->ring, &len)) != NULL) {
        if (!dt->in_profile) {
            char name[32];
            snprintf(name, sizeof(name), "producer-%u", pr->id);
            ck_assert_int_eq(fx_profile_thread_add(run->p, name, 100 + pr->id, 0, &dt->index),
                             FX_OK);
            dt->in_profile = true;
        }
        ck_assert_uint_ge(len, payload_size(1));
        one_record(run, dt, rec);
        fx_ring_release(&pr->ring);
    }
    if (was_done && !dt->finished) {
        if (dt->in_profile)
            fx_profile_thread_unregister(run->p, dt->index, 2000000000LL);
        dt->finished = true;
    }
}

/* The memory bound (agent/model/window.c): above the limit, the older half goes. */
static void bound(struct run *run)
{
    uint64_t n = fx_profile_sample_count(run->p);
    if (n > WINDOW_SAMPLES)
        run->window_dropped += fx_profile_drop_before(run->p, fx_profile_cut_time(run->p, n / 2));
}

/* Between two passes, like fx_window_serve: a copy for the writer if it is free. */
static void maybe_snapshot(struct run *run)
{
    pthread_mutex_lock(&run->h.lock);
    if (run->h.snap == NULL) {
        run->h.snap = fx_profile_snapshot(run->p);
        ck_assert_ptr_nonnull(run->h.snap);
        run->h.snap_samples = fx_profile_sample_count(run->p);
        run->snaps_taken++;
        pthread_cond_signal(&run->h.cond);
    }
    pthread_mutex_unlock(&run->h.lock);
}

static void *drain(void *arg)
{
    struct run *run = arg;
    struct drain_thread dt[PRODUCERS];
    for (int i = 0; i < PRODUCERS; i++)
        dt[i] = (struct drain_thread){.last_seq = -1};
    for (unsigned pass = 0;; pass++) {
        int finished = 0;
        for (int i = 0; i < PRODUCERS; i++) {
            drain_ring(run, &run->prod[i], &dt[i]);
            finished += dt[i].finished;
        }
        bound(run);
        if (run->snapshots && pass % 8 == 0)
            maybe_snapshot(run);
        if (finished == PRODUCERS)
            break;
        nanosleep(&(struct timespec){0, 200000}, NULL);
    }
    pthread_mutex_lock(&run->h.lock);
    run->h.finished = true;
    pthread_cond_signal(&run->h.cond);
    pthread_mutex_unlock(&run->h.lock);
    return NULL;
}

/* The written document's samples, counted by cJSON. */
static uint64_t samples_in_json(const char *text, size_t len)
{
    cJSON *doc = cJSON_ParseWithLength(text, len);
    if (doc == NULL)
        return UINT64_MAX;
    uint64_t n = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(doc, "threads"))
    {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(t, "samples");
        n += (uint64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, "length"));
    }
    cJSON_Delete(doc);
    return n;
}

/* Odd copies go to memory and are counted; even ones go through the file path (gzip, temp
 * file, rename) as dumps do. */
static void write_one(struct run *run, struct fx_profile *snap, uint64_t want)
{
    struct fx_errbuf eb;
    if (run->written % 2 == 1) {
        struct fx_membuf mb = {0};
        if (fx_ff_write(snap, fx_membuf_sink(&mb), &eb) != FX_OK)
            run->write_errors++;
        else if (samples_in_json(mb.data, mb.len) != want)
            run->count_mismatches++;
        fx_membuf_destroy(&mb);
    } else {
        char path[PATH_MAX + 64];
        int n = snprintf(path, sizeof(path), "%s/dump-%llu.json.gz", run->dir,
                         (unsigned long long)run->written);
        ck_assert(n > 0 && (size_t)n < sizeof(path));
        struct fx_ff_file_result res;
        if (fx_ff_write_file(snap, path, 0, &res, &eb) != FX_OK || res.fell_back || res.bytes == 0)
            run->write_errors++;
        unlink(path);
    }
    run->written++;
}

static void *writer(void *arg)
{
    struct run *run = arg;
    pthread_mutex_lock(&run->h.lock);
    for (;;) {
        while (run->h.snap == NULL && !run->h.finished)
            pthread_cond_wait(&run->h.cond, &run->h.lock);
        if (run->h.snap == NULL)
            break;
        struct fx_profile *snap = run->h.snap;
        uint64_t want = run->h.snap_samples;
        pthread_mutex_unlock(&run->h.lock); /* written while the drain goes on */
        write_one(run, snap, want);
        fx_profile_free(snap);
        pthread_mutex_lock(&run->h.lock);
        run->h.snap = NULL;
    }
    pthread_mutex_unlock(&run->h.lock);
    return NULL;
}

static void run_all(struct run *run, bool snapshots)
{
    memset(run, 0, sizeof(*run));
    run->snapshots = snapshots;
    run->p = fx_profile_new();
    ck_assert_ptr_nonnull(run->p);
    pthread_mutex_init(&run->h.lock, NULL);
    pthread_cond_init(&run->h.cond, NULL);
    const char *t = getenv("TMPDIR");
    snprintf(run->dir, sizeof(run->dir), "%s/fxtest-drain-XXXXXX", t && t[0] == '/' ? t : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(run->dir));
    pthread_t prod[PRODUCERS], dr, wr;
    for (int i = 0; i < PRODUCERS; i++) {
        run->prod[i].id = (uint32_t)i;
        ck_assert_int_eq(fx_ring_init(&run->prod[i].ring, RING_BYTES), FX_OK);
    }
    ck_assert_int_eq(pthread_create(&wr, NULL, writer, run), 0);
    ck_assert_int_eq(pthread_create(&dr, NULL, drain, run), 0);
    for (int i = 0; i < PRODUCERS; i++)
        ck_assert_int_eq(pthread_create(&prod[i], NULL, produce, &run->prod[i]), 0);
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(prod[i], NULL);
    pthread_join(dr, NULL);
    pthread_join(wr, NULL);
    rmdir(run->dir);
}

static void finish(struct run *run)
{
    for (int i = 0; i < PRODUCERS; i++)
        fx_ring_destroy(&run->prod[i].ring);
    fx_profile_free(run->p);
    pthread_mutex_destroy(&run->h.lock);
    pthread_cond_destroy(&run->h.cond);
}

START_TEST(test_ring_drain_every_pushed_record_is_a_sample_or_a_counted_drop)
{
    static struct run run;
    run_all(&run, false);
    uint64_t received = 0, drops = 0;
    for (int i = 0; i < PRODUCERS; i++) {
        struct fx_ring *r = &run.prod[i].ring;
        ck_assert_uint_eq(run.received[i] + fx_ring_drops(r), RECORDS);
        ck_assert_uint_eq(run.received[i], __atomic_load_n(&r->pushed, __ATOMIC_RELAXED));
        received += run.received[i];
        drops += fx_ring_drops(r);
    }
    printf("ring_drain: %llu records received, %llu dropped by full rings, %llu by the window\n",
           (unsigned long long)received, (unsigned long long)drops,
           (unsigned long long)run.window_dropped);
    ck_assert_uint_gt(received, 0);
    ck_assert_uint_eq(run.order_errors, 0);
    ck_assert_uint_eq(run.model_errors, 0);
    ck_assert_uint_eq(fx_profile_sample_count(run.p) + run.window_dropped, received);
    ck_assert_uint_eq(fx_profile_thread_count(run.p), PRODUCERS);
    finish(&run);
}
END_TEST

START_TEST(test_ring_drain_snapshots_are_written_while_the_drain_goes_on)
{
    static struct run run;
    run_all(&run, true);
    uint64_t received = 0;
    for (int i = 0; i < PRODUCERS; i++)
        received += run.received[i];
    printf("ring_drain: %llu records received, %llu snapshots taken and written, %llu samples "
           "dropped by the window\n",
           (unsigned long long)received, (unsigned long long)run.snaps_taken,
           (unsigned long long)run.window_dropped);
    ck_assert_uint_ge(run.snaps_taken, 1);
    ck_assert_uint_eq(run.written, run.snaps_taken);
    ck_assert_uint_eq(run.write_errors, 0);
    ck_assert_uint_eq(run.count_mismatches, 0);
    ck_assert_uint_eq(run.model_errors, 0);
    ck_assert_uint_eq(fx_profile_sample_count(run.p) + run.window_dropped, received);
    /* The model is still whole after every copy was written and freed. */
    struct fx_membuf mb = {0};
    struct fx_errbuf eb;
    ck_assert_int_eq(fx_ff_write(run.p, fx_membuf_sink(&mb), &eb), FX_OK);
    ck_assert_uint_eq(samples_in_json(mb.data, mb.len), fx_profile_sample_count(run.p));
    fx_membuf_destroy(&mb);
    finish(&run);
}
END_TEST

static Suite *ring_drain_suite(void)
{
    Suite *s = suite_create("ring_drain");
    TCase *tc = tcase_create("concurrency");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_ring_drain_every_pushed_record_is_a_sample_or_a_counted_drop);
    tcase_add_test(tc, test_ring_drain_snapshots_are_written_while_the_drain_goes_on);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(ring_drain_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
