/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof sources: embeds the text of the Java files a profile's frames name into
 * shared.sources.content (processed format v64+), which the Firefox Profiler's source view
 * prefers to any fetch (its selectors/code.tsx), so the view works offline and when shared.
 * Files go in hottest first (samples whose stack holds a frame of the file) until the bounds;
 * every file that is not embedded is counted and named in meta.extra "Sources". */
#include "sources.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cli_args.h"
#include "fx_alloc.h"

#define MAX_FROM    32
#define NAMES_SHOWN 20 /* per outcome in Profile Info; the rest as "and N more" */

/* What became of one file, in the order Profile Info lists them. */
enum outcome {
    O_EMBEDDED,
    O_NOT_FOUND,
    O_TOO_LARGE, /* over --max-file */
    O_NOT_UTF8,  /* the profiler decodes JSON as strict UTF-8; a NUL byte counts here too */
    O_OVER_TOTAL,
    O_UNREADABLE,
    O_COUNT
};

static const char *const outcome_label[O_COUNT] = {
        "embedded",  "not found", "too large", "not UTF-8", "left out (over the total bound)",
        "unreadable"};

struct file {
    int32_t row; /* sources row */
    const char *name;
    double samples;
    enum outcome outcome;
    enum fx_src_kind kind;
};

struct embed {
    cJSON *root, *sources, *content;
    struct file *files; /* the rows frames name, hottest first */
    size_t nfiles;
    size_t count[O_COUNT], by_kind[FX_SRC_KINDS];
    uint64_t bytes;
};

/* Strict UTF-8 (no overlong forms, surrogates or code points past U+10FFFF) without NUL, as
 * the profiler's TextDecoder in fatal mode and a C string both need. */
static bool utf8_text(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t k = c < 0x80             ? 0
                   : (c & 0xe0) == 0xc0 ? 1
                   : (c & 0xf0) == 0xe0 ? 2
                   : (c & 0xf8) == 0xf0 ? 3
                                        : 9;
        if (c == 0 || k == 9 || i + k >= n + (k == 0))
            return false;
        uint32_t cp = k == 0 ? c : c & (0x3f >> k);
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xc0) != 0x80)
                return false;
            cp = cp << 6 | (s[i + j] & 0x3f);
        }
        static const uint32_t min[] = {0, 0x80, 0x800, 0x10000};
        if (cp < min[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += k + 1;
    }
    return true;
}

/* ---- which files, how hot ---- */

