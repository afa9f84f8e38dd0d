/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof start|stop|dump|status PID: loads libfxagent.so into a running JVM through the attach
 * protocol with "<action>,<options>,reply=<file>". fxprof creates that reply file (O_EXCL, 0600)
 * before the load and removes it afterwards, whatever happens; the agent writes its one-line
 * outcome there (docs/ATTACH.md), because the JVM only relays Agent_OnAttach's return code. */
#include "fxprof.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fx_options.h"

#define DEFAULT_TIMEOUT_MS 60000 /* writing a large profile takes a few seconds */
#define ATTACH_TIMEOUT_MS  10000 /* the JDK's own client waits as long */
#define REPLY_CAP          4096

struct control {
    const char *cmd; /* start, stop, dump or status */
    pid_t pid;
    const char *interval, *mode, *file, *extra, *agent;
    int64_t timeout_ms;
    bool to_stdout; /* -o -: the agent writes into a private folder, fxprof copies it out */
    char *answer;   /* fx_control_run: the agent's "ok:" text goes here, not to stdout */
    size_t answer_cap;
};

/* The private folder of -o -, in the JVM's /tmp. */
struct stdout_dir {
    char local[PATH_MAX]; /* "" when none was made */
    char remote[PATH_MAX];
};

struct reply_file {
    int fd;
    char local[PATH_MAX]; /* as fxprof reaches it */
    char remote[96];      /* as the JVM sees it */
};

static int usage(const char *cmd)
{
    printf("usage: fxprof %s PID [options]\n", cmd);
    if (!strcmp(cmd, "start"))
        printf("Starts sampling in the running JVM PID (loads libfxagent.so into it).\n"
               "  -i, --interval DURATION   sampling period, 100us..10s (default 10ms)\n"
               "  -m, --mode MODE           cpu, itimer or wall (default cpu)\n"
               "  -o, --output FILE         where stop/dump write the profile (a pattern: %%p %%t %%n)\n"
               "exit codes: 0 started, 1 failed, 2 bad command line, 130 interrupted\n");
    else if (!strcmp(cmd, "status"))
        printf("Prints the state of the agent in the running JVM PID; a JVM without fxagent is\n"
               "not touched (fxprof reads /proc/PID/maps and loads nothing into it).\n"
               "exit codes: 0 reported, 1 failed, 2 bad command line, 3 fxagent is not loaded in\n"
               "the JVM, 130 interrupted\n");
    else
        printf("%s\n  -o, --output FILE         the profile to write (default: the start's file);\n"
               "                            - writes it (gzip) to stdout\n"
               "exit codes: 0 written, 1 failed, 2 bad command line, 3 fxagent is not loaded in\n"
               "the JVM (nothing is loaded into it), 4 the profile could not be written to FILE\n"
               "and went elsewhere (the message says where), 130 interrupted\n",
               !strcmp(cmd, "dump") ? "Writes the profile so far; sampling goes on."
                                    : "Stops sampling and writes the profile.");
    printf("  --options LIST            more agent options, e.g. depth=512,memory=128m\n"
           "  --agent PATH              libfxagent.so to load (default: next to fxprof)\n"
           "  --timeout DURATION        how long to wait for the agent's answer: seconds (60) or\n"
           "                            with a unit (500ms, 60s, 2m); default 60s\n"
           "Works on HotSpot JDK 8 to 25 without jcmd; the caller must be the JVM's user or root.\n"
           "A JVM still starting (just launched) is waited for, up to 10 s, and a line says so.\n"
           "A process that is not a HotSpot JVM, cannot be inspected, is stopped, or was started\n"
           "with -XX:+DisableAttachMechanism or -Xrs is refused and never signalled.\n");
    return FX_CLI_OK;
}

static const char *option_name(int o)
{
    return o == 'i'   ? "-i/--interval"
           : o == 'm' ? "-m/--mode"
           : o == 'o' ? "-o/--output"
                      : "--options";
}

