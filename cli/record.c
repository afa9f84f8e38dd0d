/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof record: runs a java command with -agentpath:libfxagent.so=... inserted right after the
 * launcher, waits for it and exits with its exit code (128 + N if signal N killed it). The
 * options are checked with the agent's own parser first, so a typo fails before the JVM
 * starts and reads exactly as the agent would have printed it. */
#include "fxprof.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_options.h"

extern char **environ;

struct record {
    const char *interval, *mode, *file, *extra, *agent, *java;
    char **cmd; /* the operands: [java] ARGS... */
    int ncmd;
};

static volatile sig_atomic_t child_pid;

static int usage(void)
{
    printf("usage: fxprof record [options] [--] java ARGS...\n"
           "Runs the java command with the fxagent profiler and exits with its exit code.\n"
           "  -o, --output FILE        profile to write, .json.gz or .json; %%p pid, %%t time\n"
           "                           (default: fxagent-%%p-%%t.json.gz in the JVM's directory)\n"
           "  -i, --interval DURATION  sampling period, 100us..10s (default 10ms)\n"
           "  -m, --mode MODE          cpu, itimer or wall (default cpu)\n"
           "  --options LIST           more agent options, e.g. depth=512,memory=128m\n"
           "  --agent PATH             libfxagent.so (default: $FXAGENT_LIB, else next to fxprof)\n"
           "  --java PATH              the java launcher; the operands are then only its arguments\n"
           "example: fxprof record -o app.json.gz -i 1ms -- java -jar app.jar\n");
    return FX_CLI_OK;
}

