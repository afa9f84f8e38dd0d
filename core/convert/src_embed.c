/* SPDX-License-Identifier: Apache-2.0
 * Tests: unit.src, it.fxprof_sources. */
/* Embedding Java sources (issue 34): the text of the files a profile's frames name goes into
 * shared.sources.content (processed format v64+), which the Firefox Profiler's source view
 * prefers to any fetch (its selectors/code.tsx), so the view works offline and when shared.
 * Files go in hottest first (samples whose stack holds a frame of the file) until the bounds;
 * every file that is not embedded is counted and named in Profile Info's "Sources" group. The
 * callers give the files and place the texts: fxprof into a profile read back (cli/sources.c),
 * the agent into the profile it writes (fx_src_embed_model, on the dump path). */
#include "fx_src.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_profile.h"

#define NAMES_SHOWN 20 /* per outcome in Profile Info; the rest as "and N more" */

static const char *const outcome_label[FX_SRC_OUTCOMES] = {
        "embedded",  "not found", "too large", "not UTF-8", "left out (over the total bound)",
        "unreadable"};

const char *fx_src_outcome_label(enum fx_src_outcome o)
{
    return o < FX_SRC_OUTCOMES ? outcome_label[o] : "?";
}

/* Strict UTF-8 (no overlong forms, surrogates or code points past U+10FFFF) without NUL, as
 * the profiler's TextDecoder in fatal mode and a C string both need. */
static bool utf8_text(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t k = c < 0x80             ? 0
                   : (c & 0xe0) == 0xc0 ? 1
                   : (c & 0xf0) == 0xe0 ? 2
                   : (c & 0xf8) == 0xf0 ? 3
                                        : 9;
        if (c == 0 || k == 9 || i + k >= n + (k == 0))
            return false;
        uint32_t cp = k == 0 ? c : c & (0x3f >> k);
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xc0) != 0x80)
                return false;
            cp = cp << 6 | (s[i + j] & 0x3f);
        }
        static const uint32_t min[] = {0, 0x80, 0x800, 0x10000};
        if (cp < min[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += k + 1;
    }
    return true;
}

void fx_src_embed_init(struct fx_src_embed *e, uint64_t max_file, uint64_t max_total)
{
    memset(e, 0, sizeof(*e));
    e->max_file = max_file;
    e->max_total = max_total;
}

void fx_src_embed_drop_texts(struct fx_src_embed *e)
{
    for (size_t i = 0; i < e->nfiles; i++) {
        fx_free(e->files[i].text);
        e->files[i].text = NULL;
    }
}

void fx_src_embed_destroy(struct fx_src_embed *e)
{
    fx_src_embed_drop_texts(e);
    fx_free(e->files);
    fx_free(e->lent);
    fx_src_embed_init(e, e->max_file, e->max_total);
}

int fx_src_embed_add(struct fx_src_embed *e, int32_t row, const char *name, double samples)
{
    if (e->nfiles == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 64;
        struct fx_src_file *nf = fx_reallocarray(e->files, cap, sizeof(*nf));
        if (!nf)
            return FX_ENOMEM;
        e->files = nf;
        e->cap = cap;
    }
    e->files[e->nfiles++] = (struct fx_src_file){.row = row, .name = name, .samples = samples};
    return FX_OK;
}

static int hotter(const void *a, const void *b)
{
    const struct fx_src_file *x = a, *y = b;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    return strcmp(x->name, y->name);
}

static enum fx_src_outcome embed_one(struct fx_src_embed *e, struct fx_src_finder *f,
                                     struct fx_src_file *file)
{
    char *text = NULL;
    size_t len = 0;
    enum fx_src_found r = fx_src_find(f, file->name, e->max_file, &text, &len, &file->kind);
    enum fx_src_outcome out = r == FX_SRC_MISSING                            ? FX_SRC_NOT_FOUND
                              : r == FX_SRC_TOO_LARGE                        ? FX_SRC_OUT_TOO_LARGE
                              : r == FX_SRC_UNREADABLE                       ? FX_SRC_OUT_UNREADABLE
                              : !utf8_text((const unsigned char *)text, len) ? FX_SRC_NOT_UTF8
                              : e->bytes + len > e->max_total                ? FX_SRC_OVER_TOTAL
                                                                             : FX_SRC_EMBEDDED;
    if (out == FX_SRC_EMBEDDED) {
        e->bytes += len;
        e->by_kind[file->kind]++;
        file->text = text;
        file->len = len;
    } else {
        fx_free(text);
    }
    return out;
}

void fx_src_embed_run(struct fx_src_embed *e, struct fx_src_finder *f)
{
    qsort(e->files, e->nfiles, sizeof(*e->files), hotter);
    for (size_t i = 0; i < e->nfiles; i++) {
        e->files[i].outcome = embed_one(e, f, &e->files[i]);
        e->count[e->files[i].outcome]++;
    }
}

/* ---- Profile Info's "Sources" ---- */

