/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of core/symbols/kallsyms_cache.c (include/fx_kallsyms.h): the key from synthetic
 * boot id, kallsyms and modules files (a module's use count does not change it, its address
 * does; hidden addresses give no key); a table kept and read back equal, 0600; another boot or
 * module set misses; a damaged file (truncated, another magic, an offset out of the names, a
 * name not ended, addresses out of order) and a file not this user's own 0600 one are refused
 * with one line and no table; an unusable table is not kept. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_kallsyms.h"
#include "unit_tmpfile.h"

static const char KALLSYMS[] = "ffffffff81000000 T _stext\n"
                               "ffffffff81000000 t srso_alias_local\n"
                               "ffffffff81001000 t vfs_write\n"
                               "ffffffff81002000 T ksys_write\n"
                               "ffffffffc0a01000 t ext4_file_write_iter\t[ext4]\n";
static const char MODULES[] = "ext4 1003520 2 - Live 0xffffffffc0a00000\n"
                              "mbcache 16384 1 ext4, Live 0xffffffffc09f0000\n";
static const char BOOT[] = "50570e28-5287-444e-8130-d774d188548f\n";

static char ksyms[64], modules[64], boot[64], file[128];

static void files(const char *k, const char *m, const char *b)
{
    unit_tmpfile_str(ksyms, k);
    unit_tmpfile_str(modules, m);
    unit_tmpfile_str(boot, b);
}

static void unfiles(void)
{
    unlink(ksyms);
    unlink(modules);
    unlink(boot);
}

static struct fx_kallsyms_key key_of(const char *k, const char *m, const char *b)
{
    files(k, m, b);
    struct fx_kallsyms_key key;
    struct fx_errbuf eb = {{0}};
    ck_assert_msg(fx_kallsyms_key_read(ksyms, boot, modules, &key, &eb) == FX_OK, "%s", eb.msg);
    unfiles();
    return key;
}

