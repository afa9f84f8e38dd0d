/* SPDX-License-Identifier: Apache-2.0 */
/* The profile model: everything a Firefox Profiler processed profile holds, JVM-free.
 * One owner (the drain thread) mutates it; the writer reads it. Strings, funcs, frames and
 * stacks are interned (get-or-create) and addressed by small typed ids; samples store only a
 * stack id, so memory grows with unique stacks and strings, and per sample by a few bytes.
 * Threads (the file's tracks), counters and marker schemas have typed ids too, so that a thread
 * index cannot be passed where a counter or a schema is meant (the compiler refuses it).
 * Times are int64 nanoseconds on one monotonic clock; the writer turns them into ms relative
 * to the profile's start. No function here may be called from a signal handler. */
#ifndef FX_PROFILE_H
#define FX_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fx_err.h"

typedef struct {
    uint32_t i;
} fx_str_id;
typedef struct {
    uint32_t i;
} fx_func_id;
typedef struct {
    uint32_t i;
} fx_frame_id;
typedef struct {
    uint32_t i;
} fx_stack_id;
typedef struct {
    uint32_t i;
} fx_thread_id;
typedef struct {
    uint32_t i;
} fx_counter_id;
typedef struct {
    uint32_t i;
} fx_schema_id;

/* FX_STACK_NONE: "no parent" for a root; a null sample stack. */
#define FX_NONE_ID    UINT32_MAX
#define FX_STR_NONE   ((fx_str_id){FX_NONE_ID})
#define FX_STACK_NONE ((fx_stack_id){FX_NONE_ID})
/* FX_SCHEMA_NONE: a marker without data (data: null). */
#define FX_SCHEMA_NONE ((fx_schema_id){FX_NONE_ID})

/* The category list; the indexes are part of the writer's ABI (PROFILE-FORMAT.md §12.1). */
enum fx_category {
    FX_CAT_OTHER = 0, /* grey, the default category */
    FX_CAT_IDLE,
    FX_CAT_JAVA,
    FX_CAT_NATIVE,
    FX_CAT_GC,
    FX_CAT_JIT,
    FX_CAT_VM,
    FX_CAT_ALLOC,  /* the allocated class, leaf of an allocation's stack (issue 17) */
    FX_CAT_KERNEL, /* kernel frames of perf callchains (issue 16) */
    FX_CAT_COUNT
};

/* Issue 18, wall mode: the state of a thread that was not running (its leaf "[state: ...]"
 * frame), appended after Other so the category's index 0 keeps its meaning. */
enum fx_idle_subcategory {
    FX_IDLE_OTHER = 0,
    FX_IDLE_RUNNABLE, /* RUNNABLE but no CPU used since the previous sample: waiting for a CPU */
    FX_IDLE_BLOCKED,  /* blocked entering a monitor (synchronized) */
    FX_IDLE_WAITING,  /* Object.wait, Thread.join */
    FX_IDLE_SLEEPING, /* Thread.sleep */
    FX_IDLE_PARKED,   /* LockSupport.park: j.u.c. locks, queues, conditions */
    FX_IDLE_NATIVE,   /* in native code (I/O, JNI) without using CPU */
    FX_IDLE_PINNED,   /* a virtual thread waiting while pinned to its carrier (issue 22) */
};

enum fx_java_subcategory {
    FX_JAVA_OTHER = 0,
    FX_JAVA_INTERPRETED,
    FX_JAVA_C1,
    FX_JAVA_C2,
    FX_JAVA_INLINED,
    FX_JAVA_NATIVE_METHOD,
    FX_JAVA_RECOVERED, /* the method whose prologue/epilogue the pc was in (stack recovery) */
};

enum fx_native_subcategory {
    FX_NATIVE_OTHER = 0,
    FX_NATIVE_LIBJVM,
    FX_NATIVE_LIBC, /* libc, the dynamic loader, the vDSO ("libc/kernel") */
    FX_NATIVE_JNI,  /* a JNI function (a Java_* symbol) */
};

