/* SPDX-License-Identifier: Apache-2.0 */
/* Private to agent/model: the kinds of frame a ring record's stack is built from besides its
 * Java methods (methods.c): frame types, native frames above, below and between the Java ones,
 * the method a compiler thread compiles, kernel frames. stacks.c puts them together; internal.h
 * includes this header for the rest of the part. */
#ifndef FX_MODEL_FRAMES_H
#define FX_MODEL_FRAMES_H

#include "model.h"

/* --- frame_types.c: the code each Java frame ran in (issue 32) --- */

struct fx_frame_type {
    uint8_t sub;          /* enum fx_java_sub: Interpreted, C1, C2, Inlined, or Other: untyped */
    uint8_t inline_depth; /* Inlined: levels below the compiled frame it was inlined into */
};
/* out[0..n): the type of each of the record's first n ASGCT frames (leaf first), from the
 * record's type words (len: the record's bytes); untyped frames get FX_JAVA_OTHER. ends[k]
 * (k <= FX_TYPES_MAX): the ASGCT frames the first k physical frames hold, -1 past where the
 * match stopped. */
void fx_frame_types_of(const struct fx_sample_rec *r, uint32_t len, int32_t n,
                       struct fx_frame_type *out, int32_t *ends);
/* The same for an allocation sample's walk (alloc_native.c): the "Frame types" figures
 * left as they were. */
void fx_frame_types_ends(const struct fx_sample_rec *r, uint32_t len, int32_t n,
                         struct fx_frame_type *out, int32_t *ends);
/* Where the record's FX_BELOW part (its word count) begins, after the types part; 0 when it
 * holds none or it does not fit in len. */
size_t fx_rec_below_at(const struct fx_sample_rec *r, size_t len);
/* Where the record's two compile-task words (`task`, compile_task.h) begin, after the below part;
 * 0 when it holds none or they do not fit. */
size_t fx_rec_task_at(const struct fx_sample_rec *r, size_t len);
/* Where the record's receiver word (`receiver`, receiver.h) begins, after the task part; 0 when
 * it holds none or it does not fit. */
size_t fx_rec_receiver_at(const struct fx_sample_rec *r, size_t len);
/* meta.extra "Frame types"; and a new recording's start from zero. */
void fx_frame_types_report(struct fx_profile *p);
void fx_frame_types_reset(void);

/* --- native_frames.c: a record's native frames (issue 16, cstack=fp) --- */

/* Pushes the record's native frames (and the mark of where their walk stopped) onto *stack,
 * in category `cat` and subcategory `sub` (cat 0: Native, subcategory by library; else a
 * thread that is not a Java thread: its own category, vm_threads.c). FX_OK, FX_ENOMEM,
 * FX_EFULL. */
int fx_native_frames_push(struct fx_profile *p, const struct fx_sample_rec *r, uint32_t len,
                          uint8_t cat, uint8_t sub, fx_stack_id *stack);
/* Issue 32: a record's native frames below and between its n Java frames (the FX_BELOW part,
 * sample.h), each segment placed: at[i], the ASGCT frame it lies under (rootward of the
 * segment: n for the root segment, under the bottom Java frame), from ends (the physical
 * frames' extent, fx_frame_types_of); `placed` false when a segment between Java frames has
 * no place there (its physical frames beyond the typed or matched ones): only the root one is
 * shown then, under a frame saying so. */
struct fx_below {
    int ns;
    bool placed, leaf; /* leaf: the record has native frames above the Java ones too */
    uint64_t head[FX_BELOW_SEGS + 1];
    const uint8_t *pcs[FX_BELOW_SEGS + 1];
    int32_t at[FX_BELOW_SEGS + 1];
};
void fx_native_below_read(const struct fx_sample_rec *r, uint32_t len, int32_t n,
                          const int32_t *ends, struct fx_below *b);
/* Pushes onto *stack the segments of b that lie under ASGCT frame `at` (at == n first, with
 * the mark of where the root walk stopped; then after each frame is pushed). */
int fx_native_below_push(struct fx_profile *p, struct fx_below *b, int32_t n, int32_t at,
                         fx_stack_id *stack);
/* Issue 32 item 6: an allocation sample's own walk (alloc_native.c), the return addresses pcs[0..n)
 * leaf first from its callback: onto *stack, root first, the mark of `stop` when the walk ended
 * short, then the frames rootward of the rootmost entry into HotSpot's allocation path
 * (MemAllocator::allocate, InterpreterRuntime::, OptoRuntime::, Runtime1::, SharedRuntime::);
 * *dropped: the frames leafward of it, that entry included; *found: whether there was one (none:
 * every frame dropped, and a walk that ended without one is marked as such). */
