/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof convert FILE --to collapsed|pprof: a processed profile as input for other tools.
 * collapsed: "root;...;leaf COUNT", one line per distinct stack, sorted (FlameGraph,
 * speedscope, inferno). pprof: gzipped profile.proto (go tool pprof, Pyroscope, Parca, Grafana)
 * through native/pprof.c, one sample per thread and stack, labelled with the thread's name.
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
#include "convert_otlp.h"
#include "fx_alloc.h"
#include "fx_gzip.h"
#include "fx_pprof.h"
#include "fx_strtab.h"

#define NO_STACK "[no stack]"

struct convert_args {
    const char *file, *to, *out;
    bool idle;
};

/* Where the bytes go: a temporary beside OUT (renamed at the end), or stdout. */
struct output {
    FILE *f;
    char tmp[PATH_MAX + 16];
    const char *target; /* NULL: stdout */
};

static int usage(void)
{
    printf("usage: fxprof convert FILE --to collapsed|pprof|otlp [-o OUT] [--idle]\n"
           "Converts a profile (.json or .json.gz) for other tools:\n"
           "  collapsed   'root;...;leaf COUNT' per stack (FlameGraph, speedscope, inferno)\n"
           "  pprof       gzipped profile.proto (go tool pprof, Pyroscope, Parca, Grafana): sample\n"
           "              types samples/count and cpu (or wall)/nanoseconds, alloc_space/bytes\n"
           "              when the profile has allocation samples; functions with files and\n"
           "              lines; the thread's name as the label 'thread'\n"
           "  otlp        an OpenTelemetry ExportProfilesServiceRequest (profiles v1development,\n"
           "              uncompressed protobuf): one profile per view (cpu or wall, lock delay,\n"
           "              alloc_space, inuse_space), thread.name and thread.id per sample, a\n"
           "              timestamp per observation, service.name, host.name, process.* (FLEET.md)\n"
           "  -o, --output OUT   the file to write; - for stdout (default: FILE with its .json or\n"
           "                     .json.gz replaced by .collapsed, .pb.gz or .otlp.pb)\n"
           "  --idle             keep the agent's [idle] samples (left out by default: not CPU)\n"
           "exit codes: 0 written, 1 failed (not a profile, cannot write), 2 bad command line\n"
           "example: fxprof convert app.json.gz --to pprof && go tool pprof -top app.pb.gz\n");
    return FX_CLI_OK;
}

