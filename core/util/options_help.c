/* SPDX-License-Identifier: Apache-2.0 */
/* The options' help text (the `help` action, fxprof's --help) and the distance behind "did you
 * mean" for an unknown option (core/util/options.c). Tests: unit.options. */
#include "fx_options_internal.h"

#include <string.h>

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
        "  depth=N[/M]             frames kept per sample, all kinds, 1..65535 (default 2048); /M: a stack over N keeps M\n"
        "  file=PATTERN            output path; %p pid, %t time, %n sequence, %% percent (default fxagent-%p-%t.json.gz)\n"
        "  loop=DURATION           dump periodically, 0 (off) or at least 1s (default 0)\n"
        "  memory=SIZE             bound of the recording, 1m..64g (default 64m)\n"
        "  ring=SIZE               per-thread sample ring, 16k..64m (default 256k)\n"
        "  markers=on|off          GC, JIT and user markers, counters (default on; JIT markers need codemap=jvmti)\n"
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
        "  codemap=heap|jvmti      compiled code found in HotSpot's code heaps (heap), or by JVMTI CompiledMethodLoad\n"
        "                          (jvmti: JIT markers, ~3 % of javac's CPU in HotSpot's Service Thread) (default heap)\n"
        "DURATION: a whole number with a unit: ns, us, ms, s, m (minutes), h; e.g. 10ms\n"
        "SIZE: a whole number of bytes, or with k, m, g (powers of 1024, any case); e.g. 64m\n";

const char *fx_options_help(void)
{
    return help_text;
}

static unsigned min_u(unsigned a, unsigned b)
{
    return a < b ? a : b;
}

/* Optimal string alignment distance (a swap of neighbours costs 1), for "did you mean". */
unsigned fx_options_edit_distance(const char *a, const char *b)
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
