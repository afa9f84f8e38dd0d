/* SPDX-License-Identifier: Apache-2.0 */
#include <cJSON.h>
#include <check.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx_err.h"
#include "fx_json.h"
#include "unit_light.h"

/* fx_json is 64 KiB: keep it off the test's stack. */
static struct fx_json jw;
static struct fx_membuf mb;

static void start(void)
{
    memset(&mb, 0, sizeof(mb));
    fx_json_init(&jw, fx_membuf_sink(&mb));
}

/* Finishes the document and checks it was accepted. */
static const char *done(void)
{
    ck_assert_int_eq(fx_json_finish(&jw), FX_OK);
    return mb.data ? mb.data : "";
}

/* The JSON text of one string value made from len bytes. */
static const char *str_json(const char *s, size_t len)
{
    start();
    fx_json_strn(&jw, s, len);
    return done();
}

/* Strict UTF-8 (RFC 3629): no overlongs, no surrogates, nothing above U+10FFFF. */
static int utf8_valid(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned char b = s[i];
        size_t n;
        unsigned lo = 0x80, hi = 0xBF;
        if (b < 0x80)
            n = 1;
        else if (b >= 0xC2 && b <= 0xDF)
            n = 2;
        else if (b >= 0xE0 && b <= 0xEF) {
            n = 3;
            lo = b == 0xE0 ? 0xA0 : 0x80;
            hi = b == 0xED ? 0x9F : 0xBF;
        } else if (b >= 0xF0 && b <= 0xF4) {
            n = 4;
            lo = b == 0xF0 ? 0x90 : 0x80;
            hi = b == 0xF4 ? 0x8F : 0xBF;
        } else
            return 0;
        if (i + n > len)
            return 0;
        if (n > 1 && (s[i + 1] < lo || s[i + 1] > hi))
            return 0;
        for (size_t k = 2; k < n; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
        }
        i += n;
    }
    return 1;
}

static uint64_t rng_state;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* ---- strings ------------------------------------------------------------------------------- */

START_TEST(test_json_control_chars_and_quotes_are_escaped)
{
    char in[34];
    for (int i = 0; i < 32; i++)
        in[i] = (char)(i + 1 == 32 ? 0 : i + 1); /* 0x01..0x1F then a raw NUL */
    in[32] = '"';
    in[33] = '\\';
    const char *want = "\"\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f"
                       "\\r\\u000e\\u000f\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016"
                       "\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\\u0000"
                       "\\\"\\\\\"";
    ck_assert_str_eq(str_json(in, sizeof(in)), want);
    fx_membuf_destroy(&mb);
}
END_TEST

START_TEST(test_json_plain_ascii_and_del_pass_through)
{
    ck_assert_str_eq(str_json("a/b c\x7f~", 7), "\"a/b c\x7f~\"");
    fx_membuf_destroy(&mb);
}
END_TEST

START_TEST(test_json_valid_utf8_passes_unchanged)
{
    /* 2-, 3- and 4-byte characters, U+2028/2029, U+FFFF, U+10FFFF, U+E000 */
    const char *s = "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xe2\x80\xa8\xe2\x80\xa9\xef\xbf\xbf"
                    "\xf4\x8f\xbf\xbf\xee\x80\x80";
    char want[64];
    snprintf(want, sizeof(want), "\"%s\"", s);
    ck_assert_str_eq(str_json(s, strlen(s)), want);
    fx_membuf_destroy(&mb);
}
END_TEST

START_TEST(test_json_modified_utf8_nul_becomes_u0000)
{
    ck_assert_str_eq(str_json("a\xc0\x80z", 4), "\"a\\u0000z\"");
    fx_membuf_destroy(&mb);
}
END_TEST

START_TEST(test_json_cesu8_pair_becomes_supplementary_char)
{
    /* U+1F600 as the JVM writes it: D83D DE00, each as a 3-byte sequence */
    ck_assert_str_eq(str_json("<\xed\xa0\xbd\xed\xb8\x80>", 8), "\"<\xf0\x9f\x98\x80>\"");
    /* U+10000 and U+10FFFF, the ends of the range */
    fx_membuf_destroy(&mb);
    ck_assert_str_eq(str_json("\xed\xa0\x80\xed\xb0\x80", 6), "\"\xf0\x90\x80\x80\"");
    fx_membuf_destroy(&mb);
    ck_assert_str_eq(str_json("\xed\xaf\xbf\xed\xbf\xbf", 6), "\"\xf4\x8f\xbf\xbf\"");
    fx_membuf_destroy(&mb);
}
END_TEST

