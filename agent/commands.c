/* SPDX-License-Identifier: Apache-2.0 */
/* The recording's life and the commands that drive it: IDLE (loaded, nothing started) ->
 * RUNNING <-> STOPPED -> DEAD (VM death). start, stop, dump and status come from the attach
 * listener (one at a time), periodic dumps from the loop thread, the end from VMDeath. State
 * changes happen under cmd_lock; files are written under write_lock, one at a time, so at most
 * one snapshot exists besides the model. No application thread ever takes either lock: the
 * signal path takes none, and ThreadStart/ThreadEnd only take the thread registry's. */
#include "fx_agent.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fx_profile.h"

enum state {
    ST_IDLE,
    ST_RUNNING,
    ST_STOPPED,
    ST_DEAD
};

static const char *const state_names[] = {"not started", "running", "stopped", "shutting down"};

/* Recursive: a start by attach holds it while VMInit's sequence calls fx_commands_started. */
static pthread_mutex_t cmd_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;
static int state; /* enum state; atomic so fx_commands_active reads it without the lock */
static int64_t stopped_ns;
static pthread_mutex_t name_lock = PTHREAD_MUTEX_INITIALIZER; /* last_file: status reads it */
static char last_file[4096];

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond; /* CLOCK_MONOTONIC, set up in loop_start */
    bool running, stop;
} lp = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void set_state(enum state s)
{
    __atomic_store_n(&state, (int)s, __ATOMIC_RELEASE);
}

static enum state get_state(void)
{
    return (enum state)__atomic_load_n(&state, __ATOMIC_ACQUIRE);
}

bool fx_commands_active(void)
{
    return get_state() != ST_IDLE;
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

/* --- writing a file from a snapshot --- */

/* Under write_lock. The snapshot is taken by the drain between two passes; the file is then
 * written here while the drain goes on. */
static int write_snapshot(const char *pattern, bool series, bool reset, struct fx_dump_result *res,
                          struct fx_errbuf *eb)
{
    struct fx_window_request r = {.kind = FX_WINDOW_SNAPSHOT, .reset = reset};
    int rc = fx_window_request(&r);
    if (rc != FX_OK) {
        fx_errbuf_set(eb, "%s",
                      rc == FX_ENOMEM ? "out of memory for the copy of the profile to write"
                                      : "the drain thread did not answer (is the JVM exiting?)");
        return rc;
    }
    rc = fx_dump_write(r.snapshot, pattern, series, r.period_time, res, eb);
    res->copy_ms = (double)r.copy_ns / 1e6;
    fx_profile_free(r.snapshot);
    if (rc == FX_OK) {
        struct fx_window_request after = {
                .kind = FX_WINDOW_AFTER_DUMP, .path = res->file.path, .bytes = res->file.bytes};
        fx_window_request(&after);
        pthread_mutex_lock(&name_lock);
        snprintf(last_file, sizeof(last_file), "%s", res->file.path);
        pthread_mutex_unlock(&name_lock);
    }
    return rc;
}

/* --- the loop thread --- */

static void loop_dump(void)
{
    struct fx_dump_result res;
    struct fx_errbuf eb = {{0}};
    pthread_mutex_lock(&write_lock);
    int rc = write_snapshot(fx_ag.opt.file, true, true, &res, &eb);
    pthread_mutex_unlock(&write_lock);
    char line[1200];
    if (rc != FX_OK) {
        fx_agent_log("loop: no profile written for this period: %s", eb.msg);
        return;
    }
    fx_dump_describe(&res, line, sizeof(line));
    if (res.file.fell_back || !fx_ag.opt.quiet)
        fx_agent_log("loop: %s", line);
}

static bool loop_wait(const struct timespec *until)
{
    pthread_mutex_lock(&lp.lock);
    while (!lp.stop && pthread_cond_timedwait(&lp.cond, &lp.lock, until) == 0)
        ;
    bool go_on = !lp.stop;
    pthread_mutex_unlock(&lp.lock);
    return go_on;
}

/* Deadlines are start + k * loop on the monotonic clock: a slow dump does not shift the
 * periods that follow it. */
static void JNICALL loop_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
    (void)jvmti, (void)jni, (void)arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (;;) {
        uint64_t ns = (uint64_t)next.tv_nsec + fx_ag.opt.loop_ns;
        next.tv_sec += (time_t)(ns / 1000000000);
        next.tv_nsec = (long)(ns % 1000000000);
        if (!loop_wait(&next))
            break;
        loop_dump();
    }
    pthread_mutex_lock(&lp.lock);
    lp.running = false;
    pthread_cond_broadcast(&lp.cond);
    pthread_mutex_unlock(&lp.lock);
}