static cJSON *get(const cJSON *o, const char *key)
{
    return o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

/* funcTable.source as rows (-1: none or out of range). */
static int32_t *func_sources(const cJSON *shared, uint32_t nfuncs, uint32_t nsources)
{
    int32_t *v = fx_malloc((nfuncs ? nfuncs : 1) * sizeof *v);
    const cJSON *e = get(get(shared, "funcTable"), "source");
    e = cJSON_IsArray(e) ? e->child : NULL;
    for (uint32_t i = 0; v && i < nfuncs; i++, e = e ? e->next : NULL)
        v[i] = cJSON_IsNumber(e) && e->valuedouble >= 0 && e->valuedouble < nsources
                       ? (int32_t)e->valuedouble
                       : -1;
    return v;
}

/* Adds each sample's weight once to every file its stack holds a frame of. */
static void add_thread(const struct fx_pfile_tables *t, const struct fx_pfile_samples *s,
                       const int32_t *fsrc, double *heat, uint32_t *stamp, uint32_t *tick)
{
    for (uint32_t i = 0; i < s->n; i++) {
        double w = s->bytes || !s->weight ? 1 : s->weight[i];
        ++*tick;
        for (int32_t st = s->stack[i]; st >= 0; st = t->stack_prefix[st]) {
            int32_t src = fsrc[t->frame_func[t->stack_frame[st]]];
            if (src >= 0 && stamp[src] != *tick) {
                stamp[src] = *tick;
                heat[src] += w;
            }
        }
    }
}

static int heat_of(struct embed *e, uint32_t nsources, double *heat, bool *named,
                   struct fx_errbuf *eb)
{
    struct fx_pfile_tables t = {0};
    const cJSON *threads = get(e->root, "threads"), *th;
    int rc = fx_pfile_tables(e->root, threads->child, &t, eb);
    int32_t *fsrc = rc == FX_OK ? func_sources(get(e->root, "shared"), t.nfuncs, nsources) : NULL;
    uint32_t *stamp = fx_calloc(nsources ? nsources : 1, sizeof *stamp), tick = 0;
    if (rc == FX_OK && (!fsrc || !stamp)) {
        fx_errbuf_set(eb, "out of memory");
        rc = FX_ENOMEM;
    }
    for (uint32_t f = 0; rc == FX_OK && f < t.nframes; f++)
        if (fsrc[t.frame_func[f]] >= 0)
            named[fsrc[t.frame_func[f]]] = true;
    cJSON_ArrayForEach(th, threads)
    {
        struct fx_pfile_samples s;
        if (rc == FX_OK)
            rc = fx_pfile_samples(th, t.nstacks, &s, eb);
        if (rc != FX_OK)
            break;
        add_thread(&t, &s, fsrc, heat, stamp, &tick);
        fx_pfile_samples_destroy(&s);
    }
    fx_free(stamp);
    fx_free(fsrc);
    fx_pfile_tables_destroy(&t);
    return rc;
}

static int hotter(const void *a, const void *b)
{
    const struct file *x = a, *y = b;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The sources table and its content column (added as nulls when a v64+ file lacks it). */
static int sources_table(struct embed *e, uint32_t *n, struct fx_errbuf *eb)
{
    const cJSON *v = get(get(e->root, "meta"), "preprocessedProfileVersion");
    e->sources = get(get(e->root, "shared"), "sources");
    const cJSON *len = get(e->sources, "length");
    if (!cJSON_IsNumber(v) || v->valuedouble < 64) {
        fx_errbuf_set(
                eb,
                "the profile's processed version is below 64: the Firefox Profiler drops inline sources from such files (record it again)");
        return FX_EINVAL;
    }
    if (!cJSON_IsNumber(len) || len->valuedouble < 0 || len->valuedouble > INT32_MAX ||
        !cJSON_IsArray(get(e->sources, "filename"))) {
        fx_errbuf_set(eb, "the profile has no shared.sources table");
        return FX_EINVAL;
    }
    *n = (uint32_t)len->valuedouble;
    e->content = get(e->sources, "content");
    if (!cJSON_IsArray(e->content) || cJSON_GetArraySize(e->content) != (int)*n) {
        cJSON *c = cJSON_CreateArray();
        for (uint32_t i = 0; c && i < *n; i++)
            cJSON_AddItemToArray(c, cJSON_CreateNull());
        if (!c || cJSON_GetArraySize(c) != (int)*n ||
            !(e->content = cJSON_AddItemToObject(e->sources, "content", c) ? c : NULL)) {
            cJSON_Delete(c);
            fx_errbuf_set(eb, "out of memory");
            return FX_ENOMEM;
        }
    }
    return FX_OK;
}

/* The rows frames name, hottest first. */
static int pick_files(struct embed *e, struct fx_errbuf *eb)
{
    uint32_t n;
    int rc = sources_table(e, &n, eb);
    if (rc != FX_OK)
        return rc;
    double *heat = fx_calloc(n ? n : 1, sizeof *heat);
    bool *named = fx_calloc(n ? n : 1, sizeof *named);
    e->files = fx_calloc(n ? n : 1, sizeof *e->files);
    rc = heat && named && e->files ? heat_of(e, n, heat, named, eb) : FX_ENOMEM;
    /* The string array as an array: cJSON's are lists, indexed in linear time. */
    const cJSON *sa = get(get(e->root, "shared"), "stringArray"), *it;
    int nstr = cJSON_GetArraySize(sa), k = 0;
    const cJSON **strings = fx_calloc(nstr > 0 ? (size_t)nstr : 1, sizeof *strings);
    rc = rc == FX_OK && !strings ? FX_ENOMEM : rc;
    for (it = strings && sa ? sa->child : NULL; it && k < nstr; it = it->next)
        strings[k++] = it;
    const cJSON *fn = get(e->sources, "filename")->child;
    for (uint32_t i = 0; rc == FX_OK && i < n; i++, fn = fn ? fn->next : NULL) {
        const cJSON *s = cJSON_IsNumber(fn) && fn->valueint >= 0 && fn->valueint < nstr
                                 ? strings[fn->valueint]
                                 : NULL;
        if (named[i] && cJSON_IsString(s))
            e->files[e->nfiles++] =
                    (struct file){.row = (int32_t)i, .name = s->valuestring, .samples = heat[i]};
    }
    if (rc == FX_ENOMEM)
        fx_errbuf_set(eb, "out of memory");
    qsort(e->files, e->nfiles, sizeof *e->files, hotter);
    fx_free(strings);
    fx_free(heat);
    fx_free(named);
    return rc;
}

/* ---- embedding ---- */

static enum outcome embed_one(struct embed *e, struct fx_src_finder *f, struct file *file,
                              const struct fx_src_opts *o)
{
    char *text = NULL;
    size_t len = 0;
    enum fx_src_found r = fx_src_find(f, file->name, o->max_file, &text, &len, &file->kind);
    enum outcome out = r == FX_SRC_MISSING                            ? O_NOT_FOUND
                       : r == FX_SRC_TOO_LARGE                        ? O_TOO_LARGE
                       : r == FX_SRC_UNREADABLE                       ? O_UNREADABLE
                       : !utf8_text((const unsigned char *)text, len) ? O_NOT_UTF8
                       : e->bytes + len > o->max_total                ? O_OVER_TOTAL
                                                                      : O_EMBEDDED;
    cJSON *s = out == O_EMBEDDED ? cJSON_CreateString(text) : NULL;
    if (out == O_EMBEDDED && (!s || !cJSON_ReplaceItemInArray(e->content, file->row, s))) {
        cJSON_Delete(s);
        out = O_UNREADABLE;
    }
    if (out == O_EMBEDDED) {
        e->bytes += len;
        e->by_kind[file->kind]++;
    }
    fx_free(text);
    return out;
}

/* ---- meta.extra "Sources" ---- */

static void entry(cJSON *entries, const char *label, const char *format, cJSON *value)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "label", label);
    cJSON_AddStringToObject(o, "format", format);
    cJSON_AddItemToObject(o, "value", value);
    cJSON_AddItemToArray(entries, o);
}

