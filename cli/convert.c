/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof convert FILE --to collapsed|pprof|otlp: a processed profile as input for other tools.
 * collapsed: "root;...;leaf VALUE", one line per distinct stack, sorted (FlameGraph,
 * speedscope, inferno), in one view (--view: the recording's samples by default, lock waits or
 * idle waits in µs, allocated or live bytes). pprof: every view, each in its own sample types;
 * otlp: one profile per view (both core/convert/, fx_convert.h, which the agent's push= uses too).
 * "[idle]" samples are left out unless --idle (they are not CPU), and the count left out is
 * said. The output is written beside its target and renamed, so OUT never holds half a file. */
#include "fxprof.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_args.h"
#include "fx_alloc.h"
#include "fx_convert.h"
#include "fx_strtab.h"

#define NO_STACK "[no stack]"

struct convert_args {
    const char *file, *to, *out;
    int view; /* collapsed: enum fx_pfile_view */
    bool idle, annotate;
};

/* Where the bytes go: a temporary beside OUT (renamed at the end), or stdout. */
struct output {
    FILE *f;
    char tmp[PATH_MAX + 16];
    const char *target; /* NULL: stdout */
};

static int usage(void)
{
    printf("usage: fxprof convert FILE --to collapsed|pprof|otlp [-o OUT] [--view VIEW] [--idle]\n"
           "                     [--annotate]\n"
           "Converts a profile (.json or .json.gz) for other tools:\n"
           "  collapsed   'root;...;leaf VALUE' per stack (FlameGraph, speedscope, inferno), one\n"
           "              view: --view cpu (or wall: the recording's samples, the default), lock\n"
           "              (lock waits, VALUE in microseconds waited), idlewait (idle waits:\n"
           "              threads parked waiting for work, in microseconds, never in lock),\n"
           "              alloc (allocated bytes, estimated) or live (bytes alive at the end)\n"
           "  pprof       gzipped profile.proto (go tool pprof, Pyroscope, Parca, Grafana) with\n"
           "              every view, each its own sample types, never added to another's:\n"
           "              samples/count + cpu (or wall)/nanoseconds (the default type),\n"
           "              contentions/count + delay/nanoseconds (lock waits), alloc_objects/count\n"
           "              + alloc_space/bytes (allocation samples, each standing for ~alloc=\n"
           "              bytes, and their estimated bytes), inuse_objects/count +\n"
           "              inuse_space/bytes (those not freed in the file), idle_waits/count +\n"
           "              idle_delay/nanoseconds (idle waits: waiting for work, not in delay);\n"
           "              pick one with go tool pprof -sample_index=delay (or alloc_space,\n"
           "              inuse_space, idle_delay);\n"
           "              functions with files and lines; the track's name as the label 'thread'\n"
           "  otlp        an OpenTelemetry ExportProfilesServiceRequest (profiles v1development,\n"
           "              uncompressed protobuf): one profile per view (cpu or wall, lock delay,\n"
           "              alloc_space, inuse_space), thread.name and thread.id per sample, a\n"
           "              timestamp per observation, service.name, host.name, process.* (FLEET.md)\n"
           "  -o, --output OUT   the file to write; - for stdout (default: FILE with its .json or\n"
           "                     .json.gz replaced by .collapsed, .pb.gz or .otlp.pb)\n"
           "  --idle             keep the agent's [idle] samples in the samples (left out by\n"
           "                     default: not CPU)\n"
           "  --annotate         collapsed: frame types as async-profiler's suffixes: _[0]\n"
           "                     interpreted, _[1] C1, _[j] C2, _[i] inlined (and a\n"
           "                     receiver's class under a dispatch stub), _[k] kernel;\n"
           "                     a Java frame whose type is not known gets none\n"
           "fxprof convert --diff BASE NEW --to collapsed: the per-stack difference (--diff --help)\n"
           "A JFR recording converts to a Firefox profile: see fxprof convert REC.jfr --help\n"
           "exit codes: 0 written, 1 failed (not a profile, cannot write), 2 bad command line\n"
           "example: fxprof convert app.json.gz --to pprof && go tool pprof -top app.pb.gz\n");
    return FX_CLI_OK;
}

static int parse_args(int argc, char **argv, struct convert_args *a)
{
    static const struct option longs[] = {{"to", required_argument, NULL, 't'},
                                          {"output", required_argument, NULL, 'o'},
                                          {"idle", no_argument, NULL, 'i'},
                                          {"view", required_argument, NULL, 'v'},
                                          {"annotate", no_argument, NULL, 'a'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    int o;
    optind = 0;
    while ((o = getopt_long(argc, argv, ":o:h", longs, NULL)) != -1) {
        switch (o) {
        case 't':
            a->to = optarg;
            break;
        case 'o':
            a->out = optarg;
            break;
        case 'i':
            a->idle = true;
            break;
        case 'v':
            if (fx_cli_view("convert", optarg, &a->view) != FX_CLI_OK)
                return FX_CLI_USAGE;
            break;
        case 'a':
            a->annotate = true;
            break;
        default:
            return fx_cli_opt_rest("convert", o, argv);
        }
    }
    int rc = fx_cli_one_file("convert", argc, argv, &a->file);
    if (rc != FX_CLI_OK)
        return rc;
    if (!a->to)
        return fx_cli_usage("convert", "--to collapsed, pprof or otlp is required");
    if (strcmp(a->to, "collapsed") && strcmp(a->to, "pprof") && strcmp(a->to, "otlp"))
        return fx_cli_usage("convert", "--to '%s': the formats are collapsed, pprof and otlp",
                            a->to);
    if (a->annotate && strcmp(a->to, "collapsed"))
        return fx_cli_usage("convert", "--annotate: only --to collapsed has frame type suffixes");
    if (a->out && !strcmp(a->out, "-") && strcmp(a->to, "collapsed") && isatty(STDOUT_FILENO))
        return fx_cli_usage("convert",
                            "-o -: stdout is a terminal; redirect it to a file or a pipe");
    return FX_CLI_OK;
}

/* ---- output ---- */

static int default_out(const struct convert_args *a, char *out, size_t cap)
{
    static const char *const exts[] = {".json.gz", ".json", ".gz"};
    size_t len = strlen(a->file);
    for (size_t i = 0; i < sizeof exts / sizeof *exts; i++) {
        size_t el = strlen(exts[i]);
        if (len > el && !strcmp(a->file + len - el, exts[i])) {
            len -= el;
            break;
        }
    }
    const char *ext = !strcmp(a->to, "pprof")  ? ".pb.gz"
                      : !strcmp(a->to, "otlp") ? ".otlp.pb"
                                               : ".collapsed";
    if ((size_t)snprintf(out, cap, "%.*s%s", (int)len, a->file, ext) >= cap)
        return fx_cli_fail("convert: the output name for %s is too long; give -o", a->file);
    return FX_CLI_OK;
}

static int output_open(struct output *o, const char *target)
{
    o->target = strcmp(target, "-") ? target : NULL;
    if (!o->target) {
        o->f = stdout;
        return FX_CLI_OK;
    }
    snprintf(o->tmp, sizeof o->tmp, "%s.XXXXXX", target);
    int fd = mkstemp(o->tmp);
    if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
        int err = errno;
        if (fd >= 0) {
            close(fd);
            unlink(o->tmp);
        }
        return fx_cli_fail("convert: cannot write %s: %s", target, strerror(err));
    }
    return FX_CLI_OK;
}

/* Renames the temporary onto OUT when ok, else removes it. */
static int output_close(struct output *o, bool ok)
{
    if (!o->target)
        return fflush(stdout) == 0 || !ok
                       ? FX_CLI_OK
                       : fx_cli_fail("convert: writing to stdout: %s", strerror(errno));
    bool written = fclose(o->f) == 0 && ok;
    int err = errno;
    if (written && rename(o->tmp, o->target) == 0)
        return FX_CLI_OK;
    err = written ? errno : err;
    unlink(o->tmp);
    return ok ? fx_cli_fail("convert: cannot write %s: %s", o->target, strerror(err)) : FX_CLI_OK;
}

static const char *frame_name(const struct fx_pfile_tables *t, int32_t st)
{
    return t->strings[t->func_name[t->frame_func[t->stack_frame[st]]]];
}

/* ---- collapsed ---- */

#define FX_ANNOTATE_CATS 32
#define FX_ANNOTATE_SUBS 16

struct collapsed {
    const struct convert_args *a; /* --view, --annotate */
    /* --annotate: per (category, subcategory) of meta.categories, the suffix or NULL */
    const char *suffix[FX_ANNOTATE_CATS][FX_ANNOTATE_SUBS];
    struct fx_strtab lines;
    double *count;
    uint32_t cap;
    char *buf;
    size_t buflen, bufcap;
    int32_t *path;
    uint32_t pathcap;
};

static int append(struct collapsed *c, const char *s, bool sep)
{
    size_t n = strlen(s);
    if (c->buflen + n + 2 > c->bufcap) {
        size_t cap = (c->buflen + n + 2) * 2;
        char *b = fx_reallocarray(c->buf, cap, 1);
        if (!b)
            return FX_ENOMEM;
        c->buf = b;
        c->bufcap = cap;
    }
    if (sep)
        c->buf[c->buflen++] = ';';
    /* ';' separates frames and the line ends at a line break: neither may be in a name. */
    for (size_t i = 0; i < n; i++)
        c->buf[c->buflen++] = strchr(";\n\r", s[i]) ? '_' : s[i];
    return FX_OK;
}

/* async-profiler's frame type suffixes by the profile's own category and subcategory names
 * (PROFILE-FORMAT.md §12.1): Java's Interpreted, JIT (C1), JIT (C2), Inlined; every Kernel frame;
 * VM's Receiver class, the class under a dispatch stub, which async-profiler marks as `_[i]`. */
static void annotate_suffixes(struct collapsed *c, const cJSON *root)
{
    static const char *const java[][2] = {{"Interpreted", "_[0]"},
                                          {"JIT (C1)", "_[1]"},
                                          {"JIT (C2)", "_[j]"},
                                          {"Inlined", "_[i]"}};
    const cJSON *cats = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(root, "meta"), "categories");
    int ci = 0;
    for (const cJSON *cat = cJSON_IsArray(cats) ? cats->child : NULL; cat && ci < FX_ANNOTATE_CATS;
         cat = cat->next, ci++) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(cat, "name");
        const cJSON *subs = cJSON_GetObjectItemCaseSensitive(cat, "subcategories");
        bool is_java = cJSON_IsString(name) && !strcmp(name->valuestring, "Java");
        bool kernel = cJSON_IsString(name) && !strcmp(name->valuestring, "Kernel");
        bool vm = cJSON_IsString(name) && !strcmp(name->valuestring, "VM");
        int si = 0;
        for (const cJSON *sub = cJSON_IsArray(subs) ? subs->child : NULL;
             sub && si < FX_ANNOTATE_SUBS; sub = sub->next, si++) {
            c->suffix[ci][si] = kernel ? "_[k]" : NULL;
            if (vm && cJSON_IsString(sub) && !strcmp(sub->valuestring, "Receiver class"))
                c->suffix[ci][si] = "_[i]";
            for (size_t j = 0; is_java && cJSON_IsString(sub) && j < 4; j++)
                if (!strcmp(sub->valuestring, java[j][0]))
                    c->suffix[ci][si] = java[j][1];
        }
    }
}

