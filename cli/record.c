/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof record: runs a java command with -agentpath:libfxagent.so=... inserted right after the
 * launcher, waits for it and exits with its exit code (128 + N if signal N killed it). The
 * options are checked with the agent's own parser first, so a typo fails before the JVM
 * starts and reads exactly as the agent would have printed it. */
#include "fxprof.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_options.h"

extern char **environ;

struct record {
    const char *interval, *mode, *file, *extra, *agent, *java, *duration;
    bool open; /* --open: serve the profile to the Firefox Profiler afterwards */
    char default_file[64];
    char **cmd; /* the operands: [java] ARGS... */
    int ncmd;
    bool to_stdout;            /* -o -: java's stdout goes to stderr, the profile to stdout */
    char stdout_dir[PATH_MAX]; /* -o -: the private folder the agent writes into */
    char stdout_file[PATH_MAX + 32];
    struct stat before; /* the -o file before java ran (st_ino 0: absent) */
};

static volatile sig_atomic_t child_pid;

static int usage(void)
{
    printf("usage: fxprof record [options] [--] java ARGS...\n"
           "       fxprof record -d DURATION [options] PID|NAME\n"
           "Runs the java command with the fxagent profiler and exits with its exit code; with -d,\n"
           "profiles the running JVM PID (or the one whose main class or jar is NAME, see fxprof\n"
           "list) for DURATION, writes the profile and stops sampling, like asprof -d. Ctrl-C\n"
           "ends -d early and still writes what was taken. On a terminal -d redraws one progress\n"
           "line on stderr.\n"
           "  -d, --duration DURATION  profile a running JVM for DURATION: seconds (30, 1.5) or\n"
           "                           with a unit (500ms, 30s, 5m); a JVM still starting is\n"
           "                           waited for, up to 10 s\n"
           "  --open                   afterwards, serve the profile to profiler.firefox.com\n"
           "                           until Ctrl-C (fxprof open)\n"
           "  -o, --output FILE        profile to write, .json.gz or .json; %%p pid, %%t time\n"
           "                           (default: fxagent-%%p-%%t.json.gz in the JVM's directory)\n"
           "  -i, --interval DURATION  sampling period, 100us..10s (default 10ms)\n"
           "  -m, --mode MODE          cpu, itimer or wall (default cpu)\n"
           "  --options LIST           more agent options, e.g. depth=512,memory=128m\n"
           "  --agent PATH             libfxagent.so (default: $FXAGENT_LIB, else next to fxprof)\n"
           "  --java PATH              the java launcher; the operands are then only its arguments\n"
           "                           (not with -d)\n"
           "-o - writes the profile (gzip) to stdout once java has exited; java's own stdout then\n"
           "goes to stderr. The launcher must be a java: named java, or in a JDK's bin/ (for a\n"
           "script that runs java, set JAVA_TOOL_OPTIONS=-agentpath:... instead; --java PATH is\n"
           "taken as given).\n"
           "exit codes: java's own; 1 failed before java ran, 2 bad command line, 4 java exited 0\n"
           "but no new profile is at -o FILE (the agent's message says where it went); with -d\n"
           "those of fxprof start and stop: 0 written, 1 failed, 2 bad command line (also a NAME\n"
           "that matches no JVM or several), 4 written elsewhere, 130 interrupted during the stop\n"
           "example: fxprof record -o app.json.gz -i 1ms -- java -jar app.jar\n"
           "         fxprof record -d 30 -o app.json.gz app.jar\n");
    return FX_CLI_OK;
}

