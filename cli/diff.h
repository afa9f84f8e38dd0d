/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof convert --diff (diff.c) and fxprof compare (serve.c). Private to cli/. */
#ifndef FX_CLI_DIFF_H
#define FX_CLI_DIFF_H

#include <stdbool.h>

#include "fxprof.h"

/* True when convert's command line asks for --diff: convert hands it to fx_diff_main. */
bool fx_diff_wanted(int argc, char **argv);
/* fxprof convert --diff BASE NEW --to collapsed [-o OUT|-] [--all] [--idle]. */
int fx_diff_main(int argc, char **argv);

#endif
