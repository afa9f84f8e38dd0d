/* SPDX-License-Identifier: Apache-2.0 */
/* fxcheck: the structural checker of PROFILE-FORMAT.md §17.2. It reads a processed profile
 * (.json, or gzip detected by its magic bytes), rejects what the front-end would choke on or
 * silently mis-render, and names the rule each problem breaks:
 *   gzip multi-member-gzip utf8 json version missing type column-length index-range
 *   null-convention category prefix-order time-order cpu-delta marker-phase marker-schema
 *   marker-cause reserved-type unique-string pid main-thread threads-empty visible-threads
 *   weight value totals
 * With --summary-json it also prints per-thread sample and per-func self/total counts computed
 * from the stack table, so integration tests can cross-check profiler-cli. */
#include "fxcheck.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#define ELEM_REPORT_LIMIT 3

void *ck_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fprintf(stderr, "fxcheck: out of memory\n");
        exit(2);
    }
    return p;
}

void *ck_xrealloc(void *p, size_t size)
{
    p = realloc(p, size);
    if (!p) {
        fprintf(stderr, "fxcheck: out of memory\n");
        exit(2);
    }
    return p;
}

void ck_fail(struct ck *c, const char *path, const char *rule, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "fxcheck: %s: %s: %s: %s\n", c->file, path, rule, msg);
    c->problems++;
}

void ck_elem_fail(struct ck_colrep *r, long i, const char *rule, const char *fmt, ...)
{
    r->bad++;
    if (r->bad > ELEM_REPORT_LIMIT) {
        r->c->problems++;
        return;
    }
    char msg[400], path[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(path, sizeof path, "%s[%ld]", r->path, i);
    ck_fail(r->c, path, rule, "%s", msg);
}

void ck_colrep_end(struct ck_colrep *r)
{
    if (r->bad > ELEM_REPORT_LIMIT)
        fprintf(stderr, "fxcheck: %s: %s: ... %ld more bad elements in this column\n", r->c->file,
                r->path, r->bad - ELEM_REPORT_LIMIT);
}

bool ck_is_int(double v)
{
    return v >= -9007199254740992.0 && v <= 9007199254740992.0 && (double)(long long)v == v;
}

static enum ck_cell cell_of(const cJSON *e, double *v)
{
    *v = 0;
    if (cJSON_IsNumber(e)) {
        *v = e->valuedouble;
        return CELL_NUM;
    }
    if (cJSON_IsNull(e))
        return CELL_NULL;
    if (cJSON_IsBool(e)) {
        *v = cJSON_IsTrue(e) ? 1 : 0;
        return CELL_BOOL;
    }
    return cJSON_IsString(e) ? CELL_STR : CELL_OTHER;
}

bool ck_col_read(struct ck *c, const char *path, const cJSON *obj, const char *key,
                 struct ck_col *col)
{
    memset(col, 0, sizeof *col);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!a) {
        ck_fail(c, path, "missing", "column '%s' is missing", key);
        return false;
    }
    if (!cJSON_IsArray(a)) {
        ck_fail(c, path, "type", "column '%s' is not an array", key);
        return false;
    }
    col->n = cJSON_GetArraySize(a);
    col->v = ck_xcalloc((size_t)col->n, sizeof *col->v);
    col->cell = ck_xcalloc((size_t)col->n, 1);
    col->node = ck_xcalloc((size_t)col->n, sizeof *col->node);
    long i = 0;
    for (const cJSON *e = a->child; e; e = e->next, i++) {
        col->cell[i] = (unsigned char)cell_of(e, &col->v[i]);
        col->node[i] = e;
    }
    return true;
}

void ck_col_free(struct ck_col *col)
{
    free(col->v);
    free(col->cell);
    free(col->node);
    memset(col, 0, sizeof *col);
}

/* ---- loading: bytes, gzip, UTF-8, JSON ---- */