static int parse_args(int argc, char **argv, struct record *r)
{
    static const struct option longs[] = {
            {"output", required_argument, NULL, 'o'},   {"interval", required_argument, NULL, 'i'},
            {"mode", required_argument, NULL, 'm'},     {"options", required_argument, NULL, 'x'},
            {"agent", required_argument, NULL, 'a'},    {"java", required_argument, NULL, 'j'},
            {"duration", required_argument, NULL, 'd'}, {"open", no_argument, NULL, 'O'},
            {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
    int o;
    optind = 0;
    /* '+': options end at the java command, whose own options must not be taken as ours. */
    while ((o = getopt_long(argc, argv, "+:o:i:m:d:h", longs, NULL)) != -1) {
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
        case 'd':
            r->duration = optarg;
            break;
        case 'O':
            r->open = true;
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
    r->to_stdout = r->file && !strcmp(r->file, "-");
    if (r->open && r->to_stdout)
        return fx_cli_usage("record", "--open serves a file: it cannot go with -o -");
    if (r->file && strchr(r->file, '%') && (r->open || r->duration))
        return fx_cli_usage("record", "-o '%s': %s needs a plain file name (no %% pattern)",
                            r->file, r->duration ? "-d" : "--open");
    if (r->duration && r->java)
        return fx_cli_usage("record", "--java runs a new JVM; -d profiles a running one");
    if (r->duration && r->ncmd != 1)
        return fx_cli_usage("record",
                            "-d takes exactly one PID or NAME (a main class or jar), got %d",
                            r->ncmd);
    if (r->duration)
        return r->to_stdout && isatty(STDOUT_FILENO)
                       ? fx_cli_usage("record",
                                      "-o -: stdout is a terminal; redirect it to a file or a pipe")
                       : FX_CLI_OK;
    if (!r->java && r->ncmd == 0)
        return fx_cli_usage("record",
                            "no java command given (e.g. fxprof record -- java -jar app.jar)");
    if (!r->java && r->cmd[0][0] == '-')
        return fx_cli_usage(
                "record",
                "'%s' is not a java command: the first operand must be the launcher (or use --java PATH)",
                r->cmd[0]);
    if (r->to_stdout && isatty(STDOUT_FILENO))
        return fx_cli_usage("record",
                            "-o -: stdout is a terminal; redirect it to a file or a pipe");
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
    (void)code;
    if (file && !strchr(file, '%') && stat(file, &st) == 0 && S_ISREG(st.st_mode))
        fprintf(stderr, "fxprof: profile %s (%lld bytes); view it with: fxprof open %s\n", file,
                (long long)st.st_size, file);
}

/* ---- is it a java launcher? ---- */

/* `name` as posix_spawnp would find it, canonical; false if there is no such executable. */
static bool resolve(const char *name, char *out)
{
    if (strchr(name, '/'))
        return realpath(name, out) && access(out, X_OK) == 0;
    const char *path = getenv("PATH");
    for (const char *p = path && *path ? path : "/usr/bin:/bin"; p;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char cand[PATH_MAX];
        if (snprintf(cand, sizeof cand, "%.*s/%s", (int)len, len ? p : ".", name) <
                    (int)sizeof cand &&
            realpath(cand, out) && access(out, X_OK) == 0) {
            struct stat st;
            if (stat(out, &st) == 0 && S_ISREG(st.st_mode))
                return true;
        }
        p = end ? end + 1 : NULL;
    }
    return false;
}

static bool exists_rel(const char *dir, const char *rel)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return access(p, F_OK) == 0;
}

/* A java launcher is named java (after every symlink, as /usr/bin/java -> /etc/alternatives
 * -> .../bin/java is), or sits in a JDK's bin/ next to the launcher library: JDK 9+ lib/libjli.so,
 * JDK 8 lib/amd64/jli or jre/lib/amd64/jli. Anything else would get -agentpath as its first
 * argument, which `ls` or a shell script takes for its own option. */
static int check_launcher(const char *given, struct fx_errbuf *eb)
{
    char real[PATH_MAX];
    if (!resolve(given, real)) {
        fx_errbuf_set(eb, "cannot run '%s': no such executable%s", given,
                      strchr(given, '/') ? "" : " in PATH");
        return FX_ENOTFOUND;
    }
    const char *base = strrchr(real, '/') + 1;
    const char *gbase = strrchr(given, '/') ? strrchr(given, '/') + 1 : given;
    if (!strcmp(base, "java") || !strcmp(gbase, "java"))
        return FX_OK;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s..", (int)(base - real), real);
    if (exists_rel(dir, "lib/libjli.so") || exists_rel(dir, "lib/amd64/jli/libjli.so") ||
        exists_rel(dir, "jre/lib/amd64/jli/libjli.so") || exists_rel(dir, "release"))
        return FX_OK;
    fx_errbuf_set(
            eb,
            "'%s' (%s) is not a java launcher: give java and its arguments (fxprof record -- java -jar app.jar); for a script that runs java, set JAVA_TOOL_OPTIONS=-agentpath:<libfxagent.so>=... instead",
            given, real);
    return FX_EINVAL;
}

/* ---- -o - and the check that the profile arrived ---- */

static int stdout_prepare(struct record *r, struct fx_errbuf *eb)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(r->stdout_dir, sizeof r->stdout_dir, "%s/fxprof-%d-XXXXXX",
             tmp && *tmp == '/' ? tmp : "/tmp", (int)getpid());
    if (!mkdtemp(r->stdout_dir)) {
        fx_errbuf_set(eb, "-o -: cannot create a folder in %s: %s",
                      tmp && *tmp == '/' ? tmp : "/tmp", strerror(errno));
        r->stdout_dir[0] = '\0';
        return FX_EIO;
    }
    snprintf(r->stdout_file, sizeof r->stdout_file, "%s/profile.json.gz", r->stdout_dir);
    r->file = r->stdout_file;
    return FX_OK;
}

static void stdout_cleanup(struct record *r)
{
    if (!r->stdout_dir[0])
        return;
    unlink(r->stdout_file);
    rmdir(r->stdout_dir);
    r->stdout_dir[0] = '\0';
}

static int copy_profile(const char *path)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return FX_CLI_FALLBACK;
    signal(SIGPIPE, SIG_IGN);
    return fx_cli_copy_to_stdout(fd, path);
}

