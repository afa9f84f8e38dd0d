/* SPDX-License-Identifier: Apache-2.0 */
/* The profile model's layout, shared by core/model/profile*.c and the writer
 * (core/writer/ff_writer*.c) only: it lives in core/model/, so agent/ and cli/ see struct
 * fx_profile as opaque (the core's own tests include it by path; style.core_private checks that
 * nobody else does). Tables are columnar (struct of arrays, one array per JSON column) with an
 * fx_rowidx over their key columns, so writing is a loop over arrays. Invariants: a stack's prefix
 * row is smaller than its own row (parents first); every id stored in a column is a valid row of
 * its table; sample times never decrease within a thread. */
#ifndef FX_PROFILE_INTERNAL_H
#define FX_PROFILE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fx_marker_pack.h"
#include "fx_profile.h"
#include "fx_rowidx.h"
#include "fx_strtab.h"

/* threadCPUDelta not known for this sample (written as null). Known deltas saturate below it. */
#define FX_CPU_UNKNOWN UINT32_MAX

struct fx_funcs {
    uint32_t *name, *resource, *source; /* string ids (the key), FX_NONE_ID for none */
    int32_t *line;
    uint8_t *is_java;
    uint32_t *resource_row, *source_row; /* rows of fx_profile.resources / .sources, or none */
    uint32_t count, cap;
    struct fx_rowidx idx;
};

struct fx_frames {
    uint32_t *func;
    int32_t *line;
    uint8_t *category, *subcategory, *inline_depth;
    uint32_t count, cap;
    struct fx_rowidx idx;
};

struct fx_stacks {
    uint32_t *prefix; /* FX_NONE_ID for a root, else < its own row */
    uint32_t *frame;
    uint32_t count, cap;
    struct fx_rowidx idx;
};

/* A set of string ids in order of first use: the resource (by name) and source (by filename)
 * tables derived from the func keys. */
struct fx_idlist {
    uint32_t *str;
    uint32_t count, cap;
    struct fx_rowidx idx;
};

/* 16 bytes per sample; `weight` exists only once some sample weighs other than 1. */
struct fx_samples {
    int64_t *time_ns;
    uint32_t *stack;  /* FX_NONE_ID: no stack */
    uint32_t *cpu_ns; /* FX_CPU_UNKNOWN: unknown */
    uint32_t *weight;
    uint32_t count, cap;
};

struct fx_markers {
    uint32_t *name; /* string id */
    int64_t *start_ns, *end_ns;
    uint8_t *phase, *category;
    uint32_t *schema;    /* FX_NONE_ID: data null */
    uint32_t *values_at; /* first of the schema's n_fields values in `values` */
    /* The marker's stack (data.cause), FX_NONE_ID for none; NULL until a marker has one. */
    uint32_t *cause_stack;
    uint32_t count, cap;
    union fx_marker_value *values;
    uint32_t nvalues, values_cap;
};

/* A thread's nativeAllocations (issue 17), 28 bytes a row: allocations (bytes > 0) and the
 * frees of its own allocations (bytes < 0, same address and stack). threadId is the thread's. */
struct fx_allocs {
    int64_t *time_ns, *bytes;
    uint32_t *stack;
    uint64_t *address;
    uint32_t count, cap;
};

/* The allocations not yet freed: address (nonzero) -> thread, stack, bytes. Open addressing
 * with linear probing and backward-shift deletion; columns so that `stack` is one more stack
 * column for compaction (FX_NONE_ID in empty slots). cap is 0 or a power of two. */
struct fx_live {
    uint64_t *address; /* 0: empty slot */
    uint32_t *thread, *stack;
    int64_t *bytes;
    uint32_t count, cap;
};

struct fx_thread {
    char *name;        /* raw bytes as given (the writer makes them UTF-8) */
    uint32_t name_len; /* strlen(name), for fx_profile_thread_memory */
    size_t counted;    /* its share of fx_profile.threads_bytes (fx_profile_thread_recount) */
    int64_t tid, register_ns, unregister_ns;
    bool unregistered;
    bool vacant;         /* only fx_profile.vacant: the empty track of vacant slots */
    uint8_t weight_type; /* enum fx_weight_type */
    bool idle_waits;     /* a tracing-ms track of idle waits, not lock waits */
    uint32_t holds;      /* fx_profile_thread_add's one, plus fx_profile_thread_hold's */
    /* A view's track of thread companion_of - 1 (fx_profile_thread_add_companion), 0: none;
     * its name is the owner's then (when added) followed by its last suffix_len bytes. */
    uint32_t companion_of, suffix_len;
    struct fx_samples samples;
    struct fx_markers markers;
    struct fx_allocs allocs;
    struct fx_mpack *pack; /* its markers when the profile packs them, else NULL */
};

struct fx_counter {
    char *name, *category, *description, *unit, *color;
    int64_t *time_ns, *value; /* absolute values, times non-decreasing */
    uint32_t count, cap;
};

