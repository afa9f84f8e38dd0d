/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof record -d DURATION PID|NAME: a timed profile of a running JVM, like `asprof -d`. It is
 * `fxprof start`, a wait, and `fxprof stop -o FILE` (control.c), so every check before a signal
 * is theirs (docs/RELIABILITY.md §9). NAME is resolved with list.c's scan. Ctrl-C during the wait
 * ends it early and the stop still writes what was taken; a second Ctrl-C during the stop
 * abandons it (130). On a terminal one progress line is redrawn (elapsed, samples so far, from
 * the agent's status); elsewhere nothing is drawn. */
#include "fxprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fx_alloc.h"

#define STATUS_EVERY_MS 2000 /* a status is one attach round trip: not more often */

/* The one JVM NAME designates, else a usage error listing the candidates. */
static int resolve(const char *operand, pid_t *pid, char *main, size_t cap)
{
    struct fx_errbuf eb = {{0}};
    if (operand[0] >= '0' && operand[0] <= '9') {
        snprintf(main, cap, "pid %s", operand);
        return fx_cli_parse_pid(operand, pid, &eb) == FX_OK ? FX_CLI_OK
                                                            : fx_cli_usage("record", "%s", eb.msg);
    }
    struct fx_jvm *v;
    size_t n, found = 0, at = 0;
    unsigned hidden;
    if (fx_jvm_scan(&v, &n, &hidden, &eb) != FX_OK)
        return fx_cli_fail("record: %s", eb.msg);
    char list[512] = "";
    for (size_t i = 0; i < n; i++) {
        if (!fx_jvm_matches(&v[i], operand))
            continue;
        size_t len = strlen(list);
        if (len < sizeof list - 2)
            snprintf(list + len, sizeof list - len, "%s%d (%s)", found ? ", " : "", (int)v[i].pid,
                     v[i].main);
        found++;
        at = i;
    }
    int rc = FX_CLI_OK;
    if (found == 1) {
        *pid = v[at].pid;
        snprintf(main, cap, "%s", v[at].main);
    } else if (found == 0) {
        rc = fx_cli_usage(
                "record",
                "no JVM of yours runs a main class or jar named '%s'%s (fxprof list shows them)",
                operand, hidden ? "; other users' JVMs are not visible" : "");
    } else {
        rc = fx_cli_usage("record", "'%s' matches %zu JVMs: %s; give the pid", operand, found,
                          list);
    }
    fx_free(v);
    return rc;
}

/* "... N samples taken ..." in the agent's status line. */
static long long samples_of(const char *status)
{
    const char *p = strstr(status, " samples taken");
    while (p && p > status && p[-1] >= '0' && p[-1] <= '9')
        p--;
    return p ? strtoll(p, NULL, 10) : -1;
}

static void progress(pid_t pid, int64_t elapsed, int64_t total, long long samples)
{
    fprintf(stderr, "\rfxprof: recording pid %d: %lld s of %lld s", (int)pid,
            (long long)(elapsed / 1000), (long long)(total / 1000));
    if (samples >= 0)
        fprintf(stderr, ", %lld samples", samples);
    fprintf(stderr, "\033[K");
}

/* Waits for the duration or a Ctrl-C; true when interrupted. */
static bool wait_duration(const struct fx_timed *t, pid_t pid, char *pidstr)
{
    bool tty = isatty(STDERR_FILENO);
    int64_t start = fx_cli_now_ms(), next_status = start + STATUS_EVERY_MS, now;
    long long samples = -1;
    char answer[1024];
    while (!fx_cli_interrupted() && (now = fx_cli_now_ms()) - start < t->duration_ms) {
        if (tty && now >= next_status) {
            char *argv[] = {"status", pidstr, "--agent", (char *)t->agent, NULL};
            answer[0] = '\0';
            if (fx_control_run(t->agent ? 4 : 2, argv, answer, sizeof answer) == FX_CLI_OK)
                samples = samples_of(answer);
            next_status = fx_cli_now_ms() + STATUS_EVERY_MS;
        }
        if (tty)
            progress(pid, now - start, t->duration_ms, samples);
        int64_t left = t->duration_ms - (fx_cli_now_ms() - start);
        fx_cli_sleep_ms(left < 1000 ? left : 1000);
    }
    bool early = fx_cli_interrupted();
    if (tty) {
        progress(pid, fx_cli_now_ms() - start, t->duration_ms, samples);
        fputc('\n', stderr);
    }
    if (early)
        fprintf(stderr,
                "fxprof: interrupted after %lld s of %lld s: stopping and writing what was taken (Ctrl-C again abandons it)\n",
                (long long)((fx_cli_now_ms() - start) / 1000), (long long)(t->duration_ms / 1000));
    fx_cli_clear_interrupt();
    return early;
}

int fx_record_timed(const struct fx_timed *t)
{
    pid_t pid;
    char main[256], pidstr[16];
    int rc = resolve(t->target, &pid, main, sizeof main);
    if (rc != FX_CLI_OK)
        return rc;
    snprintf(pidstr, sizeof pidstr, "%d", (int)pid);
    fx_cli_catch_interrupts();
    /* start: its checks run before anything is sent to the process */
    char *argv[16];
    int argc = 0;
    argv[argc++] = "start";
    argv[argc++] = pidstr;
    /* -o names the file in the start's own message too; stop names it again */
    const char *pairs[][2] = {{"-i", t->interval},
                              {"-m", t->mode},
                              {"--options", t->extra},
                              {"--agent", t->agent},
                              {"-o", strcmp(t->file, "-") ? t->file : NULL}};
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
        if (pairs[i][1]) {
            argv[argc++] = (char *)pairs[i][0];
            argv[argc++] = (char *)pairs[i][1];
        }
    argv[argc] = NULL;
    char answer[1024];
    rc = fx_control_run(argc, argv, answer, sizeof answer);
    if (rc != FX_CLI_OK)
        return rc;
    fprintf(stderr, "fxprof: recording pid %d (", (int)pid);
    fx_cli_put_escaped(stderr, main);
    if (t->duration_ms % 1000)
        fprintf(stderr, ") for %lld ms: ", (long long)t->duration_ms);
    else
        fprintf(stderr, ") for %lld s: ", (long long)(t->duration_ms / 1000));
    fx_cli_put_escaped(stderr, answer);
    fputc('\n', stderr);
    wait_duration(t, pid, pidstr);
    /* stop: writes the profile, to stdout for -o - */
    argc = 0;
    argv[argc++] = "stop";
    argv[argc++] = pidstr;
    argv[argc++] = "-o";
    argv[argc++] = (char *)t->file;
    if (t->agent) {
        argv[argc++] = "--agent";
        argv[argc++] = (char *)t->agent;
    }
    argv[argc] = NULL;
    rc = fx_control_run(argc, argv, NULL, 0);
    fflush(stdout);
    if (rc == FX_CLI_OK && t->open) {
        char *oargv[] = {"open", (char *)t->file, NULL};
        return fx_serve_main(2, oargv);
    }
    return rc;
}
