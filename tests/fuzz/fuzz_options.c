/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes fx_options_parse with any string. A parse either succeeds with every field inside the
 * bounds the help states, or fails with FX_EINVAL, FX_ERANGE or FX_ENOMEM, one line in the errbuf
 * that names the option and what is accepted, and nothing left to free. The same string is
 * parsed again with each of its allocations failing in turn. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_options.h"

#define MS (1000ull * 1000)
#define S  (1000ull * MS)

/* fx_options_parse allocates at most the list copy, file= and validate=. */
#define MAX_ALLOCS 3

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void check_message(const char *in, int rc, const struct fx_errbuf *eb)
{
    const char *m = eb->msg;
    FUZZ_CHECK(memchr(m, '\0', sizeof(eb->msg)) != NULL, "unterminated message for '%s'", in);
    FUZZ_CHECK(*m != '\0', "empty message, rc %d, for '%s'", rc, in);
    FUZZ_CHECK(!strpbrk(m, "\r\n"), "message is not one line: '%s'", m);
    FUZZ_CHECK(starts_with(m, "option '") || starts_with(m, "unknown option '") ||
                       starts_with(m, "option list: "),
               "message names no option: '%s'", m);
    /* A cut message would lose its end, which says what is accepted. */
    FUZZ_CHECK(strstr(m, "accepted: ") || strstr(m, "try 'help'") || strstr(m, "at most one of") ||
                       strstr(m, "out of memory"),
               "message says nothing of what is accepted: '%s'", m);
    FUZZ_CHECK(rc != FX_ENOMEM || strstr(m, "out of memory"), "ENOMEM without saying so: '%s'", m);
}

/* On failure `o` must hold nothing to free: the defaults, byte for byte. */
static void check_defaults(const char *in, const struct fx_options *o)
{
    struct fx_options d;
    fx_options_defaults(&d);
    FUZZ_CHECK(o->file == d.file && !o->validate_report && o->action == d.action &&
                       o->interval_ns == d.interval_ns && o->depth == d.depth &&
                       o->memory_bytes == d.memory_bytes && o->ring_bytes == d.ring_bytes &&
                       o->loop_ns == d.loop_ns && o->mode == d.mode && o->engine == d.engine,
               "a failed parse of '%s' left non-default options", in);
}

static bool escapes_ok(const char *pattern)
{
    for (const char *p = pattern; *p; p++) {
        if (*p == '%' && !(p[1] && strchr("ptn%", p[1])))
            return false;
        if (*p == '%')
            p++;
    }
    return true;
}

/* A path value: non-empty and short enough to open. */
static void check_path(const char *in, const char *path)
{
    FUZZ_CHECK(path && *path && strlen(path) <= 4095, "bad path accepted from '%s'", in);
}

/* file= is a pattern: only known escapes, and it always expands. */
static void check_pattern(const char *in, const char *path)
{
    check_path(in, path);
    FUZZ_CHECK(escapes_ok(path), "pattern '%s' with a bad escape accepted", path);
    /* Every accepted pattern expands: 4095 bytes of "%n" need 2047 * 10 bytes at most. */
    static char out[64 * 1024];
    int rc = fx_options_expand_path(path, INT_MAX, 0, UINT_MAX, out, sizeof(out));
    FUZZ_CHECK(rc == FX_OK, "accepted pattern '%s' does not expand: %d", path, rc);
}

static void check_values(const char *in, const struct fx_options *o)
{
    FUZZ_CHECK(o->action <= FX_ACTION_HELP && o->mode <= FX_MODE_WALL &&
                       o->engine <= FX_ENGINE_TIMER,
               "enum out of range from '%s'", in);
    FUZZ_CHECK(o->interval_ns >= 100000 && o->interval_ns <= 10 * S, "interval %llu from '%s'",
               (unsigned long long)o->interval_ns, in);
    FUZZ_CHECK(o->depth >= 1 && o->depth <= 65535, "depth %u from '%s'", o->depth, in);
    FUZZ_CHECK(o->loop_ns == 0 || o->loop_ns >= S, "loop %llu from '%s'",
               (unsigned long long)o->loop_ns, in);
    FUZZ_CHECK(o->memory_bytes >= (1ull << 20) && o->memory_bytes <= (64ull << 30),
               "memory %llu from '%s'", (unsigned long long)o->memory_bytes, in);
    FUZZ_CHECK(o->ring_bytes >= (16ull << 10) && o->ring_bytes <= (64ull << 20),
               "ring %llu from '%s'", (unsigned long long)o->ring_bytes, in);
    check_pattern(in, o->file);
    struct fx_options d;
    fx_options_defaults(&d);
    FUZZ_CHECK(o->file_set == (o->file != d.file), "file_set wrong for '%s'", in);
    FUZZ_CHECK(!o->validate_report || o->validate, "a report without validate from '%s'", in);
    if (o->validate_report)
        check_path(in, o->validate_report);
}

/* One parse; returns its rc after checking the outcome. */
static int parse_once(const char *in, struct fx_errbuf *eb)
{
    struct fx_options o;
    memset(eb->msg, 'x', sizeof(eb->msg) - 1);
    eb->msg[sizeof(eb->msg) - 1] = '\0';
    int rc = fx_options_parse(in, &o, eb);
    FUZZ_CHECK(rc == FX_OK || rc == FX_EINVAL || rc == FX_ERANGE || rc == FX_ENOMEM,
               "rc %d for '%s'", rc, in);
    if (rc == FX_OK) {
        check_values(in, &o);
        fx_options_destroy(&o);
    } else {
        check_message(in, rc, eb);
        check_defaults(in, &o);
    }
    return rc;
}

/* The value parsers on the whole string: no crash, a plain verdict, no write on failure. */
static void check_value_parsers(const char *in)
{
    uint64_t v = 12345;
    int rc = fx_options_parse_duration(in, &v);
    FUZZ_CHECK(rc == FX_OK || ((rc == FX_EINVAL || rc == FX_ERANGE) && v == 12345),
               "duration '%s': rc %d", in, rc);
    v = 12345;
    rc = fx_options_parse_size(in, &v);
    FUZZ_CHECK(rc == FX_OK || ((rc == FX_EINVAL || rc == FX_ERANGE) && v == 12345),
               "size '%s': rc %d", in, rc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = malloc(size + 1);
    if (!in)
        return 0;
    memcpy(in, data, size);
    in[size] = '\0';
    struct fx_errbuf eb, eb2;
    int rc = parse_once(in, &eb);
    FUZZ_CHECK(rc != FX_ENOMEM, "ENOMEM without injection for '%s'", in);
    int rc2 = parse_once(in, &eb2); /* no hidden state: the same verdict, the same words */
    FUZZ_CHECK(rc2 == rc && (rc == FX_OK || strcmp(eb.msg, eb2.msg) == 0),
               "second parse of '%s' differs", in);
    for (long n = 1; n <= MAX_ALLOCS; n++) {
        fx_alloc_fail_after(n);
        int rc3 = parse_once(in, &eb2);
        fx_alloc_fail_after(0);
        FUZZ_CHECK(rc3 == rc || rc3 == FX_ENOMEM,
                   "allocation %ld failing turned %d into %d for '%s'", n, rc, rc3, in);
    }
    check_value_parsers(in);
    free(in);
    return 0;
}
