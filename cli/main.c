/* SPDX-License-Identifier: Apache-2.0 */
/* fxprof: the command-line front of fxagent. This file only dispatches; each subcommand owns
 * its options, its --help and its exit code. */
#include "fxprof.h"

#include <stdio.h>
#include <string.h>

#include "diff.h"
#include "sources.h"

#define COMMANDS "list, record, start, dump, stop, status, open, compare, summary, convert, sources"

struct subcommand {
    const char *name;
    int (*main)(int argc, char **argv);
    const char *summary; /* NULL: hidden */
};

/* convert --diff BASE NEW is diff.c's, which runs convert on each side: dispatched here, so
 * convert.c and diff.c do not call each other. */
static int convert_main(int argc, char **argv)
{
    return fx_diff_wanted(argc, argv) ? fx_diff_main(argc, argv) : fx_convert_main(argc, argv);
}

static const struct subcommand subcommands[] = {
        {"list", fx_list_main, "list the local JVMs and whether fxagent samples them"},
        {"record", fx_record_main, "run a Java program, or a running JVM for -d, under the agent"},
        {"start", fx_control_main, "start sampling in a running JVM"},
        {"dump", fx_control_main, "write the profile of a running JVM, keep sampling"},
        {"stop", fx_control_main, "stop sampling in a running JVM and write the profile"},
        {"status", fx_control_main, "print the agent's state in a running JVM"},
        {"open", fx_serve_main, "open a profile in profiler.firefox.com (local server)"},
        {"compare", fx_serve_main, "open two profiles in profiler.firefox.com's comparison"},
        {"summary", fx_summary_main, "print the hottest methods of a profile"},
        {"convert", convert_main, "write a profile as collapsed stacks or pprof"},
        {"sources", fx_sources_main, "embed the Java sources the profile's frames name"},
        {"attach-raw", fx_attach_raw_main, NULL},
};

static int usage(FILE *to)
{
    fprintf(to, "usage: fxprof COMMAND [ARGS...]   (fxprof COMMAND --help for its options;\n"
                "       fxprof --version)\n"
                "commands:\n");
    for (size_t i = 0; i < sizeof subcommands / sizeof *subcommands; i++)
        if (subcommands[i].summary)
            fprintf(to, "  %-8s %s\n", subcommands[i].name, subcommands[i].summary);
    fprintf(to,
            "example: fxprof record -o app.json.gz -- java -jar app.jar; fxprof open app.json.gz\n"
            "exit codes: 0 done, 1 failed, 2 bad command line, 3 fxagent is not loaded in the JVM\n"
            "(dump, stop, status), 4 the profile was not written where asked (dump, stop, record),\n"
            "130 interrupted; record otherwise exits with java's exit code\n");
    return to == stdout ? FX_CLI_OK : FX_CLI_USAGE;
}

/* Edit distance with neighbour swaps, for "did you mean". */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 16 || lb > 16)
        return 99;
    size_t d[17][17];
    for (size_t i = 0; i <= la; i++)
        for (size_t j = 0; j <= lb; j++) {
            if (i == 0 || j == 0) {
                d[i][j] = i + j;
                continue;
            }
            size_t sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            size_t m = sub < del ? sub : del;
            m = m < ins ? m : ins;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < m)
                m = d[i - 2][j - 2] + 1;
            d[i][j] = m;
        }
    return d[la][lb];
}

/* The visible command a typo most likely meant: a unique prefix, else the nearest within 2. */
static const char *suggest(const char *typed)
{
    const char *best = NULL;
    size_t best_d = 3, nprefix = 0;
    const char *prefix = NULL;
    for (size_t i = 0; i < sizeof subcommands / sizeof *subcommands; i++) {
        const char *n = subcommands[i].name;
        if (!subcommands[i].summary)
            continue;
        if (*typed && !strncmp(n, typed, strlen(typed))) {
            prefix = n;
            nprefix++;
        }
        size_t d = distance(typed, n);
        if (d < best_d) {
            best_d = d;
            best = n;
        }
    }
    return nprefix == 1 ? prefix : best;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr);
    if (fx_cli_is_help(argv[1]) || !strcmp(argv[1], "help"))
        return usage(stdout);
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") || !strcmp(argv[1], "version")) {
        printf("fxprof %s (fxagent's command-line front)\n", FXPROF_VERSION);
        return fflush(stdout) == 0 ? FX_CLI_OK : FX_CLI_FAIL;
    }
    for (size_t i = 0; i < sizeof subcommands / sizeof *subcommands; i++)
        if (!strcmp(argv[1], subcommands[i].name))
            return subcommands[i].main(argc - 1, argv + 1);
    if (strspn(argv[1], "0123456789") == strlen(argv[1])) {
        fx_cli_fail("'%s' is not a command: the command comes first, e.g. fxprof status %s",
                    argv[1], argv[1]);
        return FX_CLI_USAGE;
    }
    const char *guess = suggest(argv[1]);
    if (guess)
        fx_cli_fail("unknown command '%s' (did you mean '%s'?); commands: " COMMANDS, argv[1],
                    guess);
    else
        fx_cli_fail("unknown command '%s'; commands: " COMMANDS, argv[1]);
    return FX_CLI_USAGE;
}
