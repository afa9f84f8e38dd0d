/* SPDX-License-Identifier: Apache-2.0 */
/* Entry points and the start/stop sequence: Agent_OnLoad checks everything that can refuse the
 * start (options, SIGPROF ownership, AsyncGetCallTrace, capabilities) before anything runs;
 * VMInit (or a start by attach, attach.c) starts sampling; VMDeath stops every signal source,
 * drains, and writes the profile (commands.c, which also runs stop, dump and status).
 * An agent must never bring the JVM down: failures print one `fxagent:` line and either stop
 * the JVM from starting (Agent_OnLoad returns JNI_ERR) or leave it running unprofiled. */
#include "fx_agent.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fx_profile.h"

struct fx_agent fx_ag;

int64_t fx_agent_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One line, one write(2), so concurrent lines from the JVM do not interleave with it. */
void fx_agent_log(const char *fmt, ...)
{
    char line[1024];
    int n = snprintf(line, sizeof(line), "fxagent: ");
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof(line) - 2)
        len = sizeof(line) - 2;
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}

bool fx_agent_jvmti_failed(jvmtiError err, const char *what)
{
    if (err == JVMTI_ERROR_NONE)
        return false;
    char *name = NULL;
    if (fx_ag.jvmti != NULL &&
        (*fx_ag.jvmti)->GetErrorName(fx_ag.jvmti, err, &name) == JVMTI_ERROR_NONE) {
        fx_agent_log("JVMTI %s failed: %s", what, name);
        (*fx_ag.jvmti)->Deallocate(fx_ag.jvmti, (unsigned char *)name);
    } else {
        fx_agent_log("JVMTI %s failed: error %d", what, (int)err);
    }
    return true;
}

int fx_agent_run_thread(JNIEnv *jni, const char *name, jvmtiStartFunction fn, void *arg)
{
    jclass cls = (*jni)->FindClass(jni, "java/lang/Thread");
    jmethodID init = cls ? (*jni)->GetMethodID(jni, cls, "<init>", "(Ljava/lang/String;)V") : NULL;
    jstring jname = init ? (*jni)->NewStringUTF(jni, name) : NULL;
    jobject thread = jname ? (*jni)->NewObject(jni, cls, init, jname) : NULL;
    int rc = FX_EUNSUPPORTED;
    if (thread == NULL) {
        (*jni)->ExceptionClear(jni);
        fx_agent_log("cannot create the thread '%s'", name);
    } else if (!fx_agent_jvmti_failed((*fx_ag.jvmti)
                                              ->RunAgentThread(fx_ag.jvmti, thread, fn, arg,
                                                               JVMTI_THREAD_NORM_PRIORITY),
                                      "RunAgentThread")) {
        rc = FX_OK;
    }
    (*jni)->DeleteLocalRef(jni, thread);
    (*jni)->DeleteLocalRef(jni, jname);
    (*jni)->DeleteLocalRef(jni, cls);
    return rc;
}

/* JDK 25's JFR CPU-time sampler, another profiler, or the application may own SIGPROF: we do
 * not take a signal someone else handles. */
static int check_sigprof_free(struct fx_errbuf *eb)
{
    struct sigaction old;
    if (sigaction(SIGPROF, NULL, &old) != 0)
        return FX_OK;
    bool custom = (old.sa_flags & SA_SIGINFO)
                          ? old.sa_sigaction != NULL
                          : (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN);
    if (!custom || old.sa_sigaction == fx_signal_handler_on_sigprof)
        return FX_OK;
    fx_errbuf_set(
            eb,
            "SIGPROF already has a handler (another profiler, or JFR's CPU-time sampler); fxagent will not replace it");
    return FX_ESTATE;
}

static int install_handler(struct fx_errbuf *eb)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = fx_signal_handler_on_sigprof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART; /* no SA_NODEFER: the handler never nests */
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGPROF, &sa, NULL) != 0) {
        fx_errbuf_set(eb, "cannot install the SIGPROF handler: %s", strerror(errno));
        return FX_EUNSUPPORTED;
    }
    return FX_OK;
}

