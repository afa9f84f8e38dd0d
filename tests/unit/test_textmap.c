/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of core/symbols/textmap.c: parsing synthetic and real maps files, lookups at the
 * edges, huge tables, bad input, allocation failure, and publication to concurrent readers. */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_textmap.h"
#include "unit_tmpfile.h"

static const char MAPS[] =
        "55d0c0a00000-55d0c0a02000 r--p 00000000 fe:00 1001 /usr/bin/java\n"
        "55d0c0a02000-55d0c0a03000 r-xp 00002000 fe:00 1001 /usr/bin/java\n"
        "7f0000000000-7f0000100000 rwxp 00000000 00:00 0 \n"
        "7f1000001000-7f1000020000 r-xp 00001000 fe:00 2002     /usr/lib/x86_64-linux-gnu/libz.so.1.2.13\n"
        "7f1000020000-7f1000030000 r--p 00020000 fe:00 2002     /usr/lib/x86_64-linux-gnu/libz.so.1.2.13\n"
        "7f2000000000-7f2000010000 r-xp 00000000 08:11 3003 /tmp/my lib.so (deleted)\n"
        "7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]\n"
        "7ffd10000000-7ffd10001000 rw-p 00000000 00:00 0                          [stack]\n"
        "7ffe00000000-7ffe00001000 r-xp 00000000 00:00 0                          [anon:jit]\n";

static struct fx_textmap *read_text(const char *text)
{
    char path[64];
    unit_tmpfile_str(path, text);
    struct fx_textmap *t = NULL;
    struct fx_errbuf eb = {{0}};
    int rc = fx_textmap_read(path, &t, &eb);
    unlink(path);
    ck_assert_msg(rc == FX_OK, "fx_textmap_read: %s", eb.msg);
    return t;
}

START_TEST(test_textmap_keeps_only_executable_mappings_sorted)
{
    struct fx_textmap *t = read_text(MAPS);
    ck_assert_uint_eq(t->count, 6);
    for (size_t i = 1; i < t->count; i++)
        ck_assert(t->entries[i - 1].end <= t->entries[i].start);
    const struct fx_textmap_entry *z = &t->entries[2];
    ck_assert_uint_eq(z->start, 0x7f1000001000u);
    ck_assert_uint_eq(z->end, 0x7f1000020000u);
    ck_assert_uint_eq(z->offset, 0x1000);
    ck_assert_uint_eq(z->inode, 2002);
    ck_assert_uint_eq(z->dev_major, 0xfe);
    ck_assert_uint_eq(z->dev_minor, 0);
    ck_assert_int_eq(z->kind, FX_TEXTMAP_FILE);
    ck_assert_str_eq(z->path, "/usr/lib/x86_64-linux-gnu/libz.so.1.2.13");
    fx_textmap_free(t);
}
END_TEST

START_TEST(test_textmap_kinds_deleted_anon_special)
{
    struct fx_textmap *t = read_text(MAPS);
    const struct fx_textmap_entry *anon = fx_textmap_lookup_sigsafe(t, 0x7f0000000010u);
    ck_assert_ptr_nonnull(anon);
    ck_assert_int_eq(anon->kind, FX_TEXTMAP_ANON);
    ck_assert_str_eq(anon->path, "");
    const struct fx_textmap_entry *del = fx_textmap_lookup_sigsafe(t, 0x7f2000000100u);
    ck_assert_int_eq(del->kind, FX_TEXTMAP_DELETED);
    ck_assert_str_eq(del->path, "/tmp/my lib.so"); /* spaces kept, suffix removed */
    ck_assert_uint_eq(del->dev_major, 8);
    ck_assert_uint_eq(del->dev_minor, 0x11);
    const struct fx_textmap_entry *vdso = fx_textmap_lookup_sigsafe(t, 0x7ffd00001fffu);
    ck_assert_int_eq(vdso->kind, FX_TEXTMAP_SPECIAL);
    ck_assert_str_eq(vdso->path, "[vdso]");
    const struct fx_textmap_entry *named = fx_textmap_lookup_sigsafe(t, 0x7ffe00000000u);
    ck_assert_int_eq(named->kind, FX_TEXTMAP_ANON);
    ck_assert_str_eq(named->path, "[anon:jit]");
    fx_textmap_free(t);
}
END_TEST

