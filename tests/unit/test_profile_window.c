/* SPDX-License-Identifier: Apache-2.0 */
/* The model's window (core/model/profile_window.c): cut times, dropping old samples, markers and
 * counter values with memory given back, the interned-table limit, and snapshots that write
 * the same JSON as their original and stay independent of it. */
#include <check.h>
#include <stdio.h>
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

/* n samples at times first, first + step, ... with stack s and CPU delta = the index. */
static void samples(struct fx_profile *p, fx_thread_id t, fx_stack_id s, int64_t first,
                    int64_t step, uint32_t n, uint32_t weight)
{
    for (uint32_t i = 0; i < n; i++)
        ck_assert_int_eq(fx_profile_sample(p, t, first + i * step, s, i, weight), FX_OK);
}

START_TEST(test_profile_window_cut_time_is_the_nth_oldest_sample_plus_one)
{
    struct fx_profile *p = fx_profile_new();
    fx_stack_id s = label(p, "a");
    fx_thread_id t1 = thread(p, "t1", 1), t2 = thread(p, "t2", 2);
    samples(p, t1, s, 100, 10, 5, 1); /* 100 110 120 130 140 */
    samples(p, t2, s, 105, 10, 5, 1); /* 105 115 125 135 145 */
    ck_assert_int_eq(fx_profile_oldest_sample(p), 100);
    ck_assert_int_eq(fx_profile_cut_time(p, 0), INT64_MIN);
    ck_assert_int_eq(fx_profile_cut_time(p, 1), 101);
    ck_assert_int_eq(fx_profile_cut_time(p, 2), 106);
    ck_assert_int_eq(fx_profile_cut_time(p, 5), 121);
    ck_assert_int_eq(fx_profile_cut_time(p, 10), 146);
    ck_assert_int_eq(fx_profile_cut_time(p, 11), 146); /* fewer than n: past the newest */
    fx_profile_free(p);
    p = fx_profile_new();
    ck_assert_int_eq(fx_profile_oldest_sample(p), INT64_MAX);
    ck_assert_int_eq(fx_profile_cut_time(p, 3), INT64_MIN);
    fx_profile_free(p);
}
END_TEST

START_TEST(test_profile_window_drop_before_keeps_newer_samples_with_their_columns)
{
    struct fx_profile *p = fx_profile_new();
    fx_stack_id a = label(p, "a"), b = label(p, "b");
    fx_thread_id t1 = thread(p, "t1", 1), t2 = thread(p, "t2", 2);
    samples(p, t1, a, 100, 10, 5, 1);
    samples(p, t1, b, 150, 10, 5, 3); /* weights: the weight column exists */
    samples(p, t2, a, 100, 100, 3, 1);
    ck_assert_uint_eq(fx_profile_drop_before(p, 160), 6 + 1);
    const struct fx_samples *s = &p->threads[t1.i]->samples;
    ck_assert_uint_eq(s->count, 4);
    ck_assert_int_eq(s->time_ns[0], 160);
    ck_assert_int_eq(s->time_ns[3], 190);
    ck_assert_uint_eq(s->stack[0], b.i);
    ck_assert_uint_eq(s->cpu_ns[0], 1);
    ck_assert_uint_eq(s->cpu_ns[3], 4);
    ck_assert_ptr_nonnull(s->weight);
    ck_assert_uint_eq(s->weight[0], 3);
    ck_assert_uint_eq(p->threads[t2.i]->samples.count, 2);
    ck_assert_int_eq(p->threads[t2.i]->samples.time_ns[0], 200);
    ck_assert_uint_eq(fx_profile_sample_count(p), 6);
    /* Nothing older: nothing dropped; the model still takes samples after a drop. */
    ck_assert_uint_eq(fx_profile_drop_before(p, 160), 0);
    samples(p, t1, a, 200, 1, 3, 1);
    ck_assert_uint_eq(p->threads[t1.i]->samples.count, 7);
    ck_assert_uint_eq(p->threads[t1.i]->samples.weight[6], 1);
    /* Ids stay valid: the strings and stacks of dropped samples remain interned. */
    ck_assert_uint_eq(label(p, "a").i, a.i);
    fx_profile_free(p);
}
END_TEST

