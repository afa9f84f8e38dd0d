/* SPDX-License-Identifier: Apache-2.0 */
/* The JFR converter's shared state (issue 35), private to cli/jfr_profile.c (threads, stacks,
 * samples, allocations, event counts), cli/jfr_markers.c (events as markers) and
 * cli/jfr_counters.c (heap and CPU load counters). One struct conv per conversion; its caches of
 * pool keys live for one chunk. */
#ifndef FX_CLI_JFR_PROFILE_H
#define FX_CLI_JFR_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fx_jfr.h"
#include "fx_profile.h"

#define NATIVE_LEAF    "[state: IN_NATIVE]"
#define TRUNCATED_ROOT "[JFR: stack truncated (the recording's stackdepth)]"
#define NO_STACK       "[JFR: no stack trace]"
#define NO_THREAD      "[JFR: unknown thread]"
#define CPU_SUFFIX     " (CPU time)"
#define STR_CAP        1024

/* Namespaces of the per-chunk cache (the map's cls slot). */
enum {
    C_STACK = 0,
    C_NSTACK,
    C_THREAD,
    C_METHOD,
    C_FTYPE,
    C_CLASS,
    C_CTHREAD, /* a thread's CPU-time track */
    C_LMETHOD, /* a native library's function (async-profiler's frames) */
    C_TEXT     /* C_TEXT + the pool's class: a marker field's text of a pool object */
};

/* A sample, or an allocation of `bytes` (> 0). */
struct srow {
    int64_t t, bytes;
    uint32_t thread, stack;
};

/* An event read: its class, and its time, thread and stack fields. */
struct ev_fields {
    uint32_t cls;
    int time, thread, stack;
};

/* Class and field indexes of the chunk (-1 / UINT32_MAX where the chunk lacks them). */
struct layout {
    struct ev_fields exec, native, cpu, cpu_lost; /* the events read */
    /* jdk.ObjectAllocationSample, ObjectAllocationInNewTLAB, ObjectAllocationOutsideTLAB: the
     * event, its class field, its weight (weight, tlabSize; -1: none) and its size fields */
    struct ev_fields alloc[3];
    int a_class[3], a_weight[3], a_size[3];
    int t_os_name, t_os_id, t_java_name, t_java_id; /* java.lang.Thread */
    int st_truncated, st_frames;                    /* jdk.types.StackTrace */
    int f_method, f_line, f_type;                   /* jdk.types.StackFrame */
    int m_type, m_name;                             /* jdk.types.Method */
    int c_name;                                     /* java.lang.Class */
    int s_string;                                   /* jdk.types.Symbol */
    int ft_desc;                                    /* jdk.types.FrameType */
    bool async_profiler; /* async-profiler wrote the chunk: it defines profiler.* types */
};

struct type_count {
    char *name;
    uint64_t n;
};

/* jfr_markers.c's events: class and fields (-1: absent) of each marker type of the chunk; f:
 * the JFR field of each of the type's schema fields. */
#define JFR_MARKER_TYPES  18
#define JFR_MARKER_FIELDS 7
struct mk_fields {
    uint32_t cls;
    int time, duration, thread, stack, alloc_time;
    int f[JFR_MARKER_FIELDS];
};

/* jfr_counters.c's state: the chunk's classes and fields, the whole recording's counters and
 * the chunk's values (sorted by time at its end). */
enum {
    JFR_HEAP_USED,
    JFR_HEAP_COMMITTED,
    JFR_CPU_USER,
    JFR_CPU_SYSTEM,
    JFR_CPU_MACHINE
};
#define JFR_COUNTERS 5
struct crow {
    int64_t t, v;
    uint32_t which;
};
struct jfr_counters {
    uint32_t heap_cls, load_cls;
    int h_time, h_used, h_space, vs_committed, l_time, l_f[3];
    fx_counter_id id[JFR_COUNTERS];
    bool made[JFR_COUNTERS];
    struct crow *rows;
    size_t n, cap;
    uint64_t values, unread;
};

