/* SPDX-License-Identifier: Apache-2.0 */
/* agent/sampling: what sends SIGPROF, the signal path, and the threads it samples. Its whole
 * interface for the parts above it (model, validate, control); it calls only base/.
 *  - sampler.c: setup (SIGPROF ownership, AsyncGetCallTrace), the handler's install, sampling
 *    on and off, the signal path's own counters;
 *  - threads.c: the registry of sampled threads and the tid table the handler reads;
 *  - vm_threads.c: the threads that are not Java threads (GC, JIT, VM, JNI-created), from /proc;
 *  - engines.c (itimer, the wall sampler) over cpu_timer.c (perf_events, or a CPU-clock timer);
 *  - codemap.c, codemap_heap.c, vmstructs.c: the code ranges stack recovery reads
 *    (fx_recover.h), from JVMTI or the code heaps; vmflags.c: DebugNonSafepoints;
 *  - probe.c: one thread's trace taken by its own handler on request (validate mode);
 *  - native_maps.c: the text map native_walk.c (the signal path's native half) checks;
 *  - signal_handler.c: the handler, under its symbol allow-list.
 * Tests: unit.recover, unit.recover_walk, unit.codemap, unit.native_walk,
   unit.signal_path_allowlist. */
#ifndef FX_SAMPLING_H
#define FX_SAMPLING_H

#include "base.h"
#include "fx_textmap.h"
#include "sample.h"

/* --- sampler.c --- */
/* Agent_OnLoad or a first start: refusals first (ring too small for depth, SIGPROF owned by
 * someone else, no AsyncGetCallTrace, engine=perf without perf_events), one line in eb. */
int fx_sampling_check(struct fx_errbuf *eb);
/* A start after a stop, before the recording takes options o: ring vs depth, engine=perf, and
 * the SIGPROF handler still ours. One line in eb; nothing changes. */
int fx_sampling_check_options(const struct fx_options *o, struct fx_errbuf *eb);
/* Installs the SIGPROF handler (after the JVMTI setup). */
int fx_sampling_install(struct fx_errbuf *eb);
void fx_sampling_enable(void);  /* the handler records from now on (CPU clock if needed) */
void fx_sampling_disable(void); /* the handler records nothing from now on */
bool fx_sampling_quiet(void);   /* after _disable: no handler uses a buffer (waits <= 2 s) */
/* Stopped, engines stopped, the last records drained, the drain paused: frees every live
 * thread's ring and frame buffer, and the virtual threads' wait queue (vtwait=). */
void fx_sampling_free_buffers(void);
/* A start, before fx_sampling_enable, the drain paused: every live thread gets the ring and
 * frame buffer of the recording's ring= and depth=. */
void fx_sampling_build_buffers(void);
/* The CPU/wall sampler as an event source: start arms the engines with the recording's options
 * (running threads registered or armed again); stop deletes timers, perf events, the engine. */
int fx_sampling_start(JNIEnv *jni);
void fx_sampling_stop(void);
bool fx_sampling_handler_kept(void); /* false: another component replaced our handler */
fx_asgct_fn fx_sampling_asgct(void); /* NULL before fx_sampling_check found it */

struct fx_signal_counts {
    uint64_t no_thread;    /* signals on threads that are not registered */
    uint64_t disabled;     /* signals after sampling stopped */
    uint64_t rearm_failed; /* perf events that could not be enabled again at a restart */
    uint64_t probe_late;   /* probe signals that found no request (the requester gave up) */
    uint64_t no_buffer;    /* signals on a thread without its buffers (allocation failed) */
};
void fx_sampling_counts(struct fx_signal_counts *out);
/* A start after a stop, sampling off and no handler in flight (the model's owner, serving the
 * restart): the signal counters, every live thread's handler counts, ring drops and CPU time
 * while armed, the registry's counts and the wall ticks start again from zero, so the next
 * profile shows only its own recording (struct fx_source `reset`). */
void fx_sampling_new_recording(void);

