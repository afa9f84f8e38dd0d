/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof sources and open --sources: the embedding of include/fx_src.h (the lookup, the
 * bounds, the outcomes and Profile Info's "Sources" group, shared with the agent's sources=)
 * applied to a profile read back: which files its frames name and how hot each is, from the
 * file's tables; the texts placed into shared.sources.content; the file written again. */
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

struct embed {
    cJSON *root, *sources, *content;
    struct fx_src_embed plan; /* the rows frames name, hottest first once run */
};

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

/* The sources table and its content column, all nulls: a profile embedded before (by the
 * agent's sources=, or an earlier run) holds only what this run embeds, as its "Sources" group
 * says. */
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
    cJSON *c = cJSON_CreateArray();
    for (uint32_t i = 0; c && i < *n; i++)
        cJSON_AddItemToArray(c, cJSON_CreateNull());
    if (!c || cJSON_GetArraySize(c) != (int)*n) {
        cJSON_Delete(c);
        fx_errbuf_set(eb, "out of memory");
        return FX_ENOMEM;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(e->sources, "content");
    e->content = cJSON_AddItemToObject(e->sources, "content", c) ? c : NULL;
    if (!e->content) {
        cJSON_Delete(c);
        fx_errbuf_set(eb, "out of memory");
        return FX_ENOMEM;
    }
    return FX_OK;
}

/* The rows frames name, with their heat. */
static int pick_files(struct embed *e, struct fx_errbuf *eb)
{
    uint32_t n;
    int rc = sources_table(e, &n, eb);
    if (rc != FX_OK)
        return rc;
    double *heat = fx_calloc(n ? n : 1, sizeof *heat);
    bool *named = fx_calloc(n ? n : 1, sizeof *named);
    rc = heat && named ? heat_of(e, n, heat, named, eb) : FX_ENOMEM;
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
            rc = fx_src_embed_add(&e->plan, (int32_t)i, s->valuestring, heat[i]);
    }
    if (rc == FX_ENOMEM)
        fx_errbuf_set(eb, "out of memory");
    fx_free(strings);
    fx_free(heat);
    fx_free(named);
    return rc;
}

/* ---- embedding ---- */

/* The embedded texts into the content column; a text cJSON cannot hold counts unreadable. */
static void place_texts(struct embed *e)
{
    struct fx_src_embed *pl = &e->plan;
    for (size_t i = 0; i < pl->nfiles; i++) {
        struct fx_src_file *file = &pl->files[i];
        if (file->outcome != FX_SRC_EMBEDDED)
            continue;
        cJSON *s = cJSON_CreateString(file->text);
        if (!s || !cJSON_ReplaceItemInArray(e->content, file->row, s)) {
            cJSON_Delete(s);
            file->outcome = FX_SRC_OUT_UNREADABLE;
            pl->count[FX_SRC_EMBEDDED]--;
            pl->count[FX_SRC_OUT_UNREADABLE]++;
            pl->by_kind[file->kind]--;
            pl->bytes -= file->len;
        }
        fx_free(file->text);
        file->text = NULL;
    }
}

/* ---- meta.extra "Sources" ---- */

static void entry(void *ctx, const char *label, const char *text, int64_t n)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "label", label);
    cJSON_AddStringToObject(o, "format", text ? "string" : "integer");
    cJSON_AddItemToObject(o, "value",
                          text ? cJSON_CreateString(text) : cJSON_CreateNumber((double)n));
    cJSON_AddItemToArray(ctx, o);
}

static void set_extra(struct embed *e, const struct fx_src_finder *f)
{
    cJSON *meta = get(e->root, "meta"), *extra = get(meta, "extra"), *g;
    if (!cJSON_IsArray(extra))
        extra = cJSON_AddArrayToObject(meta, "extra");
    int i = 0;
    cJSON_ArrayForEach(g, extra)
    {
        const cJSON *l = get(g, "label");
        if (cJSON_IsString(l) && !strcmp(l->valuestring, FX_SRC_GROUP)) {
            cJSON_DeleteItemFromArray(extra, i); /* a second run replaces the first's figures */
            break;
        }
        i++;
    }
    g = cJSON_CreateObject();
    cJSON_AddStringToObject(g, "label", FX_SRC_GROUP);
    fx_src_embed_report(&e->plan, f, entry, cJSON_AddArrayToObject(g, "entries"));
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

static void summary_line(const struct fx_src_embed *e)
{
    fprintf(stderr, "fxprof: sources: embedded %zu of %zu files (%llu bytes)",
            e->count[FX_SRC_EMBEDDED], e->nfiles, (unsigned long long)e->bytes);
    for (int k = FX_SRC_NOT_FOUND; k < FX_SRC_OUTCOMES; k++)
        if (e->count[k])
            fprintf(stderr, "; %s %zu", fx_src_outcome_label((enum fx_src_outcome)k), e->count[k]);
    fprintf(stderr, "\n");
    for (size_t i = 0, shown = 0; i < e->nfiles && shown < 5; i++)
        if (e->files[i].outcome == FX_SRC_NOT_FOUND && ++shown)
            fprintf(stderr, "fxprof: sources: not found: %s\n", e->files[i].name);
    if (e->count[FX_SRC_NOT_FOUND] > 5)
        fprintf(stderr, "fxprof: sources: %zu more not found, named in Profile Info (Sources)\n",
                e->count[FX_SRC_NOT_FOUND] - 5);
}

static int embed_all(struct embed *e, const struct fx_src_opts *o, struct fx_errbuf *eb)
{
    /* where the profile says the JVM's class path and JDK were (agent/output/meta.c) */
    const struct fx_src_jvm jvm = {.class_path = fx_pfile_extra(e->root, "JVM", "java.class.path"),
                                   .cwd = fx_pfile_extra(e->root, "JVM", "working directory"),
                                   .java_home = fx_pfile_extra(e->root, "JVM", "java.home")};
    struct fx_src_finder f;
    int rc = pick_files(e, eb);
    if (rc == FX_OK)
        rc = fx_src_finder_init(&f, o->from, o->nfrom, &jvm, eb);
    if (rc != FX_OK)
        return rc;
    fx_src_embed_run(&e->plan, &f);
    place_texts(e);
    set_extra(e, &f);
    fx_src_finder_destroy(&f);
    return FX_OK;
}

int fx_sources_embed(const char *in, const char *out, const struct fx_src_opts *o)
{
    struct fx_errbuf eb = {{0}};
    struct embed e = {0};
    fx_src_embed_init(&e.plan, o->max_file, o->max_total);
    int rc = fx_pfile_load(in, &e.root, &eb);
    if (rc == FX_OK)
        rc = embed_all(&e, o, &eb);
    if (rc == FX_OK)
        rc = write_out(e.root, out, &eb);
    if (rc == FX_OK && !o->quiet)
        summary_line(&e.plan);
    fx_src_embed_destroy(&e.plan);
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
    const char *from[FX_SRC_MAX_FROM];
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
        if (o == 'f' && a->o.nfrom == FX_SRC_MAX_FROM)
            rc = fx_cli_usage("sources", "at most %d --from", FX_SRC_MAX_FROM);
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
