/* SPDX-License-Identifier: Apache-2.0 */
/* Allocations in the model (core/model/profile_allocs.c, issue 17): a free mirrors its allocation
 * on the allocating thread; frees of unknown or dropped allocations are refused; dropping by
 * time keeps each allocation with its free; compaction renumbers the allocation stacks (rows and
 * live map); memory counts the rows, and the threads' share of it, kept as each thread changes,
 * equals a recount over every thread; the writer emits the balanced nativeAllocations table; and
 * fx_jtype_name names allocated classes. */
#include <cJSON.h>
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "fx_err.h"
#include "fx_ff_writer.h"
#include "fx_jtype.h"
#include "fx_jvm_markers.h"
#include "fx_profile.h"
#include "fx_sink.h"

#include "../../core/model/fx_profile_internal.h"
#include "../../core/model/fx_profile_model.h"

static fx_stack_id label(struct fx_profile *p, const char *name)
{
    fx_stack_id s = FX_STACK_NONE;
    ck_assert_int_eq(fx_profile_label_stack(p, name, FX_CAT_ALLOC, &s), FX_OK);
    return s;
}

static fx_thread_id thread(struct fx_profile *p, const char *name, int64_t tid)
{
    fx_thread_id t = {FX_NONE_ID};
    ck_assert_int_eq(fx_profile_thread_add(p, name, tid, 0, &t), FX_OK);
    return t;
}

static const char *stack_name(const struct fx_profile *p, uint32_t stack)
{
    uint32_t func = p->frames.func[p->stacks.frame[stack]];
    return fx_profile_string_at(p, (fx_str_id){p->funcs.name[func]}, NULL);
}

START_TEST(test_profile_allocs_free_mirrors_its_allocation_on_the_allocating_thread)
{
    struct fx_profile *p = fx_profile_new();
    fx_thread_id t1 = thread(p, "t1", 11), t2 = thread(p, "t2", 12);
    fx_stack_id a = label(p, "byte[]"), b = label(p, "java.lang.String");
    ck_assert_int_eq(fx_profile_alloc(p, t1, 100, a, 1000, 7), FX_OK);
    ck_assert_int_eq(fx_profile_alloc(p, t2, 110, b, 500, 8), FX_OK);
    ck_assert_int_eq(fx_profile_alloc(p, t2, 120, b, 500, 7), FX_EINVAL); /* 7 is alive */
    ck_assert_int_eq(fx_profile_alloc(p, t1, 120, a, 0, 9), FX_EINVAL);
    ck_assert_int_eq(fx_profile_alloc(p, t1, 120, a, 10, 0), FX_EINVAL);
    ck_assert_uint_eq(fx_profile_alloc_live(p), 2);
    ck_assert_int_eq(fx_profile_alloc_free(p, 130, 7), FX_OK);
    ck_assert_int_eq(fx_profile_alloc_free(p, 140, 7), FX_ENOTFOUND); /* freed already */
    ck_assert_int_eq(fx_profile_alloc_free(p, 140, 99), FX_ENOTFOUND);
    const struct fx_allocs *r = &p->threads[t1.i]->allocs;
    ck_assert_uint_eq(r->count, 2);
    ck_assert_int_eq(r->bytes[1], -1000);
    ck_assert_uint_eq(r->address[1], 7);
    ck_assert_uint_eq(r->stack[1], a.i);
    ck_assert_int_eq(r->time_ns[1], 130);
    ck_assert_uint_eq(p->threads[t2.i]->allocs.count, 1);
    ck_assert_uint_eq(fx_profile_alloc_live(p), 1);
    ck_assert_uint_eq(fx_profile_alloc_count(p), 3);
    fx_profile_free(p);
}
END_TEST

