/* SPDX-License-Identifier: Apache-2.0 */
/* Reads a processed Firefox Profiler file (.json or .json.gz, v56 and later) into flat index
 * columns. Every index is range-checked when loaded and every stack's parent comes before it,
 * so the walks in summary.c can neither read out of bounds nor loop. */
#include "fxprof.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "fx_alloc.h"

#define FILE_MAX ((size_t)4 << 30) /* decompressed; cJSON needs several times this in memory */

static int read_all(const char *path, char **out, size_t *len, struct fx_errbuf *eb)
{
    gzFile gz = gzopen(path, "rb"); /* reads plain files unchanged */
    if (!gz) {
        fx_errbuf_set(eb, "cannot open %s: %s", path, errno ? strerror(errno) : "out of memory");
        return FX_EIO;
    }
    size_t cap = 1 << 20, n = 0;
    char *buf = fx_malloc(cap);
    int rc = buf ? FX_OK : FX_ENOMEM;
    while (rc == FX_OK) {
        if (cap - n < 65536) {
            char *nb = cap < FILE_MAX ? fx_reallocarray(buf, cap, 2) : NULL;
            rc = nb ? FX_OK : FX_ENOMEM;
            buf = nb ? nb : buf;
            cap *= nb ? 2 : 1;
            continue;
        }
        int r = gzread(gz, buf + n, 65536);
        if (r < 0) {
            int zerr;
            fx_errbuf_set(eb, "cannot read %s: %s", path, gzerror(gz, &zerr));
            rc = FX_EIO;
        } else if (r == 0) {
            break;
        }
        n += r > 0 ? (size_t)r : 0;
    }
    gzclose(gz);
    if (rc == FX_ENOMEM)
        fx_errbuf_set(eb, "%s is too large to summarise here (out of memory)", path);
    if (rc != FX_OK) {
        fx_free(buf);
        return rc;
    }
    *out = buf;
    *len = n;
    return FX_OK;
}

int fx_pfile_load(const char *path, struct cJSON **root, struct fx_errbuf *eb)
{
    static cJSON_Hooks hooks = {fx_malloc, fx_free};
    cJSON_InitHooks(&hooks);
    char *text;
    size_t len;
    int rc = read_all(path, &text, &len, eb);
    if (rc != FX_OK)
        return rc;
    const char *where = NULL;
    *root = cJSON_ParseWithLengthOpts(text, len, &where, 0);
    if (!*root) {
        fx_errbuf_set(eb, "%s is not JSON (error near byte %zu)", path,
                      where ? (size_t)(where - text) : 0);
        rc = FX_EINVAL;
    } else if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(*root, "meta")) ||
               !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(*root, "threads"))) {
        fx_errbuf_set(eb, "%s is not a processed Firefox Profiler profile (no meta or threads)",
                      path);
        cJSON_Delete(*root);
        rc = FX_EINVAL;
    }
    fx_free(text);
    return rc;
}

/* ---- columns ---- */

static const cJSON *item(const cJSON *o, const char *key)
{
    return o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

static int table_length(const cJSON *table, const char *name, uint32_t *n, struct fx_errbuf *eb)
{
    const cJSON *len = item(table, "length");
    if (!cJSON_IsNumber(len) || len->valuedouble < 0 || len->valuedouble > INT32_MAX) {
        fx_errbuf_set(eb, "profile: %s has no valid length", name);
        return FX_EINVAL;
    }
    *n = (uint32_t)len->valuedouble;
    return FX_OK;
}

/* A column of n indexes each in [0, limit), or -1 where null_ok and the value is null. */
static int column(const cJSON *table, const char *name, const char *col, uint32_t n, uint32_t limit,
                  bool null_ok, int32_t **out, struct fx_errbuf *eb)
{
    const cJSON *arr = item(table, col);
    int32_t *v = fx_calloc(n ? n : 1, sizeof *v);
    if (!v) {
        fx_errbuf_set(eb, "out of memory reading %s.%s", name, col);
        return FX_ENOMEM;
    }
    uint32_t i = 0;
    const cJSON *e = cJSON_IsArray(arr) ? arr->child : NULL;
    for (; e && i < n; e = e->next, i++) {
        bool isnull = cJSON_IsNull(e);
        double d = cJSON_IsNumber(e) ? e->valuedouble : -1;
        if ((isnull && !null_ok) || (!isnull && (d < 0 || d >= limit || d != (int32_t)d)))
            break;
        v[i] = isnull ? -1 : (int32_t)d;
    }
    if (i != n || e) {
        fx_errbuf_set(eb, "profile: %s.%s is missing, not %u long, or has a bad value at %u", name,
                      col, n, i);
        fx_free(v);
        return FX_EINVAL;
    }
    *out = v;
    return FX_OK;
}

static int strings(const cJSON *arr, struct fx_pfile_tables *t, struct fx_errbuf *eb)
{
    t->nstrings = (uint32_t)cJSON_GetArraySize(arr);
    t->strings = fx_calloc(t->nstrings ? t->nstrings : 1, sizeof *t->strings);
    if (!t->strings) {
        fx_errbuf_set(eb, "out of memory reading the string array");
        return FX_ENOMEM;
    }
    uint32_t i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++)
        t->strings[i] = cJSON_IsString(e) ? e->valuestring : "(not a string)";
    return FX_OK;
}