/* --- threads.c: registry, tid table, thread lifecycle --- */
/* The calling thread (ThreadStart, or the VMInit thread for itself). */
int fx_threads_start_current(JNIEnv *jni, jthread thread);
/* ThreadEnd on the ending thread: disarm, unregister, mark ended. */
void fx_threads_end_current(JNIEnv *jni, jthread thread);
/* Threads that existed before VMInit: registered through VMStructs where possible. With
 * live_start (attach, restart; struct fx_recording) each one is suspended while it is
 * registered, so it cannot exit meanwhile, and threads whose ThreadEnd came since
 * fx_threads_scan_begin are skipped. */
void fx_threads_start_existing(JNIEnv *jni);
/* Before ThreadEnd events can arrive for a scan (attach: before they are enabled). */
void fx_threads_scan_begin(void);
void fx_threads_lock(void);
void fx_threads_unlock(void);
/* The list head (a snapshot: threads are only ever added at the head, removed by the drain). */
struct fx_thread *fx_threads_head(void);
/* Drain only: unlinks and frees every ended thread whose ring is empty and was drained. */
void fx_threads_reap(JNIEnv *jni, bool (*done)(struct fx_thread *t));
bool fx_threads_is_own(const char *name); /* fxagent's own agent threads are never sampled */

struct fx_threads_stats {
    uint64_t registered, not_sampled, arm_failed, perf, timer, table_full, existing;
    uint64_t no_memory; /* threads whose ring or frame buffer could not be allocated */
};
void fx_threads_stats(struct fx_threads_stats *out);
/* Any thread: bytes of the sample rings allocated now (inside memory=), and how many rings. */
uint64_t fx_threads_ring_bytes(uint32_t *count);

/* --- engines.c, cpu_timer.c --- */

/* The engine in words ("cpu: perf_events task-clock per thread"), into buf. */
void fx_engine_name(char *buf, size_t cap);
const char *fx_engine_note(void); /* the interval the engine ended up with, and why */
uint64_t fx_engine_wall_ticks(void);
/* Thread CPU time while its timer was armed: what its cpu-mode samples should add up to.
 * Caller holds fx_threads_lock, or the thread has ended. */
int64_t fx_timer_armed_cpu_ns(const struct fx_thread *t);

/* --- codemap.c: code ranges for stack recovery (issue 20), built outside signal context; JVMTI
 * callbacks queue changes into the handler's recent table; true: fx_drain_hurry (coderecent.h) */
int fx_codemap_setup(void); /* Agent_OnLoad: before the events are enabled */
/* Each start (codemap_heap.c): true if codemap=heap is on (no CompiledMethodLoad needed), as _on
 * says since. Load, attach (vmflags.c): DebugNonSafepoints on if at its default. */
bool fx_codemap_heap_start(void);
bool fx_codemap_heap_on(void);
void fx_vmflags_debug_non_safepoints(void);
bool fx_codemap_compiled_load(jmethodID method, const void *code_addr, jint code_size,
                              const void *compile_info);
void fx_codemap_compiled_unload(jmethodID method, const void *code_addr);
bool fx_codemap_dynamic_code(const char *name, const void *address, jint length);
/* Drain: _refresh (codemap_heap.c; *found: handler's finds) then _publish a new base table
 * (true: stay fast, new code); _found_not_self: FX_TYPE_FOUND frame's nmethod not self-inlined */
bool fx_codemap_publish(void);
bool fx_codemap_refresh(bool *found);
void fx_codemap_idle(void); /* stopped, drain paused: frees replaced tables, the spare */
const char *fx_codemap_stub_name(uint64_t index);      /* drain: a stub's name, or NULL */
bool fx_codemap_stub_at(uint64_t pc, uint64_t *index); /* drain: the stub holding pc (8.5h) */
void fx_codemap_report(struct fx_profile *p, const char *group);      /* drain: meta.extra */
void fx_codemap_heap_report(struct fx_profile *p, const char *group); /* then codemap=heap's */
bool fx_codemap_found_not_self(uint64_t word, uint64_t method, unsigned level);