/* Many entries: the map grows and backward-shift deletion keeps every other key findable. */
START_TEST(test_profile_allocs_live_map_survives_growth_and_deletion)
{
    struct fx_profile *p = fx_profile_new();
    fx_thread_id t = thread(p, "t", 1);
    fx_stack_id a = label(p, "x");
    for (uint64_t i = 1; i <= 5000; i++)
        ck_assert_int_eq(fx_profile_alloc(p, t, (int64_t)i, a, (int64_t)i, i * 977), FX_OK);
    for (uint64_t i = 1; i <= 5000; i += 2)
        ck_assert_int_eq(fx_profile_alloc_free(p, 6000, i * 977), FX_OK);
    ck_assert_uint_eq(fx_profile_alloc_live(p), 2500);
    for (uint64_t i = 2; i <= 5000; i += 2)
        ck_assert_int_eq(fx_profile_alloc_free(p, 7000, i * 977), FX_OK);
    ck_assert_uint_eq(fx_profile_alloc_live(p), 0);
    ck_assert_uint_eq(p->threads[t.i]->allocs.count, 10000);
    fx_profile_free(p);
}
END_TEST

/* An allocation dropped by time takes its newer free with it; a live one dropped is forgotten,
 * so its later free is refused instead of leaving negative retained bytes. */
START_TEST(test_profile_allocs_drop_keeps_allocation_and_free_together)
{
    struct fx_profile *p = fx_profile_new();
    fx_thread_id t = thread(p, "t", 1);
    fx_stack_id a = label(p, "x");
    ck_assert_int_eq(fx_profile_alloc(p, t, 100, a, 10, 1), FX_OK); /* freed at 300 */
    ck_assert_int_eq(fx_profile_alloc(p, t, 110, a, 20, 2), FX_OK); /* alive, dropped */
    ck_assert_int_eq(fx_profile_alloc(p, t, 250, a, 30, 3), FX_OK); /* freed at 310, kept */
    ck_assert_int_eq(fx_profile_alloc_free(p, 300, 1), FX_OK);
    ck_assert_int_eq(fx_profile_alloc_free(p, 310, 3), FX_OK);
    ck_assert_int_eq(fx_profile_alloc(p, t, 320, a, 40, 4), FX_OK); /* alive, kept */
    ck_assert_int_eq(fx_profile_cut_time(p, 2), 111);
    ck_assert_uint_eq(fx_profile_drop_before(p, 200), 0); /* no samples dropped */
    const struct fx_allocs *r = &p->threads[t.i]->allocs;
    ck_assert_uint_eq(r->count, 3);
    uint64_t want_addr[] = {3, 3, 4};
    int64_t want_bytes[] = {30, -30, 40};
    for (unsigned i = 0; i < 3; i++) {
        ck_assert_uint_eq(r->address[i], want_addr[i]);
        ck_assert_int_eq(r->bytes[i], want_bytes[i]);
    }
    ck_assert_int_eq(fx_profile_alloc_free(p, 400, 2), FX_ENOTFOUND);
    ck_assert_uint_eq(fx_profile_alloc_live(p), 1);
    ck_assert_int_eq(fx_profile_alloc_free(p, 400, 4), FX_OK);
    ck_assert_int_eq(fx_profile_oldest_sample(p), 250);
    fx_profile_drop_before(p, INT64_MAX);
    ck_assert_uint_eq(fx_profile_alloc_count(p), 0);
    ck_assert_uint_eq(p->threads[t.i]->allocs.cap, 0); /* memory given back */
    fx_profile_free(p);
}
END_TEST

/* The stacks only allocations hold survive compaction, renumbered in rows and in the live map
 * (a free after the compaction copies the new id). */
START_TEST(test_profile_allocs_compaction_walks_allocation_stacks)
{
    struct fx_profile *p = fx_profile_new();
    fx_thread_id t = thread(p, "t", 1);
    label(p, "unused-1");
    label(p, "unused-2");
    fx_stack_id a = label(p, "byte[]"), b = label(p, "int[]");
    ck_assert_int_eq(fx_profile_sample(p, t, 50, b, -1, 1), FX_OK);
    ck_assert_int_eq(fx_profile_alloc(p, t, 100, a, 10, 1), FX_OK);
    ck_assert_int_eq(fx_profile_alloc(p, t, 110, a, 20, 2), FX_OK);
    ck_assert_int_eq(fx_profile_alloc_free(p, 120, 1), FX_OK);
    ck_assert_int_eq(fx_profile_compact(p), FX_OK);
    ck_assert_uint_eq(p->stacks.count, 2);
    const struct fx_allocs *r = &p->threads[t.i]->allocs;
    for (unsigned i = 0; i < r->count; i++)
        ck_assert_str_eq(stack_name(p, r->stack[i]), "byte[]");
    ck_assert_str_eq(stack_name(p, p->threads[t.i]->samples.stack[0]), "int[]");
    ck_assert_int_eq(fx_profile_alloc_free(p, 130, 2), FX_OK);
    ck_assert_str_eq(stack_name(p, r->stack[r->count - 1]), "byte[]");
    fx_profile_free(p);
}
END_TEST

