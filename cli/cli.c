/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by fxprof's subcommands: one-line errors, pids, durations, interrupts, random
 * names and where libfxagent.so is. */
#include "fxprof.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "fx_clock.h"
#include "fx_options.h"

static volatile sig_atomic_t interrupted;

/* The length of the valid UTF-8 sequence at s that is not a C1 control (U+0080..U+009F, which
 * some terminals obey like ESC), else 0. */
static size_t utf8_printable(const unsigned char *s)
{
    size_t n = s[0] >= 0xc2 && s[0] <= 0xdf   ? 2
               : s[0] >= 0xe0 && s[0] <= 0xef ? 3
               : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4
                                              : 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((n == 2 && s[0] == 0xc2 && s[1] < 0xa0) || (n == 3 && s[0] == 0xe0 && s[1] < 0xa0) ||
        (n == 4 && s[0] == 0xf0 && s[1] < 0x90) || (n == 4 && s[0] == 0xf4 && s[1] >= 0x90))
        return 0; /* C1 controls, overlong forms, beyond U+10FFFF */
    return n;
}

void fx_cli_put_escaped(FILE *to, const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    while (*s) {
        size_t n = *s >= 0x20 && *s < 0x7f ? 1 : *s >= 0x80 ? utf8_printable(s) : 0;
        if (n > 0) {
            fwrite(s, 1, n, to);
            s += n;
            continue;
        }
        if (*s == '\n' || *s == '\t' || *s == '\r')
            fprintf(to, "\\%c", *s == '\n' ? 'n' : *s == '\t' ? 't' : 'r');
        else
            fprintf(to, "\\x%02x", *s);
        s++;
    }
}

__attribute__((format(printf, 2, 0))) static void vfail(const char *prefix, const char *fmt,
                                                        va_list ap, const char *suffix)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    /* One line by contract, and nothing a terminal would obey: a path, a thread name or a JVM
     * message may bring line breaks or escape sequences in. */
    fputs("fxprof: ", stderr);
    fx_cli_put_escaped(stderr, prefix);
    fx_cli_put_escaped(stderr, msg);
    fx_cli_put_escaped(stderr, suffix);
    fputc('\n', stderr);
}

int fx_cli_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail("", fmt, ap, "");
    va_end(ap);
    return FX_CLI_FAIL;
}

int fx_cli_usage(const char *cmd, const char *fmt, ...)
{
    char prefix[64], suffix[80];
    snprintf(prefix, sizeof prefix, "%s: ", cmd);
    snprintf(suffix, sizeof suffix, " (see 'fxprof %s --help')", cmd);
    va_list ap;
    va_start(ap, fmt);
    vfail(prefix, fmt, ap, suffix);
    va_end(ap);
    return FX_CLI_USAGE;
}

bool fx_cli_is_help(const char *arg)
{
    return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}

int fx_cli_parse_pid(const char *s, pid_t *out, struct fx_errbuf *eb)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (s[0] < '0' || s[0] > '9' || *end || errno || v <= 0 || v > INT_MAX) {
        fx_errbuf_set(eb, "'%s' is not a process id (a whole number > 0)", s);
        return FX_EINVAL;
    }
    *out = (pid_t)v;
    return FX_OK;
}

int fx_cli_parse_timeout(const char *what, const char *s, int64_t *ms, struct fx_errbuf *eb)
{
    static const char digits[] = "0123456789";
    uint64_t ns;
    char ms_text[32];
    const char *text = s;
    /* A bare number is seconds, as asprof -d and sleep(1) read it: 3, 1.5, 0.25 (to the ms). */
    size_t whole = strspn(s, digits), frac = s[whole] == '.' ? strspn(s + whole + 1, digits) : 0;
    if (whole > 0 && whole < 16 &&
        (!s[whole] || (frac >= 1 && frac <= 3 && !s[whole + 1 + frac]))) {
        snprintf(ms_text, sizeof ms_text, "%.*s%.*s%.*sms", (int)whole, s, (int)frac, s + whole + 1,
                 (int)(3 - frac), "000");
        text = ms_text;
    }
    int rc = fx_options_parse_duration(text, &ns);
    if (rc == FX_OK && (ns < 1000000 || ns / 1000000 > INT64_MAX / 2))
        rc = FX_ERANGE;
    if (rc != FX_OK) {
        fx_errbuf_set(
                eb,
                "%s: '%s' is not a duration of at least 1ms (seconds, e.g. 30 or 1.5, or with a unit: 500ms, 30s, 10m)",
                what, s);
        return rc;
    }
    *ms = (int64_t)(ns / 1000000);
    return FX_OK;
}

