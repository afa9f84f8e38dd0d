/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_gzip.h"
#include "unit_light.h"

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Alternating blocks of random bytes (incompressible) and repetitive text. */
static unsigned char *make_data(size_t len)
{
    unsigned char *d = malloc(len);
    ck_assert_ptr_nonnull(d);
    static const char text[] = "{\"name\":\"java.lang.Thread.run\",\"line\":42,\"category\":1},";
    for (size_t i = 0; i < len; i++) {
        if ((i / 40000) % 2 == 0)
            d[i] = (unsigned char)rng();
        else
            d[i] = (unsigned char)text[i % (sizeof(text) - 1)];
    }
    return d;
}

/* Inflates the first gzip member of `gz`; *left gets the bytes after it. */
static int inflate_member(const unsigned char *gz, size_t gz_len, unsigned char *out,
                          size_t out_cap, size_t *out_len, size_t *left)
{
    z_stream zs = {0};
    ck_assert_int_eq(inflateInit2(&zs, 16 + 15), Z_OK);
    zs.next_in = (Bytef *)gz;
    zs.avail_in = (uInt)gz_len;
    zs.next_out = out;
    zs.avail_out = (uInt)out_cap;
    int zrc = inflate(&zs, Z_FINISH);
    *out_len = out_cap - zs.avail_out;
    *left = zs.avail_in;
    inflateEnd(&zs);
    return zrc;
}

/* data in odd-sized writes through gz, finished and freed; the bytes written downstream. */
static void feed(struct fx_gzip *gz, const unsigned char *data, size_t len, uint64_t seed)
{
    ck_assert_ptr_nonnull(gz);
    struct fx_sink s = fx_gzip_sink(gz);
    rng_state = seed;
    for (size_t off = 0; off < len;) {
        size_t n = 1 + rng() % 300000;
        if (n > len - off)
            n = len - off;
        ck_assert_int_eq(s.write(s.ctx, data + off, n), FX_OK);
        off += n;
    }
    ck_assert_int_eq(fx_gzip_finish(gz), FX_OK);
    fx_gzip_free(gz);
}

/* The whole of gz is one member that inflates to data. */
static void check_inflates_to(const struct fx_membuf *gz, const unsigned char *data, size_t len)
{
    unsigned char *back = malloc(len + 1);
    ck_assert_ptr_nonnull(back);
    size_t back_len, left;
    int zrc = inflate_member((unsigned char *)gz->data, gz->len, back, len + 1, &back_len, &left);
    ck_assert_int_eq(zrc, Z_STREAM_END); /* its CRC and length checked */
    ck_assert_uint_eq(left, 0);          /* nothing after it: a single member */
    ck_assert_uint_eq(back_len, len);
    ck_assert(memcmp(back, data, len) == 0);
    free(back);
}

START_TEST(test_gzip_round_trip_is_one_member)
{
    size_t len = 3 * 1024 * 1024 + 12345;
    unsigned char *data = make_data(len);
    struct fx_membuf mb = {0};
    struct fx_gzip *gz = fx_gzip_new(fx_membuf_sink(&mb), 6);
    feed(gz, data, len, rng_state); /* odd-sized writes, some larger than the buffer */

    ck_assert_uint_gt(mb.len, 18);
    ck_assert_uint_lt(mb.len, len); /* the text halves compress */
    ck_assert_int_eq((unsigned char)mb.data[0], 0x1f);
    ck_assert_int_eq((unsigned char)mb.data[1], 0x8b);
    unsigned char *back = malloc(len + 1);
    size_t back_len, left;
    int zrc = inflate_member((unsigned char *)mb.data, mb.len, back, len + 1, &back_len, &left);
    ck_assert_int_eq(zrc, Z_STREAM_END);
    ck_assert_uint_eq(left, 0); /* nothing after the first member: a single member */
    ck_assert_uint_eq(back_len, len);
    ck_assert(memcmp(back, data, len) == 0);
    free(back);
    free(data);
    fx_membuf_destroy(&mb);
}
END_TEST

/* Many tiny writes must not each end a deflate block (no flush per write): repetitive text
 * then compresses as well as one big write would. */
