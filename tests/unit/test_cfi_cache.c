/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of core/symbols/cfi_cache.c (include/fx_cfi_cache.h): the system libz's table written
 * and read back equal to the byte; a library with another identity (size, modification time)
 * misses; a damaged file (truncated, a row out of order, another magic) is refused with one
 * line and no table, and so is one with group or other permission bits; the cache folder's
 * choice from the environment (include/fx_cache_dir.h). */
#include <check.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "fx_cache_dir.h"
#include "fx_cfi.h"
#include "fx_cfi_cache.h"
#include "fx_err.h"

static char dir[128];
static char libz[512];
static struct stat libz_st;

static void setup(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/fxcfiXXXXXX", t && strlen(t) < 80 ? t : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    strcat(dir, "/sub"); /* store creates the last level itself */
    Dl_info di;
    ck_assert(dladdr((void *)deflate, &di) != 0 && di.dli_fname != NULL);
    snprintf(libz, sizeof(libz), "%s", di.dli_fname);
    ck_assert_int_eq(stat(libz, &libz_st), 0);
}

/* Removes what setup made: dir's parent, the mkdtemp directory. */
static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%.*s'", (int)(strrchr(dir, '/') - dir), dir);
    ck_assert_int_eq(system(cmd), 0);
}

static size_t block_bytes(const struct fx_cfi *c)
{
    return sizeof(*c) + c->count * sizeof(struct fx_cfi_row) + c->nfuncs * sizeof(uint32_t);
}

/* The one file store wrote into dir. */
static void the_file(char *buf, size_t cap)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "ls %s/*.cfi", dir);
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(buf, (int)cap, f));
    buf[strcspn(buf, "\n")] = '\0';
    pclose(f);
}

static struct fx_cfi *stored(struct fx_cfi_stats *st)
{
    struct fx_cfi *c = NULL;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_cfi_build(libz, &c, st, &eb), FX_OK);
    ck_assert(fx_cfi_cache_check(c, block_bytes(c)));
    ck_assert_msg(fx_cfi_cache_store(dir, libz, &libz_st, c, st, &eb) == FX_OK, "%s", eb.msg);
    return c;
}

START_TEST(test_cfi_cache_round_trip_gives_the_same_table_and_stats)
{
    setup();
    struct fx_cfi_stats st, st2;
    struct fx_cfi *c = stored(&st);
    struct fx_cfi *back = NULL;
    struct fx_errbuf eb = {{0}};
    ck_assert_msg(fx_cfi_cache_load(dir, libz, &libz_st, &back, &st2, &eb) == FX_OK, "%s", eb.msg);
    ck_assert_uint_eq(block_bytes(back), block_bytes(c));
    ck_assert_int_eq(memcmp(back, c, block_bytes(c)), 0);
    ck_assert_int_eq(memcmp(&st, &st2, sizeof(st)), 0);
    /* a lookup in the table read back finds deflate's entry row, as in the built one */
    Dl_info di;
    ck_assert(dladdr((void *)deflate, &di) != 0);
    uint64_t va = (uint64_t)((uintptr_t)deflate - (uintptr_t)di.dli_fbase);
    ck_assert_int_eq(fx_cfi_lookup_sigsafe(back, va) - back->rows,
                     fx_cfi_lookup_sigsafe(c, va) - c->rows);
    struct stat ds;
    ck_assert_int_eq(stat(dir, &ds), 0);
    ck_assert_uint_eq(ds.st_mode & 0777, 0700);
    fx_cfi_free(back);
    /* another identity of the same path (an upgraded library) misses and reads nothing */
    struct stat other = libz_st;
    other.st_mtim.tv_sec += 1;
    ck_assert_int_eq(fx_cfi_cache_load(dir, libz, &other, &back, NULL, &eb), FX_ENOTFOUND);
    ck_assert_ptr_null(back);
    other = libz_st;
    other.st_size += 1;
    ck_assert_int_eq(fx_cfi_cache_load(dir, libz, &other, &back, NULL, &eb), FX_ENOTFOUND);
    fx_cfi_free(c);
    teardown();
}
END_TEST