int64_t fx_cli_now_ms(void)
{
    return fx_clock_ns(CLOCK_MONOTONIC) / 1000000;
}

void fx_cli_sleep_ms(int64_t ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
    if (!interrupted)
        nanosleep(&ts, NULL); /* EINTR ends it early, which is the point */
}

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

void fx_cli_catch_interrupts(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

bool fx_cli_interrupted(void)
{
    return interrupted != 0;
}

void fx_cli_clear_interrupt(void)
{
    interrupted = 0;
}

int fx_cli_copy_to_stdout(int fd, const char *path)
{
    char buf[65536];
    ssize_t n;
    int ret = FX_CLI_OK;
    while (ret == FX_CLI_OK && (n = read(fd, buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR && !fx_cli_interrupted())
            continue;
        if (n < 0)
            ret = fx_cli_fail("-o -: reading %s: %s", path, strerror(errno));
        for (ssize_t off = 0, w; ret == FX_CLI_OK && off < n; off += w)
            if ((w = write(STDOUT_FILENO, buf + off, (size_t)(n - off))) < 0 && errno != EINTR)
                ret = fx_cli_fail("-o -: writing to stdout: %s", strerror(errno));
            else if (w < 0)
                w = 0;
    }
    close(fd);
    return ret;
}

int fx_cli_random_hex(char *out, size_t cap, size_t n, struct fx_errbuf *eb)
{
    unsigned char raw[64];
    if (n > sizeof raw || cap < 2 * n + 1) {
        fx_errbuf_set(eb, "internal: random name of %zu bytes does not fit", n);
        return FX_ERANGE;
    }
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(raw + got, n - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            fx_errbuf_set(eb, "getrandom: %s", strerror(errno));
            return FX_EIO;
        }
        got += (size_t)r;
    }
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    return FX_OK;
}

/* Canonical absolute path of an existing regular file, or FX_ENOTFOUND. */
static int canonical_file(const char *path, char *out, size_t cap)
{
    char real[PATH_MAX];
    if (!realpath(path, real) || access(real, R_OK) != 0 || strlen(real) >= cap)
        return FX_ENOTFOUND;
    strcpy(out, real);
    return FX_OK;
}

static int next_to_binary(char *out, size_t cap, struct fx_errbuf *eb)
{
    static const char *const rel[] = {"../agent/libfxagent.so", "../lib/libfxagent.so"};
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        fx_errbuf_set(eb, "cannot find libfxagent.so: /proc/self/exe: %s; pass --agent PATH",
                      strerror(errno));
        return FX_ENOTFOUND;
    }
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    char cand[2][PATH_MAX + 32];
    for (int i = 0; i < 2; i++) {
        snprintf(cand[i], sizeof cand[i], "%s/%s", exe, rel[i]);
        if (canonical_file(cand[i], out, cap) == FX_OK)
            return FX_OK;
    }
    fx_errbuf_set(
            eb,
            "cannot find libfxagent.so (looked for %s and %s); pass --agent PATH or set FXAGENT_LIB",
            cand[0], cand[1]);
    return FX_ENOTFOUND;
}

int fx_cli_find_agent(const char *given, char *out, size_t cap, struct fx_errbuf *eb)
{
    const char *env = getenv("FXAGENT_LIB");
    const char *path = given ? given : (env && *env ? env : NULL);
    if (!path)
        return next_to_binary(out, cap, eb);
    if (canonical_file(path, out, cap) != FX_OK) {
        fx_errbuf_set(eb, "%s '%s': no such readable file", given ? "--agent" : "FXAGENT_LIB",
                      path);
        return FX_ENOTFOUND;
    }
    return FX_OK;
}