START_TEST(test_json_lone_surrogates_become_replacement)
{
    /* lone high, lone low, high at the very end, high followed by high, low then high */
    ck_assert_str_eq(str_json("a\xed\xa0\xbdz", 5), "\"a\xef\xbf\xbdz\"");
    fx_membuf_destroy(&mb);
    ck_assert_str_eq(str_json("a\xed\xb8\x80z", 5), "\"a\xef\xbf\xbdz\"");
    fx_membuf_destroy(&mb);
    ck_assert_str_eq(str_json("\xed\xa0\xbd", 3), "\"\xef\xbf\xbd\"");
    fx_membuf_destroy(&mb);
    ck_assert_str_eq(str_json("\xed\xa0\xbd\xed\xa0\xbd", 6), "\"\xef\xbf\xbd\xef\xbf\xbd\"");
    fx_membuf_destroy(&mb);
    ck_assert_str_eq(str_json("\xed\xb8\x80\xed\xa0\xbd", 6), "\"\xef\xbf\xbd\xef\xbf\xbd\"");
    fx_membuf_destroy(&mb);
}
END_TEST

START_TEST(test_json_invalid_bytes_become_replacement)
{
#define FFFD "\xef\xbf\xbd"
    static const struct {
        const char *in;
        size_t len;
        const char *want;
    } cases[] = {
            {"\xc1\xbf", 2, "\"" FFFD FFFD "\""},                   /* overlong 2-byte */
            {"\xc0\xaf", 2, "\"" FFFD FFFD "\""},                   /* overlong '/' (not C0 80) */
            {"\xe0\x80\xaf", 3, "\"" FFFD FFFD FFFD "\""},          /* overlong 3-byte */
            {"\xf0\x80\x80\xaf", 4, "\"" FFFD FFFD FFFD FFFD "\""}, /* overlong 4-byte */
            {"a\xe2\x82", 3, "\"a" FFFD "\""},                      /* truncated at the end */
            {"\xe2\x82z", 3, "\"" FFFD "z\""},                      /* truncated in the middle */
            {"\xf0\x9f\x98", 3, "\"" FFFD "\""},                    /* truncated 4-byte */
            {"\x80", 1, "\"" FFFD "\""},                            /* stray continuation */
            {"\xf4\x90\x80\x80", 4, "\"" FFFD FFFD FFFD FFFD "\""}, /* above U+10FFFF */
            {"\xf5", 1, "\"" FFFD "\""},
            {"\xf8\x88\x80\x80\x80", 5, "\"" FFFD FFFD FFFD FFFD FFFD "\""},
            {"\xfe\xff", 2, "\"" FFFD FFFD "\""},
            {"\xc0", 1, "\"" FFFD "\""}, /* half a modified-UTF-8 NUL */
    };
#undef FFFD
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ck_assert_msg(strcmp(str_json(cases[i].in, cases[i].len), cases[i].want) == 0,
                      "case %zu: got %s", i, mb.data);
        fx_membuf_destroy(&mb);
    }
}
END_TEST

START_TEST(test_json_str_null_writes_null)
{
    start();
    fx_json_arr_begin(&jw);
    fx_json_str(&jw, NULL);
    fx_json_str(&jw, "");
    fx_json_arr_end(&jw);
    ck_assert_str_eq(done(), "[null,\"\"]");
    fx_membuf_destroy(&mb);
}
END_TEST

/* Random strings biased toward the bytes that matter (lead bytes, C0 80, ED, continuations). */
static size_t random_bytes(unsigned char *s, size_t max)
{
    static const unsigned char hot[] = {0x00, 0x01, 0x1f, '"',  '\\', 0x7f, 0x80, 0xbf,
                                        0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xa0, 0xb0,
                                        0xef, 0xf0, 0xf4, 0xf5, 0xff, 0x90, 0x8f, 0xaf};
    size_t len = rng() % max;
    for (size_t i = 0; i < len; i++) {
        uint64_t r = rng();
        s[i] = (r & 1) ? hot[(r >> 8) % sizeof(hot)] : (unsigned char)(r >> 16);
    }
    return len;
}