/* The synthetic table kept in a fresh folder's file (which store makes); its key in *key. */
static struct fx_kallsyms *kept(struct fx_kallsyms_key *key)
{
    const char *t = getenv("TMPDIR");
    char dir[96];
    snprintf(dir, sizeof(dir), "%s/fxksXXXXXX", t && strlen(t) < 60 ? t : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(file, sizeof(file), "%s/sub/kallsyms", dir);
    *key = key_of(KALLSYMS, MODULES, BOOT);
    char path[64];
    unit_tmpfile_str(path, KALLSYMS);
    struct fx_kallsyms *k = NULL;
    ck_assert_int_eq(fx_kallsyms_read(path, &k), FX_OK);
    unlink(path);
    struct fx_errbuf eb = {{0}};
    ck_assert_msg(fx_kallsyms_cache_store(file, key, k, &eb) == FX_OK, "%s", eb.msg);
    return k;
}

static void unkept(void)
{
    char cmd[200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%.*s'", (int)(strstr(file, "/sub/") - file), file);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_kallsyms_key_from_boot_modules_and_first_line)
{
    struct fx_kallsyms_key a = key_of(KALLSYMS, MODULES, BOOT);
    ck_assert_str_eq(a.boot, "50570e28-5287-444e-8130-d774d188548f");
    ck_assert_uint_eq(a.first_addr, 0xffffffff81000000u);
    ck_assert_str_eq(a.first_name, "_stext");
    struct fx_kallsyms_key b = key_of(KALLSYMS,
                                      "ext4 1003520 7 - Live 0xffffffffc0a00000\n"
                                      "mbcache 16384 3 ext4,jbd2, Live 0xffffffffc09f0000\n",
                                      BOOT);
    ck_assert_uint_eq(a.modules, b.modules); /* use counts and users move while running */
    struct fx_kallsyms_key c = key_of(KALLSYMS,
                                      "ext4 1003520 2 - Live 0xffffffffc0b00000\n"
                                      "mbcache 16384 1 ext4, Live 0xffffffffc09f0000\n",
                                      BOOT);
    ck_assert_uint_ne(a.modules, c.modules); /* ext4 reloaded elsewhere */
    struct fx_kallsyms_key d =
            key_of(KALLSYMS, "mbcache 16384 1 - Live 0xffffffffc09f0000\n", BOOT);
    ck_assert_uint_ne(a.modules, d.modules); /* ext4 unloaded */

    struct fx_kallsyms_key key;
    struct fx_errbuf eb = {{0}};
    files("0000000000000000 T _stext\n", MODULES, BOOT);
    ck_assert_int_eq(fx_kallsyms_key_read(ksyms, boot, modules, &key, &eb), FX_ENOTFOUND);
    ck_assert_msg(strstr(eb.msg, "kptr_restrict") != NULL, "%s", eb.msg);
    ck_assert_int_eq(fx_kallsyms_key_read(ksyms, "/nonexistent/boot_id", modules, &key, &eb),
                     FX_ENOTFOUND);
    ck_assert_msg(strstr(eb.msg, "boot_id") != NULL, "%s", eb.msg);
    unfiles();
    files(KALLSYMS, MODULES, BOOT);
    ck_assert_int_eq(fx_kallsyms_key_read(ksyms, boot, "/nonexistent/modules", &key, &eb), FX_OK);
    unfiles();
}
END_TEST

START_TEST(test_kallsyms_cache_round_trip)
{
    struct fx_kallsyms_key key;
    struct fx_kallsyms *k = kept(&key);
    struct stat st;
    ck_assert_int_eq(stat(file, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0600);
    struct fx_kallsyms *back = NULL;
    struct fx_errbuf eb = {{0}};
    ck_assert_msg(fx_kallsyms_cache_load(file, &key, &back, &eb) == FX_OK, "%s", eb.msg);
    ck_assert_uint_eq(back->count, k->count);
    ck_assert_str_eq(back->reason, "");
    for (size_t i = 0; i < k->count; i++) {
        ck_assert_uint_eq(back->syms[i].addr, k->syms[i].addr);
        ck_assert_str_eq(fx_kallsyms_name(back, &back->syms[i]), fx_kallsyms_name(k, &k->syms[i]));
        ck_assert_str_eq(fx_kallsyms_module(back, &back->syms[i]),
                         fx_kallsyms_module(k, &k->syms[i]));
    }
    ck_assert_ptr_nonnull(back->map); /* the kept file mapped, not copied (issue 31) */
    ck_assert_str_eq(fx_kallsyms_module(back, fx_kallsyms_lookup(back, 0xffffffffc0a01040u)),
                     "ext4");
    ck_assert_str_eq(fx_kallsyms_name(back, fx_kallsyms_lookup(back, 0xffffffff81001010u)),
                     "vfs_write");
    fx_kallsyms_free(back);

    struct fx_kallsyms_key other = key;
    other.boot[0] = 'f'; /* rebooted */
    ck_assert_int_eq(fx_kallsyms_cache_load(file, &other, &back, &eb), FX_ENOTFOUND);
    ck_assert_ptr_null(back);
    ck_assert_msg(strstr(eb.msg, "another boot") != NULL, "%s", eb.msg);
    other = key;
    other.modules++;
    ck_assert_int_eq(fx_kallsyms_cache_load(file, &other, &back, &eb), FX_ENOTFOUND);
    unkept();
    ck_assert_int_eq(fx_kallsyms_cache_load(file, &key, &back, &eb), FX_ENOTFOUND);
    ck_assert_ptr_null(back);

    k->reason[0] = 'x'; /* an unusable table: hidden addresses are never written */
    ck_assert_int_eq(fx_kallsyms_cache_store(file, &key, k, &eb), FX_EINVAL);
    ck_assert_int_ne(access(file, F_OK), 0);
    fx_kallsyms_free(k);
}
END_TEST

/* Keeps the synthetic table again, rewrites the file's byte at off (from its end when off < 0)
 * with v, or truncates it by -v bytes when v < 0, and expects one line naming why. */
static void damaged(long off, int v, const char *why)
{
    struct fx_kallsyms_key key;
    fx_kallsyms_free(kept(&key));
    struct stat st;
    ck_assert_int_eq(stat(file, &st), 0);
    if (v < 0) {
        ck_assert_int_eq(truncate(file, st.st_size + v), 0);
    } else {
        FILE *f = fopen(file, "r+b");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(fseek(f, off < 0 ? st.st_size + off : off, SEEK_SET), 0);
        ck_assert_int_eq(fputc(v, f), v);
        fclose(f);
    }
    struct fx_kallsyms *back = (struct fx_kallsyms *)1;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_kallsyms_cache_load(file, &key, &back, &eb), FX_EIO);
    ck_assert_ptr_null(back);
    ck_assert_msg(strstr(eb.msg, why) != NULL && strchr(eb.msg, '\n') == NULL, "%s", eb.msg);
    unkept();
}

START_TEST(test_kallsyms_cache_refuses_a_damaged_file)
{
    struct fx_kallsyms_key key;
    struct fx_kallsyms *k = kept(&key);
    struct stat st;
    ck_assert_int_eq(stat(file, &st), 0);
    unkept();
    long hdr = (long)st.st_size - (long)(k->count * 16 + k->names_bytes);
    ck_assert_int_gt(hdr, (long)sizeof(key));
    damaged(0, -1, "size does not match");
    damaged(0, 'X', "not a kernel symbols file");
    damaged(-1, 'z', "malformed names"); /* the last name no longer ends */
    /* the second symbol's name offset far past the names (its high byte) */
    damaged(hdr + 16 + 11, 0x7f, "malformed symbols");
    /* the second symbol's address (a high byte) above the third's: out of order */
    damaged(hdr + 16 + 3, 0xff, "malformed symbols");
    fx_kallsyms_free(k);
}
END_TEST

START_TEST(test_kallsyms_cache_only_this_users_own_file)
{
    struct fx_kallsyms_key key;
    fx_kallsyms_free(kept(&key));
    struct fx_kallsyms *back = NULL;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(chmod(file, 0644), 0);
    ck_assert_int_eq(fx_kallsyms_cache_load(file, &key, &back, &eb), FX_EIO);
    ck_assert_ptr_null(back);
    ck_assert_msg(strstr(eb.msg, "this user's own") != NULL, "%s", eb.msg);
    ck_assert_int_eq(chmod(file, 0600), 0);
    if (geteuid() == 0) { /* only root can give a file away */
        ck_assert_int_eq(chown(file, 1, (gid_t)-1), 0);
        ck_assert_int_eq(fx_kallsyms_cache_load(file, &key, &back, &eb), FX_EIO);
        ck_assert_ptr_null(back);
        ck_assert_int_eq(chown(file, 0, (gid_t)-1), 0);
    }
    ck_assert_msg(fx_kallsyms_cache_load(file, &key, &back, &eb) == FX_OK, "%s", eb.msg);
    fx_kallsyms_free(back);
    unkept();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kallsyms_cache");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_kallsyms_key_from_boot_modules_and_first_line);
    tcase_add_test(tc, test_kallsyms_cache_round_trip);
    tcase_add_test(tc, test_kallsyms_cache_refuses_a_damaged_file);
    tcase_add_test(tc, test_kallsyms_cache_only_this_users_own_file);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
