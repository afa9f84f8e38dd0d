/* SPDX-License-Identifier: Apache-2.0 */
/* JFR's gauges as the profile's counters (issue 35), graphs in the timeline: the Java heap used
 * and committed from jdk.GCHeapSummary (heapUsed, heapSpace.committedSize: before and after
 * each GC, when JFR writes it) as the agent's own heap counters, and the CPU load from
 * jdk.CPULoad (JVM user, JVM system, machine total, in whole percent of all CPUs: the counters
 * hold integers). A counter is made at its first event, so a recording without these events
 * has none. A chunk's values are sorted by time before they enter the model (JFR writes
 * per-thread buffers, not one timeline). */
#include "fxprof.h"

#include <math.h>
#include <stdlib.h>

#include "fx_alloc.h"
#include "fx_jfr.h"
#include "fx_profile.h"
#include "jfr_profile.h"

static const struct fx_counter_desc descs[JFR_COUNTERS] = {
        {"Java heap used", "Memory",
         "JFR jdk.GCHeapSummary heapUsed: the heap's used bytes before and after each GC", "bytes",
         "orange"},
        {"Java heap committed", "Memory",
         "JFR jdk.GCHeapSummary heapSpace.committedSize, before and after each GC", "bytes",
         "yellow"},
        {"JVM user CPU (% of all CPUs)", "CPU load",
         "JFR jdk.CPULoad jvmUser: the JVM's user CPU time over all CPUs, whole percent", "",
         "blue"},
        {"JVM system CPU (% of all CPUs)", "CPU load",
         "JFR jdk.CPULoad jvmSystem: the JVM's system CPU time over all CPUs, whole percent", "",
         "red"},
        {"Machine total CPU (% of all CPUs)", "CPU load",
         "JFR jdk.CPULoad machineTotal: every process's CPU time over all CPUs, whole percent", "",
         "grey"},
};

void fx_jfr_counters_layout(struct conv *c)
{
    struct fx_jfr *r = c->r;
    struct jfr_counters *k = &c->cnt;
    k->heap_cls = fx_jfr_class_find(r, "jdk.GCHeapSummary");
    k->h_time = fx_jfr_field(r, k->heap_cls, "startTime");
    k->h_used = fx_jfr_field(r, k->heap_cls, "heapUsed");
    k->h_space = fx_jfr_field(r, k->heap_cls, "heapSpace");
    k->vs_committed =
            fx_jfr_field(r, fx_jfr_class_find(r, "jdk.types.VirtualSpace"), "committedSize");
    k->load_cls = fx_jfr_class_find(r, "jdk.CPULoad");
    k->l_time = fx_jfr_field(r, k->load_cls, "startTime");
    static const char *const load[] = {"jvmUser", "jvmSystem", "machineTotal"};
    for (unsigned i = 0; i < 3; i++)
        k->l_f[i] = fx_jfr_field(r, k->load_cls, load[i]);
}

static int add(struct conv *c, unsigned which, int64_t t, int64_t v)
{
    struct jfr_counters *k = &c->cnt;
    if (fx_grow(&k->rows, &k->cap, k->n, 1, sizeof *k->rows, 256))
        return FX_ENOMEM;
    k->rows[k->n++] = (struct crow){t, v, which};
    return FX_OK;
}

static int heap(struct conv *c, const struct fx_jfr_value *v, struct fx_errbuf *eb)
{
    struct jfr_counters *k = &c->cnt;
    int64_t t = fx_jfr_ticks_to_ns(c->r, v[k->h_time].i);
    int rc = FX_OK;
    if (k->h_used >= 0 && v[k->h_used].kind == FX_JFR_INT)
        rc = add(c, JFR_HEAP_USED, t, v[k->h_used].i);
    struct fx_jfr_obj o;
    struct fx_jfr_value s[16];
    if (rc == FX_OK && k->h_space >= 0 && k->vs_committed >= 0 &&
        fx_jfr_deref(c->r, &v[k->h_space], &o) == FX_OK && fx_jfr_field_count(c->r, o.cls) <= 16 &&
        (uint32_t)k->vs_committed < fx_jfr_field_count(c->r, o.cls) &&
        fx_jfr_fields(c->r, &o, s, fx_jfr_field_count(c->r, o.cls), eb) == FX_OK &&
        s[k->vs_committed].kind == FX_JFR_INT)
        rc = add(c, JFR_HEAP_COMMITTED, t, s[k->vs_committed].i);
    return rc;
}

int fx_jfr_counters_event(struct conv *c, const struct fx_jfr_obj *ev, struct fx_errbuf *eb)
{
    struct jfr_counters *k = &c->cnt;
    bool is_heap = ev->cls == k->heap_cls, is_load = ev->cls == k->load_cls;
    if (!is_heap && !is_load)
        return 0;
    uint32_t n = fx_jfr_field_count(c->r, ev->cls);
    struct fx_jfr_value v[16];
    if ((is_heap ? k->h_time : k->l_time) < 0 || n > 16 ||
        fx_jfr_fields(c->r, ev, v, n, eb) != FX_OK) {
        k->unread++;
        return 1;
    }
    int rc = FX_OK;
    if (is_heap)
        rc = heap(c, v, eb);
    for (unsigned i = 0; is_load && i < 3 && rc == FX_OK; i++) {
        if (k->l_f[i] < 0 || v[k->l_f[i]].kind != FX_JFR_FLOAT)
            continue;
        /* a load is a fraction of all CPUs: a NaN or one out of [0, 1] (a corrupt file; its
         * cast to an integer would be undefined, fuzz.jfr_convert) is held to 0..100 % */
        double pct = floor(v[k->l_f[i]].d * 100.0 + 0.5);
        pct = pct >= 0 ? (pct <= 100 ? pct : 100) : 0;
        rc = add(c, JFR_CPU_USER + i, fx_jfr_ticks_to_ns(c->r, v[k->l_time].i), (int64_t)pct);
    }
    return rc == FX_OK ? 1 : rc;
}

static int by_time(const void *a, const void *b)
{
    const struct crow *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

int fx_jfr_counters_flush(struct conv *c)
{
    struct jfr_counters *k = &c->cnt;
    if (k->n > 1) /* rows is NULL until a first value (qsort's arguments are nonnull) */
        qsort(k->rows, k->n, sizeof *k->rows, by_time);
    for (size_t i = 0; i < k->n; i++) {
        const struct crow *r = &k->rows[i];
        int rc = FX_OK;
        if (!k->made[r->which]) {
            rc = fx_profile_counter(c->p, &descs[r->which], &k->id[r->which]);
            k->made[r->which] = rc == FX_OK;
        }
        if (rc == FX_OK)
            rc = fx_profile_counter_sample(c->p, k->id[r->which], r->t, r->v);
        if (rc != FX_OK)
            return rc;
        k->values++;
    }
    k->n = 0;
    return FX_OK;
}