struct fx_extra_entry {
    char *label;
    bool is_int;
    uint8_t show; /* enum fx_extra_show */
    int64_t i;
    char *s;
};

struct fx_extra_group {
    char *label;
    struct fx_extra_entry *entries;
    uint32_t count, cap;
};

enum fx_meta_key {
    FX_META_PRODUCT,
    FX_META_PROCESS_NAME,
    FX_META_OSCPU,
    FX_META_PLATFORM,
    FX_META_CPU_NAME,
    FX_META_ARGUMENTS,
    FX_META_COUNT
};

/* Numeric meta entries (fx_profile_set_meta_int). */
enum fx_meta_int_key {
    FX_META_LOGICAL_CPUS,
    FX_META_PHYSICAL_CPUS,
    FX_META_MAIN_MEMORY,
    FX_META_INT_COUNT
};

/* Native libraries (fx_profile_lib), kept as C strings so compaction leaves them alone. */
struct fx_lib {
    char *name, *path, *code_id, *breakpad_id; /* code_id: the build-id, NULL when unknown */
};
struct fx_libs {
    struct fx_lib *rows;
    uint32_t count, cap, str_bytes; /* str_bytes: the rows' strings (fx_profile_libs_memory) */
};
/* profile_libs.c: the library named by the n bytes at name, or FX_NONE_ID. */
uint32_t fx_profile_lib_find(const struct fx_profile *p, const char *name, size_t n);

struct fx_profile {
    struct fx_strtab strings;
    struct fx_funcs funcs;
    struct fx_frames frames;
    struct fx_stacks stacks;
    struct fx_idlist resources, sources;
    struct fx_libs libs;

    /* Slot i: the track of fx_thread_id i, allocated alone, so the array (never below the highest
     * id held) costs 8 bytes a slot at its peak, not a track's ~240. Vacant slots point to the
     * empty track `vacant`: loops over all slots read nothing there, and never write to it. */
    struct fx_thread **threads;
    uint32_t nthreads, threads_cap, main_thread;
    uint32_t nvacant;        /* slots of released threads, taken again by fx_profile_thread_add */
    struct fx_thread vacant; /* fx_profile_vacant_init */

    const struct fx_marker_schema **schemas;
    uint32_t nschemas, schemas_cap;
    bool packed;            /* fx_profile_pack_markers: markers go to the threads' packs, */
    struct fx_mkind *kinds; /* their kinds in `kinds` */
    uint32_t nkinds, kinds_cap, last_kind; /* last_kind: the last packed marker's (they run) */

    struct fx_counter *counters;
    uint32_t ncounters, counters_cap;

    struct fx_extra_group *extra;
    uint32_t nextra, extra_cap;

    struct fx_live live; /* profile_allocs.c */
    /* The threads' memory (names, samples, markers, allocation rows), kept as each changes:
     * fx_profile_memory runs every drain pass, and a server starting a thread per task would
     * make a sum over threads O(threads) per pass. Sum of every thread's `counted`. */
    size_t threads_bytes;

    int64_t start_ns, range_begin_ns, range_end_ns;
    int64_t kept_from_ns; /* nothing older is held: the latest start or drop_before */
    bool range_set;
    double epoch_ms, interval_ms;
    int64_t pid;
    char *meta[FX_META_COUNT];
    int64_t meta_int[FX_META_INT_COUNT];
    bool meta_int_set[FX_META_INT_COUNT];

    /* fx_profile_set_source_content: sources.content's texts for the next write, borrowed; a
     * copy never has them (profile_sources.c) */
    const char *const *source_content;

    size_t table_limit;  /* fx_profile_set_table_limit; 0: none */
    uint32_t generation; /* fx_profile_compact: how many times the ids were renumbered */
};

struct fx_category_info {
    const char *name, *color;
    const char *const *subcategories;
    uint8_t n_subcategories;
};

/* The §12.1 table, indexed by enum fx_category (i < FX_CAT_COUNT). */
const struct fx_category_info *fx_profile_category(unsigned i);
/* The JSON key of a meta entry ("product", "oscpu", ...). */
const char *fx_profile_meta_key(enum fx_meta_key k);
const char *fx_profile_meta_int_key(unsigned k);

/* Row i is a thread (in range and not a vacant slot): what every call taking an index checks. */
static inline bool fx_profile_thread_ok(const struct fx_profile *p, uint32_t i)
{
    return i < p->nthreads && !p->threads[i]->vacant;
}

/* A thread that ended before what the window still holds, with nothing left in it: not part of
 * the profile (a snapshot leaves it out); once no holder is left either, its slot is vacated. */
static inline bool fx_profile_thread_gone(const struct fx_profile *p, const struct fx_thread *t)
{
    return t->unregistered && t->unregister_ns < p->kept_from_ns && t->samples.count == 0 &&
           t->markers.count + (t->pack ? t->pack->count : 0) == 0 && t->allocs.count == 0;
}

static inline uint32_t fx_thread_markers(const struct fx_thread *t) /* packed or not */
{
    return t->markers.count + (t->pack ? t->pack->count : 0);
}

#endif