/* "a, b, c and N more" of names[0..n). */
static void names_entry(cJSON *entries, const char *label, const char *const *names, size_t n)
{
    size_t cap = 64, len = 0;
    for (size_t i = 0; i < n && i < NAMES_SHOWN; i++)
        cap += strlen(names[i]) + 2;
    char *buf = fx_malloc(cap);
    if (!buf)
        return;
    buf[0] = '\0';
    for (size_t i = 0; i < n && i < NAMES_SHOWN; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", names[i]);
    if (n > NAMES_SHOWN)
        snprintf(buf + len, cap - len, " and %zu more", n - NAMES_SHOWN);
    entry(entries, label, "string", cJSON_CreateString(buf));
    fx_free(buf);
}

static void outcome_entries(cJSON *entries, const struct embed *e)
{
    const char **names = fx_calloc(e->nfiles ? e->nfiles : 1, sizeof *names);
    for (int k = O_NOT_FOUND; names && k < O_COUNT; k++) {
        if (!e->count[k])
            continue;
        size_t n = 0;
        for (size_t i = 0; i < e->nfiles; i++)
            if (e->files[i].outcome == (enum outcome)k)
                names[n++] = e->files[i].name;
        entry(entries, outcome_label[k], "integer", cJSON_CreateNumber((double)n));
        char label[64];
        snprintf(label, sizeof label, "%s: files", outcome_label[k]);
        names_entry(entries, label, names, n);
    }
    fx_free(names);
}

static void set_extra(struct embed *e, const struct fx_src_finder *f, const struct fx_src_opts *o)
{
    cJSON *meta = get(e->root, "meta"), *extra = get(meta, "extra"), *g;
    if (!cJSON_IsArray(extra))
        extra = cJSON_AddArrayToObject(meta, "extra");
    int i = 0;
    cJSON_ArrayForEach(g, extra)
    {
        const cJSON *l = get(g, "label");
        if (cJSON_IsString(l) && !strcmp(l->valuestring, "Sources")) {
            cJSON_DeleteItemFromArray(extra, i); /* a second run replaces the first's figures */
            break;
        }
        i++;
    }
    g = cJSON_CreateObject();
    cJSON_AddStringToObject(g, "label", "Sources");
    cJSON *entries = cJSON_AddArrayToObject(g, "entries");
    char buf[160];
    snprintf(buf, sizeof buf,
             "%zu of %zu files, %llu bytes (folders %zu, jars %zu, JDK src.zip %zu)",
             e->count[O_EMBEDDED], e->nfiles, (unsigned long long)e->bytes,
             e->by_kind[FX_SRC_FOLDER], e->by_kind[FX_SRC_JAR], e->by_kind[FX_SRC_JDK]);
    entry(entries, "embedded", "string", cJSON_CreateString(buf));
    snprintf(buf, sizeof buf, "%llu bytes a file, %llu bytes in all, hottest files first",
             (unsigned long long)o->max_file, (unsigned long long)o->max_total);
    entry(entries, "bound", "string", cJSON_CreateString(buf));
    outcome_entries(entries, e);
    if (f->jdk_missing) {
        snprintf(buf, sizeof buf, "missing: %.140s", f->jdk_missing);
        entry(entries, "JDK src.zip", "string", cJSON_CreateString(buf));
    }
    if (f->njars_without)
        names_entry(entries, "jars without a -sources.jar", (const char *const *)f->jars_without,
                    f->njars_without);
    cJSON_AddItemToArray(extra, g);
}

/* ---- output ---- */

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && !strcmp(s + n - t, tail);
}