enum fx_vm_subcategory {
    FX_VM_OTHER = 0,
    FX_VM_SAFEPOINT,
    FX_VM_CLASS_LOADING,
    FX_VM_STUB,           /* generated code named by HotSpot ("itable stub", "Interpreter") */
    FX_VM_RECOVERED_STUB, /* a stub on top of a recovered stack */
    FX_VM_RECEIVER,       /* issue 32: the receiver's class, leafward of a vtable/itable stub */
};

enum fx_kernel_subcategory {
    FX_KERNEL_OTHER = 0,
    FX_KERNEL_SYSCALL,    /* under a system call entry (entry_SYSCALL_64, do_syscall_64) */
    FX_KERNEL_PAGE_FAULT, /* under a page fault (asm_exc_page_fault, exc_page_fault) */
};

struct fx_profile;

struct fx_profile *fx_profile_new(void);
void fx_profile_free(struct fx_profile *p);

/* --- interning (get-or-create); on failure *out is untouched and nothing was added --- */

/* Any bytes (modified UTF-8 included); the writer makes them valid UTF-8. */
int fx_profile_string(struct fx_profile *p, const char *s, size_t len, fx_str_id *out);
int fx_profile_cstring(struct fx_profile *p, const char *s, fx_str_id *out);
const char *fx_profile_string_at(const struct fx_profile *p, fx_str_id id, size_t *len);

struct fx_func_key {
    fx_str_id name;     /* "com.example.App.compute" */
    fx_str_id resource; /* jar or module name, or FX_STR_NONE */
    fx_str_id source;   /* "com/example/App.java", or FX_STR_NONE */
    int32_t line;       /* first line of the function, or -1 */
    bool is_java;
};
int fx_profile_func(struct fx_profile *p, const struct fx_func_key *k, fx_func_id *out);

/* A native library (issue 16), for the root `libs` array: a resource whose name equals a lib's
 * name is written as that library (resourceTable.lib, type 1 "Library"). Strings are copied;
 * libraries outlive resets and compaction (they are facts about the process, not samples). */
struct fx_lib_desc {
    const char *name;     /* file name, e.g. "libz.so.1.2.13": the resource name of its funcs */
    const char *path;     /* full path, or the name for "[vdso]" */
    const char *build_id; /* lowercase hex GNU build-id, "" or NULL when unknown */
};
/* Adds the library unless one of the same name is known (FX_OK either way). FX_EINVAL without a
 * name, FX_ENOMEM (nothing added). */
int fx_profile_lib(struct fx_profile *p, const struct fx_lib_desc *d);
uint32_t fx_profile_lib_count(const struct fx_profile *p);

struct fx_frame_key {
    fx_func_id func;
    int32_t line; /* line executed in this frame, or -1 */
    uint8_t category;
    uint8_t subcategory;
    uint8_t inline_depth;
};
int fx_profile_frame(struct fx_profile *p, const struct fx_frame_key *k, fx_frame_id *out);

/* prefix is FX_STACK_NONE for a root frame. */
int fx_profile_stack(struct fx_profile *p, fx_stack_id prefix, fx_frame_id frame, fx_stack_id *out);
/* A stack's own row: its prefix (FX_STACK_NONE at a root) and its frame; FX_EINVAL for an
 * unknown stack. */
int fx_profile_stack_at(const struct fx_profile *p, fx_stack_id s, fx_stack_id *prefix,
                        fx_frame_id *frame);

/* Convenience: a root frame named `label` (a pseudo-frame such as "[AGCT: GC active]"), not
 * Java, in `category`; returns its one-frame stack. Four get-or-creates in a row: after a
 * failure the string or func already interned stays (valid, reused by the next call). */
int fx_profile_label_stack(struct fx_profile *p, const char *label, uint8_t category,
                           fx_stack_id *out);
/* The same frame alone, in `category` and `subcategory` (a frame pushed on another stack). */
int fx_profile_label_frame(struct fx_profile *p, const char *label, uint8_t category,
                           uint8_t subcategory, fx_frame_id *out);

/* --- threads --- */

int fx_profile_thread_add(struct fx_profile *p, const char *name, int64_t tid, int64_t register_ns,
                          fx_thread_id *out);
int fx_profile_thread_set_name(struct fx_profile *p, fx_thread_id thread, const char *name);
/* A view's track of thread `owner` (its lock waits, issue 30), with the owner's tid, named
 * "OWNER_NAME" + suffix: the writer puts it right after its owner's track and names it after the
 * owner's track as written (its "(tid N)" included) + suffix. */
