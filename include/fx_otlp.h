/* SPDX-License-Identifier: Apache-2.0 */
/* An OTLP profiles writer (OpenTelemetry's profiles signal, the v1development schema of
 * opentelemetry-proto; docs/FLEET.md names the commit), JVM-free: one
 * ExportProfilesServiceRequest with one resource (its attributes: service.name, host.name,
 * process.*), one scope, and any number of profiles, each of one sample type (a view), whose
 * samples carry a stack, attributes (thread.name, thread.id), and one value and one timestamp
 * per observation. The dictionary (strings, functions, locations, stacks, attributes) is shared
 * by the profiles; equal entries are stored once, index 0 of every table is the zero value the
 * spec requires. Encoding is fx_pb.h's; the first error is sticky (every later call returns it
 * and finish writes nothing). */
#ifndef FX_OTLP_H
#define FX_OTLP_H

#include <stddef.h>
#include <stdint.h>

#include "fx_sink.h"

struct fx_otlp;

struct fx_otlp *fx_otlp_new(void);
void fx_otlp_free(struct fx_otlp *o);

/* A resource attribute, string or integer; each key once (the caller's to keep so). */
int fx_otlp_resource_str(struct fx_otlp *o, const char *key, const char *value);
int fx_otlp_resource_int(struct fx_otlp *o, const char *key, int64_t value);

/* Dictionary entries; *index is the entry's index in its table (> 0). A function: its name,
 * source file (NULL or "": none), first line (0: unknown). A location: one line of a function
 * (line 0: unknown). A stack: location indices, leaf first. */
int fx_otlp_function(struct fx_otlp *o, const char *name, const char *file, int64_t start_line,
                     int32_t *index);
int fx_otlp_location(struct fx_otlp *o, int32_t function, int64_t line, int32_t *index);
int fx_otlp_stack(struct fx_otlp *o, const int32_t *locations, size_t n, int32_t *index);
/* An attribute of samples or profiles (key and a string or integer value). */
int fx_otlp_attr_str(struct fx_otlp *o, const char *key, const char *value, int32_t *index);
int fx_otlp_attr_int(struct fx_otlp *o, const char *key, int64_t value, int32_t *index);

struct fx_otlp_profile {
    const char *type, *unit;               /* the sample type, e.g. "cpu", "nanoseconds" */
    const char *period_type, *period_unit; /* NULL: no period */
    int64_t period;
    uint64_t time_unix_nano, duration_nano;
};

/* Opens a profile; samples go into it until fx_otlp_profile_end. One at a time. */
int fx_otlp_profile_begin(struct fx_otlp *o, const struct fx_otlp_profile *p);
/* A sample of the open profile: its stack, attributes, and n observations (a value and a
 * timestamp in ns since the epoch each; timestamps NULL: none). */
int fx_otlp_sample(struct fx_otlp *o, int32_t stack, const int32_t *attrs, size_t nattrs,
                   const int64_t *values, const uint64_t *timestamps, size_t n);
/* Issue 33: a Link (trace id, span id) in the dictionary's link table, *index > 0, and a sample
 * that points to one (link 0: none, as fx_otlp_sample). */
int fx_otlp_link(struct fx_otlp *o, const uint8_t trace_id[16], const uint8_t span_id[8],
                 int32_t *index);
int fx_otlp_sample_linked(struct fx_otlp *o, int32_t stack, const int32_t *attrs, size_t nattrs,
                          int32_t link, const int64_t *values, const uint64_t *timestamps,
                          size_t n);
/* Closes the open profile, with attributes of its own (nattrs 0: none). */
int fx_otlp_profile_end(struct fx_otlp *o, const int32_t *attrs, size_t nattrs);
/* Encodes the request into `out` (uncompressed protobuf, as OTLP/HTTP's
 * application/x-protobuf carries it). scope_version NULL: none. */
int fx_otlp_finish(struct fx_otlp *o, const char *scope_name, const char *scope_version,
                   struct fx_sink out);

#endif
