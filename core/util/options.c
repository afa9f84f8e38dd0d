/* SPDX-License-Identifier: Apache-2.0 */
/* The option grammar, driven by one table: each entry names an option, how it is given (action,
 * flag or key=value) and the parser that writes its field. A failed parse leaves the defaults
 * and exactly one line in the errbuf: the option, the value (quoted, shortened) and what is
 * accepted. */
#include "fx_options.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "fx_alloc.h"
#include "fx_push.h"

#define NS_PER_US 1000ull
#define NS_PER_MS 1000000ull
#define NS_PER_S  1000000000ull
#define KIB       1024ull
#define MIB       (1024ull * KIB)
#define GIB       (1024ull * MIB)

/* Values are quoted in messages at most this long, so a 10k-character value still leaves room
 * in the 256-byte errbuf for what is accepted. */
#define QUOTE_MAX 40
/* A pattern longer than any path cannot be opened; refusing it here gives a clear message. */
#define PATTERN_MAX 4095
_Static_assert(PATTERN_MAX < PATH_MAX, "a pattern fits a path buffer");

/* Mutable so `file` can stay a plain `char *`; fx_options_destroy never frees it. */
static char default_file[] = FX_OPTIONS_DEFAULT_FILE;

enum opt_kind {
    OPT_ACTION,        /* bare word, at most one per list */
    OPT_FLAG,          /* bare word, sets a bool */
    OPT_VALUE,         /* key=value, the value required */
    OPT_FLAG_OR_VALUE, /* bare word or key=value */
};

struct opt_def;
typedef int (*opt_parse_fn)(const struct opt_def *d, const char *val, struct fx_options *o,
                            struct fx_errbuf *eb);

struct opt_def {
    const char *name;
    enum opt_kind kind;
    opt_parse_fn parse;
    size_t offset;              /* the field the parser writes */
    uint64_t min, max;          /* bounds of numeric values */
    bool zero_ok;               /* 0 is accepted below min (loop=0: off) */
    int action;                 /* enum fx_action of an OPT_ACTION */
    const char *const *choices; /* words of an enum option, by enum value */
    const char *accepts;        /* what the messages say is accepted */
};

/* Why a number did not parse; each has one phrase in messages. */
enum num_why {
    NUM_OK,
    NUM_EMPTY,
    NUM_NOT_NUMBER,
    NUM_FRACTION,
    NUM_NO_UNIT,
    NUM_BAD_UNIT,
    NUM_OVERFLOW,
};

struct unit {
    const char *name;
    uint64_t factor;
};

static const struct unit duration_units[] = {
        {"ns", 1},       {"us", NS_PER_US},    {"ms", NS_PER_MS},
        {"s", NS_PER_S}, {"m", 60 * NS_PER_S}, {"h", 3600 * NS_PER_S},
        {NULL, 0},
};

static const struct unit size_units[] = {
        {"", 1}, {"k", KIB}, {"m", MIB}, {"g", GIB}, {NULL, 0},
};