/* --- kstack.c: kernel frames (issue 16, kstack=yes) --- */

struct fx_kstack_facts { /* why kernel frames may be missing: what perf events and rings met */
    bool excluded;       /* an event had to exclude the kernel (perf_event_paranoid) */
    int open_errno;      /* an open with the callchain failed (then never asked again), or 0 */
    uint64_t mapped;     /* rings mapped */
    uint64_t map_fail;   /* rings that could not be mapped */
    int map_errno;       /* the last mmap failure, or 0 */
    uint64_t kept_busy;  /* arms that found the previous ring still mapped (no kernel frames) */
    uint64_t lazy_armed; /* threads given their ring once seen running (fx_kstack_due) */
};
void fx_kstack_facts(struct fx_kstack_facts *out);
/* A new recording (fx_sampling_new_recording): mapped, not mapped and kept rings from zero. */
void fx_kstack_new_recording(void);

/* --- native_maps.c: the text map of the native walk (issue 16, cstack=fp) --- */

/* Sampling start: the walk is on unless cstack=no (every mode); reads the maps first. */
void fx_native_maps_start(void);
/* Drain: re-reads the maps on walks' misses (rate-limited), frees old tables; true: walks wait */
bool fx_native_maps_refresh(void);
/* Any thread: the current table (NULL if none) until fx_native_maps_leave(ticket). */
const struct fx_textmap *fx_native_maps_enter(uint32_t *ticket);
void fx_native_maps_leave(uint32_t ticket);
bool fx_native_maps_enabled(void);
void fx_native_maps_report(struct fx_profile *p, const char *g); /* meta.extra, group g */
/* A new recording: map reads and unwind table requests from zero; the tables stay (per JVM). */
void fx_native_maps_new_recording(void);
uint64_t fx_native_unwind_bytes(void); /* any thread: the unwind tables' bytes (this JVM) */

/* --- vm_threads.c: the threads that are not Java threads (issue 16, GC/JIT/VM/JNI-created) --- */

/* A start, before the threads are armed again: the ones gone while stopped are unregistered. */
void fx_vm_threads_prune(void);
/* A start, after the Java threads (cpu, itimer): registers and arms the other threads of
 * /proc/self/task; a stop ends the re-scans. */
void fx_vm_threads_start(void);
void fx_vm_threads_stop(void);
void fx_vm_threads_refresh(void);  /* drain: re-scans /proc/self/task (>= 100 ms apart) */
void fx_threads_kstack_pass(void); /* drain: perf, callchain for threads seen running */
/* meta.extra: "Threads that are not Java threads". */
void fx_vm_threads_report(struct fx_profile *p);
/* A new recording: the scans' and registrations' counts from zero (the registry stays). */
void fx_vm_threads_new_recording(void);

/* --- probe.c: an ASGCT trace taken by a thread's own SIGPROF handler (struct fx_probe) --- */

/* The calling thread's struct if it is registered, else NULL. */
struct fx_thread *fx_probe_self(void);
/* Takes t's probe and makes its buffer hold `depth` frames; with `recover`, a failed trace is
 * recovered as a sample's would be (fx_recover.h). FX_ESTATE: another requester has it;
 * FX_EUNSUPPORTED: it is retired (see fx_probe_end); FX_ENOMEM. Never blocks. */
int fx_probe_begin(struct fx_thread *t, uint32_t depth, bool recover);
/* With the probe taken: signals t (SIGPROF, SI_QUEUE, FX_PROBE_SIGVAL), waits at most wait_ns
 * for its handler, copies the trace to out (depth entries). FX_OK; FX_ESTATE if it timed out
 * or the SIGPROF handler is not fxagent's; FX_EUNSUPPORTED if the signal could not be sent. */
int fx_probe_run(struct fx_thread *t, int64_t wait_ns, fx_asgct_frame *out, int32_t *num_frames);
/* After a run that returned FX_OK, with the probe still taken: ASGCT's own num_frames and the
 * recovery byte (sample.h: 0 none, an FX_REC_* case when *num_frames is the recovered count). */
