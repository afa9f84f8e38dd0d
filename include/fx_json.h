/* SPDX-License-Identifier: Apache-2.0 */
/* A streaming JSON emitter over an fx_sink: no DOM, a fixed buffer, commas handled for the
 * caller. Errors are sticky: after the first failure every call is a no-op and
 * fx_json_finish() returns it, so emitting code needs no error check per value.
 * Strings may hold any bytes (JVM modified UTF-8, CESU-8 surrogate pairs, garbage): the output
 * is always valid UTF-8 JSON. Numbers are locale-independent; NaN and Inf are written as null. */
#ifndef FX_JSON_H
#define FX_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fx_sink.h"

#define FX_JSON_MAX_DEPTH 32
#define FX_JSON_BUF       65536

struct fx_json {
    struct fx_sink sink;
    int err;
    unsigned depth;
    bool first[FX_JSON_MAX_DEPTH]; /* no value yet at this level: no comma before the next */
    bool after_key;
    size_t len, cap; /* bytes at out not yet handed to the sink, and out's room */
    char *out;       /* buf, or the sink's memory (fx_sink.swap) */
    char buf[FX_JSON_BUF];
};

void fx_json_init(struct fx_json *j, struct fx_sink sink);
void fx_json_obj_begin(struct fx_json *j);
void fx_json_obj_end(struct fx_json *j);
void fx_json_arr_begin(struct fx_json *j);
void fx_json_arr_end(struct fx_json *j);
/* An object key; key must be plain ASCII without characters that need escaping. */
void fx_json_key(struct fx_json *j, const char *key);
/* A string value from any bytes (see the file comment). */
void fx_json_strn(struct fx_json *j, const char *s, size_t len);
void fx_json_str(struct fx_json *j, const char *s); /* NUL-terminated; NULL writes null */
void fx_json_i64(struct fx_json *j, int64_t v);
void fx_json_u64(struct fx_json *j, uint64_t v);
/* A number with at most `decimals` digits after the point, trailing zeros trimmed. */
void fx_json_double(struct fx_json *j, double v, int decimals);
/* Integer microseconds as milliseconds, as fx_json_double(us / 1000.0, 3) writes them (exact
 * below FX_JSON_MS_EXACT, where the double's rounding cannot show; fx_json_double beyond). */
#define FX_JSON_MS_EXACT 1000000000000000LL
void fx_json_ms(struct fx_json *j, int64_t us);
void fx_json_bool(struct fx_json *j, bool v);
void fx_json_null(struct fx_json *j);
/* Hot loops' values formatted in place: fx_json_raw_begin writes the comma the value needs and
 * returns room for n bytes (n < FX_JSON_BUF) in the buffer, NULL after an error; the caller
 * writes one valid JSON value there (the fmt calls below, or text known to need no escaping)
 * and gives its end to fx_json_raw_end. The fmt calls return the end of what they wrote:
 * at most 20 bytes, 21 with a sign, 24 for ms (|us| < FX_JSON_MS_EXACT). */
char *fx_json_raw_begin(struct fx_json *j, size_t n);
void fx_json_raw_end(struct fx_json *j, const char *end);
char *fx_json_fmt_u64(char *o, uint64_t v);
char *fx_json_fmt_i64(char *o, int64_t v);
char *fx_json_fmt_ms(char *o, int64_t us);
/* Flushes the buffer; returns the first error seen, or FX_OK. */
int fx_json_finish(struct fx_json *j);

/* Converts any bytes to valid UTF-8 (modified UTF-8 C0 80 -> U+0000, CESU-8 pairs -> the
 * supplementary character, anything invalid -> U+FFFD). Writes at most cap-1 bytes and a NUL
 * into out; returns the length written. Used for text that leaves the process other than as
 * JSON (log lines, reports). */
size_t fx_json_sanitize_utf8(const char *s, size_t len, char *out, size_t cap);

#endif
