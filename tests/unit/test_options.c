/* SPDX-License-Identifier: Apache-2.0 */
/* Option grammar: table-driven good and bad inputs, the one-line message contract, defaults
 * after failure, path expansion, help text and out-of-memory cleanup. */
#include "fx_options.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fx_alloc.h"

#define NS_MS 1000000ull
#define NS_S  1000000000ull
#define KIB   1024ull
#define MIB   (1024ull * KIB)
#define GIB   (1024ull * MIB)

static const char *const default_file = "fxagent-%p-%t.json.gz";

enum fld {
    F_ACTION,
    F_MODE,
    F_ENGINE,
    F_INTERVAL,
    F_DEPTH,
    F_DEPTH_CUT,
    F_LOOP,
    F_MEMORY,
    F_RING,
    F_QUIET,
    F_VALIDATE,
    F_RESET,
    F_MARKERS,
    F_CSTACK,
    F_LOCK,
    F_KSTACK,
    F_LOCKOWNER,
    F_VTRACKS,
    F_VTWAIT,
};

static uint64_t get(const struct fx_options *o, enum fld f)
{
    switch (f) {
    case F_ACTION:
        return o->action;
    case F_MODE:
        return o->mode;
    case F_ENGINE:
        return o->engine;
    case F_INTERVAL:
        return o->interval_ns;
    case F_DEPTH:
        return o->depth;
    case F_DEPTH_CUT:
        return o->depth_cut;
    case F_LOOP:
        return o->loop_ns;
    case F_MEMORY:
        return o->memory_bytes;
    case F_RING:
        return o->ring_bytes;
    case F_QUIET:
        return o->quiet;
    case F_VALIDATE:
        return o->validate;
    case F_RESET:
        return o->reset;
    case F_MARKERS:
        return o->markers;
    case F_CSTACK:
        return o->cstack;
    case F_LOCK:
        return o->lock_ns;
    case F_KSTACK:
        return o->kstack;
    case F_LOCKOWNER:
        return o->lockowner;
    case F_VTRACKS:
        return o->vtracks;
    case F_VTWAIT:
        return o->vtwait_ns;
    }
    return UINT64_MAX;
}

struct good_case {
    const char *in;
    enum fld f;
    uint64_t want;
};

static const struct good_case good[] = {
        {"start", F_ACTION, FX_ACTION_START},
        {"stop", F_ACTION, FX_ACTION_STOP},
        {"dump", F_ACTION, FX_ACTION_DUMP},
        {"status", F_ACTION, FX_ACTION_STATUS},
        {"help", F_ACTION, FX_ACTION_HELP},
        {"interval=1ms,depth=5,dump", F_ACTION, FX_ACTION_DUMP},
        {"mode=cpu", F_MODE, FX_MODE_CPU},
        {"mode=itimer", F_MODE, FX_MODE_ITIMER},
        {"mode=wall", F_MODE, FX_MODE_WALL},
        {"engine=auto", F_ENGINE, FX_ENGINE_AUTO},
        {"engine=perf", F_ENGINE, FX_ENGINE_PERF},
        {"engine=timer", F_ENGINE, FX_ENGINE_TIMER},
        {"interval=100us", F_INTERVAL, 100000},
        {"interval=100000ns", F_INTERVAL, 100000},
        {"interval=10ms", F_INTERVAL, 10 * NS_MS},
        {"interval=10s", F_INTERVAL, 10 * NS_S},
        {"interval=10000000000ns", F_INTERVAL, 10 * NS_S},
        {"start,interval=250us", F_INTERVAL, 250000},
        {"depth=1", F_DEPTH, 1},
        {"depth=2048", F_DEPTH, 2048},
        {"depth=65535", F_DEPTH, 65535},
        /* async-profiler's jstackdepth=N/M: a stack over N frames keeps M (issue 32) */
        {"depth=50", F_DEPTH_CUT, 0},
        {"depth=200/40", F_DEPTH, 200},
        {"depth=200/40", F_DEPTH_CUT, 40},
        {"depth=50/50", F_DEPTH_CUT, 50},
        {"depth=50/1", F_DEPTH_CUT, 1},
        {"loop=0", F_LOOP, 0},
        {"loop=0s", F_LOOP, 0},
        {"loop=1s", F_LOOP, NS_S},
        {"loop=1000ms", F_LOOP, NS_S},
        {"loop=2m", F_LOOP, 120 * NS_S},
        {"loop=1h", F_LOOP, 3600 * NS_S},
        {"memory=1m", F_MEMORY, MIB},
        {"memory=1048576", F_MEMORY, MIB},
        {"memory=1024k", F_MEMORY, MIB},
        {"memory=64G", F_MEMORY, 64 * GIB},
        {"memory=64g", F_MEMORY, 64 * GIB},
        {"memory=2M", F_MEMORY, 2 * MIB},
        {"ring=16k", F_RING, 16 * KIB},
        {"ring=16384", F_RING, 16 * KIB},
        {"ring=256K", F_RING, 256 * KIB},
        {"ring=64m", F_RING, 64 * MIB},
        {"quiet", F_QUIET, 1},
        {"validate", F_VALIDATE, 1},
        {"validate=r.json", F_VALIDATE, 1},
        {"dump,reset", F_RESET, 1},
        {"reset,dump", F_ACTION, FX_ACTION_DUMP},
        {"dump,reply=/tmp/r", F_ACTION, FX_ACTION_DUMP},
        {"markers=on", F_MARKERS, FX_MARKERS_ON},
        {"markers=off", F_MARKERS, FX_MARKERS_OFF},
        {"interval=1ms,markers=off", F_INTERVAL, NS_MS},
        {"cstack=fp", F_CSTACK, FX_CSTACK_FP},
        {"cstack=no", F_CSTACK, FX_CSTACK_NO},
        {"cstack=dwarf", F_CSTACK, FX_CSTACK_DWARF},
        {"mode=cpu,cstack=no", F_MODE, FX_MODE_CPU},
        {"lock=0", F_LOCK, 0},
        {"lock=10ms", F_LOCK, 10 * NS_MS},
        {"lock=1ns", F_LOCK, 1},
        {"lock=1h", F_LOCK, 3600 * NS_S},
        {"kstack=yes", F_KSTACK, FX_KSTACK_YES},
        {"kstack=no", F_KSTACK, FX_KSTACK_NO},
        {"lock=10ms,lockowner=off", F_LOCKOWNER, FX_LOCKOWNER_OFF},
        {"lockowner=on", F_LOCKOWNER, FX_LOCKOWNER_ON},
        {"vtracks=0", F_VTRACKS, 0},
        {"vtracks=5", F_VTRACKS, 5},
        {"vtracks=1024", F_VTRACKS, 1024},
        /* issue 30 item 5: waits of virtual threads shown by default in wall mode only */
        {"mode=wall", F_VTWAIT, FX_VTWAIT_WALL_DEFAULT_NS},
        {"vtwait=0,mode=wall", F_VTWAIT, 0},
        {"mode=wall,vtwait=20ms", F_VTWAIT, 20 * NS_MS},
        {"mode=cpu", F_VTWAIT, 0},
        {"mode=itimer", F_VTWAIT, 0},
        {"vtwait=5ms", F_VTWAIT, 5 * NS_MS},
};

