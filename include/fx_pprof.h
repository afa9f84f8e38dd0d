/* SPDX-License-Identifier: Apache-2.0 */
/* A pprof profile writer (google/pprof's profile.proto, the format `go tool pprof`, Pyroscope,
 * Parca and Grafana read), JVM-free: the caller names sample types, functions, locations and
 * samples; fx_pprof_finish encodes them as protobuf into a sink (gzip it with fx_gzip, as the
 * readers expect). Ids of functions and locations are the caller's (> 0, each once). Encoding
 * is done here with a few lines of protobuf wire format (docs/SETUP.md says why no library). */
#ifndef FX_PPROF_H
#define FX_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "fx_sink.h"

#define FX_PPROF_MAX_TYPES 12

struct fx_pprof;

struct fx_pprof *fx_pprof_new(void);
void fx_pprof_free(struct fx_pprof *p);
/* Appends a sample type (e.g. "cpu", "nanoseconds"); every sample then carries one value more.
 * Only before the first sample; at most FX_PPROF_MAX_TYPES. */
int fx_pprof_sample_type(struct fx_pprof *p, const char *type, const char *unit);
/* Function `id`: its name, source file ("" or NULL: none) and first line (0: unknown). */
int fx_pprof_function(struct fx_pprof *p, uint64_t id, const char *name, const char *file,
                      int64_t start_line);
/* Location `id`: one line of function `function_id` (line 0: unknown). */
int fx_pprof_location(struct fx_pprof *p, uint64_t id, uint64_t function_id, int64_t line);
/* A sample: n location ids, leaf first, one value per sample type, and an optional string label
 * (key NULL: none). */
int fx_pprof_sample(struct fx_pprof *p, const uint64_t *locations, size_t n, const int64_t *values,
                    const char *label_key, const char *label_value);
/* The same with nlabels string labels, each {key, value} (issue 33: thread, trace_id, span_id
 * and the span's labels). */
int fx_pprof_sample_labels(struct fx_pprof *p, const uint64_t *locations, size_t n,
                           const int64_t *values, const char *const (*labels)[2], size_t nlabels);
/* The sample type readers show when not told (-sample_index): its index, -1 (the default) for
 * theirs, which is the last type. */
int fx_pprof_default_type(struct fx_pprof *p, int index);
/* Encodes the profile into `out`. period_type is the index of a sample type (its type and unit
 * become the period's), or -1 for none; comment (NULL: none) is shown by `pprof -comments`. */
int fx_pprof_finish(struct fx_pprof *p, int64_t time_nanos, int64_t duration_nanos, int period_type,
                    int64_t period, const char *comment, struct fx_sink out);

#endif
