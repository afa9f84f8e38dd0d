/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's option grammar: a comma-separated list of `key=value` and bare flags, as given
 * after `-agentpath:libfxagent.so=` or as the command of `jcmd PID JVMTI.agent_load`.
 * Parsing never has side effects; every bad value gets one line in the errbuf that names the
 * option, the value and what is accepted. */
#ifndef FX_OPTIONS_H
#define FX_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fx_err.h"

enum fx_action {
    FX_ACTION_NONE = 0, /* at -agentpath: start; at attach: an error unless options only */
    FX_ACTION_START,
    FX_ACTION_STOP,
    FX_ACTION_DUMP,
    FX_ACTION_STATUS,
    FX_ACTION_HELP,
};

enum fx_mode {
    FX_MODE_CPU = 0, /* per-thread CPU-time signal (perf_events task-clock or timer_create) */
    FX_MODE_ITIMER,  /* setitimer(ITIMER_PROF), process-wide */
    FX_MODE_WALL,    /* a sampler thread signals every Java thread */
};

/* markers=on|off: GC, JIT and user markers and the counters (on), or samples only (off). */
enum fx_markers {
    FX_MARKERS_ON = 0,
    FX_MARKERS_OFF,
};

/* codemap=heap|jvmti (issue 31): how compiled code enters the code map stack recovery and frame
 * types read. heap (default since session 24): the signal handler finds nmethods in HotSpot's
 * code heaps through VMStructs, CompiledMethodLoad is not enabled (falls back to jvmti where the
 * code heaps' layouts are not known); jvmti: CompiledMethodLoad/Unload, which also gives JIT
 * markers and costs HotSpot's Service Thread ~3 % of a javac run (docs/BENCHMARKS.md, sessions
 * 22-24: the types and stacks of both now match on javac). */
enum fx_codemap {
    FX_CODEMAP_HEAP = 0,
    FX_CODEMAP_JVMTI,
};

enum fx_lockowner {
    FX_LOCKOWNER_ON = 0,
    FX_LOCKOWNER_OFF,
};

/* cstack=fp|no|dwarf: native frames of samples (cpu, itimer, wall) by walking frame pointers (fp),
 * none, or (the default) by frame pointers and, in libraries where they fail, DWARF CFI (dwarf). */
enum fx_cstack {
    FX_CSTACK_FP = 0,
    FX_CSTACK_NO,
    FX_CSTACK_DWARF,
};

/* kstack=yes|no: kernel frames of cpu-mode samples from the perf engine's callchain (yes). */
enum fx_kstack {
    FX_KSTACK_YES = 0,
    FX_KSTACK_NO,
};

enum fx_cpu_engine {
    FX_ENGINE_AUTO = 0, /* perf_events where the kernel allows it, else timer_create */
    FX_ENGINE_PERF,
    FX_ENGINE_TIMER,
};

/* The file pattern when file= is not given, and the name a profile takes inside a folder given
 * as file= (dump.c). */
#define FX_OPTIONS_DEFAULT_FILE "fxagent-%p-%t.json.gz"

