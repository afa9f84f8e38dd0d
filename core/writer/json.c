/* SPDX-License-Identifier: Apache-2.0 */
/* Streaming JSON emitter. Invariant: j->out (j->buf, or the sink's own memory where the sink
 * swaps buffers: no copy) holds output not yet handed to the sink, and once j->err is set
 * nothing more reaches the sink. Every string goes through one UTF-8 decoder that
 * maps any byte sequence to valid code points, so the output is valid UTF-8 whatever comes in. */
#include "fx_json.h"

#include <math.h>
#include <string.h>

#include "fx_err.h"

#define REPLACEMENT 0xFFFDu

static void fail(struct fx_json *j, int err)
{
    if (!j->err)
        j->err = err;
}

static void flush(struct fx_json *j)
{
    if (j->err || j->len == 0)
        return;
    int rc = j->sink.swap ? j->sink.swap(j->sink.ctx, j->len, &j->out, &j->cap)
                          : j->sink.write(j->sink.ctx, j->buf, j->len);
    j->len = 0;
    if (rc != FX_OK)
        fail(j, rc < 0 ? rc : FX_EIO);
}

/* Room for n (small) bytes at the end of the buffer, or NULL after an error. */
static char *room(struct fx_json *j, size_t n)
{
    if (j->len + n > j->cap)
        flush(j);
    if (j->len + n > j->cap) /* a sink's buffer smaller than the caller's n */
        fail(j, FX_ERANGE);
    return j->err ? NULL : j->out + j->len;
}

static void put(struct fx_json *j, const void *data, size_t n)
{
    const char *p = data;
    while (n > 0 && !j->err) {
        size_t space = j->cap - j->len;
        if (space == 0) {
            flush(j);
            continue;
        }
        size_t chunk = n < space ? n : space;
        memcpy(j->out + j->len, p, chunk);
        j->len += chunk;
        p += chunk;
        n -= chunk;
    }
}

static void put_c(struct fx_json *j, char c)
{
    char *p = room(j, 1);
    if (p) {
        *p = c;
        j->len++;
    }
}

/* Emits the comma a value needs and marks its level as non-empty; false after an error. */
static bool begin_value(struct fx_json *j)
{
    if (j->err)
        return false;
    if (j->after_key) {
        j->after_key = false;
        return true;
    }
    if (!j->first[j->depth])
        put_c(j, ',');
    j->first[j->depth] = false;
    return !j->err;
}

/* ---- UTF-8 decoding: any bytes to code points ---------------------------------------------- */

static bool is_cont(uint8_t b)
{
    return (b & 0xC0) == 0x80;
}

/* Length and allowed second-byte range of a sequence starting with lead byte b (RFC 3629
 * table 3-7, except that ED keeps A0..BF so CESU-8 surrogates can be recognised); 0 if b
 * cannot start a sequence. */
static int lead_info(uint8_t b, uint8_t *lo, uint8_t *hi)
{
    *lo = 0x80;
    *hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF)
        return 2;
    if (b >= 0xE0 && b <= 0xEF) {
        if (b == 0xE0)
            *lo = 0xA0;
        return 3;
    }
    if (b >= 0xF0 && b <= 0xF4) {
        if (b == 0xF0)
            *lo = 0x90;
        if (b == 0xF4)
            *hi = 0x8F;
        return 4;
    }
    return 0;
}

/* Decodes a well-formed sequence of n bytes, or returns REPLACEMENT with *used set to the
 * maximal invalid prefix (at least one byte), so that following valid text is kept. */
