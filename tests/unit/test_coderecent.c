/* SPDX-License-Identifier: Apache-2.0 */
/* The code table's two levels (agent/sampling/coderecent.h, issue 31), without a JVM: the
 * handler's lookup over a base table and a recent one (the newest range holding a pc wins, a
 * newer overlapping range or an unload makes an older one gone, the base's included), the swap
 * at a publish (the recent table a handler holds is never written again while it may read it),
 * a full recent table (its changes wait for the next base table, and the drain is asked to come),
 * and, over many random publishes, the lookup never giving a range the next base table does not
 * have. Also coderecent.c's writer and codemap.c's publish (VMStructs stubbed: no layouts). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#include "vmstructs_none.h"

/* the base table: two ranges after the table's header (a flexible array: no struct around it) */
static _Alignas(struct fx_code_table) unsigned char base_mem[sizeof(struct fx_code_table) +
                                                             2 * sizeof(struct fx_code_range)];
static struct fx_code_table *base_table(void)
{
    struct fx_code_table *t = (struct fx_code_table *)base_mem;
    if (t->n == 0) {
        t->n = 2;
        t->r[0] = (struct fx_code_range){.begin = 100, .end = 200, .name = 1};
        t->r[1] = (struct fx_code_range){.begin = 300, .end = 400, .name = 2};
    }
    return t;
}
static struct fx_code_recent recent;

static void add(uintptr_t begin, uintptr_t end, uint64_t name, bool removed)
{
    struct fx_code_range r = {.begin = begin, .end = end, .name = name, .kind = FX_BLOB_NMETHOD};
    ck_assert_uint_gt(fx_coderecent_add(&recent, &r, removed), 0);
}

/* the name of the range found at pc, 0 for none */
static uint64_t at(uintptr_t pc)
{
    const struct fx_code_range *r = fx_recover_find(base_table(), pc);
    return r != NULL ? r->name : 0;
}

START_TEST(test_coderecent_newest_wins_over_the_base)
{
    base_table()->recent = &recent;
    ck_assert_uint_eq(at(150), 1); /* nothing recent: the base */
    add(500, 600, 3, false);
    ck_assert_uint_eq(at(550), 3); /* new code, not in the base: found at once */
    ck_assert_uint_eq(at(150), 1);
    add(150, 250, 4, false); /* over the base's [100, 200): that code is gone, all of it */
    ck_assert_uint_eq(at(160), 4);
    ck_assert_uint_eq(at(120), 0);
    ck_assert_uint_eq(at(240), 4);
    add(160, 170, 5, false); /* newer still, inside 4: 4 is gone too (the fold keeps only 5) */
    ck_assert_uint_eq(at(165), 5);
    ck_assert_uint_eq(at(155), 0);
    add(500, 600, 6, false); /* the same block again: the newest of two at one begin */
    ck_assert_uint_eq(at(550), 6);
    add(300, 0, 2, true); /* the base's [300, 400) unloaded */
    ck_assert_uint_eq(at(310), 0);
    add(500, 0, 3, true); /* an unload of the older method at 500: 6 stays */
    ck_assert_uint_eq(at(550), 6);
    add(500, 0, 6, true);
    ck_assert_uint_eq(at(550), 0);
    add(500, 520, 7, false); /* loaded again after its unload */
    ck_assert_uint_eq(at(510), 7);
    ck_assert_uint_eq(at(530), 0);
    ck_assert_uint_eq(at(99), 0);
    base_table()->recent = NULL;
    ck_assert_uint_eq(at(150), 1); /* the base alone: unchanged */
    ck_assert_ptr_null(fx_recover_find(NULL, 150));
}
END_TEST

START_TEST(test_coderecent_entry_carries_the_range)
{
    /* what the handler gets from the recent table is the range as the callback made it */
    struct fx_code_range r = {.begin = 1000,
                              .end = 1100,
                              .blob = 900,
                              .name = 42,
                              .verified = 32,
                              .complete = 40,
                              .compile_id = 77,
                              .frame_words = 6,
                              .stubs = 80,
                              .kind = FX_BLOB_NMETHOD,
                              .level = 4,
                              .flags = FX_RANGE_SELF_INLINE};
    ck_assert_uint_eq(fx_coderecent_add(&recent, &r, false), 1);
    base_table()->recent = &recent;
    const struct fx_code_range *f = fx_recover_find(base_table(), 1050);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(memcmp(f, &r, sizeof(r)), 0);
}
END_TEST

static uint8_t heap[1024 * 64];

static bool load(int slot, int size, uintptr_t method)
{
    return fx_codemap_compiled_load((jmethodID)method, heap + slot * 64, size, NULL);
}

static uint64_t find(int slot)
{
    const struct fx_code_range *r =
            fx_recover_find(fx_sig.code_table, (uintptr_t)(heap + slot * 64));
    return r != NULL ? r->name : 0;
}

