/* SPDX-License-Identifier: Apache-2.0 */
/* Java sources in a profile (issue 34): where a profile's Java files are looked up
 * (core/convert/src_find.c: folders, jars and zips read with libzip, the JDK's lib/src.zip)
 * and the embedding of their text, hottest files first within two bounds, every outcome
 * counted and named (core/convert/src_embed.c). One implementation for `fxprof sources`,
 * `fxprof open --sources` (cli/sources.c: the files of a profile read back) and the agent's
 * sources= (agent/output/embed.c: the files of the model being written, fx_src_embed_model). */
#ifndef FX_SRC_H
#define FX_SRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fx_err.h"

struct fx_profile;

/* Where a file was found. */
enum fx_src_kind {
    FX_SRC_FOLDER,
    FX_SRC_JAR, /* a jar or zip given with --from, or a NAME-sources.jar beside a class jar */
    FX_SRC_JDK, /* the profiled JVM's lib/src.zip */
    FX_SRC_KINDS
};

/* What the profile says of the JVM it was recorded in (meta.extra "JVM"); any may be NULL. */
struct fx_src_jvm {
    const char *class_path; /* java.class.path */
    const char *cwd;        /* the working directory: relative class path entries are under it */
    const char *java_home;  /* java.home: lib/src.zip */
};

struct fx_src_place;

/* The places, in lookup order: every `from`, then what the JVM's facts name (the class path:
 * a NAME-sources.jar beside each jar, src/main/java of a Maven or Gradle project whose classes
 * folder or jar is on it; java.home: lib/src.zip). */
struct fx_src_finder {
    struct fx_src_place *places;
    size_t n, cap;
    /* What was looked for and not there, named in Profile Info: "no src.zip" and jars that
     * have no -sources.jar beside them. */
    char *jdk_missing;   /* the src.zip path that does not exist, or NULL */
    char **jars_without; /* class path jars without a -sources.jar */
    size_t njars_without;
};

/* Adds the `from` paths (folders, jars, zips: anything else is FX_EINVAL, a missing one
 * FX_ENOTFOUND, with a line in eb; f is then empty) and the places `jvm` names. */
int fx_src_finder_init(struct fx_src_finder *f, const char *const *from, size_t nfrom,
                       const struct fx_src_jvm *jvm, struct fx_errbuf *eb);
void fx_src_finder_destroy(struct fx_src_finder *f);

enum fx_src_found {
    FX_SRC_FOUND,
    FX_SRC_MISSING,
    FX_SRC_TOO_LARGE, /* found, larger than max bytes */
    FX_SRC_UNREADABLE /* found, but reading it failed */
};

/* Looks `name` (a package path, "com/example/App.java") up in the places in order; the first
 * place holding it answers. FOUND: *text (NUL-terminated, fx_free'd by the caller) and *len are
 * the file's bytes, *kind where it was. */
enum fx_src_found fx_src_find(struct fx_src_finder *f, const char *name, size_t max, char **text,
                              size_t *len, enum fx_src_kind *kind);

/* The defaults of fxprof's --max-file and --max-total, and the agent's bounds. */
#define FX_SRC_MAX_FILE  ((uint64_t)2 << 20)
#define FX_SRC_MAX_TOTAL ((uint64_t)32 << 20)
/* At most this many places given (fxprof's --from, the agent's sources=). */
#define FX_SRC_MAX_FROM 32

/* What became of one file, in the order Profile Info lists them. */
enum fx_src_outcome {
    FX_SRC_EMBEDDED,
    FX_SRC_NOT_FOUND,
    FX_SRC_OUT_TOO_LARGE, /* over max_file */
    FX_SRC_NOT_UTF8,      /* the profiler decodes JSON as strict UTF-8; a NUL byte counts too */
    FX_SRC_OVER_TOTAL,    /* over max_total */
    FX_SRC_OUT_UNREADABLE,
    FX_SRC_OUTCOMES
};

/* "embedded", "not found", "too large"...: Profile Info's words. */
const char *fx_src_outcome_label(enum fx_src_outcome o);

struct fx_src_file {
    int32_t row;      /* the sources table's row */
    const char *name; /* borrowed from the caller's profile */
    double samples;   /* weight of the samples whose stack holds a frame of the file */
    enum fx_src_outcome outcome;
    enum fx_src_kind kind;
    char *text; /* EMBEDDED: the file's bytes (NUL-terminated, strict UTF-8), owned */
    size_t len;
};

/* One embedding: the caller adds the files frames name (fx_src_embed_add), then runs it. */
struct fx_src_embed {
    uint64_t max_file, max_total;
    struct fx_src_file *files; /* after fx_src_embed_run: hottest first */
    size_t nfiles, cap;
    size_t count[FX_SRC_OUTCOMES], by_kind[FX_SRC_KINDS];
    uint64_t bytes;    /* text embedded */
    const char **lent; /* fx_src_embed_model: the texts by row, lent to the profile */
};

void fx_src_embed_init(struct fx_src_embed *e, uint64_t max_file, uint64_t max_total);
void fx_src_embed_destroy(struct fx_src_embed *e); /* frees the texts too */
/* FX_ENOMEM leaves e as it was. */
int fx_src_embed_add(struct fx_src_embed *e, int32_t row, const char *name, double samples);
/* Sorts the files hottest first and looks each up in f, in that order: a file is embedded
 * (its text kept in the file) while the total stays within max_total; every other file gets
 * the outcome that says why. */
void fx_src_embed_run(struct fx_src_embed *e, struct fx_src_finder *f);
/* Frees the texts of the files (after the caller has placed them). */
void fx_src_embed_drop_texts(struct fx_src_embed *e);

/* Profile Info's "Sources" group, entry by entry: `text` for a string entry, else the integer
 * `n`. The same labels for every caller (docs/SOURCES.md names them). */
typedef void (*fx_src_entry_fn)(void *ctx, const char *label, const char *text, int64_t n);
void fx_src_embed_report(const struct fx_src_embed *e, const struct fx_src_finder *f,
                         fx_src_entry_fn entry, void *ctx);
#define FX_SRC_GROUP "Sources"

/* The agent's sources= (agent/output/embed.c). */
/* Splits the ':'-separated `list` in place into paths (at most FX_SRC_MAX_FROM, empty ones
 * skipped); their number. */
size_t fx_src_split(char *list, const char **paths);
/* What p's meta.extra "JVM" group says (borrowed from p). */
void fx_src_jvm_of(const struct fx_profile *p, struct fx_src_jvm *jvm);
/* Embeds into `p` (a snapshot, or the model at VM death, owned by the caller) the files its
 * frames name, looked up in f: sets p's source content (borrowing e's texts: keep e until p is
 * written) and its "Sources" group. e holds at most e->max_total bytes of text. FX_ENOMEM when
 * memory ran out (p then has no content; its "Sources" group says so when it could be set). */
int fx_src_embed_model(struct fx_profile *p, struct fx_src_finder *f, struct fx_src_embed *e);

#endif