START_TEST(test_profile_window_drop_gives_sample_memory_back)
{
    struct fx_profile *p = fx_profile_new();
    fx_stack_id a = label(p, "a");
    fx_thread_id t = thread(p, "t", 1);
    samples(p, t, a, 0, 1, 4096, 1);
    size_t full = fx_profile_memory(p);
    ck_assert_uint_eq(p->threads[t.i]->samples.cap, 4096);
    ck_assert_uint_eq(fx_profile_drop_before(p, fx_profile_cut_time(p, 2048)), 2048);
    ck_assert_uint_eq(p->threads[t.i]->samples.cap, 2048);
    size_t half = fx_profile_memory(p);
    ck_assert_uint_lt(half, full);
    ck_assert_uint_ge(full - half, 2048 * 16); /* time 8 + stack 4 + cpu 4 per sample */
    ck_assert_uint_eq(fx_profile_drop_before(p, INT64_MAX), 2048);
    ck_assert_uint_eq(p->threads[t.i]->samples.cap, 0);
    ck_assert_ptr_null(p->threads[t.i]->samples.time_ns);
    samples(p, t, a, 5000, 1, 20, 1);
    ck_assert_uint_eq(p->threads[t.i]->samples.count, 20);
    fx_profile_free(p);
}
END_TEST

static const struct fx_marker_field fields[] = {{"what", "What", FX_FMT_STRING},
                                                {"n", "N", FX_FMT_INTEGER}};
static const struct fx_marker_schema schema = {
        .name = "FxTest", .display = FX_DISPLAY_TABLE, .fields = fields, .n_fields = 2};

static void marker(struct fx_profile *p, fx_thread_id t, uint8_t phase, int64_t start, int64_t end,
                   int64_t n)
{
    fx_str_id name, what;
    fx_schema_id sc;
    ck_assert_int_eq(fx_profile_cstring(p, "m", &name), FX_OK);
    ck_assert_int_eq(fx_profile_cstring(p, "w", &what), FX_OK);
    ck_assert_int_eq(fx_profile_schema(p, &schema, &sc), FX_OK);
    union fx_marker_value v[2] = {{.s = what}, {.i = n}};
    ck_assert_int_eq(fx_profile_marker(p, t, name, phase, FX_CAT_OTHER, start, end, sc, v), FX_OK);
}

START_TEST(test_profile_window_drop_keeps_newer_markers_and_start_end_halves)
{
    struct fx_profile *p = fx_profile_new();
    fx_thread_id t = thread(p, "t", 1);
    marker(p, t, FX_PHASE_INSTANT, 10, 0, 1);   /* old: dropped */
    marker(p, t, FX_PHASE_INTERVAL, 20, 40, 2); /* ended before 50: dropped */
    marker(p, t, FX_PHASE_INTERVAL, 30, 60, 3); /* still open at 50: kept */
    marker(p, t, FX_PHASE_START, 5, 0, 4);      /* a half: kept */
    marker(p, t, FX_PHASE_INSTANT, 70, 0, 5);
    fx_profile_drop_before(p, 50);
    const struct fx_markers *m = &p->threads[t.i]->markers;
    ck_assert_uint_eq(m->count, 3);
    ck_assert_uint_eq(m->nvalues, 6);
    int64_t want[] = {3, 4, 5};
    for (uint32_t i = 0; i < 3; i++) {
        ck_assert_uint_eq(m->values_at[i], 2 * i);
        ck_assert_int_eq(m->values[m->values_at[i] + 1].i, want[i]);
    }
    ck_assert_int_eq(m->phase[1], FX_PHASE_START);
    ck_assert_int_eq(m->start_ns[2], 70);
    fx_profile_free(p);
}
END_TEST

