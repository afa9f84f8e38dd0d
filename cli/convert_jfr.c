/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof convert REC.jfr [-o OUT.json.gz] (issue 35): a JDK Flight Recorder recording, told by
 * its magic whatever its name, into a Firefox profile (jfr_profile.c builds the model, the
 * Firefox writer writes it, gzipped unless OUT ends in .json). Also the temporary profile that
 * lets fxprof summary read a recording. */
#include "fxprof.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_args.h"
#include "fx_alloc.h"
#include "fx_ff_writer.h"
#include "fx_jfr.h"
#include "fx_profile.h"

bool fx_convert_input_is_jfr(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "--to")) {
            i++; /* its value */
            continue;
        }
        if (a[0] == '-' && a[1])
            continue;
        size_t n = strlen(a); /* a .jfr that is not one is told so by the JFR reader */
        return fx_jfr_is_jfr(a) || (n > 4 && !strcmp(a + n - 4, ".jfr"));
    }
    return false;
}

static int usage(void)
{
    printf("usage: fxprof convert REC.jfr [-o OUT.json.gz]\n"
           "Converts a JDK Flight Recorder recording (told by its magic, any file name) into a\n"
           "Firefox profile: a track per Java thread, jdk.ExecutionSample as samples with their\n"
           "stacks (frames typed Interpreted, Inlined, Native or JIT compiled, with lines),\n"
           "jdk.NativeMethodSample as samples ending in [state: IN_NATIVE], JDK 25's\n"
           "jdk.CPUTimeSample on a track NAME (CPU time) beside each thread's,\n"
           "jdk.ObjectAllocationSample as allocations (bytes, the class as leaf; JFR has no\n"
           "frees), park, monitor, sleep and GC events as markers, and the count of every\n"
           "event type in Profile Info. A recording cut short converts up to its last\n"
           "complete chunk, and says so.\n"
           "  -o, --output OUT   the profile to write (default: REC with .jfr replaced by\n"
           "                     .json.gz); gzipped unless OUT ends in .json\n"
           "exit codes: 0 written, 1 failed (not a recording, corrupt, cannot write), 2 bad\n"
           "            command line, 4 written elsewhere (see the message)\n"
           "example: fxprof convert app.jfr && fxprof open app.json.gz\n");
    return FX_CLI_OK;
}

static int default_out(const char *in, char *out, size_t cap)
{
    size_t len = strlen(in);
    if (len > 4 && !strcmp(in + len - 4, ".jfr"))
        len -= 4;
    if ((size_t)snprintf(out, cap, "%.*s.json.gz", (int)len, in) >= cap)
        return fx_cli_fail("convert: the output name for %s is too long; give -o", in);
    return FX_CLI_OK;
}

/* Reads the recording into a new model (*out) and says what it dropped on stderr. */
static int load(const char *cmd, const char *file, struct fx_profile **out)
{
    fx_alloc_huge_pages(true); /* the model and the writer's arrays: GBs of new pages */
    struct fx_profile *p = fx_profile_new();
    if (!p)
        return fx_cli_fail("%s: out of memory", cmd);
    struct fx_errbuf eb = {{0}};
    struct fx_jfr_summary sum;
    if (fx_jfr_profile(file, p, &sum, &eb) != FX_OK) {
        fx_profile_free(p);
        return fx_cli_fail("%s: %s", cmd, eb.msg);
    }
    if (sum.bytes_incomplete)
        fprintf(stderr,
                "fxprof: %s: %s: read %llu complete chunks; the last %llu bytes are an "
                "incomplete chunk (cut short or still being written), left out\n",
                cmd, file, (unsigned long long)sum.chunks,
                (unsigned long long)sum.bytes_incomplete);
    *out = p;
    return FX_CLI_OK;
}

int fx_convert_jfr_main(int argc, char **argv)
{
    static const struct option longs[] = {{"output", required_argument, NULL, 'o'},
                                          {"to", required_argument, NULL, 't'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    const char *out = NULL, *file = NULL;
    int o;
    optind = 0;
    while ((o = getopt_long(argc, argv, ":o:h", longs, NULL)) != -1) {
        if (o == 'o') {
            out = optarg;
        } else if (o == 't') {
            if (strcmp(optarg, "firefox"))
                return fx_cli_usage("convert",
                                    "--to '%s': a JFR recording converts to a Firefox profile "
                                    "(--to firefox); convert that profile next",
                                    optarg);
        } else {
            int rc = fx_cli_opt_rest("convert", o, argv);
            return rc < 0 ? usage() : rc;
        }
    }
    int rc = fx_cli_one_file("convert", argc, argv, &file);
    if (rc != FX_CLI_OK)
        return rc;
    if (out && !strcmp(out, "-"))
        return fx_cli_usage("convert", "-o -: a JFR conversion writes a file; name it");
    char target[PATH_MAX];
    if (!out && (rc = default_out(file, target, sizeof target)) != FX_CLI_OK)
        return rc;
    struct fx_profile *p;
    if ((rc = load("convert", file, &p)) != FX_CLI_OK)
        return rc;
    struct fx_ff_file_result res;
    struct fx_errbuf eb = {{0}};
    int err = fx_ff_write_file_threaded(p, out ? out : target, 0644, &res, &eb);
    uint64_t samples = fx_profile_sample_count(p);
    uint32_t threads = fx_profile_thread_count(p);
    fx_profile_free(p);
    if (err != FX_OK)
        return fx_cli_fail("convert: %s: %s", file, eb.msg);
    if (res.fell_back) {
        fprintf(stderr, "fxprof: convert: could not write %s (%s); wrote %s instead\n",
                out ? out : target, res.reason, res.path);
        return FX_CLI_FALLBACK;
    }
    fprintf(stderr, "fxprof: wrote %s (%llu samples, %u threads)\n", res.path,
            (unsigned long long)samples, threads);
    return FX_CLI_OK;
}

int fx_jfr_to_temp_profile(const char *cmd, const char *path, char *tmp, size_t cap)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    char hex[17];
    struct fx_errbuf eb = {{0}};
    if (fx_cli_random_hex(hex, sizeof hex, 8, &eb) != FX_OK)
        return fx_cli_fail("%s: %s", cmd, eb.msg);
    if ((size_t)snprintf(tmp, cap, "%s/fxprof-jfr-%s.json.gz", dir, hex) >= cap)
        return fx_cli_fail("%s: TMPDIR is too long", cmd);
    struct fx_profile *p;
    int rc = load(cmd, path, &p);
    if (rc != FX_CLI_OK)
        return rc;
    struct fx_ff_file_result res;
    int err = fx_ff_write_file_threaded(p, tmp, 0600, &res, &eb);
    fx_profile_free(p);
    if (err == FX_OK && res.fell_back) {
        unlink(res.path);
        fx_errbuf_set(&eb, "cannot write %s: %s", tmp, res.reason);
        err = FX_EIO;
    }
    return err == FX_OK ? FX_CLI_OK : fx_cli_fail("%s: %s: %s", cmd, path, eb.msg);
}