int fx_native_alloc_push(struct fx_profile *p, const uint64_t *pcs, uint32_t n, uint8_t stop,
                         fx_stack_id *stack, uint32_t *dropped, bool *found);
/* fx_native_below_push for an allocation sample: the same frames, the samples' tallies left. */
int fx_native_alloc_below_push(struct fx_profile *p, struct fx_below *b, int32_t n, int32_t at,
                               fx_stack_id *stack);
/* meta.extra "Native stacks". */
void fx_native_frames_report(struct fx_profile *p);
/* A new recording: the walks' tallies start from zero (the symbol cache stays). */
void fx_native_frames_reset(void);
/* Stopped: the symbol tables of the native libraries (libjvm's alone are several MiB) and the
 * address cache are freed; the next sample with native frames reads them again. */
void fx_native_frames_idle(void);

/* --- alloc_native.c: an allocation sample's native frames (issue 32 item 6) --- */

struct fx_methods;
#define FX_ALLOC_FRAMES_MAX 512 /* GetStackTrace's frames per allocation sample at most */
/* Pushes onto *s (the root side: [truncated] or nothing) the stack of an allocation with
 * GetStackTrace's n frames (leaf first) and its callback's walk (nwords words,
 * fx_alloc_native_walk's layout), up to the allocated class, which the caller adds. FX_OK,
 * FX_ENOMEM, FX_EFULL. */
int fx_alloc_native_stack(struct fx_methods *m, JNIEnv *jni, struct fx_profile *p,
                          const jvmtiFrameInfo *frames, int32_t n, const uint64_t *walk,
                          uint32_t nwords, fx_stack_id *s);
void fx_alloc_native_report(struct fx_profile *p, const char *g); /* into group g */
void fx_alloc_native_new_recording(void);

/* --- compile_tasks.c: the method a compiler thread compiles (issue 32, item 5) --- */

/* A native frame f named `name` (native_frames.c): remembered when it is a compiler's entry. */
void fx_compile_tasks_note(struct fx_profile *p, const char *name, fx_frame_id f);
/* After frame f was pushed (root side first): if f is a compiler's entry and the record carries
 * a compile task not yet *placed, the task's frame goes on *stack. FX_OK, FX_ENOMEM, FX_EFULL. */
int fx_compile_tasks_after(struct fx_profile *p, const struct fx_sample_rec *r, uint32_t len,
                           fx_frame_id f, uint8_t cat, uint8_t sub, fx_stack_id *stack,
                           bool *placed);
/* Once per record, after its native frames: the read's outcome, and a compile not placed. */
void fx_compile_tasks_count(const struct fx_sample_rec *r, uint32_t len, bool placed);
void fx_compile_tasks_report(struct fx_profile *p); /* meta.extra "Compile tasks" */
void fx_compile_tasks_reset(void);

/* --- receivers.c: a dispatch stub's receiver class (issue 32, item 3) --- */

/* After a recovered stack whose leaf is a vtable/itable stub: its receiver's class as a frame on
 * *stack (VM category, "Receiver class"), when the handler read it and it is named; else
 * nothing, counted. FX_OK, FX_ENOMEM, FX_EFULL. */
int fx_receivers_push(struct fx_profile *p, const struct fx_sample_rec *r, uint32_t len,
                      fx_stack_id *stack);
void fx_receivers_report(struct fx_profile *p); /* meta.extra "Receivers under dispatch stubs" */
void fx_receivers_reset(void);

/* --- kernel_frames.c: a record's kernel frames (issue 16, kstack=yes) --- */

/* Pushes the record's kernel frames onto *stack (above its native frames), in the Kernel
 * category, or in `cat`/`cat_sub` when cat is not 0: a GC, JIT or VM thread's frames all take
 * the thread's category (vm_threads.c), so its activity graph says GC even in a page fault.
 * FX_OK, FX_ENOMEM, FX_EFULL. */
int fx_kernel_frames_push(struct fx_profile *p, const struct fx_sample_rec *r, uint32_t len,
                          uint8_t cat, uint8_t cat_sub, fx_stack_id *stack);
/* Stopped (fx_model_idle): frees the kallsyms table and its caches. */
void fx_kernel_frames_idle(void);
/* meta.extra "Kernel stacks": the figures, or why the profile has no kernel frames. */
void fx_kernel_frames_report(struct fx_profile *p);
/* A new recording: the counts from zero; the kallsyms table stays (per JVM). */
void fx_kernel_frames_new_recording(void);

#endif
