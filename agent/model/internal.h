/* SPDX-License-Identifier: Apache-2.0 */
/* Private to agent/model: the helpers the drain, the window and the markers share. Arrows
 * inside the folder run one way: drain.c -> window.c, stacks.c, tracks.c, methods.c;
 * stacks.c -> native_frames.c;
 * markers.c -> counters.c -> drain.c's figures; nothing calls back into drain.c but through
 * its figures (fx_drain_samples). */
#ifndef FX_MODEL_INTERNAL_H
#define FX_MODEL_INTERNAL_H

#include "frames.h"
#include "fx_jvm_markers.h"
#include "model.h"

/* --- drain.c --- */

/* Samples taken so far (all periods). Any thread (relaxed). */
uint64_t fx_drain_samples(void);

/* --- tracks.c: registered threads as the model's threads --- */

/* True when every registered thread is a track from its registration on, sampled or not (cpu
 * and itimer modes); false when a thread enters the model with its first sample (wall). */
bool fx_tracks_of_every_thread(void);

/* The model's thread index of t, adding t to the model first if it has no samples yet (markers
 * may reach a thread before its first sample). Model owner only. FX_OK or FX_ENOMEM. */
int fx_tracks_index(struct fx_profile *p, struct fx_thread *t, fx_thread_id *out);
/* The registered Java thread with OS id tid that an event it queued belongs to: the live one,
 * else one that ended since (finished, freed a drain pass later: drain.c), so an event queued
 * just before a thread's end still finds it. Not a JVM thread sampled as a native thread
 * (vm_threads.c): JVMTI events on those (the hidden Service Thread posts JIT events) are not
 * about them. NULL when none. Model owner only. */
struct fx_thread *fx_tracks_thread_of_tid(pid_t tid);
/* Its track (fx_tracks_index); FX_ENOTFOUND when there is none. */
int fx_tracks_of_tid(struct fx_profile *p, pid_t tid, fx_thread_id *out);
/* A reaped thread: its track is released (fx_profile_thread_release), so the model frees it
 * once the window no longer holds it. */
void fx_tracks_release(struct fx_profile *p, struct fx_thread *t);
/* Copies the Java thread's current name into the model, if it changed since registration. */
void fx_tracks_refresh_name(JNIEnv *jni, struct fx_profile *p, struct fx_thread *t);

/* --- methods.c: jmethodID -> model frames, resolved while the class is alive --- */

struct fx_methods;
struct fx_methods *fx_methods_new(void);
void fx_methods_free(struct fx_methods *m);
/* The frame for (method, bci); an unresolvable method becomes the "[unknown method]" frame.
 * Returns FX_OK or FX_ENOMEM. */
int fx_methods_frame(struct fx_methods *m, JNIEnv *jni, struct fx_profile *p, jmethodID id,
                     jint bci, fx_frame_id *frame);
/* The same in a Java subcategory (enum fx_java_sub, issue 32) at an inline depth (0: not
 * inlined); a native method keeps "Native method" unless typed Interpreted, C1 or C2 (by the
 * code its frame ran in: frame_types.c). */
int fx_methods_frame_typed(struct fx_methods *m, JNIEnv *jni, struct fx_profile *p, jmethodID id,
                           jint bci, uint8_t sub, uint8_t inline_depth, fx_frame_id *frame);
/* The frame of the compiled method a pc was in without a bci (a prologue or epilogue, or a
 * failure named by its blob): line -1, subcategory Recovered if it tops a recovered stack. */
int fx_methods_blob_frame(struct fx_methods *m, JNIEnv *jni, struct fx_profile *p, jmethodID id,
                          bool recovered, fx_frame_id *frame);
/* native_frames.c: the frame of a stub by its name index (codemap.c) in the VM category,
 * subcategory Stub, or Recovered stub on top of a recovered stack (PROFILE-FORMAT.md §12.1). */
int fx_stub_frame(struct fx_profile *p, uint64_t index, bool recovered, fx_frame_id *out);
uint64_t fx_methods_unknown(const struct fx_methods *m);
uint64_t fx_methods_count(const struct fx_methods *m);

