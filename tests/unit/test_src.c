/* SPDX-License-Identifier: Apache-2.0 */
/* fx_src (issue 34), the embedding the agent's sources= and fxprof sources share: on a model
 * whose frames name three files (one in a folder, one in no place, one not UTF-8), the hottest
 * is looked up first, the text written into shared.sources.content is the file's bytes, and
 * Profile Info's "Sources" counts and names each outcome; the bounds leave files out, counted. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fx_ff_writer.h"
#include "fx_profile.h"
#include "fx_sink.h"
#include "fx_src.h"

static char dir[64];
static const char hot_text[] = "package a;\nclass Hot { int x = 1; } // caf\xc3\xa9\n";

static void put_file(const char *rel, const char *text)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    *strrchr(path, '/') = '\0';
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/fx-src-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    put_file("a/Hot.java", hot_text);
    put_file("c/Latin.java", "class Latin {} // caf\xe9\n");
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* A frame of func `name` in file `source` under `prefix`. */
static fx_stack_id push(struct fx_profile *p, fx_stack_id prefix, const char *name,
                        const char *source)
{
    struct fx_func_key fk = {.line = 1, .is_java = true, .resource = FX_STR_NONE};
    ck_assert_int_eq(fx_profile_cstring(p, name, &fk.name), FX_OK);
    ck_assert_int_eq(fx_profile_cstring(p, source, &fk.source), FX_OK);
    fx_func_id f;
    fx_frame_id fr;
    fx_stack_id s;
    ck_assert_int_eq(fx_profile_func(p, &fk, &f), FX_OK);
    ck_assert_int_eq(fx_profile_frame(p, &(struct fx_frame_key){.func = f, .line = 2}, &fr), FX_OK);
    ck_assert_int_eq(fx_profile_stack(p, prefix, fr, &s), FX_OK);
    return s;
}

/* Three samples in Cold <- Hot, one in Latin: Hot.java is the hottest (3 + ... once each). */
static struct fx_profile *model(void)
{
    struct fx_profile *p = fx_profile_new();
    fx_thread_id t;
    ck_assert_int_eq(fx_profile_thread_add(p, "main", 1, 0, &t), FX_OK);
    fx_stack_id hot = push(p, FX_STACK_NONE, "a.Hot.run", "a/Hot.java");
    fx_stack_id cold = push(p, hot, "b.Cold.run", "b/Cold.java");
    fx_stack_id latin = push(p, FX_STACK_NONE, "c.Latin.run", "c/Latin.java");
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(fx_profile_sample(p, t, i, cold, -1, 1), FX_OK);
    ck_assert_int_eq(fx_profile_sample(p, t, 5, latin, -1, 1), FX_OK);
    return p;
}

static const char *entry(struct fx_profile *p, const char *label)
{
    const char *v = fx_profile_extra_find(p, FX_SRC_GROUP, label);
    return v ? v : "(none)";
}

/* The model embedded with the folder as the one place, within the bounds given. */
static struct fx_profile *embedded(struct fx_src_finder *f, struct fx_src_embed *e,
                                   uint64_t max_file)
{
    struct fx_profile *p = model();
    struct fx_errbuf eb = {{0}};
    const char *from[] = {dir};
    ck_assert_int_eq(fx_src_finder_init(f, from, 1, NULL, &eb), FX_OK);
    fx_src_embed_init(e, max_file, FX_SRC_MAX_TOTAL);
    ck_assert_int_eq(fx_src_embed_model(p, f, e), FX_OK);
    return p;
}