void fx_probe_recovery(const struct fx_thread *t, int32_t *asgct_code, uint8_t *recovery);
/* With `recover`, ASGCT not -3: the anchor walk's FX_REC_ANCHOR or < 0 (0 not done), its frames
 * in out (depth entries), *n of them; *whole: ended at the first entry frame; *af: fx_recover.h */
int32_t fx_probe_shadow(const struct fx_thread *t, fx_asgct_frame *out, int32_t *n, bool *whole,
                        struct fx_anchor_facts *af);
/* Gives the probe back, unless a handler claimed its last request and never finished (retired). */
void fx_probe_end(struct fx_thread *t);
struct fx_probe_stats {
    uint64_t requested, served, timeouts, retired, not_sent;
};
void fx_probe_stats(struct fx_probe_stats *out);

/* --- vthreads.c: the virtual thread each carrier runs (issue 22, JDK 21+) --- */

/* With the JVMTI setup: the mount events' indexes, if the VM has them (vthreads.c). */
void fx_vthreads_setup(jvmtiEnv *jvmti);
/* A start: the fields the callbacks read, then the way this recording tracks mounts. */
void fx_vthreads_start(JNIEnv *jni);
/* Mount tracking runs. */
bool fx_vthreads_on(void);
/* A named virtual thread, queued at its first mount (its cache line's, after eviction). */
struct fx_vthread_name {
    uint64_t id;
    char name[64];
};
/* Drain: takes up to cap queued names, oldest first. */
size_t fx_vthreads_take_names(struct fx_vthread_name *out, size_t cap);
struct fx_vthreads_counts {
    uint64_t mounts, unmounts, no_carrier, names_read, names_queued, names_lost;
    const char *route, *why, *transitions; /* how; why not the field; HotSpot's flag */
};
void fx_vthreads_counts(struct fx_vthreads_counts *out);
/* A new recording: the counts from zero (fx_sampling_new_recording, also vtwait's). */
void fx_vthreads_new_recording(void);
/* Wall sampler: the state a sample of carrier t carries, given the carrier's own (jvmti_state,
 * and carrier_state mapped from it). */
uint8_t fx_vthreads_wall_state(JNIEnv *jni, const struct fx_thread *t, jint jvmti_state,
                               uint8_t carrier_state);

/* --- vtwait.c: virtual threads' waits of at least vtwait= (issue 22) --- */
/* One wait, then nframes jvmtiFrameInfo (leaf first) of the virtual thread's stack. */
struct fx_vtwait_rec {
    int64_t t0, t1;     /* its unmount and its next mount */
    uint64_t id;        /* Thread.threadId() */
    int64_t timeout_ns; /* VirtualThread.timeout at the mount (a timed park's), -1: no field */
    uint16_t nframes;
    uint8_t truncated;
    uint8_t pad[5];
};
struct fx_vtwait_figures {
    uint64_t long_waits;   /* waits of at least vtwait= */
    uint64_t recorded;     /* of which queued with a stack */
    uint64_t rate_limited; /* of which left out by the rate limit */
    uint64_t stack_failed; /* recorded without a stack (GetStackTrace failed) */
    uint64_t overwritten;  /* unmounts whose time another virtual thread's overwrote */
    uint64_t callback_ns;  /* time spent recording them */
    uint64_t queue_full;   /* left out: the queue was full */
};
/* vtwait= of a starting recording (0: off; fx_vthreads_start calls it), or a stop (the mount
 * events stay on). */
void fx_vtwait_start(uint64_t min_ns);
void fx_vtwait_stop(void);
/* The drain: the oldest queued wait (len bytes) or NULL, then its release. */
const struct fx_vtwait_rec *fx_vtwait_peek(uint32_t *len);
void fx_vtwait_release(void);
void fx_vtwait_figures(struct fx_vtwait_figures *out);
void fx_vtwait_new_recording(void);

#endif
