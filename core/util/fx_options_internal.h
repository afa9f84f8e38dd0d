/* SPDX-License-Identifier: Apache-2.0 */
/* Private to core/util/options*.c: what the option grammar (options.c) shares with its numbers
 * (options_units.c), its file patterns (options_path.c) and its help (options_help.c). */
#ifndef FX_OPTIONS_INTERNAL_H
#define FX_OPTIONS_INTERNAL_H

#include <stdint.h>

#include "fx_options.h"

#define NS_PER_US 1000ull
#define NS_PER_MS 1000000ull
#define NS_PER_S  1000000000ull
#define KIB       1024ull
#define MIB       (1024ull * KIB)
#define GIB       (1024ull * MIB)

/* A pattern longer than any path cannot be opened; refusing it here gives a clear message. */
#define PATTERN_MAX 4095

/* Why a number did not parse; each has one phrase in messages. */
enum num_why {
    NUM_OK,
    NUM_EMPTY,
    NUM_NOT_NUMBER,
    NUM_FRACTION,
    NUM_NO_UNIT,
    NUM_BAD_UNIT,
    NUM_OVERFLOW,
    NUM_CUT_RANGE, /* depth=N/M: M is 0 or over N */
};

enum noun {
    NOUN_DURATION,
    NOUN_SIZE,
    NOUN_NUMBER,
};

/* options_units.c: a whole count (leading digits; *rest: what follows), a duration (a unit required
 * but for 0) or a size (bytes, k, m, g), why it did not parse, that verdict's return code and its
 * phrase in a message. */
enum num_why fx_options_count_why(const char *s, uint64_t *v, const char **rest);
enum num_why fx_options_duration_why(const char *s, uint64_t *ns);
enum num_why fx_options_size_why(const char *s, uint64_t *bytes);
/* depth=N or N/M: *m is M (1..N), 0 without "/M". */
enum num_why fx_options_depth_why(const char *s, uint64_t *n, uint64_t *m);
int fx_options_why_rc(enum num_why why);
const char *fx_options_why_text(enum num_why why, enum noun noun);

/* options.c: the default file pattern, never freed (fx_options_destroy compares with it). */
extern char fx_options_default_file[];

/* options_help.c: the optimal string alignment distance of two names of at most
 * SUGGEST_MAX_LEN bytes, for "did you mean". */
#define SUGGEST_MAX_LEN 32
unsigned fx_options_edit_distance(const char *a, const char *b);

/* options.c writes the enum options through an int pointer (parse_choice_opt). */
#define INT_SIZED(e) (sizeof(enum e) == sizeof(int))
_Static_assert(INT_SIZED(fx_mode) && INT_SIZED(fx_cpu_engine) && INT_SIZED(fx_markers) &&
                       INT_SIZED(fx_codemap) && INT_SIZED(fx_cstack) && INT_SIZED(fx_kstack) &&
                       INT_SIZED(fx_lockowner),
               "the enum options are written as int");

#endif