/* What timing an empty stretch of code with two CPU-clock reads measures: the smallest of a
 * few back-to-back pairs (the handler subtracts it from each timed signal). */
static int64_t clock_read_cost(void)
{
    int64_t best = INT64_MAX;
    for (int i = 0; i < 64; i++) {
        struct timespec a, b;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
        int64_t d = (int64_t)(b.tv_sec - a.tv_sec) * 1000000000 + (b.tv_nsec - a.tv_nsec);
        best = d < best ? d : best;
    }
    return best;
}

/* The launcher loads libjvm RTLD_GLOBAL, so the default namespace has it; an embedding that
 * did not gets the explicit library. */
static int resolve_asgct(struct fx_errbuf *eb)
{
    void *fn = dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
    if (fn == NULL) {
        void *jvm = dlopen("libjvm.so", RTLD_NOW | RTLD_NOLOAD);
        fn = jvm ? dlsym(jvm, "AsyncGetCallTrace") : NULL;
    }
    if (fn == NULL) {
        fx_errbuf_set(eb, "this JVM has no AsyncGetCallTrace (fxagent needs HotSpot)");
        return FX_EUNSUPPORTED;
    }
    fx_sig.asgct = (fx_asgct_fn)fn;
    fx_sig.clock_read_ns = clock_read_cost();
    return FX_OK;
}

/* A ring takes records of at most half its size (fx_ring.h): with a deep `depth` and a small
 * `ring`, every deep stack would be dropped, so the combination is refused up front. */
static int check_ring_fits_depth(struct fx_errbuf *eb)
{
    const struct fx_options *o = &fx_ag.opt;
    uint64_t cap = 64;
    while (cap < o->ring_bytes)
        cap *= 2;
    uint64_t rec = fx_ring_record_size_sigsafe(
            (uint32_t)(sizeof(struct fx_sample_rec) + (uint64_t)o->depth * sizeof(fx_asgct_frame)));
    if (rec <= cap / 2)
        return FX_OK;
    fx_errbuf_set(
            eb,
            "options 'depth=%u' and 'ring=%llu': a full-depth sample needs a ring of at least %llu bytes; raise ring or lower depth",
            o->depth, (unsigned long long)o->ring_bytes, (unsigned long long)rec * 2);
    return FX_ERANGE;
}

/* Options that parse but that the agent does not implement yet are refused, not ignored. */
static int check_actions(struct fx_errbuf *eb)
{
    const struct fx_options *o = &fx_ag.opt;
    if (o->action != FX_ACTION_NONE && o->action != FX_ACTION_START) {
        fx_errbuf_set(
                eb, "stop, dump and status work only with jcmd JVMTI.agent_load on a running JVM");
        return FX_EINVAL;
    }
    return check_ring_fits_depth(eb);
}

void fx_agent_record_start(void)
{
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    fx_ag.start_ns = fx_agent_now_ns();
    fx_ag.start_epoch_ms = (double)wall.tv_sec * 1e3 + (double)wall.tv_nsec / 1e6;
    fx_ag.start_time = wall.tv_sec;
}

