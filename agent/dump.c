/* SPDX-License-Identifier: Apache-2.0 */
/* The profile at VM death: meta (product, process, command line with secrets redacted, JVM,
 * sampling figures) and the file, written safely by fx_ff_write_file. The caller has stopped
 * sampling and the drain thread, so this thread owns the model. */
#include "fx_agent.h"

#include <ctype.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_ff_writer.h"
#include "fx_profile.h"

#define CMDLINE_MAX 8192

static char *property(jvmtiEnv *jvmti, const char *key)
{
    char *v = NULL;
    if ((*jvmti)->GetSystemProperty(jvmti, key, &v) != JVMTI_ERROR_NONE || v == NULL)
        return NULL;
    char *copy = fx_strdup(v);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)v);
    return copy;
}

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

static void set_meta(jvmtiEnv *jvmti, struct fx_profile *p)
{
    char *command = property(jvmti, "sun.java.command");
    char main[256] = "java", line[CMDLINE_MAX], buf[512];
    if (command != NULL && command[0] != '\0')
        main_name(command, main, sizeof(main));
    snprintf(buf, sizeof(buf), "fxagent: %s", main);
    fx_profile_set_meta(p, "product", buf);
    fx_profile_set_meta(p, "processName", main);
    command_line(line, sizeof(line));
    fx_profile_set_meta(p, "arguments", line);
    fx_profile_set_pid(p, getpid());
    fx_profile_set_interval(p, (double)fx_ag.opt.interval_ns / 1e6);
    fx_profile_set_range(p, fx_ag.sampling_begin_ns, fx_ag.sampling_end_ns);
    /* JVMTI sees only the VM's own properties (java.vm.*), not java.vendor or java.version. */
    static const char *const props[][2] = {
            {"java.vm.name", "VM"},
            {"java.vm.version", "VM version"},
            {"java.vm.vendor", "VM vendor"},
            {"java.vm.info", "VM info"},
    };
    for (size_t i = 0; i < sizeof(props) / sizeof(props[0]); i++) {
        char *v = property(jvmti, props[i][0]);
        if (v != NULL)
            fx_profile_extra_str(p, "JVM", props[i][1], v);
        fx_free(v);
    }
    fx_free(command);
}

/* JFR's CPU-time sampler (JDK 25) or the application may install SIGPROF after us. */
static void check_handler_kept(struct fx_profile *p)
{
    struct sigaction now;
    if (sigaction(SIGPROF, NULL, &now) == 0 && now.sa_sigaction != fx_signal_handler_on_sigprof) {
        fx_agent_log(
                "warning: another component replaced fxagent's SIGPROF handler during the run; samples after that are missing");
        fx_profile_extra_str(p, "Losses", "SIGPROF handler",
                             "replaced by another component during the run");
    }
}

static void say_written(const struct fx_ff_file_result *res, const char *requested)
{
    if (fx_ag.opt.quiet)
        return;
    if (fx_drain_over_memory() > 0)
        fx_agent_log(
                "warning: %llu samples were not recorded: the profile reached memory=%llu bytes",
                (unsigned long long)fx_drain_over_memory(),
                (unsigned long long)fx_ag.opt.memory_bytes);
    if (res->fell_back)
        fx_agent_log("could not write %s (%s); wrote the profile to %s instead", requested,
                     res->reason, res->path);
    fx_agent_log(
            "wrote %llu samples of %llu threads to %s (open it at https://profiler.firefox.com: drag and drop the file; nothing is uploaded)",
            (unsigned long long)fx_drain_samples(),
            (unsigned long long)fx_profile_thread_count(fx_ag.profile), res->path);
}

void fx_dump_at_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    (void)jni;
    struct fx_profile *p = fx_ag.profile;
    set_meta(jvmti, p);
    check_handler_kept(p);
    fx_drain_report(p);
    char path[4096];
    if (fx_options_expand_path(fx_ag.opt.file, getpid(), fx_ag.start_time, 0, path, sizeof(path)) !=
        FX_OK) {
        fx_agent_log("option 'file': the expanded path is too long; no profile written");
        return;
    }
    struct fx_ff_file_result res;
    struct fx_errbuf eb = {{0}};
    memset(&res, 0, sizeof(res));
    if (fx_ff_write_file(p, path, 0, &res, &eb) != FX_OK) {
        fx_agent_log("could not write the profile: %s", eb.msg);
        return;
    }
    say_written(&res, path);
}
