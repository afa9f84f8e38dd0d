/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes fxprof convert's JFR conversion (issue 35), not only the reader (fuzz_jfr.c): any file
 * goes through cli/jfr_profile.c, jfr_resolve.c, jfr_markers.c and jfr_counters.c into a
 * profile model, which the Firefox writer then writes to memory. The conversion either succeeds
 * or fails with FX_EINVAL, FX_EUNSUPPORTED or FX_ENOMEM and one non-empty line; a profile it
 * made is written without error, as valid UTF-8 JSON with the model's threads; never a
 * crash, an overread (ASan), a hang or unbounded memory (libFuzzer's limits). Seeds: the JFR
 * corpus (tests/fuzz/make_jfr_corpus.py) and the small recordings of tests/it/data. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "fuzz_util.h"
#include "fx_err.h"
#include "fx_ff_writer.h"
#include "fx_jfr.h"
#include "fx_profile.h"
#include "fx_sink.h"
#include "fxprof.h"

static void check_written(const struct fx_profile *p)
{
    struct fx_membuf mb = {0};
    struct fx_errbuf eb = {{0}};
    int rc = fx_ff_write(p, fx_membuf_sink(&mb), &eb);
    FUZZ_CHECK(rc == FX_OK, "fx_ff_write of a converted profile: rc %d: %s", rc, eb.msg);
    size_t bad;
    FUZZ_CHECK(fuzz_utf8_valid((const uint8_t *)mb.data, mb.len, &bad),
               "profile is not UTF-8 at byte %zu", bad);
    cJSON *doc = cJSON_ParseWithLengthOpts(mb.data, mb.len + 1, NULL, true);
    FUZZ_CHECK(doc, "cJSON rejects the profile (%zu bytes)", mb.len);
    const cJSON *threads = cJSON_GetObjectItemCaseSensitive(doc, "threads");
    FUZZ_CHECK(cJSON_IsArray(threads), "no threads array");
    /* a model without threads is written with one empty track (the writer's, for the viewer) */
    uint32_t n = fx_profile_thread_count(p), written = (uint32_t)cJSON_GetArraySize(threads);
    FUZZ_CHECK(written == n || (n == 0 && written == 1), "threads: %u written, %u in the model",
               written, n);
    cJSON_Delete(doc);
    fx_membuf_destroy(&mb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_input_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    struct fx_profile *p = fx_profile_new();
    FUZZ_CHECK(p, "fx_profile_new");
    struct fx_errbuf eb = {{0}};
    struct fx_jfr_summary sum = {0};
    int rc = fx_jfr_profile(path, p, &sum, &eb);
    if (rc != FX_OK) {
        FUZZ_CHECK(rc == FX_EINVAL || rc == FX_EUNSUPPORTED || rc == FX_ENOMEM || rc == FX_EIO,
                   "unexpected error %d", rc);
        FUZZ_CHECK(memchr(eb.msg, '\0', sizeof eb.msg) && eb.msg[0], "no message for %d", rc);
        FUZZ_CHECK(!strpbrk(eb.msg, "\r\n"), "message is not one line: '%s'", eb.msg);
    } else {
        FUZZ_CHECK(sum.chunks > 0, "a profile from no complete chunk");
        FUZZ_CHECK(sum.bytes_incomplete <= size, "incomplete %llu of %zu",
                   (unsigned long long)sum.bytes_incomplete, size);
        FUZZ_CHECK(sum.samples + sum.native_samples <= fx_profile_sample_count(p),
                   "%llu samples counted, %llu in the model",
                   (unsigned long long)(sum.samples + sum.native_samples),
                   (unsigned long long)fx_profile_sample_count(p));
        check_written(p);
    }
    fx_profile_free(p);
    close(fd);
    return 0;
}
