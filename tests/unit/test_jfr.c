/* SPDX-License-Identifier: Apache-2.0 */
/* The JFR reader (core/readers/jfr_*.c) on the hand-built recordings of tests/fuzz/corpus/jfr
 * (tests/fuzz/make_jfr_corpus.py, whose values the JDK's own `jfr print` reads the same):
 * classes and fields from the metadata, events, pool references, every string encoding, ticks
 * as nanoseconds, two chunks; a recording cut short, a file that is not one, corrupt offsets
 * and failing allocations give an error or an end, never a crash; the read-ahead's thread
 * changes none of it. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_jfr.h"
#include "unit_light.h"
#include "unit_tmpfile.h"

#define SMALL    FX_JFR_SEEDS "/01-small.jfr"
#define TWO      FX_JFR_SEEDS "/02-two.jfr"
#define START_NS 1700000000000000000ll

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    static char buf[8192];
    *len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return buf;
}

static struct fx_jfr *open_ok(const char *path)
{
    struct fx_jfr *r = NULL;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_jfr_open(path, &r, &eb), FX_OK);
    return r;
}

/* Field `name` of object o as a value. */
static struct fx_jfr_value field(struct fx_jfr *r, const struct fx_jfr_obj *o, const char *name)
{
    struct fx_jfr_value v[8];
    struct fx_errbuf eb = {{0}};
    int f = fx_jfr_field(r, o->cls, name);
    ck_assert_int_ge(f, 0);
    ck_assert_int_eq(fx_jfr_fields(r, o, v, fx_jfr_field_count(r, o->cls), &eb), FX_OK);
    return v[f];
}

static struct fx_jfr_obj deref(struct fx_jfr *r, struct fx_jfr_value v)
{
    struct fx_jfr_obj o;
    ck_assert_int_eq(fx_jfr_deref(r, &v, &o), FX_OK);
    return o;
}

static const char *str(struct fx_jfr *r, struct fx_jfr_value v)
{
    static char buf[64];
    ck_assert_int_eq(fx_jfr_string(r, &v, buf, sizeof buf, NULL), FX_OK);
    return buf;
}

