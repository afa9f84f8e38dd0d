/* SPDX-License-Identifier: Apache-2.0 */
/* A track's trace spans (issue 33): the "TraceSpan" markers the agent writes for
 * fxagent.TraceContext, each from the first sample taken while its context was set to 1 us after
 * the last.
 * A sample of the track inside a span's range [start, end) carries that span's trace id, span id
 * and labels: that is how fxprof convert and the push give samples their pprof labels and OTLP
 * links. The spans of a track never overlap (one context at a time per thread); sorted by start
 * here. */
#include "fx_pfile.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"

/* Half a microsecond: the writer puts whole microseconds in ms, so a sample's summed time
 * deltas and its span's bounds agree to far better than that; the agent ends a span 1 us after
 * its last sample, and two samples of one thread are always more than that apart. */
#define EPS_MS 0.0005

static const char *data_str(const cJSON *d, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(d, key);
    return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
}

static double num_at(const cJSON *arr, int i)
{
    const cJSON *v = cJSON_GetArrayItem(arr, i);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static int by_start(const void *x, const void *y)
{
    const struct fx_pfile_span *a = x, *b = y;
    return a->start < b->start ? -1 : a->start > b->start;
}

int fx_pfile_spans(const cJSON *thread, struct fx_pfile_spans *out, struct fx_errbuf *eb)
{
    static const char *const labels[FX_PFILE_SPAN_LABELS] = {"label1", "label2", "label3",
                                                             "label4"};
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(thread, "markers");
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(m, "data");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(m, "startTime");
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(m, "endTime");
    memset(out, 0, sizeof *out);
    int n = cJSON_GetArraySize(data), i = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, data)
    {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(d, "type");
        if (!cJSON_IsString(type) || strcmp(type->valuestring, "TraceSpan")) {
            i++;
            continue;
        }
        if (!out->s && !(out->s = fx_calloc((size_t)n, sizeof *out->s))) {
            fx_errbuf_set(eb, "out of memory");
            return FX_ENOMEM;
        }
        struct fx_pfile_span *s = &out->s[out->n];
        s->start = num_at(st, i);
        s->end = num_at(en, i);
        s->trace_id = data_str(d, "trace_id");
        s->span_id = data_str(d, "span_id");
        for (int k = 0; k < FX_PFILE_SPAN_LABELS; k++)
            s->label[k] = data_str(d, labels[k]);
        i++;
        if (!s->trace_id || !s->span_id || s->start < 0 || s->end < s->start) {
            fx_pfile_spans_destroy(out);
            fx_errbuf_set(eb, "profile: a TraceSpan marker is malformed (ids or times)");
            return FX_EINVAL;
        }
        out->n++;
    }
    if (out->n > 1)
        qsort(out->s, out->n, sizeof *out->s, by_start);
    return FX_OK;
}

int32_t fx_pfile_span_at(const struct fx_pfile_spans *s, double ms)
{
    uint32_t lo = 0, hi = s->n; /* the last span starting at or before ms */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->s[mid].start - EPS_MS <= ms)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || ms >= s->s[lo - 1].end - EPS_MS) /* [start, end), as the Profiler selects */
        return -1;
    return (int32_t)(lo - 1);
}

void fx_pfile_spans_destroy(struct fx_pfile_spans *s)
{
    fx_free(s->s);
    memset(s, 0, sizeof *s);
}