/* Kept and dropped rows alternate, so kept rows move in several runs, each with its values. */
START_TEST(test_profile_window_drop_markers_in_runs_keeps_each_row_with_its_values)
{
    struct fx_profile *p = fx_profile_new();
    fx_thread_id t = thread(p, "t", 1);
    for (int i = 0; i < 12; i++)
        marker(p, t, FX_PHASE_INSTANT, i % 3 == 0 ? 10 + i : 100 + i, 0, 1000 + i);
    fx_profile_drop_before(p, 50);
    const struct fx_markers *m = &p->threads[t.i]->markers;
    ck_assert_uint_eq(m->count, 8);
    ck_assert_uint_eq(m->nvalues, 16);
    uint32_t r = 0;
    for (int i = 0; i < 12; i++) {
        if (i % 3 == 0)
            continue;
        ck_assert_int_eq(m->start_ns[r], 100 + i);
        ck_assert_uint_eq(m->values_at[r], 2 * r);
        ck_assert_int_eq(m->values[m->values_at[r] + 1].i, 1000 + i);
        r++;
    }
    fx_profile_free(p);
}
END_TEST

START_TEST(test_profile_window_drop_removes_old_counter_values)
{
    struct fx_profile *p = fx_profile_new();
    struct fx_counter_desc d = {"heap", "Memory", "used", "bytes", "blue"};
    fx_counter_id c;
    ck_assert_int_eq(fx_profile_counter(p, &d, &c), FX_OK);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(fx_profile_counter_sample(p, c, i * 10, i), FX_OK);
    fx_profile_drop_before(p, 35);
    ck_assert_uint_eq(p->counters[c.i].count, 6);
    ck_assert_int_eq(p->counters[c.i].time_ns[0], 40);
    ck_assert_int_eq(p->counters[c.i].value[0], 4);
    fx_profile_free(p);
}
END_TEST

/* Everything the writer reads, so a field the copy misses changes the JSON. */
static struct fx_profile *rich_profile(void)
{
    struct fx_profile *p = fx_profile_new();
    fx_profile_set_start(p, 1000, 1.7e12);
    fx_profile_set_range(p, 1000, 9000);
    fx_profile_set_interval(p, 2.0);
    fx_profile_set_pid(p, 4242);
    ck_assert_int_eq(fx_profile_set_meta(p, "product", "fxagent: test"), FX_OK);
    ck_assert_int_eq(fx_profile_set_meta(p, "arguments", "java -jar x.jar"), FX_OK);
    ck_assert_int_eq(fx_profile_set_meta_int(p, "logicalCPUs", 8), FX_OK);
    ck_assert_int_eq(fx_profile_extra_str(p, "G", "s", "text"), FX_OK);
    ck_assert_int_eq(fx_profile_extra_int(p, "G", "i", 7), FX_OK);
    ck_assert_int_eq(fx_profile_extra_int(p, "H", "j", -1), FX_OK);
    fx_str_id name, res, src;
    ck_assert_int_eq(fx_profile_cstring(p, "com.example.A.run", &name), FX_OK);
    ck_assert_int_eq(fx_profile_cstring(p, "app.jar", &res), FX_OK);
    ck_assert_int_eq(fx_profile_cstring(p, "com/example/A.java", &src), FX_OK);
    struct fx_func_key fk = {name, res, src, 12, true};
    fx_func_id f;
    ck_assert_int_eq(fx_profile_func(p, &fk, &f), FX_OK);
    struct fx_frame_key rk = {f, 14, FX_CAT_JAVA, FX_JAVA_C2, 1};
    fx_frame_id fr;
    ck_assert_int_eq(fx_profile_frame(p, &rk, &fr), FX_OK);
    fx_stack_id root = label(p, "[root]"), leaf;
    ck_assert_int_eq(fx_profile_stack(p, root, fr, &leaf), FX_OK);
    fx_thread_id t1 = thread(p, "main", 11), t2 = thread(p, "worker", 12);
    fx_profile_set_main_thread(p, t2);
    ck_assert_int_eq(fx_profile_thread_set_weight_type(p, t2, FX_WEIGHT_TRACING_MS), FX_OK);
    samples(p, t1, leaf, 2000, 100, 10, 1);
    samples(p, t2, root, 2050, 100, 10, 2);
    marker(p, t1, FX_PHASE_INTERVAL, 2100, 2500, 9);
    marker(p, t2, FX_PHASE_INSTANT, 2200, 0, 8);
    struct fx_counter_desc d = {"heap", "Memory", "used", "bytes", "blue"};
    fx_counter_id c;
    ck_assert_int_eq(fx_profile_counter(p, &d, &c), FX_OK);
    ck_assert_int_eq(fx_profile_counter_sample(p, c, 2000, 100), FX_OK);
    ck_assert_int_eq(fx_profile_counter_sample(p, c, 3000, 300), FX_OK);
    return p;
}