START_TEST(test_gzip_small_writes_are_not_flushed)
{
    struct fx_membuf mb = {0};
    struct fx_gzip *gz = fx_gzip_new(fx_membuf_sink(&mb), 6);
    struct fx_sink s = fx_gzip_sink(gz);
    for (int i = 0; i < 100000; i++)
        ck_assert_int_eq(s.write(s.ctx, "[1,2,3,4],", 10), FX_OK);
    ck_assert_int_eq(fx_gzip_finish(gz), FX_OK);
    fx_gzip_free(gz);
    ck_assert_uint_lt(mb.len, 10000); /* 1,000,000 bytes in; a flush per write would add 500k */
    fx_membuf_destroy(&mb);
}
END_TEST

START_TEST(test_gzip_empty_input_is_a_valid_member)
{
    struct fx_membuf mb = {0};
    struct fx_gzip *gz = fx_gzip_new(fx_membuf_sink(&mb), 1);
    ck_assert_ptr_nonnull(gz);
    ck_assert_int_eq(fx_gzip_finish(gz), FX_OK);
    ck_assert_int_eq(fx_gzip_finish(gz), FX_OK); /* a second finish writes nothing more */
    size_t first_len = mb.len;
    fx_gzip_free(gz);
    unsigned char out[8];
    size_t out_len, left;
    ck_assert_int_eq(
            inflate_member((unsigned char *)mb.data, mb.len, out, sizeof(out), &out_len, &left),
            Z_STREAM_END);
    ck_assert_uint_eq(out_len, 0);
    ck_assert_uint_eq(left, 0);
    ck_assert_uint_eq(mb.len, first_len);
    fx_membuf_destroy(&mb);
}
END_TEST

START_TEST(test_gzip_write_after_finish_is_a_state_error)
{
    struct fx_membuf mb = {0};
    struct fx_gzip *gz = fx_gzip_new(fx_membuf_sink(&mb), 6);
    struct fx_sink s = fx_gzip_sink(gz);
    ck_assert_int_eq(s.write(s.ctx, "abc", 3), FX_OK);
    ck_assert_int_eq(fx_gzip_finish(gz), FX_OK);
    ck_assert_int_eq(s.write(s.ctx, "abc", 3), FX_ESTATE);
    fx_gzip_free(gz);
    fx_membuf_destroy(&mb);
}
END_TEST

struct failing_sink {
    size_t budget;
    size_t calls_after_failure;
    int failed;
};

static int failing_write(void *ctx, const void *buf, size_t len)
{
    (void)buf;
    struct failing_sink *fs = ctx;
    if (fs->failed) {
        fs->calls_after_failure++;
        return FX_EIO;
    }
    if (len > fs->budget) {
        fs->failed = 1;
        return FX_EIO;
    }
    fs->budget -= len;
    return FX_OK;
}

/* A downstream failure after 100000 bytes: the writer sees it (threaded: at a block's
 * hand-over), it sticks, and nothing more goes downstream. */
static void downstream_error(struct fx_gzip *(*make)(struct fx_sink, int), size_t len)
{
    unsigned char *data = make_data(len);
    struct failing_sink fs = {.budget = 100000};
    struct fx_gzip *gz = make((struct fx_sink){.write = failing_write, .ctx = &fs}, 6);
    struct fx_sink s = fx_gzip_sink(gz);
    int rc = FX_OK;
    for (size_t off = 0; off < len && rc == FX_OK; off += 4096)
        rc = s.write(s.ctx, data + off, 4096);
    ck_assert_int_eq(rc, FX_EIO);
    ck_assert_int_eq(s.write(s.ctx, "x", 1), FX_EIO);
    ck_assert_int_eq(fx_gzip_finish(gz), FX_EIO);
    ck_assert_uint_eq(fs.calls_after_failure, 0);
    fx_gzip_free(gz);
    free(data);
}

START_TEST(test_gzip_downstream_error_propagates_and_sticks)
{
    downstream_error(fx_gzip_new, 1024 * 1024); /* well over the 64 KiB output buffer */
}
END_TEST

START_TEST(test_gzip_error_writing_the_trailer_is_reported)
{
    struct failing_sink fs = {.budget = 0};
    struct fx_gzip *gz = fx_gzip_new((struct fx_sink){.write = failing_write, .ctx = &fs}, 6);
    struct fx_sink s = fx_gzip_sink(gz);
    ck_assert_int_eq(s.write(s.ctx, "small", 5), FX_OK); /* still buffered */
    ck_assert_int_eq(fx_gzip_finish(gz), FX_EIO);
    fx_gzip_free(gz);
}
END_TEST

