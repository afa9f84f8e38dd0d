/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the libFuzzer harnesses: the entry point's prototype, a check that aborts (so
 * libFuzzer keeps the input as a crash artifact), a byte reader that never runs dry (missing
 * bytes read as 0), a strict UTF-8 validator independent of core/writer/json.c, and the input
 * as a file (the JFR harnesses read a path). */
#ifndef FX_FUZZ_UTIL_H
#define FX_FUZZ_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Prints "fuzz check failed: <what>" with the location, then aborts. */
#define FUZZ_CHECK(cond, ...)                                  \
    do {                                                       \
        if (!(cond))                                           \
            fuzz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__); \
    } while (0)

void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
        __attribute__((noreturn, format(printf, 4, 5)));

struct fuzz_reader {
    const uint8_t *p;
    size_t n;
};

uint8_t fuzz_u8(struct fuzz_reader *r);
uint32_t fuzz_u32(struct fuzz_reader *r);
uint64_t fuzz_u64(struct fuzz_reader *r);
/* Up to max bytes (the count is the next byte modulo max + 1, bounded by what is left);
 * returns a pointer into the input, not NUL-terminated. */
const uint8_t *fuzz_bytes(struct fuzz_reader *r, size_t max, size_t *len);
/* Like fuzz_bytes, copied into out (cap > 0) and NUL-terminated (an inner NUL ends it early). */
const char *fuzz_cstr(struct fuzz_reader *r, char *out, size_t cap);

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlongs, no surrogates, at most
 * U+10FFFF), or 0 if there is none. */
size_t fuzz_utf8_seq_len(const uint8_t *s, size_t len);
/* True if all of s[0..len) is well-formed UTF-8; *bad is the offset of the first fault. */
bool fuzz_utf8_valid(const uint8_t *s, size_t len, size_t *bad);

/* The input written to a memfd, its name (/proc/self/fd/N) in path (cap >= 32): the fd, to
 * close, or -1 (the input is then skipped). */
int fuzz_input_file(const uint8_t *data, size_t size, char *path, size_t cap);

#endif
