/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof convert --diff BASE NEW --to collapsed: the per-stack difference of two profiles in
 * the format of FlameGraph's difffolded.pl, "root;...;leaf BASE NEW", which flamegraph.pl
 * draws as a differential flame graph (the shape of NEW, red where a stack grew, blue where
 * it shrank). Each side is `convert --to collapsed`'s output (merged over threads, sorted), so
 * the stacks are named exactly as there;
 * only the stacks whose counts differ are written (a profile against itself: nothing), all of
 * them with --all. [idle] and allocation samples are left out as convert leaves them out. */
#include "diff.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_args.h"

struct diff_args {
    const char *base, *new, *to, *out;
    bool idle, all;
};

/* One collapsed file being read: its current line split into stack and count. */
struct side {
    FILE *f;
    char *line;
    size_t cap;
    const char *stack; /* NULL at the end */
    double count, total;
};

static int usage(void)
{
    printf("usage: fxprof convert --diff BASE NEW --to collapsed [-o OUT|-] [--all] [--idle]\n"
           "Writes 'root;...;leaf BASE_COUNT NEW_COUNT' for every stack whose sample count\n"
           "differs between the two profiles (FlameGraph's difffolded.pl format:\n"
           "flamegraph.pl OUT > diff.svg draws NEW, red where a stack grew, blue where it shrank).\n"
           "  -o, --output OUT   the file to write; - for stdout (default: NEW with its .json or\n"
           "                     .json.gz replaced by .diff.collapsed)\n"
           "  --all              every stack, also those with equal counts\n"
           "  --idle             keep the agent's [idle] samples (left out by default: not CPU)\n"
           "exit codes: 0 written, 1 failed (not a profile, cannot write), 2 bad command line\n");
    return FX_CLI_OK;
}

bool fx_diff_wanted(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--diff"))
            return true;
    return false;
}