START_TEST(test_gzip_new_fails_cleanly_without_memory)
{
    struct fx_membuf mb = {0};
    for (long n = 1; n <= 6; n++) { /* the struct, then zlib's internal blocks */
        fx_alloc_fail_after(n);
        struct fx_gzip *gz = fx_gzip_new(fx_membuf_sink(&mb), 6);
        fx_alloc_fail_after(0);
        ck_assert_msg(gz == NULL, "allocation %ld failing should fail fx_gzip_new", n);
    }
    fx_gzip_free(NULL);
}
END_TEST

/* Deflated on every core (gzip_par.c: blocks of 512 KiB, each primed with the 32 KiB before),
 * the file is one member that inflates to what was written, over many blocks of text and of
 * incompressible bytes (the output's bound), from 0 bytes up; the same bytes every run (block
 * cuts depend on the writes alone); at level 1 about as small as the single stream's. */
/* Many blocks of 512 KiB: 18, or 6 under memcheck (FXAGENT_UNIT_LIGHT=1, unit_light.h), still
 * more than the 4 cores whose threads it starts: there a 9 MiB file made test_gzip the longest
 * binary of san.valgrind_unit (175 s loaded) for the same code paths. */
static size_t many_blocks(void)
{
    return (unit_light() ? 3 : 9) * 1024 * 1024 + 777;
}

START_TEST(test_gzip_threaded_one_member_same_bytes_every_run)
{
    const size_t lens[] = {0, 1, 512 * 1024, 512 * 1024 + 1, many_blocks()};
    for (int random = 0; random < 2; random++)
        for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
            size_t len = lens[i];
            unsigned char *data = make_data(len + 1);
            for (size_t k = 0; random && k < len; k++)
                data[k] = (unsigned char)rng();
            struct fx_membuf a = {0}, b = {0}, c = {0};
            feed(fx_gzip_new(fx_membuf_sink(&a), 1), data, len, 1);
            feed(fx_gzip_new_threaded(fx_membuf_sink(&b), 1), data, len, 2);
            feed(fx_gzip_new_threaded(fx_membuf_sink(&c), 1), data, len, 2);
            check_inflates_to(&b, data, len);
            ck_assert_uint_eq(b.len, c.len);
            ck_assert(memcmp(b.data, c.data, b.len) == 0);
            ck_assert_uint_le(b.len, a.len + a.len / 50 + 64);
            fx_membuf_destroy(&a), fx_membuf_destroy(&b), fx_membuf_destroy(&c);
            free(data);
        }
}
END_TEST

/* Out of memory at any of its allocations, the threaded sink deflates in the caller's thread
 * or is not made: never a broken file. */
START_TEST(test_gzip_threaded_without_memory_falls_back)
{
    size_t len = 2 * 1024 * 1024 + 5;
    unsigned char *data = make_data(len);
    int made = 0, unthreaded = 0;
    for (long n = 1; n <= 48; n++) { /* past the last allocation on 4 cores */
        struct fx_membuf mb = {0};
        fx_alloc_fail_after(n);
        struct fx_gzip *gz = fx_gzip_new_threaded(fx_membuf_sink(&mb), 1);
        fx_alloc_fail_after(0);
        if (!gz)
            continue;
        made++;
        unthreaded += fx_gzip_sink(gz).swap == NULL;
        feed(gz, data, len, 4);
        check_inflates_to(&mb, data, len);
        fx_membuf_destroy(&mb);
    }
    ck_assert_int_gt(made, 0);
    ck_assert_int_gt(unthreaded, 0);
    free(data);
}
END_TEST

START_TEST(test_gzip_threaded_downstream_error_propagates)
{
    downstream_error(fx_gzip_new_threaded, 8 * 1024 * 1024); /* over the 4 blocks of 1 MiB */
}
END_TEST

/* Filled in place (fx_sink.swap, the JSON writer's way: no copy), in pieces of every size up to
 * a whole block, the file inflates to what was written; only the threaded sink offers it;
 * after a downstream error a swap gives the error and no block. */