/* Copies s for a message: at most QUOTE_MAX bytes, control characters as '?', "..." when cut. */
static const char *shorten(const char *s, char buf[QUOTE_MAX + 4])
{
    size_t i = 0;
    for (; s[i] != '\0' && i < QUOTE_MAX; i++) {
        unsigned char c = (unsigned char)s[i];
        buf[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    strcpy(buf + i, s[i] != '\0' ? "..." : "");
    return buf;
}

/* Leading digits only: strtoull would otherwise accept spaces, a sign and wrap "-1". */
static enum num_why parse_count(const char *s, uint64_t *v, const char **rest)
{
    if (*s == '\0')
        return NUM_EMPTY;
    if (*s < '0' || *s > '9')
        return NUM_NOT_NUMBER;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno == ERANGE)
        return NUM_OVERFLOW;
    if (*end == '.')
        return NUM_FRACTION;
    *v = x;
    *rest = end;
    return NUM_OK;
}

static enum num_why scale(uint64_t count, const char *unit, const struct unit *units, bool nocase,
                          uint64_t *out)
{
    for (const struct unit *u = units; u->name; u++) {
        if ((nocase ? strcasecmp(unit, u->name) : strcmp(unit, u->name)) != 0)
            continue;
        return __builtin_mul_overflow(count, u->factor, out) ? NUM_OVERFLOW : NUM_OK;
    }
    return NUM_BAD_UNIT;
}

static enum num_why duration_why(const char *s, uint64_t *ns)
{
    uint64_t count;
    const char *unit;
    enum num_why why = parse_count(s, &count, &unit);
    if (why != NUM_OK)
        return why;
    if (*unit == '\0' && count != 0) /* "10": ms or s? refuse to guess */
        return NUM_NO_UNIT;
    if (*unit == '\0') {
        *ns = 0;
        return NUM_OK;
    }
    return scale(count, unit, duration_units, false, ns);
}

static enum num_why size_why(const char *s, uint64_t *bytes)
{
    uint64_t count;
    const char *unit;
    enum num_why why = parse_count(s, &count, &unit);
    return why != NUM_OK ? why : scale(count, unit, size_units, true, bytes);
}

static int why_rc(enum num_why why)
{
    return why == NUM_OK ? FX_OK : why == NUM_OVERFLOW ? FX_ERANGE : FX_EINVAL;
}

int fx_options_parse_duration(const char *s, uint64_t *ns)
{
    uint64_t v;
    int rc = why_rc(duration_why(s, &v));
    if (rc == FX_OK)
        *ns = v;
    return rc;
}

int fx_options_parse_size(const char *s, uint64_t *bytes)
{
    uint64_t v;
    int rc = why_rc(size_why(s, &v));
    if (rc == FX_OK)
        *bytes = v;
    return rc;
}

static void *field(struct fx_options *o, const struct opt_def *d)
{
    return (char *)o + d->offset;
}

enum noun {
    NOUN_DURATION,
    NOUN_SIZE,
    NOUN_NUMBER,
};

/* The rest of a message after "option 'key': 'value' ". */
static const char *why_text(enum num_why why, enum noun noun)
{
    static const char *const not_a[] = {"is not a duration", "is not a size",
                                        "is not a whole number"};
    static const char *const fraction[] = {
            "is not a whole number (use a smaller unit, e.g. 1500us for 1.5ms)",
            "is not a whole number (use a smaller unit, e.g. 1536k for 1.5m)",
            "is not a whole number"};
    switch (why) {
    case NUM_EMPTY:
        return "is empty";
    case NUM_FRACTION:
        return fraction[noun];
    case NUM_NO_UNIT:
        return "needs a unit (ns, us, ms, s, m, h)";
    case NUM_BAD_UNIT:
        return noun == NOUN_SIZE ? "has an unknown unit (k, m, g or none for bytes)"
                                 : "has an unknown unit (ns, us, ms, s, m, h)";
    case NUM_OVERFLOW:
        return "is too large";
    default:
        return not_a[noun];
    }
}

static int value_error(const struct opt_def *d, const char *val, const char *why, int rc,
                       struct fx_errbuf *eb)
{
    char q[QUOTE_MAX + 4];
    fx_errbuf_set(eb, "option '%s': '%s' %s; accepted: %s", d->name, shorten(val, q), why,
                  d->accepts);
    return rc;
}

/* Shared tail of the numeric parsers: the syntax verdict, then the table's bounds. */
static int check_number(const struct opt_def *d, const char *val, enum num_why why, enum noun noun,
                        uint64_t v, struct fx_errbuf *eb)
{
    if (why != NUM_OK)
        return value_error(d, val, why_text(why, noun), why_rc(why), eb);
    if ((v < d->min && !(d->zero_ok && v == 0)) || v > d->max)
        return value_error(d, val, "is out of range", FX_ERANGE, eb);
    return FX_OK;
}

static int parse_duration_opt(const struct opt_def *d, const char *val, struct fx_options *o,
                              struct fx_errbuf *eb)
{
    uint64_t v = 0;
    enum num_why why = duration_why(val, &v); /* before check_number reads v */
    int rc = check_number(d, val, why, NOUN_DURATION, v, eb);
    if (rc == FX_OK)
        *(uint64_t *)field(o, d) = v;
    return rc;
}

static int parse_size_opt(const struct opt_def *d, const char *val, struct fx_options *o,
                          struct fx_errbuf *eb)
{
    uint64_t v = 0;
    enum num_why why = size_why(val, &v); /* before check_number reads v */
    int rc = check_number(d, val, why, NOUN_SIZE, v, eb);
    if (rc == FX_OK)
        *(uint64_t *)field(o, d) = v;
    return rc;
}

static int parse_u32_opt(const struct opt_def *d, const char *val, struct fx_options *o,
                         struct fx_errbuf *eb)
{
    uint64_t v = 0;
    const char *rest = "";
    enum num_why why = parse_count(val, &v, &rest);
    if (why == NUM_OK && *rest != '\0')
        why = NUM_NOT_NUMBER;
    int rc = check_number(d, val, why, NOUN_NUMBER, v, eb);
    if (rc == FX_OK)
        *(uint32_t *)field(o, d) = (uint32_t)v; /* max <= UINT32_MAX in the table */
    return rc;
}

/* Enum fields are written as int: enum fx_mode and fx_cpu_engine have int's size (asserted). */
static int parse_choice_opt(const struct opt_def *d, const char *val, struct fx_options *o,
                            struct fx_errbuf *eb)
{
    for (int i = 0; d->choices[i]; i++) {
        if (strcmp(val, d->choices[i]) == 0) {
            memcpy(field(o, d), &i, sizeof(i));
            return FX_OK;
        }
    }
    return value_error(d, val, *val ? "is unknown" : "is empty", FX_EINVAL, eb);
}

_Static_assert(sizeof(enum fx_mode) == sizeof(int), "mode is written as int");
_Static_assert(sizeof(enum fx_cpu_engine) == sizeof(int), "engine is written as int");
_Static_assert(sizeof(enum fx_markers) == sizeof(int), "markers is written as int");
_Static_assert(sizeof(enum fx_cstack) == sizeof(int), "cstack is written as int");
_Static_assert(sizeof(enum fx_kstack) == sizeof(int), "kstack is written as int");
_Static_assert(sizeof(enum fx_lockowner) == sizeof(int), "lockowner is written as int");

/* Copies a path value; empty and over-long paths are refused. */
static int copy_path(const struct opt_def *d, const char *val, char **dst, struct fx_errbuf *eb)
{
    if (*val == '\0')
        return value_error(d, val, "is empty", FX_EINVAL, eb);
    if (strlen(val) > PATTERN_MAX)
        return value_error(d, val, "is too long (at most 4095 bytes)", FX_ERANGE, eb);
    char *copy = fx_strdup(val);
    if (!copy)
        return value_error(d, val, "could not be copied: out of memory", FX_ENOMEM, eb);
    *dst = copy;
    return FX_OK;
}

/* Index of the first '%' that is not one of %p %t %n %%, or -1. */
static long bad_escape(const char *pattern)
{
    for (const char *p = pattern; *p; p++) {
        if (*p != '%')
            continue;
        if (p[1] == '\0' || !strchr("ptn%", p[1]))
            return p - pattern;
        p++;
    }
    return -1;
}

static int parse_file_opt(const struct opt_def *d, const char *val, struct fx_options *o,
                          struct fx_errbuf *eb)
{
    long bad = bad_escape(val);
    if (bad >= 0) {
        char q[QUOTE_MAX + 4];
        char esc[3] = {'%', val[bad + 1], '\0'};
        fx_errbuf_set(eb, "option '%s': '%s' has an unknown escape '%s'; accepted: %s", d->name,
                      shorten(val, q), esc, d->accepts);
        return FX_EINVAL;
    }
    int rc = copy_path(d, val, &o->file, eb);
    o->file_set = rc == FX_OK;
    return rc;
}

static int parse_reply_opt(const struct opt_def *d, const char *val, struct fx_options *o,
                           struct fx_errbuf *eb)
{
    return copy_path(d, val, &o->reply, eb);
}

static int parse_validate_opt(const struct opt_def *d, const char *val, struct fx_options *o,
                              struct fx_errbuf *eb)
{
    o->validate = true;
    return val ? copy_path(d, val, &o->validate_report, eb) : FX_OK;
}

/* issue 33: push=, service=, labels= (docs/FLEET.md), checked by fx_push.h */
static int parse_push_string_opt(const struct opt_def *d, const char *val, struct fx_options *o,
                                 struct fx_errbuf *eb)
{
    int rc = fx_push_option_check(d->name, val, eb);
    return rc == FX_OK ? copy_path(d, val, (char **)((char *)o + d->offset), eb) : rc;
}

static const char *const push_format_names[] = {"auto", "pyroscope", "otlp", NULL};

/* issue 34: sources=PATH:PATH, the places a dump looks Java files up in (include/fx_src.h);
 * whether each exists is the agent's check at start (agent/output/embed.c). */
static int parse_sources_opt(const struct opt_def *d, const char *val, struct fx_options *o,
                             struct fx_errbuf *eb)
{
    size_t n = 1;
    for (const char *c = val; *c; c++)
        n += *c == ':';
    const char *why = !*val                                ? "is empty"
                      : val[0] == ':' || strstr(val, "::") ? "has an empty path"
                      : val[strlen(val) - 1] == ':'        ? "has an empty path"
                      : n > FX_OPTIONS_SOURCES_MAX         ? "has more than 32 paths"
                                                           : NULL;
    if (why) {
        char q[QUOTE_MAX + 4];
        fx_errbuf_set(eb, "option '%s': '%s' %s; accepted: %s", d->name, shorten(val, q), why,
                      d->accepts);
        return FX_EINVAL;
    }
    return copy_path(d, val, &o->sources, eb);
}

#define FIELD(f) offsetof(struct fx_options, f)
static const char *const mode_names[] = {"cpu", "itimer", "wall", NULL};
static const char *const engine_names[] = {"auto", "perf", "timer", NULL};
static const char *const markers_names[] = {"on", "off", NULL};
static const char *const cstack_names[] = {"fp", "no", "dwarf", NULL};
static const char *const kstack_names[] = {"yes", "no", NULL};

/* The order is also the order of "did you mean" ties and of the bits in `seen`. */
static const struct opt_def opt_table[] = {
        {.name = "start", .kind = OPT_ACTION, .action = FX_ACTION_START},
        {.name = "stop", .kind = OPT_ACTION, .action = FX_ACTION_STOP},
        {.name = "dump", .kind = OPT_ACTION, .action = FX_ACTION_DUMP},
        {.name = "status", .kind = OPT_ACTION, .action = FX_ACTION_STATUS},
        {.name = "help", .kind = OPT_ACTION, .action = FX_ACTION_HELP},
        {.name = "quiet", .kind = OPT_FLAG, .offset = FIELD(quiet)},
        {.name = "reset", .kind = OPT_FLAG, .offset = FIELD(reset)},
        {.name = "validate",
         .kind = OPT_FLAG_OR_VALUE,
         .parse = parse_validate_opt,
         .accepts = "validate alone, or validate=REPORT.json"},
        {.name = "mode",
         .kind = OPT_VALUE,
         .parse = parse_choice_opt,
         .offset = FIELD(mode),
         .choices = mode_names,
         .accepts = "cpu, itimer or wall"},
        {.name = "engine",
         .kind = OPT_VALUE,
         .parse = parse_choice_opt,
         .offset = FIELD(engine),
         .choices = engine_names,
         .accepts = "auto, perf or timer"},
        {.name = "interval",
         .kind = OPT_VALUE,
         .parse = parse_duration_opt,
         .offset = FIELD(interval_ns),
         .min = 100 * NS_PER_US,
         .max = 10 * NS_PER_S,
         .accepts = "a whole duration from 100us to 10s, e.g. 10ms"},
        {.name = "depth",
         .kind = OPT_VALUE,
         .parse = parse_u32_opt,
         .offset = FIELD(depth),
         .min = 1,
         .max = 65535,
         .accepts = "a whole number from 1 to 65535, e.g. 2048"},
        {.name = "file",
         .kind = OPT_VALUE,
         .parse = parse_file_opt,
         .accepts = "a path with %p (pid), %t (time), %n (sequence), %% (percent)"},
        {.name = "loop",
         .kind = OPT_VALUE,
         .parse = parse_duration_opt,
         .offset = FIELD(loop_ns),
         .min = NS_PER_S,
         .max = UINT64_MAX,
         .zero_ok = true,
         .accepts = "0 (off) or a whole duration of at least 1s, e.g. 60s"},
        {.name = "memory",
         .kind = OPT_VALUE,
         .parse = parse_size_opt,
         .offset = FIELD(memory_bytes),
         .min = MIB,
         .max = 64 * GIB,
         .accepts = "a size from 1m to 64g (k, m, g or bytes), e.g. 64m"},
        {.name = "ring",
         .kind = OPT_VALUE,
         .parse = parse_size_opt,
         .offset = FIELD(ring_bytes),
         .min = 16 * KIB,
         .max = 64 * MIB,
         .accepts = "a size from 16k to 64m (k, m, g or bytes), e.g. 256k"},
        {.name = "markers",
         .kind = OPT_VALUE,
         .parse = parse_choice_opt,
         .offset = FIELD(markers),
         .choices = markers_names,
         .accepts = "on or off"},
        {.name = "cstack",
         .kind = OPT_VALUE,
         .parse = parse_choice_opt,
         .offset = FIELD(cstack),
         .choices = cstack_names,
         .accepts = "fp, no or dwarf"},
        {.name = "lock",
         .kind = OPT_VALUE,
         .parse = parse_duration_opt,
         .offset = FIELD(lock_ns),
         .min = 1,
         .max = 3600 * NS_PER_S,
         .zero_ok = true,
         .accepts = "0 (off) or a whole duration up to 1h, e.g. 10ms"},
        {.name = "reply",
         .kind = OPT_VALUE,
         .parse = parse_reply_opt,
         .accepts = "the path of an existing file for the one-line outcome (fxprof sets it)"},
        {.name = "alloc",
         .kind = OPT_VALUE,
         .parse = parse_size_opt,
         .offset = FIELD(alloc_bytes),
         .min = 1,
         .max = GIB,
         .zero_ok = true,
         .accepts = "0 (off) or a size from 1 byte to 1g (k, m, g or bytes), e.g. 512k"},
        {.name = "vtwait",
         .kind = OPT_VALUE,
         .parse = parse_duration_opt,
         .offset = FIELD(vtwait_ns),
         .min = 1,
         .max = 3600 * NS_PER_S,
         .zero_ok = true,
         .accepts = "0 (off) or a whole duration up to 1h, e.g. 10ms"},
        {.name = "kstack",
         .kind = OPT_VALUE,
         .parse = parse_choice_opt,
         .offset = FIELD(kstack),
         .choices = kstack_names,
         .accepts = "yes or no"},
        {.name = "lockowner",
         .kind = OPT_VALUE,
         .parse = parse_choice_opt,
         .offset = FIELD(lockowner),
         .choices = markers_names,
         .accepts = "on or off"},
        {.name = "vtracks",
         .kind = OPT_VALUE,
         .parse = parse_u32_opt,
         .offset = FIELD(vtracks),
         .min = 0,
         .max = FX_VTRACKS_MAX,
         .accepts = "a whole number from 0 to 1024, e.g. 32"},
        {.name = "push",
         .kind = OPT_VALUE,
         .parse = parse_push_string_opt,
         .offset = FIELD(push),
         .accepts = "http://HOST[:PORT]/PATH, e.g. http://127.0.0.1:4040/ingest"},
        {.name = "service",
         .kind = OPT_VALUE,
         .parse = parse_push_string_opt,
         .offset = FIELD(service),
         .accepts = "a name"},
        {.name = "labels",
         .kind = OPT_VALUE,
         .parse = parse_push_string_opt,
         .offset = FIELD(labels),
         .accepts = "K=V;K=V, e.g. env=prod;region=eu"},
        {.name = "push_format",
         .kind = OPT_VALUE,
         .parse = parse_choice_opt,
         .offset = FIELD(push_format),
         .choices = push_format_names,
         .accepts = "auto, pyroscope or otlp"},
        {.name = "sources",
         .kind = OPT_VALUE,
         .parse = parse_sources_opt,
         .offset = FIELD(sources),
         .accepts =
                 "folders, jars or zips of Java sources joined by ':', e.g. src/main/java:lib-sources.jar"},
};

#define OPT_COUNT (sizeof(opt_table) / sizeof(opt_table[0]))
_Static_assert(OPT_COUNT <= 32, "the seen mask is a uint32_t");

static const char help_text[] =
        "fxagent options: a comma-separated list, e.g. start,interval=1ms,file=out-%p.json.gz\n"
        "actions (at most one, anywhere in the list):\n"
        "  start                   start sampling (the default at -agentpath)\n"
        "  stop                    stop sampling and write the profile\n"
        "  dump                    write the profile, keep sampling\n"
        "  status                  print the agent's state\n"
        "  help                    print this text\n"
        "options:\n"
        "  mode=cpu|itimer|wall    what drives sampling (default cpu)\n"
        "  engine=auto|perf|timer  timer of mode=cpu (default auto)\n"
        "  interval=DURATION       sampling period, 100us..10s (default 10ms)\n"
        "  depth=N                 frames kept per sample, all kinds, 1..65535 (default 2048)\n"
        "  file=PATTERN            output path; %p pid, %t time, %n sequence, %% percent (default fxagent-%p-%t.json.gz)\n"
        "  loop=DURATION           dump periodically, 0 (off) or at least 1s (default 0)\n"
        "  memory=SIZE             bound of the recording, 1m..64g (default 64m)\n"
        "  ring=SIZE               per-thread sample ring, 16k..64m (default 256k)\n"
        "  markers=on|off          GC, JIT and user markers, counters (default on)\n"
        "  cstack=dwarf|fp|no      native frames (every mode) by DWARF CFI, frame pointers only, or none (default dwarf)\n"
        "  kstack=yes|no           kernel frames in cpu mode from perf callchains (default yes)\n"
        "  quiet                   no summary line on stderr (default off)\n"
        "  reset                   with dump: drop the samples written (default off)\n"
        "  lock=DURATION           record lock waits (monitors, j.u.c. parks) of at least it, 0 off (default 0)\n"
        "  reply=PATH              append the outcome line to this existing file (default none)\n"
        "  validate[=REPORT.json]  check AsyncGetCallTrace against GetStackTrace (default off)\n"
        "  alloc=SIZE              sample allocations every SIZE bytes on average, live heap (default 0: off)\n"
        "  vtwait=DURATION         mark virtual threads' waits of at least it with their stack, 0 off (default 0; 1ms in mode=wall)\n"
        "  lockowner=on|off        with lock=: name the owner of monitors waited for at least lock=/2 (default on)\n"
        "  vtracks=N               virtual threads with a track of their own, 0..1024; the others under a root frame (default 32)\n"
        "  push=URL                post each profile (loop= period, stop, exit) to http://HOST[:PORT]/PATH:\n"
        "                          .../ingest Pyroscope (pprof), .../v1development/profiles OTLP (docs/FLEET.md)\n"
        "  push_format=F           auto (the URL's path), pyroscope or otlp (default auto)\n"
        "  service=NAME            the service pushed profiles are named after (default: the main class or jar)\n"
        "  labels=K=V;K=V          labels of pushed profiles (default none)\n"
        "  sources=PATH:PATH       at each dump, embed the Java sources frames name (default none): from these\n"
        "                          folders, jars, zips, beside the class path's jars, the JDK's lib/src.zip\n"
        "DURATION: a whole number with a unit: ns, us, ms, s, m (minutes), h; e.g. 10ms\n"
        "SIZE: a whole number of bytes, or with k, m, g (powers of 1024, any case); e.g. 64m\n";

const char *fx_options_help(void)
{
    return help_text;
}

void fx_options_defaults(struct fx_options *out)
{
    *out = (struct fx_options){
            .action = FX_ACTION_NONE,
            .mode = FX_MODE_CPU,
            .engine = FX_ENGINE_AUTO,
            .interval_ns = 10 * NS_PER_MS,
            .depth = 2048,
            .file = default_file,
            .loop_ns = 0,
            .memory_bytes = 64 * MIB,
            .ring_bytes = 256 * KIB,
            .cstack = FX_CSTACK_DWARF, /* docs/BENCHMARKS.md "cstack=dwarf": the best that works */
            .vtwait_ns = 0, /* opt-in in cpu mode: it needs the mount events (docs/BENCHMARKS.md,
                               issue 22); mode=wall's default is derived_defaults' */
            .vtracks = 32,
    };
}

void fx_options_destroy(struct fx_options *o)
{
    if (!o)
        return;
    if (o->file != default_file)
        fx_free(o->file);
    fx_free(o->validate_report);
    fx_free(o->reply);
    fx_free(o->push);
    fx_free(o->service);
    fx_free(o->labels);
    fx_free(o->sources);
    fx_options_defaults(o);
}

/* Appends s to out (cap bytes, at *len) with every '%' doubled, so it stays literal. */
static bool put_literal(char *out, size_t cap, size_t *len, const char *s)
{
    for (; *s; s++) {
        if (*len + 2 >= cap)
            return false;
        if (*s == '%')
            out[(*len)++] = '%';
        out[(*len)++] = *s;
    }
    out[*len] = '\0';
    return true;
}

int fx_options_absolute_file(struct fx_options *o, const char *cwd, const char *home)
{
    const char *f = o->file, *prefix = cwd, *rest = f;
    if (!f || f[0] == '/')
        return FX_OK;
    if (f[0] == '~' && f[1] == '/' && home && home[0] == '/') {
        prefix = home;
        rest = f + 2;
    }
    if (!prefix || prefix[0] != '/')
        return FX_EINVAL;
    char *abs = fx_malloc(PATTERN_MAX + 1);
    if (!abs)
        return FX_ENOMEM;
    size_t len = 0;
    abs[0] = '\0';
    bool slash = prefix[strlen(prefix) - 1] != '/';
    if (!put_literal(abs, PATTERN_MAX + 1, &len, prefix) ||
        !put_literal(abs, PATTERN_MAX + 1, &len, slash ? "/" : "") ||
        len + strlen(rest) > PATTERN_MAX) {
        fx_free(abs);
        return FX_ERANGE;
    }
    memcpy(abs + len, rest, strlen(rest) + 1);
    if (o->file != default_file)
        fx_free(o->file);
    o->file = abs;
    return FX_OK;
}

static unsigned min_u(unsigned a, unsigned b)
{
    return a < b ? a : b;
}

/* Optimal string alignment distance (a swap of neighbours costs 1), for "did you mean". */
#define SUGGEST_MAX_LEN 32
static unsigned edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned d[SUGGEST_MAX_LEN + 1][SUGGEST_MAX_LEN + 1];
    for (size_t i = 0; i <= la; i++) {
        for (size_t j = 0; j <= lb; j++) {
            if (i == 0 || j == 0) {
                d[i][j] = (unsigned)(i + j);
                continue;
            }
            unsigned best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            best = min_u(best, min_u(d[i - 1][j], d[i][j - 1]) + 1);
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                best = min_u(best, d[i - 2][j - 2] + 1);
            d[i][j] = best;
        }
    }
    return d[la][lb];
}