struct bad_case {
    const char *in;
    int rc;
    const char *key;    /* must appear in the message; NULL: none */
    const char *sub;    /* must appear in the message */
    const char *absent; /* must not appear; NULL: no check */
};

static const struct bad_case bad[] = {
        {"mode=gpu", FX_EINVAL, "mode", "'gpu' is unknown; accepted: cpu, itimer or wall", NULL},
        {"mode=", FX_EINVAL, "mode", "'' is empty", NULL},
        {"mode=CPU", FX_EINVAL, "mode", "'CPU'", NULL},
        {"engine=fast", FX_EINVAL, "engine", "auto, perf or timer", NULL},
        {"interval=10", FX_EINVAL, "interval", "'10' needs a unit (ns, us, ms, s", NULL},
        {"interval=", FX_EINVAL, "interval", "'' is empty", NULL},
        {"interval=abc", FX_EINVAL, "interval", "is not a duration", NULL},
        {"interval=10xs", FX_EINVAL, "interval", "unknown unit", NULL},
        {"interval=10MS", FX_EINVAL, "interval", "unknown unit", NULL},
        {"interval=-10ms", FX_EINVAL, "interval", "'-10ms' is not a duration", NULL},
        {"interval=+10ms", FX_EINVAL, "interval", "is not a duration", NULL},
        {"interval= 10ms", FX_EINVAL, "interval", "is not a duration", NULL},
        {"interval=0x10ms", FX_EINVAL, "interval", "unknown unit", NULL},
        {"interval=1.5ms", FX_EINVAL, "interval", "not a whole number", NULL},
        {"interval=99us", FX_ERANGE, "interval",
         "out of range; accepted: a whole duration from 100us to 10s", NULL},
        {"interval=99999ns", FX_ERANGE, "interval", "out of range", NULL},
        {"interval=10001ms", FX_ERANGE, "interval", "out of range", NULL},
        {"interval=10000000001ns", FX_ERANGE, "interval", "out of range", NULL},
        {"interval=0ms", FX_ERANGE, "interval", "out of range", NULL},
        {"interval=99999999999999999999ms", FX_ERANGE, "interval", "is too large", NULL},
        {"interval=18446744073709551615s", FX_ERANGE, "interval", "is too large", NULL},
        {"depth=0", FX_ERANGE, "depth",
         "'0' is out of range; accepted: a whole number from 1 to 65535", NULL},
        {"depth=65536", FX_ERANGE, "depth", "out of range", NULL},
        {"depth=4294967297", FX_ERANGE, "depth", "out of range", NULL},
        {"depth=10k", FX_EINVAL, "depth", "is not a whole number", NULL},
        {"depth=1.5", FX_EINVAL, "depth", "is not a whole number", NULL},
        {"depth=-1", FX_EINVAL, "depth", "is not a whole number", NULL},
        {"depth=", FX_EINVAL, "depth", "is empty", NULL},
        {"depth=50/", FX_EINVAL, "depth", "'50/' is not a whole number", NULL},
        {"depth=50/x", FX_EINVAL, "depth", "is not a whole number", NULL},
        {"depth=50/20/10", FX_EINVAL, "depth", "is not a whole number", NULL},
        {"depth=/20", FX_EINVAL, "depth", "is not a whole number", NULL},
        {"depth=50/2.5", FX_EINVAL, "depth", "is not a whole number", NULL},
        {"depth=50/0", FX_ERANGE, "depth", "'50/0' cuts to no frame or to more than it cuts at",
         NULL},
        {"depth=50/51", FX_ERANGE, "depth", "accepted: a whole number from 1 to 65535", NULL},
        {"depth=65536/20", FX_ERANGE, "depth", "is out of range", NULL},
        {"depth=0/0", FX_ERANGE, "depth", "cuts to no frame", NULL},
        {"depth=99999999999999999999", FX_ERANGE, "depth", "is too large", NULL},
        {"loop=500ms", FX_ERANGE, "loop",
         "out of range; accepted: 0 (off) or a whole duration of at least 1s", NULL},
        {"loop=999999999ns", FX_ERANGE, "loop", "out of range", NULL},
        {"loop=5", FX_EINVAL, "loop", "needs a unit", NULL},
        {"loop=1d", FX_EINVAL, "loop", "unknown unit", NULL},
        {"memory=1048575", FX_ERANGE, "memory", "out of range; accepted: a size from 1m to 64g",
         NULL},
        {"memory=1023k", FX_ERANGE, "memory", "out of range", NULL},
        {"memory=65g", FX_ERANGE, "memory", "out of range", NULL},
        {"memory=68719476737", FX_ERANGE, "memory", "out of range", NULL},
        {"memory=64x", FX_EINVAL, "memory", "unknown unit (k, m, g", NULL},
        {"memory=64mb", FX_EINVAL, "memory", "unknown unit", NULL},
        {"memory=1.5m", FX_EINVAL, "memory", "not a whole number", NULL},
        {"memory=-1m", FX_EINVAL, "memory", "is not a size", NULL},
        {"memory=", FX_EINVAL, "memory", "is empty", NULL},
        {"memory=99999999999999999999g", FX_ERANGE, "memory", "is too large", NULL},
        {"memory=18014398509481984k", FX_ERANGE, "memory", "is too large", NULL},
        {"ring=16383", FX_ERANGE, "ring", "out of range; accepted: a size from 16k to 64m", NULL},
        {"ring=15k", FX_ERANGE, "ring", "out of range", NULL},
        {"ring=65m", FX_ERANGE, "ring", "out of range", NULL},
        {"ring=67108865", FX_ERANGE, "ring", "out of range", NULL},
        {"file=", FX_EINVAL, "file", "'' is empty", NULL},
        {"file=out-%x.json", FX_EINVAL, "file", "unknown escape '%x'; accepted: a path with %p",
         NULL},
        {"file=out-%P.json", FX_EINVAL, "file", "unknown escape '%P'", NULL},
        {"file=out-%", FX_EINVAL, "file", "'out-%' has an unknown escape '%'", NULL},
        {"validate=", FX_EINVAL, "validate", "'' is empty", NULL},
        {"quiet=1", FX_EINVAL, "quiet", "takes no value, got '1'; accepted: just 'quiet'", NULL},
        {"quiet=", FX_EINVAL, "quiet", "takes no value, got ''", NULL},
        {"start=now", FX_EINVAL, "start", "takes no value", NULL},
        {"interval", FX_EINVAL, "interval", "needs a value (interval=...)", NULL},
        {"start,file", FX_EINVAL, "file", "needs a value", NULL},
        {"start,,quiet", FX_EINVAL, NULL, "item 2 is empty", NULL},
        {"start,", FX_EINVAL, NULL, "item 2 is empty", NULL},
        {",start", FX_EINVAL, NULL, "item 1 is empty", NULL},
        {",", FX_EINVAL, NULL, "item 1 is empty", NULL},
        {"interval=10ms,interval=20ms", FX_EINVAL, "interval", "option 'interval' given twice",
         NULL},
        {"quiet,quiet", FX_EINVAL, "quiet", "given twice", NULL},
        {"validate,validate=r.json", FX_EINVAL, "validate", "given twice", NULL},
        {"file=a,file=b", FX_EINVAL, "file", "given twice", NULL},
        {"intervall=10ms", FX_EINVAL, "intervall",
         "unknown option 'intervall' (did you mean 'interval'?); try 'help'", NULL},
        {"deph=5", FX_EINVAL, "deph", "(did you mean 'depth'?)", NULL},
        {"fiel=x", FX_EINVAL, "fiel", "(did you mean 'file'?)", NULL},
        {"Start", FX_EINVAL, "Start", "(did you mean 'start'?)", NULL},
        {"memroy=1g", FX_EINVAL, "memroy", "(did you mean 'memory'?)", NULL},
        {"xyzzy", FX_EINVAL, "xyzzy", "unknown option 'xyzzy'; try 'help'", "did you mean"},
        {"event=cpu", FX_EINVAL, "event", "unknown option 'event'; try 'help'", "did you mean"},
        {"=10ms", FX_EINVAL, NULL, "unknown option ''; try 'help'", "did you mean"},
        {"start,stop", FX_EINVAL, "stop", "second action after 'start'", NULL},
        {"start,start", FX_EINVAL, "start", "second action", NULL},
        {"dump,interval=1ms,status", FX_EINVAL, "status", "after 'dump'", NULL},
        {"dump,reply=", FX_EINVAL, "reply", "'' is empty", NULL},
        {"dump,reply", FX_EINVAL, "reply", "needs a value", NULL},
        {"dump,reset=1", FX_EINVAL, "reset", "takes no value", NULL},
        {"dump,reply=/a,reply=/b", FX_EINVAL, "reply", "given twice", NULL},
        {"markers=no", FX_EINVAL, "markers", "'no' is unknown; accepted: on or off", NULL},
        {"markers=", FX_EINVAL, "markers", "'' is empty", NULL},
        {"markers", FX_EINVAL, "markers", "needs a value (markers=...)", NULL},
        {"markers=on,markers=off", FX_EINVAL, "markers", "given twice", NULL},
        {"cstack=lbr", FX_EINVAL, "cstack", "'lbr' is unknown; accepted: fp, no or dwarf", NULL},
        {"cstack=", FX_EINVAL, "cstack", "'' is empty", NULL},
        {"cstack", FX_EINVAL, "cstack", "needs a value (cstack=...)", NULL},
        {"cstack=fp,cstack=no", FX_EINVAL, "cstack", "given twice", NULL},
        {"cstak=fp", FX_EINVAL, "cstak", "(did you mean 'cstack'?)", NULL},
        {"lock=10", FX_EINVAL, "lock", "needs a unit", NULL},
        {"lockowner=no", FX_EINVAL, "lockowner", "'no' is unknown; accepted: on or off", NULL},
        {"lock=2h", FX_ERANGE, "lock", "out of range", NULL},
        {"lock", FX_EINVAL, "lock", "needs a value (lock=...)", NULL},
        {"kstack=on", FX_EINVAL, "kstack", "'on' is unknown; accepted: yes or no", NULL},
        {"kstack=no,kstack=yes", FX_EINVAL, "kstack", "given twice", NULL},
        {"marker=off", FX_EINVAL, "marker", "(did you mean 'markers'?)", NULL},
        {"vtracks=1025", FX_ERANGE, "vtracks", "out of range", NULL},
        {"vtracks=-1", FX_EINVAL, "vtracks", "'-1'", NULL},
        {"vtracks=8k", FX_EINVAL, "vtracks", "'8k'", NULL},
        {"vtracks", FX_EINVAL, "vtracks", "needs a value (vtracks=...)", NULL},
        /* sources= (issue 34): every refusal names what is accepted */
        {"sources=", FX_EINVAL, "sources", "'' is empty; accepted: folders, jars or zips", NULL},
        {"sources", FX_EINVAL, "sources", "needs a value (sources=...)", NULL},
        {"sources=a::b", FX_EINVAL, "sources", "'a::b' has an empty path; accepted: folders", NULL},
        {"sources=:src", FX_EINVAL, "sources", "has an empty path; accepted:", NULL},
        {"sources=src:", FX_EINVAL, "sources", "has an empty path; accepted:", NULL},
        {"sources=a:b:c:d:e:f:g:h:i:j:k:l:m:n:o:p:q:r:s:t:u:v:w:x:y:z:A:B:C:D:E:F:G", FX_EINVAL,
         "sources", "has more than 32 paths; accepted: folders", NULL},
        {"sources=a,sources=b", FX_EINVAL, "sources", "given twice", NULL},
};

