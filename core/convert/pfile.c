/* SPDX-License-Identifier: Apache-2.0 */
/* Reads a processed Firefox Profiler file (.json or .json.gz, v56 and later) into flat index
 * columns. Every index is range-checked when loaded and every stack's parent comes before it,
 * so the walks in summary.c can neither read out of bounds nor loop.
 * Tests: it.fxprof_summary, it.fxprof_convert. */
#include "fx_pfile.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "fx_alloc.h"

#define FILE_MAX ((size_t)4 << 30) /* decompressed; cJSON needs several times this in memory */

#define SNIFF 64 /* enough to see a file type's signature and a JSON object's first brace */

struct signature {
    const char *magic;
    size_t len;
    const char *what;
};

/* Files people mistake for a profile, named so that the error says what the file is. */
static const struct signature signatures[] = {
        {"\x89PNG\r\n\x1a\n", 8, "a PNG image"},
        {"\xff\xd8\xff", 3, "a JPEG image"},
        {"GIF8", 4, "a GIF image"},
        {"%PDF", 4, "a PDF document"},
        {"PK\x03\x04", 4, "a zip archive (a .jar?)"},
        {"\x7f"
         "ELF",
         4, "an executable (ELF)"},
        {"BZh", 3, "a bzip2 file"},
        {"\xfd"
         "7zXZ",
         5, "an xz file"},
        {"\x28\xb5\x2f\xfd", 4, "a zstd file"},
        {"\xca\xfe\xba\xbe", 4, "a Java class file"},
        {"JAVA PROFILE", 12, "an HPROF heap dump"},
        {"\xd4\xc3\xb2\xa1", 4, "a pcap capture"},
};

/* The first bytes must open a JSON object, after white space and a UTF-8 byte order mark;
 * anything else is refused before the rest of the file is read. */
static int sniff_json(const char *path, const unsigned char *b, size_t n, bool gz,
                      struct fx_errbuf *eb)
{
    size_t i = n >= 3 && !memcmp(b, "\xef\xbb\xbf", 3) ? 3 : 0;
    while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r'))
        i++;
    if (i < n && b[i] == '{')
        return FX_OK;
    const char *in = gz ? " (inside its gzip)" : "";
    if (n == 0)
        fx_errbuf_set(eb, "%s is empty%s, not a profile", path, in);
    else if (i == n && n < SNIFF)
        fx_errbuf_set(eb, "%s holds only white space%s, not a profile", path, in);
    else if (i < n && b[i] == '[')
        fx_errbuf_set(
                eb,
                "%s is a JSON array%s, not a processed profile (a JSON object with meta and threads)",
                path, in);
    else
        fx_errbuf_set(
                eb,
                "%s is not a profile: it starts with byte 0x%02x%s where a profile (JSON, or gzip-compressed JSON) starts with '{'",
                path, i < n ? b[i] : 0, in);
    return FX_EINVAL;
}

static int sniff(const char *path, const unsigned char *b, size_t n, struct fx_errbuf *eb)
{
    for (size_t k = 0; k < sizeof signatures / sizeof *signatures; k++)
        if (n >= signatures[k].len && !memcmp(b, signatures[k].magic, signatures[k].len)) {
            fx_errbuf_set(eb, "%s is %s, not a profile", path, signatures[k].what);
            return FX_EINVAL;
        }
    return n >= 2 && b[0] == 0x1f && b[1] == 0x8b ? FX_OK : sniff_json(path, b, n, false, eb);
}

/* Opens path and refuses at once what cannot be a profile. The returned gzFile reads plain
 * files unchanged. */
