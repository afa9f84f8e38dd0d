/* SPDX-License-Identifier: Apache-2.0 */
/* The stub names of the code map (agent/sampling/codemap.c, issue 30 item 11), without a JVM:
 * DynamicCodeGenerated events as HotSpot posts them, then the published table's ranges and the
 * names their frames get. An adapter posted with its fingerprint ("I2C/C2I adapters(0x...)")
 * is named "I2C/C2I adapters", one name for all of them; other stubs keep their names. And the
 * fold over many publishes (issue 31): loads, unloads and overlapping newer code give the table
 * a rebuild from scratch would, while the tables replaced are written again, not mapped anew. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#include "vmstructs_none.h"

static uint8_t code[4][64];

static const char *name_at(const void *pc)
{
    const struct fx_code_range *r = fx_recover_find(fx_sig.code_table, (uintptr_t)pc);
    ck_assert_ptr_nonnull(r);
    return fx_codemap_stub_name(r->name);
}

START_TEST(test_codemap_stub_names_as_users_read_them)
{
    ck_assert_int_eq(fx_codemap_setup(), FX_OK);
    fx_codemap_dynamic_code("I2C/C2I adapters(0xbbbbbbbaab)", code[0], 64);
    fx_codemap_dynamic_code("I2C/C2I adapters(0xa)", code[1], 64);
    fx_codemap_dynamic_code("I2C/C2I adapters", code[2], 64);
    fx_codemap_dynamic_code("vtable stub", code[3], 64);
    fx_codemap_publish();
    ck_assert_ptr_nonnull(fx_sig.code_table);
    ck_assert_uint_eq(fx_sig.code_table->n, 4);
    for (int i = 0; i < 3; i++)
        ck_assert_str_eq(name_at(code[i] + 8), "I2C/C2I adapters");
    ck_assert_str_eq(name_at(code[3]), "vtable stub");
    /* one name for every adapter: the same function in the call tree */
    const struct fx_code_range *a = fx_recover_find(fx_sig.code_table, (uintptr_t)code[0]);
    const struct fx_code_range *b = fx_recover_find(fx_sig.code_table, (uintptr_t)code[1]);
    ck_assert_uint_eq(a->name, b->name);
    ck_assert_int_eq(a->kind, FX_BLOB_ADAPTER);
}
END_TEST

/* The stubs' kinds by HotSpot's names (issue 32, docs/VALIDATION.md 8.5d): JDK 17 names the
 * Base64 stubs implEncode/implDecode (JDK 25: base64_encodeBlock), the fill stubs are
 * j<type>_fill and arrayof_j<type>_fill; a name that merely contains one is no such stub. */
START_TEST(test_codemap_stub_kinds)
{
    static uint8_t blobs[11][16];
    static const struct {
        const char *name;
        int kind;
    } want[] = {{"implEncode", FX_STUB_INTRINSIC},
                {"implDecode", FX_STUB_INTRINSIC},
                {"base64_encodeBlock", FX_STUB_INTRINSIC},
                {"jint_fill", FX_STUB_FILL},
                {"arrayof_jbyte_fill", FX_STUB_FILL},
                {"jshort_fill", FX_STUB_FILL},
                {"jlong_fill", 0},
                {"arrayof_fill", 0},
                {"implEncodeISOArray", 0},
                {"jbyte_disjoint_arraycopy", FX_STUB_ARRAYCOPY},
                {"call_stub", 0}};
    ck_assert_int_eq(fx_codemap_setup(), FX_OK);
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        fx_codemap_dynamic_code(want[i].name, blobs[i], 16);
    fx_codemap_publish();
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const struct fx_code_range *r = fx_recover_find(fx_sig.code_table, (uintptr_t)blobs[i]);
        ck_assert_ptr_nonnull(r);
        ck_assert_msg(r->arraycopy == want[i].kind, "%s: %d", want[i].name, r->arraycopy);
    }
}
END_TEST

static uint8_t heap[256 * 64];

static void load(int slot, int size, uintptr_t method)
{
    fx_codemap_compiled_load((jmethodID)method, heap + slot * 64, size, NULL);
}

/* The table holds exactly the expected [begin, method) pairs, sorted, without overlaps. */
static void expect(const int *slots, const uintptr_t *methods, size_t n)
{
    const struct fx_code_table *t = fx_sig.code_table;
    ck_assert_uint_eq(t->n, n);
    for (size_t i = 0; i < n; i++) {
        ck_assert_ptr_eq((void *)t->r[i].begin, heap + slots[i] * 64);
        ck_assert_uint_eq(t->r[i].name, methods[i]);
        if (i > 0)
            ck_assert_uint_le(t->r[i - 1].end, t->r[i].begin);
    }
}

