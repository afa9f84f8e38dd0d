/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof convert --to otlp (convert_otlp.c): a parsed processed profile as one OTLP
 * ExportProfilesServiceRequest, one profile per view. */
#ifndef FX_CONVERT_OTLP_H
#define FX_CONVERT_OTLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "fx_sink.h"

struct cJSON;
struct fx_errbuf;

struct fx_otlp_opts {
    bool idle;               /* keep the [idle] samples */
    const char *service;     /* service.name; NULL: the profile's main class or jar */
    const char *(*attrs)[2]; /* more resource attributes, key and value */
    size_t nattrs;
    const char *version; /* the scope's version (fxagent's), NULL: none */
};

struct fx_otlp_result {
    unsigned profiles;      /* views written */
    double observations[4]; /* per view: cpu, lock, alloc, live */
    double idle;            /* [idle] samples left out */
};

int fx_convert_otlp(const struct cJSON *root, const struct fx_otlp_opts *opts, struct fx_sink out,
                    struct fx_otlp_result *res, struct fx_errbuf *eb);

/* The hook of `fxprof convert --to otlp`: the request into f; *idle_out: [idle] samples left
 * out. */
int fx_convert_otlp_file(const struct cJSON *root, bool idle, FILE *f, double *idle_out,
                         struct fx_errbuf *eb);

/* convert.c: the pprof writer of `--to pprof`, for the agent's push. */
int fx_convert_pprof_file(const struct cJSON *root, FILE *f, struct fx_errbuf *eb);

#endif