/* v66 stores a parent as prefixOffset (0 = root, k = the row k before); older files as prefix
 * (null = root). Either way a parent must come first, which rules out cycles. */
static int prefixes(const cJSON *st, struct fx_pfile_tables *t, struct fx_errbuf *eb)
{
    bool offsets = item(st, "prefixOffset") != NULL;
    int rc = column(st, "stackTable", offsets ? "prefixOffset" : "prefix", t->nstacks,
                    t->nstacks + 1, !offsets, &t->stack_prefix, eb);
    for (uint32_t i = 0; rc == FX_OK && i < t->nstacks; i++) {
        int32_t v = t->stack_prefix[i];
        if (offsets ? v > (int32_t)i : v >= (int32_t)i) {
            fx_errbuf_set(eb, "profile: stack %u's parent does not come before it", i);
            rc = FX_EINVAL;
        }
        t->stack_prefix[i] = !offsets ? v : v == 0 ? -1 : (int32_t)i - v;
    }
    return rc;
}

static const cJSON *pick(const cJSON *root, const cJSON *thread, const char *key)
{
    const cJSON *own = item(thread, key);
    return own ? own : item(item(root, "shared"), key);
}

static int build(const cJSON *const src[4], struct fx_pfile_tables *t, struct fx_errbuf *eb)
{
    const cJSON *st = src[0], *fr = src[1], *fn = src[2];
    int rc = strings(src[3], t, eb);
    if (rc == FX_OK)
        rc = table_length(fn, "funcTable", &t->nfuncs, eb);
    if (rc == FX_OK)
        rc = column(fn, "funcTable", "name", t->nfuncs, t->nstrings, false, &t->func_name, eb);
    if (rc == FX_OK)
        rc = table_length(fr, "frameTable", &t->nframes, eb);
    if (rc == FX_OK)
        rc = column(fr, "frameTable", "func", t->nframes, t->nfuncs, false, &t->frame_func, eb);
    if (rc == FX_OK)
        rc = table_length(st, "stackTable", &t->nstacks, eb);
    if (rc == FX_OK)
        rc = column(st, "stackTable", "frame", t->nstacks, t->nframes, false, &t->stack_frame, eb);
    return rc == FX_OK ? prefixes(st, t, eb) : rc;
}

int fx_pfile_tables(const struct cJSON *root, const struct cJSON *thread, struct fx_pfile_tables *t,
                    struct fx_errbuf *eb)
{
    const cJSON *src[4] = {pick(root, thread, "stackTable"), pick(root, thread, "frameTable"),
                           pick(root, thread, "funcTable"), pick(root, thread, "stringArray")};
    if (!memcmp(src, t->src, sizeof src) && t->strings)
        return FX_OK; /* v60+: every thread shares one set */
    fx_pfile_tables_destroy(t);
    if (!src[0] || !src[1] || !src[2] || !cJSON_IsArray(src[3])) {
        fx_errbuf_set(
                eb,
                "profile: no stackTable, frameTable, funcTable and stringArray (older than processed version 56?)");
        return FX_EINVAL;
    }
    int rc = build(src, t, eb);
    if (rc != FX_OK)
        fx_pfile_tables_destroy(t);
    else
        memcpy(t->src, src, sizeof src);
    return rc;
}

void fx_pfile_tables_destroy(struct fx_pfile_tables *t)
{
    fx_free(t->stack_frame);
    fx_free(t->stack_prefix);
    fx_free(t->frame_func);
    fx_free(t->func_name);
    fx_free(t->strings);
    memset(t, 0, sizeof *t);
}

/* ---- samples ---- */

static int numbers(const cJSON *arr, uint32_t n, double **out)
{
    if (!cJSON_IsArray(arr))
        return FX_OK; /* absent or null: the caller's default */
    double *v = fx_calloc(n ? n : 1, sizeof *v);
    if (!v)
        return FX_ENOMEM;
    uint32_t i = 0;
    for (const cJSON *e = arr->child; e && i < n; e = e->next, i++)
        v[i] = cJSON_IsNumber(e) ? e->valuedouble : 0;
    *out = v;
    return FX_OK;
}

int fx_pfile_samples(const struct cJSON *thread, uint32_t nstacks, struct fx_pfile_samples *s,
                     struct fx_errbuf *eb)
{
    memset(s, 0, sizeof *s);
    const cJSON *samples = item(thread, "samples");
    int rc = table_length(samples, "samples", &s->n, eb);
    if (rc == FX_OK)
        rc = column(samples, "samples", "stack", s->n, nstacks, true, &s->stack, eb);
    if (rc == FX_OK && (numbers(item(samples, "weight"), s->n, &s->weight) != FX_OK ||
                        numbers(item(samples, "threadCPUDelta"), s->n, &s->cpu) != FX_OK)) {
        fx_errbuf_set(eb, "out of memory reading samples");
        rc = FX_ENOMEM;
    }
    if (rc != FX_OK)
        fx_pfile_samples_destroy(s);
    return rc;
}

void fx_pfile_samples_destroy(struct fx_pfile_samples *s)
{
    fx_free(s->stack);
    fx_free(s->weight);
    fx_free(s->cpu);
    memset(s, 0, sizeof *s);
}