int fx_profile_thread_add_companion(struct fx_profile *p, fx_thread_id owner, const char *suffix,
                                    int64_t register_ns, fx_thread_id *out);
void fx_profile_thread_unregister(struct fx_profile *p, fx_thread_id thread, int64_t t_ns);
/* A thread's index stays valid while someone holds it: fx_profile_thread_add gives the caller
 * one hold, fx_profile_thread_hold one more (another writer that keeps the index). Once every
 * holder released it, the thread ended (unregister) and it is gone from the window (ended before
 * the oldest time held, no sample, marker or allocation row left: fx_profile_drop_before), its
 * memory is freed and a later fx_profile_thread_add may take its index. A released index must
 * not be used again (calls taking it fail with FX_EINVAL once its slot is vacant). */
void fx_profile_thread_hold(struct fx_profile *p, fx_thread_id thread);
void fx_profile_thread_release(struct fx_profile *p, fx_thread_id thread);
/* The thread that becomes the process track (exactly one; default: the first added). */
void fx_profile_set_main_thread(struct fx_profile *p, fx_thread_id thread);
/* The thread table's length: thread indexes in use, vacant slots included. */
uint32_t fx_profile_thread_count(const struct fx_profile *p);
/* Threads in the table that are not vacant (held, or holding rows the window keeps). */
uint32_t fx_profile_threads_held(const struct fx_profile *p);

/* What a thread's sample weights count (samples.weightType, PROFILE-FORMAT.md §7): the call
 * tree sums them in that unit. FX_WEIGHT_TRACING_MS: each weight is a duration in µs (written
 * as ms with 3 decimals, and always written: a missing weight would mean 1 ms), e.g. a track of
 * blocked time by stack; FX_WEIGHT_BYTES: each weight is bytes. Default FX_WEIGHT_SAMPLES. */
enum fx_weight_type {
    FX_WEIGHT_SAMPLES = 0,
    FX_WEIGHT_TRACING_MS,
    FX_WEIGHT_BYTES,
    FX_WEIGHT_TYPE_COUNT
};
int fx_profile_thread_set_weight_type(struct fx_profile *p, fx_thread_id thread,
                                      enum fx_weight_type type);
/* Marks a tracing-ms track as idle waits (issue 30: a thread parked waiting for work), counted
 * apart from lock waits by fx_profile_totals; the file tells it by its name's ": idle waits". */
int fx_profile_thread_set_idle_waits(struct fx_profile *p, fx_thread_id thread);

/* --- samples: per thread, in non-decreasing time (an earlier time is clamped to the last) ---
 * cpu_delta_ns: CPU time the thread used since its previous sample, or -1 if unknown.
 * weight: 1 normally; >1 when one sample stands for several (timer overruns). */
int fx_profile_sample(struct fx_profile *p, fx_thread_id thread, int64_t time_ns, fx_stack_id stack,
                      int64_t cpu_delta_ns, uint32_t weight);
uint64_t fx_profile_sample_count(const struct fx_profile *p);

/* --- allocations (issue 17): each thread's nativeAllocations table, balanced ---
 * An allocation is a positive row (its stack, its estimated bytes, a unique nonzero address);
 * its free is a second row on the allocating thread, with the same address and stack and the
 * negated bytes, so the table balances and the front-end's retained-memory summary can pair
 * them. The model keeps the allocations not yet freed (address -> thread, stack, bytes), so a
 * free needs only the address, and the stack it copies follows compaction. Times clamp like
 * samples (never earlier than the thread's previous row). */
/* bytes > 0; an address already live is refused (FX_EINVAL). */
int fx_profile_alloc(struct fx_profile *p, fx_thread_id thread, int64_t time_ns, fx_stack_id stack,
                     int64_t bytes, uint64_t address);
/* The free of a live allocation: FX_ENOTFOUND when the model does not hold it (never added, or
 * dropped by fx_profile_drop_before: its free would leave negative retained bytes). */
