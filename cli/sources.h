/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof sources: the places where a profile's Java files are looked up (sources_find.c) and
 * the embedding of their text into shared.sources.content (sources.c). Private to cli/. */
#ifndef FX_CLI_SOURCES_H
#define FX_CLI_SOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fxprof.h"

/* Where a file was found. */
enum fx_src_kind {
    FX_SRC_FOLDER,
    FX_SRC_JAR, /* a jar or zip given with --from, or a NAME-sources.jar beside a class jar */
    FX_SRC_JDK, /* the profiled JVM's lib/src.zip */
    FX_SRC_KINDS
};

struct fx_src_place;

/* The places, in lookup order: every --from, then what the profile's meta.extra "JVM" group
 * names (java.class.path: a NAME-sources.jar beside each jar, src/main/java of a Maven or
 * Gradle project whose classes folder or jar is on it; java.home: lib/src.zip). */
struct fx_src_finder {
    struct fx_src_place *places;
    size_t n, cap;
    /* What was looked for and not there, named in Profile Info: "no src.zip" and jars that
     * have no -sources.jar beside them. */
    char *jdk_missing;   /* the src.zip path that does not exist, or NULL */
    char **jars_without; /* class path jars without a -sources.jar */
    size_t njars_without;
};

/* Adds the --from paths (folders, jars, zips: anything else is FX_EINVAL with a line in eb) and
 * the places the profile's meta names. */
int fx_src_finder_init(struct fx_src_finder *f, const char *const *from, size_t nfrom,
                       const struct cJSON *root, struct fx_errbuf *eb);
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

/* The embedding, used by `fxprof sources` and `fxprof open --sources`. */
struct fx_src_opts {
    const char *const *from;
    size_t nfrom;
    uint64_t max_file, max_total;
    bool quiet; /* no summary line on stderr */
};

/* Reads the profile `in`, embeds what it finds and writes `out` (gzip unless it ends in
 * ".json") through a temporary renamed at the end. FX_CLI_OK or the code of the line printed. */
int fx_sources_embed(const char *in, const char *out, const struct fx_src_opts *o);
/* The defaults of --max-file and --max-total. */
#define FX_SRC_MAX_FILE  ((uint64_t)2 << 20)
#define FX_SRC_MAX_TOTAL ((uint64_t)32 << 20)

int fx_sources_main(int argc, char **argv); /* fxprof sources */

/* fxprof open --sources: the profile `in` with sources embedded, written to a new private
 * folder under $TMPDIR (or /tmp); `out` gets its path. FX_CLI_OK or the code of the line
 * printed. fx_sources_temp_remove deletes the file and its folder. */
int fx_sources_temp(const char *in, const char *const *from, size_t nfrom, char *out, size_t cap);
void fx_sources_temp_remove(const char *path);

#endif