START_TEST(test_profile_window_snapshot_writes_the_same_json)
{
    struct fx_profile *p = rich_profile();
    struct fx_profile *copy = fx_profile_snapshot(p);
    ck_assert_ptr_nonnull(copy);
    size_t la, lb;
    char *a = json_of(p, &la), *b = json_of(copy, &lb);
    ck_assert_uint_eq(la, lb);
    ck_assert(memcmp(a, b, la) == 0);
    /* The copy is independent: the original goes on, the copy's JSON does not move. */
    fx_stack_id x = label(p, "new stack");
    samples(p, (fx_thread_id){0}, x, 5000, 1, 100, 1);
    ck_assert_int_eq(fx_profile_extra_int(p, "G", "i", 8), FX_OK);
    size_t lc;
    char *c = json_of(copy, &lc);
    ck_assert_uint_eq(lc, lb);
    ck_assert(memcmp(c, b, lb) == 0);
    fx_profile_free(p);
    /* ... and usable on its own after the original is gone: interning finds old keys. */
    fx_str_id id;
    ck_assert_int_eq(fx_profile_cstring(copy, "app.jar", &id), FX_OK);
    ck_assert_uint_eq(id.i, 1);
    ck_assert_int_eq(fx_profile_cstring(copy, "only in the copy", &id), FX_OK);
    ck_assert_uint_eq(id.i, copy->strings.count - 1);
    free(a), free(b), free(c);
    fx_profile_free(copy);
}
END_TEST

START_TEST(test_profile_window_snapshot_leaves_out_ended_empty_threads)
{
    struct fx_profile *p = fx_profile_new();
    fx_stack_id a = label(p, "a");
    fx_thread_id gone = thread(p, "gone", 1), kept_ended = thread(p, "ended", 2);
    fx_thread_id idle = thread(p, "idle", 3), main = thread(p, "main", 4);
    samples(p, gone, a, 10, 1, 5, 1);
    samples(p, kept_ended, a, 100, 1, 5, 1);
    fx_profile_thread_unregister(p, gone, 20);
    fx_profile_thread_unregister(p, kept_ended, 200);
    fx_profile_set_main_thread(p, main);
    fx_profile_drop_before(p, 50); /* "gone" is now ended and empty */
    struct fx_profile *copy = fx_profile_snapshot(p);
    ck_assert_ptr_nonnull(copy);
    ck_assert_uint_eq(fx_profile_thread_count(copy), 3);
    ck_assert_str_eq(copy->threads[0]->name, "ended");
    ck_assert_str_eq(copy->threads[1]->name, "idle"); /* not ended: kept though empty */
    ck_assert_str_eq(copy->threads[copy->main_thread]->name, "main");
    ck_assert_uint_eq(fx_profile_thread_count(p), 4); /* the original's indexes stay */
    (void)idle;
    fx_profile_free(copy);
    fx_profile_free(p);
}
END_TEST

