/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof convert's stacks known by their bytes across chunks (cli/jfr_rawstack.c) on the
 * hand-built recordings (tests/fuzz/make_jfr_corpus.py): 02-two.jfr's second chunk repeats the
 * first's stacks and names, and its samples' stacks are the first chunk's (the same nodes);
 * 03-renamed.jfr's second chunk has stacks of the same bytes whose method ids name other
 * methods (main and work swapped), and its samples' stacks must say so (a reuse by bytes alone
 * would give them the first chunk's names); a truncated stack is counted in each chunk. (The
 * JDK's reader, jfr print, keeps the first chunk's names for ids it has seen: fxprof reads each
 * chunk's own pools, as it did before stacks were reused, and is checked here, not there.) */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_ff_writer.h"
#include "fx_profile.h"
#include "fx_sink.h"
#include "fxprof.h"

#define TWO     FX_JFR_SEEDS "/02-two.jfr"
#define RENAMED FX_JFR_SEEDS "/03-renamed.jfr"

static const cJSON *key(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    ck_assert_msg(v != NULL, "no key %s", k);
    return v;
}

static int at(const cJSON *arr, int i)
{
    return cJSON_GetArrayItem(arr, i)->valueint;
}

/* The function name of stack node s's frame. */
static const char *func_of(const cJSON *sh, int s)
{
    int frame = at(key(key(sh, "stackTable"), "frame"), s);
    int func = at(key(key(sh, "frameTable"), "func"), frame);
    int name = at(key(key(sh, "funcTable"), "name"), func);
    return cJSON_GetArrayItem(key(sh, "stringArray"), name)->valuestring;
}

/* The thread "main"'s samples of path: each one's stack and its leaf and root function names
 * ("leaf<root"), in time order; the Profile Info row "stacks truncated" into *truncated. */
static int main_samples(const char *path, int *stacks, char names[][96], int cap, long *truncated)
{
    struct fx_profile *p = fx_profile_new();
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_jfr_profile(path, p, NULL, &eb), FX_OK);
    struct fx_membuf mb = {0};
    ck_assert_int_eq(fx_ff_write(p, fx_membuf_sink(&mb), &eb), FX_OK);
    cJSON *doc = cJSON_ParseWithLength(mb.data, mb.len);
    ck_assert_ptr_nonnull(doc);
    const cJSON *sh = key(doc, "shared"), *st = key(sh, "stackTable");
    const cJSON *th = NULL, *t;
    cJSON_ArrayForEach(t, key(doc, "threads"))
    {
        if (!strcmp(key(t, "name")->valuestring, "main"))
            th = t;
    }
    ck_assert_ptr_nonnull(th);
    const cJSON *sm = key(th, "samples"), *sst = key(sm, "stack");
    int n = cJSON_GetArraySize(sst);
    ck_assert_int_le(n, cap);
    for (int i = 0; i < n; i++) {
        int s = at(sst, i), leaf = s, root = s;
        while (at(key(st, "prefixOffset"), root) != 0)
            root -= at(key(st, "prefixOffset"), root);
        stacks[i] = s;
        snprintf(names[i], 96, "%s<%s", func_of(sh, leaf), func_of(sh, root));
    }
    *truncated = -1;
    const cJSON *extra = cJSON_GetObjectItemCaseSensitive(key(doc, "meta"), "extra"), *e, *row;
    cJSON_ArrayForEach(e, extra)
    {
        cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(e, "entries"))
        {
            const cJSON *lab = cJSON_GetObjectItemCaseSensitive(row, "label");
            if (cJSON_IsString(lab) && strstr(lab->valuestring, "stacks truncated"))
                *truncated = (long)cJSON_GetObjectItemCaseSensitive(row, "value")->valuedouble;
        }
    }
    cJSON_Delete(doc);
    fx_membuf_destroy(&mb);
    fx_profile_free(p);
    return n;
}

START_TEST(repeated_chunk_reuses_its_stacks)
{
    int st[8];
    char nm[8][96];
    long truncated;
    ck_assert_int_eq(main_samples(TWO, st, nm, 8, &truncated), 4);
    for (int i = 0; i < 4; i++) {
        ck_assert_str_eq(nm[i], "com.example.App.work<com.example.App.main");
        ck_assert_int_eq(st[i], st[0]); /* one node: the second chunk's stack is the first's */
    }
    ck_assert_int_eq(truncated, 2); /* the truncated stack, once a chunk, reused or not */
}
END_TEST

START_TEST(renamed_methods_are_resolved_again)
{
    int st[8];
    char nm[8][96];
    long truncated;
    ck_assert_int_eq(main_samples(RENAMED, st, nm, 8, &truncated), 4);
    ck_assert_str_eq(nm[0], "com.example.App.work<com.example.App.main");
    ck_assert_str_eq(nm[1], "com.example.App.work<com.example.App.main");
    ck_assert_str_eq(nm[2], "com.example.App.main<com.example.App.work");
    ck_assert_str_eq(nm[3], "com.example.App.main<com.example.App.work");
    ck_assert_int_ne(st[2], st[0]);
    ck_assert_int_eq(truncated, 2);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("jfr_rawstack");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, repeated_chunk_reuses_its_stacks);
    tcase_add_test(tc, renamed_methods_are_resolved_again);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