static int parse_args(int argc, char **argv, struct diff_args *a)
{
    static const struct option longs[] = {{"diff", no_argument, NULL, 'd'},
                                          {"to", required_argument, NULL, 't'},
                                          {"output", required_argument, NULL, 'o'},
                                          {"idle", no_argument, NULL, 'i'},
                                          {"all", no_argument, NULL, 'a'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    int o;
    optind = 0;
    while ((o = getopt_long(argc, argv, ":o:h", longs, NULL)) != -1) {
        if (o == 't')
            a->to = optarg;
        else if (o == 'o')
            a->out = optarg;
        else if (o == 'i' || o == 'a')
            *(o == 'i' ? &a->idle : &a->all) = true;
        else if (o != 'd')
            return fx_cli_opt_rest("convert", o, argv);
    }
    if (optind != argc - 2)
        return fx_cli_usage("convert", "--diff takes two profiles, BASE and NEW");
    a->base = argv[optind];
    a->new = argv[optind + 1];
    if (!a->to || strcmp(a->to, "collapsed"))
        return fx_cli_usage("convert", "--diff writes --to collapsed only");
    return FX_CLI_OK;
}

/* ---- the two sides ---- */

/* Passes on convert's messages but the one naming the temporary file, and closes cap. */
static void replay(FILE *cap)
{
    char *line = NULL;
    size_t n = 0;
    rewind(cap);
    while (getline(&line, &n, cap) > 0)
        if (strncmp(line, "fxprof: wrote ", 14))
            fputs(line, stderr);
    free(line);
    fclose(cap);
}

/* Runs `convert FILE --to collapsed -o OUT [--idle]` in this process, so the stacks are named,
 * merged and sorted exactly as convert writes them. Its messages go to *msgs, replayed at once
 * on failure (the one line saying why), else kept for the caller to replay once all is done. */
static int collapse(const char *file, bool idle, const char *out, FILE **msgs)
{
    char *argv[] = {"convert", (char *)file, "--to",   "collapsed",
                    "-o",      (char *)out,  "--idle", NULL};
    FILE *cap = tmpfile();
    fflush(stderr);
    int saved = cap ? dup(STDERR_FILENO) : -1;
    if (saved < 0 || dup2(fileno(cap), STDERR_FILENO) < 0) {
        if (cap)
            fclose(cap);
        return fx_cli_fail("convert: cannot capture messages: %s", strerror(errno));
    }
    int rc = fx_convert_main(idle ? 7 : 6, argv);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    if (rc != FX_CLI_OK)
        replay(cap);
    *msgs = rc == FX_CLI_OK ? cap : NULL;
    return rc;
}

/* Reads the side's next line: "STACK COUNT", the count after the last space. */
static void next(struct side *s)
{
    s->stack = NULL;
    ssize_t n = getline(&s->line, &s->cap, s->f);
    while (n > 0 && s->line[n - 1] == '\n')
        s->line[--n] = '\0';
    char *sp = n > 0 ? strrchr(s->line, ' ') : NULL;
    if (!sp)
        return;
    *sp = '\0';
    s->stack = s->line;
    s->count = strtod(sp + 1, NULL);
    s->total += s->count;
}

/* Both files are sorted by stack (strcmp, as convert sorts): one merge pass. */
static void merge(struct side *b, struct side *n, FILE *out, bool all, unsigned *stacks,
                  unsigned *written)
{
    next(b);
    next(n);
    while (b->stack || n->stack) {
        int c = !b->stack ? 1 : !n->stack ? -1 : strcmp(b->stack, n->stack);
        double x = c <= 0 ? b->count : 0, y = c >= 0 ? n->count : 0;
        (*stacks)++;
        if (all || x != y) {
            fprintf(out, "%s %.0f %.0f\n", c <= 0 ? b->stack : n->stack, x, y);
            (*written)++;
        }
        if (c <= 0)
            next(b);
        if (c >= 0)
            next(n);
    }
}

/* ---- output ---- */

static int default_out(const char *file, char *out, size_t cap)
{
    size_t len = strlen(file);
    for (const char *const *e = (const char *const[]){".json.gz", ".json", ".gz", NULL}; *e; e++)
        if (len > strlen(*e) && !strcmp(file + len - strlen(*e), *e)) {
            len -= strlen(*e);
            break;
        }
    if ((size_t)snprintf(out, cap, "%.*s.diff.collapsed", (int)len, file) >= cap)
        return fx_cli_fail("convert: the output name for %s is too long; give -o", file);
    return FX_CLI_OK;
}

/* Merges the two collapsed files into target through a temporary renamed at the end ("-":
 * stdout). */
static int emit(struct side sides[2], const char *target, bool all, unsigned *stacks,
                unsigned *written)
{
    bool std = !strcmp(target, "-");
    char tmp[PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", target);
    int fd = std ? STDOUT_FILENO : mkstemp(tmp);
    FILE *f = std ? stdout : fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        int err = errno;
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        return fx_cli_fail("convert: cannot write %s: %s", target, strerror(err));
    }
    merge(&sides[0], &sides[1], f, all, stacks, written);
    bool ok = !ferror(f) && !ferror(sides[0].f) && !ferror(sides[1].f);
    ok = (std ? fflush(f) == 0 : fclose(f) == 0) && ok;
    if (!std && (!ok || rename(tmp, target) != 0)) {
        int err = errno;
        unlink(tmp);
        return fx_cli_fail("convert: cannot write %s: %s", target, strerror(err));
    }
    return ok ? FX_CLI_OK : fx_cli_fail("convert: writing to stdout: %s", strerror(errno));
}

/* ---- fxprof compare's thread ---- */

int fx_compare_thread(const char *file, const char *name, int *out, struct fx_errbuf *eb)
{
    cJSON *root;
    int rc = fx_pfile_load(file, &root, eb);
    if (rc != FX_OK)
        return rc;
    const cJSON *threads = cJSON_GetObjectItemCaseSensitive(root, "threads"), *th;
    const cJSON *sel = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(root, "meta"), "initialSelectedThreads");
    int n = cJSON_GetArraySize(threads), i = 0;
    *out = cJSON_IsNumber(cJSON_GetArrayItem(sel, 0)) ? cJSON_GetArrayItem(sel, 0)->valueint : 0;
    *out = *out >= 0 && *out < n ? *out : 0;
    cJSON_ArrayForEach(th, threads)
    {
        const cJSON *tn = cJSON_GetObjectItemCaseSensitive(th, "name");
        if (name && cJSON_IsString(tn) && !strcmp(tn->valuestring, name))
            break;
        i++;
    }
    if (name && i == n) {
        fx_errbuf_set(eb, "%s has no thread named '%s'", file, name);
        rc = FX_ENOTFOUND;
    }
    *out = name ? i : *out;
    cJSON_Delete(root);
    return rc;
}

int fx_diff_main(int argc, char **argv)
{
    struct diff_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc < 0)
        return usage();
    if (rc != FX_CLI_OK)
        return rc;
    char target[PATH_MAX], dir[PATH_MAX], tmp[2][PATH_MAX + 8] = {"", ""};
    if (!a.out && (rc = default_out(a.new, target, sizeof target)) != FX_CLI_OK)
        return rc;
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/fxprof-diff-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(dir))
        return fx_cli_fail("convert: cannot create a folder in %s: %s", t && *t ? t : "/tmp",
                           strerror(errno));
    struct side sides[2] = {{0}};
    FILE *msgs[2] = {NULL, NULL};
    const char *in[2] = {a.base, a.new};
    for (int i = 0; i < 2 && rc == FX_CLI_OK; i++) {
        snprintf(tmp[i], sizeof tmp[i], "%s/%d", dir, i);
        rc = collapse(in[i], a.idle, tmp[i], &msgs[i]);
        if (rc == FX_CLI_OK && !(sides[i].f = fopen(tmp[i], "r")))
            rc = fx_cli_fail("convert: cannot read %s: %s", tmp[i], strerror(errno));
    }
    unsigned stacks = 0, written = 0;
    if (rc == FX_CLI_OK)
        rc = emit(sides, a.out ? a.out : target, a.all, &stacks, &written);
    for (int i = 0; i < 2; i++)
        if (msgs[i] && rc == FX_CLI_OK)
            replay(msgs[i]);
        else if (msgs[i])
            fclose(msgs[i]);
    if (rc == FX_CLI_OK)
        fprintf(stderr,
                "fxprof: convert --diff: %u of %u stacks %s; samples: base %.0f, new %.0f\n",
                written, stacks, a.all ? "written" : "differ", sides[0].total, sides[1].total);
    for (int i = 0; i < 2; i++) {
        if (sides[i].f)
            fclose(sides[i].f);
        free(sides[i].line);
        unlink(tmp[i]);
    }
    rmdir(dir);
    return rc;
}
