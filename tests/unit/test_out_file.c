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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
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
    write_file(target, "{\"old\": 1}"); /* an earlier profile */
    struct fx_out_file f;
    struct fx_errbuf eb;
    ck_assert_int_eq(fx_out_file_open(&f, target, 0, &eb), FX_OK);
    put(&f, "new content, half written");
    ck_assert_str_eq(read_file(target), "{\"old\": 1}");
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

static void assert_kind(const char *path, mode_t kind)
{
    struct stat st;
    ck_assert_int_eq(lstat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & S_IFMT, kind);
}

/* Opens target, which must fall back to `want` with a reason containing `reason`; writes
 * "data" there and commits. */
static void assert_falls_back(const char *target, const char *reason, const char *want)
{
    struct fx_out_file f;
    struct fx_errbuf eb;
    ck_assert_int_eq(fx_out_file_open(&f, target, 0, &eb), FX_OK);
    ck_assert(f.fell_back && !f.direct);
    ck_assert_ptr_nonnull(strstr(f.reason, reason));
    ck_assert_str_eq(f.target, want);
    put(&f, "data");
    ck_assert_int_eq(fx_out_file_commit(&f, &eb), FX_OK);
    fx_out_file_abort(&f);
    ck_assert_str_eq(read_file(want), "data");
}