static int open_profile(const char *path, gzFile *out, struct fx_errbuf *eb)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fx_errbuf_set(eb, "cannot open %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return FX_EIO;
    }
    unsigned char head[SNIFF];
    ssize_t n = S_ISDIR(st.st_mode) ? -1 : pread(fd, head, sizeof head, 0);
    int rc = FX_OK;
    if (S_ISDIR(st.st_mode)) {
        fx_errbuf_set(eb, "%s is a directory, not a profile", path);
        rc = FX_EINVAL;
    } else if (n < 0) {
        fx_errbuf_set(eb, "cannot read %s: %s%s", path, strerror(errno),
                      errno == ESPIPE ? " (save the profile to a file first)" : "");
        rc = FX_EIO;
    } else {
        rc = sniff(path, head, (size_t)n, eb);
    }
    gzFile gz = rc == FX_OK ? gzdopen(fd, "rb") : NULL;
    if (rc == FX_OK && !gz) {
        fx_errbuf_set(eb, "cannot open %s: out of memory", path);
        rc = FX_ENOMEM;
    }
    if (rc != FX_OK) {
        close(fd);
        return rc;
    }
    /* Compressed: the same check on the first decompressed bytes. */
    int k = gzread(gz, head, sizeof head), zerr = Z_OK;
    if (k < (int)sizeof head)
        gzerror(gz, &zerr);
    if (zerr == Z_BUF_ERROR) {
        fx_errbuf_set(eb, "cannot read %s: the gzip stream is truncated (the file was cut short)",
                      path);
        rc = FX_EIO;
    } else if (k >= 0 && gzdirect(gz) == 0) {
        rc = sniff_json(path, head, (size_t)k, true, eb);
    }
    if (rc == FX_OK && (k < 0 || gzrewind(gz) != 0)) {
        fx_errbuf_set(eb, "cannot read %s: %s", path, gzerror(gz, &zerr));
        rc = FX_EIO;
    }
    if (rc != FX_OK) {
        gzclose(gz);
        return rc;
    }
    *out = gz;
    return FX_OK;
}

