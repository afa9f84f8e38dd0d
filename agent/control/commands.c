/* SPDX-License-Identifier: Apache-2.0 */
/* The commands of the attach listener (one at a time): start, stop, dump and status, each
 * checked against the recording's state, run as one sequence of lifecycle.c or output/, and
 * answered with one outcome line. Files are written one at a time (output/), so at most one
 * snapshot exists besides the model. No application thread ever takes the lifecycle lock: the
 * signal path takes none, and ThreadStart/ThreadEnd only take the thread registry's. */
#include "control.h"

#include "fx_alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

bool fx_commands_active(void)
{
    return fx_lifecycle_state() != FX_ST_IDLE;
}

int fx_outcome_set(struct fx_outcome *out, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->text, sizeof(out->text), fmt, ap);
    va_end(ap);
    out->code = code;
    return code;
}

bool fx_option_given(const char *text, const char *key)
{
    size_t klen = strlen(key);
    for (const char *p = text; p != NULL && *p != '\0';) {
        size_t len = strcspn(p, ",");
        if (len >= klen && !strncmp(p, key, klen) && (len == klen || p[klen] == '='))
            return true;
        p = p[len] == ',' ? p + len + 1 : NULL;
    }
    return false;
}

static void fmt_duration(char *buf, size_t cap, uint64_t ns)
{
    if (ns % 1000000000 == 0)
        snprintf(buf, cap, "%llus", (unsigned long long)(ns / 1000000000));
    else if (ns % 1000000 == 0)
        snprintf(buf, cap, "%llums", (unsigned long long)(ns / 1000000));
    else
        snprintf(buf, cap, "%lluus", (unsigned long long)(ns / 1000));
}

/* --- start --- */

/* The opt-in views on, as ", lock waits of 10ms+, allocations sampled every N bytes" (issue 30:
 * a start says what it records, so an option that was not taken would show). */
static void describe_views(char *buf, size_t cap)
{
    const struct fx_options *o = fx_opt();
    char d[32];
    size_t n = 0;
    buf[0] = '\0';
    if (o->lock_ns) {
        fmt_duration(d, sizeof(d), o->lock_ns);
        n += (size_t)snprintf(buf + n, cap - n, ", lock waits of %s+", d);
    }
    if (o->alloc_bytes && n < cap)
        snprintf(buf + n, cap - n, ", allocations sampled every %llu bytes",
                 (unsigned long long)o->alloc_bytes);
}

static void describe_start(struct fx_outcome *out, const char *verb)
{
    char iv[32], loop[64] = "", views[160];
    struct fx_threads_stats st;
    fx_threads_stats(&st);
    fmt_duration(iv, sizeof(iv), fx_opt()->interval_ns);
    if (fx_opt()->loop_ns) {
        char d[32];
        fmt_duration(d, sizeof(d), fx_opt()->loop_ns);
        snprintf(loop, sizeof(loop), ", a profile every %s", d);
    }
    char engine[320];
    fx_engine_name(engine, sizeof(engine));
    describe_views(views, sizeof(views));
    fx_outcome_set(
            out, FX_RC_OK,
            "%s: %s, interval %s, %llu threads sampled, memory bound %llu MiB%s%s; profile file %s",
            verb, engine, iv, (unsigned long long)st.registered,
            (unsigned long long)(fx_opt()->memory_bytes >> 20), loop, views, fx_opt()->file);
}

/* A JVM that runs without the agent: the recording takes o's options (and owns their
 * strings from here, but reply=). */
static int start_fresh(JavaVM *vm, struct fx_options *o, struct fx_outcome *out)
{
    struct fx_errbuf eb = {{0}};
    struct fx_options *opt = &fx_rec_edit()->opt;
    char *reply = o->reply;
    *opt = *o;
    opt->reply = NULL;
    memset(o, 0, sizeof(*o));
    o->reply = reply;
    if (fx_lifecycle_start_fresh(vm, &eb) != FX_OK)
        return fx_outcome_set(out, FX_RC_FAILED, "could not start: %s", eb.msg);
    describe_start(out, "started");
    return FX_RC_OK;
}