START_TEST(test_jfr_reads_classes_events_pools_and_strings)
{
    ck_assert(fx_jfr_is_jfr(SMALL));
    struct fx_jfr *r = open_ok(SMALL);
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_jfr_next_chunk(r, &eb), 1);
    ck_assert_int_eq(fx_jfr_chunk(r)->major, 2);
    uint32_t exec = fx_jfr_class_find(r, "jdk.ExecutionSample");
    ck_assert_uint_ne(exec, UINT32_MAX);
    ck_assert(fx_jfr_class_is_event(r, exec));
    ck_assert(!fx_jfr_class_is_event(r, fx_jfr_class_find(r, "java.lang.Thread")));
    ck_assert_int_eq(fx_jfr_field(r, exec, "stackTrace"), 2);
    ck_assert_int_eq(fx_jfr_field(r, exec, "nope"), -1);
    struct fx_jfr_obj ev;
    int n_exec = 0, n_other = 0, rc;
    while ((rc = fx_jfr_next_event(r, &ev, &eb)) == 1) {
        const char *name = fx_jfr_class_name(r, ev.cls);
        if (ev.cls != exec) {
            n_other++;
            if (strcmp(name, "test.Strings"))
                continue;
            ck_assert_str_eq(str(r, field(r, &ev, "a")), "caf\xc3\xa9"); /* Latin-1 */
            ck_assert_str_eq(str(r, field(r, &ev, "b")), "\xce\xa9x");   /* char array */
            ck_assert_str_eq(str(r, field(r, &ev, "c")), "pooled");      /* pool reference */
            ck_assert_str_eq(str(r, field(r, &ev, "d")), "");            /* empty */
            struct fx_jfr_value e = field(r, &ev, "e");
            char buf[8];
            ck_assert_int_eq(fx_jfr_string(r, &e, buf, sizeof buf, NULL), FX_ENOTFOUND);
            continue;
        }
        if (n_exec++ != 0)
            continue;
        /* the first: main at tick 5100 (5000 is the chunk's start), stack 1 */
        struct fx_jfr_value t = field(r, &ev, "startTime");
        ck_assert_int_eq(fx_jfr_ticks_to_ns(r, t.i), START_NS + 100);
        struct fx_jfr_obj th = deref(r, field(r, &ev, "sampledThread"));
        ck_assert_str_eq(str(r, field(r, &th, "javaName")), "main");
        ck_assert_int_eq(field(r, &th, "osThreadId").i, 101);
        struct fx_jfr_obj st = deref(r, field(r, &ev, "stackTrace"));
        ck_assert_int_eq(field(r, &st, "truncated").i, 0);
        struct fx_jfr_value frames = field(r, &st, "frames");
        ck_assert_int_eq(frames.kind, FX_JFR_ARRAY);
        ck_assert_int_eq(frames.i, 2);
        const uint8_t *cur = NULL;
        uint32_t idx;
        struct fx_jfr_value fr;
        int lines[2] = {0};
        while (fx_jfr_array_next(r, &frames, &cur, &idx, &fr, &eb) == 1) {
            struct fx_jfr_obj fo = deref(r, fr);
            lines[idx] = (int)field(r, &fo, "lineNumber").i;
            if (idx == 0) { /* the leaf: App.work, JIT compiled */
                struct fx_jfr_obj m = deref(r, field(r, &fo, "method"));
                struct fx_jfr_obj sym = deref(r, field(r, &m, "name"));
                ck_assert_str_eq(str(r, field(r, &sym, "string")), "work");
                struct fx_jfr_obj ft = deref(r, field(r, &fo, "type"));
                ck_assert_str_eq(str(r, field(r, &ft, "description")), "JIT compiled");
            }
        }
        ck_assert_int_eq(lines[0], 20);
        ck_assert_int_eq(lines[1], 10);
        /* the same frames decoded in one pass (fx_jfr_array_fields), every field or only the
         * first ones (the rest skipped to reach the next element) */
        uint32_t fc = fx_jfr_field_count(r, frames.cls);
        int fl = fx_jfr_field(r, frames.cls, "lineNumber"),
            fm = fx_jfr_field(r, frames.cls, "method");
        ck_assert_int_ge(fl, 0);
        ck_assert_int_ge(fm, 0);
        for (uint32_t n = (uint32_t)fl + 1; n <= fc; n++) {
            struct fx_jfr_value v[8];
            int got[2] = {0}, k = 0;
            cur = NULL;
            while ((k = fx_jfr_array_fields(r, &frames, &cur, &idx, v, n, &eb)) == 1) {
                ck_assert_uint_lt(idx, 2);
                got[idx] = (int)v[fl].i;
                if (idx == 0 && (uint32_t)fm < n) {
                    struct fx_jfr_obj m = deref(r, v[fm]);
                    struct fx_jfr_obj sym = deref(r, field(r, &m, "name"));
                    ck_assert_str_eq(str(r, field(r, &sym, "string")), "work");
                }
            }
            ck_assert_int_eq(k, 0);
            ck_assert_int_eq(got[0], 20);
            ck_assert_int_eq(got[1], 10);
        }
    }
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(n_exec, 4);
    ck_assert_int_eq(n_other, 2); /* the native method sample and test.Strings */
    ck_assert_int_eq(fx_jfr_next_chunk(r, &eb), 0);
    ck_assert_uint_eq(fx_jfr_stats(r)->chunks, 1);
    ck_assert_uint_eq(fx_jfr_stats(r)->metadata_events, 1);
    ck_assert_uint_eq(fx_jfr_stats(r)->pool_events, 1);
    ck_assert_uint_eq(fx_jfr_stats(r)->bytes_incomplete, 0);
    fx_jfr_close(r);
}
END_TEST

START_TEST(test_jfr_two_chunks_and_a_cut_one)
{
    struct fx_errbuf eb = {{0}};
    struct fx_jfr *r = open_ok(TWO);
    ck_assert_int_eq(fx_jfr_next_chunk(r, &eb), 1);
    ck_assert_int_eq(fx_jfr_next_chunk(r, &eb), 1);
    ck_assert_uint_eq(fx_jfr_chunk(r)->offset, fx_jfr_stats(r)->file_size / 2);
    ck_assert_int_eq(fx_jfr_next_chunk(r, &eb), 0);
    fx_jfr_close(r);
    /* cut 100 bytes into the second chunk: one chunk, then the end, the rest counted */
    size_t len;
    const char *two = slurp(TWO, &len);
    char path[64];
    unit_tmpfile_write(path, two, len / 2 + 100);
    r = open_ok(path);
    ck_assert_int_eq(fx_jfr_next_chunk(r, &eb), 1);
    ck_assert_int_eq(fx_jfr_next_chunk(r, &eb), 0);
    ck_assert_uint_eq(fx_jfr_stats(r)->chunks, 1);
    ck_assert_uint_eq(fx_jfr_stats(r)->bytes_incomplete, 100);
    fx_jfr_close(r);
    unlink(path);
}
END_TEST

/* A chunk still being written: the JVM writes its header's metadata offset at the first flush
 * and sets the file state byte to 255 while it updates the header (the JDK's ChunkHeader). */