/* "-5" is a pid typed with a sign, "--depth=512" an agent option typed as one of ours (the
 * agent's own parser says which names are its options). */
static int unknown_option(const char *cmd, const char *arg)
{
    if (arg[0] == '-' && arg[1] >= '0' && arg[1] <= '9')
        return fx_cli_usage(cmd, "'%s' is not a process id (a whole number > 0)", arg);
    char item[64];
    struct fx_options o;
    struct fx_errbuf eb = {{0}};
    size_t n = strcspn(arg + 2, "=");
    if (!strncmp(arg, "--", 2) && n > 0 && n < 32) {
        snprintf(item, sizeof item, "%.*s=1", (int)n, arg + 2);
        if (fx_options_parse(item, &o, &eb) == FX_OK)
            fx_options_destroy(&o);
        else if (strstr(eb.msg, "unknown option"))
            return fx_cli_usage(cmd, "unknown option '%s'", arg);
        return fx_cli_usage(
                cmd,
                "unknown option '%s': '%.*s' is an agent option; give it as --options %.*s=...",
                arg, (int)n, arg + 2, (int)n, arg + 2);
    }
    return fx_cli_usage(cmd, "unknown option '%s'", arg);
}

static int parse_args(int argc, char **argv, struct control *c)
{
    static const struct option longs[] = {
            {"interval", required_argument, NULL, 'i'}, {"mode", required_argument, NULL, 'm'},
            {"output", required_argument, NULL, 'o'},   {"options", required_argument, NULL, 'x'},
            {"agent", required_argument, NULL, 'a'},    {"timeout", required_argument, NULL, 't'},
            {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
    bool is_start = !strcmp(c->cmd, "start"), is_status = !strcmp(c->cmd, "status");
    struct fx_errbuf eb = {{0}};
    int o, cur;
    optind = 0;
    /* cur: the argument getopt is looking at (optind moves past it only at its end). */
    while ((cur = optind ? optind : 1),
           (o = getopt_long(argc, argv, ":i:m:o:h", longs, NULL)) != -1) {
        if (((o == 'i' || o == 'm') && !is_start) || ((o == 'o' || o == 'x') && is_status))
            return fx_cli_usage(c->cmd, "option %s does not apply to %s", option_name(o), c->cmd);
        switch (o) {
        case 'i':
            c->interval = optarg;
            break;
        case 'm':
            c->mode = optarg;
            break;
        case 'o':
            c->file = optarg;
            break;
        case 'x':
            c->extra = optarg;
            break;
        case 'a':
            c->agent = optarg;
            break;
        case 't':
            if (fx_cli_parse_timeout("--timeout", optarg, &c->timeout_ms, &eb) != FX_OK)
                return fx_cli_usage(c->cmd, "%s", eb.msg);
            break;
        case 'h':
            return -1;
        case ':':
            return fx_cli_usage(c->cmd, "option '%s' needs a value", argv[optind - 1]);
        default:
            return unknown_option(c->cmd, cur < argc ? argv[cur] : argv[optind - 1]);
        }
    }
    for (int i = optind; i < argc; i++)
        if (strchr(argv[i], '='))
            return fx_cli_usage(
                    c->cmd,
                    "'%s' looks like an agent option: give it as --options %s (or use -i, -m, -o)",
                    argv[i], argv[i]);
    if (optind != argc - 1)
        return fx_cli_usage(c->cmd, "expected exactly one PID, got %d operands", argc - optind);
    if (fx_cli_parse_pid(argv[optind], &c->pid, &eb) != FX_OK)
        return fx_cli_usage(c->cmd, "%s", eb.msg);
    c->to_stdout = c->file && !strcmp(c->file, "-");
    if (c->to_stdout && is_start)
        return fx_cli_usage(
                c->cmd, "-o - (stdout) applies to dump and stop; start takes the file they write");
    if (c->to_stdout && isatty(STDOUT_FILENO))
        return fx_cli_usage(c->cmd, "-o -: stdout is a terminal; redirect it to a file or a pipe");
    return FX_CLI_OK;
}

static int append(char *out, size_t cap, const char *key, const char *val, struct fx_errbuf *eb)
{
    size_t len = strlen(out);
    int n = snprintf(out + len, cap - len, "%s%s", key, val);
    if (n < 0 || (size_t)n >= cap - len) {
        fx_errbuf_set(eb, "the agent options are longer than the attach protocol's %d bytes",
                      FX_ATTACH_ARG_MAX);
        return FX_ERANGE;
    }
    return FX_OK;
}

/* A relative -o means the user's directory, not the JVM's; inside another mount namespace the
 * path is the container's and is passed as given. */
static int output_path(const struct control *c, bool same_root, char *out, size_t cap,
                       struct fx_errbuf *eb)
{
    char cwd[PATH_MAX];
    if (strchr(c->file, ',')) {
        fx_errbuf_set(eb,
                      "-o '%s': the file name cannot contain ',' (the agent's option separator)",
                      c->file);
        return FX_EINVAL;
    }
    bool as_given = c->file[0] == '/' || !same_root || !getcwd(cwd, sizeof cwd);
    int n = as_given ? snprintf(out, cap, "%s", c->file)
                     : snprintf(out, cap, "%s/%s", cwd, c->file);
    if (n < 0 || (size_t)n >= cap) {
        fx_errbuf_set(eb, "-o '%s': the path is too long", c->file);
        return FX_ERANGE;
    }
    return FX_OK;
}

/* Builds "<action>[,interval=..][,mode=..][,file=..][,extra]" and checks it with the agent's
 * own parser, so a bad value is refused here with the agent's exact message. */
static int agent_options(const struct control *c, bool same_root, char *out, size_t cap,
                         struct fx_errbuf *eb)
{
    out[0] = '\0';
    char file[PATH_MAX];
    int rc = append(out, cap, c->cmd, "", eb);
    if (rc == FX_OK && c->interval)
        rc = append(out, cap, ",interval=", c->interval, eb);
    if (rc == FX_OK && c->mode)
        rc = append(out, cap, ",mode=", c->mode, eb);
    if (rc == FX_OK && c->file)
        rc = output_path(c, same_root, file, sizeof file, eb);
    if (rc == FX_OK && c->file)
        rc = append(out, cap, ",file=", file, eb);
    if (rc == FX_OK && c->extra && *c->extra)
        rc = append(out, cap, ",", c->extra, eb);
    if (rc != FX_OK)
        return rc;
    struct fx_options parsed;
    rc = fx_options_parse(out, &parsed, eb);
    if (rc == FX_OK)
        fx_options_destroy(&parsed);
    return rc;
}

/* ---- the reply file ---- */

static int reply_create(const struct fx_attach_target *t, struct reply_file *rf,
                        struct fx_errbuf *eb)
{
    char hex[33];
    int rc = fx_cli_random_hex(hex, sizeof hex, 8, eb);
    if (rc != FX_OK)
        return rc;
    snprintf(rf->remote, sizeof rf->remote, "/tmp/fxprof-%d-%s", (int)getpid(), hex);
    snprintf(rf->local, sizeof rf->local, "%s/fxprof-%d-%s", t->tmpdir, (int)getpid(), hex);
    rf->fd = open(rf->local, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (rf->fd < 0) {
        fx_errbuf_set(eb, "cannot create the reply file %s: %s", rf->local, strerror(errno));
        return FX_EIO;
    }
    /* root profiling another user's JVM: the agent runs as that user and must open it. */
    if (geteuid() == 0 && t->uid != 0 && fchown(rf->fd, t->uid, t->gid) != 0) {
        fx_errbuf_set(eb, "cannot give the reply file %s to uid %u: %s", rf->local,
                      (unsigned)t->uid, strerror(errno));
        close(rf->fd);
        unlink(rf->local);
        return FX_EIO;
    }
    return FX_OK;
}

static void reply_remove(struct reply_file *rf)
{
    if (rf->fd >= 0) {
        close(rf->fd);
        unlink(rf->local);
        rf->fd = -1;
    }
}

/* The reply is complete once it ends with a newline (the agent writes it with one write()),
 * or once it fills the buffer, whose first REPLY_CAP - 1 bytes are then all that is shown. */
static size_t reply_read(const struct reply_file *rf, char *buf, size_t cap)
{
    ssize_t n = pread(rf->fd, buf, cap - 1, 0);
    if (n <= 0 || (buf[n - 1] != '\n' && (size_t)n < cap - 1))
        return 0;
    buf[n] = '\0';
    return (size_t)n;
}

static size_t reply_wait(const struct reply_file *rf, int64_t timeout_ms, char *buf, size_t cap)
{
    int64_t deadline = fx_cli_now_ms() + timeout_ms, delay = 10;
    size_t n;
    while (!(n = reply_read(rf, buf, cap)) && !fx_cli_interrupted()) {
        int64_t left = deadline - fx_cli_now_ms();
        if (left <= 0)
            break;
        fx_cli_sleep_ms(delay < left ? delay : left);
        delay = delay < 200 ? delay * 2 : 200;
    }
    return n;
}

/* ---- reporting ---- */

/* The agent's text, "ok: ..." or "error: ..."; a non-zero return code is a failure whatever
 * the text says, and so is a profile that went to a fallback file ("could not write X
 * (reason); wrote Y instead"): the file asked for does not exist. With -o - stdout carries
 * the profile, so the line goes to stderr. */
static int print_outcome(const struct control *c, char *text, int code)
{
    size_t len = strlen(text);
    while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
        text[--len] = '\0';
    bool error = !strncmp(text, "error:", 6);
    const char *body = error ? text + 6 : !strncmp(text, "ok:", 3) ? text + 3 : text;
    body += strspn(body, " ");
    if (error || code != 0)
        return fx_cli_fail("pid %d: %s", (int)c->pid, body);
    const char *cw = strstr(body, "could not write ");
    if (cw && strstr(cw, " instead")) {
        fx_cli_fail("pid %d: %s", (int)c->pid, body);
        return FX_CLI_FALLBACK;
    }
    if (c->answer) {
        snprintf(c->answer, c->answer_cap, "%s", body);
        return FX_CLI_OK;
    }
    FILE *to = c->to_stdout ? stderr : stdout;
    fprintf(to, "pid %d: ", (int)c->pid);
    fx_cli_put_escaped(to, body);
    fputc('\n', to);
    return FX_CLI_OK;
}

static int jvm_text_fail(const struct control *c, struct fx_attach_reply *r, const char *lib)
{
    char *t = r->text;
    while (r->len && t[r->len - 1] == '\n')
        t[--r->len] = '\0';
    return fx_cli_fail("pid %d: the JVM did not load %s (status %d): %s", (int)c->pid, lib,
                       r->status, r->len ? t : "no message");
}

static int reply_outcome(const struct control *c, struct fx_attach_reply *r, const char *lib,
                         const struct reply_file *rf)
{
    int code;
    char text[REPLY_CAP];
    if (r->status != 0 || !fx_attach_load_code(r, &code))
        return jvm_text_fail(c, r, lib);
    size_t n = code == 0 ? reply_wait(rf, c->timeout_ms, text, sizeof text)
                         : reply_read(rf, text, sizeof text);
    if (fx_cli_interrupted())
        return FX_CLI_INTERRUPTED;
    if (n)
        return print_outcome(c, text, code);
    if (code != 0)
        return fx_cli_fail(
                "pid %d: the agent refused '%s' (Agent_OnAttach returned %d); its message is on the JVM's stderr",
                (int)c->pid, c->cmd, code);
    return fx_cli_fail(
            "pid %d: the agent took '%s' (return code 0) but sent no outcome within %lld ms; see the JVM's stderr",
            (int)c->pid, c->cmd, (long long)c->timeout_ms);
}

/* ---- -o -: a private folder in the JVM's /tmp, copied to stdout, then removed ---- */

static int stdout_dir_make(const struct fx_attach_target *t, struct stdout_dir *d,
                           struct fx_errbuf *eb)
{
    snprintf(d->local, sizeof d->local, "%s/fxprof-%d-XXXXXX", t->tmpdir, (int)getpid());
    if (!mkdtemp(d->local)) {
        fx_errbuf_set(eb, "cannot create a folder for -o - in %s: %s", t->tmpdir, strerror(errno));
        d->local[0] = '\0';
        return FX_EIO;
    }
    snprintf(d->remote, sizeof d->remote, "/tmp/%s/profile.json.gz", strrchr(d->local, '/') + 1);
    /* root profiling another user's JVM: the agent runs as that user and writes in here. */
    if (geteuid() == 0 && t->uid != 0 && chown(d->local, t->uid, t->gid) != 0) {
        fx_errbuf_set(eb, "cannot give %s to uid %u: %s", d->local, (unsigned)t->uid,
                      strerror(errno));
        return FX_EIO;
    }
    return FX_OK;
}

static void stdout_dir_remove(struct stdout_dir *d)
{
    if (!d->local[0])
        return;
    DIR *dir = opendir(d->local);
    struct dirent *e;
    while (dir && (e = readdir(dir)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlinkat(dirfd(dir), e->d_name, 0);
    if (dir)
        closedir(dir);
    rmdir(d->local);
    d->local[0] = '\0';
}

static int copy_to_stdout(const struct stdout_dir *d)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/profile.json.gz", d->local);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return fx_cli_fail("-o -: the agent reported success but %s is missing: %s", path,
                           strerror(errno));
    signal(SIGPIPE, SIG_IGN); /* a closed pipe is an error to report, not a silent death */
    return fx_cli_copy_to_stdout(fd, path);
}

/* dump, stop and status only speak to an agent that is there: loading one just to hear "not
 * running" would leave a library in the JVM for good (and a JEP 451 warning on its stderr). */
static int check_loaded(const struct control *c, const struct fx_attach_target *t, const char *lib,
                        struct fx_errbuf *eb)
{
    struct fx_proc_maps m;
    if (!strcmp(c->cmd, "start"))
        return FX_CLI_OK;
    if (fx_proc_read_maps(c->pid, lib, &m, eb) != FX_OK)
        return fx_cli_fail("%s", eb->msg);
    if (m.agent)
        return FX_CLI_OK;
    fx_cli_fail(
            "pid %d: fxagent is not loaded in process %d (%s); nothing was loaded into it. Start sampling with: fxprof start %d",
            (int)c->pid, (int)c->pid, t->name, (int)c->pid);
    return FX_CLI_NOT_LOADED;
}

static int load(const struct control *c, const struct fx_attach_target *t, const char *lib,
                char *opts, size_t cap, const struct stdout_dir *d)
{
    struct fx_errbuf eb = {{0}};
    char target_lib[PATH_MAX];
    if (fx_attach_library(t, lib, target_lib, sizeof target_lib, &eb) != FX_OK)
        return fx_cli_fail("%s", eb.msg);
    struct reply_file rf = {.fd = -1};
    if (reply_create(t, &rf, &eb) != FX_OK ||
        append(opts, cap, ",reply=", rf.remote, &eb) != FX_OK) {
        reply_remove(&rf);
        return fx_cli_fail("%s", eb.msg);
    }
    const char *args[FX_ATTACH_ARGS] = {target_lib, "true", opts};
    struct fx_attach_reply r;
    int rc = fx_attach_execute(t, "load", args, ATTACH_TIMEOUT_MS, c->timeout_ms, &r, &eb);
    int ret = rc == FX_OK ? reply_outcome(c, &r, target_lib, &rf)
                          : fx_cli_fail("pid %d: %s", (int)c->pid, eb.msg);
    fx_attach_reply_destroy(&r);
    reply_remove(&rf);
    if (ret == FX_CLI_OK && c->to_stdout && !fx_cli_interrupted())
        ret = copy_to_stdout(d);
    return ret;
}

static int run(struct control *c)
{
    struct fx_errbuf eb = {{0}};
    struct fx_attach_target t;
    char lib[PATH_MAX], opts[FX_ATTACH_ARG_MAX + 1];
    /* The command line first, then the process, then the files: the first error is the
     * most useful one. */
    if (agent_options(c, true, opts, sizeof opts, &eb) != FX_OK ||
        fx_attach_target_open(c->pid, &t, &eb) != FX_OK ||
        fx_cli_find_agent(c->agent, lib, sizeof lib, &eb) != FX_OK)
        return fx_cli_fail("%s", eb.msg);
    int ret = check_loaded(c, &t, lib, &eb);
    if (ret != FX_CLI_OK)
        return ret;
    struct stdout_dir d;
    d.local[0] = '\0';
    if (c->to_stdout && stdout_dir_make(&t, &d, &eb) != FX_OK) {
        stdout_dir_remove(&d);
        return fx_cli_fail("%s", eb.msg);
    }
    if (c->to_stdout)
        c->file = d.remote;
    if (agent_options(c, t.same_root, opts, sizeof opts, &eb) != FX_OK)
        ret = fx_cli_fail("%s", eb.msg);
    else
        ret = load(c, &t, lib, opts, sizeof opts, &d);
    stdout_dir_remove(&d);
    fflush(stdout);
    return fx_cli_interrupted() ? FX_CLI_INTERRUPTED : ret;
}

int fx_control_run(int argc, char **argv, char *answer, size_t cap)
{
    struct control c = {.cmd = argv[0], .timeout_ms = DEFAULT_TIMEOUT_MS};
    int rc = parse_args(argc, argv, &c);
    if (rc < 0)
        return usage(c.cmd);
    if (rc != FX_CLI_OK)
        return rc;
    c.answer = answer;
    c.answer_cap = cap;
    return run(&c);
}

int fx_control_main(int argc, char **argv)
{
    fx_cli_catch_interrupts();
    return fx_control_run(argc, argv, NULL, 0);
}

/* ---- attach-raw PID OP [ARG...]: any operation, reply printed as is (tests, debugging) ---- */

int fx_attach_raw_main(int argc, char **argv)
{
    int64_t timeout_ms = DEFAULT_TIMEOUT_MS;
    struct fx_errbuf eb = {{0}};
    int first = 1;
    if (argc > 2 && !strcmp(argv[1], "--timeout")) {
        if (fx_cli_parse_timeout("--timeout", argv[2], &timeout_ms, &eb) != FX_OK)
            return fx_cli_usage(argv[0], "%s", eb.msg);
        first = 3;
    }
    if (argc - first < 2 || argc - first > 2 + FX_ATTACH_ARGS)
        return fx_cli_usage(
                argv[0],
                "usage: fxprof attach-raw [--timeout D] PID OPERATION [ARG1 [ARG2 [ARG3]]]");
    pid_t pid;
    struct fx_attach_target t;
    if (fx_cli_parse_pid(argv[first], &pid, &eb) != FX_OK ||
        fx_attach_target_open(pid, &t, &eb) != FX_OK)
        return fx_cli_fail("%s", eb.msg);
    const char *args[FX_ATTACH_ARGS] = {NULL, NULL, NULL};
    for (int i = first + 2; i < argc; i++)
        args[i - first - 2] = argv[i];
    fx_cli_catch_interrupts();
    struct fx_attach_reply r;
    if (fx_attach_execute(&t, argv[first + 1], args, ATTACH_TIMEOUT_MS, timeout_ms, &r, &eb) !=
        FX_OK)
        return fx_cli_fail("pid %d: %s", (int)pid, eb.msg);
    printf("%d\n", r.status);
    fwrite(r.text, 1, r.len, stdout);
    int ret = r.status == 0 ? FX_CLI_OK : FX_CLI_FAIL;
    fx_attach_reply_destroy(&r);
    return fflush(stdout) == 0 ? ret : FX_CLI_FAIL;
}