START_TEST(test_textmap_lookup_edges_and_gaps)
{
    struct fx_textmap *t = read_text(MAPS);
    ck_assert_ptr_eq(fx_textmap_lookup_sigsafe(t, 0x55d0c0a02000u), &t->entries[0]);
    ck_assert_ptr_eq(fx_textmap_lookup_sigsafe(t, 0x55d0c0a02fffu), &t->entries[0]);
    ck_assert_ptr_null(fx_textmap_lookup_sigsafe(t, 0x55d0c0a03000u)); /* end is exclusive */
    ck_assert_ptr_null(fx_textmap_lookup_sigsafe(t, 0x55d0c0a01000u)); /* r--p: not kept */
    ck_assert_ptr_null(fx_textmap_lookup_sigsafe(t, 0));
    ck_assert_ptr_null(fx_textmap_lookup_sigsafe(t, UINTPTR_MAX));
    ck_assert_ptr_null(fx_textmap_lookup_sigsafe(t, 0x7ffd10000000u)); /* [stack] rw-p */
    ck_assert_ptr_null(fx_textmap_lookup_sigsafe(NULL, 0x55d0c0a02000u));
    fx_textmap_free(t);
}
END_TEST

START_TEST(test_textmap_unsorted_input_is_sorted)
{
    struct fx_textmap *t = read_text("3000-4000 r-xp 0 00:00 0 \n"
                                     "1000-2000 r-xp 0 00:00 0 [a]\n"
                                     "2000-3000 r-xp 0 00:00 0 [b]\n");
    ck_assert_uint_eq(t->count, 3);
    ck_assert_str_eq(fx_textmap_lookup_sigsafe(t, 0x1fff)->path, "[a]");
    ck_assert_str_eq(fx_textmap_lookup_sigsafe(t, 0x2000)->path, "[b]");
    ck_assert_str_eq(fx_textmap_lookup_sigsafe(t, 0x3000)->path, "");
    fx_textmap_free(t);
}
END_TEST

START_TEST(test_textmap_empty_file_is_an_empty_table)
{
    struct fx_textmap *t = read_text("");
    ck_assert_uint_eq(t->count, 0);
    ck_assert_ptr_null(fx_textmap_lookup_sigsafe(t, 0x1000));
    fx_textmap_free(t);
}
END_TEST

/* 200k mappings with 4 KiB gaps between them: every start, last byte and gap is checked. */
START_TEST(test_textmap_huge_table_every_lookup_right)
{
    enum {
        N = 200000
    };
    size_t cap = (size_t)N * 64, len = 0;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    for (size_t i = N; i-- > 0;) /* reversed, so the sort is exercised too */
        len += (size_t)snprintf(text + len, cap - len, "%zx-%zx r-xp %zx 00:01 %zu /l%zu\n",
                                0x10000 + i * 0x3000, 0x10000 + i * 0x3000 + 0x2000, i, i + 1, i);
    char path[64];
    unit_tmpfile_write(path, text, len);
    free(text);
    struct fx_textmap *t = NULL;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_textmap_read(path, &t, &eb), FX_OK);
    unlink(path);
    ck_assert_uint_eq(t->count, N);
    for (size_t i = 0; i < N; i++) {
        uintptr_t start = 0x10000 + i * 0x3000;
        const struct fx_textmap_entry *e = fx_textmap_lookup_sigsafe(t, start);
        ck_assert_ptr_eq(e, &t->entries[i]);
        ck_assert_ptr_eq(fx_textmap_lookup_sigsafe(t, start + 0x1fff), e);
        ck_assert_ptr_null(fx_textmap_lookup_sigsafe(t, start + 0x2000));
        ck_assert_uint_eq(e->inode, i + 1);
    }
    fx_textmap_free(t);
}
END_TEST

static void expect_error(const char *text, int want, const char *needle)
{
    char path[64];
    unit_tmpfile_str(path, text);
    struct fx_textmap *t = (struct fx_textmap *)1;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_textmap_read(path, &t, &eb), want);
    unlink(path);
    ck_assert_ptr_null(t);
    ck_assert_msg(strstr(eb.msg, needle), "message '%s' lacks '%s'", eb.msg, needle);
    ck_assert_ptr_null(strchr(eb.msg, '\n'));
}

