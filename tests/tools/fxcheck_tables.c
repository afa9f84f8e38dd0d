/* SPDX-License-Identifier: Apache-2.0 */
/* fxcheck: columnar tables (PROFILE-FORMAT.md §5, §9). Every table's size is taken from its
 * `length` before any index is checked, because that is the number the front-end loops over;
 * then each column must have exactly that many elements of the right kind. */
#include "fxcheck.h"

#include <stdio.h>
#include <string.h>

static const char *const target_names[T_COUNT] = {
        [T_STR] = "shared.stringArray",
        [T_FUNC] = "shared.funcTable",
        [T_FRAME] = "shared.frameTable",
        [T_STACK] = "shared.stackTable",
        [T_RES] = "shared.resourceTable",
        [T_SRC] = "shared.sources",
        [T_NSYM] = "shared.nativeSymbols",
        [T_SRCLOC] = "shared.sourceLocationTable",
        [T_LIB] = "libs",
        [T_CAT] = "meta.categories",
        [T_THREAD] = "threads",
};

long ck_table_length(const cJSON *t)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(t, "length");
    if (!cJSON_IsNumber(l) || !ck_is_int(l->valuedouble) || l->valuedouble < 0)
        return -1;
    return (long)l->valuedouble;
}

static void check_index(struct ck_colrep *r, long i, double v, long n, enum ck_target t)
{
    if (!ck_is_int(v))
        ck_elem_fail(r, i, "type", "%g is not an integer index", v);
    else if (n < 0)
        return; /* the target table itself is broken and reported */
    else if (v < 0 || v >= (double)n)
        ck_elem_fail(r, i, "index-range", "%g is out of range for %s (length %ld)", v,
                     target_names[t], n);
}

static void check_null_cell(struct ck_colrep *r, long i, enum ck_kind k)
{
    if (k == K_IDX_NULL || k == K_UINT_NULL || k == K_NUM_NULL || k == K_STR_NULL)
        return;
    if (k == K_IDX_M1 || k == K_INT_M1)
        ck_elem_fail(r, i, "null-convention", "null where -1 means none (§9)");
    else
        ck_elem_fail(r, i, "type", "null is not allowed here");
}

static void check_num_cell(struct ck *c, struct ck_colrep *r, long i, double v,
                           const struct ck_colspec *s)
{
    switch (s->kind) {
    case K_IDX:
    case K_IDX_NULL:
        if (v == -1 && s->kind == K_IDX_NULL)
            ck_elem_fail(r, i, "null-convention", "-1 where null means none (§9)");
        else
            check_index(r, i, v, c->n[s->target], s->target);
        break;
    case K_IDX_M1:
        if (v != -1)
            check_index(r, i, v, c->n[s->target], s->target);
        break;
    case K_INT_M1:
    case K_UINT:
    case K_UINT_NULL:
        if (!ck_is_int(v) || v < (s->kind == K_INT_M1 ? -1 : 0))
            ck_elem_fail(r, i, v == -1 ? "null-convention" : "value", "%g is not %s", v,
                         v == -1 ? "allowed: none is null here (§9)" : "a non-negative integer");
        break;
    case K_BYTE:
    case K_RTYPE:
        if (!ck_is_int(v) || v < 0 || v > (s->kind == K_BYTE ? 255 : 5))
            ck_elem_fail(r, i, "value", "%g is out of range (0..%d)", v,
                         s->kind == K_BYTE ? 255 : 5);
        break;
    case K_NUM:
    case K_NUM_NULL:
        break;
    case K_BOOL:
    case K_STR_NULL:
        ck_elem_fail(r, i, "type", "a number where a %s is expected",
                     s->kind == K_BOOL ? "boolean" : "string");
        break;
    }
}

static void check_column(struct ck *c, const char *tpath, const struct ck_colspec *s,
                         const struct ck_col *col)
{
    char path[160];
    snprintf(path, sizeof path, "%s.%s", tpath, s->name);
    struct ck_colrep r = {c, path, 0};
    for (long i = 0; i < col->n; i++) {
        switch (col->cell[i]) {
        case CELL_NUM:
            check_num_cell(c, &r, i, col->v[i], s);
            break;
        case CELL_NULL:
            check_null_cell(&r, i, s->kind);
            break;
        case CELL_BOOL:
            if (s->kind != K_BOOL)
                ck_elem_fail(&r, i, "type", "a boolean is not allowed here");
            break;
        case CELL_STR:
            if (s->kind != K_STR_NULL)
                ck_elem_fail(&r, i, "type", "a string is not allowed here");
            break;
        default:
            ck_elem_fail(&r, i, "type", "an object or array is not allowed here");
        }
    }
    ck_colrep_end(&r);
}