/* One fuzz case; false if the output is not a valid UTF-8 JSON array holding one string. */
static bool fuzz_one(const unsigned char *in, size_t len)
{
    start();
    fx_json_arr_begin(&jw);
    fx_json_strn(&jw, (const char *)in, len);
    fx_json_arr_end(&jw);
    bool ok = fx_json_finish(&jw) == FX_OK && mb.data;
    cJSON *doc = ok ? cJSON_ParseWithLengthOpts(mb.data, mb.len + 1, NULL, 1) : NULL;
    ok = doc && cJSON_GetArraySize(doc) == 1 && cJSON_IsString(cJSON_GetArrayItem(doc, 0)) &&
         utf8_valid((const unsigned char *)mb.data, mb.len);
    cJSON_Delete(doc);
    fx_membuf_destroy(&mb);

    char clean[400];
    size_t n = fx_json_sanitize_utf8((const char *)in, len, clean, sizeof(clean));
    return ok && n < sizeof(clean) && clean[n] == '\0' &&
           utf8_valid((const unsigned char *)clean, n);
}

/* Assertions are counted, not made per iteration: each Check assertion writes to a pipe. */
START_TEST(test_json_random_bytes_always_give_valid_utf8_json)
{
    rng_state = 0x9e3779b97f4a7c15ull;
    unsigned char in[96];
    int bad = 0, first_bad = -1;
    for (int iter = 0, n = (int)unit_count(20000); iter < n; iter++) {
        size_t len = random_bytes(in, sizeof(in));
        if (!fuzz_one(in, len) && bad++ == 0)
            first_bad = iter;
    }
    ck_assert_msg(bad == 0, "%d bad outputs, first at iteration %d", bad, first_bad);
}
END_TEST

/* Appends code point cp as UTF-8; returns the byte count. */
static size_t put_utf8(unsigned char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xc0 | cp >> 6);
        o[1] = (unsigned char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xe0 | cp >> 12);
        o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
        o[2] = (unsigned char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (unsigned char)(0xf0 | cp >> 18);
    o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
    o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
    o[3] = (unsigned char)(0x80 | (cp & 0x3f));
    return 4;
}

START_TEST(test_json_random_valid_utf8_round_trips)
{
    rng_state = 12345;
    unsigned char in[200];
    int bad = 0;
    for (int iter = 0, n = (int)unit_count(5000); iter < n; iter++) {
        size_t len = 0;
        int chars = (int)(rng() % 40);
        for (int c = 0; c < chars; c++) {
            uint32_t cp;
            do {
                uint64_t r = rng();
                cp = (uint32_t)(r % ((r & 3) ? 0x800 : 0x110000));
            } while (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff));
            len += put_utf8(in + len, cp);
        }
        in[len] = '\0';
        const char *out = str_json((const char *)in, len);
        cJSON *doc = cJSON_ParseWithLengthOpts(out, mb.len + 1, NULL, 1);
        const char *got = cJSON_GetStringValue(doc);
        bad += !got || strcmp(got, (const char *)in) != 0;
        cJSON_Delete(doc);
        fx_membuf_destroy(&mb);
    }
    ck_assert_int_eq(bad, 0);
}
END_TEST

START_TEST(test_json_string_larger_than_buffer_is_written_whole)
{
    size_t len = 3 * FX_JSON_BUF + 17;
    char *s = malloc(len + 1);
    ck_assert_ptr_nonnull(s);
    for (size_t i = 0; i < len; i++)
        s[i] = (char)('a' + i % 26);
    s[len / 2] = '\n'; /* an escape in the middle */
    s[len] = '\0';
    start();
    fx_json_obj_begin(&jw);
    fx_json_key(&jw, "big");
    fx_json_strn(&jw, s, len);
    fx_json_obj_end(&jw);
    const char *out = done();
    ck_assert_uint_eq(mb.len, len + 1 + 10); /* {"big":"..."} plus the \n escape */
    cJSON *doc = cJSON_ParseWithLengthOpts(out, mb.len + 1, NULL, 1);
    ck_assert_ptr_nonnull(doc);
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(doc, "big")), s);
    cJSON_Delete(doc);
    fx_membuf_destroy(&mb);
    free(s);
}
END_TEST

START_TEST(test_json_sanitize_never_cuts_a_character)
{
    char out[8];
    /* "ab" + U+1F600 (4 bytes) does not fit in 5 bytes + NUL: it is left out whole */
    size_t n = fx_json_sanitize_utf8("ab\xf0\x9f\x98\x80", 6, out, 6);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(out, "ab");
    n = fx_json_sanitize_utf8("ab\xed\xa0\xbd\xed\xb8\x80", 8, out, sizeof(out));
    ck_assert_uint_eq(n, 6);
    ck_assert_str_eq(out, "ab\xf0\x9f\x98\x80");
    n = fx_json_sanitize_utf8("x\xffy", 3, out, sizeof(out));
    ck_assert_str_eq(out, "x\xef\xbf\xbdy");
    ck_assert_uint_eq(fx_json_sanitize_utf8("abc", 3, out, 0), 0);
    n = fx_json_sanitize_utf8("a\xc0\x80", 3, out, sizeof(out));
    ck_assert_uint_eq(n, 2); /* U+0000 is a real byte; the length says so */
    ck_assert_int_eq(out[1], '\0');
}
END_TEST