/* The contract every error message keeps. */
static void check_message(const char *msg, const char *key)
{
    size_t len = strlen(msg);
    ck_assert_msg(len > 0, "empty message");
    ck_assert_msg(strchr(msg, '\n') == NULL && strchr(msg, '\r') == NULL, "not one line: %s", msg);
    ck_assert_msg(strncmp(msg, "option '", 8) == 0 || strncmp(msg, "unknown option '", 16) == 0,
                  "bad start: %s", msg);
    ck_assert_msg(msg[len - 1] != '.' && msg[len - 1] != ' ', "bad end: %s", msg);
    ck_assert_msg(len < sizeof(((struct fx_errbuf *)0)->msg) - 1, "maybe truncated: %s", msg);
    if (key) {
        char quoted[128];
        snprintf(quoted, sizeof(quoted), "'%s", key);
        ck_assert_msg(strstr(msg, quoted) != NULL, "key %s not named: %s", key, msg);
    }
}

static void check_defaults(const struct fx_options *o)
{
    ck_assert_int_eq(o->action, FX_ACTION_NONE);
    ck_assert_int_eq(o->mode, FX_MODE_CPU);
    ck_assert_int_eq(o->engine, FX_ENGINE_AUTO);
    ck_assert_uint_eq(o->interval_ns, 10 * NS_MS);
    ck_assert_uint_eq(o->depth, 2048);
    ck_assert_uint_eq(o->depth_cut, 0);
    ck_assert_str_eq(o->file, default_file);
    ck_assert_uint_eq(o->loop_ns, 0);
    ck_assert_uint_eq(o->memory_bytes, 64 * MIB);
    ck_assert_uint_eq(o->ring_bytes, 256 * KIB);
    ck_assert(!o->quiet);
    ck_assert(!o->validate);
    ck_assert_ptr_null(o->validate_report);
    ck_assert(!o->file_set);
    ck_assert_ptr_null(o->reply);
    ck_assert(!o->reset);
    ck_assert_int_eq(o->markers, FX_MARKERS_ON);
    ck_assert_int_eq(o->cstack, FX_CSTACK_DWARF);
    ck_assert_uint_eq(o->lock_ns, 0);
    ck_assert_int_eq(o->kstack, FX_KSTACK_YES);
    ck_assert_int_eq(o->lockowner, FX_LOCKOWNER_ON);
    ck_assert_uint_eq(o->vtracks, 32);
    ck_assert_uint_eq(o->vtwait_ns, 0);
    ck_assert_ptr_null(o->sources);
}