long ck_table(struct ck *c, const char *path, const cJSON *t, const struct ck_colspec *specs,
              size_t nspecs, struct ck_col *cols)
{
    if (cols) /* the caller frees them whatever happens */
        memset(cols, 0, nspecs * sizeof *cols);
    if (!t) {
        ck_fail(c, path, "missing", "the table is missing");
        return -1;
    }
    if (!cJSON_IsObject(t)) {
        ck_fail(c, path, "type", "a table must be an object of columns");
        return -1;
    }
    long len = ck_table_length(t);
    if (len < 0)
        ck_fail(c, path, cJSON_GetObjectItemCaseSensitive(t, "length") ? "type" : "missing",
                "'length' must be a non-negative integer (upgraders loop over it, pitfall 7)");
    for (size_t k = 0; k < nspecs; k++) {
        struct ck_col col;
        if (!ck_col_read(c, path, t, specs[k].name, &col))
            continue;
        if (len >= 0 && col.n != len) {
            char cpath[160];
            snprintf(cpath, sizeof cpath, "%s.%s", path, specs[k].name);
            ck_fail(c, cpath, "column-length", "%ld elements, but length is %ld", col.n, len);
        }
        check_column(c, path, &specs[k], &col);
        if (cols)
            cols[k] = col;
        else
            ck_col_free(&col);
    }
    return len;
}

static void free_cols(struct ck_col *cols, size_t n)
{
    for (size_t k = 0; k < n; k++)
        ck_col_free(&cols[k]);
}

static const cJSON *table(const struct ck *c, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(c->shared, key);
}

/* Parents come first: the front-end resolves prefixes in one forward pass (pitfall 14). */
static void check_stacks(struct ck *c)
{
    static const struct ck_colspec specs[] = {{"frame", K_IDX, T_FRAME},
                                              {"prefixOffset", K_UINT, T_NONE}};
    struct ck_col cols[2];
    ck_table(c, "shared.stackTable", table(c, "stackTable"), specs, 2, cols);
    struct ck_colrep r = {c, "shared.stackTable.prefixOffset", 0};
    for (long i = 0; i < cols[1].n; i++)
        if (cols[1].cell[i] == CELL_NUM && ck_is_int(cols[1].v[i]) && cols[1].v[i] > (double)i)
            ck_elem_fail(&r, i, "prefix-order",
                         "prefixOffset %g > index %ld: the parent would come after its child",
                         cols[1].v[i], i);
    ck_colrep_end(&r);
    free_cols(cols, 2);
}

/* A frame with a category needs a subcategory valid for that category (pitfall 10). */
static void check_frame_categories(struct ck *c, const struct ck_col *cat, const struct ck_col *sub)
{
    struct ck_colrep r = {c, "shared.frameTable.subcategory", 0};
    long n = cat->n < sub->n ? cat->n : sub->n;
    for (long i = 0; i < n; i++) {
        if (cat->cell[i] != CELL_NUM || !ck_is_int(cat->v[i]) || cat->v[i] < 0 ||
            cat->v[i] >= (double)c->n[T_CAT] || !c->n_subcats)
            continue;
        long ci = (long)cat->v[i];
        if (sub->cell[i] != CELL_NUM)
            ck_elem_fail(&r, i, "category", "category %ld is set, so subcategory must be too", ci);
        else if (sub->v[i] < 0 || sub->v[i] >= (double)c->n_subcats[ci])
            ck_elem_fail(&r, i, "category", "subcategory %g is out of range for category %ld (%d)",
                         sub->v[i], ci, c->n_subcats[ci]);
    }
    ck_colrep_end(&r);
}

