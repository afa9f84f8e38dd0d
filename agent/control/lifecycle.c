/* SPDX-License-Identifier: Apache-2.0 */
/* The recording's life, in one place: IDLE (loaded, nothing started) -> RUNNING <-> STOPPED
 * -> DEAD (VM death). Agent_OnLoad checks everything that can refuse the start (options,
 * SIGPROF ownership, AsyncGetCallTrace, capabilities) before anything runs; VMInit (or a start
 * by attach) starts the sources; a stop stops them; VMDeath stops every signal source, drains,
 * and writes the profile. Each is a straight sequence of calls down into the parts: the
 * sources (registered at setup, in the order their before-dump steps run), the drain, output.
 * An agent must never bring the JVM down: failures print one `fxagent:` line and either stop
 * the JVM from starting (Agent_OnLoad returns JNI_ERR) or leave it running unprofiled. */
#include "control.h"

#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>

static const char *const state_names[] = {"not started", "running", "stopped", "shutting down"};

/* Recursive: a start by attach holds it while the start sequence sets RUNNING. */
static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static int state; /* enum fx_state; atomic so fx_commands_active reads it without the lock */
static int64_t stopped_ns;
static uint64_t signals_at_stop; /* SIGPROFs counted by the handler when the stop was done */
static char written_to[4096];    /* the stopped recording's file, once written (or "") */
static bool written_by_stop;

static void set_state(enum fx_state s)
{
    if (s == FX_ST_RUNNING)
        written_to[0] = '\0';
    __atomic_store_n(&state, (int)s, __ATOMIC_RELEASE);
}

enum fx_state fx_lifecycle_state(void)
{
    return (enum fx_state)__atomic_load_n(&state, __ATOMIC_ACQUIRE);
}

const char *fx_lifecycle_state_name(enum fx_state s)
{
    return state_names[s];
}

void fx_lifecycle_lock(void)
{
    pthread_mutex_lock(&lock);
}

void fx_lifecycle_unlock(void)
{
    pthread_mutex_unlock(&lock);
}

int64_t fx_lifecycle_stopped_ns(void)
{
    return stopped_ns;
}

/* --- setup --- */

/* Options that parse but that the agent does not implement yet are refused, not ignored. */
static int check_actions(struct fx_errbuf *eb)
{
    enum fx_action a = fx_opt()->action;
    if (a != FX_ACTION_NONE && a != FX_ACTION_START) {
        fx_errbuf_set(
                eb, "stop, dump and status work only with jcmd JVMTI.agent_load on a running JVM");
        return FX_EINVAL;
    }
    return FX_OK;
}

/* The before-dump steps run in this order (meta.extra groups appear in it). */
static int add_sources(void)
{
    int rc = fx_sources_add(&fx_markers_source);
    if (rc == FX_OK)
        rc = fx_sources_add(&fx_output_meta_step);
    if (rc == FX_OK)
        rc = fx_sources_add(&fx_validate_step);
    if (rc == FX_OK) /* before the sampler: its pass marks ended threads finished */
        rc = fx_sources_add(&fx_locks_source);
    if (rc == FX_OK)
        rc = fx_sources_add(&fx_drain_source);
    if (rc == FX_OK)
        rc = fx_sources_add(&fx_vthread_waits_source);
    if (rc == FX_OK)
        rc = fx_sources_add(&fx_trace_ctx_source);
    if (rc == FX_OK)
        rc = fx_sources_add(&fx_allocs_source);
    if (rc == FX_OK) /* the push counts (dump.c queues the files: fx_output_push_written) */
        rc = fx_sources_add(&fx_output_push_source);
    return rc;
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni);

/* Everything Agent_OnLoad checks and sets up (options already in the recording): refusals
 * first, then the JVMTI environment, events and the SIGPROF handler. On failure nothing stays
 * set. */
static int setup(JavaVM *vm, struct fx_errbuf *eb)
{
    int rc = check_actions(eb);
    if (rc == FX_OK)
        rc = fx_sampling_check(eb);
    if (rc != FX_OK)
        return rc;
    jvmtiEnv *jvmti = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
        fx_errbuf_set(eb, "this JVM offers no JVMTI 1.2 environment");
        return FX_EUNSUPPORTED;
    }
    fx_jvm_set(vm, jvmti);
    rc = add_sources();
    if (rc == FX_OK && (rc = fx_jvmti_events_setup(jvmti, on_vm_init, on_vm_death)) != FX_OK)
        fx_errbuf_set(eb, "JVMTI setup failed (see the line above)");
    if (rc == FX_OK) /* load and attach: what CompiledMethodLoad turned on (vmflags.c) */
        fx_vmflags_debug_non_safepoints();
    if (rc == FX_OK && fx_opt()->validate)
        rc = fx_validate_check(eb);
    if (rc == FX_OK)
        rc = fx_sampling_install(eb);
    if (rc != FX_OK) { /* at attach the JVM goes on: leave no callback behind */
        (*jvmti)->DisposeEnvironment(jvmti);
        fx_jvm_set(NULL, NULL);
    }
    return rc;
}

/* --- start, stop, death --- */

