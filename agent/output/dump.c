/* SPDX-License-Identifier: Apache-2.0 */
/* Writing profiles: file names (%p %t %n; every file written takes the next %n) and the file
 * itself, written safely by fx_ff_write_file, from a snapshot (a dump, a stop, the loop) or
 * from the model itself at VM death, when the drain has stopped and the VMDeath thread owns
 * it. */
#include "output.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fx_out_file.h"

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

void fx_output_absolute(struct fx_options *o)
{
    char cwd[4096];
    /* A cwd that cannot be read (deleted) leaves the pattern relative: it still resolves. */
    fx_options_absolute_file(o, getcwd(cwd, sizeof(cwd)), getenv("HOME"));
}

int fx_output_check_target(const char *pattern, bool series, struct fx_errbuf *eb)
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
        fx_log("warning: option 'file': cannot write in %s (%s); unless that changes, the "
               "profile will go to the fallback folder %s",
               dir, strerror(errno), fx_out_file_fallback_dir());
    return FX_OK;
}

/* p: a snapshot or the model at VM death, this thread's own (sources= adds to it). */
static int write_file(struct fx_profile *p, const char *pattern, bool series, time_t when,
                      struct fx_dump_result *out, struct fx_errbuf *eb)
{
    memset(out, 0, sizeof(*out));
    int64_t t0 = fx_now_ns();
    struct fx_src_embed sources;
    fx_output_embed_begin(p, &sources);
    int rc =
            file_name(pattern, series, when, &out->seq, out->requested, sizeof(out->requested), eb);
    if (rc == FX_OK)
        rc = fx_ff_write_file(p, out->requested, 0, &out->file, eb);
    fx_output_embed_end(p, &sources, p == fx_model_profile()); /* VM death's is the last */
    fx_profile_totals(p, &out->totals);
    out->wall = fx_opt()->mode == FX_MODE_WALL;
    for (uint32_t i = 0; i < fx_profile_thread_count(p); i++) { /* the file's tracks */
        fx_thread_id th = {i};
        if (!fx_profile_thread_left_out(p, th)) {
            out->tracks++;
            out->threads += !fx_profile_thread_is_companion(p, th);
        }
    }
    out->ms = (double)(fx_now_ns() - t0) / 1e6;
    return rc;
}

/* The fallback's words are fixed, "could not write X (reason); wrote Y instead": fxprof and
 * scripts look for "could not write" and "instead" to tell that the requested file was not
 * written (docs/PRODUCTION.md). */
void fx_output_describe(const struct fx_dump_result *r, char *line, size_t cap)
{
    char copy[48] = "", views[160] = "";
    const struct fx_profile_totals *t = &r->totals;
    if (r->copy_ms > 0)
        snprintf(copy, sizeof(copy), "; copied in %.0f ms", r->copy_ms);
    /* the other views apart, as Profile Info's "Samples in this file" lists them */
    size_t n = 0;
    if (t->idle > 0)
        n += (size_t)snprintf(views + n, sizeof(views) - n, "%s%llu [idle]", n ? ", " : "",
                              (unsigned long long)t->idle);
    if (t->waits > 0 && n < sizeof(views))
        n += (size_t)snprintf(views + n, sizeof(views) - n, "%s%llu lock waits", n ? ", " : "",
                              (unsigned long long)t->waits);
    if (t->idle_waits > 0 && n < sizeof(views))
        n += (size_t)snprintf(views + n, sizeof(views) - n, "%s%llu idle waits", n ? ", " : "",
                              (unsigned long long)t->idle_waits);
    if (t->allocations > 0 && n < sizeof(views))
        n += (size_t)snprintf(views + n, sizeof(views) - n, "%s%llu allocation samples",
                              n ? ", " : "", (unsigned long long)t->allocations);
    /* a view's own tracks (lock waits, idle waits) are not threads: named apart, as summary's
     * "N tracks" counts them */
    char what[260], tracks[48] = "";
    if (r->tracks != r->threads)
        snprintf(tracks, sizeof(tracks), " (%u tracks)", r->tracks);
    snprintf(what, sizeof(what), "%llu %s samples%s%s%s of %u threads%s",
             (unsigned long long)t->cpu, r->wall ? "wall" : "CPU", n ? " (and " : "", views,
             n ? ")" : "", r->threads, tracks);
    if (r->file.fell_back)
        snprintf(line, cap,
                 "could not write %s (%s); wrote %s instead (%s, %llu bytes in %.0f ms%s)",
                 r->requested, r->file.reason, r->file.path, what, r->file.bytes, r->ms, copy);
    else
        snprintf(line, cap, "wrote %s to %s (%llu bytes in %.0f ms%s)", what, r->file.path,
                 r->file.bytes, r->ms, copy);
}