static int read_all(const char *path, char **out, size_t *len, struct fx_errbuf *eb)
{
    gzFile gz;
    int rc = open_profile(path, &gz, eb);
    if (rc != FX_OK)
        return rc;
    size_t cap = 1 << 20, n = 0;
    char *buf = fx_malloc(cap);
    rc = buf ? FX_OK : FX_ENOMEM;
    while (rc == FX_OK) {
        if (cap - n < 65536) {
            char *nb = cap < FILE_MAX ? fx_reallocarray(buf, cap, 2) : NULL;
            rc = nb ? FX_OK : FX_ENOMEM;
            buf = nb ? nb : buf;
            cap *= nb ? 2 : 1;
            continue;
        }
        int r = gzread(gz, buf + n, 65536);
        int zerr = Z_OK;
        if (r <= 0)
            gzerror(gz, &zerr);
        /* gzread returns what it has when the input ends mid-stream, then flags Z_BUF_ERROR. */
        if (r < 0 || zerr == Z_BUF_ERROR) {
            fx_errbuf_set(eb, "cannot read %s: %s", path,
                          zerr == Z_BUF_ERROR
                                  ? "the gzip stream is truncated (the file was cut short)"
                                  : gzerror(gz, &zerr));
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

/* A column of whole numbers that may be absent or hold nulls (given `none` then); anything
 * else is left as `none` too: these columns only decorate the output. */
static int optional(const cJSON *table, const char *col, uint32_t n, int32_t none, int32_t **out,
                    struct fx_errbuf *eb)
{
    int32_t *v = fx_calloc(n ? n : 1, sizeof *v);
    if (!v) {
        fx_errbuf_set(eb, "out of memory reading %s", col);
        return FX_ENOMEM;
    }
    const cJSON *arr = item(table, col), *e = cJSON_IsArray(arr) ? arr->child : NULL;
    for (uint32_t i = 0; i < n; i++, e = e ? e->next : NULL)
        v[i] = cJSON_IsNumber(e) && e->valuedouble >= 0 && e->valuedouble <= INT32_MAX
                       ? (int32_t)e->valuedouble
                       : none;
    *out = v;
    return FX_OK;
}

/* A function's file: funcTable.source -> sources.filename (v58+), else funcTable.fileName. */
static int func_files(const cJSON *sources, const cJSON *fn, struct fx_pfile_tables *t,
                      struct fx_errbuf *eb)
{
    bool v58 = item(fn, "source") != NULL;
    int32_t *names = NULL;
    uint32_t nsources = 0;
    int rc = optional(fn, v58 ? "source" : "fileName", t->nfuncs, -1, &t->func_file, eb);
    for (uint32_t f = 0; rc == FX_OK && !v58 && f < t->nfuncs; f++)
        if (t->func_file[f] >= (int32_t)t->nstrings)
            t->func_file[f] = -1;
    if (rc != FX_OK || !v58)
        return rc;
    const cJSON *len = item(sources, "length");
    nsources = cJSON_IsNumber(len) && len->valuedouble > 0 && len->valuedouble < INT32_MAX
                       ? (uint32_t)len->valuedouble
                       : 0;
    rc = optional(sources, "filename", nsources, -1, &names, eb);
    for (uint32_t f = 0; rc == FX_OK && f < t->nfuncs; f++) {
        int32_t s = t->func_file[f];
        t->func_file[f] =
                s >= 0 && (uint32_t)s < nsources && names[s] < (int32_t)t->nstrings ? names[s] : -1;
    }
    fx_free(names);
    return rc;
}

static const cJSON *pick(const cJSON *root, const cJSON *thread, const char *key)
{
    const cJSON *own = item(thread, key);
    return own ? own : item(item(root, "shared"), key);
}

static int build(const cJSON *const src[5], struct fx_pfile_tables *t, struct fx_errbuf *eb)
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
        rc = optional(fr, "line", t->nframes, 0, &t->frame_line, eb);
    if (rc == FX_OK)
        rc = optional(fr, "category", t->nframes, -1, &t->frame_category, eb);
    if (rc == FX_OK)
        rc = optional(fr, "subcategory", t->nframes, -1, &t->frame_subcategory, eb);
    if (rc == FX_OK)
        rc = optional(fn, "lineNumber", t->nfuncs, 0, &t->func_line, eb);
    if (rc == FX_OK)
        rc = func_files(src[4], fn, t, eb);
    if (rc == FX_OK)
        rc = table_length(st, "stackTable", &t->nstacks, eb);
    if (rc == FX_OK)
        rc = column(st, "stackTable", "frame", t->nstacks, t->nframes, false, &t->stack_frame, eb);
    return rc == FX_OK ? prefixes(st, t, eb) : rc;
}

int fx_pfile_tables(const struct cJSON *root, const struct cJSON *thread, struct fx_pfile_tables *t,
                    struct fx_errbuf *eb)
{
    const cJSON *src[5] = {pick(root, thread, "stackTable"), pick(root, thread, "frameTable"),
                           pick(root, thread, "funcTable"), pick(root, thread, "stringArray"),
                           pick(root, thread, "sources")};
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
    fx_free(t->frame_line);
    fx_free(t->frame_category);
    fx_free(t->frame_subcategory);
    fx_free(t->func_line);
    fx_free(t->func_file);
    fx_free(t->strings);
    memset(t, 0, sizeof *t);
}

bool fx_pfile_is_idle(const struct fx_pfile_tables *t, int32_t st)
{
    return st >= 0 && (uint32_t)st < t->nstacks && t->stack_prefix[st] < 0 &&
           !strcmp(t->strings[t->func_name[t->frame_func[t->stack_frame[st]]]], "[idle]");
}

/* meta.extra's "Sampling" group has "engine": "cpu: perf_events ...", "wall: sampler thread...". */
const char *fx_pfile_mode(const struct cJSON *root)
{
    static const char *const modes[] = {"itimer", "wall", "cpu"};
    const cJSON *group, *e;
    cJSON_ArrayForEach(group, item(item(root, "meta"), "extra"))
    {
        cJSON_ArrayForEach(e, item(group, "entries"))
        {
            const cJSON *label = item(e, "label"), *value = item(e, "value");
            if (!cJSON_IsString(label) || strcmp(label->valuestring, "engine") ||
                !cJSON_IsString(value))
                continue;
            for (size_t i = 0; i < sizeof modes / sizeof *modes; i++)
                if (!strncmp(value->valuestring, modes[i], strlen(modes[i])) &&
                    value->valuestring[strlen(modes[i])] == ':')
                    return modes[i];
        }
    }
    return "cpu";
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

/* times: the "time" column, or the running sum of "timeDeltas"; NULL when neither is there. */
static int times(const cJSON *table, uint32_t n, double **out)
{
    const cJSON *d = item(table, "timeDeltas");
    int rc = numbers(cJSON_IsArray(d) ? d : item(table, "time"), n, out);
    if (rc == FX_OK && *out && cJSON_IsArray(d))
        for (uint32_t i = 1; i < n; i++)
            (*out)[i] += (*out)[i - 1];
    return rc;
}

static int rows(const cJSON *table, const char *name, uint32_t nstacks, struct fx_pfile_samples *s,
                struct fx_errbuf *eb)
{
    memset(s, 0, sizeof *s);
    int rc = table_length(table, name, &s->n, eb);
    if (rc == FX_OK)
        rc = column(table, name, "stack", s->n, nstacks, true, &s->stack, eb);
    if (rc == FX_OK && (numbers(item(table, "weight"), s->n, &s->weight) != FX_OK ||
                        numbers(item(table, "threadCPUDelta"), s->n, &s->cpu) != FX_OK ||
                        times(table, s->n, &s->time) != FX_OK ||
                        numbers(item(table, "memoryAddress"), s->n, &s->address) != FX_OK)) {
        fx_errbuf_set(eb, "out of memory reading %s", name);
        rc = FX_ENOMEM;
    }
    const cJSON *wt = item(table, "weightType");
    s->bytes = cJSON_IsString(wt) && !strcmp(wt->valuestring, "bytes");
    s->tracing_ms = cJSON_IsString(wt) && !strcmp(wt->valuestring, "tracing-ms");
    if (rc != FX_OK)
        fx_pfile_samples_destroy(s);
    return rc;
}

int fx_pfile_samples(const struct cJSON *thread, uint32_t nstacks, struct fx_pfile_samples *s,
                     struct fx_errbuf *eb)
{
    return rows(item(thread, "samples"), "samples", nstacks, s, eb);
}

int fx_pfile_alloc_rows(const struct cJSON *thread, uint32_t nstacks, struct fx_pfile_samples *s,
                        struct fx_errbuf *eb)
{
    const cJSON *na = item(thread, "nativeAllocations");
    if (!na) {
        memset(s, 0, sizeof *s);
        return FX_OK;
    }
    return rows(na, "nativeAllocations", nstacks, s, eb);
}

/* meta.extra's group `group`, entry `label`: its string value, NULL when absent or a number. */
const char *fx_pfile_extra(const struct cJSON *root, const char *group, const char *label)
{
    const cJSON *g, *e;
    cJSON_ArrayForEach(g, item(item(root, "meta"), "extra"))
    {
        const cJSON *gl = item(g, "label");
        if (!cJSON_IsString(gl) || strcmp(gl->valuestring, group))
            continue;
        cJSON_ArrayForEach(e, item(g, "entries"))
        {
            const cJSON *el = item(e, "label"), *v = item(e, "value");
            if (cJSON_IsString(el) && !strcmp(el->valuestring, label) && cJSON_IsString(v))
                return v->valuestring;
        }
    }
    return NULL;
}

void fx_pfile_samples_destroy(struct fx_pfile_samples *s)
{
    fx_free(s->stack);
    fx_free(s->weight);
    fx_free(s->cpu);
    fx_free(s->time);
    fx_free(s->address);
    memset(s, 0, sizeof *s);
}