START_TEST(test_options_good_value_sets_its_field)
{
    const struct good_case *c = &good[_i];
    struct fx_options o;
    struct fx_errbuf eb = {{0}};
    int rc = fx_options_parse(c->in, &o, &eb);
    ck_assert_msg(rc == FX_OK, "%s: rc %d: %s", c->in, rc, eb.msg);
    ck_assert_msg(get(&o, c->f) == c->want, "%s: got %llu, want %llu", c->in,
                  (unsigned long long)get(&o, c->f), (unsigned long long)c->want);
    fx_options_destroy(&o);
}
END_TEST

START_TEST(test_options_bad_value_fails_with_one_line_naming_it)
{
    const struct bad_case *c = &bad[_i];
    struct fx_options o;
    struct fx_errbuf eb = {{0}};
    int rc = fx_options_parse(c->in, &o, &eb);
    ck_assert_msg(rc == c->rc, "%s: rc %d, want %d (%s)", c->in, rc, c->rc, eb.msg);
    check_message(eb.msg, c->key);
    ck_assert_msg(strstr(eb.msg, c->sub) != NULL, "%s: '%s' lacks '%s'", c->in, eb.msg, c->sub);
    if (c->absent)
        ck_assert_msg(strstr(eb.msg, c->absent) == NULL, "%s: '%s' has '%s'", c->in, eb.msg,
                      c->absent);
    check_defaults(&o);
}
END_TEST

