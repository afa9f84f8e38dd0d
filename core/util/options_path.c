/* SPDX-License-Identifier: Apache-2.0 */
/* File patterns of the file= option: %p %t %n %% expanded (fx_options_expand_path), and the
 * pattern that gives every file of a loop= series its own name (fx_options_sequenced_pattern).
 * Apart from options.c, which owns the grammar. */
#include "fx_options.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

struct out_buf {
    char *p;
    size_t cap, len; /* len < cap: there is always room for the NUL */
};

static int put(struct out_buf *b, const char *s, size_t n)
{
    if (n >= b->cap - b->len)
        return FX_ERANGE;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
    return FX_OK;
}

static int put_escape(struct out_buf *b, char c, pid_t pid, time_t when, unsigned seq)
{
    char tmp[64];
    int n;
    struct tm tm;
    switch (c) {
    case 'p':
        n = snprintf(tmp, sizeof(tmp), "%ld", (long)pid);
        break;
    case 'n':
        n = snprintf(tmp, sizeof(tmp), "%u", seq);
        break;
    case 't':
        if (!localtime_r(&when, &tm))
            return FX_EINVAL;
        n = (int)strftime(tmp, sizeof(tmp), "%Y%m%d-%H%M%S", &tm);
        break;
    case '%':
        return put(b, "%", 1);
    default: /* fx_options_parse refuses these, but patterns may come from elsewhere */
        return FX_EINVAL;
    }
    return n > 0 ? put(b, tmp, (size_t)n) : FX_EINVAL;
}

int fx_options_expand_path(const char *pattern, pid_t pid, time_t when, unsigned seq, char *out,
                           size_t cap)
{
    if (cap == 0)
        return FX_ERANGE;
    struct out_buf b = {.p = out, .cap = cap, .len = 0};
    out[0] = '\0';
    int rc = FX_OK;
    for (const char *p = pattern; rc == FX_OK && *p; p++) {
        if (*p != '%')
            rc = put(&b, p, 1);
        else
            rc = put_escape(&b, *++p, pid, when, seq);
    }
    if (rc != FX_OK)
        out[0] = '\0';
    return rc;
}

static bool has_sequence(const char *pattern)
{
    for (const char *p = pattern; *p; p++) {
        if (*p == '%' && p[1] == 'n')
            return true;
        if (*p == '%' && p[1] != '\0')
            p++; /* "%%n" is a literal "%" then "n" */
    }
    return false;
}

int fx_options_sequenced_pattern(const char *pattern, char *out, size_t cap)
{
    static const char *const exts[] = {".json.gz", ".json", ".gz"};
    size_t len = strlen(pattern), at = len;
    if (!has_sequence(pattern)) {
        for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]) && at == len; i++) {
            size_t e = strlen(exts[i]);
            if (len > e && strcmp(pattern + len - e, exts[i]) == 0)
                at = len - e;
        }
    }
    const char *seq = at == len && has_sequence(pattern) ? "" : "-%n";
    int n = snprintf(out, cap, "%.*s%s%s", (int)at, pattern, seq, pattern + at);
    if (n < 0 || (size_t)n >= cap) {
        if (cap)
            out[0] = '\0';
        return FX_ERANGE;
    }
    return FX_OK;
}