int fx_agent_setup(JavaVM *vm, struct fx_errbuf *eb)
{
    int rc = check_actions(eb);
    if (rc == FX_OK)
        rc = check_sigprof_free(eb);
    if (rc == FX_OK)
        rc = resolve_asgct(eb);
    if (rc == FX_OK)
        rc = fx_timer_probe(eb);
    if (rc != FX_OK)
        return rc;
    if ((*vm)->GetEnv(vm, (void **)&fx_ag.jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
        fx_errbuf_set(eb, "this JVM offers no JVMTI 1.2 environment");
        return FX_EUNSUPPORTED;
    }
    fx_ag.vm = vm;
    rc = fx_jvmti_events_setup(fx_ag.jvmti);
    if (rc != FX_OK)
        fx_errbuf_set(eb, "JVMTI setup failed (see the line above)");
    if (rc == FX_OK && fx_ag.opt.validate)
        rc = fx_validate_setup(fx_ag.jvmti, eb);
    if (rc == FX_OK)
        rc = install_handler(eb);
    if (rc != FX_OK) { /* at attach the JVM goes on: leave no callback behind */
        (*fx_ag.jvmti)->DisposeEnvironment(fx_ag.jvmti);
        fx_ag.jvmti = NULL;
    }
    return rc;
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
    if (fx_ag.jvmti == NULL) /* set by a setup that succeeded, cleared by one that failed */
        return 0;
    snprintf(file, (size_t)cap, "%s", fx_ag.opt.file);
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
    fx_agent_log(
            "the agent is already loaded in this JVM (%s, file=%s); this second load does nothing",
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
    fx_agent_record_start();
    if (fx_options_parse(options, &fx_ag.opt, &eb) != FX_OK) {
        fx_agent_log("%s", eb.msg);
        return JNI_ERR;
    }
    if (fx_ag.opt.action == FX_ACTION_HELP) {
        fputs(fx_options_help(), stderr);
        fx_agent_log("the JVM was stopped because 'help' was given; remove it to profile");
        return JNI_ERR;
    }
    if (fx_ag.opt.reply != NULL || fx_ag.opt.reset) {
        fx_agent_log("option '%s' works only with jcmd JVMTI.agent_load or fxprof on a running JVM",
                     fx_ag.opt.reply != NULL ? "reply" : "reset");
        return JNI_ERR;
    }
    fx_dump_absolute(&fx_ag.opt);
    if (fx_dump_check_target(fx_ag.opt.file, fx_ag.opt.loop_ns != 0, &eb) != FX_OK ||
        fx_agent_setup(vm, &eb) != FX_OK) {
        fx_agent_log("%s", eb.msg);
        return JNI_ERR;
    }
    return JNI_OK;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
    (void)vm; /* the rings may still be reachable from a late signal: nothing is freed */
}

void JNICALL fx_agent_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)thread;
    fx_ag.profile = fx_profile_new();
    if (fx_ag.profile == NULL) {
        fx_agent_log("out of memory at start: not profiling");
        return;
    }
    fx_profile_set_start(fx_ag.profile, fx_ag.start_ns, fx_ag.start_epoch_ms);
    if (fx_window_init(fx_ag.profile) != FX_OK)
        fx_agent_log("out of memory at start: samples past the table limit will be lost");
    fx_jvmti_events_prepare_loaded_classes(jvmti, jni);
    fx_jvmti_events_replay_code(jvmti);
    fx_ag.sampling_begin_ns = fx_agent_now_ns();
    __atomic_store_n(&fx_sig.read_cpu_clock,
                     fx_ag.opt.mode != FX_MODE_CPU || fx_timer_excludes_kernel(),
                     __ATOMIC_RELAXED); /* published by the release store below */
    __atomic_store_n(&fx_sig.enabled, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&fx_ag.live, 1, __ATOMIC_RELEASE);
    fx_threads_start_existing(jvmti, jni);
    if (fx_timer_start(jni) != FX_OK)
        fx_agent_log("the %s engine could not start: no samples will be taken",
                     fx_ag.opt.mode == FX_MODE_WALL ? "wall" : "itimer");
    if (fx_drain_start(jni) != FX_OK)
        fx_agent_log("the drain thread could not start: samples are drained at exit only");
    if (fx_ag.opt.validate && fx_validate_start(jni) != FX_OK)
        fx_agent_log("validate: the validator thread could not start: nothing is validated");
    fx_commands_started(jni);
}

/* A running recording stops and writes its last file; a stopped one was written at stop
 * (commands.c). */
void JNICALL fx_agent_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    if (fx_ag.profile == NULL)
        return;
    fx_validate_stop(); /* before the last dump, which reports its figures */
    fx_commands_at_death(jvmti, jni);
    fx_validate_report(jvmti);
}