static void loop_start(JNIEnv *jni)
{
    static bool cond_ready;
    if (fx_ag.opt.loop_ns == 0)
        return;
    if (!cond_ready) {
        pthread_condattr_t a;
        pthread_condattr_init(&a);
        pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
        pthread_cond_init(&lp.cond, &a);
        pthread_condattr_destroy(&a);
        cond_ready = true;
    }
    lp.stop = false;
    lp.running = true;
    if (fx_agent_run_thread(jni, "fxagent loop", loop_main, NULL) != FX_OK) {
        lp.running = false;
        fx_agent_log("loop: the loop thread could not start: no periodic profiles");
    }
}

/* Waits for a file being written to be complete. */
static void loop_stop(void)
{
    pthread_mutex_lock(&lp.lock);
    lp.stop = true;
    if (lp.running)
        pthread_cond_broadcast(&lp.cond);
    while (lp.running)
        pthread_cond_wait(&lp.cond, &lp.lock);
    pthread_mutex_unlock(&lp.lock);
}

/* --- start --- */

void fx_commands_started(JNIEnv *jni)
{
    pthread_mutex_lock(&cmd_lock);
    set_state(ST_RUNNING);
    loop_start(jni);
    pthread_mutex_unlock(&cmd_lock);
}

static JNIEnv *jni_of(JavaVM *vm)
{
    JNIEnv *jni = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK)
        return NULL;
    return jni;
}

static void describe_start(struct fx_outcome *out, const char *verb)
{
    char iv[32], loop[64] = "";
    struct fx_threads_stats st;
    fx_threads_stats(&st);
    fmt_duration(iv, sizeof(iv), fx_ag.opt.interval_ns);
    if (fx_ag.opt.loop_ns) {
        char d[32];
        fmt_duration(d, sizeof(d), fx_ag.opt.loop_ns);
        snprintf(loop, sizeof(loop), ", a profile every %s", d);
    }
    fx_outcome_set(
            out, FX_RC_OK,
            "%s: %s, interval %s, %llu threads sampled, memory bound %llu MiB%s; profile file %s",
            verb, fx_timer_engine_name(), iv, (unsigned long long)st.registered,
            (unsigned long long)(fx_ag.opt.memory_bytes >> 20), loop, fx_ag.opt.file);
}

/* A JVM that runs without the agent: everything Agent_OnLoad and VMInit would have done. */
static int start_fresh(JavaVM *vm, struct fx_options *o, struct fx_outcome *out)
{
    struct fx_errbuf eb = {{0}};
    char *reply = o->reply;
    fx_ag.opt = *o; /* the agent owns the options' strings from here, but reply= */
    fx_ag.opt.reply = NULL;
    memset(o, 0, sizeof(*o));
    o->reply = reply;
    fx_agent_record_start();
    fx_ag.live_start = true;
    fx_threads_scan_begin(); /* before ThreadEnd can be enabled (threads.c) */
    if (fx_agent_setup(vm, &eb) != FX_OK)
        return fx_outcome_set(out, FX_RC_FAILED, "could not start: %s", eb.msg);
    JNIEnv *jni = jni_of(vm);
    if (jni == NULL)
        return fx_outcome_set(out, FX_RC_FAILED,
                              "could not start: no JNI environment on the attach thread");
    fx_agent_vm_init(fx_ag.jvmti, jni, NULL);
    if (fx_ag.profile == NULL)
        return fx_outcome_set(out, FX_RC_FAILED, "could not start: out of memory for the profile");
    fx_agent_log(
            "warning: attached to a running JVM: code compiled before now has debug information at safepoints only, so its inlined frames may be attributed to their caller (start the JVM with -agentpath for full detail)");
    describe_start(out, "started");
    return FX_RC_OK;
}

/* Options that the sampling engines and rings were built with. */
static const char *const fixed_keys[] = {"mode", "engine", "interval", "depth", "ring"};

static bool fixed_differs(const struct fx_options *o, const char *key)
{
    const struct fx_options *c = &fx_ag.opt;
    if (!strcmp(key, "mode"))
        return o->mode != c->mode;
    if (!strcmp(key, "engine"))
        return o->engine != c->engine;
    if (!strcmp(key, "interval"))
        return o->interval_ns != c->interval_ns;
    if (!strcmp(key, "depth"))
        return o->depth != c->depth;
    return o->ring_bytes != c->ring_bytes;
}

/* Options given again take their new value; the others keep the previous start's. */
static void take_options(struct fx_options *o, const char *text)
{
    if (o->file_set) {
        char *old = fx_ag.opt.file;
        fx_ag.opt.file = o->file;
        o->file = old; /* freed with o, unless it is the default pattern */
    }
    if (fx_attach_given(text, "loop"))
        fx_ag.opt.loop_ns = o->loop_ns;
    if (fx_attach_given(text, "memory"))
        fx_ag.opt.memory_bytes = o->memory_bytes;
    if (fx_attach_given(text, "quiet"))
        fx_ag.opt.quiet = true;
}