/* The recording's options after a start with options o (`text` as given): an option given
 * again takes its new value, the others keep the previous start's. Strings are not copied. */
static struct fx_options next_options(const struct fx_options *o, const char *text)
{
    struct fx_options n = *fx_opt();
    if (fx_option_given(text, "mode"))
        n.mode = o->mode;
    if (fx_option_given(text, "engine"))
        n.engine = o->engine;
    if (fx_option_given(text, "interval"))
        n.interval_ns = o->interval_ns;
    if (fx_option_given(text, "depth")) {
        n.depth = o->depth;
        n.depth_cut = o->depth_cut;
    }
    if (fx_option_given(text, "ring"))
        n.ring_bytes = o->ring_bytes;
    if (fx_option_given(text, "markers"))
        n.markers = o->markers;
    if (fx_option_given(text, "validate"))
        n.validate = true;
    if (fx_option_given(text, "loop"))
        n.loop_ns = o->loop_ns;
    if (fx_option_given(text, "memory"))
        n.memory_bytes = o->memory_bytes;
    if (fx_option_given(text, "quiet"))
        n.quiet = true;
    if (fx_option_given(text, "cstack"))
        n.cstack = o->cstack;
    /* The views (issue 30): each source reads its option at every start. */
    if (fx_option_given(text, "alloc"))
        n.alloc_bytes = o->alloc_bytes;
    if (fx_option_given(text, "lock"))
        n.lock_ns = o->lock_ns;
    if (fx_option_given(text, "lockowner"))
        n.lockowner = o->lockowner;
    if (fx_option_given(text, "vtwait"))
        n.vtwait_ns = o->vtwait_ns;
    if (fx_option_given(text, "vtracks"))
        n.vtracks = o->vtracks;
    if (fx_option_given(text, "kstack"))
        n.kstack = o->kstack;
    /* push= (issue 33): the files written from here go where, as what, the new start says
     * (output/push.c copies them as it queues each file); the strings in take_options. */
    if (fx_option_given(text, "push_format"))
        n.push_format = o->push_format;
    return n;
}

static void swap_str(char **a, char **b)
{
    char *t = *a;
    *a = *b;
    *b = t; /* the old one is freed with o, unless it is the default pattern */
}

/* Takes the new options: numbers as next_options says, strings from o. */
static void take_options(struct fx_options *o, const struct fx_options *next)
{
    struct fx_options *opt = &fx_rec_edit()->opt;
    char *file = opt->file, *report = opt->validate_report;
    *opt = *next;
    opt->file = file;
    opt->validate_report = report;
    if (o->file_set)
        swap_str(&opt->file, &o->file);
    if (o->validate_report != NULL)
        swap_str(&opt->validate_report, &o->validate_report);
    if (o->push != NULL)
        swap_str(&opt->push, &o->push);
    if (o->service != NULL)
        swap_str(&opt->service, &o->service);
    if (o->labels != NULL)
        swap_str(&opt->labels, &o->labels);
    if (o->sources != NULL)
        swap_str(&opt->sources, &o->sources);
}

/* STOPPED -> RUNNING: a new recording, with every option a first start takes (the engines, the
 * buffers and the validator are built again). Checked first: a refused start changes nothing. */
static int restart(JavaVM *vm, struct fx_options *o, const char *text, struct fx_outcome *out)
{
    struct fx_options next = next_options(o, text);
    struct fx_errbuf eb = {{0}};
    int rc = fx_sampling_check_options(&next, &eb);
    if (rc == FX_OK && next.validate)
        rc = fx_validate_check(&eb);
    if (rc != FX_OK)
        return fx_outcome_set(out, rc == FX_ERANGE ? FX_RC_USAGE : FX_RC_FAILED,
                              "could not start: %s", eb.msg);
    JNIEnv *jni = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK)
        return fx_outcome_set(out, FX_RC_FAILED,
                              "could not start: no JNI environment on the attach thread");
    take_options(o, &next);
    if (fx_lifecycle_restart(jni, &eb) != FX_OK)
        return fx_outcome_set(out, FX_RC_FAILED, "could not start: %s", eb.msg);
    describe_start(out, "started again");
    return FX_RC_OK;
}

