/* SPDX-License-Identifier: Apache-2.0 */
/* The model's thread slots (core/model/profile.c, fx_profile.threads): each track allocated
 * alone, so what a peak of short-lived threads leaves behind, once the window forgets them, is
 * 8 bytes a slot (the slot array cannot shrink below the highest id held: an id is a slot), not
 * a 240-byte track a slot. it.cycle's stopped agent kept 484 slots (116 KiB) for 13 tracks.
 * The tracks still held keep their ids and data, and write the same profile as a model that never
 * had the peak; vacant slots point to one empty track, which nothing writes to. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_ff_writer.h"
#include "fx_profile.h"
#include "fx_sink.h"
#include "unit_profile.h"

/* core/ keeps the model's layout private; its own tests read the tables. */
#include "../../core/model/fx_profile_internal.h"
#include "../../core/model/fx_profile_model.h"

#define PEAK 500 /* short-lived threads held at once: the slot array grows to 512 */

/* The tracks an agent keeps: main with samples and a marker, and its lock= companion with a
 * wait; the same calls on every model, so two models that hold only these write the same. */
struct kept {
    fx_thread_id main, lock;
};

static struct kept kept_tracks(struct fx_profile *p)
{
    struct kept k = {thread(p, "main", 1), {FX_NONE_ID}};
    ck_assert_int_eq(fx_profile_thread_add_companion(p, k.main, " lock=", 0, &k.lock), FX_OK);
    ck_assert_int_eq(fx_profile_thread_set_weight_type(p, k.lock, FX_WEIGHT_TRACING_MS), FX_OK);
    fx_profile_set_main_thread(p, k.main);
    return k;
}

static void kept_rows(struct fx_profile *p, struct kept k, fx_stack_id a, int64_t t0)
{
    for (int64_t i = 0; i < 5; i++)
        ck_assert_int_eq(fx_profile_sample(p, k.main, t0 + i, a, (uint32_t)i, 1), FX_OK);
    ck_assert_int_eq(fx_profile_sample(p, k.lock, t0 + 2, a, 0, 3), FX_OK);
    fx_str_id name;
    ck_assert_int_eq(fx_profile_string(p, "tick", 4, &name), FX_OK);
    ck_assert_int_eq(fx_profile_marker(p, k.main, name, FX_PHASE_INSTANT, FX_CAT_OTHER, t0 + 3, 0,
                                       FX_SCHEMA_NONE, NULL),
                     FX_OK);
}

static size_t heap_now(void)
{
    struct fx_alloc_usage u;
    fx_alloc_usage(&u);
    return u.heap_bytes;
}