/* A thread that lived in the window keeps its track though it has no sample (cpu mode: it did
 * not run); one that ended before a new period's start is left out, and only kept empty tracks
 * are counted. */
START_TEST(test_profile_window_snapshot_keeps_empty_threads_of_the_window)
{
    struct fx_profile *p = fx_profile_new();
    fx_stack_id a = label(p, "a");
    fx_thread_id old = thread(p, "old", 1), busy = thread(p, "busy", 2);
    fx_profile_thread_unregister(p, old, 30);
    fx_profile_drop_before(p, INT64_MAX); /* a reset, as window.c does it */
    fx_profile_set_start(p, 100, 0);
    fx_thread_id sleeper = thread(p, "sleeper", 3), brief = thread(p, "brief", 4);
    fx_profile_thread_unregister(p, brief, 150);
    samples(p, busy, a, 110, 1, 5, 1);
    ck_assert_uint_eq(fx_profile_threads_without_samples(p), 2);
    struct fx_profile *copy = fx_profile_snapshot(p);
    ck_assert_ptr_nonnull(copy);
    ck_assert_uint_eq(fx_profile_thread_count(copy), 3);
    ck_assert_str_eq(copy->threads[0]->name, "busy");
    ck_assert_str_eq(copy->threads[1]->name, "sleeper");
    ck_assert_str_eq(copy->threads[2]->name, "brief"); /* ended in the window: kept */
    ck_assert_uint_eq(fx_profile_threads_without_samples(copy), 2);
    (void)old, (void)sleeper;
    fx_profile_free(copy);
    fx_profile_free(p);
}
END_TEST

/* DestroyJavaVM (main's OS thread once main() returned) with nothing to show has no track: main's
 * track is that thread. With a sample it keeps its track; an empty thread of its own tid too. */
START_TEST(test_profile_window_snapshot_leaves_out_empty_alias_of_main)
{
    struct fx_profile *p = fx_profile_new();
    fx_stack_id a = label(p, "a");
    fx_thread_id main = thread(p, "main", 7), djvm = thread(p, "DestroyJavaVM", 7);
    fx_thread_id sleeper = thread(p, "sleeper", 8);
    fx_profile_set_main_thread(p, main);
    samples(p, main, a, 10, 1, 5, 1);
    ck_assert_uint_eq(fx_profile_threads_aliased(p), 1);
    ck_assert_uint_eq(fx_profile_threads_without_samples(p), 1); /* sleeper */
    struct fx_profile *copy = fx_profile_snapshot(p);
    ck_assert_ptr_nonnull(copy);
    ck_assert_uint_eq(fx_profile_thread_count(copy), 2);
    ck_assert_str_eq(copy->threads[0]->name, "main");
    ck_assert_str_eq(copy->threads[1]->name, "sleeper");
    ck_assert_uint_eq(copy->main_thread, 0);
    fx_profile_free(copy);
    samples(p, djvm, a, 20, 1, 1, 1);
    ck_assert_uint_eq(fx_profile_threads_aliased(p), 0);
    copy = fx_profile_snapshot(p);
    ck_assert_uint_eq(fx_profile_thread_count(copy), 3);
    (void)sleeper;
    fx_profile_free(copy);
    fx_profile_free(p);
}
END_TEST

/* Issue 23: a JVM profiled again and again, starting a thread every few ms. Each thread's track
 * is released when the agent frees the thread; once a reset (or the memory bound) drops what it
 * held, its memory goes and a new thread takes its index. Before, the model kept an entry per
 * thread that ever lived: 1,000 recordings of 50 threads left 50,000. */
