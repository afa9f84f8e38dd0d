/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof: the command-line front of fxagent. This file only dispatches; each subcommand owns
 * its options, its --help and its exit code. */
#include "fxprof.h"

#include <stdio.h>
#include <string.h>

struct subcommand {
    const char *name;
    int (*main)(int argc, char **argv);
    const char *summary; /* NULL: hidden */
};

static const struct subcommand subcommands[] = {
        {"record", fx_record_main, "run a Java program under the agent"},
        {"start", fx_control_main, "start sampling in a running JVM"},
        {"dump", fx_control_main, "write the profile of a running JVM, keep sampling"},
        {"stop", fx_control_main, "stop sampling in a running JVM and write the profile"},
        {"status", fx_control_main, "print the agent's state in a running JVM"},
        {"open", fx_serve_main, "open a profile in profiler.firefox.com (local server)"},
        {"summary", fx_summary_main, "print the hottest methods of a profile"},
        {"attach-raw", fx_attach_raw_main, NULL},
};

static int usage(FILE *to)
{
    fprintf(to, "usage: fxprof COMMAND [ARGS...]   (fxprof COMMAND --help for its options)\n"
                "commands:\n");
    for (size_t i = 0; i < sizeof subcommands / sizeof *subcommands; i++)
        if (subcommands[i].summary)
            fprintf(to, "  %-8s %s\n", subcommands[i].name, subcommands[i].summary);
    fprintf(to,
            "example: fxprof record -o app.json.gz -- java -jar app.jar; fxprof open app.json.gz\n");
    return to == stdout ? FX_CLI_OK : FX_CLI_USAGE;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr);
    if (fx_cli_is_help(argv[1]) || !strcmp(argv[1], "help"))
        return usage(stdout);
    for (size_t i = 0; i < sizeof subcommands / sizeof *subcommands; i++)
        if (!strcmp(argv[1], subcommands[i].name))
            return subcommands[i].main(argc - 1, argv + 1);
    fx_cli_fail("unknown command '%s' (try: record, start, dump, stop, status, open, summary)",
                argv[1]);
    return FX_CLI_USAGE;
}
