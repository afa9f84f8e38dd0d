/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers of the fuzz harnesses. The UTF-8 validator is written from RFC 3629 table 3-7 and
 * shares no code with core/writer/json.c, so it can catch what the emitter's own decoder gets
 * wrong. */
#include "fuzz_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz check failed at %s:%d: %s: ", file, line, cond);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

uint8_t fuzz_u8(struct fuzz_reader *r)
{
    if (r->n == 0)
        return 0;
    r->n--;
    return *r->p++;
}

uint32_t fuzz_u32(struct fuzz_reader *r)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)fuzz_u8(r) << (8 * i);
    return v;
}

uint64_t fuzz_u64(struct fuzz_reader *r)
{
    uint64_t lo = fuzz_u32(r);
    return lo | (uint64_t)fuzz_u32(r) << 32;
}

const uint8_t *fuzz_bytes(struct fuzz_reader *r, size_t max, size_t *len)
{
    size_t n = fuzz_u8(r) % (max + 1);
    if (n > r->n)
        n = r->n;
    const uint8_t *p = r->p;
    r->p += n;
    r->n -= n;
    *len = n;
    return p;
}

const char *fuzz_cstr(struct fuzz_reader *r, char *out, size_t cap)
{
    size_t len;
    const uint8_t *p = fuzz_bytes(r, cap - 1, &len);
    memcpy(out, p, len);
    out[len] = '\0';
    return out;
}

/* Table 3-7: the second byte's range depends on the lead; later bytes are 80..BF. */
size_t fuzz_utf8_seq_len(const uint8_t *s, size_t len)
{
    if (len == 0)
        return 0;
    uint8_t b = s[0], lo = 0x80, hi = 0xBF;
    size_t n;
    if (b < 0x80)
        return 1;
    if (b >= 0xC2 && b <= 0xDF)
        n = 2;
    else if (b >= 0xE0 && b <= 0xEF)
        n = 3;
    else if (b >= 0xF0 && b <= 0xF4)
        n = 4;
    else
        return 0;
    if (b == 0xE0)
        lo = 0xA0;
    else if (b == 0xED)
        hi = 0x9F;
    else if (b == 0xF0)
        lo = 0x90;
    else if (b == 0xF4)
        hi = 0x8F;
    if (len < n || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++) {
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    }
    return n;
}

bool fuzz_utf8_valid(const uint8_t *s, size_t len, size_t *bad)
{
    size_t i = 0;
    while (i < len) {
        size_t n = fuzz_utf8_seq_len(s + i, len - i);
        if (n == 0) {
            *bad = i;
            return false;
        }
        i += n;
    }
    *bad = len;
    return true;
}

int fuzz_input_file(const uint8_t *data, size_t size, char *path, size_t cap)
{
    int fd = memfd_create("fuzz.jfr", 0);
    if (fd < 0)
        return -1;
    if (size && write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return -1;
    }
    snprintf(path, cap, "/proc/self/fd/%d", fd);
    return fd;
}