static bool read_all(const char *file, unsigned char **out, size_t *len)
{
    FILE *f = fopen(file, "rb");
    if (!f) {
        fprintf(stderr, "fxcheck: %s: cannot open: %s\n", file, strerror(errno));
        return false;
    }
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = ck_xcalloc(cap, 1);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            buf = ck_xrealloc(buf, cap);
        }
    }
    bool ok = !ferror(f);
    fclose(f);
    if (!ok) {
        fprintf(stderr, "fxcheck: %s: read error\n", file);
        free(buf);
        return false;
    }
    *out = buf;
    *len = n;
    return true;
}

/* One member only: browsers' DecompressionStream rejects concatenated members (§15), while
 * Node's gunzip, and so profiler-cli, accepts them. Any byte after the first member fails. */
static bool gunzip(struct ck *c, const unsigned char *in, size_t len, unsigned char **out,
                   size_t *out_len)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 16 + 15) != Z_OK) {
        ck_fail(c, "(gzip)", "gzip", "inflateInit2 failed");
        return false;
    }
    size_t cap = len * 4 + 1024, n = 0;
    unsigned char *buf = ck_xcalloc(cap, 1);
    zs.next_in = (unsigned char *)in;
    zs.avail_in = (uInt)len;
    int rc;
    do {
        if (n == cap) {
            cap *= 2;
            buf = ck_xrealloc(buf, cap);
        }
        size_t room = cap - n > (1u << 30) ? (1u << 30) : cap - n;
        zs.next_out = buf + n;
        zs.avail_out = (uInt)room;
        rc = inflate(&zs, Z_NO_FLUSH);
        n += room - zs.avail_out;
    } while (rc == Z_OK || (rc == Z_BUF_ERROR && zs.avail_in > 0 && zs.avail_out == 0));
    unsigned long left = zs.avail_in;
    inflateEnd(&zs);
    if (rc != Z_STREAM_END) {
        ck_fail(c, "(gzip)", "gzip", "corrupt or truncated gzip stream (zlib %d)", rc);
        free(buf);
        return false;
    }
    if (left > 0) {
        bool member = left >= 2 && in[len - left] == 0x1f && in[len - left + 1] == 0x8b;
        ck_fail(c, "(gzip)", "multi-member-gzip",
                "multi-member gzip: %lu bytes follow the first member%s (browsers reject this, "
                "§15)",
                left, member ? ", starting a second member" : "");
        free(buf);
        return false;
    }
    *out = buf;
    *out_len = n;
    return true;
}

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, no surrogates, at most
 * U+10FFFF), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t left)
{
    unsigned char b = s[0];
    if (b < 0x80)
        return 1;
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF)
        need = 2;
    else if (b >= 0xE0 && b <= 0xEF) {
        need = 3;
        lo = b == 0xE0 ? 0xA0 : 0x80;
        hi = b == 0xED ? 0x9F : 0xBF;
    } else if (b >= 0xF0 && b <= 0xF4) {
        need = 4;
        lo = b == 0xF0 ? 0x90 : 0x80;
        hi = b == 0xF4 ? 0x8F : 0xBF;
    } else
        return 0;
    if (left < need || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t k = 2; k < need; k++)
        if ((s[k] & 0xC0) != 0x80)
            return 0;
    return need;
}

static bool check_utf8(struct ck *c, const unsigned char *s, size_t len)
{
    size_t line = 1;
    for (size_t i = 0; i < len;) {
        size_t k = utf8_seq(s + i, len - i);
        if (!k) {
            char where[64];
            snprintf(where, sizeof where, "(byte %zu, line %zu)", i, line);
            ck_fail(c, where, "utf8",
                    "invalid UTF-8 byte 0x%02x (the front-end decodes in fatal mode)", s[i]);
            return false;
        }
        line += s[i] == '\n';
        i += k;
    }
    return true;
}