START_TEST(test_src_embeds_the_bytes_and_names_every_outcome)
{
    struct fx_src_finder f;
    struct fx_src_embed e;
    struct fx_errbuf eb = {{0}};
    struct fx_profile *p = embedded(&f, &e, FX_SRC_MAX_FILE);
    ck_assert_uint_eq(e.nfiles, 3);
    ck_assert_str_eq(e.files[0].name, "a/Hot.java"); /* hottest first, then by name */
    char want[96];
    snprintf(want, sizeof(want), "1 of 3 files, %zu bytes (folders 1, jars 0, JDK src.zip 0)",
             strlen(hot_text));
    ck_assert_str_eq(entry(p, "embedded"), want);
    ck_assert_str_eq(entry(p, "not found: files"), "b/Cold.java");
    ck_assert_str_eq(entry(p, "not UTF-8: files"), "c/Latin.java");

    struct fx_membuf mb = {0};
    ck_assert_int_eq(fx_ff_write(p, fx_membuf_sink(&mb), &eb), FX_OK);
    cJSON *root = cJSON_ParseWithLength(mb.data, mb.len);
    ck_assert_ptr_nonnull(root);
    const cJSON *src = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "shared"), "sources");
    const cJSON *content = cJSON_GetObjectItem(src, "content");
    ck_assert_int_eq(cJSON_GetArraySize(content), 3);
    int texts = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, content)
    {
        if (cJSON_IsString(c)) {
            ck_assert_str_eq(c->valuestring, hot_text); /* the file's bytes, é included */
            texts++;
        } else {
            ck_assert(cJSON_IsNull(c));
        }
    }
    ck_assert_int_eq(texts, 1);
    cJSON_Delete(root);
    fx_membuf_destroy(&mb);

    /* taken back after the write: the next write has no content */
    fx_profile_set_source_content(p, NULL, 0);
    fx_src_embed_destroy(&e);
    fx_src_finder_destroy(&f);
    fx_profile_free(p);
}
END_TEST

START_TEST(test_src_bounds_leave_files_out_counted)
{
    struct fx_src_finder f;
    struct fx_src_embed e;
    struct fx_profile *p = embedded(&f, &e, 30); /* Hot.java is 45 bytes, Latin 23 */
    ck_assert_str_eq(entry(p, "too large: files"), "a/Hot.java");
    ck_assert_str_eq(entry(p, "bound"),
                     "30 bytes a file, 33554432 bytes in all, hottest files first");
    fx_src_embed_destroy(&e);
    fx_src_embed_init(&e, FX_SRC_MAX_FILE, 10);
    ck_assert_int_eq(fx_src_embed_model(p, &f, &e), FX_OK);
    ck_assert_str_eq(entry(p, "left out (over the total bound): files"), "a/Hot.java");
    fx_profile_set_source_content(p, NULL, 0);
    fx_src_embed_destroy(&e);
    fx_src_finder_destroy(&f);
    fx_profile_free(p);
}
END_TEST

START_TEST(test_src_places_refused_and_split)
{
    struct fx_src_finder f;
    struct fx_errbuf eb = {{0}};
    const char *nowhere[] = {"/nonexistent/fx-src"};
    ck_assert_int_eq(fx_src_finder_init(&f, nowhere, 1, NULL, &eb), FX_ENOTFOUND);
    ck_assert_ptr_nonnull(strstr(eb.msg, "/nonexistent/fx-src: No such file"));
    char list[] = "a::b:";
    const char *paths[FX_SRC_MAX_FROM];
    ck_assert_uint_eq(fx_src_split(list, paths), 2);
    ck_assert_str_eq(paths[1], "b");
    /* a missing JDK src.zip is named, not an error */
    struct fx_src_jvm jvm = {.java_home = "/nonexistent/jdk"};
    ck_assert_int_eq(fx_src_finder_init(&f, NULL, 0, &jvm, &eb), FX_OK);
    ck_assert_str_eq(f.jdk_missing, "/nonexistent/jdk/lib/src.zip");
    fx_src_finder_destroy(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("src");
    TCase *tc = tcase_create("embed");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_src_embeds_the_bytes_and_names_every_outcome);
    tcase_add_test(tc, test_src_bounds_leave_files_out_counted);
    tcase_add_test(tc, test_src_places_refused_and_split);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
