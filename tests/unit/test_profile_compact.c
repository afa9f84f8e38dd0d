/* SPDX-License-Identifier: Apache-2.0 */
/* Compaction of the interned tables (core/model/profile_compact.c): periods of distinct stacks that
 * each fit the table limit never fill it when every reset compacts; what samples and markers
 * reach survives with the same text; a failed compaction changes nothing. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_profile.h"

/* core/ keeps the model's layout private; its own tests read the tables. */
#include "../../core/model/fx_profile_internal.h"

#define DEPTH   8
#define STACKS  64 /* distinct stacks per period */
#define PERIODS 40
#define LIMIT   (64 * 1024) /* tables: one period needs well under this, 40 periods far more */

/* A stack of DEPTH frames whose methods are unique to (period, i): nothing is shared. */
static int distinct_stack(struct fx_profile *p, int period, int i, fx_stack_id *out)
{
    fx_stack_id s = FX_STACK_NONE;
    for (int d = 0; d < DEPTH; d++) {
        char name[96];
        snprintf(name, sizeof(name), "com.example.Period%d.method%d_%d", period, i, d);
        struct fx_func_key fk = {.resource = FX_STR_NONE, .source = FX_STR_NONE, .line = d};
        fx_func_id f = {0};
        fx_frame_id fr;
        int rc = fx_profile_cstring(p, name, &fk.name);
        if (rc == FX_OK)
            rc = fx_profile_func(p, &fk, &f);
        struct fx_frame_key k = {.func = f, .line = d + 1, .category = FX_CAT_JAVA};
        if (rc == FX_OK)
            rc = fx_profile_frame(p, &k, &fr);
        if (rc == FX_OK)
            rc = fx_profile_stack(p, s, fr, &s);
        if (rc != FX_OK)
            return rc;
    }
    *out = s;
    return FX_OK;
}

/* Runs PERIODS periods (samples, then a reset); returns the samples whose stack did not fit.
 * max_tables: the largest table memory seen right after a reset. */
static unsigned run_periods(bool compact, size_t *max_tables)
{
    struct fx_profile *p = fx_profile_new();
    fx_thread_id t;
    ck_assert_int_eq(fx_profile_thread_add(p, "worker", 1, 0, &t), FX_OK);
    fx_profile_set_table_limit(p, LIMIT);
    unsigned full = 0;
    int64_t now = 0;
    *max_tables = 0;
    for (int period = 0; period < PERIODS; period++) {
        for (int i = 0; i < STACKS; i++) {
            fx_stack_id s;
            int rc = distinct_stack(p, period, i, &s);
            if (rc == FX_EFULL) {
                full++;
                continue;
            }
            ck_assert_int_eq(rc, FX_OK);
            ck_assert_int_eq(fx_profile_sample(p, t, now++, s, -1, 1), FX_OK);
        }
        fx_profile_drop_before(p, INT64_MAX); /* what the agent's reset does */
        if (compact)
            ck_assert_int_eq(fx_profile_compact(p), FX_OK);
        size_t m = fx_profile_table_memory(p);
        *max_tables = m > *max_tables ? m : *max_tables;
    }
    fx_profile_free(p);
    return full;
}

START_TEST(test_profile_compact_periods_of_distinct_stacks_never_fill_the_tables)
{
    size_t max_tables;
    ck_assert_uint_eq(run_periods(true, &max_tables), 0);
    ck_assert_uint_eq(max_tables, 0); /* nothing held after a reset: nothing kept */
}
END_TEST

START_TEST(test_profile_compact_without_it_the_same_periods_fill_the_tables)
{
    size_t max_tables;
    ck_assert_uint_gt(run_periods(false, &max_tables), 0); /* the limit is really reached */
    ck_assert_uint_ge(max_tables, LIMIT);
}
END_TEST

/* "name@line/name@line/..." from the root to the leaf of a sample's stack. */
static void stack_text(const struct fx_profile *p, uint32_t s, char *out, size_t cap)
{
    char tmp[1024];
    out[0] = '\0';
    for (; s != FX_NONE_ID; s = p->stacks.prefix[s]) {
        uint32_t fr = p->stacks.frame[s];
        size_t len;
        const char *n =
                fx_profile_string_at(p, (fx_str_id){p->funcs.name[p->frames.func[fr]]}, &len);
        snprintf(tmp, sizeof(tmp), "%s@%d/%s", n, p->frames.line[fr], out);
        snprintf(out, cap, "%s", tmp);
    }
}