START_TEST(test_jfr_chunk_still_being_written_ends_the_recording)
{
    size_t len;
    char *small = slurp(SMALL, &len);
    char path[64];
    struct fx_errbuf eb = {{0}};
    for (int k = 0; k < 2; k++) {
        char *copy = malloc(len);
        ck_assert_ptr_nonnull(copy);
        memcpy(copy, small, len);
        if (k == 0)
            memset(copy + 24, 0, 8); /* no metadata yet */
        else
            copy[64] = (char)255; /* header being updated */
        unit_tmpfile_write(path, copy, len);
        free(copy);
        struct fx_jfr *r = open_ok(path);
        ck_assert_int_eq(fx_jfr_next_chunk(r, &eb), 0);
        ck_assert_uint_eq(fx_jfr_stats(r)->chunks, 0);
        ck_assert_uint_eq(fx_jfr_stats(r)->bytes_incomplete, len);
        fx_jfr_close(r);
        unlink(path);
    }
    /* A repository's last file, still written (seen on a real one): the header's state is the
     * generation (1 to 254), its size covers what was flushed, and the bytes written since
     * follow. A finished chunk, then such a one: the finished chunk, the rest counted (it
     * used to be "no chunk starts there" and exit 1). */
    const char *two = slurp(TWO, &len); /* slurp's buffer: small is no more */
    char *grown = malloc(len + 50);
    ck_assert_ptr_nonnull(grown);
    memcpy(grown, two, len);
    memset(grown + len, 0x5a, 50);
    grown[len / 2 + 64] = 2;
    unit_tmpfile_write(path, grown, len + 50);
    free(grown);
    struct fx_jfr *r = open_ok(path);
    ck_assert_int_eq(fx_jfr_next_chunk(r, &eb), 1);
    ck_assert_int_eq(fx_jfr_next_chunk(r, &eb), 0);
    ck_assert_uint_eq(fx_jfr_stats(r)->chunks, 1);
    ck_assert_uint_eq(fx_jfr_stats(r)->bytes_incomplete, len / 2 + 50);
    fx_jfr_close(r);
    unlink(path);
}
END_TEST

START_TEST(test_jfr_not_a_recording_is_one_line)
{
    char path[64];
    unit_tmpfile_str(path, "this is a text file, long enough for a chunk header, but it is "
                           "not a recording at all");
    ck_assert(!fx_jfr_is_jfr(path));
    struct fx_jfr *r = NULL;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_jfr_open(path, &r, &eb), FX_EINVAL);
    ck_assert_ptr_null(r);
    ck_assert_ptr_nonnull(strstr(eb.msg, "not a JFR recording"));
    ck_assert_ptr_null(strchr(eb.msg, '\n'));
    unlink(path);
    ck_assert_int_eq(fx_jfr_open("/nonexistent/x.jfr", &r, &eb), FX_EIO);
}
END_TEST

/* Reads every chunk, event, field, reference and string; returns the first error or 0. */
static int read_all(const char *path)
{
    struct fx_jfr *r = NULL;
    struct fx_errbuf eb = {{0}};
    int rc = fx_jfr_open(path, &r, &eb);
    if (rc != FX_OK)
        return rc;
    while ((rc = fx_jfr_next_chunk(r, &eb)) == 1) {
        struct fx_jfr_obj ev;
        while ((rc = fx_jfr_next_event(r, &ev, &eb)) == 1) {
            struct fx_jfr_value v[8];
            uint32_t n = fx_jfr_field_count(r, ev.cls);
            if (n > 8 || fx_jfr_fields(r, &ev, v, n, &eb) != FX_OK)
                continue;
            for (uint32_t i = 0; i < n; i++) {
                char buf[32];
                struct fx_jfr_obj o;
                fx_jfr_string(r, &v[i], buf, sizeof buf, NULL);
                if (fx_jfr_deref(r, &v[i], &o) == FX_OK && fx_jfr_field_count(r, o.cls) <= 8)
                    fx_jfr_fields(r, &o, v, fx_jfr_field_count(r, o.cls), &eb);
            }
        }
        if (rc < 0)
            break;
    }
    fx_jfr_close(r);
    return rc;
}

