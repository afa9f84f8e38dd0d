/* SPDX-License-Identifier: Apache-2.0 */
/* sources= (issue 34, docs/SOURCES.md): each file the recording writes (a dump, a stop, a
 * loop= period, the one at exit) embeds the text of the Java files its frames name, as
 * `fxprof sources` does and with its code (include/fx_src.h): looked up in the given places,
 * beside the class path's jars and in the JDK's lib/src.zip; hottest first, bounded; every
 * outcome in Profile Info's "Sources". It runs on the thread that writes the file (dump.c's
 * caller: a command's, the loop's, VMDeath's), on the copy being written, never in an
 * application thread's path or the drain's: the drain goes on while files are read. */
#include "output.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fx_alloc.h"

_Static_assert(FX_OPTIONS_SOURCES_MAX <= FX_SRC_MAX_FROM, "every path of sources= is looked in");

int fx_output_check_sources(const char *list, struct fx_errbuf *eb)
{
    for (const char *s = list; s && *s;) {
        size_t len = strcspn(s, ":");
        char path[4096];
        struct stat st;
        snprintf(path, sizeof(path), "%.*s", (int)len, s);
        if (stat(path, &st) != 0) {
            fx_errbuf_set(eb,
                          "option 'sources': %s: %s (give folders, jars or zips of Java sources)",
                          path, strerror(errno));
            return FX_EINVAL;
        }
        s += len + (s[len] == ':');
    }
    return FX_OK;
}

/* The places, opened at the first dump and kept for the next ones while what they come from
 * is the same (sources= and the JVM's class path, folder and java.home): opening the JDK's
 * src.zip and indexing its ~15,000 entries costs ~50 ms of CPU, a lookup in it ~0.5 ms.
 * Written under dump.c's write lock (every caller of fx_output_embed_begin holds it). */
static struct {
    struct fx_src_finder f;
    char *key; /* NULL: no finder */
} places;

static void places_forget(void)
{
    if (places.key)
        fx_src_finder_destroy(&places.f);
    fx_free(places.key);
    places.key = NULL;
}

/* The finder for p, opened again only when what it comes from changed. */
static struct fx_src_finder *places_for(const struct fx_profile *p, struct fx_errbuf *eb)
{
    struct fx_src_jvm jvm;
    fx_src_jvm_of(p, &jvm);
    const char *parts[] = {fx_opt()->sources, jvm.class_path, jvm.cwd, jvm.java_home};
    size_t len = 8;
    for (size_t i = 0; i < 4; i++)
        len += parts[i] ? strlen(parts[i]) + 1 : 1;
    char *key = fx_malloc(len), *list = fx_strdup(fx_opt()->sources);
    if (!key || !list) {
        fx_free(key);
        fx_free(list);
        fx_errbuf_set(eb, "out of memory");
        return NULL;
    }
    snprintf(key, len, "%s\n%s\n%s\n%s", parts[0], parts[1] ? parts[1] : "",
             parts[2] ? parts[2] : "", parts[3] ? parts[3] : "");
    if (places.key && !strcmp(places.key, key)) {
        fx_free(key);
        fx_free(list);
        return &places.f;
    }
    places_forget();
    const char *paths[FX_SRC_MAX_FROM];
    size_t n = fx_src_split(list, paths);
    int rc = fx_src_finder_init(&places.f, paths, n, &jvm, eb);
    fx_free(list);
    if (rc != FX_OK) {
        fx_free(key);
        return NULL;
    }
    places.key = key;
    return &places.f;
}

static double thread_cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

void fx_output_embed_begin(struct fx_profile *p, struct fx_src_embed *e)
{
    fx_src_embed_init(e, FX_SRC_MAX_FILE, FX_SRC_MAX_TOTAL);
    if (fx_opt()->sources == NULL)
        return;
    int64_t t0 = fx_now_ns();
    double cpu0 = thread_cpu_ms();
    struct fx_errbuf eb = {{0}};
    bool kept = places.key != NULL;
    struct fx_src_finder *f = places_for(p, &eb);
    if (f == NULL || fx_src_embed_model(p, f, e) != FX_OK) {
        if (f == NULL)
            fx_profile_extra_str(p, FX_SRC_GROUP, "embedded", eb.msg);
        fx_log("sources: %s; the profile is written without them",
               f == NULL ? eb.msg : "out of memory");
    }
    /* what a dump pays for it (docs/BENCHMARKS.md, "Sources at dump time") */
    char ms[96];
    snprintf(ms, sizeof(ms), "%.3f ms (%.3f ms of CPU; places %s)",
             (double)(fx_now_ns() - t0) / 1e6, thread_cpu_ms() - cpu0,
             kept && f == &places.f ? "kept from the last dump" : "opened");
    fx_profile_extra_str(p, FX_SRC_GROUP, "looked up and read in", ms);
}

void fx_output_embed_end(struct fx_profile *p, struct fx_src_embed *e, bool last)
{
    fx_profile_set_source_content(p, NULL, 0);
    fx_src_embed_destroy(e);
    if (last)
        places_forget();
}