struct fx_options {
    enum fx_action action;
    enum fx_mode mode;         /* mode=cpu|itimer|wall, default cpu */
    enum fx_cpu_engine engine; /* engine=auto|perf|timer, default auto (cpu mode only) */
    uint64_t interval_ns;      /* interval=DURATION, default 10ms, 100us..10s */
    uint32_t depth;            /* depth=N, default 2048, 1..65535: frames kept per sample */
    uint32_t depth_cut;        /* depth=N/M: a stack over N frames keeps M (1..N); 0: N */
    char *file;                /* file=PATTERN, default "fxagent-%p-%t.json.gz"; %p %t %n */
    uint64_t loop_ns;          /* loop=DURATION, 0 = no periodic dumps; >= 1s */
    uint64_t memory_bytes;     /* memory=SIZE, default 64m, 1m..64g: bound of the recording */
    uint64_t ring_bytes;       /* ring=SIZE, default 256k, 16k..64m: per-thread sample ring */
    bool quiet;                /* quiet: no stderr line at the end */
    bool validate;             /* validate[=REPORT.json] */
    char *validate_report;     /* NULL: no separate report file */
    bool file_set;             /* file= was given (a dump without it uses the start file) */
    char *reply;               /* reply=PATH: an existing file the attach outcome line is
                                  appended to (fxprof creates it); NULL: none */
    bool reset;                /* reset: a dump also drops the samples it wrote */
    enum fx_markers markers;   /* markers=on|off, default on */
    enum fx_cstack cstack;     /* cstack=fp|no|dwarf, default dwarf */
    uint64_t alloc_bytes;      /* alloc=SIZE, 0 (default) = off, else 1..1g: heap sampling
                                  interval (issue 17) */
    uint64_t lock_ns;          /* lock=DURATION: record lock waits of at least it; 0 = off */
    uint64_t vtwait_ns;        /* vtwait=DURATION: mark virtual threads' waits of at least it
                                  (JDK 21+); 0 = off, default 0, in mode=wall
                                  FX_VTWAIT_WALL_DEFAULT_NS */
    enum fx_kstack kstack;     /* kstack=yes|no, default yes */
    /* lockowner=on|off, default on: with lock=, name the owners of monitors (locks_owner.c) */
    enum fx_lockowner lockowner;
    /* vtracks=N, default 32, 0..FX_VTRACKS_MAX: virtual threads with a track of their own
       (issue 22, model/vthreads.c); the others under a root frame on their carrier's track */
    uint32_t vtracks;
    /* issue 33, pushing each profile to a backend (core/util/push.c, docs/FLEET.md) */
    char *push;      /* push=URL: http://HOST[:PORT]/PATH; NULL: no push */
    char *service;   /* service=NAME: the service's name; NULL: the main class or jar */
    char *labels;    /* labels=K=V;K=V: more labels (Pyroscope) or resource attributes (OTLP) */
    int push_format; /* push_format=auto|pyroscope|otlp (enum fx_push_format), default auto */
    /* sources=PATH:PATH (issue 34): each dump embeds the Java files its frames name, looked up
       there first (include/fx_src.h); NULL: no embedding */
    char *sources;
    enum fx_codemap codemap; /* codemap=heap|jvmti, default heap */
};
#define FX_VTRACKS_MAX 1024
/* vtwait= when mode=wall is given without it (issue 30 item 5): the waits of virtual threads are
 * shown by default there; 1 ms, so that short sleeps show too (the rate limit bounds the cost). */
#define FX_VTWAIT_WALL_DEFAULT_NS 1000000ull
/* At most this many paths in sources= (issue 34; FX_SRC_MAX_FROM). */
#define FX_OPTIONS_SOURCES_MAX 32

/* Fills `out` with the defaults. */
void fx_options_defaults(struct fx_options *out);
/* Parses `s` (NULL or "" means all defaults) into `out`, which it initialises first.
 * On error returns FX_EINVAL or FX_ERANGE with one line in eb; `out` then holds nothing
 * to free. A key given twice is an error. An unknown key suggests the nearest known one. */
int fx_options_parse(const char *s, struct fx_options *out, struct fx_errbuf *eb);
void fx_options_destroy(struct fx_options *o);
/* Makes o->file absolute: "~/x" under home (when absolute), any other relative pattern under
 * cwd, with '%' in either doubled so it stays literal. The JVM's working folder is not one the
 * operator of an attached JVM knows, and every line then names the file whole. FX_EINVAL (no
 * absolute cwd), FX_ERANGE (too long) or FX_ENOMEM leave o unchanged. */
int fx_options_absolute_file(struct fx_options *o, const char *cwd, const char *home);

/* Text listing every option with its default, for `help`. */
const char *fx_options_help(void);

/* Value parsers, shared with the fxprof command. */
int fx_options_parse_duration(const char *s, uint64_t *ns); /* 10ms, 1s, 500us, 100000ns */
int fx_options_parse_size(const char *s, uint64_t *bytes);  /* 64m, 512k, 1g, 4096 */

/* Expands %p (pid), %t (local time YYYYmmdd-HHMMSS), %n (sequence) and %% in a file pattern.
 * Returns FX_ERANGE if out (cap bytes) is too small. */
int fx_options_expand_path(const char *pattern, pid_t pid, time_t when, unsigned seq, char *out,
                           size_t cap);
/* A pattern that gives every file of a series (loop=) its own name: `pattern` itself if it has
 * %n, else with "-%n" inserted before a trailing ".json.gz", ".json" or ".gz" (appended when
 * there is none). FX_ERANGE if out (cap bytes) is too small. */
int fx_options_sequenced_pattern(const char *pattern, char *out, size_t cap);

#endif
