/* SPDX-License-Identifier: Apache-2.0 */
/* unit.gzip_par: the gzip sink deflated on several threads (core/writer/gzip_par.c): one gzip
 * member that inflates to the bytes written, whether copied or written in place (swap), over
 * many blocks of text and of incompressible bytes; the same bytes every run; errors downstream
 * sticky and nothing written after them; freed unfinished without a hang; out of memory NULL
 * or a whole file. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_gzip.h"

static uint64_t rng_state;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Runs of JSON-like text and of random bytes (random: whole blocks that deflate cannot shrink,
 * the output buffer's bound tested). */
static unsigned char *make_data(size_t len, size_t run)
{
    unsigned char *d = malloc(len ? len : 1);
    ck_assert_ptr_nonnull(d);
    static const char text[] = "{\"name\":\"java.lang.Thread.run\",\"line\":42,\"category\":1},";
    rng_state = 88172645463325252ull;
    for (size_t i = 0; i < len; i++)
        d[i] = (i / run) % 2 ? (unsigned char)text[(i * 7 / run + i) % (sizeof text - 1)]
                             : (unsigned char)rng();
    return d;
}

/* The whole of gz inflated must be one member equal to data. */
static void check_inflates_to(const struct fx_membuf *gz, const unsigned char *data, size_t len)
{
    unsigned char *out = malloc(len + 16);
    ck_assert_ptr_nonnull(out);
    z_stream zs = {0};
    ck_assert_int_eq(inflateInit2(&zs, 16 + 15), Z_OK);
    zs.next_in = (Bytef *)gz->data;
    zs.avail_in = (uInt)gz->len;
    zs.next_out = out;
    zs.avail_out = (uInt)(len + 16);
    ck_assert_int_eq(inflate(&zs, Z_FINISH), Z_STREAM_END); /* CRC and length checked */
    ck_assert_uint_eq(zs.avail_in, 0);                      /* nothing after the member */
    ck_assert_uint_eq(len + 16 - zs.avail_out, len);
    ck_assert(memcmp(out, data, len) == 0);
    inflateEnd(&zs);
    free(out);
}

/* data through a new sink, in writes of odd sizes (swap false) or in place in pieces of every
 * size up to a block (swap true); finished; the bytes downstream in *mb. */
static void feed(struct fx_membuf *mb, const unsigned char *data, size_t len, bool swap)
{
    struct fx_gzpar *g = fx_gzpar_new(fx_membuf_sink(mb), 1);
    ck_assert_ptr_nonnull(g);
    struct fx_sink s = fx_gzpar_sink(g);
    ck_assert_ptr_nonnull(s.swap);
    size_t off = 0;
    if (swap) {
        char *buf = NULL;
        size_t cap = 0;
        ck_assert_int_eq(s.swap(s.ctx, 0, &buf, &cap), FX_OK);
        for (size_t piece = 1; off < len; piece = piece * 7 % (cap + 1) + 1) {
            size_t n = piece < len - off ? piece : len - off;
            memcpy(buf, data + off, n);
            off += n;
            ck_assert_int_eq(s.swap(s.ctx, n, &buf, &cap), FX_OK);
        }
    } else {
        for (size_t piece = 3; off < len; piece = piece * 13 % 300007 + 1) {
            size_t n = piece < len - off ? piece : len - off;
            ck_assert_int_eq(s.write(s.ctx, data + off, n), FX_OK);
            off += n;
        }
    }
    ck_assert_int_eq(fx_gzpar_finish(g), FX_OK);
    ck_assert_int_eq(fx_gzpar_finish(g), FX_OK); /* again: the same answer, nothing more */
    ck_assert_int_eq(s.write(s.ctx, "x", 1), FX_ESTATE);
    fx_gzpar_free(g);
}

START_TEST(test_gzpar_round_trip_one_member_same_bytes_every_run)
{
    static const size_t lens[] = {0, 1, 512 * 1024, 512 * 1024 + 1, 9 * 1024 * 1024 + 777};
    static const size_t runs[] = {40000, 3 * 1024 * 1024};
    for (size_t r = 0; r < 2; r++)
        for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
            unsigned char *data = make_data(lens[i], runs[r]);
            struct fx_membuf a = {0}, b = {0}, c = {0};
            feed(&a, data, lens[i], false);
            feed(&b, data, lens[i], false);
            feed(&c, data, lens[i], true);
            check_inflates_to(&a, data, lens[i]);
            check_inflates_to(&c, data, lens[i]);
            ck_assert_uint_eq(a.len, b.len);
            ck_assert(memcmp(a.data, b.data, a.len) == 0);
            if (lens[i] > 1024 * 1024 && runs[r] == 40000) /* compressed, not stored */
                ck_assert_uint_lt(a.len, lens[i] * 3 / 4);
            fx_membuf_destroy(&a), fx_membuf_destroy(&b), fx_membuf_destroy(&c);
            free(data);
        }
}
END_TEST