static int parse_args(int argc, char **argv, struct record *r)
{
    static const struct option longs[] = {
            {"output", required_argument, NULL, 'o'}, {"interval", required_argument, NULL, 'i'},
            {"mode", required_argument, NULL, 'm'},   {"options", required_argument, NULL, 'x'},
            {"agent", required_argument, NULL, 'a'},  {"java", required_argument, NULL, 'j'},
            {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    int o;
    optind = 0;
    /* '+': options end at the java command, whose own options must not be taken as ours. */
    while ((o = getopt_long(argc, argv, "+:o:i:m:h", longs, NULL)) != -1) {
        switch (o) {
        case 'o':
            r->file = optarg;
            break;
        case 'i':
            r->interval = optarg;
            break;
        case 'm':
            r->mode = optarg;
            break;
        case 'x':
            r->extra = optarg;
            break;
        case 'a':
            r->agent = optarg;
            break;
        case 'j':
            r->java = optarg;
            break;
        case 'h':
            return -1;
        case ':':
            return fx_cli_usage("record", "option '%s' needs a value", argv[optind - 1]);
        default:
            return fx_cli_usage("record", "unknown option '%s'", argv[optind - 1]);
        }
    }
    r->cmd = argv + optind;
    r->ncmd = argc - optind;
    if (!r->java && r->ncmd == 0)
        return fx_cli_usage("record",
                            "no java command given (e.g. fxprof record -- java -jar app.jar)");
    if (!r->java && r->cmd[0][0] == '-')
        return fx_cli_usage(
                "record",
                "'%s' is not a java command: the first operand must be the launcher (or use --java PATH)",
                r->cmd[0]);
    return FX_CLI_OK;
}

static int add(char *out, size_t cap, const char *sep, const char *key, const char *val,
               struct fx_errbuf *eb)
{
    size_t len = strlen(out);
    int n = snprintf(out + len, cap - len, "%s%s%s", len ? sep : "", key, val);
    if (n < 0 || (size_t)n >= cap - len) {
        fx_errbuf_set(eb, "the agent options are too long (over %zu bytes)", cap - 1);
        return FX_ERANGE;
    }
    return FX_OK;
}

/* The -agentpath value, checked by the agent's own option parser. */
static int agent_arg(const struct record *r, const char *lib, char *out, size_t cap,
                     struct fx_errbuf *eb)
{
    char opts[2048] = "";
    int rc = FX_OK;
    if (r->interval)
        rc = add(opts, sizeof opts, ",", "interval=", r->interval, eb);
    if (rc == FX_OK && r->mode)
        rc = add(opts, sizeof opts, ",", "mode=", r->mode, eb);
    if (rc == FX_OK && r->file && strchr(r->file, ',')) {
        fx_errbuf_set(eb,
                      "-o '%s': the file name cannot contain ',' (the agent's option separator)",
                      r->file);
        rc = FX_EINVAL;
    }
    if (rc == FX_OK && r->file)
        rc = add(opts, sizeof opts, ",", "file=", r->file, eb);
    if (rc == FX_OK && r->extra && *r->extra)
        rc = add(opts, sizeof opts, ",", r->extra, "", eb);
    struct fx_options parsed;
    if (rc == FX_OK && (rc = fx_options_parse(opts, &parsed, eb)) == FX_OK)
        fx_options_destroy(&parsed);
    if (rc == FX_OK && strchr(lib, '=')) {
        fx_errbuf_set(eb, "the agent's path %s contains '=', which -agentpath cannot express", lib);
        rc = FX_EINVAL;
    }
    if (rc == FX_OK &&
        snprintf(out, cap, "-agentpath:%s%s%s", lib, *opts ? "=" : "", opts) >= (int)cap)
        rc = FX_ERANGE;
    return rc;
}

static void forward(int sig)
{
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
}

/* The terminal sends SIGINT/SIGQUIT to java too (same process group), so fxprof ignores them
 * and waits for the JVM to finish its shutdown, which is when the profile gets written. */
static void catch_while_waiting(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGQUIT, &sa, NULL);
    sa.sa_handler = forward;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

static int wait_child(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return fx_cli_fail("waiting for java: %s", strerror(errno));
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return WEXITSTATUS(st);
}

static void report_file(const char *file, int code)
{
    struct stat st;
    if (!file || strchr(file, '%'))
        return;
    if (stat(file, &st) == 0 && S_ISREG(st.st_mode))
        fprintf(stderr, "fxprof: profile %s (%lld bytes); view it with: fxprof open %s\n", file,
                (long long)st.st_size, file);
    else
        fprintf(stderr,
                "fxprof: java exited with %d and wrote no profile at %s (see the fxagent lines above)\n",
                code, file);
}

static int run(const struct record *r, const char *agentpath)
{
    int skip = r->java ? 0 : 1;
    char **argv = fx_calloc((size_t)r->ncmd + 3, sizeof *argv);
    if (!argv)
        return fx_cli_fail("out of memory");
    argv[0] = (char *)(r->java ? r->java : r->cmd[0]);
    argv[1] = (char *)agentpath;
    for (int i = skip; i < r->ncmd; i++)
        argv[i - skip + 2] = r->cmd[i];
    catch_while_waiting();
    pid_t pid;
    int err = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
    fx_free(argv);
    if (err != 0)
        return fx_cli_fail("cannot run '%s': %s", r->java ? r->java : r->cmd[0], strerror(err));
    child_pid = pid;
    int code = wait_child(pid);
    report_file(r->file, code);
    return code;
}

int fx_record_main(int argc, char **argv)
{
    struct record r = {0};
    int rc = parse_args(argc, argv, &r);
    if (rc < 0)
        return usage();
    if (rc != FX_CLI_OK)
        return rc;
    struct fx_errbuf eb = {{0}};
    char lib[PATH_MAX], agentpath[PATH_MAX + 2100];
    if (agent_arg(&r, "", agentpath, sizeof agentpath, &eb) != FX_OK ||
        fx_cli_find_agent(r.agent, lib, sizeof lib, &eb) != FX_OK ||
        agent_arg(&r, lib, agentpath, sizeof agentpath, &eb) != FX_OK)
        return fx_cli_fail("%s", eb.msg);
    return run(&r, agentpath);
}