/* --- vthreads.c: virtual threads' samples (issue 22) --- */

/* Where a record goes: its track (`index`, set only when own_track) and, under `root` (a stack,
 * FX_STACK_NONE for none), its `keep` leaf-side ASGCT frames (-1: all). `frozen`: the index of
 * enterSpecial when ASGCT jumped to it over callers still frozen (docs/VALIDATION.md 4.1), whose
 * callee frame is kept: stacks.c puts the "[virtual thread: callers still frozen, ...]" frame
 * under that callee; -1 none. */
struct fx_vt_route {
    fx_thread_id index;
    bool own_track;
    fx_stack_id root;
    int32_t keep, frozen;
};
/* Each drain pass, before the rings: names queued by the mount callbacks. */
void fx_model_vthreads_pass(JNIEnv *jni);
int fx_model_vthreads_route(struct fx_profile *p, const struct fx_sample_rec *r, uint32_t len,
                            struct fx_vt_route *out);
/* A sample with the frozen-callers frame (fx_vt_route.frozen) is in the profile: counted. */
void fx_model_vthreads_frozen_shown(void);
/* meta.extra "Virtual threads" (nothing on a JVM without mount tracking). */
void fx_model_vthreads_report(struct fx_profile *p);
/* A new recording (drain.c's reset): the counts from zero; names and tracks stay. */
void fx_model_vthreads_new_recording(void);
/* The track of virtual thread `id` (added if under the cap), or FX_EFULL past the cap. */
int fx_model_vthreads_track(struct fx_profile *p, uint64_t id, int64_t t_ns, fx_thread_id *index);
/* "NAME #ID", or "virtual thread #ID" when its name is unknown; the length written. */
size_t fx_model_vthreads_label(uint64_t id, char *buf, size_t cap);

/* --- vthreads_wait.c: virtual threads' waits as markers (issue 22) --- */

/* Each drain pass, after the names: the waits the mount callbacks queued. */
/* Its rows of meta.extra "Virtual threads". */

/* --- stacks.c: a ring record's stack in the model, and how stacks came out --- */

/* The stack of a record (len bytes) of thread t's ring. FX_OK, FX_ENOMEM, FX_EFULL (tables
 * full). on_cpu: the thread used CPU since its previous sample (wall mode: a RUNNABLE thread that
 * did not gets a "not on CPU" state frame). under: where a virtual thread's record goes. */
int fx_stacks_of_record(struct fx_methods *m, JNIEnv *jni, struct fx_profile *p,
                        const struct fx_thread *t, const struct fx_sample_rec *r, uint32_t len,
                        bool on_cpu, const struct fx_vt_route *under, fx_stack_id *out);
/* Stacks cut at the depth so far. */
uint64_t fx_stacks_truncated(void);
/* --- stack_depth.c: depth=N as every frame a sample keeps (issue 32 item 7) --- */
/* Cuts *s, when over `depth` frames, to `cut_to` (depth=N/M's M; 0: `depth`) at its root side:
 * the leaf-most frames under one "[truncated]" frame, above `base` (a virtual thread's root,
 * kept when there is room). FX_OK or a model error (*s unchanged). */
int fx_stack_depth_cap(struct fx_profile *p, fx_stack_id base, uint32_t depth, uint32_t cut_to,
                       fx_stack_id *s);
/* Stacks cut by the cap that the Java walk had not cut already. */
uint64_t fx_stack_depth_cuts(void);
void fx_stack_depth_reset(void);
/* The handlers' own recovery counts (struct fx_thread), summed over threads. */
struct fx_recovery_counts {
    uint64_t recovered[FX_REC_CASES], failed[FX_REC_FAILS];
    uint64_t codeheap; /* of recovered: the blob found in the code heaps, not the table */
};
/* meta.extra "AsyncGetCallTrace outcomes" and "Stack recovery". */
void fx_stacks_report(struct fx_profile *p, const struct fx_recovery_counts *handlers);
/* A new recording: the tallies start from zero. */
void fx_stacks_reset(void);

