/* SPDX-License-Identifier: Apache-2.0 */
/* fxmarkers_synth: a profile with N JIT markers (distinct methods), a few GC pauses and the JVM
 * counters, written with the agent's own schemas (fx_jvm_markers) by the real writer, to prove
 * that a marker-heavy profile still loads. usage: fxmarkers_synth OUT.json.gz N */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx_err.h"
#include "fx_ff_writer.h"
#include "fx_jvm_markers.h"
#include "fx_profile.h"

#define T0    1000000000LL
#define US_NS 1000LL

static int fail(const char *what, int rc)
{
    fprintf(stderr, "fxmarkers_synth: %s: %s\n", what, fx_strerror(rc));
    return 1;
}

/* 1000 samples of a two-frame stack, one per millisecond. */
static int samples(struct fx_profile *p, fx_thread_id t)
{
    fx_stack_id root, leaf;
    int rc = fx_profile_label_stack(p, "com.example.Gen.main", FX_CAT_JAVA, &root);
    fx_str_id name;
    fx_func_id f;
    fx_frame_id fr;
    if (rc == FX_OK)
        rc = fx_profile_cstring(p, "com.example.Gen.work", &name);
    struct fx_func_key k = {name, FX_STR_NONE, FX_STR_NONE, -1, true};
    if (rc == FX_OK)
        rc = fx_profile_func(p, &k, &f);
    struct fx_frame_key fk = {f, -1, FX_CAT_JAVA, 0, 0};
    if (rc == FX_OK)
        rc = fx_profile_frame(p, &fk, &fr);
    if (rc == FX_OK)
        rc = fx_profile_stack(p, root, fr, &leaf);
    for (int i = 0; i < 1000 && rc == FX_OK; i++)
        rc = fx_profile_sample(p, t, T0 + i * 1000 * US_NS, leaf, 1000000, 1);
    return rc;
}

static int markers(struct fx_profile *p, fx_thread_id t, long n)
{
    int rc = FX_OK;
    char m[64];
    for (long i = 0; i < n && rc == FX_OK; i++) {
        int len = snprintf(m, sizeof(m), "com.example.Gen.m%ld(I)I", i);
        struct fx_jvm_jit j = {m, (size_t)len, 100 + i % 4000, i % 7};
        rc = fx_jvm_markers_jit(p, t, T0 + i * US_NS * 1000 / (n / 1000 + 1), &j);
    }
    for (int i = 0; i < 10 && rc == FX_OK; i++) {
        struct fx_jvm_gc gc = {i + 1, "G1 Young Generation", 50 << 20, 10 << 20};
        rc = fx_jvm_markers_gc(p, t, T0 + i * 100000 * US_NS,
                               T0 + i * 100000 * US_NS + 2000 * US_NS, &gc);
    }
    return rc;
}

static int counters(struct fx_profile *p)
{
    fx_counter_id ids[FX_JVM_COUNTER_COUNT];
    int rc = fx_jvm_markers_counters(p, ids);
    for (int i = 0; i < 10 && rc == FX_OK; i++) {
        for (int c = 0; c < FX_JVM_COUNTER_COUNT && rc == FX_OK; c++)
            rc = fx_profile_counter_sample(p, ids[c], T0 + i * 100000 * US_NS,
                                           (int64_t)(c + 1) * 1000000 + i * 1000);
    }
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 3 || atol(argv[2]) <= 0) {
        fprintf(stderr, "usage: fxmarkers_synth OUT.json.gz N\n");
        return 2;
    }
    long n = atol(argv[2]);
    struct fx_profile *p = fx_profile_new();
    fx_thread_id t;
    if (p == NULL)
        return fail("model", FX_ENOMEM);
    fx_profile_set_start(p, T0, 1.7e12);
    fx_profile_set_interval(p, 1.0);
    fx_profile_set_pid(p, 4242);
    int rc = fx_profile_thread_add(p, "main", 4242, T0, &t);
    if (rc == FX_OK)
        rc = samples(p, t);
    if (rc == FX_OK)
        rc = markers(p, t, n);
    if (rc == FX_OK)
        rc = counters(p);
    if (rc != FX_OK) {
        fx_profile_free(p);
        return fail("building the model", rc);
    }
    struct fx_ff_file_result res;
    struct fx_errbuf eb = {{0}};
    memset(&res, 0, sizeof(res));
    rc = fx_ff_write_file(p, argv[1], 0, &res, &eb);
    fx_profile_free(p);
    if (rc != FX_OK) {
        fprintf(stderr, "fxmarkers_synth: %s\n", eb.msg);
        return 1;
    }
    printf("fxmarkers_synth: %ld JIT markers, 10 GC pauses, %d counters: %s (%llu bytes)\n", n,
           FX_JVM_COUNTER_COUNT, res.path, res.bytes);
    return 0;
}