/* ---- structure ----------------------------------------------------------------------------- */

START_TEST(test_json_commas_in_nested_containers)
{
    start();
    fx_json_obj_begin(&jw);
    fx_json_key(&jw, "a");
    fx_json_i64(&jw, 1);
    fx_json_key(&jw, "b");
    fx_json_arr_begin(&jw);
    fx_json_arr_end(&jw);
    fx_json_key(&jw, "c");
    fx_json_arr_begin(&jw);
    fx_json_obj_begin(&jw);
    fx_json_obj_end(&jw);
    fx_json_obj_begin(&jw);
    fx_json_key(&jw, "d");
    fx_json_null(&jw);
    fx_json_key(&jw, "e");
    fx_json_bool(&jw, true);
    fx_json_obj_end(&jw);
    fx_json_arr_begin(&jw);
    fx_json_bool(&jw, false);
    fx_json_str(&jw, "x");
    fx_json_arr_end(&jw);
    fx_json_u64(&jw, 7);
    fx_json_arr_end(&jw);
    fx_json_key(&jw, "f");
    fx_json_obj_begin(&jw);
    fx_json_obj_end(&jw);
    fx_json_obj_end(&jw);
    ck_assert_str_eq(
            done(),
            "{\"a\":1,\"b\":[],\"c\":[{},{\"d\":null,\"e\":true},[false,\"x\"],7],\"f\":{}}");
    fx_membuf_destroy(&mb);
}
END_TEST

START_TEST(test_json_integers_are_exact)
{
    start();
    fx_json_arr_begin(&jw);
    fx_json_i64(&jw, 0);
    fx_json_i64(&jw, -1);
    fx_json_i64(&jw, INT64_MAX);
    fx_json_i64(&jw, INT64_MIN);
    fx_json_u64(&jw, UINT64_MAX);
    fx_json_u64(&jw, 1000000);
    fx_json_arr_end(&jw);
    ck_assert_str_eq(done(), "[0,-1,9223372036854775807,-9223372036854775808,"
                             "18446744073709551615,1000000]");
    fx_membuf_destroy(&mb);
}
END_TEST

/* fx_json_ms writes what fx_json_double(us / 1000.0, 3) writes (the writer's every time), by
 * integers: edges, every sub-ms remainder's trimming, random magnitudes up to FX_JSON_MS_EXACT
 * and past it (handed to fx_json_double); raw values get their commas as the others. */
START_TEST(test_json_ms_equals_the_double_path)
{
    static const int64_t edge[] = {0,
                                   1,
                                   -1,
                                   999,
                                   1000,
                                   -1000,
                                   1001,
                                   10,
                                   100,
                                   -500,
                                   12345,
                                   999999999,
                                   INT64_MAX,
                                   INT64_MIN,
                                   FX_JSON_MS_EXACT,
                                   -FX_JSON_MS_EXACT,
                                   FX_JSON_MS_EXACT - 1,
                                   1 - FX_JSON_MS_EXACT};
    rng_state = 0x9E3779B97F4A7C15ull;
    for (unsigned i = 0, n = (unsigned)unit_count(200000); i < n; i++) {
        int64_t us = i < sizeof edge / sizeof *edge ? edge[i] : (int64_t)(rng() >> (rng() % 64));
        if (i % 2 && us != INT64_MIN)
            us = -us;
        start();
        fx_json_double(&jw, (double)us / 1000.0, 3);
        char want[64];
        snprintf(want, sizeof want, "%s", done());
        fx_membuf_destroy(&mb);
        start();
        fx_json_ms(&jw, us);
        ck_assert_msg(!strcmp(done(), want), "us %lld: %s, want %s", (long long)us, mb.data, want);
        fx_membuf_destroy(&mb);
    }
    start();
    fx_json_arr_begin(&jw);
    fx_json_ms(&jw, 1500);
    char *o = fx_json_raw_begin(&jw, 30);
    ck_assert_ptr_nonnull(o);
    o = fx_json_fmt_i64(o, -7);
    fx_json_raw_end(&jw, o);
    fx_json_u64(&jw, 3);
    fx_json_arr_end(&jw);
    ck_assert_str_eq(done(), "[1.5,-7,3]");
    fx_membuf_destroy(&mb);
    start();
    ck_assert_ptr_null(fx_json_raw_begin(&jw, FX_JSON_BUF)); /* too much room: a range error */
    ck_assert_int_eq(fx_json_finish(&jw), FX_ERANGE);
    fx_membuf_destroy(&mb);
}
END_TEST

