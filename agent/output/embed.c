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

void fx_output_embed_begin(struct fx_profile *p, struct fx_src_embed *e)
{
    fx_src_embed_init(e, FX_SRC_MAX_FILE, FX_SRC_MAX_TOTAL);
    if (fx_opt()->sources == NULL)
        return;
    int64_t t0 = fx_now_ns();
    struct fx_errbuf eb = {{0}};
    if (fx_src_embed_model(p, fx_opt()->sources, e, &eb) != FX_OK)
        fx_log("sources: %s; the profile is written without them", eb.msg);
    /* what a dump pays for it (docs/BENCHMARKS.md, "Sources at dump time") */
    char ms[64];
    snprintf(ms, sizeof(ms), "%.3f ms", (double)(fx_now_ns() - t0) / 1e6);
    fx_profile_extra_str(p, FX_SRC_GROUP, "looked up and read in", ms);
}

void fx_output_embed_end(struct fx_profile *p, struct fx_src_embed *e)
{
    fx_profile_set_source_content(p, NULL, 0);
    fx_src_embed_destroy(e);
}
