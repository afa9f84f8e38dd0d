/* SPDX-License-Identifier: Apache-2.0 */
/* Numbers with units in options (core/util/options.c's grammar, fx_options_parse_duration and
 * fx_options_parse_size): a whole count and a unit, and why one did not parse, in a phrase a
 * message can end with. Tests: unit.options. */
#include "fx_options_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* Leading digits only: strtoull would otherwise accept spaces, a sign and wrap "-1". */
enum num_why fx_options_count_why(const char *s, uint64_t *v, const char **rest)
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

enum num_why fx_options_duration_why(const char *s, uint64_t *ns)
{
    uint64_t count;
    const char *unit;
    enum num_why why = fx_options_count_why(s, &count, &unit);
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

enum num_why fx_options_size_why(const char *s, uint64_t *bytes)
{
    uint64_t count;
    const char *unit;
    enum num_why why = fx_options_count_why(s, &count, &unit);
    return why != NUM_OK ? why : scale(count, unit, size_units, true, bytes);
}

/* A stack over N frames keeps its M leaf-most (agent/model/stack_depth.c): M of 0 would keep
 * nothing, M over N would keep more than a stack of N that is not cut. */
enum num_why fx_options_depth_why(const char *s, uint64_t *n, uint64_t *m)
{
    const char *rest = "";
    *m = 0;
    enum num_why why = fx_options_count_why(s, n, &rest);
    if (why == NUM_OK && *rest == '/') {
        why = fx_options_count_why(rest + 1, m, &rest);
        why = why == NUM_EMPTY ? NUM_NOT_NUMBER : why; /* "50/": the value is not empty */
        if (why == NUM_OK && *rest == '\0' && (*m == 0 || *m > *n))
            why = NUM_CUT_RANGE;
    }
    return why == NUM_OK && *rest != '\0' ? NUM_NOT_NUMBER : why;
}

int fx_options_why_rc(enum num_why why)
{
    return why == NUM_OK                                 ? FX_OK
           : why == NUM_OVERFLOW || why == NUM_CUT_RANGE ? FX_ERANGE
                                                         : FX_EINVAL;
}

int fx_options_parse_duration(const char *s, uint64_t *ns)
{
    uint64_t v;
    int rc = fx_options_why_rc(fx_options_duration_why(s, &v));
    if (rc == FX_OK)
        *ns = v;
    return rc;
}

int fx_options_parse_size(const char *s, uint64_t *bytes)
{
    uint64_t v;
    int rc = fx_options_why_rc(fx_options_size_why(s, &v));
    if (rc == FX_OK)
        *bytes = v;
    return rc;
}

/* The rest of a message after "option 'key': 'value' ". */
const char *fx_options_why_text(enum num_why why, enum noun noun)
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
    case NUM_CUT_RANGE:
        return "cuts to no frame or to more than it cuts at";
    default:
        return not_a[noun];
    }
}
