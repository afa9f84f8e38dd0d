/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_out_file.h"

static char work[PATH_MAX]; /* a fresh folder per test */

/* The TMPDIR the runner started with. Tests point TMPDIR into their own work folder, which they
 * delete, so every test starts and ends with this one back: with CK_FORK=no all tests share one
 * process, its environment and its limits. */
static char tmpdir_at_start[PATH_MAX];
static bool tmpdir_was_set;
static struct rlimit fsize_at_start; /* the write-error test lowers RLIMIT_FSIZE */

static void restore_tmpdir(void)
{
    if (tmpdir_was_set)
        setenv("TMPDIR", tmpdir_at_start, 1);
    else
        unsetenv("TMPDIR");
}

static void rm_tree(const char *path);

static void fixture_setup(void)
{
    restore_tmpdir();
    work[0] = '\0';
}

/* Also runs after a failed test (checked fixture), so no folder or setting leaks into the next
 * test of the same process. */
static void fixture_teardown(void)
{
    fx_alloc_fail_after(0);
    setrlimit(RLIMIT_FSIZE, &fsize_at_start);
    signal(SIGXFSZ, SIG_DFL);
    restore_tmpdir();
    if (work[0] != '\0')
        rm_tree(work);
    work[0] = '\0';
}

/* snprintf that fails the test instead of truncating a path. */
static void fmt(char *buf, size_t cap, const char *f, ...) __attribute__((format(printf, 3, 4)));

static void fmt(char *buf, size_t cap, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(buf, cap, f, ap);
    va_end(ap);
    ck_assert(n >= 0 && (size_t)n < cap);
}

static void make_work(void)
{
    const char *t = getenv("TMPDIR");
    fmt(work, sizeof(work), "%s/fxtest-out-XXXXXX", t && t[0] == '/' ? t : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(work));
    umask(022);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    chmod(path, 0700);
    return remove(path);
}

static void rm_tree(const char *path)
{
    chmod(path, 0700);
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static char *path_in(char *buf, const char *dir, const char *name)
{
    fmt(buf, PATH_MAX, "%s/%s", dir, name);
    return buf;
}

/* Entries of a folder; *hidden counts those starting with '.' (temporaries). */
static int count_entries(const char *dir, int *hidden)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    *hidden = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        n++;
        if (e->d_name[0] == '.')
            (*hidden)++;
    }
    closedir(d);
    return n;
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fputs(text, fp);
    fclose(fp);
}

static char *read_file(const char *path)
{
    static char buf[4096];
    FILE *fp = fopen(path, "r");
    if (!fp)
        return NULL;
    size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    return buf;
}

static void put(struct fx_out_file *f, const char *text)
{
    struct fx_sink s = fx_out_file_sink(f);
    ck_assert_int_eq(s.write(s.ctx, text, strlen(text)), FX_OK);
}

START_TEST(test_out_file_commit_writes_content_with_mode_0600)
{
    make_work();
    char target[PATH_MAX];
    path_in(target, work, "p.json.gz");
    struct fx_out_file f;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_out_file_open(&f, target, 0, &eb), FX_OK);
    ck_assert(!f.fell_back);
    ck_assert_str_eq(f.target, target);
    ck_assert_ptr_nonnull(strstr(f.tmp_path, "/.p.json.gz.tmp."));
    put(&f, "hello ");
    put(&f, "world");
    ck_assert_int_eq(fx_out_file_commit(&f, &eb), FX_OK);
    ck_assert_ptr_null(f.tmp_path);
    fx_out_file_abort(&f); /* the cleanup after commit: frees the paths, removes nothing */
    ck_assert_str_eq(read_file(target), "hello world");
    struct stat st;
    ck_assert_int_eq(stat(target, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0600);
    int hidden;
    ck_assert_int_eq(count_entries(work, &hidden), 1);
    ck_assert_int_eq(hidden, 0);
    rm_tree(work);
}
END_TEST