/* The JSON through a temporary beside out, renamed at the end: out never holds half a file. */
static int write_out(const cJSON *root, const char *out, struct fx_errbuf *eb)
{
    char *text = cJSON_PrintUnformatted(root);
    char tmp[4096];
    if (!text) {
        fx_errbuf_set(eb, "out of memory writing %s", out);
        return FX_ENOMEM;
    }
    int fd = snprintf(tmp, sizeof tmp, "%s.XXXXXX", out) < (int)sizeof tmp ? mkstemp(tmp) : -1;
    struct stat st; /* replacing a file keeps its mode (mkstemp's is 0600) */
    if (fd >= 0 && stat(out, &st) == 0)
        fchmod(fd, st.st_mode & 07777);
    gzFile gz = fd >= 0 ? gzdopen(fd, ends_with(out, ".json") ? "wbT" : "wb6") : NULL;
    size_t len = strlen(text), off = 0;
    int err = gz ? 0 : errno ? errno : ENOMEM;
    while (gz && off < len) {
        int w = gzwrite(gz, text + off, len - off > (1u << 30) ? 1u << 30 : (unsigned)(len - off));
        if (w <= 0) {
            err = EIO;
            break;
        }
        off += (size_t)w;
    }
    if (gz && gzclose(gz) != Z_OK && !err)
        err = EIO;
    else if (!gz && fd >= 0)
        close(fd);
    fx_free(text);
    if (!err && rename(tmp, out) != 0)
        err = errno;
    if (err) {
        if (fd >= 0)
            unlink(tmp);
        fx_errbuf_set(eb, "cannot write %s: %s", out, strerror(err));
        return FX_EIO;
    }
    return FX_OK;
}

static void summary_line(const struct embed *e)
{
    fprintf(stderr, "fxprof: sources: embedded %zu of %zu files (%llu bytes)", e->count[O_EMBEDDED],
            e->nfiles, (unsigned long long)e->bytes);
    for (int k = O_NOT_FOUND; k < O_COUNT; k++)
        if (e->count[k])
            fprintf(stderr, "; %s %zu", outcome_label[k], e->count[k]);
    fprintf(stderr, "\n");
    for (size_t i = 0, shown = 0; i < e->nfiles && shown < 5; i++)
        if (e->files[i].outcome == O_NOT_FOUND && ++shown)
            fprintf(stderr, "fxprof: sources: not found: %s\n", e->files[i].name);
    if (e->count[O_NOT_FOUND] > 5)
        fprintf(stderr, "fxprof: sources: %zu more not found, named in Profile Info (Sources)\n",
                e->count[O_NOT_FOUND] - 5);
}

static int embed_all(struct embed *e, const struct fx_src_opts *o, struct fx_errbuf *eb)
{
    struct fx_src_finder f;
    int rc = pick_files(e, eb);
    if (rc == FX_OK)
        rc = fx_src_finder_init(&f, o->from, o->nfrom, e->root, eb);
    if (rc != FX_OK)
        return rc;
    for (size_t i = 0; i < e->nfiles; i++) {
        e->files[i].outcome = embed_one(e, &f, &e->files[i], o);
        e->count[e->files[i].outcome]++;
    }
    set_extra(e, &f, o);
    fx_src_finder_destroy(&f);
    return FX_OK;
}

int fx_sources_embed(const char *in, const char *out, const struct fx_src_opts *o)
{
    struct fx_errbuf eb = {{0}};
    struct embed e = {0};
    int rc = fx_pfile_load(in, &e.root, &eb);
    if (rc == FX_OK)
        rc = embed_all(&e, o, &eb);
    if (rc == FX_OK)
        rc = write_out(e.root, out, &eb);
    if (rc == FX_OK && !o->quiet)
        summary_line(&e);
    fx_free(e.files);
    cJSON_Delete(e.root);
    return rc == FX_OK ? FX_CLI_OK : fx_cli_fail("sources: %s", eb.msg);
}