static void check_frames(struct ck *c)
{
    static const struct ck_colspec specs[] = {
            {"address", K_INT_M1, T_NONE},    {"inlineDepth", K_BYTE, T_NONE},
            {"category", K_IDX_NULL, T_CAT},  {"subcategory", K_UINT_NULL, T_NONE},
            {"func", K_IDX, T_FUNC},          {"nativeSymbol", K_IDX_NULL, T_NSYM},
            {"innerWindowID", K_NUM, T_NONE}, {"line", K_UINT_NULL, T_NONE},
            {"column", K_UINT_NULL, T_NONE},  {"originalLocation", K_IDX_NULL, T_SRCLOC},
    };
    enum {
        N = sizeof specs / sizeof *specs
    };
    struct ck_col cols[N];
    ck_table(c, "shared.frameTable", table(c, "frameTable"), specs, N, cols);
    check_frame_categories(c, &cols[2], &cols[3]);
    free_cols(cols, N);
}

static void check_simple_tables(struct ck *c)
{
    static const struct ck_colspec funcs[] = {
            {"name", K_IDX, T_STR},
            {"isJS", K_BOOL, T_NONE},
            {"relevantForJS", K_BOOL, T_NONE},
            {"resource", K_IDX_M1, T_RES},
            {"source", K_IDX_NULL, T_SRC},
            {"lineNumber", K_UINT_NULL, T_NONE},
            {"columnNumber", K_UINT_NULL, T_NONE},
            {"originalLocation", K_IDX_NULL, T_SRCLOC},
    };
    static const struct ck_colspec resources[] = {{"lib", K_IDX_NULL, T_LIB},
                                                  {"name", K_IDX, T_STR},
                                                  {"host", K_IDX_NULL, T_STR},
                                                  {"type", K_RTYPE, T_NONE}};
    static const struct ck_colspec nsyms[] = {{"libIndex", K_IDX, T_LIB},
                                              {"address", K_NUM, T_NONE},
                                              {"name", K_IDX, T_STR},
                                              {"functionSize", K_NUM_NULL, T_NONE}};
    static const struct ck_colspec sources[] = {
            {"id", K_STR_NULL, T_NONE},          {"filename", K_IDX, T_STR},
            {"startLine", K_UINT, T_NONE},       {"startColumn", K_UINT, T_NONE},
            {"sourceMapURL", K_IDX_NULL, T_STR}, {"content", K_STR_NULL, T_NONE},
    };
    static const struct ck_colspec srclocs[] = {{"source", K_IDX, T_SRC},
                                                {"line", K_UINT_NULL, T_NONE},
                                                {"column", K_UINT_NULL, T_NONE}};
#define CK_TABLE(path, key, specs) \
    ck_table(c, path, table(c, key), specs, sizeof specs / sizeof *specs, NULL)
    CK_TABLE("shared.funcTable", "funcTable", funcs);
    CK_TABLE("shared.resourceTable", "resourceTable", resources);
    CK_TABLE("shared.nativeSymbols", "nativeSymbols", nsyms);
    CK_TABLE("shared.sources", "sources", sources);
    CK_TABLE("shared.sourceLocationTable", "sourceLocationTable", srclocs);
#undef CK_TABLE
}

static void check_strings(struct ck *c)
{
    const cJSON *s = table(c, "stringArray");
    if (!cJSON_IsArray(s)) {
        ck_fail(c, "shared.stringArray", s ? "type" : "missing", "must be an array of strings");
        c->n[T_STR] = -1;
        return;
    }
    c->n[T_STR] = cJSON_GetArraySize(s);
    struct ck_colrep r = {c, "shared.stringArray", 0};
    long i = 0;
    for (const cJSON *e = s->child; e; e = e->next, i++)
        if (!cJSON_IsString(e))
            ck_elem_fail(&r, i, "type", "not a string");
    ck_colrep_end(&r);
}

void ck_shared(struct ck *c)
{
    if (!c->shared) {
        for (int t = T_STR; t <= T_SRCLOC; t++)
            c->n[t] = -1;
        return;
    }
    static const struct {
        enum ck_target t;
        const char *key;
    } sizes[] = {{T_FUNC, "funcTable"},
                 {T_FRAME, "frameTable"},
                 {T_STACK, "stackTable"},
                 {T_RES, "resourceTable"},
                 {T_SRC, "sources"},
                 {T_NSYM, "nativeSymbols"},
                 {T_SRCLOC, "sourceLocationTable"}};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++)
        c->n[sizes[k].t] = ck_table_length(table(c, sizes[k].key));
    check_strings(c);
    check_stacks(c);
    check_frames(c);
    check_simple_tables(c);
}