START_TEST(test_options_empty_and_null_give_defaults)
{
    struct fx_options o;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_options_parse(NULL, &o, &eb), FX_OK);
    check_defaults(&o);
    fx_options_destroy(&o);
    ck_assert_int_eq(fx_options_parse("", &o, &eb), FX_OK);
    check_defaults(&o);
    fx_options_destroy(&o);
    memset(&o, 0xa5, sizeof(o));
    fx_options_defaults(&o);
    check_defaults(&o);
}
END_TEST

START_TEST(test_options_destroy_twice_and_zeroed_is_safe)
{
    struct fx_options o;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_options_parse("file=x.json,validate=r.json", &o, &eb), FX_OK);
    fx_options_destroy(&o);
    check_defaults(&o);
    fx_options_destroy(&o);
    struct fx_options zero = {0};
    fx_options_destroy(&zero);
    fx_options_destroy(NULL);
}
END_TEST

START_TEST(test_options_all_options_together)
{
    char in[] = "mode=wall,engine=timer,interval=1ms,depth=64,file=out-%p-%n.json.gz,loop=60s,"
                "memory=1g,ring=1m,quiet,validate=rep.json,stop";
    struct fx_options o;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_options_parse(in, &o, &eb), FX_OK);
    memset(in, 'X', sizeof(in) - 1); /* the parsed strings are copies, not views */
    ck_assert_int_eq(o.action, FX_ACTION_STOP);
    ck_assert_int_eq(o.mode, FX_MODE_WALL);
    ck_assert_int_eq(o.engine, FX_ENGINE_TIMER);
    ck_assert_uint_eq(o.interval_ns, NS_MS);
    ck_assert_uint_eq(o.depth, 64);
    ck_assert_str_eq(o.file, "out-%p-%n.json.gz");
    ck_assert(o.file_set);
    ck_assert_uint_eq(o.loop_ns, 60 * NS_S);
    ck_assert_uint_eq(o.memory_bytes, GIB);
    ck_assert_uint_eq(o.ring_bytes, MIB);
    ck_assert(o.quiet);
    ck_assert(o.validate);
    ck_assert_str_eq(o.validate_report, "rep.json");
    fx_options_destroy(&o);
}
END_TEST

START_TEST(test_options_value_may_contain_equals)
{
    struct fx_options o;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_options_parse("file=a=b%%.json", &o, &eb), FX_OK);
    ck_assert_str_eq(o.file, "a=b%%.json");
    fx_options_destroy(&o);
}
END_TEST

START_TEST(test_options_validate_alone_has_no_report)
{
    struct fx_options o;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_options_parse("validate", &o, &eb), FX_OK);
    ck_assert(o.validate);
    ck_assert_ptr_null(o.validate_report);
    ck_assert(!o.file_set);
    fx_options_destroy(&o);
}
END_TEST

START_TEST(test_options_reply_is_a_copied_path_without_escapes)
{
    char in[] = "status,reply=/tmp/fxprof-1-%p,reset";
    struct fx_options o;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_options_parse(in, &o, &eb), FX_OK);
    memset(in, 'X', sizeof(in) - 1);
    ck_assert_str_eq(o.reply, "/tmp/fxprof-1-%p"); /* a path as given: not a file pattern */
    ck_assert(o.reset);
    ck_assert(!o.file_set);
    fx_options_destroy(&o);
    ck_assert_ptr_null(o.reply);
}
END_TEST

/* Fails after good options that allocated, so the cleanup of a half-parsed list runs. */
START_TEST(test_options_error_after_allocations_leaves_defaults)
{
    struct fx_options o;
    struct fx_errbuf eb = {{0}};
    int rc = fx_options_parse("start,file=x.json,validate=r.json,quiet,interval=1", &o, &eb);
    ck_assert_int_eq(rc, FX_EINVAL);
    check_message(eb.msg, "interval");
    check_defaults(&o);
}
END_TEST

static char *repeat(const char *prefix, char c, size_t n)
{
    size_t p = strlen(prefix);
    char *s = malloc(p + n + 1);
    ck_assert_ptr_nonnull(s);
    memcpy(s, prefix, p);
    memset(s + p, c, n);
    s[p + n] = '\0';
    return s;
}

struct huge_case {
    const char *prefix;
    char fill;
    int rc;
    const char *key;
    const char *sub;
};