/* --- window.c, for the drain --- */

/* After fx_model_init's profile: the bound, the table limit, the "[stack table full]" stack. */
int fx_window_init(struct fx_profile *p);
/* Owner, after each drain pass: past `memory`, the oldest half of the samples goes. */
void fx_window_bound(struct fx_profile *p);
/* Owner: false for a record older than the current period (counted as late). */
bool fx_window_admit(int64_t time_ns);
/* Owner: the stack of a sample whose stack the full tables cannot take (counted). */
bool fx_window_full_stack(fx_stack_id *out);
/* What the drain knows that a status request shows. */
struct fx_drain_figures {
    uint64_t samples, ring_drops;
    uint64_t methods; /* method ids cached (fx_drain_methods) */
};
/* The drain thread, between passes: serves the pending request, if any. */
void fx_window_serve(JNIEnv *jni, struct fx_profile *p, const struct fx_drain_figures *f);
/* The drain thread, exiting: pending and later requests fail. */
void fx_window_drain_exiting(void);
/* The drain's periodic thread, woken by each request (it may be paused: fx_drain_pause). */
void fx_window_owner(struct fx_periodic *p);

/* --- locks.c, for the drain: a reaped thread leaves the lock waits track list, and its track
 * is released (fx_profile_thread_release) --- */

void fx_locks_thread_reaped(struct fx_profile *p, struct fx_thread *t);
/* The sampler's method cache (jmethodID -> func), NULL while stopped: for the views whose
 * records carry jmethodIDs and are drained after the sampler (vthreads_wait.c). */
struct fx_methods *fx_drain_methods(void);

/* --- jit_info.c: what a JIT marker says about a compiled method --- */

/* CompiledMethodLoad (compiler thread): distinct methods inlined into `root` per the inlining
 * records of compile_info; -1 without such records. No allocation, no JVM call. */
int32_t fx_jit_info_inlined(jmethodID root, const void *compile_info);
/* Model owner: the method's "pkg.Class.name(sig)" string in p, cached per jmethodID. FX_OK or
 * FX_ENOMEM / FX_EFULL from the model. */
int fx_jit_info_name(JNIEnv *jni, struct fx_profile *p, jmethodID id, fx_str_id *out);
/* Stopped (fx_model_idle): the cache goes; its ids are void once the written recording is
 * forgotten (a compaction), and the next start's first JIT marker makes it again. */
void fx_jit_info_idle(void);

/* --- counters.c: counters sampled by the model's owner --- */

/* Samples every counter if `force` or if 100 ms have passed since the last sample. */
void fx_counters_sample(JNIEnv *jni, struct fx_profile *p, int64_t now_ns, bool force);
/* Whether fx_counters_sample(.., force false) would read anything now. */
bool fx_counters_due(const struct fx_profile *p, int64_t now_ns);
void fx_counters_report(struct fx_profile *p, const char *group);
/* A new recording: the rounds and read errors start from zero. */
void fx_counters_reset(void);
/* A stopped agent going idle: the RSS file closed (the model's owner, the drain paused). */
void fx_counters_idle(void);

/* --- gcinfo.c: which collector ran a pause, heap before/after (jmm or MXBeans, drain only) --- */

/* Matches the n pauses seen since the last call with the GC MXBeans' collection counts: fills
 * collector and heap figures where one collection explains a pause (unknown: NULL and -1).
 * Returns false, leaving gc[] alone, when the counts have not caught up with the pauses yet
 * and `final` is false. */
bool fx_gcinfo_attribute(JNIEnv *jni, struct fx_jvm_gc *gc, unsigned n, bool final);
/* A start after a stop, GC events on again: the collections while stopped count as matched. */
void fx_gcinfo_resync(JNIEnv *jni);
/* meta.extra: the source that attributed the pauses (management interface or MXBeans), why not
 * the first, and the CPU time of its set-up with the first heap read. */
void fx_gcinfo_report(struct fx_profile *p, const char *group);

#endif