START_TEST(test_profile_window_released_threads_go_with_the_window)
{
    struct fx_profile *p = fx_profile_new();
    fx_stack_id a = label(p, "a");
    fx_thread_id live = thread(p, "live", 1);
    size_t first_memory = 0;
    for (int rec = 0; rec < 1000; rec++) {
        int64_t t0 = (int64_t)rec * 1000;
        fx_profile_set_start(p, t0, 0);
        samples(p, live, a, t0 + 1, 1, 5, 1);
        for (int k = 0; k < 50; k++) {
            fx_thread_id t = thread(p, "short-lived thread", 100 + k);
            samples(p, t, a, t0 + 10 + k, 1, 2, 1);
            fx_profile_thread_unregister(p, t, t0 + 12 + k);
            fx_profile_thread_release(p, t); /* its rows keep it until they are dropped */
            ck_assert(!p->threads[t.i]->vacant);
        }
        struct fx_profile *copy = fx_profile_snapshot(p);
        ck_assert_ptr_nonnull(copy);
        ck_assert_uint_eq(fx_profile_thread_count(copy), 51); /* this recording's threads */
        fx_profile_free(copy);
        fx_profile_drop_before(p, INT64_MAX); /* the next start (window.c's reset) */
        if (rec == 0)
            first_memory = fx_profile_memory(p);
    }
    ck_assert_uint_le(fx_profile_thread_count(p), 51);
    ck_assert_uint_le(fx_profile_memory(p), first_memory);
    ck_assert(!p->threads[live.i]->vacant); /* still held by its owner */
    ck_assert_str_eq(p->threads[live.i]->name, "live");
    fx_profile_free(p);
}
END_TEST

/* A released thread that lived in the window stays in snapshots, empty or not, until the window
 * moves past it; a second holder keeps it past that; a vacant index is refused, not written. */
START_TEST(test_profile_window_release_keeps_what_the_window_holds)
{
    struct fx_profile *p = fx_profile_new();
    fx_stack_id a = label(p, "a");
    fx_profile_set_start(p, 100, 0);
    fx_thread_id empty = thread(p, "empty", 1), held = thread(p, "held", 2);
    fx_thread_id main = thread(p, "main", 3);
    fx_profile_set_main_thread(p, main);
    fx_profile_thread_hold(p, held); /* e.g. the markers' host, or an open user interval */
    fx_profile_thread_unregister(p, empty, 150);
    fx_profile_thread_unregister(p, held, 150);
    fx_profile_thread_unregister(p, main, 150);
    fx_profile_thread_release(p, empty);
    fx_profile_thread_release(p, held);
    fx_profile_thread_release(p, main);
    struct fx_profile *copy = fx_profile_snapshot(p);
    ck_assert_uint_eq(fx_profile_thread_count(copy), 3); /* all three lived in the window */
    fx_profile_free(copy);
    fx_profile_drop_before(p, 200);
    ck_assert(p->threads[empty.i]->vacant);
    ck_assert(p->threads[main.i]->vacant);
    ck_assert(!p->threads[held.i]->vacant);
    ck_assert_int_eq(fx_profile_sample(p, empty, 210, a, 0, 1), FX_EINVAL);
    ck_assert_int_eq(fx_profile_sample(p, held, 210, a, 0, 1), FX_OK);
    fx_thread_id next = thread(p, "next", 4);
    ck_assert(next.i == empty.i || next.i == main.i); /* a vacant index is taken again */
    ck_assert_uint_eq(fx_profile_thread_count(p), 3);
    copy = fx_profile_snapshot(p);
    ck_assert_uint_eq(fx_profile_thread_count(copy), 2);
    for (uint32_t i = 0; i < copy->nthreads; i++)
        ck_assert_str_ne(copy->threads[i]->name, "main"); /* freed, not written */
    /* VM death writes the model itself: its vacant slot is left out, as the snapshot leaves it
     * (a thread without a name was written, which fxcheck refused). */
    size_t la, lb;
    char *ja = json_of(p, &la), *jb = json_of(copy, &lb);
    ck_assert_uint_eq(la, lb);
    ck_assert(memcmp(ja, jb, la) == 0);
    free(ja), free(jb);
    fx_profile_free(copy);
    fx_profile_free(p);
}
END_TEST

