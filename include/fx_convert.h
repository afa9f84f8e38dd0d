/* SPDX-License-Identifier: Apache-2.0 */
/* The one converter of Firefox profiles to fleet formats, for the agent's push (issue 33,
 * docs/FLEET.md): fxprof convert's own code (cli/convert*.c, cli/pfile.c, built once more as
 * the static library fxconv and linked into libfxagent.so), fed the file the agent has just
 * written. So a pushed profile is byte for byte what `fxprof convert` makes of that file. */
#ifndef FX_CONVERT_H
#define FX_CONVERT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fx_err.h"

struct fx_convert_period {
    int64_t from_s, until_s; /* the profile's range, UNIX seconds */
    double samples;          /* CPU/wall observations in it ([idle] left out) */
    char service[256];       /* the service name used: given, else the main class or jar */
};

/* Converts the profile at `path` into f: otlp (true) as an ExportProfilesServiceRequest with
 * service (NULL: the main class or jar) and labels (K=V;K=V, or NULL) as resource attributes,
 * else gzipped pprof. */
int fx_convert_for_push(const char *path, bool otlp, const char *service, const char *labels,
                        FILE *f, struct fx_convert_period *period, struct fx_errbuf *eb);

#endif