int fx_profile_alloc_free(struct fx_profile *p, int64_t time_ns, uint64_t address);
/* Rows (allocations and frees) held, and allocations held that were not freed. */
uint64_t fx_profile_alloc_count(const struct fx_profile *p);
uint64_t fx_profile_alloc_live(const struct fx_profile *p);

/* --- markers --- */

enum fx_marker_phase {
    FX_PHASE_INSTANT = 0,
    FX_PHASE_INTERVAL = 1,
    FX_PHASE_START = 2,
    FX_PHASE_END = 3,
};

enum fx_field_format {
    FX_FMT_STRING,        /* value.s holds a string id; written as text */
    FX_FMT_UNIQUE_STRING, /* value.s; written as the string index */
    FX_FMT_INTEGER,       /* value.i */
    FX_FMT_BYTES,         /* value.i */
    FX_FMT_DURATION,      /* value.d, ms */
    FX_FMT_DECIMAL,       /* value.d */
    FX_FMT_PERCENTAGE,    /* value.d, 0..1 */
};

enum fx_marker_display {
    FX_DISPLAY_CHART = 1 << 0,
    FX_DISPLAY_TABLE = 1 << 1,
    FX_DISPLAY_TIMELINE_OVERVIEW = 1 << 2,
    FX_DISPLAY_TIMELINE_MEMORY = 1 << 3,
};

struct fx_marker_field {
    const char *key;
    const char *label;
    enum fx_field_format format;
};

#define FX_MARKER_MAX_FIELDS 8

/* A schema is static data: the model keeps a pointer to it. name must not be a reserved
 * Firefox type (PROFILE-FORMAT.md §10.1); fxagent's start with "Jvm" or "Fx". */
struct fx_marker_schema {
    const char *name;
    const char *tooltip_label, *table_label, *chart_label, *description; /* NULL: omitted */
    unsigned display; /* fx_marker_display bits */
    const struct fx_marker_field *fields;
    unsigned n_fields; /* <= FX_MARKER_MAX_FIELDS */
};

union fx_marker_value {
    fx_str_id s;
    int64_t i;
    double d;
};

/* Registers a schema once (same pointer again gives the same index). FX_EINVAL for a field
 * keyed "type" or "cause": the front-end reads data.type as the schema name and data.cause as
 * the marker's stack ({stack: index}), so such a field breaks the marker. */
int fx_profile_schema(struct fx_profile *p, const struct fx_marker_schema *s, fx_schema_id *out);

/* schema FX_SCHEMA_NONE: data is null; otherwise `values` has the schema's n_fields values.
 * Unused times (e.g. end of an instant) are ignored. */
int fx_profile_marker(struct fx_profile *p, fx_thread_id thread, fx_str_id name, uint8_t phase,
                      uint8_t category, int64_t start_ns, int64_t end_ns, fx_schema_id schema,
                      const union fx_marker_value *values);

/* The stack of the thread's last marker (written as data.cause = {time: its start, stack}):
 * where the thread was during the marker, e.g. a lock wait. FX_EINVAL without a marker, for a
 * marker without a schema (data null has no cause), or for an unknown stack. */
int fx_profile_marker_stack(struct fx_profile *p, fx_thread_id thread, fx_stack_id stack);

/* Markers packed from now on (core/model/marker_pack.c): about 12 bytes a marker instead of
 * 42, for a profile built once and then written (fxprof convert of a JFR recording's millions of
 * traced calls). The window's operations refuse such a profile (fx_profile_drop_before drops
 * nothing, fx_profile_snapshot gives NULL, fx_profile_compact FX_EINVAL). FX_EINVAL once a thread
 * holds markers. */
int fx_profile_pack_markers(struct fx_profile *p);

/* --- counters (drawn as graphs in the timeline) --- */

struct fx_counter_desc {
    const char *name;     /* "Java heap used" */
    const char *category; /* "Memory" */
    const char *description;
    const char *unit;  /* "bytes", or "" for a plain count */
    const char *color; /* a GraphColor: blue, green, grey, ink, magenta, orange, ... */
};
int fx_profile_counter(struct fx_profile *p, const struct fx_counter_desc *d, fx_counter_id *out);
/* An absolute value at time t (the writer emits the deltas that line-accumulated wants). */
int fx_profile_counter_sample(struct fx_profile *p, fx_counter_id counter, int64_t t_ns,
                              int64_t value);

