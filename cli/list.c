/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof list: the local HotSpot JVMs, as jps shows them but from /proc alone: a process is a
 * JVM when it maps libjvm.so executable (proc.c); its main class and JDK version come from its
 * hsperfdata (sun.rt.javaCommand, java.property.java.version), else from its command line; the
 * agent is loaded when fxagent is mapped, and whether it samples or was stopped is the OS name
 * of its drain thread (fx_agent_state.h; its threads and perf_event fds outlive a stop).
 * Reads files only: nothing is signalled or attached, so listing cannot disturb a JVM. */
#include "fxprof.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_args.h"
#include "fx_agent_state.h"
#include "fx_alloc.h"
#include "fx_json.h"

static int usage(void)
{
    printf("usage: fxprof list [--json]\n"
           "Lists the HotSpot JVMs of this machine that fxprof may inspect (yours; all as root):\n"
           "pid, user, JDK version, fxagent's state and the main class or jar. FXAGENT is - (not\n"
           "loaded), loaded (not started), sampling or stopped. Reads /proc and the JVMs'\n"
           "hsperfdata only: no JVM is signalled or attached to (more: fxprof status PID).\n"
           "  --json   one JSON array on stdout\n"
           "exit codes: 0 listed (also when there is none), 1 failed, 2 bad command line\n");
    return FX_CLI_OK;
}

/* ---- one process ---- */

static bool read_small(const char *path, char *buf, size_t cap, size_t *len)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    *len = fread(buf, 1, cap - 1, f);
    buf[*len] = '\0';
    fclose(f);
    return true;
}

static void copy(char *out, size_t cap, const char *s)
{
    size_t l = strnlen(s, cap - 1);
    memcpy(out, s, l);
    out[l] = '\0';
}

/* The main class, jar or source file from the command line: the first operand after the
 * launcher's options (-jar names the jar; -cp and the like take a value); "?" if unreadable. */
static void main_from_cmdline(pid_t pid, char *out, size_t cap)
{
    static const char *const with_value[] = {
            "-cp",           "-classpath",  "--class-path",  "-p",          "--module-path",
            "--add-modules", "--add-opens", "--add-exports", "--add-reads", "-d"};
    char path[64], buf[8192];
    size_t len;
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    snprintf(out, cap, "?");
    if (!read_small(path, buf, sizeof buf, &len))
        return;
    size_t i = strlen(buf) + 1; /* past argv[0] */
    while (i < len) {
        const char *a = buf + i;
        i += strlen(a) + 1;
        bool takes = false;
        for (size_t k = 0; k < sizeof with_value / sizeof *with_value; k++)
            takes |= !strcmp(a, with_value[k]);
        if (!strcmp(a, "-jar") || !strcmp(a, "-m") || !strcmp(a, "--module")) {
            if (i < len)
                copy(out, cap, buf + i);
            return;
        }
        if (takes) {
            i += i < len ? strlen(buf + i) + 1 : 0;
            continue;
        }
        if (a[0] != '-') {
            copy(out, cap, a);
            return;
        }
    }
}

static void owner(pid_t pid, struct fx_jvm *j)
{
    char path[64], buf[4096];
    size_t len;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    const char *uid = read_small(path, buf, sizeof buf, &len) ? strstr(buf, "\nUid:") : NULL;
    j->uid = uid ? (uid_t)strtoul(uid + 5, NULL, 10) : (uid_t)-1;
    struct passwd *pw = uid ? getpwuid(j->uid) : NULL;
    if (pw)
        snprintf(j->user, sizeof j->user, "%s", pw->pw_name);
    else
        snprintf(j->user, sizeof j->user, "%u", (unsigned)j->uid);
}

static bool is_java_comm(pid_t pid)
{
    char path[64], comm[64];
    size_t len;
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    return read_small(path, comm, sizeof comm, &len) && !strcmp(comm, "java\n");
}

/* The agent's state from its drain thread's OS name (fx_agent_state.h): "loaded" until a
 * start names it, and when the tasks cannot be read. */