static int cmd_start(JavaVM *vm, struct fx_options *o, const char *text, struct fx_outcome *out)
{
    char engine[320];
    switch (fx_lifecycle_state()) {
    case FX_ST_IDLE:
        return start_fresh(vm, o, out);
    case FX_ST_STOPPED:
        return restart(vm, o, text, out);
    case FX_ST_RUNNING:
        fx_engine_name(engine, sizeof(engine));
        return fx_outcome_set(out, FX_RC_STATE,
                              "already running (%s, file %s): use status, dump or stop", engine,
                              fx_opt()->file);
    default:
        return fx_outcome_set(out, FX_RC_STATE, "the JVM is shutting down");
    }
}

/* --- stop, dump --- */

static const char *target(const struct fx_options *o)
{
    return o->file_set ? o->file : fx_opt()->file;
}

static int write_outcome(struct fx_outcome *out, const char *verb, int rc,
                         const struct fx_dump_result *res, const struct fx_errbuf *eb)
{
    if (rc != FX_OK)
        return fx_outcome_set(out, FX_RC_FAILED, "%s, but no profile was written: %s", verb,
                              eb->msg);
    char line[1100];
    fx_output_describe(res, line, sizeof(line));
    return fx_outcome_set(out, FX_RC_OK, "%s; %s", verb, line);
}

static int cmd_stop(const struct fx_options *o, struct fx_outcome *out)
{
    enum fx_state s = fx_lifecycle_state();
    if (s != FX_ST_RUNNING)
        return fx_outcome_set(out, FX_RC_STATE, "not running (%s)", fx_lifecycle_state_name(s));
    fx_lifecycle_stop();
    struct fx_dump_result res;
    struct fx_errbuf eb = {{0}};
    int rc =
            fx_output_snapshot(target(o), fx_opt()->loop_ns != 0 && !o->file_set, false, &res, &eb);
    fx_lifecycle_stopped_idle();
    if (rc == FX_OK) /* else the model stays, for a dump to retry */
        fx_lifecycle_written(res.file.path, true);
    return write_outcome(out, "stopped", rc, &res, &eb);
}

static int cmd_dump(const struct fx_options *o, struct fx_outcome *out)
{
    enum fx_state s = fx_lifecycle_state();
    if (s != FX_ST_RUNNING && s != FX_ST_STOPPED)
        return fx_outcome_set(out, FX_RC_STATE, "nothing to dump (%s)", fx_lifecycle_state_name(s));
    bool by_stop;
    const char *written = fx_lifecycle_written_to(&by_stop);
    if (written != NULL) /* its model was freed once written */
        return fx_outcome_set(out, FX_RC_STATE,
                              "nothing to dump: the recording was written %s %s; start again to "
                              "record",
                              by_stop ? "at stop to" : "after its stop to", written);
    bool reset = o->reset && s == FX_ST_RUNNING;
    struct fx_dump_result res;
    struct fx_errbuf eb = {{0}};
    int rc =
            fx_output_snapshot(target(o), fx_opt()->loop_ns != 0 && !o->file_set, reset, &res, &eb);
    if (rc == FX_OK && s == FX_ST_STOPPED) /* the retry of a stop's failed write */
        fx_lifecycle_written(res.file.path, false);
    return write_outcome(out,
                         s == FX_ST_STOPPED ? "dumped the stopped recording"
                         : reset            ? "dumped and reset (sampling goes on)"
                                            : "dumped (sampling goes on)",
                         rc, &res, &eb);
}

/* --- status --- */