/* Rewrites the stored file's byte at off (from the file's start) with v, or truncates it to
 * off when v < 0, and expects the load to fail with one line naming why. */
static void damaged(long off, int v, const char *why)
{
    char name[400];
    the_file(name, sizeof(name));
    if (v < 0) {
        ck_assert_int_eq(truncate(name, off), 0);
    } else {
        FILE *f = fopen(name, "r+b");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(fseek(f, off, SEEK_SET), 0);
        ck_assert_int_eq(fputc(v, f), v);
        fclose(f);
    }
    struct fx_cfi *back = (struct fx_cfi *)1;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_cfi_cache_load(dir, libz, &libz_st, &back, NULL, &eb), FX_EIO);
    ck_assert_ptr_null(back);
    ck_assert_msg(strstr(eb.msg, why) != NULL && strchr(eb.msg, '\n') == NULL, "%s", eb.msg);
}

START_TEST(test_cfi_cache_refuses_a_damaged_file)
{
    setup();
    struct fx_cfi_stats st;
    struct fx_cfi *c = stored(&st);
    char name[400];
    the_file(name, sizeof(name));
    struct stat fs;
    ck_assert_int_eq(stat(name, &fs), 0);
    ck_assert_uint_eq(fs.st_mode & 0777, 0600);
    long hdr = (long)fs.st_size - (long)block_bytes(c);
    ck_assert_int_eq(chmod(name, 0640), 0);
    damaged(fs.st_size, 0, "not a regular file of this user's own");
    fx_cfi_free(stored(&st));
    damaged(fs.st_size - 3, -1, "size does not match");
    fx_cfi_free(stored(&st));
    damaged(0, 'X', "not an unwind table file");
    fx_cfi_free(stored(&st));
    /* row 2's pc (its low byte's high neighbour) made larger than row 3's: out of order */
    long row2 = hdr + (long)sizeof(struct fx_cfi) + 2 * (long)sizeof(struct fx_cfi_row);
    damaged(row2 + 3, 0x7f, "malformed rows");
    fx_cfi_free(stored(&st));
    /* a row kind no step knows */
    damaged(row2 + 10, 9, "malformed rows");
    fx_cfi_free(c);
    teardown();
}
END_TEST

START_TEST(test_cache_dir_from_the_environment)
{
    char buf[256];
    ck_assert(fx_cache_dir("/x/c", "/xdg", "/home/u", "cfi", buf, sizeof(buf)));
    ck_assert_str_eq(buf, "/x/c/cfi");
    ck_assert(fx_cache_dir(NULL, "/xdg", "/home/u", "kallsyms", buf, sizeof(buf)));
    ck_assert_str_eq(buf, "/xdg/fxagent/kallsyms");
    ck_assert(fx_cache_dir("", NULL, "/home/u", "cfi", buf, sizeof(buf)));
    ck_assert_str_eq(buf, "/home/u/.cache/fxagent/cfi");
    ck_assert(fx_cache_dir(NULL, "relative", "/home/u", "cfi", buf, sizeof(buf)));
    ck_assert_str_eq(buf, "/home/u/.cache/fxagent/cfi");
    ck_assert(!fx_cache_dir("off", "/xdg", "/home/u", "cfi", buf, sizeof(buf)));
    ck_assert(!fx_cache_dir("no", "/xdg", "/home/u", "cfi", buf, sizeof(buf)));
    ck_assert(!fx_cache_dir("relative", "/xdg", "/home/u", "cfi", buf, sizeof(buf)));
    ck_assert(!fx_cache_dir(NULL, NULL, NULL, "cfi", buf, sizeof(buf)));
    ck_assert(!fx_cache_dir(NULL, NULL, "/home/u", "cfi", buf, 8));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cfi_cache");
    TCase *tc = tcase_create("cache");
    tcase_add_test(tc, test_cfi_cache_round_trip_gives_the_same_table_and_stats);
    tcase_add_test(tc, test_cfi_cache_refuses_a_damaged_file);
    tcase_add_test(tc, test_cache_dir_from_the_environment);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