START_TEST(test_profile_window_snapshot_out_of_memory_returns_null)
{
    struct fx_profile *p = rich_profile();
    struct fx_profile *copy = NULL;
    long n;
    for (n = 1; n < 1000 && copy == NULL; n++) {
        fx_alloc_fail_after(n);
        copy = fx_profile_snapshot(p);
        fx_alloc_fail_after(0);
    }
    ck_assert_ptr_nonnull(copy);
    ck_assert_int_gt(n, 20); /* every earlier allocation failed cleanly (ASan: no leak) */
    fx_profile_free(copy);
    fx_profile_free(p);
}
END_TEST

START_TEST(test_profile_window_table_limit_refuses_new_rows_and_finds_old_ones)
{
    struct fx_profile *p = fx_profile_new();
    fx_stack_id a = label(p, "a");
    fx_profile_set_table_limit(p, 1);
    ck_assert_uint_ge(fx_profile_table_memory(p), 1);
    fx_stack_id again, b;
    ck_assert_int_eq(fx_profile_label_stack(p, "a", FX_CAT_JAVA, &again), FX_OK);
    ck_assert_uint_eq(again.i, a.i);
    uint32_t strings = p->strings.count, stacks = p->stacks.count;
    ck_assert_int_eq(fx_profile_label_stack(p, "b", FX_CAT_JAVA, &b), FX_EFULL);
    fx_frame_id fr = {p->stacks.frame[a.i]};
    ck_assert_int_eq(fx_profile_stack(p, a, fr, &b), FX_EFULL); /* a new prefix: a new row */
    ck_assert_uint_eq(p->strings.count, strings);
    ck_assert_uint_eq(p->stacks.count, stacks);
    fx_thread_id t = thread(p, "t", 1); /* threads and samples are not tables */
    ck_assert_int_eq(fx_profile_sample(p, t, 1, a, 0, 1), FX_OK);
    fx_profile_set_table_limit(p, 0);
    ck_assert_int_eq(fx_profile_label_stack(p, "b", FX_CAT_JAVA, &b), FX_OK);
    fx_profile_free(p);
}
END_TEST

/* Issue 30's one total: the mode's samples by weight with "[idle]" apart (as fxprof reads it:
 * a root "[idle]" stack; a deeper one is code), lock waits (tracing-ms: samples with a stack, a
 * wait's end without one is none) and their µs, idle waits apart (a tracing-ms track marked
 * fx_profile_thread_set_idle_waits: never in the lock waits; its snapshot keeps the mark),
 * allocation rows with bytes > 0. */