static const char *frame_suffix(const struct collapsed *c, const struct fx_pfile_tables *t,
                                int32_t st)
{
    int32_t f = t->stack_frame[st];
    int32_t cat = t->frame_category ? t->frame_category[f] : -1;
    int32_t sub = t->frame_subcategory ? t->frame_subcategory[f] : -1;
    if (cat < 0 || cat >= FX_ANNOTATE_CATS || sub < 0 || sub >= FX_ANNOTATE_SUBS)
        return NULL;
    return c->suffix[cat][sub];
}

/* The value collapsed writes for each view: lock and idle waits in µs (FlameGraph wants whole
 * numbers). */
static double view_value(int view, const double *v)
{
    switch (view) {
    case FX_VIEW_LOCK:
        return v[FX_V_DELAY] / 1e3;
    case FX_VIEW_IDLEWAIT:
        return v[FX_V_IDLE_DELAY] / 1e3;
    case FX_VIEW_ALLOC:
        return v[FX_V_ALLOC_SPACE];
    case FX_VIEW_LIVE:
        return v[FX_V_INUSE_SPACE];
    default:
        return v[FX_V_SAMPLES];
    }
}

static int collapsed_stack(struct fx_walk *k, int32_t st, const double *v, void *ctx)
{
    struct collapsed *c = ctx;
    double w = view_value(c->a->view, v);
    if (w <= 0)
        return FX_OK;
    uint32_t depth = 0, id;
    for (int32_t s = st; s >= 0; s = k->t.stack_prefix[s])
        depth++;
    if (depth > c->pathcap) {
        fx_free(c->path);
        c->path = fx_calloc(depth, sizeof *c->path);
        c->pathcap = c->path ? depth : 0;
        if (!c->path)
            return FX_ENOMEM;
    }
    uint32_t i = depth;
    for (int32_t s = st; s >= 0; s = k->t.stack_prefix[s])
        c->path[--i] = s;
    c->buflen = 0;
    int rc = st < 0 ? append(c, NO_STACK, false) : FX_OK;
    for (i = 0; rc == FX_OK && i < depth; i++) {
        rc = append(c, frame_name(&k->t, c->path[i]), i > 0);
        const char *sfx = c->a->annotate ? frame_suffix(c, &k->t, c->path[i]) : NULL;
        if (rc == FX_OK && sfx)
            rc = append(c, sfx, false);
    }
    if (rc == FX_OK)
        rc = fx_strtab_intern(&c->lines, c->buf, c->buflen, &id);
    if (rc == FX_OK && id >= c->cap) {
        uint32_t cap = c->cap ? c->cap * 2 : 1024;
        double *n = fx_reallocarray(c->count, cap, sizeof *n);
        if (!n)
            return FX_ENOMEM;
        memset(n + c->cap, 0, (cap - c->cap) * sizeof *n);
        c->count = n;
        c->cap = cap;
    }
    if (rc == FX_OK)
        c->count[id] += w;
    return rc;
}

