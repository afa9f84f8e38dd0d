/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof sources and open --sources (sources.c): the embedding of include/fx_src.h applied to
 * a profile file. Private to cli/. */
#ifndef FX_CLI_SOURCES_H
#define FX_CLI_SOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fx_src.h"
#include "fxprof.h"

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
/* The defaults of --max-file and --max-total: FX_SRC_MAX_FILE, FX_SRC_MAX_TOTAL. */

int fx_sources_main(int argc, char **argv); /* fxprof sources */

/* fxprof open --sources: the profile `in` with sources embedded, written to a new private
 * folder under $TMPDIR (or /tmp); `out` gets its path. FX_CLI_OK or the code of the line
 * printed. fx_sources_temp_remove deletes the file and its folder. */
int fx_sources_temp(const char *in, const char *const *from, size_t nfrom, char *out, size_t cap);
void fx_sources_temp_remove(const char *path);

#endif