static const struct huge_case huge[] = {
        {"", 'a', FX_EINVAL, "aaaa", "...'; try 'help'"},
        {"file=", 'f', FX_ERANGE, "file", "is too long (at most 4095 bytes)"},
        {"validate=", 'v', FX_ERANGE, "validate", "is too long"},
        {"interval=", '9', FX_ERANGE, "interval", "is too large"},
        {"mode=", 'w', FX_EINVAL, "mode", "...' is unknown"},
        {"depth=", '\n', FX_EINVAL, "depth", "'?????"},
};

START_TEST(test_options_huge_value_gives_short_single_line)
{
    const struct huge_case *c = &huge[_i];
    char *in = repeat(c->prefix, c->fill, 10000);
    struct fx_options o;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_options_parse(in, &o, &eb), c->rc);
    check_message(eb.msg, c->key);
    ck_assert_msg(strstr(eb.msg, c->sub) != NULL, "'%s' lacks '%s'", eb.msg, c->sub);
    check_defaults(&o);
    free(in);
}
END_TEST

START_TEST(test_options_file_of_4095_bytes_is_accepted)
{
    char *in = repeat("file=", 'f', 4095);
    struct fx_options o;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_options_parse(in, &o, &eb), FX_OK);
    ck_assert_uint_eq(strlen(o.file), 4095);
    fx_options_destroy(&o);
    free(in);
}
END_TEST

struct value_case {
    const char *in;
    int rc;
    uint64_t want;
};

static const struct value_case durations[] = {
        {"0", FX_OK, 0},
        {"7ns", FX_OK, 7},
        {"3us", FX_OK, 3000},
        {"10ms", FX_OK, 10 * NS_MS},
        {"2s", FX_OK, 2 * NS_S},
        {"5m", FX_OK, 300 * NS_S},
        {"2h", FX_OK, 7200 * NS_S},
        {"18446744073709551615ns", FX_OK, UINT64_MAX},
        {"18446744073709551616ns", FX_ERANGE, 0},
        {"18446744073709551615us", FX_ERANGE, 0},
        {"10", FX_EINVAL, 0},
        {"", FX_EINVAL, 0},
        {"ms", FX_EINVAL, 0},
        {"-1s", FX_EINVAL, 0},
        {"1.5s", FX_EINVAL, 0},
        {"10 ms", FX_EINVAL, 0},
        {"10sec", FX_EINVAL, 0},
};

static const struct value_case sizes[] = {
        {"0", FX_OK, 0},
        {"4096", FX_OK, 4096},
        {"512k", FX_OK, 512 * KIB},
        {"512K", FX_OK, 512 * KIB},
        {"64m", FX_OK, 64 * MIB},
        {"1g", FX_OK, GIB},
        {"17179869183g", FX_OK, 17179869183ull * GIB},
        {"17179869184g", FX_ERANGE, 0},
        {"99999999999999999999", FX_ERANGE, 0},
        {"", FX_EINVAL, 0},
        {"k", FX_EINVAL, 0},
        {"1t", FX_EINVAL, 0},
        {"1kb", FX_EINVAL, 0},
        {"-1", FX_EINVAL, 0},
        {"0x10", FX_EINVAL, 0},
        {" 1", FX_EINVAL, 0},
};

START_TEST(test_options_parse_duration_value)
{
    const struct value_case *c = &durations[_i];
    uint64_t v = 12345;
    int rc = fx_options_parse_duration(c->in, &v);
    ck_assert_msg(rc == c->rc, "'%s': rc %d want %d", c->in, rc, c->rc);
    ck_assert_uint_eq(v, rc == FX_OK ? c->want : 12345); /* untouched on failure */
}
END_TEST

START_TEST(test_options_parse_size_value)
{
    const struct value_case *c = &sizes[_i];
    uint64_t v = 12345;
    int rc = fx_options_parse_size(c->in, &v);
    ck_assert_msg(rc == c->rc, "'%s': rc %d want %d", c->in, rc, c->rc);
    ck_assert_uint_eq(v, rc == FX_OK ? c->want : 12345);
}
END_TEST

static void use_utc(void)
{
    setenv("TZ", "UTC", 1);
    tzset();
}

struct expand_case {
    const char *pattern;
    pid_t pid;
    time_t when;
    unsigned seq;
    const char *want;
};

static const struct expand_case expansions[] = {
        {"plain.json", 1, 0, 0, "plain.json"},
        {"p%p.json", 4242, 0, 0, "p4242.json"},
        {"t%t.json", 1, 0, 0, "t19700101-000000.json"},
        {"%t", 1, 1700000000, 0, "20231114-221320"},
        {"n%n", 1, 0, 4294967295u, "n4294967295"},
        {"%%p%%", 1, 0, 0, "%p%"},
        {"fxagent-%p-%t-%n.json.gz", 77, 86399, 3, "fxagent-77-19700101-235959-3.json.gz"},
        {"", 1, 0, 0, ""},
};

START_TEST(test_options_expand_path_replaces_each_escape)
{
    const struct expand_case *c = &expansions[_i];
    use_utc();
    char out[128];
    ck_assert_int_eq(fx_options_expand_path(c->pattern, c->pid, c->when, c->seq, out, sizeof(out)),
                     FX_OK);
    ck_assert_str_eq(out, c->want);
}
END_TEST