static const struct fx_strtab *sort_lines;

static int by_line(const void *x, const void *y)
{
    size_t lx, ly;
    const char *a = fx_strtab_get(sort_lines, *(const uint32_t *)x, &lx);
    const char *b = fx_strtab_get(sort_lines, *(const uint32_t *)y, &ly);
    return strcmp(a, b);
}

static int write_collapsed(struct fx_walk *k, const struct convert_args *a, struct output *o,
                           struct fx_errbuf *eb)
{
    struct collapsed c = {.a = a};
    if (a->annotate)
        annotate_suffixes(&c, k->root);
    int rc = fx_convert_walk(k, collapsed_stack, &c, eb);
    uint32_t *order = rc == FX_OK ? fx_calloc(c.lines.count + 1, sizeof *order) : NULL;
    if (rc == FX_OK && !order)
        rc = FX_ENOMEM;
    if (rc == FX_OK) {
        for (uint32_t i = 0; i < c.lines.count; i++)
            order[i] = i;
        sort_lines = &c.lines;
        qsort(order, c.lines.count, sizeof *order, by_line);
        for (uint32_t i = 0; i < c.lines.count; i++) {
            size_t len;
            fprintf(o->f, "%s %.0f\n", fx_strtab_get(&c.lines, order[i], &len),
                    round(c.count[order[i]]));
        }
    }
    if (rc == FX_ENOMEM)
        fx_errbuf_set(eb, "out of memory");
    fx_free(order);
    fx_strtab_destroy(&c.lines);
    fx_free(c.count), fx_free(c.buf), fx_free(c.path);
    return rc;
}

