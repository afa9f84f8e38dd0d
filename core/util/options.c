/* SPDX-License-Identifier: Apache-2.0 */
/* The option grammar, driven by one table: each entry names an option, how it is given (action,
 * flag or key=value) and the parser that writes its field. A failed parse leaves the defaults
 * and exactly one line in the errbuf: the option, the value (quoted, shortened) and what is
 * accepted. Numbers with units: options_units.c; file patterns: options_path.c; the help text
 * and "did you mean": options_help.c (tests: unit.options). */
#include "fx_options.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "fx_alloc.h"
#include "fx_options_internal.h"
#include "fx_push.h"

/* Values are quoted in messages at most this long, so a 10k-character value still leaves room
 * in the 256-byte errbuf for what is accepted. */
#define QUOTE_MAX 40
_Static_assert(PATTERN_MAX < PATH_MAX, "a pattern fits a path buffer");

/* Mutable so `file` can stay a plain `char *`; fx_options_destroy never frees it. */
char fx_options_default_file[] = FX_OPTIONS_DEFAULT_FILE;

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

static void *field(struct fx_options *o, const struct opt_def *d)
{
    return (char *)o + d->offset;
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
        return value_error(d, val, fx_options_why_text(why, noun), fx_options_why_rc(why), eb);
    if ((v < d->min && !(d->zero_ok && v == 0)) || v > d->max)
        return value_error(d, val, "is out of range", FX_ERANGE, eb);
    return FX_OK;
}

static int parse_duration_opt(const struct opt_def *d, const char *val, struct fx_options *o,
                              struct fx_errbuf *eb)
{
    uint64_t v = 0;
    enum num_why why = fx_options_duration_why(val, &v); /* before check_number reads v */
    int rc = check_number(d, val, why, NOUN_DURATION, v, eb);
    if (rc == FX_OK)
        *(uint64_t *)field(o, d) = v;
    return rc;
}

static int parse_size_opt(const struct opt_def *d, const char *val, struct fx_options *o,
                          struct fx_errbuf *eb)
{
    uint64_t v = 0;
    enum num_why why = fx_options_size_why(val, &v); /* before check_number reads v */
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
    enum num_why why = fx_options_count_why(val, &v, &rest);
    if (why == NUM_OK && *rest != '\0')
        why = NUM_NOT_NUMBER;
    int rc = check_number(d, val, why, NOUN_NUMBER, v, eb);
    if (rc == FX_OK)
        *(uint32_t *)field(o, d) = (uint32_t)v; /* max <= UINT32_MAX in the table */
    return rc;
}

/* depth=N or N/M (async-profiler's jstackdepth=N/M): options_units.c's fx_options_depth_why. */
static int parse_depth_opt(const struct opt_def *d, const char *val, struct fx_options *o,
                           struct fx_errbuf *eb)
{
    uint64_t n = 0, m = 0;
    enum num_why why = fx_options_depth_why(val, &n, &m); /* before check_number reads n */
    int rc = check_number(d, val, why, NOUN_NUMBER, n, eb);
    if (rc == FX_OK) {
        o->depth = (uint32_t)n; /* max <= UINT32_MAX in the table */
        o->depth_cut = (uint32_t)m;
    }
    return rc;
}

/* Enum fields are written as int: every enum option has int's size (fx_options_internal.h). */
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
static const char *const codemap_names[] = {"heap", "jvmti", NULL}; /* enum fx_codemap */

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
         .parse = parse_depth_opt,
         .offset = FIELD(depth),
         .min = 1,
         .max = 65535,
         .accepts = "a whole number from 1 to 65535, e.g. 2048, or N/M with M from 1 to N, "
                    "e.g. 200/40"},
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
        {.name = "codemap",
         .kind = OPT_VALUE,
         .parse = parse_choice_opt,
         .offset = FIELD(codemap),
         .choices = codemap_names,
         .accepts = "heap or jvmti"},
};

#define OPT_COUNT (sizeof(opt_table) / sizeof(opt_table[0]))
_Static_assert(OPT_COUNT <= 32, "the seen mask is a uint32_t");

void fx_options_defaults(struct fx_options *out)
{
    *out = (struct fx_options){
            .action = FX_ACTION_NONE,
            .mode = FX_MODE_CPU,
            .engine = FX_ENGINE_AUTO,
            .interval_ns = 10 * NS_PER_MS,
            .depth = 2048,
            .file = fx_options_default_file,
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
    if (o->file != fx_options_default_file)
        fx_free(o->file);
    fx_free(o->validate_report);
    fx_free(o->reply);
    fx_free(o->push);
    fx_free(o->service);
    fx_free(o->labels);
    fx_free(o->sources);
    fx_options_defaults(o);
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
        unsigned dist = fx_options_edit_distance(key, name);
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