START_TEST(test_options_expand_path_needs_room_for_nul)
{
    use_utc();
    const char *want = "a-12-19700101-000000-5";
    size_t len = strlen(want);
    char out[64];
    for (size_t cap = 0; cap <= len; cap++) {
        memset(out, 'Z', sizeof(out));
        ck_assert_int_eq(fx_options_expand_path("a-%p-%t-%n", 12, 0, 5, out, cap), FX_ERANGE);
        if (cap > 0)
            ck_assert_str_eq(out, "");
        ck_assert_int_eq(out[cap], 'Z'); /* nothing written past cap */
    }
    ck_assert_int_eq(fx_options_expand_path("a-%p-%t-%n", 12, 0, 5, out, len + 1), FX_OK);
    ck_assert_str_eq(out, want);
}
END_TEST

/* fx_options_parse refuses these patterns; expand must still not misread them. */
START_TEST(test_options_expand_path_rejects_unknown_escape)
{
    char out[64];
    ck_assert_int_eq(fx_options_expand_path("a%x", 1, 0, 0, out, sizeof(out)), FX_EINVAL);
    ck_assert_str_eq(out, "");
    ck_assert_int_eq(fx_options_expand_path("a%", 1, 0, 0, out, sizeof(out)), FX_EINVAL);
    ck_assert_str_eq(out, "");
}
END_TEST

static const char *const sequenced[][2] = {
        {"out.json.gz", "out-%n.json.gz"},
        {"/d/p-%p.json", "/d/p-%p-%n.json"},
        {"x.gz", "x-%n.gz"},
        {"profile", "profile-%n"},
        {".json", ".json-%n"},
        {"a-%n.json.gz", "a-%n.json.gz"},
        {"%n", "%n"},
        {"a-%%n.json", "a-%%n-%n.json"},
        {"a-%t.json.gz", "a-%t-%n.json.gz"},
};

START_TEST(test_options_sequenced_pattern_gets_n_before_the_extension)
{
    char out[64];
    ck_assert_int_eq(fx_options_sequenced_pattern(sequenced[_i][0], out, sizeof(out)), FX_OK);
    ck_assert_str_eq(out, sequenced[_i][1]);
    ck_assert_int_eq(fx_options_sequenced_pattern("abc.json", out, 8), FX_ERANGE);
    ck_assert_str_eq(out, "");
    ck_assert_int_eq(fx_options_sequenced_pattern("abc.json", out, 11), FX_ERANGE);
    ck_assert_int_eq(fx_options_sequenced_pattern("abc.json", out, 12), FX_OK);
}
END_TEST

/* {file, cwd, home, result} */
static const char *const absolutes[][4] = {
        {"/abs/p.json.gz", "/cwd", "/home/u", "/abs/p.json.gz"},
        {"p-%p.json.gz", "/srv/app", "/home/u", "/srv/app/p-%p.json.gz"},
        {"out/p.json.gz", "/", NULL, "/out/p.json.gz"},
        {"~/p.json.gz", "/cwd", "/home/u", "/home/u/p.json.gz"},
        {"~/p.json.gz", "/cwd", NULL, "/cwd/~/p.json.gz"},
        {"~x/p.json.gz", "/cwd", "/home/u", "/cwd/~x/p.json.gz"},
        {"p.json.gz", "/data/100%", "/home/u", "/data/100%%/p.json.gz"},
};

START_TEST(test_options_absolute_file_prefixes_cwd_or_home)
{
    struct fx_options o;
    struct fx_errbuf eb;
    char opts[128];
    snprintf(opts, sizeof(opts), "file=%s", absolutes[_i][0]);
    ck_assert_int_eq(fx_options_parse(opts, &o, &eb), FX_OK);
    ck_assert_int_eq(fx_options_absolute_file(&o, absolutes[_i][1], absolutes[_i][2]), FX_OK);
    ck_assert_str_eq(o.file, absolutes[_i][3]);
    char out[256];
    ck_assert_int_eq(fx_options_expand_path(o.file, 1, 0, 1, out, sizeof(out)), FX_OK);
    fx_options_destroy(&o);
}
END_TEST

START_TEST(test_options_comma_in_a_file_name_is_explained)
{
    struct fx_options o;
    struct fx_errbuf eb;
    ck_assert_int_eq(fx_options_parse("file=/data/a,b.json", &o, &eb), FX_EINVAL);
    ck_assert_str_eq(
            eb.msg,
            "unknown option 'b.json' (a ',' ends each option, so a file name cannot contain one); try 'help'");
}
END_TEST

START_TEST(test_options_absolute_file_default_and_failures)
{
    struct fx_options o;
    struct fx_errbuf eb;
    ck_assert_int_eq(fx_options_parse("", &o, &eb), FX_OK);
    ck_assert_int_eq(fx_options_absolute_file(&o, "relative", NULL), FX_EINVAL);
    ck_assert_str_eq(o.file, FX_OPTIONS_DEFAULT_FILE);
    static char longdir[5000];
    memset(longdir, 'd', sizeof(longdir) - 1);
    longdir[0] = '/';
    ck_assert_int_eq(fx_options_absolute_file(&o, longdir, NULL), FX_ERANGE);
    ck_assert_str_eq(o.file, FX_OPTIONS_DEFAULT_FILE);
    ck_assert_int_eq(fx_options_absolute_file(&o, "/w", NULL), FX_OK);
    ck_assert_str_eq(o.file, "/w/" FX_OPTIONS_DEFAULT_FILE);
    fx_options_destroy(&o); /* frees the new pattern, not the static default */
}
END_TEST