/* STOPPED -> RUNNING: the same engines, a new recording (the model's samples are reset). */
static int restart(JavaVM *vm, struct fx_options *o, const char *text, struct fx_outcome *out)
{
    for (size_t i = 0; i < sizeof(fixed_keys) / sizeof(fixed_keys[0]); i++) {
        if (fx_attach_given(text, fixed_keys[i]) && fixed_differs(o, fixed_keys[i]))
            return fx_outcome_set(
                    out, FX_RC_USAGE,
                    "option '%s' cannot change after the first start in this JVM (the sampling engines keep it); start again without it",
                    fixed_keys[i]);
    }
    JNIEnv *jni = jni_of(vm);
    if (jni == NULL)
        return fx_outcome_set(out, FX_RC_FAILED,
                              "could not start: no JNI environment on the attach thread");
    take_options(o, text);
    fx_agent_record_start();
    fx_ag.live_start = true;
    fx_ag.sampling_begin_ns = fx_ag.start_ns;
    struct fx_window_request r = {
            .kind = FX_WINDOW_RESTART, .begin_ns = fx_ag.start_ns, .bound = fx_ag.opt.memory_bytes};
    if (fx_window_request(&r) != FX_OK)
        return fx_outcome_set(out, FX_RC_FAILED,
                              "could not start: the drain thread did not answer");
    fx_threads_scan_begin();
    __atomic_store_n(&fx_sig.read_cpu_clock,
                     fx_ag.opt.mode != FX_MODE_CPU || fx_timer_excludes_kernel(),
                     __ATOMIC_RELAXED); /* published by the release store below */
    __atomic_store_n(&fx_sig.enabled, 1, __ATOMIC_RELEASE);
    fx_threads_resume_all();
    fx_threads_start_existing(fx_ag.jvmti, jni);
    if (fx_timer_start(jni) != FX_OK)
        fx_agent_log("the %s engine could not start again: no samples will be taken",
                     fx_ag.opt.mode == FX_MODE_WALL ? "wall" : "itimer");
    set_state(ST_RUNNING);
    loop_start(jni);
    describe_start(out, "started again");
    return FX_RC_OK;
}

static int cmd_start(JavaVM *vm, struct fx_options *o, const char *text, struct fx_outcome *out)
{
    switch (get_state()) {
    case ST_IDLE:
        return start_fresh(vm, o, out);
    case ST_STOPPED:
        return restart(vm, o, text, out);
    case ST_RUNNING:
        return fx_outcome_set(out, FX_RC_STATE,
                              "already running (%s, file %s): use status, dump or stop",
                              fx_timer_engine_name(), fx_ag.opt.file);
    default:
        return fx_outcome_set(out, FX_RC_STATE, "the JVM is shutting down");
    }
}

/* --- stop, dump --- */

/* After sampling stopped, a handler that had passed the enabled check may still be writing
 * its record: give it a moment before the drain's last pass. */
#define IN_FLIGHT_NS 2000000

static void sampling_off(void)
{
    loop_stop();
    __atomic_store_n(&fx_sig.enabled, 0, __ATOMIC_RELEASE);
    fx_threads_disarm_all();
    fx_timer_stop();
    fx_ag.sampling_end_ns = fx_agent_now_ns();
}

static const char *target(const struct fx_options *o)
{
    return o->file_set ? o->file : fx_ag.opt.file;
}

static int write_outcome(struct fx_outcome *out, const char *verb, int rc,
                         const struct fx_dump_result *res, const struct fx_errbuf *eb)
{
    if (rc != FX_OK)
        return fx_outcome_set(out, FX_RC_FAILED, "%s, but no profile was written: %s", verb,
                              eb->msg);
    char line[1100];
    fx_dump_describe(res, line, sizeof(line));
    return fx_outcome_set(out, FX_RC_OK, "%s; %s", verb, line);
}

static int cmd_stop(const struct fx_options *o, struct fx_outcome *out)
{
    if (get_state() != ST_RUNNING)
        return fx_outcome_set(out, FX_RC_STATE, "not running (%s)", state_names[get_state()]);
    sampling_off();
    struct timespec pause = {0, IN_FLIGHT_NS};
    nanosleep(&pause, NULL);
    stopped_ns = fx_ag.sampling_end_ns;
    set_state(ST_STOPPED);
    struct fx_dump_result res;
    struct fx_errbuf eb = {{0}};
    pthread_mutex_lock(&write_lock);
    int rc = write_snapshot(target(o), fx_ag.opt.loop_ns != 0 && !o->file_set, false, &res, &eb);
    pthread_mutex_unlock(&write_lock);
    return write_outcome(out, "stopped", rc, &res, &eb);
}