/* --- meta --- */

/* t0: every time in the file is relative to start_ns; epoch_ms is the wall clock at t0. */
void fx_profile_set_start(struct fx_profile *p, int64_t start_ns, double epoch_ms);
/* Sampling start and end (profilingStartTime/EndTime); end 0 = unknown. */
void fx_profile_set_range(struct fx_profile *p, int64_t begin_ns, int64_t end_ns);
void fx_profile_set_interval(struct fx_profile *p, double interval_ms);
void fx_profile_set_pid(struct fx_profile *p, int64_t pid);
/* Known keys: "product", "processName", "oscpu", "platform", "arguments", "CPUName". Copied;
 * unknown keys: FX_EINVAL. */
int fx_profile_set_meta(struct fx_profile *p, const char *key, const char *value);
/* Known keys: "logicalCPUs", "physicalCPUs", "mainMemory" (bytes). Unknown keys: FX_EINVAL. */
int fx_profile_set_meta_int(struct fx_profile *p, const char *key, int64_t value);

/* meta.extra: groups of labelled entries; setting a label again replaces its value. */
int fx_profile_extra_str(struct fx_profile *p, const char *group, const char *label,
                         const char *value);
int fx_profile_extra_int(struct fx_profile *p, const char *group, const char *label, int64_t value);
/* When the Firefox writer shows an integer entry. NONZERO: a figure worth a row only when it is
 * not 0 (how often a rare path ran), so "Profile Info" lists what happened, not every path that
 * did not. LOSS: a drop or failure count, a row when it is not 0; a group whose every such count
 * is 0 shows one row "losses": "none" instead (PROFILE-FORMAT.md, meta.extra). */
enum fx_extra_show {
    FX_EXTRA_ALWAYS,
    FX_EXTRA_NONZERO,
    FX_EXTRA_LOSS
};
int fx_profile_extra_count(struct fx_profile *p, const char *group, const char *label,
                           int64_t value, enum fx_extra_show show);
int fx_profile_extra_detail(struct fx_profile *p, const char *group, const char *label,
                            int64_t value);
/* A group's figures as one table: each row fx_profile_extra_count'ed in order (one that cannot
 * be set for want of memory is missing). Returns how many NONZERO rows are 0 (left out of
 * "Profile Info"). */
struct fx_extra_row {
    const char *label;
    uint64_t value;
    enum fx_extra_show show;
};
int fx_profile_extra_rows(struct fx_profile *p, const char *group, const struct fx_extra_row *rows,
                          size_t n);
int fx_profile_extra_loss(struct fx_profile *p, const char *group, const char *label,
                          int64_t value);
/* Empties meta.extra (a new recording: its figures start again). */
void fx_profile_extra_clear(struct fx_profile *p);
/* meta.extra's string entry `label` of `group`, or NULL (profile_sources.c). */
const char *fx_profile_extra_find(const struct fx_profile *p, const char *group, const char *label);

/* --- Java sources (issue 34, core/model/profile_sources.c; include/fx_src.h embeds them) --- */
uint32_t fx_profile_source_count(const struct fx_profile *p); /* rows of shared.sources */
const char *fx_profile_source_name(const struct fx_profile *p, uint32_t row); /* NULL: no row */
/* For each row (heat and named have fx_profile_source_count entries): whether a frame names
 * it, and the weight of the samples of the threads written whose stack holds a frame of it,
 * each sample once per file (tracing-ms weights in ms). FX_ENOMEM leaves both unspecified. */
int fx_profile_source_heat(const struct fx_profile *p, double *heat, bool *named);
/* The next write's sources.content: text[row] (NULL: null) for each of the n rows, borrowed
 * until cleared with NULL; an n other than the table's length clears it. */
void fx_profile_set_source_content(struct fx_profile *p, const char *const *text, uint32_t n);

/* --- whole-model figures, for status lines and memory bounds --- */
size_t fx_profile_memory(const struct fx_profile *p); /* bytes held by the model */

/* --- the window: bounded memory, resets, copies for dumps (core/model/profile_window.c) --- */