static void say_written(const struct fx_dump_result *r)
{
    char line[1024];
    fx_output_describe(r, line, sizeof(line));
    if (r->file.fell_back)
        fx_log("%s", line); /* always: the file is not where it was asked for */
    else if (!fx_opt()->quiet)
        fx_log("%s (open it at https://profiler.firefox.com: drag and drop the file; nothing is uploaded)",
               line);
}

/* Files are written one at a time (a command's, the loop's, VM death's), so at most one
 * snapshot exists besides the model. */
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t name_lock = PTHREAD_MUTEX_INITIALIZER; /* last_file: status reads it */
static char last_file[4096];

void fx_output_last_file(char *buf, size_t cap)
{
    pthread_mutex_lock(&name_lock);
    snprintf(buf, cap, "%s", last_file);
    pthread_mutex_unlock(&name_lock);
}

static int snapshot(const char *pattern, bool series, bool reset, struct fx_dump_result *res,
                    struct fx_errbuf *eb)
{
    struct fx_window_request r = {.kind = FX_WINDOW_SNAPSHOT, .reset = reset};
    int rc = fx_window_request(&r);
    if (rc != FX_OK) {
        memset(res, 0, sizeof(*res));
        fx_errbuf_set(eb, "%s",
                      rc == FX_ENOMEM ? "out of memory for the copy of the profile to write"
                                      : "the drain thread did not answer (is the JVM exiting?)");
        return rc;
    }
    rc = write_file(r.snapshot, pattern, series, r.period_time, res, eb);
    res->copy_ms = (double)r.copy_ns / 1e6;
    fx_profile_free(r.snapshot);
    if (rc == FX_OK) {
        struct fx_window_request after = {
                .kind = FX_WINDOW_AFTER_DUMP, .path = res->file.path, .bytes = res->file.bytes};
        fx_window_request(&after);
        /* not through the drain: at VM death it is gone, and the file would not be pushed */
        fx_output_push_written(res->file.path);
        pthread_mutex_lock(&name_lock);
        snprintf(last_file, sizeof(last_file), "%s", res->file.path);
        pthread_mutex_unlock(&name_lock);
    }
    return rc;
}

int fx_output_snapshot(const char *pattern, bool series, bool reset, struct fx_dump_result *res,
                       struct fx_errbuf *eb)
{
    pthread_mutex_lock(&write_lock);
    int rc = snapshot(pattern, series, reset, res, eb);
    pthread_mutex_unlock(&write_lock);
    return rc;
}

/* VM death (the drain has stopped; this thread owns the model): the last file of the
 * recording. With loop= it is the last period's file, so it takes the next %n too. */
static void at_death(JNIEnv *jni)
{
    struct fx_profile *p = fx_model_profile();
    time_t when = fx_window_prepare(jni, p, fx_rec()->sampling_end_ns);
    struct fx_dump_result r;
    struct fx_errbuf eb = {{0}};
    if (write_file(p, fx_opt()->file, fx_opt()->loop_ns != 0, when, &r, &eb) != FX_OK) {
        fx_log("no profile written: %s", eb.msg);
        return;
    }
    fx_sources_after_dump(p, r.file.path, r.file.bytes);
    fx_output_push_written(r.file.path);
    say_written(&r);
}

void fx_output_at_death(JNIEnv *jni)
{
    pthread_mutex_lock(&write_lock);
    at_death(jni);
    pthread_mutex_unlock(&write_lock);
}
