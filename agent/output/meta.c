/* SPDX-License-Identifier: Apache-2.0 */
/* A profile's meta, a step before each dump (fx_output_meta_step): product, process, the
 * command line with secrets redacted, the JVM, the sampling interval and range, and whether
 * our SIGPROF handler stayed installed. */
#include "output.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fx_alloc.h"

#define CMDLINE_MAX 8192

/* True for a key=value word whose key names a secret (password, token, secret, key). */
static bool is_secret(const char *word, size_t len)
{
    const char *eq = memchr(word, '=', len);
    if (eq == NULL)
        return false;
    char key[256];
    size_t k = (size_t)(eq - word) < sizeof(key) - 1 ? (size_t)(eq - word) : sizeof(key) - 1;
    for (size_t i = 0; i < k; i++)
        key[i] = (char)tolower((unsigned char)word[i]);
    key[k] = '\0';
    return strstr(key, "password") || strstr(key, "passwd") || strstr(key, "token") ||
           strstr(key, "secret") || strstr(key, "key");
}

/* Appends `word` to out, replacing a secret's value by "***". */
static void append_word(char *out, size_t cap, const char *word, size_t len)
{
    size_t n = strlen(out);
    if (n > 0 && n + 1 < cap)
        out[n++] = ' ';
    size_t keep =
            is_secret(word, len) ? (size_t)((const char *)memchr(word, '=', len) - word) + 1 : len;
    int w = snprintf(out + n, cap - n, "%.*s%s", (int)keep, word, keep < len ? "***" : "");
    (void)w;
}

/* The process's own command line (JVM options included), from /proc/self/cmdline. */
static void command_line(char *out, size_t cap)
{
    out[0] = '\0';
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[CMDLINE_MAX];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    for (ssize_t i = 0; i < n;) {
        size_t len = strnlen(buf + i, (size_t)(n - i));
        append_word(out, cap, buf + i, len);
        i += (ssize_t)len + 1;
    }
}

/* "com.example.Main arg" -> "com.example.Main"; "/x/app.jar arg" -> "app.jar". */
static void main_name(const char *command, char *out, size_t cap)
{
    size_t len = strcspn(command, " ");
    const char *slash = memrchr(command, '/', len);
    const char *start = slash != NULL ? slash + 1 : command;
    snprintf(out, cap, "%.*s", (int)(len - (size_t)(start - command)), start);
}

static void set_meta(struct fx_profile *p, int64_t begin_ns, int64_t end_ns)
{
    char *command = fx_property("sun.java.command");
    char main[256] = "java", line[CMDLINE_MAX], buf[512];
    if (command != NULL && command[0] != '\0')
        main_name(command, main, sizeof(main));
    snprintf(buf, sizeof(buf), "fxagent: %s", main);
    fx_profile_set_meta(p, "product", buf);
    fx_profile_set_meta(p, "processName", main);
    command_line(line, sizeof(line));
    fx_profile_set_meta(p, "arguments", line);
    fx_profile_set_pid(p, getpid());
    fx_profile_set_interval(p, (double)fx_opt()->interval_ns / 1e6);
    fx_profile_set_range(p, begin_ns, end_ns);
    /* JVMTI sees only the VM's own properties (java.vm.*), not java.vendor or java.version. */
    static const char *const props[][2] = {
            {"java.vm.name", "VM"},
            {"java.vm.version", "VM version"},
            {"java.vm.vendor", "VM vendor"},
            {"java.vm.info", "VM info"},
            /* Where `fxprof sources` finds the JDK's lib/src.zip and the application's jars. */
            {"java.home", "java.home"},
            {"java.class.path", "java.class.path"},
    };
    for (size_t i = 0; i < sizeof(props) / sizeof(props[0]); i++) {
        char *v = fx_property(props[i][0]);
        if (v != NULL)
            fx_profile_extra_str(p, "JVM", props[i][1], v);
        fx_free(v);
    }
    /* Relative class path entries are relative to it (the process's, as the JVM has no
     * property for it before System.initProperties). */
    char cwd[4096];
    if (getcwd(cwd, sizeof(cwd)) != NULL)
        fx_profile_extra_str(p, "JVM", "working directory", cwd);
    /* The host, for fleet outputs (OTLP's host.name, docs/FLEET.md): a file converted
     * elsewhere still names the machine it was recorded on. */
    char host[256];
    if (gethostname(host, sizeof(host)) == 0) {
        host[sizeof(host) - 1] = '\0';
        fx_profile_extra_str(p, "JVM", "host", host);
    }
    fx_free(command);
}

/* JFR's CPU-time sampler (JDK 25) or the application may install SIGPROF after us. */
static void check_handler_kept(struct fx_profile *p)
{
    if (!fx_sampling_handler_kept()) {
        fx_log("warning: another component replaced fxagent's SIGPROF handler during the run; samples after that are missing");
        fx_profile_extra_str(p, "Losses", "SIGPROF handler",
                             "replaced by another component during the run");
    }
}

static void meta_before_dump(JNIEnv *jni, struct fx_profile *p, const struct fx_span *span)
{
    (void)jni;
    set_meta(p, span->begin_ns, span->end_ns);
    check_handler_kept(p);
}

const struct fx_source fx_output_meta_step = {.name = "meta", .before_dump = meta_before_dump};