START_TEST(test_gzip_threaded_swap_inflates_the_same)
{
    size_t len = many_blocks();
    unsigned char *data = make_data(len);
    struct fx_membuf a = {0}, b = {0};
    feed(fx_gzip_new(fx_membuf_sink(&a), 1), data, len, 1);
    struct fx_gzip *plain = fx_gzip_new(fx_membuf_sink(&b), 1);
    ck_assert_ptr_null(fx_gzip_sink(plain).swap);
    fx_gzip_free(plain);
    struct fx_gzip *gz = fx_gzip_new_threaded(fx_membuf_sink(&b), 1);
    struct fx_sink s = fx_gzip_sink(gz);
    ck_assert_ptr_nonnull(s.swap);
    char *buf = NULL;
    size_t cap = 0, off = 0;
    ck_assert_int_eq(s.swap(s.ctx, 0, &buf, &cap), FX_OK);
    for (size_t piece = 1; off < len; piece = piece * 7 % (cap + 1) + 1) {
        size_t n = piece < len - off ? piece : len - off;
        ck_assert_uint_le(n, cap);
        memcpy(buf, data + off, n);
        off += n;
        ck_assert_int_eq(s.swap(s.ctx, n, &buf, &cap), FX_OK);
    }
    ck_assert_int_eq(fx_gzip_finish(gz), FX_OK);
    fx_gzip_free(gz);
    check_inflates_to(&b, data, len);
    fx_membuf_destroy(&a);
    fx_membuf_destroy(&b);

    struct failing_sink fs = {.budget = 100000};
    gz = fx_gzip_new_threaded((struct fx_sink){.write = failing_write, .ctx = &fs}, 6);
    s = fx_gzip_sink(gz);
    int rc = s.swap(s.ctx, 0, &buf, &cap);
    for (off = 0; off < len && rc == FX_OK; off += cap) {
        memcpy(buf, data + off, cap < len - off ? cap : len - off);
        rc = s.swap(s.ctx, cap < len - off ? cap : len - off, &buf, &cap);
    }
    ck_assert_int_eq(rc, FX_EIO);
    buf = NULL;
    ck_assert_int_eq(s.swap(s.ctx, 0, &buf, &cap), FX_EIO);
    ck_assert_ptr_null(buf);
    ck_assert_int_eq(fx_gzip_finish(gz), FX_EIO);
    ck_assert_uint_eq(fs.calls_after_failure, 0);
    fx_gzip_free(gz);
    free(data);
}
END_TEST

/* Freed without a finish (the writer failed): the threads end, no trailer goes downstream. */
START_TEST(test_gzip_threaded_free_unfinished)
{
    size_t len = 3 * 1024 * 1024;
    unsigned char *data = make_data(len);
    struct fx_membuf mb = {0};
    struct fx_gzip *gz = fx_gzip_new_threaded(fx_membuf_sink(&mb), 1);
    struct fx_sink s = fx_gzip_sink(gz);
    ck_assert_int_eq(s.write(s.ctx, data, len), FX_OK);
    fx_gzip_free(gz);
    ck_assert_uint_lt(mb.len, len);
    unsigned char *back = malloc(len); /* what went downstream is a member's start, not end */
    size_t back_len, left;
    ck_assert_int_ne(inflate_member((unsigned char *)mb.data, mb.len, back, len, &back_len, &left),
                     Z_STREAM_END);
    free(back);
    fx_membuf_destroy(&mb);
    free(data);
}
END_TEST

static Suite *gzip_suite(void)
{
    Suite *s = suite_create("gzip");
    TCase *tc = tcase_create("stream");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_gzip_round_trip_is_one_member);
    tcase_add_test(tc, test_gzip_small_writes_are_not_flushed);
    tcase_add_test(tc, test_gzip_empty_input_is_a_valid_member);
    tcase_add_test(tc, test_gzip_write_after_finish_is_a_state_error);
    suite_add_tcase(s, tc);
    tc = tcase_create("errors");
    tcase_add_test(tc, test_gzip_downstream_error_propagates_and_sticks);
    tcase_add_test(tc, test_gzip_error_writing_the_trailer_is_reported);
    tcase_add_test(tc, test_gzip_new_fails_cleanly_without_memory);
    suite_add_tcase(s, tc);
    tc = tcase_create("threaded");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_gzip_threaded_one_member_same_bytes_every_run);
    tcase_add_test(tc, test_gzip_threaded_without_memory_falls_back);
    tcase_add_test(tc, test_gzip_threaded_downstream_error_propagates);
    tcase_add_test(tc, test_gzip_threaded_free_unfinished);
    tcase_add_test(tc, test_gzip_threaded_swap_inflates_the_same);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(gzip_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