START_TEST(test_codemap_fold_over_publishes)
{
    ck_assert_int_eq(fx_codemap_setup(), FX_OK);
    for (int i = 0; i < 200; i++)
        load(i, 64, 1000 + (uintptr_t)i);
    ck_assert(fx_codemap_publish()); /* changes waited: the drain stays fast */
    const struct fx_code_table *first = fx_sig.code_table;
    ck_assert_uint_eq(first->n, 200);
    /* unloads of slots 0-99 but 50, in two publishes; slot 50's unload names another method */
    for (int i = 0; i < 50; i++)
        fx_codemap_compiled_unload((jmethodID)(1000 + (uintptr_t)i), heap + i * 64);
    fx_codemap_compiled_unload((jmethodID)(uintptr_t)7, heap + 50 * 64);
    fx_codemap_publish();
    ck_assert_ptr_ne(fx_sig.code_table, first);
    for (int i = 51; i < 100; i++)
        fx_codemap_compiled_unload((jmethodID)(1000 + (uintptr_t)i), heap + i * 64);
    /* new code over slots 150-151 (one range across both) replaces the older two; a load and
     * its unload in one log leave nothing; a reload at slot 10 is newer than its unload */
    load(150, 128, 5000);
    load(20, 64, 6000);
    fx_codemap_compiled_unload((jmethodID)(uintptr_t)6000, heap + 20 * 64);
    load(10, 64, 7000);
    fx_codemap_publish();
    /* the first table, replaced and read by no handler, is the one written again */
    ck_assert_ptr_eq(fx_sig.code_table, first);
    int slots[160];
    uintptr_t methods[160];
    size_t n = 0;
    slots[n] = 10, methods[n++] = 7000;
    slots[n] = 50, methods[n++] = 1050;
    for (int i = 100; i < 256 && i < 200; i++) {
        if (i == 151)
            continue;
        slots[n] = i, methods[n++] = i == 150 ? 5000 : 1000 + (uintptr_t)i;
    }
    expect(slots, methods, n);
    ck_assert(!fx_codemap_publish()); /* an empty log publishes nothing: no need to hurry */
    ck_assert_ptr_eq(fx_sig.code_table, first);
    expect(slots, methods, n);
}
END_TEST

/* The oracle: the fold as it was before the table reuse and the copied runs, every live range
 * replayed as an add older than every log record, all sorted by (begin, seq), the same rule. */
struct ev {
    bool add;
    uint64_t seq;
    uintptr_t begin, end, method;
};

static struct ev ref_live[4096], ref_all[8192];
static size_t ref_n;

static int by_begin_seq(const void *a, const void *b)
{
    const struct ev *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void ref_fold(const struct ev *log, size_t n_log)
{
    size_t n = 0, k = 0;
    for (size_t i = 0; i < ref_n; i++)
        ref_all[n] = ref_live[i], ref_all[n++].seq = 0;
    for (size_t i = 0; i < n_log; i++)
        ref_all[n++] = log[i];
    qsort(ref_all, n, sizeof(ref_all[0]), by_begin_seq);
    uint64_t kept_seq = 0;
    for (size_t i = 0; i < n;) {
        const struct ev *win = NULL;
        size_t j = i;
        for (; j < n && ref_all[j].begin == ref_all[i].begin; j++) {
            if (ref_all[j].add)
                win = &ref_all[j];
            else if (win != NULL && win->method == ref_all[j].method)
                win = NULL;
        }
        i = j;
        if (win == NULL)
            continue;
        if (k > 0 && ref_live[k - 1].end > win->begin) {
            if (win->seq < kept_seq)
                continue;
            k--;
        }
        ref_live[k++] = *win;
        kept_seq = win->seq;
    }
    ref_n = k;
}

START_TEST(test_codemap_fold_matches_a_rebuild)
{
    static uint8_t big[2048 * 16];
    static struct ev log[64];
    ck_assert_int_eq(fx_codemap_setup(), FX_OK);
    uint64_t seq = 0, rnd = 12345;
    for (int pub = 0; pub < 400; pub++) {
        size_t n_log = 0;
        int events = pub == 0 ? 60 : 1 + (int)(rnd % 8);
        for (int e = 0; e < events; e++) {
            rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
            uintptr_t slot = (rnd >> 33) % 2000, method = 1 + (rnd >> 20) % 3000;
            struct ev *v = &log[n_log++];
            v->begin = (uintptr_t)(big + slot * 16);
            v->seq = ++seq;
            v->add = (rnd >> 60) < 12;
            if (v->add) {
                v->end = v->begin + 16 * (1 + (rnd >> 10) % 3);
                v->method = method;
                fx_codemap_compiled_load((jmethodID)method, (void *)v->begin,
                                         (jint)(v->end - v->begin), NULL);
            } else { /* mostly the method of a live range there */
                v->method = method;
                for (size_t i = 0; i < ref_n && (rnd >> 8) % 4 != 0; i++)
                    if (ref_live[i].begin == v->begin)
                        v->method = ref_live[i].method;
                fx_codemap_compiled_unload((jmethodID)v->method, (void *)v->begin);
            }
        }
        fx_codemap_publish();
        ref_fold(log, n_log);
        const struct fx_code_table *t = fx_sig.code_table;
        ck_assert_uint_eq(t->n, ref_n);
        for (size_t i = 0; i < ref_n; i++) {
            ck_assert_uint_eq(t->r[i].begin, ref_live[i].begin);
            ck_assert_uint_eq(t->r[i].end, ref_live[i].end);
            ck_assert_uint_eq(t->r[i].name, ref_live[i].method);
        }
    }
    ck_assert_uint_gt(ref_n, 500); /* enough ranges for long copied runs */
}
END_TEST

static Suite *codemap_suite(void)
{
    Suite *s = suite_create("codemap");
    TCase *tc = tcase_create("names");
    tcase_add_test(tc, test_codemap_stub_names_as_users_read_them);
    tcase_add_test(tc, test_codemap_stub_kinds);
    tcase_add_test(tc, test_codemap_fold_over_publishes);
    tcase_add_test(tc, test_codemap_fold_matches_a_rebuild);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(codemap_suite());
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
