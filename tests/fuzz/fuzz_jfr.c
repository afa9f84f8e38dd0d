/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the JFR reader (issue 35) with any file: every chunk, event, field, constant pool
 * reference and string the input holds is read, as fxprof convert reads them. The reader
 * either ends or fails with FX_EINVAL, FX_EUNSUPPORTED or FX_ENOMEM and one non-empty line;
 * never a crash, an overread (ASan), a hang or unbounded memory (libFuzzer's limits). Seeds:
 * tests/fuzz/make_jfr_corpus.py. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "fx_err.h"
#include "fx_jfr.h"

#define MAXF 16

static void check_error(int rc, const struct fx_errbuf *eb)
{
    FUZZ_CHECK(rc == FX_EINVAL || rc == FX_EUNSUPPORTED || rc == FX_ENOMEM || rc == FX_EIO,
               "unexpected error %d", rc);
    FUZZ_CHECK(memchr(eb->msg, '\0', sizeof eb->msg) && eb->msg[0], "no message for %d", rc);
    FUZZ_CHECK(!strpbrk(eb->msg, "\r\n"), "message is not one line: '%s'", eb->msg);
}

static void read_object(struct fx_jfr *r, const struct fx_jfr_obj *o, int depth)
{
    struct fx_jfr_value v[MAXF];
    struct fx_errbuf eb = {{0}};
    uint32_t n = fx_jfr_field_count(r, o->cls);
    if (depth > 4 || n > MAXF || fx_jfr_fields(r, o, v, n, &eb) != FX_OK)
        return;
    for (uint32_t i = 0; i < n; i++) {
        char buf[64];
        size_t len = 0;
        if (fx_jfr_string(r, &v[i], buf, sizeof buf, &len) == FX_OK)
            FUZZ_CHECK(len < sizeof buf && buf[len] == '\0', "string length %zu", len);
        struct fx_jfr_obj sub;
        if (fx_jfr_deref(r, &v[i], &sub) == FX_OK)
            read_object(r, &sub, depth + 1);
        if (v[i].kind == FX_JFR_ARRAY) {
            const uint8_t *cur = NULL;
            uint32_t idx;
            struct fx_jfr_value e;
            while (fx_jfr_array_next(r, &v[i], &cur, &idx, &e, &eb) == 1)
                if (fx_jfr_deref(r, &e, &sub) == FX_OK)
                    read_object(r, &sub, depth + 1);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_input_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    struct fx_jfr *r = NULL;
    struct fx_errbuf eb = {{0}};
    int rc = fx_jfr_open(path, &r, &eb);
    if (rc != FX_OK) {
        check_error(rc, &eb);
        close(fd);
        return 0;
    }
    while ((rc = fx_jfr_next_chunk(r, &eb)) == 1) {
        struct fx_jfr_obj ev;
        while ((rc = fx_jfr_next_event(r, &ev, &eb)) == 1)
            read_object(r, &ev, 0);
        if (rc < 0)
            break;
    }
    if (rc < 0)
        check_error(rc, &eb);
    const struct fx_jfr_stats *s = fx_jfr_stats(r);
    FUZZ_CHECK(s->bytes_incomplete <= s->file_size, "incomplete %llu of %llu",
               (unsigned long long)s->bytes_incomplete, (unsigned long long)s->file_size);
    fx_jfr_close(r);
    close(fd);
    return 0;
}