static uint32_t decode_seq(const uint8_t *s, size_t len, size_t *used)
{
    uint8_t lo, hi;
    int n = lead_info(s[0], &lo, &hi);
    *used = 1;
    if (n == 0)
        return REPLACEMENT;
    if (len < 2 || s[1] < lo || s[1] > hi)
        return REPLACEMENT;
    uint32_t cp = s[0] & (0x7Fu >> n);
    for (int i = 1; i < n; i++) {
        if ((size_t)i >= len || !is_cont(s[i])) {
            *used = (size_t)i;
            return REPLACEMENT;
        }
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    *used = (size_t)n;
    return cp;
}

/* The JVM writes supplementary characters as two 3-byte surrogates (CESU-8); a pair becomes the
 * real character, a lone surrogate becomes U+FFFD. */
static uint32_t join_surrogates(uint32_t cp, const uint8_t *s, size_t len, size_t *used)
{
    if (cp >= 0xDC00)
        return REPLACEMENT;
    if (len < 6 || s[3] != 0xED || s[4] < 0xB0 || s[4] > 0xBF || !is_cont(s[5]))
        return REPLACEMENT;
    uint32_t low = 0xDC00u | ((s[4] & 0x0Fu) << 6) | (s[5] & 0x3Fu);
    *used = 6;
    return 0x10000u + ((cp - 0xD800u) << 10) + (low - 0xDC00u);
}

/* One code point from s (len >= 1); *used is how many bytes it took. Never fails. */
static uint32_t decode(const uint8_t *s, size_t len, size_t *used)
{
    if (s[0] < 0x80) {
        *used = 1;
        return s[0];
    }
    if (s[0] == 0xC0 && len >= 2 && s[1] == 0x80) { /* modified UTF-8 NUL */
        *used = 2;
        return 0;
    }
    uint32_t cp = decode_seq(s, len, used);
    if (cp >= 0xD800 && cp <= 0xDFFF)
        return join_surrogates(cp, s, len, used);
    return cp;
}

/* Encodes a valid code point (not a surrogate); returns the byte count (1..4). */
static size_t encode(uint32_t cp, uint8_t *out)
{
    if (cp < 0x80) {
        out[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (uint8_t)(0xC0 | (cp >> 6));
        out[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (uint8_t)(0xE0 | (cp >> 12));
        out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (uint8_t)(0xF0 | (cp >> 18));
    out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

size_t fx_json_sanitize_utf8(const char *s, size_t len, char *out, size_t cap)
{
    if (cap == 0)
        return 0;
    const uint8_t *p = (const uint8_t *)s;
    size_t n = 0, i = 0;
    while (i < len) {
        size_t used;
        uint8_t enc[4];
        size_t k = encode(decode(p + i, len - i, &used), enc);
        if (n + k > cap - 1) /* never cut a character in half */
            break;
        memcpy(out + n, enc, k);
        n += k;
        i += used;
    }
    out[n] = '\0';
    return n;
}

/* ---- strings ------------------------------------------------------------------------------- */

/* ASCII that JSON takes as is. */
static bool is_plain(uint8_t c)
{
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

static void put_escaped_ascii(struct fx_json *j, uint32_t c)
{
    static const char hex[] = "0123456789abcdef";
    static const char short_esc[] = {
            ['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't'};
    char e[6] = {'\\', 'u', '0', '0', hex[(c >> 4) & 0xF], hex[c & 0xF]};
    if (c == '"' || c == '\\') {
        e[1] = (char)c;
        put(j, e, 2);
    } else if (c < sizeof(short_esc) && short_esc[c]) {
        e[1] = short_esc[c];
        put(j, e, 2);
    } else {
        put(j, e, 6);
    }
}

static void put_codepoint(struct fx_json *j, uint32_t cp)
{
    if (cp < 0x80) {
        put_escaped_ascii(j, cp);
        return;
    }
    uint8_t enc[4];
    put(j, enc, encode(cp, enc));
}

static void put_string(struct fx_json *j, const uint8_t *s, size_t len)
{
    put_c(j, '"');
    size_t i = 0;
    while (i < len && !j->err) {
        size_t run = i;
        while (run < len && is_plain(s[run]))
            run++;
        put(j, s + i, run - i);
        if (run == len)
            break;
        size_t used;
        put_codepoint(j, decode(s + run, len - run, &used));
        i = run + used;
    }
    put_c(j, '"');
}

/* ---- structure ----------------------------------------------------------------------------- */

void fx_json_init(struct fx_json *j, struct fx_sink sink)
{
    j->sink = sink;
    j->err = FX_OK;
    j->depth = 0;
    j->first[0] = true;
    j->after_key = false;
    j->len = 0;
    j->out = j->buf;
    j->cap = sizeof(j->buf);
    if (sink.swap) {
        int rc = sink.swap(sink.ctx, 0, &j->out, &j->cap);
        if (rc != FX_OK)
            fail(j, rc < 0 ? rc : FX_EIO);
    }
}

static void open_level(struct fx_json *j, char c)
{
    if (!begin_value(j))
        return;
    if (j->depth + 1 >= FX_JSON_MAX_DEPTH) {
        fail(j, FX_ERANGE);
        return;
    }
    put_c(j, c);
    j->first[++j->depth] = true;
}

static void close_level(struct fx_json *j, char c)
{
    if (j->err)
        return;
    if (j->depth == 0 || j->after_key) {
        fail(j, FX_ESTATE);
        return;
    }
    put_c(j, c);
    j->depth--;
}

void fx_json_obj_begin(struct fx_json *j)
{
    open_level(j, '{');
}

void fx_json_obj_end(struct fx_json *j)
{
    close_level(j, '}');
}

void fx_json_arr_begin(struct fx_json *j)
{
    open_level(j, '[');
}

void fx_json_arr_end(struct fx_json *j)
{
    close_level(j, ']');
}

void fx_json_key(struct fx_json *j, const char *key)
{
    if (j->err)
        return;
    if (j->after_key || j->depth == 0) {
        fail(j, FX_ESTATE);
        return;
    }
    begin_value(j);
    put_string(j, (const uint8_t *)key, strlen(key));
    put_c(j, ':');
    j->after_key = true;
}

void fx_json_strn(struct fx_json *j, const char *s, size_t len)
{
    if (begin_value(j))
        put_string(j, (const uint8_t *)s, len);
}

void fx_json_str(struct fx_json *j, const char *s)
{
    if (!s)
        fx_json_null(j);
    else
        fx_json_strn(j, s, strlen(s));
}

void fx_json_bool(struct fx_json *j, bool v)
{
    if (begin_value(j))
        put(j, v ? "true" : "false", v ? 4 : 5);
}

void fx_json_null(struct fx_json *j)
{
    if (begin_value(j))
        put(j, "null", 4);
}

int fx_json_finish(struct fx_json *j)
{
    if (!j->err && (j->depth != 0 || j->after_key))
        fail(j, FX_ESTATE);
    flush(j);
    return j->err;
}

/* ---- numbers: digits are produced by hand, so LC_NUMERIC never matters -------------------- */

/* 10^0 .. 10^19: fmt_u64's digit count and fmt_fixed's scale */
static const uint64_t pow10_tab[20] = {1ull,
                                       10ull,
                                       100ull,
                                       1000ull,
                                       10000ull,
                                       100000ull,
                                       1000000ull,
                                       10000000ull,
                                       100000000ull,
                                       1000000000ull,
                                       10000000000ull,
                                       100000000000ull,
                                       1000000000000ull,
                                       10000000000000ull,
                                       100000000000000ull,
                                       1000000000000000ull,
                                       10000000000000000ull,
                                       100000000000000000ull,
                                       1000000000000000000ull,
                                       10000000000000000000ull};

/* v in decimal at o (room for 20 bytes); the end. Two digits a step, written in place from the
 * end: the digits are counted first (no copy through a buffer: the writer's hottest path). */
static char *fmt_u64(char *o, uint64_t v)
{
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324252627282930"
                                   "31323334353637383940414243444546474849505152535455565758596061"
                                   "62636465666768697071727374757677787980818283848586878889909192"
                                   "93949596979899";
    int n = 1;
    while (n < 20 && v >= pow10_tab[n])
        n++;
    char *e = o + n, *w = e;
    while (v >= 100) {
        unsigned k = (unsigned)(v % 100) * 2;
        v /= 100;
        *--w = pairs[k + 1];
        *--w = pairs[k];
    }
    if (v >= 10) {
        *--w = pairs[v * 2 + 1];
        *--w = pairs[v * 2];
    } else {
        *--w = (char)('0' + v);
    }
    return e;
}

/* Writes v in decimal, left-padded with zeros to at least `width` digits (at most 20). */
static void put_digits(struct fx_json *j, uint64_t v, int width)
{
    static const char zeros[20] = "0000000000000000000";
    char tmp[20];
    int n = (int)(fmt_u64(tmp, v) - tmp);
    if (width > n)
        put(j, zeros, (size_t)(width - n < 20 ? width - n : 20));
    put(j, tmp, (size_t)n);
}

char *fx_json_raw_begin(struct fx_json *j, size_t n)
{
    if (n >= sizeof(j->buf)) {
        fail(j, FX_ERANGE);
        return NULL;
    }
    char *o = room(j, n + 1); /* and the comma */
    if (!o)
        return NULL;
    if (j->after_key)
        j->after_key = false;
    else if (!j->first[j->depth])
        *o++ = ',';
    j->first[j->depth] = false;
    return o;
}

void fx_json_raw_end(struct fx_json *j, const char *end)
{
    j->len = (size_t)(end - j->out);
}

char *fx_json_fmt_u64(char *o, uint64_t v)
{
    return fmt_u64(o, v);
}

char *fx_json_fmt_i64(char *o, int64_t v)
{
    if (v < 0)
        *o++ = '-';
    return fmt_u64(o, v < 0 ? 0 - (uint64_t)v : (uint64_t)v); /* INT64_MIN too */
}

char *fx_json_fmt_ms(char *o, int64_t us)
{
    uint64_t mag = us < 0 ? 0 - (uint64_t)us : (uint64_t)us;
    if (us < 0)
        *o++ = '-';
    o = fmt_u64(o, mag / 1000);
    unsigned frac = (unsigned)(mag % 1000);
    if (frac) {
        *o++ = '.';
        *o++ = (char)('0' + frac / 100);
        if (frac % 100) {
            *o++ = (char)('0' + frac / 10 % 10);
            if (frac % 10)
                *o++ = (char)('0' + frac % 10);
        }
    }
    return o;
}

void fx_json_ms(struct fx_json *j, int64_t us)
{
    if (us <= -FX_JSON_MS_EXACT || us >= FX_JSON_MS_EXACT) {
        fx_json_double(j, (double)us / 1000.0, 3);
        return;
    }
    char *o = fx_json_raw_begin(j, 24);
    if (o)
        fx_json_raw_end(j, fx_json_fmt_ms(o, us));
}

void fx_json_u64(struct fx_json *j, uint64_t v)
{
    char *o = fx_json_raw_begin(j, 20);
    if (o)
        fx_json_raw_end(j, fmt_u64(o, v));
}

void fx_json_i64(struct fx_json *j, int64_t v)
{
    char *o = fx_json_raw_begin(j, 21);
    if (o)
        fx_json_raw_end(j, fx_json_fmt_i64(o, v));
}

/* An integral double of any size (>= 2^63 here), exactly: mantissa times 2^e in base-1e9
 * limbs. 36 limbs hold DBL_MAX's 309 digits. */
static void put_big_integral(struct fx_json *j, double a)
{
    int exp;
    double mant = frexp(a, &exp);
    uint64_t m = (uint64_t)ldexp(mant, 53);
    int e = exp - 53;
    uint32_t limb[36] = {(uint32_t)(m % 1000000000u), (uint32_t)(m / 1000000000u % 1000000000u),
                         (uint32_t)(m / 1000000000u / 1000000000u)};
    int n = 3;
    while (e > 0) {
        int k = e < 28 ? e : 28;
        uint64_t carry = 0;
        for (int i = 0; i < n; i++) {
            uint64_t t = ((uint64_t)limb[i] << k) + carry;
            limb[i] = (uint32_t)(t % 1000000000u);
            carry = t / 1000000000u;
        }
        if (carry && n < 36)
            limb[n++] = (uint32_t)carry;
        e -= k;
    }
    while (n > 1 && limb[n - 1] == 0)
        n--;
    put_digits(j, limb[n - 1], 1);
    for (int i = n - 2; i >= 0; i--)
        put_digits(j, limb[i], 9);
}

/* The integral and fractional parts are split before scaling (both exact for a double), so the
 * only rounding is of frac * 10^decimals, and the integral part is never scaled out of range. */
static void put_fixed(struct fx_json *j, double v, int decimals)
{
    double ip = trunc(v);
    uint64_t scale = pow10_tab[decimals];
    uint64_t whole = (uint64_t)fabs(ip);
    uint64_t frac = (uint64_t)llround(fabs(v - ip) * (double)scale);
    if (frac >= scale) {
        whole++;
        frac -= scale;
    }
    if (signbit(v) && (whole || frac))
        put_c(j, '-');
    put_digits(j, whole, 1);
    if (frac == 0)
        return;
    int width = decimals;
    while (frac % 10 == 0) {
        frac /= 10;
        width--;
    }
    put_c(j, '.');
    put_digits(j, frac, width);
}

void fx_json_double(struct fx_json *j, double v, int decimals)
{
    if (!isfinite(v)) {
        fx_json_null(j);
        return;
    }
    if (!begin_value(j))
        return;
    if (decimals < 0)
        decimals = 0;
    if (decimals > 17)
        decimals = 17;
    if (fabs(v) < 9.2e18) {
        put_fixed(j, v, decimals);
        return;
    }
    if (v < 0)
        put_c(j, '-');
    put_big_integral(j, fabs(v));
}