/* The closest known name when it is close: one edit for short names, two for longer ones. */
static const char *suggest(const char *key)
{
    if (strlen(key) > SUGGEST_MAX_LEN)
        return NULL;
    const char *best = NULL;
    unsigned best_d = UINT_MAX;
    for (size_t i = 0; i < OPT_COUNT; i++) {
        const char *name = opt_table[i].name;
        unsigned dist = edit_distance(key, name);
        if (dist <= (strlen(name) <= 4 ? 1u : 2u) && dist < best_d) {
            best = name;
            best_d = dist;
        }
    }
    return best;
}

static int unknown_option(const char *key, struct fx_errbuf *eb)
{
    char q[QUOTE_MAX + 4];
    const char *near = suggest(key);
    if (near)
        fx_errbuf_set(eb, "unknown option '%s' (did you mean '%s'?); try 'help'", shorten(key, q),
                      near);
    else if (strpbrk(key, "./")) /* file=/data/a,b.json: the rest of a path, cut at the ',' */
        fx_errbuf_set(
                eb,
                "unknown option '%s' (a ',' ends each option, so a file name cannot contain one); try 'help'",
                shorten(key, q));
    else
        fx_errbuf_set(eb, "unknown option '%s'; try 'help'", shorten(key, q));
    return FX_EINVAL;
}