static int start_sequence(JNIEnv *jni)
{
    if (fx_model_init() != FX_OK) {
        fx_log("out of memory at start: not profiling");
        return FX_ENOMEM;
    }
    fx_jvmti_events_prepare_loaded_classes(jni);
    fx_jvmti_events_replay_code();
    fx_rec_edit()->sampling_begin_ns = fx_now_ns();
    fx_sampling_enable();
    fx_phase_set(FX_PHASE_LIVE); /* ThreadStart registers threads from here */
    fx_sources_start(jni);
    if (fx_drain_start(jni) != FX_OK)
        fx_log("the drain thread could not start: samples are drained at exit only");
    if (fx_opt()->validate && fx_validate_start(jni) != FX_OK)
        fx_log("validate: the validator thread could not start: nothing is validated");
    fx_lifecycle_lock();
    set_state(FX_ST_RUNNING);
    fx_loop_start(jni);
    fx_lifecycle_unlock();
    return FX_OK;
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti, (void)thread;
    start_sequence(jni);
}

static JNIEnv *jni_of(JavaVM *vm)
{
    JNIEnv *jni = NULL;
    if (vm == NULL || (*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK)
        return NULL;
    return jni;
}

int fx_lifecycle_start_fresh(JavaVM *vm, struct fx_errbuf *eb)
{
    fx_rec_mark_start();
    fx_rec_edit()->live_start = true;
    fx_threads_scan_begin(); /* before ThreadEnd can be enabled (threads.c) */
    int rc = setup(vm, eb);
    if (rc != FX_OK)
        return rc;
    JNIEnv *jni = jni_of(vm);
    if (jni == NULL) {
        fx_errbuf_set(eb, "no JNI environment on the attach thread");
        return FX_ESTATE;
    }
    if (start_sequence(jni) != FX_OK) {
        fx_errbuf_set(eb, "out of memory for the profile");
        return FX_ENOMEM;
    }
    fx_log("warning: attached to a running JVM: code compiled before now has debug information at safepoints only, so its inlined frames may be attributed to their caller (start the JVM with -agentpath for full detail)");
    return FX_OK;
}

/* The engines, the buffers and the agent threads are built again from the recording's options,
 * which may all differ from the previous start's (commands.c checked them). The RESTART
 * request's pass empties what the rings still held (late samples of the last recording, counted
 * as such); the drain is then paused again, so the rings are this thread's until the drain
 * resumes, and no handler can use them (sampling is off): they get their new sizes. */
int fx_lifecycle_restart(JNIEnv *jni, struct fx_errbuf *eb)
{
    struct fx_recording *rec = fx_rec_edit();
    fx_rec_mark_start();
    rec->live_start = true;
    rec->sampling_begin_ns = rec->start_ns;
    struct fx_window_request r = {
            .kind = FX_WINDOW_RESTART, .begin_ns = rec->start_ns, .bound = rec->opt.memory_bytes};
    if (fx_window_request(&r) != FX_OK) {
        fx_errbuf_set(eb, "the drain thread did not answer");
        return FX_ESTATE;
    }
    fx_drain_pause();
    fx_threads_scan_begin();
    fx_sampling_build_buffers();
    fx_sampling_enable();
    fx_sources_start(jni);
    fx_drain_resume();
    if (fx_opt()->validate && fx_validate_start(jni) != FX_OK)
        fx_log("validate: the validator thread could not start: nothing is validated");
    set_state(FX_ST_RUNNING);
    fx_loop_start(jni);
    return FX_OK;
}

/* Every signal source off (timers deleted, perf events closed, the wall sampler and itimer
 * stopped), then no handler left that could still write a record. */
static void sampling_off(void)
{
    fx_loop_stop();
    fx_validate_stop();
    fx_sampling_disable();
    fx_sources_stop();
    fx_rec_edit()->sampling_end_ns = fx_now_ns();
    fx_sampling_quiet();
}

static uint64_t signals_counted(void)
{
    struct fx_signal_counts c;
    fx_sampling_counts(&c);
    return c.no_thread + c.disabled + c.no_buffer;
}

/* The drain is paused first: the snapshot's request then gets a full pass of its own, after
 * the last record was written. */
void fx_lifecycle_stop(void)
{
    sampling_off();
    fx_drain_pause();
    stopped_ns = fx_rec()->sampling_end_ns;
    set_state(FX_ST_STOPPED);
}

void fx_lifecycle_stopped_idle(void)
{
    fx_drain_pause(); /* the snapshot's pass is over */
    fx_sampling_free_buffers();
    fx_codemap_idle();
    fx_model_idle(jni_of(fx_jvm()));
    fx_sources_idle();
    malloc_trim(0); /* the rings are large blocks: give their pages back */
    signals_at_stop = signals_counted();
}

void fx_lifecycle_written(const char *path, bool by_stop)
{
    struct fx_window_request r = {.kind = FX_WINDOW_FORGET};
    if (fx_window_request(&r) != FX_OK)
        return; /* the drain is gone (VM death): nothing to free, nothing more to dump */
    snprintf(written_to, sizeof(written_to), "%s", path != NULL && path[0] ? path : "its file");
    written_by_stop = by_stop;
    malloc_trim(0);
}

const char *fx_lifecycle_written_to(bool *by_stop)
{
    *by_stop = written_by_stop;
    return fx_lifecycle_state() == FX_ST_STOPPED && written_to[0] ? written_to : NULL;
}

uint64_t fx_lifecycle_signals_since_stop(void)
{
    return signals_counted() - signals_at_stop;
}

/* A running recording stops and writes its last file; a stopped one was written at stop. */
static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    (void)jvmti;
    if (fx_model_profile() == NULL)
        return;
    fx_validate_stop(); /* before the last dump, which reports its figures */
    fx_lifecycle_lock();
    enum fx_state s = fx_lifecycle_state();
    set_state(FX_ST_DEAD);
    fx_phase_set(FX_PHASE_DEAD);
    if (s == FX_ST_RUNNING)
        sampling_off();
    fx_drain_stop();
    if (s == FX_ST_RUNNING) {
        fx_drain_once(jni);
        fx_output_at_death(jni);
    }
    fx_lifecycle_unlock();
    /* the pushes of the files written, the last one and a stop's alike (push=) */
    fx_output_push_flush();
    fx_validate_report();
}