/* "a, b, c and N more" of names[0..n). */
static void names_entry(fx_src_entry_fn entry, void *ctx, const char *label,
                        const char *const *names, size_t n)
{
    size_t cap = 64, len = 0;
    for (size_t i = 0; i < n && i < NAMES_SHOWN; i++)
        cap += strlen(names[i]) + 2;
    char *buf = fx_malloc(cap);
    if (!buf)
        return;
    buf[0] = '\0';
    for (size_t i = 0; i < n && i < NAMES_SHOWN; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", names[i]);
    if (n > NAMES_SHOWN)
        snprintf(buf + len, cap - len, " and %zu more", n - NAMES_SHOWN);
    entry(ctx, label, buf, 0);
    fx_free(buf);
}

static void outcome_entries(const struct fx_src_embed *e, fx_src_entry_fn entry, void *ctx)
{
    const char **names = fx_calloc(e->nfiles ? e->nfiles : 1, sizeof(*names));
    for (int k = FX_SRC_NOT_FOUND; names && k < FX_SRC_OUTCOMES; k++) {
        if (!e->count[k])
            continue;
        size_t n = 0;
        for (size_t i = 0; i < e->nfiles; i++)
            if (e->files[i].outcome == (enum fx_src_outcome)k)
                names[n++] = e->files[i].name;
        entry(ctx, outcome_label[k], NULL, (int64_t)n);
        char label[64];
        snprintf(label, sizeof(label), "%s: files", outcome_label[k]);
        names_entry(entry, ctx, label, names, n);
    }
    fx_free(names);
}

void fx_src_embed_report(const struct fx_src_embed *e, const struct fx_src_finder *f,
                         fx_src_entry_fn entry, void *ctx)
{
    char buf[160];
    snprintf(buf, sizeof(buf),
             "%zu of %zu files, %llu bytes (folders %zu, jars %zu, JDK src.zip %zu)",
             e->count[FX_SRC_EMBEDDED], e->nfiles, (unsigned long long)e->bytes,
             e->by_kind[FX_SRC_FOLDER], e->by_kind[FX_SRC_JAR], e->by_kind[FX_SRC_JDK]);
    entry(ctx, "embedded", buf, 0);
    snprintf(buf, sizeof(buf), "%llu bytes a file, %llu bytes in all, hottest files first",
             (unsigned long long)e->max_file, (unsigned long long)e->max_total);
    entry(ctx, "bound", buf, 0);
    outcome_entries(e, entry, ctx);
    if (f->jdk_missing) {
        snprintf(buf, sizeof(buf), "missing: %.140s", f->jdk_missing);
        entry(ctx, "JDK src.zip", buf, 0);
    }
    if (f->njars_without)
        names_entry(entry, ctx, "jars without a -sources.jar", (const char *const *)f->jars_without,
                    f->njars_without);
}

/* ---- the agent's sources= ---- */

static void model_entry(void *ctx, const char *label, const char *text, int64_t n)
{
    struct fx_profile *p = ctx;
    if (text)
        fx_profile_extra_str(p, FX_SRC_GROUP, label, text);
    else
        fx_profile_extra_int(p, FX_SRC_GROUP, label, n);
}

size_t fx_src_split(char *list, const char **paths)
{
    size_t n = 0;
    for (char *s = list; s && *s && n < FX_SRC_MAX_FROM;) {
        char *colon = strchr(s, ':');
        if (colon)
            *colon = '\0';
        if (*s)
            paths[n++] = s;
        s = colon ? colon + 1 : NULL;
    }
    return n;
}

void fx_src_jvm_of(const struct fx_profile *p, struct fx_src_jvm *jvm)
{
    jvm->class_path = fx_profile_extra_find(p, "JVM", "java.class.path");
    jvm->cwd = fx_profile_extra_find(p, "JVM", "working directory");
    jvm->java_home = fx_profile_extra_find(p, "JVM", "java.home");
}

/* The files frames name, with their heat. */
static int add_files(struct fx_profile *p, struct fx_src_embed *e)
{
    uint32_t n = fx_profile_source_count(p);
    double *heat = fx_calloc(n ? n : 1, sizeof(*heat));
    bool *named = fx_calloc(n ? n : 1, sizeof(*named));
    int rc = heat && named ? fx_profile_source_heat(p, heat, named) : FX_ENOMEM;
    for (uint32_t r = 0; rc == FX_OK && r < n; r++) {
        const char *name = fx_profile_source_name(p, r);
        if (named[r] && name)
            rc = fx_src_embed_add(e, (int32_t)r, name, heat[r]);
    }
    fx_free(heat);
    fx_free(named);
    return rc;
}

int fx_src_embed_model(struct fx_profile *p, struct fx_src_finder *f, struct fx_src_embed *e)
{
    uint32_t n = fx_profile_source_count(p);
    const char **texts = fx_calloc(n ? n : 1, sizeof(*texts));
    int rc = texts ? add_files(p, e) : FX_ENOMEM;
    if (rc != FX_OK) {
        fx_profile_extra_str(p, FX_SRC_GROUP, "embedded", "none: out of memory");
        fx_free(texts);
        return rc;
    }
    fx_src_embed_run(e, f);
    fx_src_embed_report(e, f, model_entry, p);
    for (size_t i = 0; i < e->nfiles; i++)
        texts[e->files[i].row] = e->files[i].text;
    e->lent = texts;
    fx_profile_set_source_content(p, texts, n);
    return FX_OK;
}