struct conv {
    struct fx_jfr *r;
    struct fx_profile *p;
    struct layout l;
    struct fx_jfr_map cache;   /* per chunk */
    struct fx_jfr_map threads; /* Java thread id -> profile thread, whole recording */
    /* the last thread reference resolved in this chunk (plain and CPU-time): a thread's
     * events come in runs, and this saves a lookup in `cache` for each */
    struct thread_memo {
        int64_t ref;
        fx_thread_id th;
        bool ok;
    } last_thread[2];
    /* the stacks resolved lately in this chunk, a slot per reference's hash (jfr_resolve.c):
     * a traced call's stack is often one of its thread's last few calls', and this saves a
     * lookup in `cache` (a miss of the CPU's caches) for each; gen: the chunk's number, so
     * that a slot of another chunk reads as empty. NULL: none (out of memory), `cache` only */
#define SMEMO_BITS 12
    struct stack_memo {
        int64_t ref;
        uint32_t id, gen;
    } * smemo;
    uint32_t gen;
    /* model stack nodes lately found, a slot per (prefix, frame) hash (jfr_resolve.c): the
     * frames of a new stack past those it shares with the stack before are mostly nodes made
     * already, and the model's index finds each with a miss of the CPU's caches or more. The
     * model's ids last the whole conversion: no generation. node + 1 (0: empty); NULL: none */
#define NMEMO_BITS 16
    struct node_memo {
        uint32_t prefix, frame, node1;
    } * nmemo;
    /* the texts of pool objects in markers' fields lately made (jfr_markers.c), the same way:
     * a traced method's name, read at each of its calls */
    struct text_memo {
        int64_t ref;
        uint32_t cls, sid, gen;
    } tmemo[256];
    /* stacks known by their bytes across chunks (jfr_rawstack.c): bytes hash -> model stack,
     * and the names and frame types of the ids they were resolved with */
    struct rawstacks {
        struct fx_jfr_map known, names;
        uint64_t layout; /* the stack fields' indexes they were read with */
        bool ok;         /* this chunk's ids mean what they meant: known stacks are reused */
    } rs;
    struct srow *rows;
    size_t n_rows, cap_rows;
    uint64_t *per_class; /* events of each class in this chunk */
    struct type_count *types;
    size_t n_types, cap_types;
    fx_frame_id *frames;
    size_t cap_frames;
    /* the last stack resolved, root first: each frame and its node (jfr_resolve.c) */
    struct path_node {
        uint32_t frame, node;
    } * path;
    size_t n_path, cap_path;
    uint64_t cpu_samples, cpu_lost;
    uint64_t samples, native_samples, allocs, no_stack, no_thread, truncated, alloc_lost;
    uint64_t ap_chunks;   /* chunks async-profiler wrote */
    uint64_t tlab_allocs; /* of allocs: ObjectAllocationInNewTLAB/OutsideTLAB events */
    uint64_t address;     /* the allocations' made-up addresses: JFR has none, nor frees */
    struct mk_fields mk[JFR_MARKER_TYPES];
    fx_schema_id mk_schema[JFR_MARKER_TYPES]; /* each type's, once made (mk_made) */
    fx_str_id mk_name[JFR_MARKER_TYPES];
    bool mk_made[JFR_MARKER_TYPES];
    struct jfr_counters cnt;
    uint64_t markers;
    fx_thread_id main_thread; /* where events without a thread (GC) go: "main", else the first */
    bool any_thread;
    int64_t first_ns, last_ns;
    uint32_t setting_cls; /* jdk.ActiveSetting in this chunk */
    double interval_ms;   /* jdk.ExecutionSample's period from jdk.ActiveSetting; 0: not seen */
    bool main_set;
    char buf[STR_CAP], buf2[STR_CAP];
};

/* jfr_resolve.c: the fields of the object ref points to (up to field need; FX_ENOTFOUND: none
 * such); the string of a Symbol reference into buf (STR_CAP bytes, "" when unknown); the profile
 * thread of a Thread reference (created at its first event; cpu: its CPU-time track, named
 * NAME (CPU time)); the stack of a StackTrace
 * reference (native: with the [state: IN_NATIVE] leaf). */
