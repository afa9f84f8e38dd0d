/* SPDX-License-Identifier: Apache-2.0 */
/* fxcheck's shared state: one parsed profile, the sizes of its tables (known before any index
 * is checked) and the problem reporter. Every problem line names a path and a rule, so a test
 * can tell which rule rejected a file. A test tool: plain malloc, exits on out-of-memory. */
#ifndef FXCHECK_H
#define FXCHECK_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* Index targets: which table an index column points into. */
enum ck_target {
    T_NONE,
    T_STR,
    T_FUNC,
    T_FRAME,
    T_STACK,
    T_RES,
    T_SRC,
    T_NSYM,
    T_SRCLOC,
    T_LIB,
    T_CAT,
    T_THREAD,
    T_COUNT
};

struct ck {
    const char *file;
    unsigned long problems;
    const cJSON *root, *meta, *shared;
    long n[T_COUNT];      /* table sizes; -1 when the table itself is broken */
    int *n_subcats;       /* per category: number of subcategories */
    const cJSON *schemas; /* meta.markerSchema, when it is an array */
};

/* A column read into flat arrays: cJSON arrays are linked lists, so random access is O(n). */
enum ck_cell {
    CELL_NUM,
    CELL_NULL,
    CELL_BOOL,
    CELL_STR,
    CELL_OTHER
};

struct ck_col {
    long n;
    double *v;           /* numbers, and 0/1 for booleans */
    unsigned char *cell; /* enum ck_cell per element */
    const cJSON **node;  /* the element itself */
};

/* Reporting: "fxcheck: FILE: PATH: RULE: message". */
void ck_fail(struct ck *c, const char *path, const char *rule, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* Per-column reporting: the first few bad elements are printed, the rest counted. */
struct ck_colrep {
    struct ck *c;
    const char *path;
    long bad;
};
void ck_elem_fail(struct ck_colrep *r, long i, const char *rule, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
void ck_colrep_end(struct ck_colrep *r);

void *ck_xcalloc(size_t n, size_t size);
void *ck_xrealloc(void *p, size_t size);

bool ck_is_int(double v);
/* Reads `obj[key]` as a column; false (with a problem reported) if it is missing or no array. */
bool ck_col_read(struct ck *c, const char *path, const cJSON *obj, const char *key,
                 struct ck_col *col);
void ck_col_free(struct ck_col *col);

/* The checks, in the order main runs them. */
void ck_meta(struct ck *c);
void ck_shared(struct ck *c);
void ck_threads(struct ck *c);
void ck_counters(struct ck *c);

/* A column as a table spec sees it: how each element must look and what it points into. */
enum ck_kind {
    K_IDX,       /* index into target, never null */
    K_IDX_NULL,  /* index or null; -1 is a convention error */
    K_IDX_M1,    /* index or -1; null is a convention error */
    K_INT_M1,    /* integer >= -1, never null (frame address) */
    K_UINT,      /* integer >= 0, never null */
    K_UINT_NULL, /* integer >= 0 or null; -1 is a convention error */
    K_BYTE,      /* integer 0..255 */
    K_RTYPE,     /* resource type 0..5 */
    K_NUM,       /* any number, never null */
    K_NUM_NULL,  /* number or null */
    K_BOOL,
    K_STR_NULL, /* a string or null */
};

struct ck_colspec {
    const char *name;
    enum ck_kind kind;
    enum ck_target target;
};

/* Checks a columnar table: an object with an integer `length` and every listed column an array
 * of exactly that length whose elements fit their kind. Columns are read into cols (same order
 * as specs, caller frees) when cols is not NULL. Returns the length, or -1 if the table is not
 * usable at all. */
long ck_table(struct ck *c, const char *path, const cJSON *t, const struct ck_colspec *specs,
              size_t nspecs, struct ck_col *cols);
/* The declared length of a table, or -1 (not reported: ck_table reports it). */
long ck_table_length(const cJSON *t);

bool ck_reserved_type(const char *type);
const cJSON *ck_schema_find(const struct ck *c, const char *type);

/* Time column of a samples-like table: `time`, or `timeDeltas` rebuilt by a running sum as
 * the front-end does. Returns a malloc'ed array of `n` times, or NULL (problem reported). */
double *ck_times(struct ck *c, const char *path, const cJSON *table, long n);

/* Summary (fxcheck_summary.c), only for a file without problems. */
unsigned long long ck_sample_total(const struct ck *c);
int ck_summary_print(const struct ck *c);
/* Rule totals: Profile Info's "Samples in this file" against the file (issue 30). */
void ck_totals(struct ck *c);

#endif