START_TEST(test_profile_allocs_memory_counts_rows_and_snapshot_copies_them)
{
    struct fx_profile *p = fx_profile_new();
    fx_thread_id t = thread(p, "t", 1);
    fx_stack_id a = label(p, "x");
    size_t before = fx_profile_memory(p);
    for (uint64_t i = 1; i <= 1000; i++)
        ck_assert_int_eq(fx_profile_alloc(p, t, (int64_t)i, a, 8, i), FX_OK);
    ck_assert_uint_ge(fx_profile_memory(p) - before, 1000 * 28);
    struct fx_profile *s = fx_profile_snapshot(p);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(fx_profile_alloc_count(s), 1000);
    ck_assert_int_eq(memcmp(s->threads[0]->allocs.address, p->threads[t.i]->allocs.address,
                            1000 * sizeof(uint64_t)),
                     0);
    fx_profile_free(s);
    fx_profile_free(p);
}
END_TEST

static cJSON *written(const struct fx_profile *p)
{
    struct fx_membuf mb = {0};
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_ff_write(p, fx_membuf_sink(&mb), &eb), FX_OK);
    cJSON *root = cJSON_ParseWithLength(mb.data, mb.len);
    free(mb.data);
    ck_assert_ptr_nonnull(root);
    return root;
}

/* fx_profile_memory keeps the threads' share as they change (O(1) per drain pass, not a sum over
 * every thread): after adds that grow every kind of column, frees, a drop, a thread released
 * and its slot taken again, a rename and a copy, it equals the full recount. */
#define memory_is_recount(p) ck_assert_uint_eq(fx_profile_memory(p), fx_profile_memory_recount(p))

START_TEST(test_profile_allocs_memory_kept_per_thread_equals_the_recount)
{
    struct fx_profile *p = fx_profile_new();
    fx_thread_id t[3] = {thread(p, "a", 1), thread(p, "bb", 2), thread(p, "ccc", 3)};
    fx_stack_id s = label(p, "byte[]");
    memory_is_recount(p);
    size_t empty = fx_profile_memory(p);
    uint64_t tag = 1;
    for (int64_t i = 0; i < 300; i++) { /* every column grows past a few capacities */
        fx_thread_id th = t[i % 3];
        ck_assert_int_eq(fx_profile_sample(p, th, 10 + i, s, 5, i % 7 == 0 ? 3 : 1), FX_OK);
        ck_assert_int_eq(fx_jvm_markers_user(p, th, FX_PHASE_INSTANT, 10 + i, 0, "m", 1, "x", 1),
                         FX_OK);
        ck_assert_int_eq(fx_profile_alloc(p, th, 10 + i, s, 100, tag++), FX_OK);
        if (i % 2 == 0)
            ck_assert_int_eq(fx_profile_alloc_free(p, 11 + i, tag - 1), FX_OK);
    }
    memory_is_recount(p);
    ck_assert_uint_gt(fx_profile_memory(p), empty + 300 * 3 * 8);
    ck_assert_int_eq(fx_profile_thread_set_name(p, t[0], "a much longer name than before"), FX_OK);
    memory_is_recount(p);
    size_t full = fx_profile_memory(p);
    fx_profile_thread_unregister(p, t[1], 200);
    fx_profile_thread_release(p, t[1]);
    ck_assert(fx_profile_drop_before(p, 400) > 0); /* t[1] holds nothing then: vacated */
    memory_is_recount(p);
    ck_assert_uint_lt(fx_profile_memory(p), full);
    fx_thread_id again = thread(p, "again", 4); /* takes t[1]'s slot */
    ck_assert_uint_eq(again.i, t[1].i);
    ck_assert_int_eq(fx_profile_sample(p, again, 400, s, 5, 1), FX_OK);
    memory_is_recount(p);
    struct fx_profile *c = fx_profile_snapshot(p);
    ck_assert_ptr_nonnull(c);
    memory_is_recount(c);
    fx_profile_free(c);
    fx_profile_free(p);
}
END_TEST

