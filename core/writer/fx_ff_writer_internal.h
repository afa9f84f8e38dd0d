/* SPDX-License-Identifier: Apache-2.0 */
/* Private to the writer's files (core/writer/ff_writer*.c): the walk's context and the tiny
 * emitters they share. Key order within objects follows PROFILE-FORMAT.md §13. */
#ifndef FX_FF_WRITER_INTERNAL_H
#define FX_FF_WRITER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "fx_json.h"
#include "fx_profile_internal.h"

struct fx_ff_ctx {
    struct fx_json *j;
    const struct fx_profile *p;
    uint32_t main_thread; /* the one isMainThread, as a file index (0: the placeholder's) */
    /* Per thread of p (ff_writer_names.c): its index in the file's threads (UINT32_MAX: left
     * out, fx_profile_thread_left_out), and how its track name is told apart. */
    uint32_t *index, *repeat;
    uint32_t *order; /* the model's thread written at each file index (nwritten of them) */
    uint32_t nwritten;
};

/* meta (§4), counters (§8): core/writer/ff_writer_meta.c. */
void fx_ff_writer_meta(const struct fx_ff_ctx *w);
void fx_ff_writer_counters(const struct fx_ff_ctx *w);
/* The process's pid as a string (§6: a number breaks URL state). */
void fx_ff_writer_pid(struct fx_json *j, const struct fx_profile *p);
const char *fx_ff_writer_process_name(const struct fx_profile *p);
/* The threads written and their track names (§7): fx_ff_writer_threads_prepare fills w->index,
 * w->repeat (one block, freed with fx_free(w->index); FX_ENOMEM), w->nwritten and w->main_thread;
 * fx_ff_writer_track_name writes thread index's "name" key. */
int fx_ff_writer_threads_prepare(struct fx_ff_ctx *w);
void fx_ff_writer_track_name(const struct fx_ff_ctx *w, uint32_t index);
/* The shared tables (§5) and libs: core/writer/ff_writer_tables.c. */
void fx_ff_writer_shared(const struct fx_ff_ctx *w);
void fx_ff_writer_libs(struct fx_json *j, const struct fx_libs *l);

/* Markers' data objects and packed markers: core/writer/ff_writer_markers.c. A schema is fast
 * when its data object is formatted in place (its fields all ids or integers, its name and keys
 * needing no escaping); max: the most bytes a marker's data takes, cause included. */
#define FX_FF_FAST_MAX 64
struct fx_ff_fast {
    bool ok;
    unsigned max;
};
void fx_ff_fast_schemas(const struct fx_profile *p, struct fx_ff_fast *f); /* <= MAX schemas */
/* Marker i's data (null without a schema); fast: fx_ff_fast_schemas's, or NULL. */
void fx_ff_marker_data(struct fx_json *j, const struct fx_profile *p, const struct fx_markers *m,
                       uint32_t i, const struct fx_ff_fast *fast);
/* Thread t's "markers" key and object from its pack (FX_ENOMEM into j without the room). */
void fx_ff_write_packed_markers(struct fx_json *j, const struct fx_profile *p,
                                const struct fx_thread *t);

/* --- small emitters --- */

static inline void kv_str(struct fx_json *j, const char *key, const char *v)
{
    fx_json_key(j, key);
    fx_json_str(j, v);
}

static inline void kv_i64(struct fx_json *j, const char *key, int64_t v)
{
    fx_json_key(j, key);
    fx_json_i64(j, v);
}

static inline void kv_bool(struct fx_json *j, const char *key, bool v)
{
    fx_json_key(j, key);
    fx_json_bool(j, v);
}

static inline void kv_null(struct fx_json *j, const char *key)
{
    fx_json_key(j, key);
    fx_json_null(j);
}

static inline void kv_empty_arr(struct fx_json *j, const char *key)
{
    fx_json_key(j, key);
    fx_json_arr_begin(j);
    fx_json_arr_end(j);
}

static inline void kv_length(struct fx_json *j, uint32_t n)
{
    kv_i64(j, "length", n);
}

/* --- times --- */

/* Whole microseconds since the profile's start, rounded half away from zero. */
static inline int64_t rel_us(const struct fx_profile *p, int64_t t_ns)
{
    int64_t d = t_ns - p->start_ns;
    return d >= 0 ? (d + 500) / 1000 : -((500 - d) / 1000);
}

/* Integer microseconds printed as milliseconds with 3 decimals: exact, so the front-end's
 * running sum over timeDeltas accumulates no formatting error. */
static inline void put_ms(struct fx_json *j, int64_t us)
{
    fx_json_ms(j, us);
}

static inline void kv_ms(struct fx_json *j, const char *key, int64_t us)
{
    fx_json_key(j, key);
    put_ms(j, us);
}

/* --- columns: one key and its array of n values --- */

/* A column of n equal values: null when is_null, else v. */
static inline void col_const(struct fx_json *j, const char *key, uint32_t n, bool is_null,
                             int64_t v)
{
    fx_json_key(j, key);
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < n; i++) {
        if (is_null)
            fx_json_null(j);
        else
            fx_json_i64(j, v);
    }
    fx_json_arr_end(j);
}

/* A column of row ids; `none` (FX_NONE_ID) is written as none_value, or null if none_null. */
static inline void col_u32(struct fx_json *j, const char *key, const uint32_t *a, uint32_t n,
                           bool none_null, int64_t none_value)
{
    fx_json_key(j, key);
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < n; i++) {
        if (a[i] != FX_NONE_ID)
            fx_json_u64(j, a[i]);
        else if (none_null)
            fx_json_null(j);
        else
            fx_json_i64(j, none_value);
    }
    fx_json_arr_end(j);
}

static inline void col_u8(struct fx_json *j, const char *key, const uint8_t *a, uint32_t n)
{
    fx_json_key(j, key);
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < n; i++)
        fx_json_u64(j, a[i]);
    fx_json_arr_end(j);
}

/* Lines: negative means unknown, written as null. */
static inline void col_line(struct fx_json *j, const char *key, const int32_t *a, uint32_t n)
{
    fx_json_key(j, key);
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < n; i++) {
        if (a[i] < 0)
            fx_json_null(j);
        else
            fx_json_i64(j, a[i]);
    }
    fx_json_arr_end(j);
}

#endif