static int cmd_status(struct fx_outcome *out)
{
    enum fx_state s = fx_lifecycle_state();
    if (s == FX_ST_IDLE)
        return fx_outcome_set(out, FX_RC_OK, "not started in this JVM (use start)");
    struct fx_window_request r = {.kind = FX_WINDOW_STATUS};
    if (fx_window_request(&r) != FX_OK)
        return fx_outcome_set(out, FX_RC_FAILED, "%s, but the drain thread did not answer",
                              fx_lifecycle_state_name(s));
    const struct fx_window_status *st = &r.status;
    int64_t until = s == FX_ST_STOPPED ? fx_lifecycle_stopped_ns() : fx_now_ns();
    char iv[32], loop[32] = "off", engine[320], last[4096];
    fmt_duration(iv, sizeof(iv), fx_opt()->interval_ns);
    if (fx_opt()->loop_ns)
        fmt_duration(loop, sizeof(loop), fx_opt()->loop_ns);
    fx_engine_name(engine, sizeof(engine));
    fx_output_last_file(last, sizeof(last));
    struct fx_alloc_usage use;
    fx_alloc_usage(&use); /* what the agent holds, whatever the JVM's RSS does */
    /* The whole process's malloc: with NMT's count of the JVM's, it shows what neither counts. */
    size_t m_use, m_sys;
    char procmalloc[96] = "process malloc n/a";
    if (fx_alloc_process_malloc(&m_use, &m_sys))
        snprintf(procmalloc, sizeof(procmalloc), "process malloc %zu KiB in use of %zu KiB",
                 m_use / 1024, m_sys / 1024);
    char pushmem[96] = ""; /* push=: within its share of memory= (output/push.c) */
    if (fx_opt()->push != NULL) {
        size_t now, peak;
        fx_output_push_memory(&now, &peak);
        snprintf(pushmem, sizeof(pushmem), ", push %zu KiB now (at most %zu KiB)", now / 1024,
                 peak / 1024);
    }
    char idle[64] = ""; /* a stopped agent sends itself no signal: this says so */
    if (s == FX_ST_STOPPED)
        snprintf(idle, sizeof(idle), "; %llu signals since the stop",
                 (unsigned long long)fx_lifecycle_signals_since_stop());
    return fx_outcome_set(
            out, FX_RC_OK,
            "%s for %.1f s: %s, interval %s, %llu samples taken (%llu in memory), %u threads (%u tracks held by the model), %llu ring drops, memory %.1f of %.1f MiB (tables %.1f MiB, rings %.1f MiB), %llu dropped by the bound, %llu method ids cached, loop %s, agent heap %zu KiB in %zu blocks and %zu KiB of pages (unwind tables %llu KiB)%s, %s, file %s%s%s%s",
            fx_lifecycle_state_name(s), (double)(until - fx_rec()->sampling_begin_ns) / 1e9, engine,
            iv, (unsigned long long)st->samples, (unsigned long long)st->held, st->threads,
            st->tracks, (unsigned long long)st->drops, (double)st->memory / 1048576.0,
            (double)st->bound / 1048576.0, (double)st->tables / 1048576.0,
            (double)st->ring_bytes / 1048576.0, (unsigned long long)st->dropped,
            (unsigned long long)st->methods, loop, use.heap_bytes / 1024, use.blocks,
            use.pages_bytes / 1024, (unsigned long long)(fx_native_unwind_bytes() / 1024), pushmem,
            procmalloc, fx_opt()->file, last[0] ? ", last written " : "", last, idle);
}

/* --- entry point --- */

int fx_commands_run(JavaVM *vm, struct fx_options *o, const char *text, struct fx_outcome *out)
{
    struct fx_errbuf eb = {{0}};
    bool series = o->action == FX_ACTION_START && o->loop_ns != 0; /* dump, stop: as given */
    if (o->file_set || o->action == FX_ACTION_START)
        fx_output_absolute(o);
    if (o->file_set && fx_output_check_target(o->file, series, &eb) != FX_OK)
        return fx_outcome_set(out, FX_RC_USAGE, "%s", eb.msg);
    if (o->sources != NULL && fx_output_check_sources(o->sources, &eb) != FX_OK)
        return fx_outcome_set(out, FX_RC_USAGE, "%s", eb.msg);
    fx_lifecycle_lock();
    int rc;
    if (fx_lifecycle_state() == FX_ST_DEAD)
        rc = fx_outcome_set(out, FX_RC_STATE, "the JVM is shutting down");
    else if (o->action == FX_ACTION_START)
        rc = cmd_start(vm, o, text, out);
    else if (o->action == FX_ACTION_STOP)
        rc = cmd_stop(o, out);
    else if (o->action == FX_ACTION_DUMP)
        rc = cmd_dump(o, out);
    else
        rc = cmd_status(out);
    fx_lifecycle_unlock();
    return rc;
}