/* sources= keeps its paths as given, 32 at most, ':' between them */
START_TEST(test_options_sources_keeps_the_list)
{
    struct fx_options o;
    struct fx_errbuf eb = {{0}};
    const char *list = "src/main/java:/opt/lib-sources.jar:a:b:c:d:e:f:g:h:i:j:k:l:m:n:o:p:q:r:s:"
                       "t:u:v:w:x:y:z:A:B:C:D";
    char in[256];
    snprintf(in, sizeof(in), "start,sources=%s", list);
    ck_assert_int_eq(fx_options_parse(in, &o, &eb), FX_OK);
    ck_assert_str_eq(o.sources, list);
    fx_options_destroy(&o);
    ck_assert_ptr_null(o.sources);
}
END_TEST

START_TEST(test_options_help_lists_every_option_with_default)
{
    static const char *const keys[] = {
            "\n  mode=",  "\n  engine=", "\n  interval=", "\n  depth=",  "\n  file=",
            "\n  loop=",  "\n  memory=", "\n  ring=",     "\n  quiet ",  "\n  validate",
            "\n  reset ", "\n  reply=",  "\n  markers=",  "\n  cstack=", "\n  sources="};
    static const char *const actions[] = {"start", "stop", "dump", "status", "help"};
    const char *help = fx_options_help();
    ck_assert_ptr_nonnull(help);
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        const char *line = strstr(help, keys[i]);
        ck_assert_msg(line != NULL, "help lacks %s", keys[i]);
        const char *eol = strchr(line + 1, '\n');
        const char *dflt = strstr(line, "(default ");
        ck_assert_msg(eol && dflt && dflt < eol, "no default on the line of %s", keys[i]);
    }
    for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
        char word[16];
        snprintf(word, sizeof(word), "  %s ", actions[i]);
        ck_assert_msg(strstr(help, word) != NULL, "help lacks action %s", actions[i]);
    }
    ck_assert(strstr(help, "fxagent-%p-%t.json.gz") != NULL);
}
END_TEST

/* Three allocations: the scratch copy of the list, file and the report path. */
START_TEST(test_options_out_of_memory_fails_cleanly)
{
    const char *in = "start,file=a-%p.json,validate=r.json,interval=1ms";
    struct fx_options o;
    struct fx_errbuf eb = {{0}};
    for (long n = 1; n <= 3; n++) {
        fx_alloc_fail_after(n);
        int rc = fx_options_parse(in, &o, &eb);
        fx_alloc_fail_after(0);
        ck_assert_msg(rc == FX_ENOMEM, "allocation %ld: rc %d", n, rc);
        ck_assert(strchr(eb.msg, '\n') == NULL);
        ck_assert(strstr(eb.msg, "out of memory") != NULL);
        check_defaults(&o);
    }
    fx_alloc_fail_after(4);
    int rc = fx_options_parse(in, &o, &eb);
    fx_alloc_fail_after(0);
    ck_assert_int_eq(rc, FX_OK);
    ck_assert_str_eq(o.validate_report, "r.json");
    fx_options_destroy(&o);
}
END_TEST

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static Suite *options_suite(void)
{
    Suite *s = suite_create("options");
    TCase *grammar = tcase_create("grammar");
    tcase_add_loop_test(grammar, test_options_good_value_sets_its_field, 0, N(good));
    tcase_add_loop_test(grammar, test_options_bad_value_fails_with_one_line_naming_it, 0, N(bad));
    tcase_add_loop_test(grammar, test_options_huge_value_gives_short_single_line, 0, N(huge));
    tcase_add_test(grammar, test_options_empty_and_null_give_defaults);
    tcase_add_test(grammar, test_options_destroy_twice_and_zeroed_is_safe);
    tcase_add_test(grammar, test_options_all_options_together);
    tcase_add_test(grammar, test_options_value_may_contain_equals);
    tcase_add_test(grammar, test_options_validate_alone_has_no_report);
    tcase_add_test(grammar, test_options_reply_is_a_copied_path_without_escapes);
    tcase_add_test(grammar, test_options_error_after_allocations_leaves_defaults);
    tcase_add_test(grammar, test_options_file_of_4095_bytes_is_accepted);
    tcase_add_test(grammar, test_options_help_lists_every_option_with_default);
    tcase_add_test(grammar, test_options_out_of_memory_fails_cleanly);
    suite_add_tcase(s, grammar);

    TCase *values = tcase_create("values");
    tcase_add_loop_test(values, test_options_parse_duration_value, 0, N(durations));
    tcase_add_loop_test(values, test_options_parse_size_value, 0, N(sizes));
    suite_add_tcase(s, values);

    TCase *expand = tcase_create("expand_path");
    tcase_add_loop_test(expand, test_options_expand_path_replaces_each_escape, 0, N(expansions));
    tcase_add_test(expand, test_options_expand_path_needs_room_for_nul);
    tcase_add_test(expand, test_options_expand_path_rejects_unknown_escape);
    tcase_add_loop_test(expand, test_options_sequenced_pattern_gets_n_before_the_extension, 0,
                        N(sequenced));
    tcase_add_loop_test(expand, test_options_absolute_file_prefixes_cwd_or_home, 0, N(absolutes));
    tcase_add_test(expand, test_options_absolute_file_default_and_failures);
    tcase_add_test(expand, test_options_comma_in_a_file_name_is_explained);
    tcase_add_test(expand, test_options_sources_keeps_the_list);
    suite_add_tcase(s, expand);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(options_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