START_TEST(test_profile_window_totals_count_each_view_apart)
{
    struct fx_profile *p = fx_profile_new();
    fx_thread_id main = thread(p, "main", 1), locks = thread(p, "main: lock waits", 1);
    fx_stack_id hot = label(p, "App.hot"), idle = label(p, "[idle]"), deep = FX_STACK_NONE;
    fx_frame_id idle_frame = {p->stacks.frame[idle.i]};
    ck_assert_int_eq(fx_profile_stack(p, hot, idle_frame, &deep), FX_OK);
    samples(p, main, hot, 10, 1, 3, 2);  /* 3 samples weighing 2 */
    samples(p, main, idle, 20, 1, 4, 1); /* [idle] */
    samples(p, main, deep, 30, 1, 1, 1); /* App.hot;[idle]: code, not idle */
    ck_assert_int_eq(fx_profile_sample(p, main, 40, FX_STACK_NONE, -1, 1), FX_OK);
    ck_assert_int_eq(fx_profile_thread_set_weight_type(p, locks, FX_WEIGHT_TRACING_MS), FX_OK);
    ck_assert_int_eq(fx_profile_sample(p, locks, 10, hot, -1, 1500), FX_OK);
    ck_assert_int_eq(fx_profile_sample(p, locks, 12, FX_STACK_NONE, -1, 0), FX_OK); /* its end */
    fx_thread_id pool = thread(p, "pool: idle waits", 2);
    ck_assert_int_eq(fx_profile_thread_set_weight_type(p, pool, FX_WEIGHT_TRACING_MS), FX_OK);
    ck_assert_int_eq(fx_profile_thread_set_idle_waits(p, pool), FX_OK);
    ck_assert_int_eq(fx_profile_thread_set_idle_waits(p, (fx_thread_id){999}), FX_EINVAL);
    ck_assert_int_eq(fx_profile_sample(p, pool, 10, hot, -1, 7000), FX_OK);
    ck_assert_int_eq(fx_profile_sample(p, pool, 17, FX_STACK_NONE, -1, 0), FX_OK);
    ck_assert_int_eq(fx_profile_sample(p, pool, 20, hot, -1, 3000), FX_OK);
    ck_assert_int_eq(fx_profile_alloc(p, main, 50, hot, 4096, 7), FX_OK);
    ck_assert_int_eq(fx_profile_alloc_free(p, 60, 7), FX_OK);
    struct fx_profile_totals t;
    fx_profile_totals(p, &t);
    ck_assert_uint_eq(t.cpu, 3 * 2 + 1 + 1);
    ck_assert_uint_eq(t.cpu_rows, 5);
    ck_assert_uint_eq(t.idle, 4);
    ck_assert_uint_eq(t.waits, 1);
    ck_assert_uint_eq(t.wait_us, 1500);
    ck_assert_uint_eq(t.idle_waits, 2);
    ck_assert_uint_eq(t.idle_wait_us, 10000);
    ck_assert_uint_eq(t.allocations, 1);
    ck_assert_int_eq(t.alloc_bytes, 4096);
    struct fx_profile *snap = fx_profile_snapshot(p);
    ck_assert_ptr_nonnull(snap);
    fx_profile_totals(snap, &t);
    ck_assert_uint_eq(t.waits, 1);
    ck_assert_uint_eq(t.idle_waits, 2);
    ck_assert_uint_eq(t.idle_wait_us, 10000);
    fx_profile_free(snap);
    fx_profile_free(p);
}
END_TEST

static Suite *profile_window_suite(void)
{
    Suite *s = suite_create("profile_window");
    TCase *tc = tcase_create("window");
    tcase_add_test(tc, test_profile_window_cut_time_is_the_nth_oldest_sample_plus_one);
    tcase_add_test(tc, test_profile_window_drop_before_keeps_newer_samples_with_their_columns);
    tcase_add_test(tc, test_profile_window_drop_gives_sample_memory_back);
    tcase_add_test(tc, test_profile_window_drop_keeps_newer_markers_and_start_end_halves);
    tcase_add_test(tc, test_profile_window_drop_removes_old_counter_values);
    tcase_add_test(tc, test_profile_window_drop_markers_in_runs_keeps_each_row_with_its_values);
    tcase_add_test(tc, test_profile_window_snapshot_writes_the_same_json);
    tcase_add_test(tc, test_profile_window_snapshot_leaves_out_ended_empty_threads);
    tcase_add_test(tc, test_profile_window_snapshot_keeps_empty_threads_of_the_window);
    tcase_add_test(tc, test_profile_window_snapshot_leaves_out_empty_alias_of_main);
    tcase_add_test(tc, test_profile_window_snapshot_out_of_memory_returns_null);
    tcase_add_test(tc, test_profile_window_released_threads_go_with_the_window);
    tcase_add_test(tc, test_profile_window_release_keeps_what_the_window_holds);
    tcase_add_test(tc, test_profile_window_table_limit_refuses_new_rows_and_finds_old_ones);
    tcase_add_test(tc, test_profile_window_totals_count_each_view_apart);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(profile_window_suite());
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