static const char *agent_state(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    const char *state = "loaded";
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
        char comm_path[96], comm[32];
        size_t len;
        if (e->d_name[0] == '.')
            continue;
        snprintf(comm_path, sizeof comm_path, "/proc/%d/task/%.16s/comm", (int)pid, e->d_name);
        if (!read_small(comm_path, comm, sizeof comm, &len))
            continue;
        comm[strcspn(comm, "\n")] = '\0';
        if (!strcmp(comm, FX_STATE_COMM_SAMPLING) || !strcmp(comm, FX_STATE_COMM_STOPPED)) {
            state = !strcmp(comm, FX_STATE_COMM_SAMPLING) ? "sampling" : "stopped";
            break;
        }
    }
    if (d)
        closedir(d);
    return state;
}

/* 1: a JVM (j filled), 0: not one, -1: its maps cannot be read. */
static int inspect(pid_t pid, struct fx_jvm *j)
{
    struct fx_proc_maps m;
    struct fx_errbuf eb = {{0}};
    int rc = fx_proc_read_maps(pid, NULL, &m, &eb);
    if (rc != FX_OK)
        return rc == FX_ENOTFOUND ? 0 : -1;
    if (!m.libjvm)
        return 0;
    memset(j, 0, sizeof *j);
    j->pid = pid;
    j->agent = m.agent;
    j->state = m.agent ? agent_state(pid) : "-";
    owner(pid, j);
    char cmd[1024];
    /* /proc's command line first: its arguments are NUL-separated, where hsperfdata's command
     * joins them with spaces and so cuts a path that holds one (a checkout in "/tmp/ci s4"). An
     * @argfile operand, or a command line we may not read, leaves it to hsperfdata. */
    main_from_cmdline(pid, j->main, sizeof j->main);
    bool from_cmdline = strcmp(j->main, "?") != 0 && j->main[0] != '@';
    if (!from_cmdline &&
        fx_proc_perf_string(pid, m.perfdata, "sun.rt.javaCommand", cmd, sizeof cmd)) {
        /* "MAIN ARGS...", where the source launcher's MAIN is the javac launcher and the
         * program is its first argument, the .java file */
        size_t first = strcspn(cmd, " ");
        bool source = strstr(cmd, ".javac.launcher.") && cmd[first] == ' ';
        const char *prog = source ? cmd + first + 1 : cmd;
        copy(j->main, sizeof j->main, prog);
        j->main[strcspn(j->main, " ")] = '\0';
    }
    if (!j->main[0])
        snprintf(j->main, sizeof j->main, "?");
    if (!fx_proc_perf_string(pid, m.perfdata, "java.property.java.version", j->jdk, sizeof j->jdk))
        snprintf(j->jdk, sizeof j->jdk, "?");
    return 1;
}

static int by_pid(const void *a, const void *b)
{
    const struct fx_jvm *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

int fx_jvm_scan(struct fx_jvm **out, size_t *n, unsigned *hidden, struct fx_errbuf *eb)
{
    DIR *d = opendir("/proc");
    if (!d) {
        fx_errbuf_set(eb, "cannot read /proc: is it mounted?");
        return FX_EIO;
    }
    size_t cap = 16;
    struct fx_jvm *v = fx_calloc(cap, sizeof *v);
    *n = 0;
    *hidden = 0;
    for (struct dirent *e = readdir(d); v && e; e = readdir(d)) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == getpid())
            continue;
        if (*n == cap) {
            struct fx_jvm *nv = fx_reallocarray(v, cap * 2, sizeof *v);
            if (!nv) {
                fx_free(v);
                v = NULL;
                break;
            }
            v = nv;
            cap *= 2;
        }
        int r = inspect((pid_t)pid, &v[*n]);
        if (r > 0)
            (*n)++;
        else if (r < 0 && is_java_comm((pid_t)pid))
            (*hidden)++;
    }
    closedir(d);
    if (!v) {
        fx_errbuf_set(eb, "out of memory listing the JVMs");
        return FX_ENOMEM;
    }
    qsort(v, *n, sizeof *v, by_pid);
    *out = v;
    return FX_OK;
}