/* Rows are samples and allocation rows (fx_profile_alloc), which the memory bound counts alike.
 * The oldest row time of every thread, INT64_MAX without rows. */
int64_t fx_profile_oldest_sample(const struct fx_profile *p);
/* The smallest time t with at least n rows older than t (time < t); past the newest row when
 * the profile holds fewer than n; INT64_MIN for n == 0 or no rows. */
int64_t fx_profile_cut_time(const struct fx_profile *p, uint64_t n);
/* Drops every sample older than t_ns, every instant marker and interval marker older than t_ns
 * (start/end halves stay), and counter values older than t_ns; sample columns give memory back
 * (capacity shrinks to the smallest 16 * 2^k that holds the rest). Allocation rows older than
 * t_ns go, with the frees (however new) of the allocations they drop, and a live allocation
 * dropped is forgotten (its free is refused later). Returns the samples dropped. Threads, tables
 * and every id stay valid. */
uint64_t fx_profile_drop_before(struct fx_profile *p, int64_t t_ns);
/* A deep, tight copy to write on another thread while the owner goes on (without the map of
 * live allocations: a copy is written, it takes no frees). Threads that ended
 * before the oldest time the window holds (the start, or the last fx_profile_drop_before) and
 * hold no samples nor markers are left out, and so are those fx_profile_threads_aliased counts.
 * NULL when out of memory. */
struct fx_profile *fx_profile_snapshot(const struct fx_profile *p);
/* Threads a snapshot keeps that hold no sample (empty tracks). */
uint32_t fx_profile_threads_without_samples(const struct fx_profile *p);
/* Threads a snapshot leaves out as the main thread's OS thread under another name (no sample,
 * marker or allocation, the tid of main, which has some): DestroyJavaVM after main(). */
uint32_t fx_profile_threads_aliased(const struct fx_profile *p);
/* Whether a snapshot leaves thread i out (ended before the window and empty, or counted by
 * fx_profile_threads_aliased); the Firefox writer leaves it out too (a dump at VM death writes
 * the model itself, not a snapshot). */
bool fx_profile_thread_left_out(const struct fx_profile *p, fx_thread_id thread);
/* Whether thread i is a view's track of another thread (fx_profile_thread_add_companion). */
bool fx_profile_thread_is_companion(const struct fx_profile *p, fx_thread_id thread);
/* The figures every output repeats (issue 30: the exit line, Profile Info's "Samples in this
 * file" and fxprof summary give the same), over the threads the writer writes, each view apart:
 * cpu: the weight of the samples of the sampled tracks (weightType samples), "[idle]" left out
 * (a thread off the CPU: counted in idle); waits: the samples with a stack of the tracing-ms
 * tracks (lock waits; a sample without a stack, e.g. a wait's end, is no wait), wait_us their
 * weights; idle_waits, idle_wait_us: the same of the idle waits tracks (fx_profile_thread_set_
 * idle_waits), never in waits; allocations: the nativeAllocations rows with bytes > 0, alloc_bytes
 * their bytes. */
struct fx_profile_totals {
    uint64_t cpu, cpu_rows, idle;
    uint64_t waits, wait_us;
    uint64_t idle_waits, idle_wait_us;
    uint64_t allocations;
    int64_t alloc_bytes;
};
void fx_profile_totals(const struct fx_profile *p, struct fx_profile_totals *out);
/* Once the interned tables (strings, funcs, frames, stacks, resources, sources) hold `bytes`
 * or more, a get-or-create that would add a row fails with FX_EFULL; existing keys are still
 * found. Tables grow by doubling, so they may reach about twice the limit. 0: no limit. */
void fx_profile_set_table_limit(struct fx_profile *p, size_t bytes);
size_t fx_profile_table_memory(const struct fx_profile *p); /* bytes held by those tables */
/* Rebuilds the interned tables with only the rows that the samples and markers held reach
 * (core/model/profile_compact.c): after a reset, the next period starts from what it needs, not
 * from every stack ever seen. Renumbers every string, func, frame and stack id: ids kept from
 * before are void once fx_profile_generation has changed. On failure (FX_ENOMEM) nothing changed.
 */
int fx_profile_compact(struct fx_profile *p);
uint32_t fx_profile_generation(const struct fx_profile *p);

#endif
