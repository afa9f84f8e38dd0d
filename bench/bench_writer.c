/* SPDX-License-Identifier: Apache-2.0 */
/* The writer benchmark: one process builds a deterministic model (by default 1,000,000 samples
 * over 20,000 leaf stacks 10..200 deep, 8 threads), writes it with fx_ff_write_file as .json.gz
 * and as .json, and measures baselines in the same run: building the model, and zlib levels 6
 * and 1 over the very bytes the writer produced. Ratios to those baselines travel between machines
 * better than seconds do. Peak RSS (ru_maxrss) is read after building the model, then reset
 * before each write, so the writer's own increment is visible. One JSON object per run on stdout;
 * run_writer_bench.sh takes medians. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "fx_alloc.h"
#include "fx_clock.h"
#include "fx_ff_writer.h"
#include "fx_profile.h"
#include "synth_model.h"

struct result {
    struct synth_stats st;
    double build_s, gz_s, gz_cpu_s, json_s, zlib_s, zlib1_s;
    double build_cpu_s, json_cpu_s, zlib_cpu_s, zlib1_cpu_s;
    unsigned long long gz_bytes, json_bytes, zlib_bytes, zlib1_bytes, model_bytes;
    long rss_start, rss_model;       /* KiB, ru_maxrss: the high-water mark so far */
    long rss_gz, rss_json;           /* KiB, ru_maxrss during that write alone (reset before it) */
    long gz_peak_inc, json_peak_inc; /* KiB, VmHWM during a write - VmRSS before */
};

static double now_s(void)
{
    return (double)fx_clock_ns(CLOCK_MONOTONIC) * 1e-9;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static long max_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* A field of /proc/self/status in KiB ("VmRSS", "VmHWM"), or -1. */
static long proc_status_kib(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t kl = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == ':')
            v = strtol(line + kl + 1, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

/* ru_maxrss keeps the model build's high-water mark, which can hide a smaller writer peak:
 * writing "5" to clear_refs resets VmHWM to the current RSS (Linux >= 4.0), so VmHWM after
 * the write minus VmRSS before it is the writer's own peak. */
static long reset_hwm(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
    return proc_status_kib("VmRSS");
}

static int write_timed(const struct fx_profile *p, const char *path, double *secs,
                       unsigned long long *bytes)
{
    struct fx_ff_file_result res;
    struct fx_errbuf eb = {{0}};
    double t0 = now_s();
    int rc = fx_ff_write_file(p, path, 0, &res, &eb);
    *secs = now_s() - t0;
    if (rc != FX_OK || res.fell_back) {
        fprintf(stderr, "bench_writer: writing %s failed: %s\n", path,
                rc != FX_OK ? eb.msg : res.reason);
        return rc != FX_OK ? rc : FX_EIO;
    }
    *bytes = res.bytes;
    return FX_OK;
}

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    struct stat sb;
    if (!f || fstat(fileno(f), &sb) != 0) {
        if (f)
            fclose(f);
        return NULL;
    }
    unsigned char *buf = fx_malloc((size_t)sb.st_size + 1);
    *len = buf ? fread(buf, 1, (size_t)sb.st_size, f) : 0;
    fclose(f);
    if (buf && *len != (size_t)sb.st_size) {
        fx_free(buf);
        return NULL;
    }
    return buf;
}

/* One gzip member over `in`, in memory; only the deflate is timed. */
static int gzip_timed(const unsigned char *in, size_t len, int level, double *secs, double *cpu,
                      unsigned long long *bytes)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return FX_EZLIB;
    uLong bound = deflateBound(&zs, (uLong)len);
    unsigned char *out = fx_malloc(bound);
    int rc = FX_ENOMEM;
    if (out) {
        double t0 = now_s(), c0 = cpu_s();
        zs.next_in = (unsigned char *)in;
        zs.avail_in = (uInt)len;
        zs.next_out = out;
        zs.avail_out = (uInt)bound;
        rc = deflate(&zs, Z_FINISH) == Z_STREAM_END ? FX_OK : FX_EZLIB;
        *secs = now_s() - t0;
        *cpu = cpu_s() - c0;
        *bytes = zs.total_out;
    }
    fx_free(out);
    deflateEnd(&zs);
    return rc;
}