static const struct fx_marker_field text_field[] = {{"text", "Text", FX_FMT_STRING}};
static const struct fx_marker_schema text_schema = {
        .name = "FxTest", .display = FX_DISPLAY_TABLE, .fields = text_field, .n_fields = 1};

/* Samples of periods 0..2 on two threads, a START marker with a string field, then the
 * samples older than period 2 dropped. */
static struct fx_profile *half_dropped(fx_thread_id *t1)
{
    struct fx_profile *p = fx_profile_new();
    fx_thread_id t2;
    ck_assert_int_eq(fx_profile_thread_add(p, "a", 1, 0, t1), FX_OK);
    ck_assert_int_eq(fx_profile_thread_add(p, "b", 2, 0, &t2), FX_OK);
    for (int period = 0; period < 3; period++) {
        for (int i = 0; i < 5; i++) {
            fx_stack_id s;
            ck_assert_int_eq(distinct_stack(p, period, i, &s), FX_OK);
            ck_assert_int_eq(fx_profile_sample(p, i % 2 ? t2 : *t1, period * 100 + i, s, 7, 1),
                             FX_OK);
        }
    }
    fx_schema_id schema;
    fx_str_id name, text;
    ck_assert_int_eq(fx_profile_schema(p, &text_schema, &schema), FX_OK);
    ck_assert_int_eq(fx_profile_cstring(p, "open request", &name), FX_OK);
    ck_assert_int_eq(fx_profile_cstring(p, "GET /index", &text), FX_OK);
    union fx_marker_value v[1] = {{.s = text}};
    ck_assert_int_eq(
            fx_profile_marker(p, *t1, name, FX_PHASE_START, FX_CAT_OTHER, 10, 0, schema, v), FX_OK);
    fx_profile_drop_before(p, 200);
    return p;
}

START_TEST(test_profile_compact_keeps_what_samples_and_markers_reach)
{
    fx_thread_id t1;
    struct fx_profile *p = half_dropped(&t1);
    char before[5][1024], after[1024];
    for (int i = 0; i < 5; i++) {
        const struct fx_samples *s = &p->threads[i % 2 ? 1 : 0]->samples;
        stack_text(p, s->stack[i / 2], before[i], sizeof(before[i]));
    }
    uint32_t gen = fx_profile_generation(p);
    ck_assert_int_eq(fx_profile_compact(p), FX_OK);
    ck_assert_uint_eq(fx_profile_generation(p), gen + 1);
    ck_assert_uint_eq(fx_profile_sample_count(p), 5);
    ck_assert_uint_eq(p->stacks.count, 5 * DEPTH); /* period 2's stacks only */
    ck_assert_uint_eq(p->frames.count, 5 * DEPTH);
    ck_assert_uint_eq(p->funcs.count, 5 * DEPTH);
    ck_assert_uint_eq(p->strings.count, 5 * DEPTH + 2); /* + the marker's two strings */
    for (int i = 0; i < 5; i++) {
        const struct fx_samples *s = &p->threads[i % 2 ? 1 : 0]->samples;
        stack_text(p, s->stack[i / 2], after, sizeof(after));
        ck_assert_str_eq(after, before[i]);
        ck_assert_uint_eq(s->cpu_ns[i / 2], 7);
    }
    const struct fx_markers *m = &p->threads[t1.i]->markers;
    ck_assert_uint_eq(m->count, 1);
    ck_assert_str_eq(fx_profile_string_at(p, (fx_str_id){m->name[0]}, NULL), "open request");
    ck_assert_str_eq(fx_profile_string_at(p, m->values[m->values_at[0]].s, NULL), "GET /index");
    fx_profile_free(p);
}
END_TEST

/* A marker's cause stack keeps its stack alive through a compaction and is renumbered with
 * it; a snapshot copies the column. */
