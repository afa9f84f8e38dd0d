/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes fx_json_strn with any bytes. The document must parse with cJSON, be strict UTF-8, and
 * decode to the input read as JVM text: valid UTF-8 unchanged, C0 80 as U+0000, a CESU-8
 * surrogate pair as its supplementary character, anything else as U+FFFD (runs of U+FFFD are
 * compared collapsed: how many one bad sequence gives is the emitter's choice). The string is
 * written alone and again straddling the emitter's buffer boundary; fx_json_sanitize_utf8 must
 * agree with it, and a failing sink must stop the emitter. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "fx_err.h"
#include "fx_json.h"
#include "fx_sink.h"

struct bytes {
    uint8_t *p;
    size_t len;
};

static struct fx_json emitter; /* 64 KiB: static rather than on the stack */
static char filler[FX_JSON_BUF];

static void put_utf8(struct bytes *b, uint32_t cp)
{
    uint8_t *o = b->p + b->len;
    if (cp < 0x80) {
        o[0] = (uint8_t)cp;
        b->len += 1;
    } else if (cp < 0x800) {
        o[0] = (uint8_t)(0xC0 | cp >> 6);
        o[1] = (uint8_t)(0x80 | (cp & 0x3F));
        b->len += 2;
    } else if (cp < 0x10000) {
        o[0] = (uint8_t)(0xE0 | cp >> 12);
        o[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (uint8_t)(0x80 | (cp & 0x3F));
        b->len += 3;
    } else {
        o[0] = (uint8_t)(0xF0 | cp >> 18);
        o[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
        o[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
        o[3] = (uint8_t)(0x80 | (cp & 0x3F));
        b->len += 4;
    }
}

/* ED A0..AF xx ED B0..BF xx: a high then a low surrogate, as the JVM writes U+10000 and up. */
static bool cesu_pair(const uint8_t *s, size_t len, uint32_t *cp)
{
    if (len < 6 || s[0] != 0xED || s[1] < 0xA0 || s[1] > 0xAF || (s[2] & 0xC0) != 0x80 ||
        s[3] != 0xED || s[4] < 0xB0 || s[4] > 0xBF || (s[5] & 0xC0) != 0x80)
        return false;
    uint32_t hi = 0xD000u | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F);
    uint32_t lo = 0xD000u | (uint32_t)(s[4] & 0x3F) << 6 | (s[5] & 0x3F);
    *cp = 0x10000u + ((hi - 0xD800u) << 10) + (lo - 0xDC00u);
    return true;
}

/* The reference reading of JVM text (see the file comment); one U+FFFD per bad byte. */
static void model_decode(const uint8_t *s, size_t len, struct bytes *out)
{
    size_t i = 0;
    while (i < len) {
        uint32_t cp;
        size_t n;
        if (s[i] == 0xC0 && i + 1 < len && s[i + 1] == 0x80) {
            put_utf8(out, 0);
            i += 2;
        } else if (cesu_pair(s + i, len - i, &cp)) {
            put_utf8(out, cp);
            i += 6;
        } else if ((n = fuzz_utf8_seq_len(s + i, len - i)) > 0) {
            memcpy(out->p + out->len, s + i, n);
            out->len += n;
            i += n;
        } else {
            put_utf8(out, 0xFFFD);
            i++;
        }
    }
}

/* Replaces every run of U+FFFD by one, in place. */
static void collapse_fffd(struct bytes *b)
{
    static const uint8_t r[3] = {0xEF, 0xBF, 0xBD};
    size_t o = 0;
    for (size_t i = 0; i < b->len;) {
        bool is_r = i + 3 <= b->len && memcmp(b->p + i, r, 3) == 0;
        if (is_r && o >= 3 && memcmp(b->p + o - 3, r, 3) == 0) {
            i += 3;
            continue;
        }
        size_t n = is_r ? 3 : 1;
        memmove(b->p + o, b->p + i, n);
        o += n;
        i += n;
    }
    b->len = o;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool read_u4(const char *p, const char *end, uint32_t *v)
{
    if (end - p < 4)
        return false;
    *v = 0;
    for (int i = 0; i < 4; i++) {
        int d = hex_digit(p[i]);
        if (d < 0)
            return false;
        *v = *v << 4 | (uint32_t)d;
    }
    return true;
}

/* One escape after the backslash at *pp; appends what it stands for. RFC 8259 §7. */
static bool decode_escape(const char **pp, const char *end, struct bytes *out)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *p = *pp + 1;
    if (p >= end)
        return false;
    const char *k = *p ? strchr(from, *p) : NULL;
    if (k) {
        out->p[out->len++] = (uint8_t)to[k - from];
        *pp = p + 1;
        return true;
    }
    uint32_t u, lo;
    if (*p != 'u' || !read_u4(p + 1, end, &u))
        return false;
    p += 5;
    if (u >= 0xD800 && u <= 0xDBFF && end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
        read_u4(p + 2, end, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
        u = 0x10000u + ((u - 0xD800u) << 10) + (lo - 0xDC00u);
        p += 6;
    } else if (u >= 0xD800 && u <= 0xDFFF) {
        return false; /* a lone surrogate escape is not text */
    }
    put_utf8(out, u);
    *pp = p;
    return true;
}

/* The JSON string starting at *pp (a quote) into out; strict: no raw control characters. */
static bool decode_string(const char **pp, const char *end, struct bytes *out)
{
    const char *p = *pp;
    if (p >= end || *p++ != '"')
        return false;
    while (p < end && *p != '"') {
        if (*p == '\\') {
            if (!decode_escape(&p, end, out))
                return false;
        } else if ((uint8_t)*p < 0x20) {
            return false;
        } else {
            out->p[out->len++] = (uint8_t)*p++;
        }
    }
    if (p >= end)
        return false;
    *pp = p + 1;
    return true;
}

/* Writes ["filler",]"input"] (the filler only when filler_len > 0). */
static int emit(const uint8_t *s, size_t len, size_t filler_len, struct fx_sink sink)
{
    struct fx_json *j = &emitter;
    fx_json_init(j, sink);
    fx_json_arr_begin(j);
    if (filler_len)
        fx_json_strn(j, filler, filler_len);
    fx_json_strn(j, (const char *)s, len);
    fx_json_arr_end(j);
    return fx_json_finish(j);
}

/* Skips the filler, ASCII that needs no decoding: the bytes are compared instead, because a
 * per-byte loop over 64 KiB would slow the fuzzer down tenfold. */
static const char *skip_filler(const struct fx_membuf *mb, size_t filler_len)
{
    const char *p = mb->data + 1;
    FUZZ_CHECK(mb->len > filler_len + 4 && p[0] == '"' && memcmp(p + 1, filler, filler_len) == 0 &&
                       p[filler_len + 1] == '"' && p[filler_len + 2] == ',',
               "filler damaged");
    return p + filler_len + 3;
}

/* The document must be exactly ["filler",]"value"]; returns the value's decoded bytes. */
static void check_document(const struct fx_membuf *mb, size_t filler_len, struct bytes *value)
{
    const char *p = mb->data, *end = mb->data + mb->len;
    FUZZ_CHECK(mb->len >= 4 && *p == '[', "no [");
    p = filler_len ? skip_filler(mb, filler_len) : p + 1;
    size_t bad;
    FUZZ_CHECK(fuzz_utf8_valid((const uint8_t *)p, (size_t)(end - p), &bad),
               "output is not UTF-8 at byte %zu of %zu", (size_t)(p - mb->data) + bad, mb->len);
    cJSON *doc = cJSON_ParseWithLengthOpts(mb->data, mb->len + 1, NULL, true);
    FUZZ_CHECK(doc && cJSON_IsArray(doc), "cJSON rejects the output (%zu bytes)", mb->len);
    cJSON *last = cJSON_GetArrayItem(doc, filler_len ? 1 : 0);
    FUZZ_CHECK(cJSON_GetArraySize(doc) == (filler_len ? 2 : 1) && cJSON_IsString(last),
               "output is not an array of %d strings", filler_len ? 2 : 1);
    FUZZ_CHECK(decode_string(&p, end, value) && p + 1 == end && *p == ']', "value not decodable");
    /* cJSON stops at U+0000; up to there it must read what the strict decoder read. */
    size_t cj = strlen(last->valuestring);
    FUZZ_CHECK(cj <= value->len && memcmp(last->valuestring, value->p, cj) == 0 &&
                       (cj == value->len || value->p[cj] == 0),
               "cJSON and the strict decoder disagree");
    cJSON_Delete(doc);
}

static void check_value(const uint8_t *in, size_t len, const struct bytes *value)
{
    size_t bad;
    if (fuzz_utf8_valid(in, len, &bad)) {
        FUZZ_CHECK(value->len == len && memcmp(value->p, in, len) == 0,
                   "valid UTF-8 (%zu bytes) did not round-trip", len);
        return;
    }
    struct bytes want = {malloc(3 * len + 1), 0}, got = {malloc(value->len + 1), value->len};
    if (!want.p || !got.p)
        abort();
    memcpy(got.p, value->p, value->len);
    model_decode(in, len, &want);
    collapse_fffd(&want);
    collapse_fffd(&got);
    FUZZ_CHECK(want.len == got.len && memcmp(want.p, got.p, got.len) == 0,
               "decoded text differs from the model (%zu vs %zu bytes)", got.len, want.len);
    free(want.p);
    free(got.p);
}

static struct bytes write_and_check(const uint8_t *in, size_t len, size_t filler_len)
{
    struct fx_membuf mb = {0};
    int rc = emit(in, len, filler_len, fx_membuf_sink(&mb));
    FUZZ_CHECK(rc == FX_OK, "emitter failed: %d", rc);
    /* Each input byte becomes at most 6 output bytes (\u00XX) or 3 (U+FFFD). */
    struct bytes value = {malloc(6 * len + 1), 0};
    if (!value.p)
        abort();
    check_document(&mb, filler_len, &value);
    check_value(in, len, &value);
    fx_membuf_destroy(&mb);
    return value;
}

/* The sanitizer shares the decoder: the same text, and a whole-character prefix when cut. */
static void check_sanitize(const uint8_t *in, size_t len, const struct bytes *value)
{
    size_t cap = 3 * len + 1;
    char *out = malloc(cap);
    if (!out)
        abort();
    size_t n = fx_json_sanitize_utf8((const char *)in, len, out, cap);
    FUZZ_CHECK(n == value->len && memcmp(out, value->p, n) == 0 && out[n] == '\0',
               "sanitize_utf8 and the JSON string differ");
    size_t small = len ? 1 + in[0] % (len + 1) : 1, bad;
    n = fx_json_sanitize_utf8((const char *)in, len, out, small);
    FUZZ_CHECK(n < small && out[n] == '\0' && n <= value->len && memcmp(out, value->p, n) == 0,
               "cut sanitize_utf8 is not a prefix (cap %zu, %zu bytes)", small, n);
    FUZZ_CHECK(fuzz_utf8_valid((const uint8_t *)out, n, &bad), "cut sanitize_utf8 split a char");
    free(out);
}

struct failing_sink {
    unsigned calls;
};

static int fail_write(void *ctx, const void *buf, size_t len)
{
    (void)buf;
    (void)len;
    ((struct failing_sink *)ctx)->calls++;
    return FX_EIO;
}

/* Errors are sticky: after the first failed write the sink is never called again. */
static void check_failing_sink(const uint8_t *in, size_t len, size_t filler_len)
{
    struct failing_sink fs = {0};
    int rc = emit(in, len, filler_len, (struct fx_sink){.write = fail_write, .ctx = &fs});
    FUZZ_CHECK(rc == FX_EIO && fs.calls == 1, "failing sink: rc %d after %u calls", rc, fs.calls);
}

/* The filler leaves 1..64 bytes of the emitter's buffer, so the value crosses a flush. */
static void check_across_flush(const uint8_t *data, size_t size, const struct bytes *v1)
{
    if (!filler[0])
        memset(filler, 'f', sizeof(filler));
    size_t filler_len = FX_JSON_BUF - 8 - size % 64;
    struct bytes v2 = write_and_check(data, size, filler_len);
    FUZZ_CHECK(v1->len == v2.len && memcmp(v1->p, v2.p, v2.len) == 0,
               "the value changed across the buffer boundary");
    free(v2.p);
    check_failing_sink(data, size, filler_len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct bytes v1 = write_and_check(data, size, 0);
    check_sanitize(data, size, &v1);
    check_failing_sink(data, size, 0);
    /* 64 KiB of filler costs ten plain runs: one input in 16 (by size) crosses a flush. */
    if (size % 16 == 15)
        check_across_flush(data, size, &v1);
    free(v1.p);
    return 0;
}
