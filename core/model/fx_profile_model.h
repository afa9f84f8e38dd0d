/* SPDX-License-Identifier: Apache-2.0 */
/* Private to core/model/profile*.c (the writer has no use for it): how the model's files grow,
 * move, copy and free their columns, and the pieces of destruction, dropping and re-interning
 * one file of the model does for the others. The layout itself: fx_profile_internal.h. */
#ifndef FX_PROFILE_MODEL_H
#define FX_PROFILE_MODEL_H

#include "fx_alloc.h"
#include "fx_profile_internal.h"

/* One column of a table for fx_profile_grow: its array and element size. */
struct fx_col {
    void **p;
    size_t size;
};

/* Makes room for row `count` in every column (capacity doubles from 16). On FX_ENOMEM *cap is
 * unchanged; columns already reallocated are merely larger, their contents intact. */
int fx_profile_grow(uint32_t *cap, uint32_t count, const struct fx_col *cols, unsigned ncols);

/* The columns of each table, listed once: growing, dropping rows, copying and freeing all walk
 * these lists, so a column added to a table (the next issues' weights, addresses, stacks) is
 * handled everywhere by adding it to its list. Each fills every entry of cols (at most
 * FX_MAX_COLS) and returns how many are live: a samples' weight column and a markers'
 * cause_stack column, listed last, only once they exist (PROFILE-FORMAT.md §7). A table's other
 * arrays (marker values, row indexes) are its owner's to handle. The cols of a const table are read
 * only (casting the table is safe). */
#define FX_MAX_COLS      8
#define FX_COL(t, field) ((struct fx_col){(void **)&(t)->field, sizeof(*(t)->field)})
/* Copies the FX_COL arguments into cols and is their number. */
#define FX_COLS_SET(cols, ...)                                \
    fx_cols_set((cols), (const struct fx_col[]){__VA_ARGS__}, \
                sizeof((const struct fx_col[]){__VA_ARGS__}) / sizeof(struct fx_col))

static inline unsigned fx_cols_set(struct fx_col *cols, const struct fx_col *all, unsigned n)
{
    memcpy(cols, all, n * sizeof(*all));
    return n;
}
unsigned fx_samples_cols(struct fx_samples *s, struct fx_col *cols);
unsigned fx_markers_cols(struct fx_markers *m, struct fx_col *cols);
unsigned fx_counter_cols(struct fx_counter *c, struct fx_col *cols);
unsigned fx_funcs_cols(struct fx_funcs *f, struct fx_col *cols);
unsigned fx_frames_cols(struct fx_frames *f, struct fx_col *cols);
unsigned fx_stacks_cols(struct fx_stacks *s, struct fx_col *cols);
unsigned fx_allocs_cols(struct fx_allocs *a, struct fx_col *cols);

/* profile_allocs.c: the live map's share of destruction, memory and dropping (a thread's rows'
 * memory, fx_allocs_memory, is inline below). */
void fx_live_destroy(struct fx_live *l);
size_t fx_profile_live_memory(const struct fx_profile *p);
#define FX_ALLOC_ROW_BYTES (2 * sizeof(int64_t) + sizeof(uint32_t) + sizeof(uint64_t))
static inline size_t fx_allocs_memory(const struct fx_allocs *a) /* inline: profile_count.c */
{
    return (size_t)a->cap * FX_ALLOC_ROW_BYTES;
}

/* profile_count.c: a thread's memory, counted afresh; and its share of threads_bytes brought up to
 * it, after anything that changed its name or a capacity (O(1)). recount_threads does every
 * thread, for the operations that are O(threads) anyway (drops, copies). */
size_t fx_profile_thread_memory(const struct fx_thread *t);
void fx_profile_thread_recount(struct fx_profile *p, struct fx_thread *t);
void fx_profile_recount_threads(struct fx_profile *p);
/* fx_profile_memory counted over every thread afresh (tests: the kept sum equals it). */
size_t fx_profile_memory_recount(const struct fx_profile *p);
/* Drops the thread's allocation rows older than t, the frees of the allocations dropped, and the
 * live entries of those allocations. Returns the rows dropped. */
uint32_t fx_profile_drop_allocs(struct fx_profile *p, uint32_t thread, int64_t t);

/* Moves rows [from, from + n) of every column to row `to` (memmove: the ranges may overlap). */
void fx_cols_move(const struct fx_col *cols, unsigned ncols, uint32_t to, uint32_t from,
                  uint32_t n);
/* Frees every column and sets it to NULL. */
void fx_cols_free(const struct fx_col *cols, unsigned ncols);

/* A row's key, as fx_profile_func / fx_profile_frame take it (for re-interning elsewhere). */
struct fx_func_key fx_profile_func_key_at(const struct fx_funcs *f, uint32_t row);
struct fx_frame_key fx_profile_frame_key_at(const struct fx_frames *f, uint32_t row);

/* profile.c: frees thread i's track and makes its slot vacant if no holder is left and it is
 * gone (profile_window.c calls it for every thread after a drop). */
void fx_profile_thread_vacate_if_done(struct fx_profile *p, uint32_t i);
/* profile.c: sets up p->vacant, the empty track of vacant slots, gone for every snapshot. */
void fx_profile_vacant_init(struct fx_profile *p);

/* The tables' share of destruction and memory accounting (core/model/profile_tables.c). */
void fx_profile_tables_destroy(struct fx_profile *p);
size_t fx_profile_tables_memory(const struct fx_profile *p);

/* profile_tables.c: grows a plain array of structs (threads, counters, ...) by doubling. */
int fx_profile_grow_array(void **arr, uint32_t *cap, uint32_t count, size_t size);

static inline void fx_profile_free_strs(char **strs, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        fx_free(strs[i]);
}

/* profile_libs.c: the libraries' share of destruction, copies and memory. libs_copy copies s
 * into d (empty); false when memory runs out (d then holds what was copied). */
void fx_profile_libs_destroy(struct fx_libs *l);
bool fx_profile_libs_copy(struct fx_libs *d, const struct fx_libs *s);
size_t fx_profile_libs_memory(const struct fx_libs *l);

/* profile_meta.c: a meta.extra group's share of destruction. */
void fx_profile_extra_destroy(struct fx_extra_group *g);

#endif