int fx_jfr_profile_deref(struct conv *c, const struct fx_jfr_value *ref, struct fx_jfr_value *v,
                         int need, struct fx_errbuf *eb);
const char *fx_jfr_profile_symbol(struct conv *c, const struct fx_jfr_value *ref, char *buf,
                                  struct fx_errbuf *eb);
int fx_jfr_profile_thread(struct conv *c, const struct fx_jfr_value *ref, bool cpu,
                          fx_thread_id *out, struct fx_errbuf *eb);
int fx_jfr_profile_stack(struct conv *c, const struct fx_jfr_value *ref, bool native,
                         fx_stack_id *out, struct fx_errbuf *eb);
/* The stack of a StackTrace reference resolved before in this chunk (its pool entry found
 * then), without the native leaf: true and *out, else false (fx_jfr_profile_stack resolves it). */
bool fx_jfr_profile_stack_known(struct conv *c, const struct fx_jfr_value *ref, fx_stack_id *out);
/* "pkg.Class.method" of a Method reference, in c->buf ("[unknown class].[unknown method]" when
 * the pools lack it). */
const char *fx_jfr_profile_method(struct conv *c, const struct fx_jfr_value *ref,
                                  struct fx_errbuf *eb);
/* A FrameType reference's category and subcategory (cat << 8 | sub), bit 16 set for a native
 * library's frame (async-profiler's). */
uint32_t fx_jfr_profile_frame_kind(struct conv *c, const struct fx_jfr_value *ref,
                                   struct fx_errbuf *eb);
/* A frame of its own for a label (a root or leaf the recording implies, an allocated class):
 * category cat, subcategory sub. */
int fx_jfr_profile_label_frame(struct fx_profile *p, const char *label, uint8_t cat, uint8_t sub,
                               fx_frame_id *out);

/* jfr_resolve.c: at a chunk's start, the raw stacks' check with its names; at the end, the
 * raw stacks freed (jfr_rawstack.c, which the driver reaches through these). */
void fx_jfr_resolve_chunk(struct conv *c);
void fx_jfr_resolve_free(struct conv *c);
/* jfr_rawstack.c: at a chunk's start (after its layout), whether the stacks known from earlier
 * chunks hold in it; a StackTrace reference's stack known by its bytes (true, *out, whether it
 * was truncated); a stack resolved, made known. */
struct fx_jfr_names { /* jfr_resolve.c's, passed in: jfr_rawstack.c calls nothing above it */
    const char *(*method)(struct conv *c, const struct fx_jfr_value *ref, struct fx_errbuf *eb);
    uint32_t (*frame_kind)(struct conv *c, const struct fx_jfr_value *ref, struct fx_errbuf *eb);
};
void fx_jfr_rawstack_chunk(struct conv *c, const struct fx_jfr_names *names);
bool fx_jfr_rawstack_get(struct conv *c, const struct fx_jfr_value *ref, fx_stack_id *out,
                         bool *truncated);
int fx_jfr_rawstack_put(struct conv *c, const struct fx_jfr_value *ref, fx_stack_id st,
                        bool truncated);
void fx_jfr_rawstack_free(struct conv *c);

/* jfr_markers.c: finds the marker types' fields in the chunk; turns ev into a marker when it is
 * one of them (1), else 0; negative on failure (eb). */
void fx_jfr_markers_layout(struct conv *c);
int fx_jfr_markers_event(struct conv *c, const struct fx_jfr_obj *ev, struct fx_errbuf *eb);

/* jfr_counters.c: finds the counters' events' fields in the chunk; takes ev when it is one of
 * them (1), else 0, negative on failure; flush: the chunk's values, in time order, into the
 * model's counters. */
void fx_jfr_counters_layout(struct conv *c);
int fx_jfr_counters_event(struct conv *c, const struct fx_jfr_obj *ev, struct fx_errbuf *eb);
int fx_jfr_counters_flush(struct conv *c);

#endif