/* Baselines over the very bytes the writer produced: zlib level 6 and level 1 (the writer's own
 * level is whichever one its output size matches). */
static int zlib_baselines(const char *json_path, struct result *r)
{
    size_t len;
    unsigned char *in = read_file(json_path, &len);
    if (!in)
        return FX_EIO;
    int rc = gzip_timed(in, len, 6, &r->zlib_s, &r->zlib_cpu_s, &r->zlib_bytes);
    if (rc == FX_OK)
        rc = gzip_timed(in, len, 1, &r->zlib1_s, &r->zlib1_cpu_s, &r->zlib1_bytes);
    fx_free(in);
    return rc;
}

static int run(const struct synth_params *sp, const char *dir, struct result *r)
{
    char gz[4096], js[4096];
    snprintf(gz, sizeof gz, "%s/bench.json.gz", dir);
    snprintf(js, sizeof js, "%s/bench.json", dir);
    r->rss_start = max_rss_kib();
    struct fx_profile *p = fx_profile_new();
    if (!p)
        return FX_ENOMEM;
    struct fx_errbuf eb = {{0}};
    double t0 = now_s(), c0 = cpu_s();
    int rc = synth_random_model(p, sp, &r->st, &eb);
    r->build_s = now_s() - t0;
    r->build_cpu_s = cpu_s() - c0;
    r->model_bytes = fx_profile_memory(p);
    r->rss_model = max_rss_kib();
    if (rc != FX_OK)
        fprintf(stderr, "bench_writer: %s\n", eb.msg);
    c0 = cpu_s();
    long before = reset_hwm();
    if (rc == FX_OK)
        rc = write_timed(p, gz, &r->gz_s, &r->gz_bytes);
    r->gz_cpu_s = cpu_s() - c0;
    r->gz_peak_inc = proc_status_kib("VmHWM") - before;
    r->rss_gz = max_rss_kib();
    before = reset_hwm();
    c0 = cpu_s();
    if (rc == FX_OK)
        rc = write_timed(p, js, &r->json_s, &r->json_bytes);
    r->json_cpu_s = cpu_s() - c0;
    r->json_peak_inc = proc_status_kib("VmHWM") - before;
    r->rss_json = max_rss_kib();
    fx_profile_free(p);
    if (rc == FX_OK)
        rc = zlib_baselines(js, r);
    unlink(gz);
    unlink(js);
    return rc;
}

