/* SPDX-License-Identifier: Apache-2.0 */
/* Writing profiles: meta (product, process, command line with secrets redacted, JVM, sampling
 * figures), file names (%p %t %n; every file written takes the next %n) and the file itself,
 * written safely by fx_ff_write_file. The model's owner fills meta (fx_dump_fill_meta); the
 * file is written from a snapshot by a dump or loop, or from the model itself at VM death, when
 * the drain has stopped and the VMDeath thread owns it. */
#include "fx_agent.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_ff_writer.h"
#include "fx_out_file.h"
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

static void set_meta(jvmtiEnv *jvmti, struct fx_profile *p, int64_t begin_ns, int64_t end_ns)
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
    fx_profile_set_range(p, begin_ns, end_ns);
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

void fx_dump_fill_meta(jvmtiEnv *jvmti, struct fx_profile *p, int64_t begin_ns, int64_t end_ns)
{
    set_meta(jvmti, p, begin_ns, end_ns);
    check_handler_kept(p);
    fx_validate_extra(jvmti, p);
}

static pthread_mutex_t seq_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned next_seq = 1;

/* file= a folder (one that exists, or a name ending in '/'): the profile goes inside it under
 * the default name. The operator said where; refusing at start would stop the application for a
 * slash, and accepting the folder and failing at exit would lose the profile. A name ending in
 * '/' whose folder does not exist goes to the fallback folder like any missing folder. */
static int into_folder(char *out, size_t cap, bool series, time_t when, unsigned seq)
{
    size_t n = strlen(out);
    struct stat st;
    if (n == 0 || (out[n - 1] != '/' && (stat(out, &st) != 0 || !S_ISDIR(st.st_mode))))
        return FX_OK;
    char pattern[64], name[256];
    if (series)
        fx_options_sequenced_pattern(FX_OPTIONS_DEFAULT_FILE, pattern, sizeof(pattern));
    else
        snprintf(pattern, sizeof(pattern), "%s", FX_OPTIONS_DEFAULT_FILE);
    if (fx_options_expand_path(pattern, getpid(), when, seq, name, sizeof(name)) != FX_OK)
        return FX_ERANGE;
    int w = snprintf(out + n, cap - n, "%s%s", out[n - 1] == '/' ? "" : "/", name);
    return w > 0 && (size_t)w < cap - n ? FX_OK : FX_ERANGE;
}

/* Expands the pattern with %n = seq; with `series` (loop=) the name always has %n. */
static int expand(const char *pattern, bool series, time_t when, unsigned seq, char *out,
                  size_t cap, struct fx_errbuf *eb)
{
    char seqd[4096];
    if (series && fx_options_sequenced_pattern(pattern, seqd, sizeof(seqd)) != FX_OK) {
        fx_errbuf_set(eb, "option 'file': the pattern is too long");
        return FX_ERANGE;
    }
    if (fx_options_expand_path(series ? seqd : pattern, getpid(), when, seq, out, cap) != FX_OK ||
        into_folder(out, cap, series, when, seq) != FX_OK) {
        fx_errbuf_set(eb, "option 'file': the expanded path is too long");
        return FX_ERANGE;
    }
    return FX_OK;
}

/* The name of the next file (it takes the next %n). */
static int file_name(const char *pattern, bool series, time_t when, unsigned *seq, char *out,
                     size_t cap, struct fx_errbuf *eb)
{
    pthread_mutex_lock(&seq_lock);
    *seq = next_seq++;
    pthread_mutex_unlock(&seq_lock);
    return expand(pattern, series, when, *seq, out, cap, eb);
}

void fx_dump_absolute(struct fx_options *o)
{
    char cwd[4096];
    /* A cwd that cannot be read (deleted) leaves the pattern relative: it still resolves. */
    fx_options_absolute_file(o, getcwd(cwd, sizeof(cwd)), getenv("HOME"));
}