START_TEST(test_profile_slots_a_forgotten_peak_of_threads_leaves_8_bytes_a_slot)
{
    struct fx_profile *p = fx_profile_new(), *q = fx_profile_new();
    fx_stack_id a = label(p, "a");
    ck_assert_uint_eq(label(q, "a").i, a.i);
    struct kept k = kept_tracks(p), kq = kept_tracks(q);
    fx_profile_set_start(p, 1000, 0);
    fx_profile_set_start(q, 1000, 0);
    size_t heap0 = heap_now(), model0 = fx_profile_memory(p);
    /* A recording holding PEAK short-lived threads at once, and their companions' share. */
    fx_thread_id churn[PEAK];
    for (int i = 0; i < PEAK; i++) {
        churn[i] = thread(p, "short-lived thread", 100 + i);
        ck_assert_int_eq(fx_profile_sample(p, churn[i], 1010 + i, a, 0, 1), FX_OK);
        fx_profile_thread_unregister(p, churn[i], 1011 + i);
    }
    ck_assert_uint_eq(fx_profile_thread_count(p), 2 + PEAK);
    for (int i = 0; i < PEAK; i++)
        fx_profile_thread_release(p, churn[i]); /* the agent freed the thread */
    /* The next start: the window forgets the recording (window.c's reset); then its rows. */
    fx_profile_drop_before(p, 5000);
    fx_profile_drop_before(q, 5000);
    kept_rows(p, k, a, 6000);
    kept_rows(q, kq, a, 6000);
    ck_assert_uint_eq(fx_profile_threads_held(p), 2);
    ck_assert_uint_eq(fx_profile_thread_count(p), 2 + PEAK); /* the slots stay, vacant */
    ck_assert_uint_ge(p->threads_cap, 2 + PEAK);
    /* What the peak left: the slot array, 8 bytes a slot (4 KiB for 512), and the kept tracks'
     * new rows (q holds them too), in the model's count and in the heap (p's and q's rows, and
     * malloc's rounding). 240 bytes a slot kept 120 KiB here. */
    size_t slots = 512 * sizeof(void *), rows = fx_profile_memory(q) - model0;
    ck_assert_uint_le((size_t)p->threads_cap * sizeof(*p->threads), slots);
    ck_assert_uint_le(fx_profile_memory(p), model0 + slots + rows);
    ck_assert_uint_eq(fx_profile_memory(p), fx_profile_memory_recount(p));
    ck_assert_uint_le(heap_now() - heap0, slots + 2 * rows + 2048);
    /* The tracks held keep their ids and data; the profile is the one the peak never touched. */
    ck_assert_str_eq(p->threads[k.main.i]->name, "main");
    ck_assert_str_eq(p->threads[k.lock.i]->name, "main lock=");
    ck_assert_uint_eq(p->threads[k.lock.i]->companion_of, k.main.i + 1);
    ck_assert_uint_eq(p->main_thread, k.main.i);
    size_t lp, lq;
    char *jp = json_of(p, &lp), *jq = json_of(q, &lq);
    ck_assert_uint_eq(lp, lq);
    ck_assert(memcmp(jp, jq, lp) == 0);
    free(jp), free(jq);
    /* A vacant id is refused; a new thread takes a vacant slot and is a track of its own. */
    ck_assert_int_eq(fx_profile_sample(p, churn[7], 6100, a, 0, 1), FX_EINVAL);
    fx_thread_id next = thread(p, "next", 7);
    ck_assert_uint_lt(next.i, 2 + PEAK);
    ck_assert_ptr_ne(p->threads[next.i], &p->vacant);
    ck_assert_int_eq(fx_profile_sample(p, next, 6100, a, 0, 1), FX_OK);
    ck_assert_uint_eq(p->threads[next.i]->samples.count, 1);
    /* Nothing wrote to the vacant slots' shared track. */
    struct fx_profile *fresh = fx_profile_new();
    ck_assert(memcmp(&p->vacant, &fresh->vacant, sizeof(p->vacant)) == 0);
    fx_profile_free(fresh);
    fx_profile_free(p);
    fx_profile_free(q);
}
END_TEST

/* A snapshot's tracks are its own: each allocated, copied, freed with it; a failed allocation
 * of one (any of them) gives NULL and leaks nothing. */
START_TEST(test_profile_slots_snapshot_tracks_are_its_own)
{
    struct fx_profile *p = fx_profile_new();
    fx_stack_id a = label(p, "a");
    struct kept k = kept_tracks(p);
    kept_rows(p, k, a, 100);
    struct fx_profile *copy = fx_profile_snapshot(p);
    ck_assert_ptr_nonnull(copy);
    ck_assert_uint_eq(copy->nthreads, 2);
    ck_assert_ptr_ne(copy->threads[0], p->threads[0]);
    ck_assert_uint_eq(copy->threads[0]->samples.count, 5);
    ck_assert_uint_eq(copy->threads[1]->companion_of, 1);
    fx_profile_free(copy);
    size_t heap0 = heap_now();
    for (long n = 1; n < 200; n++) {
        fx_alloc_fail_after(n);
        copy = fx_profile_snapshot(p);
        fx_alloc_fail_after(0);
        fx_profile_free(copy);
        ck_assert_uint_eq(heap_now(), heap0);
    }
    fx_profile_free(p);
}
END_TEST

static Suite *profile_slots_suite(void)
{
    Suite *s = suite_create("profile_slots");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_profile_slots_a_forgotten_peak_of_threads_leaves_8_bytes_a_slot);
    tcase_add_test(tc, test_profile_slots_snapshot_tracks_are_its_own);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(profile_slots_suite());
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