struct failing_sink {
    size_t budget, calls_after_failure;
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

/* A downstream failure after 100000 bytes reaches the writer (at a block's hand-over), sticks,
 * and nothing more goes downstream; a swap after it gives the error and no block. */
START_TEST(test_gzpar_downstream_error_propagates_and_sticks)
{
    size_t len = 16 * 1024 * 1024;
    unsigned char *data = make_data(len, 40000);
    for (int swap = 0; swap < 2; swap++) {
        struct failing_sink fs = {.budget = 100000};
        struct fx_gzpar *g = fx_gzpar_new((struct fx_sink){.write = failing_write, .ctx = &fs}, 1);
        ck_assert_ptr_nonnull(g);
        struct fx_sink s = fx_gzpar_sink(g);
        int rc = FX_OK;
        char *buf = NULL;
        size_t cap = 0;
        if (swap)
            rc = s.swap(s.ctx, 0, &buf, &cap);
        for (size_t off = 0; off < len && rc == FX_OK; off += 65536) {
            if (swap) {
                memcpy(buf, data + off, 65536);
                rc = s.swap(s.ctx, 65536, &buf, &cap);
            } else {
                rc = s.write(s.ctx, data + off, 65536);
            }
        }
        ck_assert_int_eq(rc, FX_EIO);
        buf = NULL;
        ck_assert_int_eq(swap ? s.swap(s.ctx, 0, &buf, &cap) : s.write(s.ctx, "x", 1), FX_EIO);
        ck_assert_ptr_null(buf);
        ck_assert_int_eq(fx_gzpar_finish(g), FX_EIO);
        ck_assert_uint_eq(fs.calls_after_failure, 0);
        fx_gzpar_free(g);
    }
    free(data);
}
END_TEST

/* Freed without a finish (the writer failed): the workers end, no trailer is written. */
START_TEST(test_gzpar_free_unfinished)
{
    size_t len = 5 * 1024 * 1024;
    unsigned char *data = make_data(len, 40000);
    struct fx_membuf mb = {0};
    struct fx_gzpar *g = fx_gzpar_new(fx_membuf_sink(&mb), 1);
    ck_assert_ptr_nonnull(g);
    struct fx_sink s = fx_gzpar_sink(g);
    ck_assert_int_eq(s.write(s.ctx, data, len), FX_OK);
    fx_gzpar_free(g);
    ck_assert_uint_lt(mb.len, len);
    z_stream zs = {0}; /* what was written is a member's beginning, never its end */
    unsigned char out[4096];
    ck_assert_int_eq(inflateInit2(&zs, 16 + 15), Z_OK);
    zs.next_in = (Bytef *)mb.data;
    zs.avail_in = (uInt)mb.len;
    int zrc = Z_OK;
    while (zrc == Z_OK && zs.avail_in > 0) {
        zs.next_out = out;
        zs.avail_out = sizeof out;
        zrc = inflate(&zs, Z_NO_FLUSH);
    }
    ck_assert_int_ne(zrc, Z_STREAM_END);
    inflateEnd(&zs);
    fx_membuf_destroy(&mb);
    free(data);
}
END_TEST

/* Out of memory at any allocation: NULL (the caller deflates otherwise), or a whole file. */
START_TEST(test_gzpar_without_memory_null_or_whole)
{
    size_t len = 2 * 1024 * 1024 + 5;
    unsigned char *data = make_data(len, 40000);
    int nulls = 0, made = 0;
    for (long n = 1; n <= 40; n++) { /* past its last allocation on 4 cores */
        struct fx_membuf mb = {0};
        fx_alloc_fail_after(n);
        struct fx_gzpar *g = fx_gzpar_new(fx_membuf_sink(&mb), 1);
        fx_alloc_fail_after(0);
        if (!g) {
            nulls++;
            continue;
        }
        made++;
        struct fx_sink s = fx_gzpar_sink(g);
        ck_assert_int_eq(s.write(s.ctx, data, len), FX_OK);
        ck_assert_int_eq(fx_gzpar_finish(g), FX_OK);
        fx_gzpar_free(g);
        check_inflates_to(&mb, data, len);
        fx_membuf_destroy(&mb);
    }
    ck_assert_int_gt(nulls, 0);
    ck_assert_int_gt(made, 0);
    free(data);
}
END_TEST

static Suite *gzpar_suite(void)
{
    Suite *s = suite_create("gzip_par");
    TCase *tc = tcase_create("parallel");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_gzpar_round_trip_one_member_same_bytes_every_run);
    tcase_add_test(tc, test_gzpar_downstream_error_propagates_and_sticks);
    tcase_add_test(tc, test_gzpar_free_unfinished);
    tcase_add_test(tc, test_gzpar_without_memory_null_or_whole);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(gzpar_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
