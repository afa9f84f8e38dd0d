/* SPDX-License-Identifier: Apache-2.0 */
/* Reading a Firefox Profiler processed profile (.json or .json.gz) as fxagent writes it
 * (core/convert/pfile.c: the file, its tables, samples and meta; pfile_views.c: the views and
 * their totals). fxprof's summary, convert, diff and sources read through it, and the agent's
 * push= converts the file it has just written with it (fx_convert.h). Every index is checked:
 * a malformed file is an error with its reason, never a crash. */
#ifndef FX_PFILE_H
#define FX_PFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fx_err.h"

struct cJSON;

/* Parses the file; *root is the caller's to cJSON_Delete. */
int fx_pfile_load(const char *path, struct cJSON **root, struct fx_errbuf *eb);

/* The call-tree tables as flat columns, every index checked; a parent stack comes before its
 * children (stack_prefix -1 = root). Strings point into the cJSON tree. */
struct fx_pfile_tables {
    uint32_t nstacks, nframes, nfuncs, nstrings;
    int32_t *stack_frame, *stack_prefix, *frame_func, *func_name;
    /* Optional columns (0 or -1 where the file has none): the line a frame executes, a
     * function's first line and its source file (a string index, -1: none). */
    int32_t *frame_line, *func_line, *func_file;
    int32_t *frame_category, *frame_subcategory; /* indexes into meta.categories, -1: none */
    const char **strings;
    const struct cJSON *src[5]; /* the tables these came from, to reuse them across threads */
};

/* Fills t for `thread` (its own tables if it has them, else profile.shared's); keeps t as is
 * when it already holds the same tables. Zero t before the first call. */
int fx_pfile_tables(const struct cJSON *root, const struct cJSON *thread, struct fx_pfile_tables *t,
                    struct fx_errbuf *eb);
void fx_pfile_tables_destroy(struct fx_pfile_tables *t);
/* True when stack `st` is the agent's "[idle]" sample (a thread off the CPU in cpu/itimer mode,
 * PROFILE-FORMAT.md §11.3): not CPU time, so summary and convert keep it out of the shares. */
bool fx_pfile_is_idle(const struct fx_pfile_tables *t, int32_t st);
/* The sampling mode the agent recorded in meta.extra ("cpu", "itimer", "wall"); "cpu" when the
 * file does not say. */
const char *fx_pfile_mode(const struct cJSON *root);

struct fx_pfile_samples {
    uint32_t n;
    int32_t *stack;  /* -1: a sample without a stack */
    double *weight;  /* NULL: every sample weighs 1 */
    double *cpu;     /* threadCPUDelta, NULL when absent */
    bool bytes;      /* weightType "bytes": the weights are allocated bytes, not samples */
    bool tracing_ms; /* weightType "tracing-ms": the weights are ms (lock waits tracks) */
    double *time;    /* ms from meta.startTime ("time" or summed "timeDeltas"), NULL: absent */
    double *address; /* nativeAllocations' memoryAddress, NULL: absent */
};

int fx_pfile_samples(const struct cJSON *thread, uint32_t nstacks, struct fx_pfile_samples *s,
                     struct fx_errbuf *eb);
/* The thread's nativeAllocations table (frees are negative weights with the address of their
 * allocation) in the same shape, row by row; n = 0 when the thread has none. */
int fx_pfile_alloc_rows(const struct cJSON *thread, uint32_t nstacks, struct fx_pfile_samples *s,
                        struct fx_errbuf *eb);
void fx_pfile_samples_destroy(struct fx_pfile_samples *s);
/* meta.extra's entry `label` of group `group` when its value is a string, else NULL. */
const char *fx_pfile_extra(const struct cJSON *root, const char *group, const char *label);

/* A track's trace spans (issue 33, core/convert/pfile_spans.c): its "TraceSpan" markers, sorted
 * by start (ms from meta.startTime); strings point into the cJSON tree, a label is "key=value"
 * or NULL. A sample of the track at time t carries span fx_pfile_span_at(t) (-1: none), the
 * span whose [start, end) holds t. */
#define FX_PFILE_SPAN_LABELS 4
struct fx_pfile_span {
    double start, end;
    const char *trace_id, *span_id;
    const char *label[FX_PFILE_SPAN_LABELS];
};
struct fx_pfile_spans {
    uint32_t n;
    struct fx_pfile_span *s;
};
int fx_pfile_spans(const struct cJSON *thread, struct fx_pfile_spans *out, struct fx_errbuf *eb);
int32_t fx_pfile_span_at(const struct fx_pfile_spans *s, double ms);
void fx_pfile_spans_destroy(struct fx_pfile_spans *s);

/* The views a profile holds (issue 30), each in its own unit: a track's samples belong to one
 * view by their weightType: "samples" (or none) the recording's mode, cpu or wall (samples, each
 * one interval); "tracing-ms" lock waits (waits and their time; a sample without a stack, such as
 * the one that ends a wait, is no wait and weighs 0); "bytes" allocations. The threads'
 * nativeAllocations are allocations too (samples and estimated bytes), and those without a free
 * in the file the live heap. */
enum fx_pfile_view {
    FX_VIEW_CPU, /* the mode's samples: cpu, itimer or wall */
    FX_VIEW_LOCK,
    FX_VIEW_IDLEWAIT, /* before alloc: views from FX_VIEW_ALLOC on are nativeAllocations' */
    FX_VIEW_ALLOC,
    FX_VIEW_LIVE,
    FX_VIEW_COUNT
};
/* "cpu" (also for itimer and wall recordings: the mode's view), "lock", "idlewait", "alloc",
 * "live". */
const char *fx_pfile_view_name(enum fx_pfile_view v);
/* The view of a --view argument ("wall" and "itimer" are the mode's view too); -1 if none. */
int fx_pfile_view_parse(const char *s);
/* The view a track's samples belong to (never FX_VIEW_LIVE). */
enum fx_pfile_view fx_pfile_track_view(const struct cJSON *thread);

/* The totals every output repeats, by the rule the agent's "Samples in this file" uses
 * (fx_profile_totals): samples: the mode's view's weight, [idle] apart (idle); waits: the lock
 * view's samples with a stack, wait_ms their weight; idle_waits, idle_wait_ms: the same of the
 * idle waits view; allocations and alloc_bytes: the positive
 * nativeAllocations rows (and the bytes-weighted tracks' samples); live: those without a free;
 * virtual-thread waits: the markers of schema JvmVirtualThreadWait, their data.duration. */
struct fx_pfile_totals {
    double samples, idle, without_stack;
    double waits, wait_ms;
    double idle_waits, idle_wait_ms; /* waiting for work: apart from the lock waits */
    double vt_waits, vt_wait_ms;     /* "Virtual thread wait" markers (vtwait=) and their ms */
    double allocations, alloc_bytes, live, live_bytes;
};
int fx_pfile_totals(const struct cJSON *root, struct fx_pfile_totals *t, struct fx_errbuf *eb);
/* Calls fn for each live (not freed in the file) or every (all) allocation row of a
 * nativeAllocations table: its stack (-1: none) and bytes. */
typedef void (*fx_pfile_alloc_fn)(int32_t stack, double bytes, bool live, void *ctx);
int fx_pfile_allocations(const struct cJSON *thread, uint32_t nstacks, fx_pfile_alloc_fn fn,
                         void *ctx);

#endif