/* collapsed holds one view: say which, and which others the file has. */
static void say_other_views(const cJSON *root, int view)
{
    struct fx_pfile_totals t;
    struct fx_errbuf eb = {{0}};
    if (fx_pfile_totals(root, &t, &eb) != FX_OK)
        return;
    const double has[FX_VIEW_COUNT] = {t.samples, t.waits, t.idle_waits, t.allocations, t.live};
    char others[160] = "";
    for (int v = 0; v < FX_VIEW_COUNT; v++) {
        size_t n = strlen(others);
        if (v != view && has[v] > 0)
            snprintf(others + n, sizeof others - n, " --view %s", fx_pfile_view_name(v));
    }
    if (others[0])
        fprintf(stderr, "fxprof: convert: view %s written; the file has other views too:%s\n",
                fx_pfile_view_name(view), others);
}

int fx_convert_main(int argc, char **argv)
{
    if (fx_convert_input_is_jfr(argc, argv)) /* issue 35: convert_jfr.c */
        return fx_convert_jfr_main(argc, argv);
    struct convert_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc < 0)
        return usage();
    if (rc != FX_CLI_OK)
        return rc;
    char target[PATH_MAX];
    if (!a.out && (rc = default_out(&a, target, sizeof target)) != FX_CLI_OK)
        return rc;
    struct fx_errbuf eb = {{0}};
    cJSON *root;
    if (fx_pfile_load(a.file, &root, &eb) != FX_OK)
        return fx_cli_fail("convert: %s", eb.msg);
    struct output o = {0};
    signal(SIGPIPE, SIG_IGN); /* a closed pipe is an error to report, not a silent death */
    rc = output_open(&o, a.out ? a.out : target);
    if (rc != FX_CLI_OK) {
        cJSON_Delete(root);
        return rc;
    }
    struct fx_walk k = {.root = root, .keep_idle = a.idle};
    int err = !strcmp(a.to, "otlp")    ? fx_convert_otlp(root, a.idle, o.f, &k.idle, &eb)
              : !strcmp(a.to, "pprof") ? fx_convert_pprof(root, a.idle, o.f, &k.idle, &eb)
                                       : write_collapsed(&k, &a, &o, &eb);
    if (err == FX_OK && ferror(o.f))
        fx_errbuf_set(&eb, "writing the output failed"), err = FX_EIO;
    rc = output_close(&o, err == FX_OK);
    if (err != FX_OK)
        rc = fx_cli_fail("convert: %s: %s", a.file, eb.msg);
    if (rc == FX_CLI_OK && k.idle > 0 && (a.view == FX_VIEW_CPU || strcmp(a.to, "collapsed")))
        fprintf(stderr,
                "fxprof: convert: %.0f [idle] samples left out (not CPU; --idle keeps them)\n",
                k.idle);
    if (rc == FX_CLI_OK && !strcmp(a.to, "collapsed"))
        say_other_views(root, a.view);
    if (rc == FX_CLI_OK && o.target)
        fprintf(stderr, "fxprof: wrote %s (%s)\n", o.target, a.to);
    fx_convert_walk_destroy(&k);
    cJSON_Delete(root);
    return rc;
}