int fx_dump_check_target(const char *pattern, bool series, struct fx_errbuf *eb)
{
    char path[4096], why[256], dir[4096];
    int rc = expand(pattern, series, time(NULL), 1, path, sizeof(path), eb);
    if (rc != FX_OK)
        return rc;
    if (fx_out_file_check(path, why, sizeof(why)) != FX_OK) {
        fx_errbuf_set(eb, "option 'file': %s: %s (give a file name, e.g. /tmp/app.json.gz)", path,
                      why);
        return FX_EINVAL;
    }
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return FX_OK; /* a device or FIFO is written in place: its folder does not matter */
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash == path ? 1 : slash - path) : 1,
             slash ? path : ".");
    if (access(dir, W_OK | X_OK) != 0)
        fx_agent_log("warning: option 'file': cannot write in %s (%s); unless that changes, the "
                     "profile will go to the fallback folder %s",
                     dir, strerror(errno), fx_out_file_fallback_dir());
    return FX_OK;
}

int fx_dump_write(const struct fx_profile *p, const char *pattern, bool series, time_t when,
                  struct fx_dump_result *out, struct fx_errbuf *eb)
{
    memset(out, 0, sizeof(*out));
    int64_t t0 = fx_agent_now_ns();
    int rc =
            file_name(pattern, series, when, &out->seq, out->requested, sizeof(out->requested), eb);
    if (rc == FX_OK)
        rc = fx_ff_write_file(p, out->requested, 0, &out->file, eb);
    out->samples = fx_profile_sample_count(p);
    out->threads = fx_profile_thread_count(p);
    out->ms = (double)(fx_agent_now_ns() - t0) / 1e6;
    return rc;
}

/* The fallback's words are fixed, "could not write X (reason); wrote Y instead": fxprof and
 * scripts look for "could not write" and "instead" to tell that the requested file was not
 * written (docs/PRODUCTION.md). */
void fx_dump_describe(const struct fx_dump_result *r, char *line, size_t cap)
{
    char copy[48] = "";
    if (r->copy_ms > 0)
        snprintf(copy, sizeof(copy), "; copied in %.0f ms", r->copy_ms);
    if (r->file.fell_back)
        snprintf(
                line, cap,
                "could not write %s (%s); wrote %s instead (%llu samples of %u threads, %llu bytes in %.0f ms%s)",
                r->requested, r->file.reason, r->file.path, (unsigned long long)r->samples,
                r->threads, r->file.bytes, r->ms, copy);
    else
        snprintf(line, cap, "wrote %llu samples of %u threads to %s (%llu bytes in %.0f ms%s)",
                 (unsigned long long)r->samples, r->threads, r->file.path, r->file.bytes, r->ms,
                 copy);
}

static void say_written(const struct fx_dump_result *r)
{
    char line[1024];
    fx_dump_describe(r, line, sizeof(line));
    if (r->file.fell_back)
        fx_agent_log("%s", line); /* always: the file is not where it was asked for */
    else if (!fx_ag.opt.quiet)
        fx_agent_log(
                "%s (open it at https://profiler.firefox.com: drag and drop the file; nothing is uploaded)",
                line);
}

/* VM death (the drain has stopped; this thread owns the model): the last file of the
 * recording. With loop= it is the last period's file, so it takes the next %n too. */
void fx_dump_at_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    struct fx_profile *p = fx_ag.profile;
    time_t when = fx_window_prepare(jvmti, jni, p, fx_ag.sampling_end_ns);
    struct fx_dump_result r;
    struct fx_errbuf eb = {{0}};
    if (fx_dump_write(p, fx_ag.opt.file, fx_ag.opt.loop_ns != 0, when, &r, &eb) != FX_OK) {
        fx_agent_log("no profile written: %s", eb.msg);
        return;
    }
    fx_markers_after_dump(p, r.file.path, r.file.bytes);
    say_written(&r);
}