START_TEST(test_textmap_bad_input_one_clear_line)
{
    expect_error("1000-2000 r-xp 0 00:00 0 [a]\nnot a maps line\n", FX_EINVAL, ":2: not a maps");
    expect_error("2000-1000 r-xp 0 00:00 0 [a]\n", FX_EINVAL, ":1: not a maps");
    expect_error("1000-2000 r-xp 0 00:00\n", FX_EINVAL, ":1: not a maps");
    expect_error("1000-3000 r-xp 0 00:00 0 [a]\n2000-4000 r-xp 0 00:00 0 [b]\n", FX_EINVAL,
                 "overlap: 1000-3000 and 2000-4000");
    struct fx_textmap *t = (struct fx_textmap *)1;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_textmap_read("/nonexistent/maps", &t, &eb), FX_EIO);
    ck_assert_ptr_null(t);
    ck_assert_str_eq(eb.msg, "/nonexistent/maps: No such file or directory");
}
END_TEST

START_TEST(test_textmap_allocation_failure_is_reported_and_leaks_nothing)
{
    char path[64];
    unit_tmpfile_str(path, MAPS);
    int failures = 0;
    for (long n = 1; n < 20; n++) {
        struct fx_textmap *t = NULL;
        struct fx_errbuf eb = {{0}};
        fx_alloc_fail_after(n);
        int rc = fx_textmap_read(path, &t, &eb);
        fx_alloc_fail_after(0);
        if (rc == FX_OK) {
            ck_assert_uint_eq(t->count, 6);
            fx_textmap_free(t);
            break;
        }
        failures++;
        ck_assert_int_eq(rc, FX_ENOMEM);
        ck_assert_ptr_null(t);
        ck_assert_ptr_nonnull(strstr(eb.msg, "out of memory"));
    }
    unlink(path);
    ck_assert_int_ge(failures, 3); /* line buffer, rows, paths, the table */
}
END_TEST

static void probe(void)
{
}

START_TEST(test_textmap_real_self_maps_finds_own_code)
{
    struct fx_textmap *t = NULL;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_textmap_read("/proc/self/maps", &t, &eb), FX_OK);
    const struct fx_textmap_entry *e = fx_textmap_lookup_sigsafe(t, (uintptr_t)&probe);
    ck_assert_ptr_nonnull(e);
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    ck_assert_int_gt(n, 0);
    exe[n] = '\0';
    ck_assert_str_eq(e->path, exe);
    ck_assert_int_eq(e->kind, FX_TEXTMAP_FILE);
    ck_assert_ptr_nonnull(fx_textmap_lookup_sigsafe(t, (uintptr_t)&memcpy));
    fx_textmap_free(t);
}
END_TEST

/* The stack table (vm_threads.c): private read-write mappings only, and a new thread's stack
 * pointer lies in the entry pthread says is its stack, read after the thread was started. */
START_TEST(test_textmap_rw_keeps_private_writable_mappings)
{
    char path[64];
    unit_tmpfile_str(path, "1000-2000 r-xp 0 00:00 0 /lib/a\n"
                           "2000-3000 rw-p 0 00:00 0 \n"
                           "3000-4000 rw-s 0 00:00 7 /dev/shm/x\n"
                           "4000-5000 r--p 0 00:00 0 /lib/a\n"
                           "6000-7000 rwxp 0 00:00 0 [stack]\n");
    struct fx_textmap *t = NULL;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_textmap_read_rw(path, &t, &eb), FX_OK);
    unlink(path);
    ck_assert_uint_eq(t->count, 2);
    ck_assert_uint_eq(t->entries[0].start, 0x2000);
    ck_assert_uint_eq(t->entries[1].start, 0x6000);
    ck_assert_int_eq(t->entries[1].kind, FX_TEXTMAP_SPECIAL);
    ck_assert_ptr_null(fx_textmap_lookup_sigsafe(t, 0x3800));
    fx_textmap_free(t);
}
END_TEST

struct stack_probe {
    uintptr_t sp, lo, hi;
    pthread_mutex_t m;
    pthread_cond_t c;
    int stage; /* 1: sp and bounds set, 2: the test has read the table */
};