START_TEST(test_profile_compact_keeps_and_remaps_marker_cause_stacks)
{
    fx_thread_id t1;
    struct fx_profile *p = half_dropped(&t1);
    fx_stack_id cause;
    ck_assert_int_eq(distinct_stack(p, 0, 3, &cause), FX_OK); /* period 0: no sample holds it */
    ck_assert_int_eq(fx_profile_marker_stack(p, t1, cause), FX_OK);
    char before[1024], after[1024];
    stack_text(p, cause.i, before, sizeof(before));
    ck_assert_int_eq(fx_profile_compact(p), FX_OK);
    ck_assert_uint_eq(p->stacks.count, 5 * DEPTH + DEPTH); /* period 2's and the cause's */
    const struct fx_markers *m = &p->threads[t1.i]->markers;
    ck_assert_ptr_nonnull(m->cause_stack);
    stack_text(p, m->cause_stack[0], after, sizeof(after));
    ck_assert_str_eq(after, before);
    struct fx_profile *copy = fx_profile_snapshot(p);
    ck_assert_ptr_nonnull(copy);
    stack_text(copy, copy->threads[0]->markers.cause_stack[0], after, sizeof(after));
    ck_assert_str_eq(after, before);
    fx_profile_free(copy);
    fx_profile_free(p);
}
END_TEST

START_TEST(test_profile_compact_rebuilt_index_finds_kept_rows_and_adds_new_ones)
{
    fx_thread_id t1;
    struct fx_profile *p = half_dropped(&t1);
    ck_assert_int_eq(fx_profile_compact(p), FX_OK);
    uint32_t stacks = p->stacks.count;
    fx_stack_id again;
    ck_assert_int_eq(distinct_stack(p, 2, 0, &again), FX_OK); /* kept: found, not added */
    ck_assert_uint_eq(p->stacks.count, stacks);
    ck_assert_uint_eq(again.i, p->threads[t1.i]->samples.stack[0]);
    fx_stack_id fresh;
    ck_assert_int_eq(distinct_stack(p, 0, 0, &fresh), FX_OK); /* dropped: added again */
    ck_assert_uint_eq(p->stacks.count, stacks + DEPTH);
    fx_profile_free(p);
}
END_TEST

START_TEST(test_profile_compact_out_of_memory_changes_nothing)
{
    fx_thread_id t1;
    struct fx_profile *p = half_dropped(&t1);
    uint32_t stacks = p->stacks.count, gen = fx_profile_generation(p);
    uint32_t first = p->threads[t1.i]->samples.stack[0];
    int rc = FX_ENOMEM;
    long n;
    for (n = 1; n < 10000 && rc != FX_OK; n++) {
        fx_alloc_fail_after(n);
        rc = fx_profile_compact(p);
        fx_alloc_fail_after(0);
        if (rc != FX_OK) {
            ck_assert_int_eq(rc, FX_ENOMEM);
            ck_assert_uint_eq(p->stacks.count, stacks);
            ck_assert_uint_eq(fx_profile_generation(p), gen);
            ck_assert_uint_eq(p->threads[t1.i]->samples.stack[0], first);
        }
    }
    ck_assert_int_eq(rc, FX_OK);
    ck_assert_int_gt(n, 10); /* every earlier allocation failed cleanly */
    ck_assert_uint_eq(p->stacks.count, 5 * DEPTH);
    fx_profile_free(p);
}
END_TEST

START_TEST(test_profile_compact_snapshot_taken_before_stays_valid)
{
    fx_thread_id t1;
    struct fx_profile *p = half_dropped(&t1);
    struct fx_profile *copy = fx_profile_snapshot(p);
    ck_assert_ptr_nonnull(copy);
    char before[1024], after[1024];
    stack_text(copy, copy->threads[0]->samples.stack[0], before, sizeof(before));
    fx_profile_drop_before(p, INT64_MAX);
    ck_assert_int_eq(fx_profile_compact(p), FX_OK);
    stack_text(copy, copy->threads[0]->samples.stack[0], after, sizeof(after));
    ck_assert_str_eq(after, before);
    ck_assert_uint_eq(copy->stacks.count, 15 * DEPTH);
    fx_profile_free(copy);
    fx_profile_free(p);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("profile_compact");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_profile_compact_periods_of_distinct_stacks_never_fill_the_tables);
    tcase_add_test(tc, test_profile_compact_without_it_the_same_periods_fill_the_tables);
    tcase_add_test(tc, test_profile_compact_keeps_what_samples_and_markers_reach);
    tcase_add_test(tc, test_profile_compact_keeps_and_remaps_marker_cause_stacks);
    tcase_add_test(tc, test_profile_compact_rebuilt_index_finds_kept_rows_and_adds_new_ones);
    tcase_add_test(tc, test_profile_compact_out_of_memory_changes_nothing);
    tcase_add_test(tc, test_profile_compact_snapshot_taken_before_stays_valid);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
