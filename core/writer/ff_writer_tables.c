/* SPDX-License-Identifier: Apache-2.0 */
/* The Firefox writer's shared tables (PROFILE-FORMAT.md §5: strings, stacks, frames, funcs,
 * resources, native symbols, sources) and the libs, walked from the model's columns as
 * ff_writer.c walks the threads. Tests: unit.ff_writer. */
#include <stdbool.h>
#include <stdint.h>

#include "fx_ff_writer_internal.h"
#include "fx_json.h"
#include "fx_profile.h"
#include "fx_profile_internal.h"

/* --- shared tables (§5) --- */

static void write_strings(struct fx_json *j, const struct fx_strtab *t)
{
    fx_json_key(j, "stringArray");
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < t->count; i++) {
        size_t len;
        const char *s = fx_strtab_get(t, i, &len);
        fx_json_strn(j, s, len);
    }
    fx_json_arr_end(j);
}

static void write_stack_table(struct fx_json *j, const struct fx_stacks *s)
{
    fx_json_key(j, "stackTable");
    fx_json_obj_begin(j);
    col_u32(j, "frame", s->frame, s->count, false, -1);
    fx_json_key(j, "prefixOffset");
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < s->count; i++)
        fx_json_u64(j, s->prefix[i] == FX_NONE_ID ? 0 : i - s->prefix[i]);
    fx_json_arr_end(j);
    kv_length(j, s->count);
    fx_json_obj_end(j);
}

static void write_frame_table(struct fx_json *j, const struct fx_frames *f)
{
    fx_json_key(j, "frameTable");
    fx_json_obj_begin(j);
    col_const(j, "address", f->count, false, -1);
    col_u8(j, "inlineDepth", f->inline_depth, f->count);
    col_u8(j, "category", f->category, f->count);
    col_u8(j, "subcategory", f->subcategory, f->count);
    col_u32(j, "func", f->func, f->count, false, -1);
    col_const(j, "nativeSymbol", f->count, true, 0);
    col_const(j, "innerWindowID", f->count, false, 0);
    col_line(j, "line", f->line, f->count);
    col_const(j, "column", f->count, true, 0);
    col_const(j, "originalLocation", f->count, true, 0);
    kv_length(j, f->count);
    fx_json_obj_end(j);
}

static void write_func_table(struct fx_json *j, const struct fx_funcs *f)
{
    fx_json_key(j, "funcTable");
    fx_json_obj_begin(j);
    col_u32(j, "name", f->name, f->count, false, -1);
    fx_json_key(j, "isJS");
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < f->count; i++)
        fx_json_bool(j, f->is_java[i]);
    fx_json_arr_end(j);
    fx_json_key(j, "relevantForJS");
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < f->count; i++)
        fx_json_bool(j, false);
    fx_json_arr_end(j);
    col_u32(j, "resource", f->resource_row, f->count, false, -1);
    col_u32(j, "source", f->source_row, f->count, true, 0);
    col_line(j, "lineNumber", f->line, f->count);
    col_const(j, "columnNumber", f->count, true, 0);
    col_const(j, "originalLocation", f->count, true, 0);
    kv_length(j, f->count);
    fx_json_obj_end(j);
}

/* The library a resource names (fx_profile_lib: same name), or FX_NONE_ID (a jar, a module). */
static uint32_t resource_lib(const struct fx_profile *p, uint32_t row)
{
    size_t len;
    const char *name = fx_profile_string_at(p, (fx_str_id){p->resources.str[row]}, &len);
    return name != NULL ? fx_profile_lib_find(p, name, len) : FX_NONE_ID;
}

/* A library resource has lib = its index and type 1 (Library); others lib null and type 0. */
static void write_resource_table(struct fx_json *j, const struct fx_profile *p)
{
    const struct fx_idlist *r = &p->resources;
    fx_json_key(j, "resourceTable");
    fx_json_obj_begin(j);
    fx_json_key(j, "lib");
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < r->count; i++) {
        uint32_t lib = resource_lib(p, i);
        if (lib != FX_NONE_ID)
            fx_json_u64(j, lib);
        else
            fx_json_null(j);
    }
    fx_json_arr_end(j);
    col_u32(j, "name", r->str, r->count, false, -1);
    col_const(j, "host", r->count, true, 0);
    fx_json_key(j, "type");
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < r->count; i++)
        fx_json_u64(j, resource_lib(p, i) != FX_NONE_ID);
    fx_json_arr_end(j);
    kv_length(j, r->count);
    fx_json_obj_end(j);
}

#if defined(__x86_64__)
#define FX_LIB_ARCH "x86_64"
#elif defined(__aarch64__)
#define FX_LIB_ARCH "aarch64"
#else
#define FX_LIB_ARCH ""
#endif

/* The root `libs` array (PROFILE-FORMAT.md §3): one object per fx_profile_lib. */
void fx_ff_writer_libs(struct fx_json *j, const struct fx_libs *l)
{
    fx_json_key(j, "libs");
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < l->count; i++) {
        const struct fx_lib *b = &l->rows[i];
        fx_json_obj_begin(j);
        kv_str(j, "arch", FX_LIB_ARCH);
        kv_str(j, "name", b->name);
        kv_str(j, "path", b->path);
        kv_str(j, "debugName", b->name);
        kv_str(j, "debugPath", b->path);
        kv_str(j, "breakpadId", b->breakpad_id);
        kv_str(j, "codeId", b->code_id); /* NULL: null */
        fx_json_obj_end(j);
    }
    fx_json_arr_end(j);
}

static void write_empty_table(struct fx_json *j, const char *name, const char *const *cols,
                              unsigned ncols)
{
    fx_json_key(j, name);
    fx_json_obj_begin(j);
    for (unsigned i = 0; i < ncols; i++)
        kv_empty_arr(j, cols[i]);
    kv_length(j, 0);
    fx_json_obj_end(j);
}

/* content: the texts fx_profile_set_source_content lent for this write (issue 34), else nulls. */
static void write_sources(struct fx_json *j, const struct fx_profile *p)
{
    const struct fx_idlist *s = &p->sources;
    fx_json_key(j, "sources");
    fx_json_obj_begin(j);
    col_const(j, "id", s->count, true, 0);
    col_u32(j, "filename", s->str, s->count, false, -1);
    col_const(j, "startLine", s->count, false, 1);
    col_const(j, "startColumn", s->count, false, 1);
    col_const(j, "sourceMapURL", s->count, true, 0);
    if (p->source_content) {
        fx_json_key(j, "content");
        fx_json_arr_begin(j);
        for (uint32_t i = 0; i < s->count; i++)
            fx_json_str(j, p->source_content[i]);
        fx_json_arr_end(j);
    } else {
        col_const(j, "content", s->count, true, 0);
    }
    kv_length(j, s->count);
    fx_json_obj_end(j);
}

void fx_ff_writer_shared(const struct fx_ff_ctx *w)
{
    static const char *const native_symbols[] = {"libIndex", "address", "name", "functionSize"};
    static const char *const locations[] = {"source", "line", "column"};
    struct fx_json *j = w->j;
    const struct fx_profile *p = w->p;
    fx_json_key(j, "shared");
    fx_json_obj_begin(j);
    write_strings(j, &p->strings);
    write_stack_table(j, &p->stacks);
    write_frame_table(j, &p->frames);
    write_func_table(j, &p->funcs);
    write_resource_table(j, p);
    write_empty_table(j, "nativeSymbols", native_symbols, 4);
    write_sources(j, p);
    write_empty_table(j, "sourceLocationTable", locations, 3);
    fx_json_obj_end(j);
}
