/* SPDX-License-Identifier: Apache-2.0 */
/* The profile's native libraries (issue 16, fx_profile_lib): name, path and build-id of each
 * library a native frame was named in, for the root `libs` array and resourceTable.lib
 * (PROFILE-FORMAT.md §3, §5). Kept as C strings beside the tables, so compaction and resets
 * (which renumber strings) leave them alone; copied whole into snapshots. A handful of rows
 * (one per library seen), so lookups are linear.
 * Tests: unit.ff_writer. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_profile.h"
#include "fx_profile_internal.h"
#include "fx_profile_model.h"

uint32_t fx_profile_lib_find(const struct fx_profile *p, const char *name, size_t n)
{
    for (uint32_t i = 0; i < p->libs.count; i++) {
        const char *s = p->libs.rows[i].name;
        if (strncmp(s, name, n) == 0 && s[n] == '\0')
            return i;
    }
    return FX_NONE_ID;
}

uint32_t fx_profile_lib_count(const struct fx_profile *p)
{
    return p->libs.count;
}

/* Breakpad's id of an ELF file: the first 16 bytes of the build-id (zero-padded) read as a GUID
 * (the first three fields byte-swapped), in uppercase hex, then the age "0"; "" without one. */
static char *breakpad_id(const char *build_id)
{
    size_t hex = build_id ? strlen(build_id) : 0;
    if (hex < 2)
        return fx_strdup("");
    unsigned char b[16] = {0};
    for (size_t i = 0; i < 16 && 2 * i + 1 < hex; i++) {
        unsigned v;
        if (sscanf(build_id + 2 * i, "%2x", &v) != 1)
            return fx_strdup("");
        b[i] = (unsigned char)v;
    }
    static const int order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
    char out[34];
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02X", b[order[i]]);
    out[32] = '0';
    out[33] = '\0';
    return fx_strdup(out);
}

static void lib_free(struct fx_lib *b)
{
    fx_free(b->name);
    fx_free(b->path);
    fx_free(b->code_id);
    fx_free(b->breakpad_id);
}

static int lib_fill(struct fx_lib *b, const char *name, const char *path, const char *code_id,
                    const char *breakpad)
{
    *b = (struct fx_lib){fx_strdup(name), fx_strdup(path), code_id ? fx_strdup(code_id) : NULL,
                         fx_strdup(breakpad)};
    if (!b->name || !b->path || (code_id && !b->code_id) || !b->breakpad_id) {
        lib_free(b);
        return FX_ENOMEM;
    }
    return FX_OK;
}

/* The bytes of a row's strings, as fx_profile_libs_memory counts them. */
static uint32_t lib_bytes(const struct fx_lib *b)
{
    return (uint32_t)(strlen(b->name) + strlen(b->path) + strlen(b->breakpad_id) + 3 +
                      (b->code_id ? strlen(b->code_id) + 1 : 0));
}

static bool libs_room(struct fx_libs *l)
{
    if (l->count < l->cap)
        return true;
    uint32_t cap = l->cap ? l->cap * 2 : 16;
    struct fx_lib *n = fx_reallocarray(l->rows, cap, sizeof(*n));
    if (n == NULL)
        return false;
    l->rows = n;
    l->cap = cap;
    return true;
}

int fx_profile_lib(struct fx_profile *p, const struct fx_lib_desc *d)
{
    if (d == NULL || d->name == NULL || d->name[0] == '\0')
        return FX_EINVAL;
    if (fx_profile_lib_find(p, d->name, strlen(d->name)) != FX_NONE_ID)
        return FX_OK;
    if (!libs_room(&p->libs))
        return FX_ENOMEM;
    bool have_id = d->build_id != NULL && d->build_id[0] != '\0';
    char *bp = breakpad_id(have_id ? d->build_id : NULL);
    if (bp == NULL)
        return FX_ENOMEM;
    for (const char *c = have_id ? d->build_id : ""; *c; c++)
        have_id = have_id && isxdigit((unsigned char)*c);
    int rc = lib_fill(&p->libs.rows[p->libs.count], d->name, d->path ? d->path : d->name,
                      have_id ? d->build_id : NULL, have_id ? bp : "");
    fx_free(bp);
    if (rc == FX_OK)
        p->libs.str_bytes += lib_bytes(&p->libs.rows[p->libs.count++]);
    return rc;
}

void fx_profile_libs_destroy(struct fx_libs *l)
{
    for (uint32_t i = 0; i < l->count; i++)
        lib_free(&l->rows[i]);
    fx_free(l->rows);
    *l = (struct fx_libs){0};
}

bool fx_profile_libs_copy(struct fx_libs *d, const struct fx_libs *s)
{
    *d = (struct fx_libs){0};
    for (uint32_t i = 0; i < s->count; i++) {
        const struct fx_lib *b = &s->rows[i];
        if (!libs_room(d) ||
            lib_fill(&d->rows[d->count], b->name, b->path, b->code_id, b->breakpad_id) != FX_OK)
            return false;
        d->str_bytes += lib_bytes(&d->rows[d->count++]);
    }
    return true;
}

/* The sum is kept as rows are added: the drain asks at every pass (the memory bound, markers),
 * and the strlen of every row's four strings each time was ~1 % of its CPU (issue 31). */
size_t fx_profile_libs_memory(const struct fx_libs *l)
{
    return (size_t)l->cap * sizeof(*l->rows) + l->str_bytes;
}