/* ---- fxprof open --sources ---- */

int fx_sources_temp(const char *in, const char *const *from, size_t nfrom, char *out, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/fxprof-sources-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return fx_cli_fail("open: cannot create a folder under %s: %s", tmp && *tmp ? tmp : "/tmp",
                           strerror(errno));
    struct fx_src_opts o = {.from = from,
                            .nfrom = nfrom,
                            .max_file = FX_SRC_MAX_FILE,
                            .max_total = FX_SRC_MAX_TOTAL};
    snprintf(out, cap, "%s/profile.json.gz", dir);
    int rc = fx_sources_embed(in, out, &o);
    if (rc != FX_CLI_OK)
        rmdir(dir);
    return rc;
}

void fx_sources_temp_remove(const char *path)
{
    unlink(path);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = '\0';
        rmdir(dir);
    }
}

/* ---- the command ---- */

static int usage(void)
{
    printf("usage: fxprof sources PROFILE [--from PATH]... [-o OUT] [--max-file BYTES]\n"
           "                      [--max-total BYTES]\n"
           "Embeds the text of the Java files the profile's frames name, so the Firefox\n"
           "Profiler's source view shows them with per-line samples, offline too. Looks in each\n"
           "--from PATH (a source folder, a jar or zip), then beside the profiled JVM's class\n"
           "path (NAME-sources.jar beside NAME.jar; src/main/java of a Maven or Gradle project),\n"
           "then in its JDK's lib/src.zip. Hottest files first, up to the bounds; what is left\n"
           "out is counted and named in Profile Info (\"Sources\").\n"
           "  --from PATH        a folder, jar or zip of sources (repeatable, looked in first)\n"
           "  -o OUT             write OUT (default: PROFILE itself, replaced when done);\n"
           "                     gzip unless OUT ends in .json\n"
           "  --max-file BYTES   leave out a file larger than this (default 2M)\n"
           "  --max-total BYTES  embed at most this much text (default 32M)\n"
           "exit codes: 0 written, 1 failed (nothing changed), 2 bad command line\n");
    return FX_CLI_OK;
}

static int parse_size(const char *opt, const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    int shift = !strcmp(end, "k") || !strcmp(end, "K") ? 10 : !strcmp(end, "M") ? 20 : 0;
    if (*s < '0' || *s > '9' || errno || (*end && !shift) || v == 0 || v > (1ull << 40) >> shift)
        return fx_cli_usage("sources", "%s '%s' is not a size in bytes (e.g. 500000, 512k, 2M)",
                            opt, s);
    *out = (uint64_t)v << shift;
    return FX_CLI_OK;
}

struct sources_args {
    const char *file, *out;
    const char *from[MAX_FROM];
    struct fx_src_opts o;
};

static int parse_args(int argc, char **argv, struct sources_args *a)
{
    static const struct option longs[] = {{"from", required_argument, NULL, 'f'},
                                          {"max-file", required_argument, NULL, 'm'},
                                          {"max-total", required_argument, NULL, 't'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    int o, rc = FX_CLI_OK;
    optind = 0;
    while (rc == FX_CLI_OK && (o = getopt_long(argc, argv, ":ho:", longs, NULL)) != -1) {
        if (o == 'f' && a->o.nfrom == MAX_FROM)
            rc = fx_cli_usage("sources", "at most %d --from", MAX_FROM);
        else if (o == 'f')
            a->from[a->o.nfrom++] = optarg;
        else if (o == 'o')
            a->out = optarg;
        else if (o == 'm' || o == 't')
            rc = parse_size(o == 'm' ? "--max-file" : "--max-total", optarg,
                            o == 'm' ? &a->o.max_file : &a->o.max_total);
        else
            return fx_cli_opt_rest("sources", o, argv);
    }
    return rc == FX_CLI_OK ? fx_cli_one_file("sources", argc, argv, &a->file) : rc;
}

int fx_sources_main(int argc, char **argv)
{
    struct sources_args a = {.o = {.max_file = FX_SRC_MAX_FILE, .max_total = FX_SRC_MAX_TOTAL}};
    int rc = parse_args(argc, argv, &a);
    if (rc < 0)
        return usage();
    if (rc != FX_CLI_OK)
        return rc;
    a.o.from = a.from;
    return fx_sources_embed(a.file, a.out ? a.out : a.file, &a.o);
}