static void *stack_thread(void *arg)
{
    struct stack_probe *p = arg;
    volatile char here = 0;
    pthread_attr_t a;
    void *lo = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &a) == 0) { /* no ck_assert off the test's thread */
        if (pthread_attr_getstack(&a, &lo, &size) != 0)
            lo = NULL;
        pthread_attr_destroy(&a);
    }
    pthread_mutex_lock(&p->m);
    p->sp = (uintptr_t)&here;
    p->lo = (uintptr_t)lo;
    p->hi = (uintptr_t)lo + size;
    p->stage = 1;
    pthread_cond_broadcast(&p->c);
    while (p->stage != 2)
        pthread_cond_wait(&p->c, &p->m);
    pthread_mutex_unlock(&p->m);
    return NULL;
}

START_TEST(test_textmap_rw_finds_a_new_threads_stack_by_its_sp)
{
    struct stack_probe p = {.m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, stack_thread, &p), 0);
    pthread_mutex_lock(&p.m);
    while (p.stage != 1)
        pthread_cond_wait(&p.c, &p.m);
    pthread_mutex_unlock(&p.m);
    ck_assert_uint_ne(p.lo, 0);
    struct fx_textmap *t = NULL;
    struct fx_errbuf eb = {{0}};
    ck_assert_msg(fx_textmap_read_rw("/proc/self/maps", &t, &eb) == FX_OK, "%s", eb.msg);
    const struct fx_textmap_entry *e = fx_textmap_lookup_sigsafe(t, p.sp);
    ck_assert_ptr_nonnull(e);
    /* the mapping may be larger (glibc's guard is apart, a neighbour may merge), never smaller
     * than the part of the stack the thread can use */
    ck_assert_uint_le(e->start, p.sp);
    ck_assert_uint_ge(e->end, p.hi);
    ck_assert_uint_le(e->start, p.hi - 1);
    fx_textmap_free(t);
    pthread_mutex_lock(&p.m);
    p.stage = 2;
    pthread_cond_broadcast(&p.c);
    pthread_mutex_unlock(&p.m);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
}
END_TEST

static struct fx_textmap *one_entry(uintptr_t start)
{
    char text[128];
    snprintf(text, sizeof(text), "%zx-%zx r-xp 0 00:00 0 [x]\n", (size_t)start,
             (size_t)start + 0x1000);
    return read_text(text);
}

START_TEST(test_textmap_slot_keeps_the_retired_table_while_a_reader_is_inside)
{
    struct fx_textmap_slot s = {0};
    uint32_t ticket;
    ck_assert_ptr_null(fx_textmap_slot_enter_sigsafe(&s, &ticket));
    fx_textmap_slot_leave_sigsafe(&s, ticket);
    struct fx_textmap *a = one_entry(0x1000), *b = one_entry(0x2000), *c = one_entry(0x3000);
    ck_assert_int_eq(fx_textmap_slot_publish(&s, a), FX_OK);
    const struct fx_textmap *seen = fx_textmap_slot_enter_sigsafe(&s, &ticket);
    ck_assert_ptr_eq(seen, a);
    ck_assert_int_eq(fx_textmap_slot_publish(&s, b), FX_OK); /* a retired, still read */
    ck_assert(fx_textmap_slot_reclaim(&s));
    ck_assert_int_eq(fx_textmap_slot_publish(&s, c), FX_EFULL); /* slot and c unchanged */
    ck_assert_ptr_eq(s.current, b);
    ck_assert_ptr_nonnull(fx_textmap_lookup_sigsafe(seen, 0x1000)); /* a is still readable */
    uint32_t t2;
    ck_assert_ptr_eq(fx_textmap_slot_enter_sigsafe(&s, &t2), b); /* a new reader: other count */
    ck_assert_uint_ne(t2, ticket);
    fx_textmap_slot_leave_sigsafe(&s, ticket);
    ck_assert(!fx_textmap_slot_reclaim(&s)); /* the new reader does not hold a back */
    ck_assert_ptr_null(s.retired);
    fx_textmap_slot_leave_sigsafe(&s, t2);
    ck_assert_int_eq(fx_textmap_slot_publish(&s, c), FX_OK);
    ck_assert(!fx_textmap_slot_reclaim(&s));
    fx_textmap_slot_leave_sigsafe(&s, FX_TEXTMAP_NO_TICKET); /* a no-op */
    fx_textmap_slot_destroy(&s);
    ck_assert_ptr_null(s.current);
}
END_TEST

