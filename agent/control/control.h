/* SPDX-License-Identifier: Apache-2.0 */
/* Private to agent/control, the top of the agent: entry points (Agent_OnLoad, Agent_OnAttach,
 * the JVMTI callbacks), the recording's life and the commands that drive it. Arrows inside the
 * folder run one way: attach.c -> commands.c -> lifecycle.c -> loop.c, jvmti_events.c; below
 * them every other part.
 * Tests: it.cycle, it.attach, it.repeat, it.misuse.twice. */
#ifndef FX_CONTROL_H
#define FX_CONTROL_H

#include "output.h"
#include "validate.h"

/* --- lifecycle.c: start, stop, dump and VM death as straight sequences --- */

enum fx_state {
    FX_ST_IDLE,    /* loaded, nothing started */
    FX_ST_RUNNING, /* sampling */
    FX_ST_STOPPED, /* stopped by a command; its profile written */
    FX_ST_DEAD     /* VM death */
};

enum fx_state fx_lifecycle_state(void);
const char *fx_lifecycle_state_name(enum fx_state s);
/* State changes happen under this (recursive) lock: commands hold it for their whole run,
 * VMDeath for its sequence. No application thread ever takes it. */
void fx_lifecycle_lock(void);
void fx_lifecycle_unlock(void);
/* IDLE -> RUNNING in a JVM that runs without the agent (the recording's options are set):
 * everything Agent_OnLoad and VMInit would have done. One line in eb on failure. */
int fx_lifecycle_start_fresh(JavaVM *vm, struct fx_errbuf *eb);
/* STOPPED -> RUNNING: a new recording with the recording's (new) options: engines, buffers,
 * validator and loop built again; the model's samples are reset. */
int fx_lifecycle_restart(JNIEnv *jni, struct fx_errbuf *eb);
/* RUNNING -> STOPPED: every signal source deleted, no handler in flight, the drain paused (it
 * serves requests only); the records in flight go to the next request's pass. */
void fx_lifecycle_stop(void);
/* After the stop's profile was written: the threads' buffers and the event queues freed (see
 * sampling.h, model.h). */
void fx_lifecycle_stopped_idle(void);
/* STOPPED: the recording was written to `path` (by its stop, or by a dump retrying a stop whose
 * write failed): the model's samples and figures are freed; a dump is refused from here. */
void fx_lifecycle_written(const char *path, bool by_stop);
/* That file while stopped and written, else NULL (running, or the model kept for a dump);
 * *by_stop: whether the stop wrote it. */
const char *fx_lifecycle_written_to(bool *by_stop);
/* SIGPROFs the handler saw since fx_lifecycle_stopped_idle (0 for an idle stopped agent). */
uint64_t fx_lifecycle_signals_since_stop(void);
/* When the last stop happened. */
int64_t fx_lifecycle_stopped_ns(void);

/* --- loop.c: periodic profiles (loop=) --- */

void fx_loop_start(JNIEnv *jni);
/* Waits for a file being written to be complete. */
void fx_loop_stop(void);

/* --- jvmti_events.c: capabilities, callbacks, events --- */

/* Agent_OnLoad or a first start: the callbacks of the JVM's start and end are given, the rest
 * are the parts' own. */
int fx_jvmti_events_setup(jvmtiEnv *jvmti, jvmtiEventVMInit vm_init, jvmtiEventVMDeath vm_death);
/* Creates the jmethodIDs of every loaded class (ASGCT needs them). */
void fx_jvmti_events_prepare_loaded_classes(JNIEnv *jni);
/* The code that existed before (stubs, nmethods) into the code map, without JIT markers. */
void fx_jvmti_events_replay_code(void);

/* --- commands.c: start, stop, dump, status from the attach listener --- */

/* Agent_OnAttach's return codes (jcmd prints "return code: N"; docs/PRODUCTION.md). */
enum {
    FX_RC_OK = 0,
    FX_RC_USAGE = 1,  /* unknown command, bad option, option that does not apply */
    FX_RC_STATE = 2,  /* not running, already running, shutting down */
    FX_RC_FAILED = 3, /* could not start, could not write, no answer */
};

struct fx_outcome {
    int code; /* FX_RC_* */
    char text[1200];
};

/* Sets the outcome; returns code. */
int fx_outcome_set(struct fx_outcome *out, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* True if `key` is an item of the option list `text` (as key or key=value). */
bool fx_option_given(const char *text, const char *key);
/* Runs one command (the attach listener); `text` is the option list as given. A first start
 * takes o's strings. */
int fx_commands_run(JavaVM *vm, struct fx_options *o, const char *text, struct fx_outcome *out);
/* Something was started in this image (running, stopped or ending). */
bool fx_commands_active(void);

#endif