START_TEST(test_coderecent_swap_keeps_what_a_handler_reads)
{
    ck_assert_int_eq(fx_codemap_setup(), FX_OK);
    load(0, 64, 100);
    ck_assert(fx_codemap_publish()); /* before any table: the log only, the drain stays fast */
    ck_assert_uint_eq(find(0), 100);
    ck_assert(!load(1, 64, 101)); /* into the recent table: no hurry */
    ck_assert_uint_eq(find(1), 101);
    ck_assert_uint_eq(fx_recover_find_base(fx_sig.code_table, (uintptr_t)(heap + 64)) != NULL, 0);
    /* a handler holds the table and its recent one */
    __atomic_add_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    const struct fx_code_table *held = fx_sig.code_table;
    const struct fx_code_recent *held_recent = held->recent;
    static struct fx_code_recent copy;
    memcpy(&copy, held_recent, sizeof(copy));
    ck_assert_uint_eq(copy.n, 1);
    for (int pub = 0; pub < 8; pub++) {
        for (int i = 0; i < 40; i++)
            load(2 + pub * 40 + i, 64, 1000 + (uintptr_t)(pub * 40 + i));
        ck_assert(!fx_codemap_publish()); /* all went into recent tables: no need to stay fast */
        ck_assert_ptr_ne(fx_sig.code_table->recent, held_recent);
    }
    /* appended to until the first publish of the loop (the 40 loads before it), then left: not
     * emptied or written again while the handler may read it */
    ck_assert_uint_eq(held_recent->n, 41);
    /* field by field: an entry's padding is never written (memcheck) */
    ck_assert(copy.e[0].r.begin == held_recent->e[0].r.begin &&
              copy.e[0].r.end == held_recent->e[0].r.end &&
              copy.e[0].r.name == held_recent->e[0].r.name &&
              copy.e[0].removed == held_recent->e[0].removed);
    ck_assert_uint_eq(fx_recover_find(held, (uintptr_t)(heap + 64))->name, 101);
    __atomic_sub_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    load(400, 64, 7);
    fx_codemap_publish(); /* the retired tables go, their recent ones reused */
    load(401, 64, 8);
    ck_assert_uint_eq(find(401), 8);
    ck_assert_uint_eq(fx_sig.code_table->recent->n, 1);
    for (int i = 0; i < 322; i++)
        ck_assert_uint_eq(find(i), i == 0 ? 100 : i == 1 ? 101 : 1000 + (uintptr_t)(i - 2));
    /* an unload in the recent table: gone at once, and after the merge */
    fx_codemap_compiled_unload((jmethodID)(uintptr_t)1005, heap + 7 * 64);
    ck_assert_uint_eq(find(7), 0);
    fx_codemap_publish();
    ck_assert_uint_eq(find(7), 0);
    ck_assert_uint_eq(fx_sig.code_table->recent->n, 0);
}
END_TEST

START_TEST(test_coderecent_full_table_waits_for_the_drain)
{
    ck_assert_int_eq(fx_codemap_setup(), FX_OK);
    fx_codemap_publish();
    load(1000 - 1, 64, 1);
    fx_codemap_publish();
    ck_assert_ptr_nonnull(fx_sig.code_table);
    int n = (int)FX_RECENT_CAP + 10;
    for (int i = 0; i < n; i++) {
        bool hurry = load(i, 64, 10 + (uintptr_t)i);
        /* quiet until half full (the drain then folds it), and past the full table */
        ck_assert_int_eq(hurry, i + 1 >= (int)FX_RECENT_MERGE);
    }
    for (int i = 0; i < n; i++)
        ck_assert_uint_eq(find(i), i < (int)FX_RECENT_CAP ? 10 + (uintptr_t)i : 0);
    ck_assert(fx_codemap_publish()); /* changes went to the log only: stay fast */
    for (int i = 0; i < n; i++)
        ck_assert_uint_eq(find(i), 10 + (uintptr_t)i);
    ck_assert(!load(n, 64, 5));
    ck_assert(!fx_codemap_publish());
}
END_TEST

/* Random loads, overlaps and unloads between publishes: before each publish, every range the
 * two-level lookup gives for a slot is the one the next base table has there. It may give none
 * where the fold kept an older range that a dropped newer one had overlapped (the older code's
 * memory was reused: the code heaps are asked instead), and that is rare. */
START_TEST(test_coderecent_agrees_with_the_next_table)
{
    enum {
        SLOTS = 1000
    };
    static uint64_t before[SLOTS];
    ck_assert_int_eq(fx_codemap_setup(), FX_OK);
    uint64_t rnd = 777, found = 0, cautious = 0;
    for (int pub = 0; pub < 300; pub++) {
        int events = pub == 0 ? 100 : 1 + (int)(rnd % 40);
        for (int e = 0; e < events; e++) {
            rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
            int slot = (int)((rnd >> 33) % (SLOTS - 4));
            uintptr_t method = 1 + (rnd >> 20) % 3000;
            if ((rnd >> 60) < 12) {
                load(slot, 64 * (1 + (int)((rnd >> 10) % 3)), method);
            } else {
                const struct fx_code_range *r =
                        fx_recover_find_base(fx_sig.code_table, (uintptr_t)(heap + slot * 64));
                bool same =
                        r != NULL && r->begin == (uintptr_t)(heap + slot * 64) && (rnd >> 8) % 4;
                fx_codemap_compiled_unload((jmethodID)(same ? r->name : method), heap + slot * 64);
            }
        }
        for (int s = 0; s < SLOTS; s++)
            before[s] = find(s);
        fx_codemap_publish();
        ck_assert_uint_eq(fx_sig.code_table->recent->n, 0);
        for (int s = 0; s < SLOTS; s++) {
            uint64_t after = find(s);
            if (before[s] != 0)
                ck_assert_uint_eq(before[s], after);
            found += after != 0;
            cautious += before[s] == 0 && after != 0;
        }
    }
    ck_assert_uint_gt(found, 100000);
    ck_assert_uint_lt(cautious * 100, found); /* under 1 % */
}
END_TEST

static Suite *coderecent_suite(void)
{
    Suite *s = suite_create("coderecent");
    TCase *tc = tcase_create("two levels");
    tcase_add_test(tc, test_coderecent_newest_wins_over_the_base);
    tcase_add_test(tc, test_coderecent_entry_carries_the_range);
    tcase_add_test(tc, test_coderecent_swap_keeps_what_a_handler_reads);
    tcase_add_test(tc, test_coderecent_full_table_waits_for_the_drain);
    tcase_add_test(tc, test_coderecent_agrees_with_the_next_table);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(coderecent_suite());
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