static cJSON *load(struct ck *c)
{
    unsigned char *raw, *text;
    size_t raw_len, len;
    if (!read_all(c->file, &raw, &raw_len)) {
        c->problems++;
        return NULL;
    }
    if (raw_len >= 2 && raw[0] == 0x1f && raw[1] == 0x8b) {
        bool ok = gunzip(c, raw, raw_len, &text, &len);
        free(raw);
        if (!ok)
            return NULL;
    } else {
        text = raw;
        len = raw_len;
    }
    cJSON *root = NULL;
    if (check_utf8(c, text, len)) {
        const char *end = NULL;
        root = cJSON_ParseWithLengthOpts((const char *)text, len, &end, false);
        if (!root) {
            size_t at = end ? (size_t)(end - (const char *)text) : 0;
            ck_fail(c, "(json)", "json", "not valid JSON near byte %zu", at);
        }
    }
    free(text);
    return root;
}

static void check_root(struct ck *c)
{
    const cJSON *r = c->root;
    if (!cJSON_IsObject(r)) {
        ck_fail(c, "(root)", "type", "the profile is not a JSON object");
        return;
    }
    c->meta = cJSON_GetObjectItemCaseSensitive(r, "meta");
    c->shared = cJSON_GetObjectItemCaseSensitive(r, "shared");
    const cJSON *libs = cJSON_GetObjectItemCaseSensitive(r, "libs");
    c->n[T_LIB] = cJSON_IsArray(libs) ? cJSON_GetArraySize(libs) : -1;
    if (!cJSON_IsArray(libs))
        ck_fail(c, "libs", libs ? "type" : "missing", "must be an array");
    static const char *const optional_arrays[] = {"pages", "profilerOverhead", "counters"};
    for (size_t i = 0; i < sizeof optional_arrays / sizeof *optional_arrays; i++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(r, optional_arrays[i]);
        if (a && !cJSON_IsArray(a))
            ck_fail(c, optional_arrays[i], "type", "must be an array when present");
    }
    const cJSON *threads = cJSON_GetObjectItemCaseSensitive(r, "threads");
    c->n[T_THREAD] = cJSON_IsArray(threads) ? cJSON_GetArraySize(threads) : 0;
    if (!cJSON_IsObject(c->meta)) {
        ck_fail(c, "meta", c->meta ? "type" : "missing", "must be an object");
        c->meta = NULL;
    }
    if (!cJSON_IsObject(c->shared)) {
        ck_fail(c, "shared", c->shared ? "type" : "missing", "must be an object");
        c->shared = NULL;
    }
}

static int usage(void)
{
    fprintf(stderr, "usage: fxcheck [--summary-json] FILE(.json|.json.gz)\n");
    return 2;
}

int main(int argc, char **argv)
{
    bool summary = false;
    const char *file = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--summary-json"))
            summary = true;
        else if (argv[i][0] == '-' || file)
            return usage();
        else
            file = argv[i];
    }
    if (!file)
        return usage();
    struct ck c;
    memset(&c, 0, sizeof c);
    c.file = file;
    cJSON *root = load(&c);
    if (root) {
        c.root = root;
        check_root(&c);
        ck_meta(&c);
        ck_shared(&c);
        ck_threads(&c);
        ck_counters(&c);
        if (c.problems == 0) /* the tables are sound: safe to walk */
            ck_totals(&c);
    }
    int rc = 1;
    if (c.problems == 0) {
        FILE *okout = summary ? stderr : stdout;
        fprintf(okout, "fxcheck: OK %s (%ld threads, %llu samples, %ld stacks)\n", file,
                c.n[T_THREAD], ck_sample_total(&c), c.n[T_STACK]);
        rc = summary && ck_summary_print(&c) != 0 ? 1 : 0;
    } else {
        fprintf(stderr, "fxcheck: %s: %lu problem%s\n", file, c.problems,
                c.problems == 1 ? "" : "s");
    }
    free(c.n_subcats);
    cJSON_Delete(root);
    return rc;
}