bool fx_jvm_matches(const struct fx_jvm *j, const char *name)
{
    const char *m = j->main, *slash = strrchr(m, '/'), *dot = strrchr(m, '.');
    const char *base = slash ? slash + 1 : m;
    size_t bl = strlen(base), nl = strlen(name);
    if (!*name || !strcmp(m, "?"))
        return false;
    if (!strcmp(m, name) || !strcmp(base, name))
        return true;
    /* app.jar or App.java typed without its extension */
    if (bl > nl && base[nl] == '.' && !strncmp(base, name, nl) &&
        (!strcmp(base + nl, ".jar") || !strcmp(base + nl, ".java")))
        return true;
    /* com.example.App typed as App */
    return !slash && dot && !strcmp(dot + 1, name);
}

/* ---- output ---- */

/* A JVM's own text (its command line may hold any bytes) as valid UTF-8: JSON readers decode
 * strictly, and one JVM's bytes must not make the whole list unreadable. */
static void add_text(cJSON *o, const char *key, const char *s)
{
    char buf[3 * sizeof((struct fx_jvm *)0)->main + 1];
    fx_json_sanitize_utf8(s, strlen(s), buf, sizeof buf);
    cJSON_AddStringToObject(o, key, buf);
}

static int print_json(const struct fx_jvm *v, size_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(arr, o);
        cJSON_AddNumberToObject(o, "pid", v[i].pid);
        add_text(o, "main", v[i].main);
        add_text(o, "jdk", v[i].jdk);
        add_text(o, "user", v[i].user);
        cJSON_AddNumberToObject(o, "uid", v[i].uid);
        cJSON_AddBoolToObject(o, "agentLoaded", v[i].agent);
        if (v[i].agent)
            cJSON_AddStringToObject(o, "agentState", v[i].state);
        else
            cJSON_AddNullToObject(o, "agentState");
    }
    char *text = arr ? cJSON_Print(arr) : NULL;
    cJSON_Delete(arr);
    if (!text)
        return fx_cli_fail("list: out of memory");
    puts(text);
    cJSON_free(text);
    return FX_CLI_OK;
}

static void print_table(const struct fx_jvm *v, size_t n)
{
    printf("%-8s %-12s %-12s %-8s %s\n", "PID", "USER", "JDK", "FXAGENT", "MAIN");
    for (size_t i = 0; i < n; i++) {
        printf("%-8d %-12s ", (int)v[i].pid, v[i].user);
        fx_cli_put_escaped(stdout, v[i].jdk);
        printf("%*s %-8s ", (int)(12 - (strlen(v[i].jdk) < 12 ? strlen(v[i].jdk) : 12)), "",
               v[i].state);
        fx_cli_put_escaped(stdout, v[i].main); /* the JVM's own text: escaped */
        printf("\n");
    }
}

int fx_list_main(int argc, char **argv)
{
    static const struct option longs[] = {
            {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    bool json = false;
    int o;
    optind = 0;
    while ((o = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        if (o == 'j') {
            json = true;
            continue;
        }
        int rc = fx_cli_opt_rest("list", o, argv);
        return rc < 0 ? usage() : rc;
    }
    if (optind != argc)
        return fx_cli_usage("list", "takes no operand ('%s')", argv[optind]);
    struct fx_jvm *v;
    size_t n;
    unsigned hidden;
    struct fx_errbuf eb = {{0}};
    if (fx_jvm_scan(&v, &n, &hidden, &eb) != FX_OK)
        return fx_cli_fail("list: %s", eb.msg);
    int rc = FX_CLI_OK;
    if (json)
        rc = print_json(v, n);
    else
        print_table(v, n);
    fx_free(v);
    if (hidden)
        fprintf(stderr,
                "fxprof: list: %u java process%s of other users not shown (their /proc maps are not readable to you; run as root)\n",
                hidden, hidden == 1 ? "" : "es");
    return rc == FX_CLI_OK && fflush(stdout) != 0 ? fx_cli_fail("list: cannot write the output")
                                                  : rc;
}