/* --- one agent per JVM --- */

/* Two -agentpath options, or JAVA_TOOL_OPTIONS plus a command line's: HotSpot calls
 * Agent_OnLoad once per option. The same file is the same image, whose globals a second load
 * would overwrite (a second JVMTI environment, a second drain on the same model: a double free
 * at exit); a copy at another path has its own globals but would find our SIGPROF handler and
 * stop the JVM. So a second load, in either form, says where the first one writes and does
 * nothing. The same image knows by its own state; a copy asks every other loaded object for
 * this exported, versioned entry (copies.c). Not a system property (JVMTI can only set
 * properties that exist) nor an environment variable (setenv races the JVM's threads, and
 * child processes would inherit it). Agent_OnAttach needs none of this: a command always goes
 * to the active image (attach.c). */
JNIEXPORT jint JNICALL fxagent_loaded_v1(char *file, jint cap);

JNIEXPORT jint JNICALL fxagent_loaded_v1(char *file, jint cap)
{
    if (fx_jvmti() == NULL) /* set by a setup that succeeded, cleared by one that failed */
        return 0;
    snprintf(file, (size_t)cap, "%s", fx_opt()->file);
    return 1;
}

typedef jint (*loaded_fn)(char *file, jint cap);

struct first_load {
    char lib[1024], file[1024];
};

static bool loaded_in(void *sym, const char *object, void *arg)
{
    struct first_load *f = arg;
    if (((loaded_fn)sym)(f->file, (jint)sizeof(f->file)) == 0)
        return false;
    snprintf(f->lib, sizeof(f->lib), "%s", object);
    return true;
}

/* True (and the one line said) if this JVM already has an fxagent from an earlier load. */
static bool already_loaded(void)
{
    struct first_load f;
    Dl_info me;
    if (fxagent_loaded_v1(f.file, (jint)sizeof(f.file))) {
        snprintf(f.lib, sizeof(f.lib), "%s",
                 dladdr((void *)already_loaded, &me) && me.dli_fname ? me.dli_fname
                                                                     : "libfxagent.so");
    } else if (!fx_copies_find("fxagent_loaded_v1", loaded_in, &f)) {
        return false;
    }
    fx_log("the agent is already loaded in this JVM (%s, file=%s); this second load does nothing",
           f.lib, f.file);
    return true;
}

/* `help` prints the option list and stops the JVM: a user who asked for help has not chosen
 * options yet, and running the application unprofiled would hide that nothing was recorded. */
JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    struct fx_errbuf eb = {{0}};
    if (already_loaded())
        return JNI_OK; /* the JVM starts, profiled by the first load */
    fx_rec_mark_start();
    struct fx_options *opt = &fx_rec_edit()->opt;
    if (fx_options_parse(options, opt, &eb) != FX_OK) {
        fx_log("%s", eb.msg);
        return JNI_ERR;
    }
    if (fx_opt()->action == FX_ACTION_HELP) {
        fputs(fx_options_help(), stderr);
        fx_log("the JVM was stopped because 'help' was given; remove it to profile");
        return JNI_ERR;
    }
    if (fx_opt()->reply != NULL || fx_opt()->reset) {
        fx_log("option '%s' works only with jcmd JVMTI.agent_load or fxprof on a running JVM",
               fx_opt()->reply != NULL ? "reply" : "reset");
        return JNI_ERR;
    }
    fx_output_absolute(opt);
    if (fx_output_check_target(opt->file, opt->loop_ns != 0, &eb) != FX_OK ||
        (opt->sources != NULL && fx_output_check_sources(opt->sources, &eb) != FX_OK) ||
        setup(vm, &eb) != FX_OK) {
        fx_log("%s", eb.msg);
        return JNI_ERR;
    }
    return JNI_OK;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
    (void)vm; /* the rings may still be reachable from a late signal: nothing is freed */
}