struct parse_state {
    uint32_t seen;      /* bit i: opt_table[i] given */
    const char *action; /* name of the action given, or NULL */
};

static int apply_action(const struct opt_def *d, struct parse_state *st, struct fx_options *o,
                        struct fx_errbuf *eb)
{
    if (st->action) {
        fx_errbuf_set(
                eb,
                "option '%s': a second action after '%s'; give at most one of start, stop, dump, status, help",
                d->name, st->action);
        return FX_EINVAL;
    }
    st->action = d->name;
    o->action = (enum fx_action)d->action;
    return FX_OK;
}

/* Applies one known option; val is NULL for a bare word. */
static int apply(const struct opt_def *d, const char *val, struct parse_state *st,
                 struct fx_options *o, struct fx_errbuf *eb)
{
    char q[QUOTE_MAX + 4];
    if (val && (d->kind == OPT_ACTION || d->kind == OPT_FLAG)) {
        fx_errbuf_set(eb, "option '%s': takes no value, got '%s'; accepted: just '%s'", d->name,
                      shorten(val, q), d->name);
        return FX_EINVAL;
    }
    if (!val && d->kind == OPT_VALUE) {
        fx_errbuf_set(eb, "option '%s': needs a value (%s=...); accepted: %s", d->name, d->name,
                      d->accepts);
        return FX_EINVAL;
    }
    if (d->kind == OPT_ACTION)
        return apply_action(d, st, o, eb);
    if (d->kind == OPT_FLAG) {
        *(bool *)field(o, d) = true;
        return FX_OK;
    }
    return d->parse(d, val, o, eb);
}