START_TEST(test_out_file_missing_folder_falls_back_with_reason)
{
    make_work();
    char fb[PATH_MAX], target[PATH_MAX], want[PATH_MAX + 64];
    use_fallback(fb);
    fmt(target, sizeof(target), "%s/missing/sub/p.json", work);
    char reason[PATH_MAX + 64];
    fmt(reason, sizeof(reason), "cannot create a file in %s/missing/sub: No such file or directory",
        work);
    fmt(want, sizeof(want), "%s/p.json", fb);
    assert_falls_back(target, reason, want);
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
    struct fx_out_file f;
    struct fx_errbuf eb;
    ck_assert_int_eq(fx_out_file_open(&f, target, 0, &eb), FX_OK);
    put(&f, "data");
    /* Made a folder after the open (a folder at open is refused): a non-empty folder cannot be
     * renamed over. */
    ck_assert_int_eq(mkdir(target, 0700), 0);
    write_file(path_in(inside, target, "keep"), "x");
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

/* Documented behaviour: a target that is a symlink (to a profile) is replaced, not written
 * through. */
START_TEST(test_out_file_symlink_target_is_replaced_not_followed)
{
    make_work();
    char target[PATH_MAX], victim[PATH_MAX];
    path_in(target, work, "p.json");
    write_file(path_in(victim, work, "victim"), "{\"precious\": 1}");
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
    ck_assert_str_eq(read_file(victim), "{\"precious\": 1}");
    ck_assert_str_eq(read_file(target), "profile");
    rm_tree(work);
}
END_TEST

/* file=/etc/hosts by mistake: a file that is not empty and not a profile is not replaced, nor
 * is one reached by a link; empty files, gzip and JSON are. */
START_TEST(test_out_file_existing_file_that_is_not_a_profile_is_kept)
{
    make_work();
    char fb[PATH_MAX], hosts[PATH_MAX], link[PATH_MAX], want[PATH_MAX + 16], why[256];
    use_fallback(fb);
    write_file(path_in(hosts, work, "hosts"), "127.0.0.1 localhost\n");
    ck_assert_int_eq(symlink(hosts, path_in(link, work, "to-hosts")), 0);
    ck_assert_int_eq(fx_out_file_check(hosts, why, sizeof(why)), FX_EINVAL);
    ck_assert_ptr_nonnull(strstr(why, "not a profile"));
    fmt(want, sizeof(want), "%s/hosts.json.gz", fb);
    assert_falls_back(hosts, "not a profile", want);
    fmt(want, sizeof(want), "%s/to-hosts.json.gz", fb);
    assert_falls_back(link, "not a profile", want);
    ck_assert_str_eq(read_file(hosts), "127.0.0.1 localhost\n");
    assert_kind(link, S_IFLNK);
    const char *ok[] = {"", "{}", "\x1f\x8b\x08"};
    for (int i = 0; i < 3; i++) {
        write_file(hosts, ok[i]);
        ck_assert_int_eq(fx_out_file_check(hosts, why, sizeof(why)), FX_OK);
    }
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

/* --- special files: written into, or refused; never replaced --- */

/* A character device node of our own (mknod, as root), else the system's one: no build of
 * this test, old or new, can then rename over the real /dev/null or /dev/full. */
static void char_device(char *out, const char *name, unsigned minor)
{
    path_in(out, work, name);
    if (mknod(out, S_IFCHR | 0666, makedev(1, minor)) != 0)
        fmt(out, PATH_MAX, "/dev/%s", name);
}

static void assert_chr(const char *path, unsigned minor)
{
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert(S_ISCHR(st.st_mode));
    ck_assert(st.st_rdev == makedev(1, minor));
}

START_TEST(test_out_file_char_device_is_written_into_not_replaced)
{
    make_work();
    char dev[PATH_MAX], link[PATH_MAX];
    char_device(dev, "null", 3);
    path_in(link, work, "to-null");
    ck_assert_int_eq(symlink(dev, link), 0);
    const char *targets[] = {dev, link};
    for (int i = 0; i < 2; i++) {
        struct fx_out_file f;
        struct fx_errbuf eb;
        ck_assert_int_eq(fx_out_file_open(&f, targets[i], 0, &eb), FX_OK);
        ck_assert(f.direct && !f.fell_back && f.tmp_path == NULL);
        ck_assert_str_eq(f.target, targets[i]);
        put(&f, "profile");
        ck_assert_int_eq(fx_out_file_commit(&f, &eb), FX_OK);
        fx_out_file_abort(&f);
    }
    assert_chr(dev, 3);
    assert_kind(link, S_IFLNK);
    int hidden;
    count_entries(work, &hidden);
    ck_assert_int_eq(hidden, 0); /* no temporary file anywhere */
    rm_tree(work);
}
END_TEST

/* /dev/full: the write fails with its errno, and neither the failure nor the abort removes
 * or replaces the device. */
START_TEST(test_out_file_char_device_write_error_keeps_device)
{
    make_work();
    char dev[PATH_MAX];
    char_device(dev, "full", 7);
    struct fx_out_file f;
    struct fx_errbuf eb;
    ck_assert_int_eq(fx_out_file_open(&f, dev, 0, &eb), FX_OK);
    ck_assert(f.direct);
    struct fx_sink sk = fx_out_file_sink(&f);
    ck_assert_int_eq(sk.write(sk.ctx, "x", 1), FX_EIO);
    ck_assert_int_eq(f.write_errno, ENOSPC);
    fx_out_file_abort(&f);
    assert_chr(dev, 7);
    rm_tree(work);
}
END_TEST

START_TEST(test_out_file_fifo_without_reader_falls_back_at_once)
{
    make_work();
    char fb[PATH_MAX], fifo[PATH_MAX], want[PATH_MAX + 16];
    use_fallback(fb);
    ck_assert_int_eq(mkfifo(path_in(fifo, work, "pipe"), 0600), 0);
    fmt(want, sizeof(want), "%s/pipe.json.gz", fb);
    assert_falls_back(fifo, "it is a FIFO that no process reads", want); /* does not block */
    assert_kind(fifo, S_IFIFO);
    rm_tree(work);
}
END_TEST

/* A reader gets the whole stream, larger than a pipe's buffer: the descriptor blocks again
 * after the non-blocking open. */
START_TEST(test_out_file_fifo_with_reader_gets_the_whole_stream)
{
    make_work();
    char fifo[PATH_MAX], copy[PATH_MAX];
    ck_assert_int_eq(mkfifo(path_in(fifo, work, "pipe"), 0600), 0);
    path_in(copy, work, "copy");
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) { /* the reader: the FIFO into a file */
        int in = open(fifo, O_RDONLY), out = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        char buf[4096];
        ssize_t n;
        while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
            if (write(out, buf, (size_t)n) != n)
                _exit(2);
        _exit(in >= 0 && out >= 0 ? 0 : 1);
    }
    struct fx_out_file f;
    struct fx_errbuf eb;
    int rc = FX_EIO;
    for (int i = 0; i < 500 && rc != FX_OK; i++) { /* until the child has opened its end */
        rc = fx_out_file_open(&f, fifo, 0, &eb);
        if (rc == FX_OK && !f.direct) {
            fx_out_file_abort(&f);
            rc = FX_EIO;
        }
        if (rc != FX_OK)
            usleep(10000);
    }
    ck_assert_int_eq(rc, FX_OK);
    static char big[200000];
    memset(big, 'p', sizeof(big));
    struct fx_sink sk = fx_out_file_sink(&f);
    ck_assert_int_eq(sk.write(sk.ctx, big, sizeof(big)), FX_OK);
    ck_assert_int_eq(fx_out_file_commit(&f, &eb), FX_OK);
    fx_out_file_abort(&f);
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct stat st;
    ck_assert_int_eq(stat(copy, &st), 0);
    ck_assert_int_eq(st.st_size, (off_t)sizeof(big));
    assert_kind(fifo, S_IFIFO);
    rm_tree(work);
}
END_TEST

/* A folder, a block device and a socket are never opened: the profile goes to the fallback
 * folder under a name that says what it is, and each stays what it was. */
START_TEST(test_out_file_folder_block_device_socket_fall_back_untouched)
{
    make_work();
    char fb[PATH_MAX], dir[PATH_MAX], blk[PATH_MAX], sock[PATH_MAX], want[PATH_MAX + 32];
    use_fallback(fb);
    ck_assert_int_eq(mkdir(path_in(dir, work, "dir"), 0700), 0);
    bool have_blk = mknod(path_in(blk, work, "blk"), S_IFBLK | 0600, makedev(7, 200)) == 0;
    int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    path_in(sock, work, "sock");
    ck_assert(strlen(sock) < sizeof(sa.sun_path));
    strcpy(sa.sun_path, sock);
    ck_assert_int_eq(bind(sfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    const char *targets[] = {dir, sock, blk};
    const char *names[] = {"dir", "sock", "blk"};
    const char *kinds[] = {"a folder", "a socket", "a block device"};
    for (int i = 0; i < (have_blk ? 3 : 2); i++) {
        char why[256];
        ck_assert_int_eq(fx_out_file_check(targets[i], why, sizeof(why)), FX_EINVAL);
        ck_assert_ptr_nonnull(strstr(why, kinds[i]));
        fmt(want, sizeof(want), "%s/%s.json.gz", fb, names[i]);
        assert_falls_back(targets[i], kinds[i], want);
    }
    assert_kind(dir, S_IFDIR);
    assert_kind(sock, S_IFSOCK);
    if (have_blk)
        assert_kind(blk, S_IFBLK);
    close(sfd);
    char why[256];
    ck_assert_int_eq(fx_out_file_check(path_in(want, work, "new.json.gz"), why, sizeof(why)),
                     FX_OK);
    rm_tree(work);
}
END_TEST

/* /proc/self/fd/N names an open file, not a folder entry: the file of stderr (or stdout) gets
 * the profile appended (what file=/dev/stdout means when stdout is a file), never renamed
 * over the link; any other open file (the application's jar) is refused. */
START_TEST(test_out_file_proc_fd_link_appends_to_stderr_only)
{
    make_work();
    char fb[PATH_MAX], log[PATH_MAX], target[64], want[PATH_MAX + 16];
    use_fallback(fb);
    write_file(path_in(log, work, "stderr.log"), "app output\n");
    int fd = open(log, O_WRONLY | O_APPEND);
    ck_assert_int_ge(fd, 0);
    snprintf(target, sizeof(target), "/proc/self/fd/%d", fd);
    fmt(want, sizeof(want), "%s/%d.json.gz", fb, fd);
    assert_falls_back(target, "not this process's stdout or stderr", want);
    int saved = dup(2);
    ck_assert_int_ge(saved, 0);
    ck_assert_int_eq(dup2(fd, 2), 2); /* the log is stderr now */
    struct fx_out_file f;
    struct fx_errbuf eb;
    int rc = fx_out_file_open(&f, "/proc/self/fd/2", 0, &eb);
    bool direct = rc == FX_OK && f.direct && !f.fell_back;
    if (rc == FX_OK) {
        put(&f, "profile");
        rc = fx_out_file_commit(&f, &eb);
        fx_out_file_abort(&f);
    }
    dup2(saved, 2);
    close(saved);
    close(fd);
    ck_assert_int_eq(rc, FX_OK);
    ck_assert(direct);
    ck_assert_str_eq(read_file(log), "app output\nprofile");
    rm_tree(work);
}
END_TEST

/* file=/dev/stdout on a terminal: megabytes of gzip on a screen help nobody. */
START_TEST(test_out_file_terminal_falls_back)
{
    make_work();
    char fb[PATH_MAX], want[PATH_MAX + 32];
    use_fallback(fb);
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0 || !ptsname(master)) {
        fprintf(stderr, "test_out_file_terminal_falls_back: no pseudo-terminal here: skipped\n");
        rm_tree(work);
        return;
    }
    char tty[PATH_MAX];
    fmt(tty, sizeof(tty), "%s", ptsname(master));
    fmt(want, sizeof(want), "%s/%s.json.gz", fb, strrchr(tty, '/') + 1);
    assert_falls_back(tty, "it is a terminal", want);
    close(master);
    rm_tree(work);
}
END_TEST

START_TEST(test_out_file_fallback_path_names_special_targets)
{
    char out[PATH_MAX];
    setenv("TMPDIR", "/fb", 1);
    ck_assert_int_eq(fx_out_file_fallback_path("/a/x.json.gz", false, out, sizeof(out)), FX_OK);
    ck_assert_str_eq(out, "/fb/x.json.gz");
    ck_assert_int_eq(fx_out_file_fallback_path("/dev/null", true, out, sizeof(out)), FX_OK);
    ck_assert_str_eq(out, "/fb/null.json.gz");
    ck_assert_int_eq(fx_out_file_fallback_path("/a/p.json", true, out, sizeof(out)), FX_OK);
    ck_assert_str_eq(out, "/fb/p.json");
    ck_assert_int_eq(fx_out_file_fallback_path("/a/p.json", true, out, 8), FX_ERANGE);
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
    tcase_add_test(tc, test_out_file_existing_file_that_is_not_a_profile_is_kept);
    suite_add_tcase(s, tc);
    tc = tcase_create("special");
    tcase_add_checked_fixture(tc, fixture_setup, fixture_teardown);
    tcase_add_test(tc, test_out_file_char_device_is_written_into_not_replaced);
    tcase_add_test(tc, test_out_file_char_device_write_error_keeps_device);
    tcase_add_test(tc, test_out_file_fifo_without_reader_falls_back_at_once);
    tcase_add_test(tc, test_out_file_fifo_with_reader_gets_the_whole_stream);
    tcase_add_test(tc, test_out_file_folder_block_device_socket_fall_back_untouched);
    tcase_add_test(tc, test_out_file_proc_fd_link_appends_to_stderr_only);
    tcase_add_test(tc, test_out_file_terminal_falls_back);
    tcase_add_test(tc, test_out_file_fallback_path_names_special_targets);
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