static int parse_args(int argc, char **argv, struct convert_args *a)
{
    static const struct option longs[] = {{"to", required_argument, NULL, 't'},
                                          {"output", required_argument, NULL, 'o'},
                                          {"idle", no_argument, NULL, 'i'},
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

static int file_write(void *ctx, const void *buf, size_t len)
{
    return fwrite(buf, 1, len, ctx) == len ? FX_OK : FX_EIO;
}

/* ---- walking the profile ---- */

/* What each thread contributes, per stack; stack -1 (index 0 of w) is "no stack". */
struct walk {
    const cJSON *root;
    const struct convert_args *a;
    struct fx_pfile_tables t;
    double *w; /* [nstacks + 1] */
    uint32_t wcap;
    double idle;   /* [idle] samples left out */
    bool bytes;    /* this thread's weights are bytes */
    bool no_bytes; /* collapsed: one kind of value per file, so allocation threads are left out */
    double bytes_left_out;
    const char *thread;
};

typedef int (*stack_fn)(struct walk *k, int32_t stack, double weight, void *ctx);

static int thread_weights(struct walk *k, const cJSON *th, struct fx_errbuf *eb)
{
    struct fx_pfile_samples sm;
    int rc = fx_pfile_tables(k->root, th, &k->t, eb);
    if (rc == FX_OK)
        rc = fx_pfile_samples(th, k->t.nstacks, &sm, eb);
    if (rc != FX_OK)
        return rc;
    if (k->wcap < k->t.nstacks + 1) {
        fx_free(k->w);
        k->w = fx_calloc(k->t.nstacks + 1, sizeof *k->w);
        k->wcap = k->w ? k->t.nstacks + 1 : 0;
    }
    if (!k->w) {
        fx_pfile_samples_destroy(&sm);
        fx_errbuf_set(eb, "out of memory");
        return FX_ENOMEM;
    }
    memset(k->w, 0, (k->t.nstacks + 1) * sizeof *k->w);
    for (uint32_t i = 0; i < sm.n; i++) {
        double w = sm.weight ? sm.weight[i] : 1;
        if (!k->a->idle && fx_pfile_is_idle(&k->t, sm.stack[i]))
            k->idle += w;
        else
            k->w[sm.stack[i] + 1] += w;
    }
    k->bytes = sm.bytes;
    fx_pfile_samples_destroy(&sm);
    return FX_OK;
}

/* Calls fn for every (thread, stack) with a weight, thread by thread. */
static int walk(struct walk *k, stack_fn fn, void *ctx, struct fx_errbuf *eb)
{
    const cJSON *th;
    cJSON_ArrayForEach(th, cJSON_GetObjectItemCaseSensitive(k->root, "threads"))
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(th, "name");
        k->thread = cJSON_IsString(name) ? name->valuestring : "(unnamed)";
        int rc = thread_weights(k, th, eb);
        if (rc == FX_OK && k->bytes && k->no_bytes) {
            for (uint32_t s = 0; s <= k->t.nstacks; s++)
                k->bytes_left_out += k->w[s] > 0;
            continue;
        }
        for (uint32_t s = 0; rc == FX_OK && s <= k->t.nstacks; s++)
            if (k->w[s] > 0)
                rc = fn(k, (int32_t)s - 1, k->w[s], ctx);
        if (rc != FX_OK)
            return rc;
    }
    return FX_OK;
}

static const char *frame_name(const struct fx_pfile_tables *t, int32_t st)
{
    return t->strings[t->func_name[t->frame_func[t->stack_frame[st]]]];
}

/* ---- collapsed ---- */

struct collapsed {
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

static int collapsed_stack(struct walk *k, int32_t st, double w, void *ctx)
{
    struct collapsed *c = ctx;
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
    for (i = 0; rc == FX_OK && i < depth; i++)
        rc = append(c, frame_name(&k->t, c->path[i]), i > 0);
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

static int write_collapsed(struct walk *k, struct output *o, struct fx_errbuf *eb)
{
    struct collapsed c = {0};
    k->no_bytes = true;
    int rc = walk(k, collapsed_stack, &c, eb);
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

/* ---- pprof ---- */

struct pprof_state {
    struct fx_pprof *p;
    const void *tables[5]; /* the table set whose functions and locations are emitted */
    uint64_t base_func, base_loc, next_base;
    bool *func_done, *loc_done;
    uint64_t *locs;
    uint32_t locscap;
    int64_t interval_ns;
    bool has_bytes;
};

#define NO_STACK_ID 1 /* function and location 1: "[no stack]" */

/* A new table set (older files have one per thread) gets fresh ids above the last set's. */
static int pprof_tables(struct pprof_state *ps, const struct fx_pfile_tables *t)
{
    if (!memcmp(ps->tables, t->src, sizeof ps->tables))
        return FX_OK;
    memcpy(ps->tables, t->src, sizeof ps->tables);
    fx_free(ps->func_done), fx_free(ps->loc_done);
    ps->func_done = fx_calloc(t->nfuncs + 1, 1);
    ps->loc_done = fx_calloc(t->nframes + 1, 1);
    ps->base_func = ps->next_base;
    ps->base_loc = ps->next_base + t->nfuncs;
    ps->next_base += (uint64_t)t->nfuncs + t->nframes;
    return ps->func_done && ps->loc_done ? FX_OK : FX_ENOMEM;
}

static int pprof_location(struct pprof_state *ps, const struct fx_pfile_tables *t, int32_t frame,
                          uint64_t *id)
{
    int32_t f = t->frame_func[frame];
    int rc = FX_OK;
    *id = ps->base_loc + (uint64_t)frame + 1;
    if (!ps->func_done[f]) {
        int32_t file = t->func_file[f];
        rc = fx_pprof_function(ps->p, ps->base_func + (uint64_t)f + 1, t->strings[t->func_name[f]],
                               file >= 0 ? t->strings[file] : NULL, t->func_line[f]);
        ps->func_done[f] = true;
    }
    if (rc == FX_OK && !ps->loc_done[frame]) {
        rc = fx_pprof_location(ps->p, *id, ps->base_func + (uint64_t)f + 1, t->frame_line[frame]);
        ps->loc_done[frame] = true;
    }
    return rc;
}

static int pprof_stack(struct walk *k, int32_t st, double w, void *ctx)
{
    struct pprof_state *ps = ctx;
    int rc = pprof_tables(ps, &k->t);
    uint32_t n = 0;
    for (int32_t s = st; s >= 0; s = k->t.stack_prefix[s])
        n++;
    if (rc == FX_OK && n + 1 > ps->locscap) {
        fx_free(ps->locs);
        ps->locs = fx_calloc(n + 1, sizeof *ps->locs);
        ps->locscap = ps->locs ? n + 1 : 0;
        rc = ps->locs ? FX_OK : FX_ENOMEM;
    }
    n = 0;
    if (st < 0)
        ps->locs[n++] = NO_STACK_ID;
    for (int32_t s = st; rc == FX_OK && s >= 0; s = k->t.stack_prefix[s])
        rc = pprof_location(ps, &k->t, k->t.stack_frame[s], &ps->locs[n++]);
    int64_t v[3] = {0, 0, 0};
    if (k->bytes) {
        v[2] = llround(w); /* an allocation sample: its bytes, not time */
    } else {
        v[0] = llround(w);
        v[1] = llround(w * (double)ps->interval_ns);
    }
    return rc == FX_OK ? fx_pprof_sample(ps->p, ps->locs, n, v, "thread", k->thread) : rc;
}

static bool any_bytes(const cJSON *root)
{
    const cJSON *th;
    cJSON_ArrayForEach(th, cJSON_GetObjectItemCaseSensitive(root, "threads"))
    {
        const cJSON *wt = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(th, "samples"), "weightType");
        if (cJSON_IsString(wt) && !strcmp(wt->valuestring, "bytes"))
            return true;
    }
    return false;
}

static double meta_number(const cJSON *root, const char *key, double dflt)
{
    const cJSON *v =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "meta"), key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static int write_pprof(struct walk *k, struct output *o, struct fx_errbuf *eb)
{
    struct pprof_state ps = {.next_base = NO_STACK_ID};
    const char *mode = fx_pfile_mode(k->root);
    ps.interval_ns = llround(meta_number(k->root, "interval", 10) * 1e6);
    ps.has_bytes = any_bytes(k->root);
    ps.p = fx_pprof_new();
    struct fx_gzip *gz = fx_gzip_new((struct fx_sink){.write = file_write, .ctx = o->f}, 6);
    int rc = ps.p && gz ? FX_OK : FX_ENOMEM;
    if (rc == FX_OK)
        rc = fx_pprof_sample_type(ps.p, "samples", "count");
    if (rc == FX_OK)
        rc = fx_pprof_sample_type(ps.p, strcmp(mode, "wall") ? "cpu" : "wall", "nanoseconds");
    if (rc == FX_OK && ps.has_bytes)
        rc = fx_pprof_sample_type(ps.p, "alloc_space", "bytes");
    if (rc == FX_OK)
        rc = fx_pprof_function(ps.p, NO_STACK_ID, NO_STACK, NULL, 0);
    if (rc == FX_OK)
        rc = fx_pprof_location(ps.p, NO_STACK_ID, NO_STACK_ID, 0);
    if (rc == FX_OK)
        rc = walk(k, pprof_stack, &ps, eb);
    char comment[160];
    snprintf(comment, sizeof comment, "fxprof convert, mode %s; %.0f [idle] samples left out%s",
             mode, k->idle, k->a->idle ? " (--idle: none)" : "");
    double start = meta_number(k->root, "startTime", 0);
    double t0 = meta_number(k->root, "profilingStartTime", 0);
    double t1 = meta_number(k->root, "profilingEndTime", t0);
    if (rc == FX_OK)
        rc = fx_pprof_finish(ps.p, llround((start + t0) * 1e6), llround((t1 - t0) * 1e6), 1,
                             ps.interval_ns, comment, fx_gzip_sink(gz));
    if (rc == FX_OK)
        rc = fx_gzip_finish(gz);
    if (rc == FX_ENOMEM)
        fx_errbuf_set(eb, "out of memory");
    else if (rc != FX_OK && !eb->msg[0])
        fx_errbuf_set(eb, "writing the output failed: %s", strerror(errno));
    fx_gzip_free(gz);
    fx_pprof_free(ps.p);
    fx_free(ps.func_done), fx_free(ps.loc_done), fx_free(ps.locs);
    return rc;
}

/* pprof of a parsed profile into f, for the agent's push (fx_convert.h): the same writer. */
int fx_convert_pprof_file(const cJSON *root, FILE *f, struct fx_errbuf *eb)
{
    struct convert_args a = {.to = "pprof"};
    struct walk k = {.root = root, .a = &a};
    struct output o = {.f = f};
    int rc = write_pprof(&k, &o, eb);
    fx_pfile_tables_destroy(&k.t);
    fx_free(k.w);
    return rc;
}

int fx_convert_main(int argc, char **argv)
{
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
    struct walk k = {.root = root, .a = &a};
    int err = !strcmp(a.to, "otlp")    ? fx_convert_otlp_file(root, a.idle, o.f, &k.idle, &eb)
              : !strcmp(a.to, "pprof") ? write_pprof(&k, &o, &eb)
                                       : write_collapsed(&k, &o, &eb);
    if (err == FX_OK && ferror(o.f))
        fx_errbuf_set(&eb, "writing the output failed"), err = FX_EIO;
    rc = output_close(&o, err == FX_OK);
    if (err != FX_OK)
        rc = fx_cli_fail("convert: %s: %s", a.file, eb.msg);
    if (rc == FX_CLI_OK && k.idle > 0)
        fprintf(stderr,
                "fxprof: convert: %.0f [idle] samples left out (not CPU; --idle keeps them)\n",
                k.idle);
    if (rc == FX_CLI_OK && k.bytes_left_out > 0)
        fprintf(stderr,
                "fxprof: convert: %.0f allocation stacks left out (collapsed holds one kind of value; --to pprof keeps them)\n",
                k.bytes_left_out);
    if (rc == FX_CLI_OK && o.target)
        fprintf(stderr, "fxprof: wrote %s (%s)\n", o.target, a.to);
    fx_pfile_tables_destroy(&k.t);
    fx_free(k.w);
    cJSON_Delete(root);
    return rc;
}
