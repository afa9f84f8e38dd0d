/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof convert --diff (diff.c) and fxprof compare (serve.c). Private to cli/. */
#ifndef FX_CLI_DIFF_H
#define FX_CLI_DIFF_H

#include <stdbool.h>

#include "fxprof.h"

/* True when convert's command line asks for --diff: main.c then runs fx_diff_main. */
bool fx_diff_wanted(int argc, char **argv);
/* fxprof convert --diff BASE NEW --to collapsed [-o OUT|-] [--all] [--idle]. */
int fx_diff_main(int argc, char **argv);

/* The thread fxprof compare compares in `file`: the one named `name` (NULL: the profile's
 * meta.initialSelectedThreads[0], else 0): the /compare/ view needs one per profile. */
int fx_compare_thread(const char *file, const char *name, int *out, struct fx_errbuf *eb);

#endif