/* The agent writes into a folder under its default name, fxagent-PID-TIME[-N].json.gz. */
static bool profile_in_folder(const char *dir, pid_t pid)
{
    char prefix[32];
    snprintf(prefix, sizeof(prefix), "fxagent-%d-", (int)pid);
    DIR *d = opendir(dir);
    bool found = false;
    for (struct dirent *e = d ? readdir(d) : NULL; e != NULL && !found; e = readdir(d))
        found = strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return found;
}

/* A new file at -o: absent before, or another inode or time now (the agent renames a new
 * file into place); for a folder, a file of this JVM's inside it. Patterns (%p, %t, %n) cannot
 * be checked. */
static bool profile_arrived(const struct record *r, pid_t pid)
{
    struct stat st;
    size_t len = strlen(r->file);
    if ((len > 0 && r->file[len - 1] == '/') || (stat(r->file, &st) == 0 && S_ISDIR(st.st_mode)))
        return profile_in_folder(r->file, pid);
    if (stat(r->file, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    return r->before.st_ino == 0 || st.st_ino != r->before.st_ino ||
           st.st_dev != r->before.st_dev || st.st_mtim.tv_sec != r->before.st_mtim.tv_sec ||
           st.st_mtim.tv_nsec != r->before.st_mtim.tv_nsec;
}

static int run(struct record *r, const char *agentpath)
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
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (r->to_stdout) /* stdout carries the profile alone */
        posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
    int err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    fx_free(argv);
    if (err != 0)
        return fx_cli_fail("cannot run '%s': %s", r->java ? r->java : r->cmd[0], strerror(err));
    child_pid = pid;
    int code = wait_child(pid);
    bool checkable = r->file && !strchr(r->file, '%');
    if (checkable && !profile_arrived(r, pid)) {
        fprintf(stderr,
                "fxprof: java exited with %d and wrote no profile at %s (see the fxagent lines above)\n",
                code, r->to_stdout ? "-o -" : r->file);
        return code == 0 ? FX_CLI_FALLBACK : code;
    }
    if (r->to_stdout) {
        int rc = copy_profile(r->file);
        return rc != FX_CLI_OK ? rc : code;
    }
    report_file(r->file, code);
    if (r->open && code == 0) {
        char *oargv[] = {"open", (char *)r->file, NULL};
        return fx_serve_main(2, oargv);
    }
    return code;
}

/* A name fxprof knows in advance (-d and --open need one): fxagent-[PID-]YYYYmmdd-HHMMSS. */
static void default_name(struct record *r, const char *pid)
{
    time_t now = time(NULL);
    struct tm tm;
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime_r(&now, &tm));
    snprintf(r->default_file, sizeof r->default_file, "fxagent-%s%s%s.json.gz", pid ? pid : "",
             pid ? "-" : "", stamp);
    r->file = r->default_file;
}

static int timed(struct record *r)
{
    struct fx_errbuf eb = {{0}};
    struct fx_timed t = {.target = r->cmd[0],
                         .interval = r->interval,
                         .mode = r->mode,
                         .extra = r->extra,
                         .agent = r->agent,
                         .file = r->file,
                         .open = r->open};
    if (fx_cli_parse_timeout("-d", r->duration, &t.duration_ms, &eb) != FX_OK)
        return fx_cli_usage("record", "%s", eb.msg);
    if (!t.file) {
        default_name(r, r->cmd[0][0] >= '0' && r->cmd[0][0] <= '9' ? r->cmd[0] : NULL);
        t.file = r->file;
    }
    return fx_record_timed(&t);
}

int fx_record_main(int argc, char **argv)
{
    struct record r = {0};
    int rc = parse_args(argc, argv, &r);
    if (rc < 0)
        return usage();
    if (rc != FX_CLI_OK)
        return rc;
    if (r.duration)
        return timed(&r);
    if (r.open && !r.file)
        default_name(&r, NULL);
    struct fx_errbuf eb = {{0}};
    char lib[PATH_MAX], agentpath[PATH_MAX + 2100];
    /* --java is the way to name a launcher that is not called java: it is taken as given. */
    rc = r.java ? FX_OK : check_launcher(r.cmd[0], &eb);
    if (rc == FX_EINVAL)
        return fx_cli_usage("record", "%s", eb.msg);
    if (rc != FX_OK)
        return fx_cli_fail("%s", eb.msg);
    if ((r.to_stdout && stdout_prepare(&r, &eb) != FX_OK) ||
        agent_arg(&r, "", agentpath, sizeof agentpath, &eb) != FX_OK ||
        fx_cli_find_agent(r.agent, lib, sizeof lib, &eb) != FX_OK ||
        agent_arg(&r, lib, agentpath, sizeof agentpath, &eb) != FX_OK) {
        stdout_cleanup(&r);
        return fx_cli_fail("%s", eb.msg);
    }
    if (r.file && stat(r.file, &r.before) != 0)
        memset(&r.before, 0, sizeof r.before);
    int code = run(&r, agentpath);
    stdout_cleanup(&r);
    return code;
}