START_TEST(test_jfr_corrupt_bytes_and_failing_allocations_never_crash)
{
    size_t len;
    char *small = slurp(SMALL, &len);
    char *copy = malloc(len);
    ck_assert_ptr_nonnull(copy);
    char path[64];
    /* every byte in turn set to 0xff (a huge varint, count or offset) and to 0 */
    for (size_t i = 0, step = unit_step(11); i < len; i += step) {
        for (int b = 0; b < 2; b++) {
            memcpy(copy, small, len);
            copy[i] = b ? (char)0xff : 0;
            unit_tmpfile_write(path, copy, len);
            int rc = read_all(path);
            ck_assert(rc == 0 || rc == FX_EINVAL || rc == FX_EUNSUPPORTED);
            unlink(path);
        }
    }
    free(copy);
    /* each allocation failing in turn: FX_ENOMEM, or done */
    for (long n = 1; n < 40; n++) {
        fx_alloc_fail_after(n);
        int rc = read_all(TWO);
        fx_alloc_fail_after(0);
        ck_assert(rc == 0 || rc == FX_ENOMEM);
    }
}
END_TEST

/* What a reader sees of a file, as text: each chunk's offset, classes and events (their classes
 * summed), then the end's result, message and stats; ahead: through fx_jfr_read_ahead. */
static void walk(const char *path, bool ahead, char *out, size_t cap)
{
    struct fx_jfr *r = NULL;
    struct fx_errbuf eb = {{0}};
    size_t n = 0;
    int rc = fx_jfr_open(path, &r, &eb);
    if (rc != FX_OK) {
        snprintf(out, cap, "open %d %s", rc, eb.msg);
        return;
    }
    if (ahead)
        ck_assert_int_eq(fx_jfr_read_ahead(r), FX_OK);
    while ((rc = fx_jfr_next_chunk(r, &eb)) == 1) {
        struct fx_jfr_obj ev;
        uint64_t events = 0, sum = 0;
        while ((rc = fx_jfr_next_event(r, &ev, &eb)) == 1)
            events++, sum += ev.cls + (uint64_t)(ev.end - ev.p);
        n += (size_t)snprintf(out + n, cap - n, "chunk %llu: %u classes, %llu events (%llu), %d;",
                              (unsigned long long)fx_jfr_chunk(r)->offset, fx_jfr_class_count(r),
                              (unsigned long long)events, (unsigned long long)sum, rc);
        ck_assert_uint_lt(n, cap);
        if (rc < 0)
            break;
    }
    const struct fx_jfr_stats *st = fx_jfr_stats(r);
    snprintf(out + n, cap - n, "end %d '%s' %llu chunks %llu entries %llu incomplete", rc, eb.msg,
             (unsigned long long)st->chunks, (unsigned long long)st->pool_entries,
             (unsigned long long)st->bytes_incomplete);
    fx_jfr_close(r);
}

/* The read-ahead (the next chunk loaded on a thread while this one is read) changes nothing a
 * caller sees: the same chunks, events, errors and their messages, stats, for every byte of a
 * two-chunk recording damaged and for the recording cut at every 7th byte. */
START_TEST(test_jfr_read_ahead_reads_the_same)
{
    size_t len;
    const char *two = slurp(TWO, &len);
    char *copy = malloc(len);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, two, len);
    char path[64], a[2048], b[2048];
    walk(TWO, false, a, sizeof a);
    walk(TWO, true, b, sizeof b);
    ck_assert_str_eq(a, b);
    ck_assert_ptr_nonnull(strstr(a, "end 0 '' 2 chunks"));
    for (size_t i = 0, step = unit_step(11); i < len; i += step) {
        for (int k = 0; k < 3; k++) {
            memcpy(copy, two, len);
            copy[i] = k == 0 ? (char)0xff : k == 1 ? 0 : (char)(copy[i] ^ 0x40);
            unit_tmpfile_write(path, copy, len);
            walk(path, false, a, sizeof a);
            walk(path, true, b, sizeof b);
            ck_assert_str_eq(a, b);
            unlink(path);
        }
        if (i % 7 == 0 && i >= 68) { /* light: every 77th */
            memcpy(copy, two, len);
            unit_tmpfile_write(path, copy, i);
            walk(path, false, a, sizeof a);
            walk(path, true, b, sizeof b);
            ck_assert_str_eq(a, b);
            unlink(path);
        }
    }
    free(copy);
}
END_TEST

static Suite *jfr_suite(void)
{
    Suite *s = suite_create("jfr");
    TCase *tc = tcase_create("read");
    tcase_set_timeout(tc, 120); /* generous: CI machines are shared and sanitized */
    tcase_add_test(tc, test_jfr_reads_classes_events_pools_and_strings);
    tcase_add_test(tc, test_jfr_two_chunks_and_a_cut_one);
    tcase_add_test(tc, test_jfr_chunk_still_being_written_ends_the_recording);
    tcase_add_test(tc, test_jfr_not_a_recording_is_one_line);
    tcase_add_test(tc, test_jfr_corrupt_bytes_and_failing_allocations_never_crash);
    tcase_add_test(tc, test_jfr_read_ahead_reads_the_same);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(jfr_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