START_TEST(test_out_file_explicit_mode_is_used)
{
    make_work();
    char target[PATH_MAX];
    path_in(target, work, "p.json");
    struct fx_out_file f;
    struct fx_errbuf eb;
    ck_assert_int_eq(fx_out_file_open(&f, target, 0640, &eb), FX_OK);
    ck_assert_int_eq(fx_out_file_commit(&f, &eb), FX_OK);
    fx_out_file_abort(&f);
    struct stat st;
    ck_assert_int_eq(stat(target, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0640);
    rm_tree(work);
}
END_TEST

START_TEST(test_out_file_target_keeps_old_content_until_commit)
{
    make_work();
    char target[PATH_MAX];
    path_in(target, work, "p.json");
    write_file(target, "old");
    struct fx_out_file f;
    struct fx_errbuf eb;
    ck_assert_int_eq(fx_out_file_open(&f, target, 0, &eb), FX_OK);
    put(&f, "new content, half written");
    ck_assert_str_eq(read_file(target), "old");
    int hidden;
    ck_assert_int_eq(count_entries(work, &hidden), 2);
    ck_assert_int_eq(hidden, 1);
    ck_assert_int_eq(fx_out_file_commit(&f, &eb), FX_OK);
    fx_out_file_abort(&f);
    ck_assert_str_eq(read_file(target), "new content, half written");
    ck_assert_int_eq(count_entries(work, &hidden), 1);
    rm_tree(work);
}
END_TEST

START_TEST(test_out_file_abort_removes_temp_and_keeps_target)
{
    make_work();
    char target[PATH_MAX];
    path_in(target, work, "p.json");
    write_file(target, "old");
    struct fx_out_file f;
    struct fx_errbuf eb;
    ck_assert_int_eq(fx_out_file_open(&f, target, 0, &eb), FX_OK);
    put(&f, "partial");
    fx_out_file_abort(&f);
    fx_out_file_abort(&f); /* twice is harmless */
    ck_assert_str_eq(read_file(target), "old");
    int hidden;
    ck_assert_int_eq(count_entries(work, &hidden), 1);
    ck_assert_int_eq(hidden, 0);
    rm_tree(work);
}
END_TEST

START_TEST(test_out_file_abort_on_zeroed_struct_closes_nothing)
{
    int fd = open("/dev/null", O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(dup2(fd, 0), 0);
    struct fx_out_file f;
    memset(&f, 0, sizeof(f));
    fx_out_file_abort(&f);
    ck_assert_int_ne(fcntl(0, F_GETFD), -1); /* fd 0 of a zeroed struct was not closed */
}
END_TEST

/* Points TMPDIR at a fresh fallback folder inside the work folder. */
static void use_fallback(char *fb)
{
    path_in(fb, work, "fallback");
    ck_assert_int_eq(mkdir(fb, 0700), 0);
    setenv("TMPDIR", fb, 1);
    ck_assert_str_eq(fx_out_file_fallback_dir(), fb);
}

START_TEST(test_out_file_missing_folder_falls_back_with_reason)
{
    make_work();
    char fb[PATH_MAX], target[PATH_MAX], want[PATH_MAX + 64];
    use_fallback(fb);
    fmt(target, sizeof(target), "%s/missing/sub/p.json", work);
    struct fx_out_file f;
    struct fx_errbuf eb;
    ck_assert_int_eq(fx_out_file_open(&f, target, 0, &eb), FX_OK);
    ck_assert(f.fell_back);
    fmt(want, sizeof(want), "cannot create a file in %s/missing/sub: No such file or directory",
        work);
    ck_assert_str_eq(f.reason, want);
    fmt(want, sizeof(want), "%s/p.json", fb);
    ck_assert_str_eq(f.target, want);
    put(&f, "data");
    ck_assert_int_eq(fx_out_file_commit(&f, &eb), FX_OK);
    fx_out_file_abort(&f);
    ck_assert_str_eq(read_file(want), "data");
    rm_tree(work);
}
END_TEST

START_TEST(test_out_file_file_as_folder_falls_back)
{
    make_work();
    char fb[PATH_MAX], plain[PATH_MAX], target[PATH_MAX];
    use_fallback(fb);
    write_file(path_in(plain, work, "plainfile"), "x");
    fmt(target, sizeof(target), "%s/p.json", plain);
    struct fx_out_file f;
    struct fx_errbuf eb;
    ck_assert_int_eq(fx_out_file_open(&f, target, 0, &eb), FX_OK);
    ck_assert(f.fell_back);
    ck_assert_ptr_nonnull(strstr(f.reason, ": Not a directory"));
    fx_out_file_abort(&f);
    int hidden;
    ck_assert_int_eq(count_entries(fb, &hidden), 0); /* abort cleaned the fallback folder */
    rm_tree(work);
}
END_TEST

/* Root ignores permission bits, so a 0500 folder does not refuse it; /proc, which takes no new
 * files from anyone (ENOENT), stands in for a folder that exists but cannot be written. */
START_TEST(test_out_file_unwritable_folder_falls_back)
{
    make_work();
    char fb[PATH_MAX], ro[PATH_MAX], target[PATH_MAX];
    use_fallback(fb);
    const char *want;
    if (geteuid() == 0) {
        printf("test_out_file: running as root, permission bits do not stop writes; using /proc "
               "as the unwritable folder\n");
        fmt(target, sizeof(target), "/proc/p.json");
        want = "cannot create a file in /proc: No such file or directory";
    } else {
        path_in(ro, work, "ro");
        ck_assert_int_eq(mkdir(ro, 0500), 0);
        fmt(target, sizeof(target), "%s/p.json", ro);
        want = NULL;
    }
    struct fx_out_file f;
    struct fx_errbuf eb;
    ck_assert_int_eq(fx_out_file_open(&f, target, 0, &eb), FX_OK);
    ck_assert(f.fell_back);
    if (want)
        ck_assert_str_eq(f.reason, want);
    else
        ck_assert_ptr_nonnull(strstr(f.reason, "/ro: Permission denied"));
    ck_assert_int_eq(fx_out_file_commit(&f, &eb), FX_OK);
    fx_out_file_abort(&f);
    ck_assert_ptr_nonnull(read_file(path_in(target, fb, "p.json")));
    rm_tree(work);
}
END_TEST

START_TEST(test_out_file_fails_when_fallback_fails_too)
{
    make_work();
    char fb[PATH_MAX], target[PATH_MAX];
    path_in(fb, work, "no-fallback");
    setenv("TMPDIR", fb, 1);
    fmt(target, sizeof(target), "%s/missing/p.json", work);
    struct fx_out_file f;
    struct fx_errbuf eb;
    ck_assert_int_eq(fx_out_file_open(&f, target, 0, &eb), FX_EIO);
    ck_assert_ptr_nonnull(strstr(eb.msg, "/missing: No such file or directory"));
    ck_assert_ptr_nonnull(strstr(eb.msg, "nor in the fallback folder"));
    ck_assert_ptr_null(f.tmp_path);
    ck_assert_ptr_null(f.target);
    fx_out_file_abort(&f);
    int hidden;
    ck_assert_int_eq(count_entries(work, &hidden), 0);
    rm_tree(work);
}
END_TEST

START_TEST(test_out_file_fallback_dir_needs_absolute_tmpdir)
{
    unsetenv("TMPDIR");
    ck_assert_str_eq(fx_out_file_fallback_dir(), "/tmp");
    setenv("TMPDIR", "relative/dir", 1);
    ck_assert_str_eq(fx_out_file_fallback_dir(), "/tmp");
    setenv("TMPDIR", "", 1);
    ck_assert_str_eq(fx_out_file_fallback_dir(), "/tmp");
    setenv("TMPDIR", "/var/tmp", 1);
    ck_assert_str_eq(fx_out_file_fallback_dir(), "/var/tmp");
}
END_TEST

START_TEST(test_out_file_bad_target_names_are_rejected)
{
    struct fx_out_file f;
    struct fx_errbuf eb;
    ck_assert_int_eq(fx_out_file_open(&f, "", 0, &eb), FX_EINVAL);
    ck_assert_int_eq(fx_out_file_open(&f, "/tmp/", 0, &eb), FX_EINVAL);
    ck_assert_int_eq(fx_out_file_open(&f, "/tmp/..", 0, &eb), FX_EINVAL);
    ck_assert_int_eq(fx_out_file_open(&f, NULL, 0, &eb), FX_EINVAL);
    ck_assert_ptr_nonnull(strstr(eb.msg, "not a file name"));
}
END_TEST

/* A full disk, made real with RLIMIT_FSIZE (writes past it fail with EFBIG). */
START_TEST(test_out_file_write_error_is_eio_and_abort_leaves_nothing)
{
    make_work();
    char target[PATH_MAX];
    path_in(target, work, "p.json");
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {.rlim_cur = 65536, .rlim_max = RLIM_INFINITY};
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    struct fx_out_file f;
    struct fx_errbuf eb;
    ck_assert_int_eq(fx_out_file_open(&f, target, 0, &eb), FX_OK);
    static char block[10000];
    memset(block, 'x', sizeof(block));
    struct fx_sink s = fx_out_file_sink(&f);
    int rc = FX_OK;
    for (int i = 0; i < 100 && rc == FX_OK; i++)
        rc = s.write(s.ctx, block, sizeof(block));
    ck_assert_int_eq(rc, FX_EIO);
    fx_out_file_abort(&f);
    int hidden;
    ck_assert_int_eq(count_entries(work, &hidden), 0);
    rm_tree(work);
}
END_TEST

START_TEST(test_out_file_failed_rename_removes_temp)
{
    make_work();
    char target[PATH_MAX], inside[PATH_MAX];
    path_in(target, work, "p.json");
    ck_assert_int_eq(mkdir(target, 0700), 0); /* a non-empty folder cannot be renamed over */
    write_file(path_in(inside, target, "keep"), "x");
    struct fx_out_file f;
    struct fx_errbuf eb;
    ck_assert_int_eq(fx_out_file_open(&f, target, 0, &eb), FX_OK);
    put(&f, "data");
    ck_assert_int_eq(fx_out_file_commit(&f, &eb), FX_EIO);
    ck_assert_ptr_nonnull(strstr(eb.msg, "cannot rename onto"));
    fx_out_file_abort(&f);
    int hidden;
    ck_assert_int_eq(count_entries(work, &hidden), 1);
    ck_assert_int_eq(hidden, 0);
    ck_assert_str_eq(read_file(inside), "x");
    ck_assert_int_eq(fx_out_file_commit(&f, &eb), FX_ESTATE);
    rm_tree(work);
}
END_TEST

START_TEST(test_out_file_planted_symlink_at_temp_name_is_not_followed)
{
    make_work();
    char target[PATH_MAX], victim[PATH_MAX], planted[PATH_MAX];
    path_in(target, work, "p.json");
    write_file(path_in(victim, work, "victim"), "precious");
    fmt(planted, sizeof(planted), "%s/.p.json.tmp.%ld.%016llx", work, (long)getpid(), 0x1234ull);
    ck_assert_int_eq(symlink(victim, planted), 0);
    fx_out_file_seed_for_tests(0x1234);
    struct fx_out_file f;
    struct fx_errbuf eb;
    ck_assert_int_eq(fx_out_file_open(&f, target, 0, &eb), FX_OK);
    ck_assert_str_ne(f.tmp_path, planted); /* the next name was used instead */
    ck_assert(!f.fell_back);
    put(&f, "profile");
    ck_assert_int_eq(fx_out_file_commit(&f, &eb), FX_OK);
    fx_out_file_abort(&f);
    ck_assert_str_eq(read_file(victim), "precious");
    ck_assert_str_eq(read_file(target), "profile");
    struct stat st;
    ck_assert_int_eq(lstat(planted, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    rm_tree(work);
}
END_TEST

START_TEST(test_out_file_symlinks_at_every_temp_name_force_fallback)
{
    make_work();
    char fb[PATH_MAX], target[PATH_MAX], victim[PATH_MAX], planted[PATH_MAX];
    use_fallback(fb);
    path_in(target, work, "p.json");
    write_file(path_in(victim, work, "victim"), "precious");
    for (unsigned long long i = 0; i < 64; i++) {
        fmt(planted, sizeof(planted), "%s/.p.json.tmp.%ld.%016llx", work, (long)getpid(),
            0x1000ull + i);
        ck_assert_int_eq(symlink(victim, planted), 0);
    }
    fx_out_file_seed_for_tests(0x1000);
    struct fx_out_file f;
    struct fx_errbuf eb;
    ck_assert_int_eq(fx_out_file_open(&f, target, 0, &eb), FX_OK);
    ck_assert(f.fell_back);
    ck_assert_ptr_nonnull(strstr(f.reason, "File exists"));
    put(&f, "profile");
    ck_assert_int_eq(fx_out_file_commit(&f, &eb), FX_OK);
    fx_out_file_abort(&f);
    ck_assert_str_eq(read_file(victim), "precious");
    rm_tree(work);
}
END_TEST

/* Documented behaviour: a target that is a symlink is replaced, not written through. */
START_TEST(test_out_file_symlink_target_is_replaced_not_followed)
{
    make_work();
    char target[PATH_MAX], victim[PATH_MAX];
    path_in(target, work, "p.json");
    write_file(path_in(victim, work, "victim"), "precious");
    ck_assert_int_eq(symlink(victim, target), 0);
    struct fx_out_file f;
    struct fx_errbuf eb;
    ck_assert_int_eq(fx_out_file_open(&f, target, 0, &eb), FX_OK);
    put(&f, "profile");
    ck_assert_int_eq(fx_out_file_commit(&f, &eb), FX_OK);
    fx_out_file_abort(&f);
    struct stat st;
    ck_assert_int_eq(lstat(target, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    ck_assert_str_eq(read_file(victim), "precious");
    ck_assert_str_eq(read_file(target), "profile");
    rm_tree(work);
}
END_TEST

START_TEST(test_out_file_allocation_failures_leave_nothing)
{
    make_work();
    char fb[PATH_MAX], target[PATH_MAX];
    use_fallback(fb);
    path_in(target, work, "p.json");
    for (long n = 1; n <= 4; n++) {
        struct fx_out_file f;
        struct fx_errbuf eb;
        fx_alloc_fail_after(n);
        int rc = fx_out_file_open(&f, target, 0, &eb);
        fx_alloc_fail_after(0);
        ck_assert(rc == FX_OK || rc == FX_ENOMEM);
        if (rc == FX_OK)
            fx_out_file_abort(&f);
        int hidden;
        ck_assert_int_eq(count_entries(work, &hidden), 1); /* only the fallback folder */
        ck_assert_int_eq(count_entries(fb, &hidden), 0);
    }
    rm_tree(work);
}
END_TEST

static Suite *out_file_suite(void)
{
    Suite *s = suite_create("out_file");
    TCase *tc = tcase_create("commit");
    tcase_add_checked_fixture(tc, fixture_setup, fixture_teardown);
    tcase_add_test(tc, test_out_file_commit_writes_content_with_mode_0600);
    tcase_add_test(tc, test_out_file_explicit_mode_is_used);
    tcase_add_test(tc, test_out_file_target_keeps_old_content_until_commit);
    tcase_add_test(tc, test_out_file_abort_removes_temp_and_keeps_target);
    tcase_add_test(tc, test_out_file_abort_on_zeroed_struct_closes_nothing);
    suite_add_tcase(s, tc);
    tc = tcase_create("fallback");
    tcase_add_checked_fixture(tc, fixture_setup, fixture_teardown);
    tcase_add_test(tc, test_out_file_missing_folder_falls_back_with_reason);
    tcase_add_test(tc, test_out_file_file_as_folder_falls_back);
    tcase_add_test(tc, test_out_file_unwritable_folder_falls_back);
    tcase_add_test(tc, test_out_file_fails_when_fallback_fails_too);
    tcase_add_test(tc, test_out_file_fallback_dir_needs_absolute_tmpdir);
    tcase_add_test(tc, test_out_file_bad_target_names_are_rejected);
    suite_add_tcase(s, tc);
    tc = tcase_create("errors");
    tcase_add_checked_fixture(tc, fixture_setup, fixture_teardown);
    tcase_add_test(tc, test_out_file_write_error_is_eio_and_abort_leaves_nothing);
    tcase_add_test(tc, test_out_file_failed_rename_removes_temp);
    tcase_add_test(tc, test_out_file_allocation_failures_leave_nothing);
    suite_add_tcase(s, tc);
    tc = tcase_create("symlinks");
    tcase_add_checked_fixture(tc, fixture_setup, fixture_teardown);
    tcase_add_test(tc, test_out_file_planted_symlink_at_temp_name_is_not_followed);
    tcase_add_test(tc, test_out_file_symlinks_at_every_temp_name_force_fallback);
    tcase_add_test(tc, test_out_file_symlink_target_is_replaced_not_followed);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    const char *t = getenv("TMPDIR");
    tmpdir_was_set = t != NULL && strlen(t) < sizeof(tmpdir_at_start);
    if (tmpdir_was_set)
        strcpy(tmpdir_at_start, t);
    getrlimit(RLIMIT_FSIZE, &fsize_at_start);
    SRunner *sr = srunner_create(out_file_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
