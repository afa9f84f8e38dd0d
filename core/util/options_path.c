/* SPDX-License-Identifier: Apache-2.0 */
/* Output file patterns (file=): a relative pattern made absolute at the start, %p %t %n %%
 * expanded at each dump, and the pattern a loop= series numbers. Tests: unit.options. */
#include "fx_options_internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fx_alloc.h"

/* Appends s to out (cap bytes, at *len) with every '%' doubled, so it stays literal. */
static bool put_literal(char *out, size_t cap, size_t *len, const char *s)
{
    for (; *s; s++) {
        if (*len + 2 >= cap)
            return false;
        if (*s == '%')
            out[(*len)++] = '%';
        out[(*len)++] = *s;
    }
    out[*len] = '\0';
    return true;
}

int fx_options_absolute_file(struct fx_options *o, const char *cwd, const char *home)
{
    const char *f = o->file, *prefix = cwd, *rest = f;
    if (!f || f[0] == '/')
        return FX_OK;
    if (f[0] == '~' && f[1] == '/' && home && home[0] == '/') {
        prefix = home;
        rest = f + 2;
    }
    if (!prefix || prefix[0] != '/')
        return FX_EINVAL;
    char *abs = fx_malloc(PATTERN_MAX + 1);
    if (!abs)
        return FX_ENOMEM;
    size_t len = 0;
    abs[0] = '\0';
    bool slash = prefix[strlen(prefix) - 1] != '/';
    if (!put_literal(abs, PATTERN_MAX + 1, &len, prefix) ||
        !put_literal(abs, PATTERN_MAX + 1, &len, slash ? "/" : "") ||
        len + strlen(rest) > PATTERN_MAX) {
        fx_free(abs);
        return FX_ERANGE;
    }
    memcpy(abs + len, rest, strlen(rest) + 1);
    if (o->file != fx_options_default_file)
        fx_free(o->file);
    o->file = abs;
    return FX_OK;
}

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