/* Tries a locale whose decimal separator is a comma; says so when none is installed. */
static void try_comma_locale(void)
{
    static const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "de_DE", "fr_FR.UTF-8"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (setlocale(LC_NUMERIC, names[i])) {
            printf("test_json: LC_NUMERIC=%s, decimal point '%s'\n", names[i],
                   localeconv()->decimal_point);
            return;
        }
    }
    printf("test_json: could not switch LC_NUMERIC to de_DE.UTF-8 (not installed); doubles are "
           "checked in the C locale only\n");
}

static const char *double_json(double v, int decimals)
{
    start();
    fx_json_double(&jw, v, decimals);
    return done();
}

START_TEST(test_json_doubles_are_fixed_point_and_locale_free)
{
    try_comma_locale();
    static const struct {
        double v;
        int decimals;
        const char *want;
    } cases[] = {
            {1.5, 3, "1.5"},
            {0.001, 3, "0.001"},
            {1e-9, 3, "0"},
            {123456.789, 3, "123456.789"},
            {-0.0, 3, "0"},
            {-1e-9, 3, "0"},
            {-1.25, 2, "-1.25"},
            {2.0, 6, "2"},
            {0.0005, 3, "0.001"},
            {0.9996, 3, "1"},
            {-0.9996, 3, "-1"},
            {12.5, 0, "13"},
            {1234567890123.25, 2, "1234567890123.25"},
            {9007199254740993.0, 3, "9007199254740992"},
            {-9.3e18, 3, "-9300000000000000000"},
            {1e20, 1, "100000000000000000000"},
            {3.0e-5, 17, "0.00003"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got = double_json(cases[i].v, cases[i].decimals);
        ck_assert_msg(strcmp(got, cases[i].want) == 0, "case %zu: %.17g -> %s, want %s", i,
                      cases[i].v, got, cases[i].want);
        fx_membuf_destroy(&mb);
    }
    setlocale(LC_NUMERIC, "C");
}
END_TEST

START_TEST(test_json_nan_and_inf_are_null)
{
    start();
    fx_json_arr_begin(&jw);
    fx_json_double(&jw, NAN, 3);
    fx_json_double(&jw, INFINITY, 3);
    fx_json_double(&jw, -INFINITY, 3);
    fx_json_double(&jw, 1.0, 3);
    fx_json_arr_end(&jw);
    ck_assert_str_eq(done(), "[null,null,null,1]");
    fx_membuf_destroy(&mb);
}
END_TEST

START_TEST(test_json_huge_doubles_are_exact_integers)
{
    start();
    fx_json_arr_begin(&jw);
    fx_json_double(&jw, 1e300, 3);
    fx_json_double(&jw, -1.7976931348623157e308, 3);
    fx_json_arr_end(&jw);
    const char *out = done();
    cJSON *doc = cJSON_ParseWithLengthOpts(out, mb.len + 1, NULL, 1);
    ck_assert_ptr_nonnull(doc);
    ck_assert(cJSON_GetArrayItem(doc, 0)->valuedouble == 1e300);
    ck_assert(cJSON_GetArrayItem(doc, 1)->valuedouble == -1.7976931348623157e308);
    /* int(1e300) in Python */
    const char *want =
            "[1000000000000000052504760255204420248704468581108159154915854115511802457988"
            "908195786371375080447864043704443832883878176942523235360430575644792184786"
            "706982848387200926575803737830233794788090059368953234970799945081119038967"
            "640880074652742780142494579258788820056842838115669472196386865459400540160,";
    ck_assert(strncmp(out, want, strlen(want)) == 0);
    cJSON_Delete(doc);
    fx_membuf_destroy(&mb);
}
END_TEST

/* ---- errors -------------------------------------------------------------------------------- */

struct failing_sink {
    size_t budget; /* bytes accepted before the first failure */
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

START_TEST(test_json_sink_error_is_sticky)
{
    struct failing_sink fs = {.budget = FX_JSON_BUF + 100};
    fx_json_init(&jw, (struct fx_sink){.write = failing_write, .ctx = &fs});
    fx_json_arr_begin(&jw);
    for (int i = 0; i < 100000; i++) {
        fx_json_str(&jw, "some text that fills the buffer");
        fx_json_double(&jw, i * 0.5, 3);
    }
    fx_json_arr_end(&jw);
    ck_assert_int_eq(fx_json_finish(&jw), FX_EIO);
    ck_assert_int_eq(fs.failed, 1);
    ck_assert_uint_eq(fs.calls_after_failure, 0);
    ck_assert_int_eq(fx_json_finish(&jw), FX_EIO);
}
END_TEST

START_TEST(test_json_error_at_final_flush_is_reported)
{
    struct failing_sink fs = {.budget = 0};
    fx_json_init(&jw, (struct fx_sink){.write = failing_write, .ctx = &fs});
    fx_json_obj_begin(&jw);
    fx_json_obj_end(&jw);
    ck_assert_int_eq(fx_json_finish(&jw), FX_EIO);
}
END_TEST

START_TEST(test_json_unbalanced_document_is_a_state_error)
{
    start();
    fx_json_obj_begin(&jw);
    fx_json_key(&jw, "k");
    ck_assert_int_eq(fx_json_finish(&jw), FX_ESTATE);
    fx_membuf_destroy(&mb);
    start();
    fx_json_arr_end(&jw);
    fx_json_arr_begin(&jw); /* ignored: the error is sticky */
    ck_assert_int_eq(fx_json_finish(&jw), FX_ESTATE);
    ck_assert_uint_eq(mb.len, 0);
    fx_membuf_destroy(&mb);
}
END_TEST

START_TEST(test_json_too_deep_nesting_is_a_range_error)
{
    start();
    for (int i = 0; i < FX_JSON_MAX_DEPTH + 5; i++)
        fx_json_arr_begin(&jw);
    ck_assert_int_eq(fx_json_finish(&jw), FX_ERANGE);
    fx_membuf_destroy(&mb);
    start();
    for (int i = 0; i < FX_JSON_MAX_DEPTH - 1; i++)
        fx_json_arr_begin(&jw);
    for (int i = 0; i < FX_JSON_MAX_DEPTH - 1; i++)
        fx_json_arr_end(&jw);
    ck_assert_int_eq(fx_json_finish(&jw), FX_OK);
    fx_membuf_destroy(&mb);
}
END_TEST

static Suite *json_suite(void)
{
    Suite *s = suite_create("json");
    TCase *tc = tcase_create("strings");
    tcase_add_test(tc, test_json_control_chars_and_quotes_are_escaped);
    tcase_add_test(tc, test_json_plain_ascii_and_del_pass_through);
    tcase_add_test(tc, test_json_valid_utf8_passes_unchanged);
    tcase_add_test(tc, test_json_modified_utf8_nul_becomes_u0000);
    tcase_add_test(tc, test_json_cesu8_pair_becomes_supplementary_char);
    tcase_add_test(tc, test_json_lone_surrogates_become_replacement);
    tcase_add_test(tc, test_json_invalid_bytes_become_replacement);
    tcase_add_test(tc, test_json_str_null_writes_null);
    tcase_add_test(tc, test_json_random_bytes_always_give_valid_utf8_json);
    tcase_add_test(tc, test_json_random_valid_utf8_round_trips);
    tcase_add_test(tc, test_json_string_larger_than_buffer_is_written_whole);
    tcase_add_test(tc, test_json_sanitize_never_cuts_a_character);
    suite_add_tcase(s, tc);
    tc = tcase_create("structure");
    tcase_add_test(tc, test_json_commas_in_nested_containers);
    tcase_add_test(tc, test_json_integers_are_exact);
    tcase_add_test(tc, test_json_ms_equals_the_double_path);
    tcase_add_test(tc, test_json_doubles_are_fixed_point_and_locale_free);
    tcase_add_test(tc, test_json_nan_and_inf_are_null);
    tcase_add_test(tc, test_json_huge_doubles_are_exact_integers);
    suite_add_tcase(s, tc);
    tc = tcase_create("errors");
    tcase_add_test(tc, test_json_sink_error_is_sticky);
    tcase_add_test(tc, test_json_error_at_final_flush_is_reported);
    tcase_add_test(tc, test_json_unbalanced_document_is_a_state_error);
    tcase_add_test(tc, test_json_too_deep_nesting_is_a_range_error);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(json_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