static void print_json(const struct synth_params *sp, const struct result *r)
{
    double n = sp->samples ? (double)sp->samples : 1;
    printf("{\"samples\":%llu,\"threads\":%u,\"leaf_stacks\":%u,\"stack_rows\":%u,"
           "\"min_depth\":%u,\"max_depth\":%u,\"seed\":%llu,"
           "\"build_s\":%.4f,\"model_bytes\":%llu,"
           "\"gz_write_s\":%.4f,\"gz_write_cpu_s\":%.4f,\"gz_bytes\":%llu,"
           "\"json_write_s\":%.4f,\"json_bytes\":%llu,"
           "\"zlib6_s\":%.4f,\"zlib6_bytes\":%llu,\"zlib1_s\":%.4f,\"zlib1_bytes\":%llu,"
           "\"gz_bytes_per_sample\":%.3f,\"json_bytes_per_sample\":%.3f,"
           "\"gz_write_over_zlib6\":%.3f,\"gz_write_over_build\":%.3f,"
           "\"build_cpu_s\":%.4f,\"json_write_cpu_s\":%.4f,\"zlib6_cpu_s\":%.4f,\"zlib1_cpu_s\":%.4f,"
           "\"gz_write_cpu_over_zlib6_cpu\":%.3f,\"gz_write_cpu_over_build_cpu\":%.3f,"
           "\"gz_write_over_zlib1\":%.3f,\"gz_write_cpu_over_zlib1_cpu\":%.3f,"
           "\"rss_start_kib\":%ld,\"rss_model_kib\":%ld,\"rss_during_gz_write_kib\":%ld,"
           "\"rss_during_json_write_kib\":%ld,\"gz_write_peak_increment_kib\":%ld,"
           "\"json_write_peak_increment_kib\":%ld}\n",
           (unsigned long long)sp->samples, sp->threads, r->st.leaf_stacks, r->st.stack_rows,
           sp->min_depth, sp->max_depth, (unsigned long long)sp->seed, r->build_s, r->model_bytes,
           r->gz_s, r->gz_cpu_s, r->gz_bytes, r->json_s, r->json_bytes, r->zlib_s, r->zlib_bytes,
           r->zlib1_s, r->zlib1_bytes, (double)r->gz_bytes / n, (double)r->json_bytes / n,
           r->gz_s / r->zlib_s, r->gz_s / r->build_s, r->build_cpu_s, r->json_cpu_s, r->zlib_cpu_s,
           r->zlib1_cpu_s, r->gz_cpu_s / r->zlib_cpu_s, r->gz_cpu_s / r->build_cpu_s,
           r->gz_s / r->zlib1_s, r->gz_cpu_s / r->zlib1_cpu_s, r->rss_start, r->rss_model,
           r->rss_gz, r->rss_json, r->gz_peak_inc, r->json_peak_inc);
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_writer [--out-dir DIR] [--samples N] [--stacks N] "
                    "[--threads N] [--min-depth D] [--max-depth D] [--seed S]\n");
    return 2;
}

static bool parse_u64(const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return !errno && end != s && !*end && s[0] != '-';
}

static bool parse(int argc, char **argv, struct synth_params *sp, const char **dir)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        unsigned long long v;
        if (!strcmp(argv[i], "--out-dir")) {
            *dir = argv[i + 1];
            continue;
        }
        if (!parse_u64(argv[i + 1], &v))
            return false;
        if (!strcmp(argv[i], "--samples"))
            sp->samples = v;
        else if (!strcmp(argv[i], "--seed"))
            sp->seed = v;
        else if (v > 100000000ULL)
            return false;
        else if (!strcmp(argv[i], "--stacks"))
            sp->stacks = (unsigned)v;
        else if (!strcmp(argv[i], "--threads"))
            sp->threads = (unsigned)v;
        else if (!strcmp(argv[i], "--min-depth"))
            sp->min_depth = (unsigned)v;
        else if (!strcmp(argv[i], "--max-depth"))
            sp->max_depth = (unsigned)v;
        else
            return false;
    }
    return argc % 2 == 1;
}

int main(int argc, char **argv)
{
    struct synth_params sp = {8, 1000000, 20000, 10, 200, 1};
    const char *dir = "/tmp";
    if (!parse(argc, argv, &sp, &dir))
        return usage();
    struct result r;
    memset(&r, 0, sizeof r);
    int rc = run(&sp, dir, &r);
    if (rc != FX_OK) {
        fprintf(stderr, "bench_writer: failed: %s\n", fx_strerror(rc));
        return 1;
    }
    print_json(&sp, &r);
    fprintf(stderr,
            "bench_writer: %llu samples, %u leaf stacks (%u rows): build %.3f s; .json.gz "
            "%.3f s, %.2f B/sample; .json %.3f s, %.2f B/sample; zlib-6 of the same bytes "
            "%.3f s (writer/zlib %.2fx); peak RSS: model %ld KiB, during writes %ld / %ld KiB\n",
            (unsigned long long)sp.samples, r.st.leaf_stacks, r.st.stack_rows, r.build_s, r.gz_s,
            (double)r.gz_bytes / (double)sp.samples, r.json_s,
            (double)r.json_bytes / (double)sp.samples, r.zlib_s, r.gz_s / r.zlib_s, r.rss_model,
            r.rss_gz, r.rss_json);
    return 0;
}
