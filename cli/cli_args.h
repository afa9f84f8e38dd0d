/* SPDX-License-Identifier: Apache-2.0 */
/* Command-line pieces the FILE subcommands (open, summary) share, so each reports a bad
 * option or operand in the same words. Header-only, so the fxprof target's source list
 * (cli/CMakeLists.txt) stays as it is. */
#ifndef FX_CLI_ARGS_H
#define FX_CLI_ARGS_H

#include <getopt.h>

#include "fxprof.h"

/* The end of a getopt_long switch (optstring ":h"): -1 for -h/--help, else a usage error
 * naming the option that lacks its value (o == ':') or is unknown. */
static inline int fx_cli_opt_rest(const char *cmd, int o, char *const argv[])
{
    if (o == 'h')
        return -1;
    if (o == ':')
        return fx_cli_usage(cmd, "option '%s' needs a value", argv[optind - 1]);
    return fx_cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
}

/* After the options: exactly one operand, the FILE. */
static inline int fx_cli_one_file(const char *cmd, int argc, char *const argv[], const char **file)
{
    if (optind != argc - 1)
        return fx_cli_usage(cmd, "expected exactly one FILE");
    *file = argv[optind];
    return FX_CLI_OK;
}

/* --view VIEW (summary, convert): cpu (or wall, itimer), lock, alloc or live. */
static inline int fx_cli_view(const char *cmd, const char *arg, int *view)
{
    *view = fx_pfile_view_parse(arg);
    if (*view >= 0)
        return FX_CLI_OK;
    return fx_cli_usage(
            cmd, "--view '%s': the views are cpu (or wall), lock, idlewait, alloc and live", arg);
}

#endif