/* One item, already cut out of the list (and so writable). */
static int parse_item(char *item, unsigned index, struct parse_state *st, struct fx_options *o,
                      struct fx_errbuf *eb)
{
    if (*item == '\0') {
        fx_errbuf_set(
                eb,
                "option '': item %u is empty (a doubled or trailing comma); accepted: items separated by single commas, e.g. start,interval=10ms",
                index);
        return FX_EINVAL;
    }
    char *eq = strchr(item, '=');
    if (eq)
        *eq = '\0';
    for (size_t i = 0; i < OPT_COUNT; i++) {
        const struct opt_def *d = &opt_table[i];
        if (strcmp(item, d->name) != 0)
            continue;
        if (d->kind != OPT_ACTION && (st->seen & (1u << i))) {
            fx_errbuf_set(eb, "option '%s' given twice; accepted: each option at most once",
                          d->name);
            return FX_EINVAL;
        }
        st->seen |= 1u << i;
        return apply(d, eq ? eq + 1 : NULL, st, o, eb);
    }
    return unknown_option(item, eb);
}

/* Defaults that depend on another option, once the list is read. mode=wall shows where virtual
 * threads wait (issue 30 item 5): only carriers are sampled, so without vtwait= an unmounted
 * virtual thread has no sample at all; cpu mode keeps it opt-in (it needs the mount events). */