struct race {
    struct fx_textmap_slot slot;
    int stop;
    long reads, misses;
};

/* Each table maps exactly 0x5000-0x6000 to "[x]": a reader that saw freed memory would find
 * garbage (and ASan/valgrind runs of this test would report the use after free). Two readers
 * that never pause must not starve the writer either: 300 publishes complete. */
static void *reader(void *arg)
{
    struct race *r = arg;
    while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
        uint32_t ticket;
        const struct fx_textmap *t = fx_textmap_slot_enter_sigsafe(&r->slot, &ticket);
        if (t) {
            const struct fx_textmap_entry *e = fx_textmap_lookup_sigsafe(t, 0x5800);
            ck_assert(e && e->start == 0x5000 && strcmp(e->path, "[x]") == 0);
            __atomic_add_fetch(&r->reads, 1, __ATOMIC_RELAXED);
        } else {
            ck_assert_uint_eq(ticket, FX_TEXTMAP_NO_TICKET); /* two publishes raced the entry */
            __atomic_add_fetch(&r->misses, 1, __ATOMIC_RELAXED);
        }
        fx_textmap_slot_leave_sigsafe(&r->slot, ticket);
    }
    return NULL;
}

START_TEST(test_textmap_slot_readers_never_see_a_freed_table)
{
    static struct race r;
    memset(&r, 0, sizeof(r));
    char path[64];
    unit_tmpfile_str(path, "5000-6000 r-xp 0 00:00 0 [x]\n");
    struct fx_errbuf eb = {{0}};
    struct fx_textmap *first = NULL;
    ck_assert_int_eq(fx_textmap_read(path, &first, &eb), FX_OK);
    ck_assert_int_eq(fx_textmap_slot_publish(&r.slot, first), FX_OK);
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, reader, &r), 0);
    int published = 0;
    /* Until both readers have read a lot too: on a loaded machine they may start late. */
    for (int i = 0; i < 300 || __atomic_load_n(&r.reads, __ATOMIC_RELAXED) < 10000; i++) {
        struct fx_textmap *t = NULL;
        ck_assert_int_eq(fx_textmap_read(path, &t, &eb), FX_OK);
        while (fx_textmap_slot_publish(&r.slot, t) == FX_EFULL)
            sched_yield();
        published++;
    }
    unlink(path);
    __atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_join(th[i], NULL), 0);
    ck_assert_int_ge(published, 300);
    ck_assert(!fx_textmap_slot_reclaim(&r.slot));
    ck_assert_uint_eq(r.slot.readers[0] + r.slot.readers[1], 0);
    fx_textmap_slot_destroy(&r.slot);
}
END_TEST

static Suite *textmap_suite(void)
{
    Suite *s = suite_create("textmap");
    TCase *tc = tcase_create("parse");
    tcase_set_timeout(tc, 120); /* generous: CI machines are shared and sanitized */
    tcase_add_test(tc, test_textmap_keeps_only_executable_mappings_sorted);
    tcase_add_test(tc, test_textmap_kinds_deleted_anon_special);
    tcase_add_test(tc, test_textmap_lookup_edges_and_gaps);
    tcase_add_test(tc, test_textmap_unsorted_input_is_sorted);
    tcase_add_test(tc, test_textmap_empty_file_is_an_empty_table);
    tcase_add_test(tc, test_textmap_huge_table_every_lookup_right);
    tcase_add_test(tc, test_textmap_real_self_maps_finds_own_code);
    tcase_add_test(tc, test_textmap_rw_keeps_private_writable_mappings);
    tcase_add_test(tc, test_textmap_rw_finds_a_new_threads_stack_by_its_sp);
    suite_add_tcase(s, tc);
    tc = tcase_create("failure");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_textmap_bad_input_one_clear_line);
    tcase_add_test(tc, test_textmap_allocation_failure_is_reported_and_leaks_nothing);
    suite_add_tcase(s, tc);
    tc = tcase_create("publish");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_textmap_slot_keeps_the_retired_table_while_a_reader_is_inside);
    tcase_add_test(tc, test_textmap_slot_readers_never_see_a_freed_table);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(textmap_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