START_TEST(test_profile_allocs_writer_emits_the_balanced_table)
{
    struct fx_profile *p = fx_profile_new();
    fx_profile_set_start(p, 1000000, 0);
    fx_thread_id t1 = thread(p, "alloc", 42), t2 = thread(p, "none", 43);
    (void)t2;
    fx_stack_id a = label(p, "byte[]");
    ck_assert_int_eq(fx_profile_alloc(p, t1, 2000000, a, 4096, 5), FX_OK);
    ck_assert_int_eq(fx_profile_alloc_free(p, 3500000, 5), FX_OK);
    cJSON *root = written(p);
    const cJSON *threads = cJSON_GetObjectItem(root, "threads");
    const cJSON *na = cJSON_GetObjectItem(cJSON_GetArrayItem(threads, 0), "nativeAllocations");
    ck_assert_ptr_nonnull(na);
    ck_assert_ptr_null(cJSON_GetObjectItem(cJSON_GetArrayItem(threads, 1), "nativeAllocations"));
    ck_assert_str_eq(cJSON_GetObjectItem(na, "weightType")->valuestring, "bytes");
    ck_assert_int_eq(cJSON_GetObjectItem(na, "length")->valueint, 2);
    struct {
        const char *col;
        double v0, v1;
    } want[] = {{"time", 1.0, 2.5},
                {"weight", 4096, -4096},
                {"stack", a.i, a.i},
                {"memoryAddress", 5, 5},
                {"threadId", 42, 42}};
    for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const cJSON *c = cJSON_GetObjectItem(na, want[i].col);
        ck_assert_msg(cJSON_GetArraySize(c) == 2, "%s", want[i].col);
        ck_assert_double_eq_tol(cJSON_GetArrayItem(c, 0)->valuedouble, want[i].v0, 1e-9);
        ck_assert_double_eq_tol(cJSON_GetArrayItem(c, 1)->valuedouble, want[i].v1, 1e-9);
    }
    cJSON_Delete(root);
    fx_profile_free(p);
}
END_TEST

START_TEST(test_profile_allocs_jtype_names)
{
    char out[64];
    struct {
        const char *sig, *name;
    } ok[] = {{"[B", "byte[]"},
              {"Ljava/lang/String;", "java.lang.String"},
              {"[[Ljava/lang/Object;", "java.lang.Object[][]"},
              {"[[[J", "long[][][]"},
              {"Z", "boolean"}};
    for (unsigned i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        int n = fx_jtype_name(ok[i].sig, strlen(ok[i].sig), out, sizeof(out));
        ck_assert_int_eq(n, (int)strlen(ok[i].name));
        ck_assert_str_eq(out, ok[i].name);
    }
    const char *bad[] = {"", "[", "L;", "Ljava/lang/String", "Q", "[BB"};
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_int_eq(fx_jtype_name(bad[i], strlen(bad[i]), out, sizeof(out)), FX_EINVAL);
    ck_assert_int_eq(fx_jtype_name("[[B", 3, out, 8), FX_ERANGE);
    ck_assert_int_eq(fx_jtype_name("[[B", 3, out, 9), 8);
}
END_TEST

static Suite *profile_allocs_suite(void)
{
    Suite *s = suite_create("profile_allocs");
    TCase *tc = tcase_create("allocs");
    tcase_add_test(tc, test_profile_allocs_free_mirrors_its_allocation_on_the_allocating_thread);
    tcase_add_test(tc, test_profile_allocs_live_map_survives_growth_and_deletion);
    tcase_add_test(tc, test_profile_allocs_drop_keeps_allocation_and_free_together);
    tcase_add_test(tc, test_profile_allocs_compaction_walks_allocation_stacks);
    tcase_add_test(tc, test_profile_allocs_memory_counts_rows_and_snapshot_copies_them);
    tcase_add_test(tc, test_profile_allocs_memory_kept_per_thread_equals_the_recount);
    tcase_add_test(tc, test_profile_allocs_writer_emits_the_balanced_table);
    tcase_add_test(tc, test_profile_allocs_jtype_names);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(profile_allocs_suite());
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