static void derived_defaults(const struct parse_state *st, struct fx_options *o)
{
    for (size_t i = 0; i < OPT_COUNT; i++)
        if (strcmp(opt_table[i].name, "vtwait") == 0 && !(st->seen & (1u << i)) &&
            o->mode == FX_MODE_WALL)
            o->vtwait_ns = FX_VTWAIT_WALL_DEFAULT_NS;
}

static int parse_list(char *list, struct fx_options *o, struct fx_errbuf *eb)
{
    struct parse_state st = {0};
    char *item = list;
    for (unsigned index = 1;; index++) {
        char *comma = strchr(item, ',');
        if (comma)
            *comma = '\0';
        int rc = parse_item(item, index, &st, o, eb);
        if (rc == FX_OK && !comma)
            derived_defaults(&st, o);
        if (rc != FX_OK || !comma)
            return rc;
        item = comma + 1;
    }
}

int fx_options_parse(const char *s, struct fx_options *out, struct fx_errbuf *eb)
{
    fx_options_defaults(out);
    if (!s || *s == '\0')
        return FX_OK;
    char *list = fx_strdup(s); /* items are cut in place */
    if (!list) {
        fx_errbuf_set(eb, "option list: out of memory copying %zu bytes", strlen(s) + 1);
        return FX_ENOMEM;
    }
    int rc = parse_list(list, out, eb);
    if (rc == FX_OK)
        rc = fx_push_options_check(out->push, out->push_format, eb);
    fx_free(list);
    if (rc != FX_OK)
        fx_options_destroy(out);
    return rc;
}