static int cmd_dump(const struct fx_options *o, struct fx_outcome *out)
{
    enum state s = get_state();
    if (s != ST_RUNNING && s != ST_STOPPED)
        return fx_outcome_set(out, FX_RC_STATE, "nothing to dump (%s)", state_names[s]);
    bool reset = o->reset && s == ST_RUNNING;
    struct fx_dump_result res;
    struct fx_errbuf eb = {{0}};
    pthread_mutex_lock(&write_lock);
    int rc = write_snapshot(target(o), fx_ag.opt.loop_ns != 0 && !o->file_set, reset, &res, &eb);
    pthread_mutex_unlock(&write_lock);
    return write_outcome(out,
                         s == ST_STOPPED ? "dumped the stopped recording"
                         : reset         ? "dumped and reset (sampling goes on)"
                                         : "dumped (sampling goes on)",
                         rc, &res, &eb);
}

/* --- status --- */

static int cmd_status(struct fx_outcome *out)
{
    enum state s = get_state();
    if (s == ST_IDLE)
        return fx_outcome_set(out, FX_RC_OK, "not started in this JVM (use start)");
    struct fx_window_request r = {.kind = FX_WINDOW_STATUS};
    if (fx_window_request(&r) != FX_OK)
        return fx_outcome_set(out, FX_RC_FAILED, "%s, but the drain thread did not answer",
                              state_names[s]);
    const struct fx_window_status *st = &r.status;
    int64_t now = fx_agent_now_ns();
    int64_t until = s == ST_STOPPED ? stopped_ns : now;
    char iv[32], loop[32] = "off";
    fmt_duration(iv, sizeof(iv), fx_ag.opt.interval_ns);
    if (fx_ag.opt.loop_ns)
        fmt_duration(loop, sizeof(loop), fx_ag.opt.loop_ns);
    char last[4096];
    pthread_mutex_lock(&name_lock);
    snprintf(last, sizeof(last), "%s", last_file);
    pthread_mutex_unlock(&name_lock);
    return fx_outcome_set(
            out, FX_RC_OK,
            "%s for %.1f s: %s, interval %s, %llu samples taken (%llu in memory), %u threads, %llu ring drops, memory %.1f of %.1f MiB (tables %.1f MiB, rings %.1f MiB), %llu dropped by the bound, loop %s, file %s%s%s",
            state_names[s], (double)(until - fx_ag.sampling_begin_ns) / 1e9, fx_timer_engine_name(),
            iv, (unsigned long long)st->samples, (unsigned long long)st->held, st->threads,
            (unsigned long long)st->drops, (double)st->memory / 1048576.0,
            (double)st->bound / 1048576.0, (double)st->tables / 1048576.0,
            (double)st->ring_bytes / 1048576.0, (unsigned long long)st->dropped, loop,
            fx_ag.opt.file, last[0] ? ", last written " : "", last);
}

/* --- entry points --- */

int fx_commands_run(JavaVM *vm, struct fx_options *o, const char *text, struct fx_outcome *out)
{
    struct fx_errbuf eb = {{0}};
    bool series = o->action == FX_ACTION_START && o->loop_ns != 0; /* dump, stop: as given */
    if (o->file_set || o->action == FX_ACTION_START)
        fx_dump_absolute(o);
    if (o->file_set && fx_dump_check_target(o->file, series, &eb) != FX_OK)
        return fx_outcome_set(out, FX_RC_USAGE, "%s", eb.msg);
    pthread_mutex_lock(&cmd_lock);
    int rc;
    if (get_state() == ST_DEAD)
        rc = fx_outcome_set(out, FX_RC_STATE, "the JVM is shutting down");
    else if (o->action == FX_ACTION_START)
        rc = cmd_start(vm, o, text, out);
    else if (o->action == FX_ACTION_STOP)
        rc = cmd_stop(o, out);
    else if (o->action == FX_ACTION_DUMP)
        rc = cmd_dump(o, out);
    else
        rc = cmd_status(out);
    pthread_mutex_unlock(&cmd_lock);
    return rc;
}

/* VMDeath: the last file of a running recording; a stopped one was written at stop. */
void fx_commands_at_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    pthread_mutex_lock(&cmd_lock);
    enum state s = get_state();
    set_state(ST_DEAD);
    __atomic_store_n(&fx_ag.dead, 1, __ATOMIC_RELEASE);
    if (s == ST_RUNNING)
        sampling_off();
    fx_drain_stop();
    if (s == ST_RUNNING) {
        fx_drain_once(jvmti, jni);
        pthread_mutex_lock(&write_lock);
        fx_dump_at_death(jvmti, jni);
        pthread_mutex_unlock(&write_lock);
    }
    pthread_mutex_unlock(&cmd_lock);
}
