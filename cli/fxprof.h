/* SPDX-License-Identifier: Apache-2.0 */
/* The fxprof command's modules. Every failure reaches the user as one line, "fxprof: ..." on
 * stderr, and a non-zero exit; only the subcommand mains print or choose exit codes, the
 * helpers below report through a struct fx_errbuf. */
#ifndef FXPROF_H
#define FXPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "fx_err.h"

enum {
    FX_CLI_OK = 0,
    FX_CLI_FAIL = 1,       /* the operation failed */
    FX_CLI_USAGE = 2,      /* the command line is wrong */
    FX_CLI_NOT_LOADED = 3, /* start/dump/stop/status: fxagent is not loaded in the JVM */
    FX_CLI_FALLBACK = 4,   /* the profile was not written where asked (it went elsewhere) */
    FX_CLI_INTERRUPTED = 130,
};

/* The exit codes as every --help states them. */
#define FX_CLI_EXIT_HELP                                                                   \
    "exit codes: 0 done, 1 failed, 2 bad command line, 3 fxagent not loaded in the JVM,\n" \
    "            4 the profile was not written where asked (see the message), 130 interrupted\n"

/* ---- cli.c: shared helpers ---- */

/* Prints "fxprof: <message>" on stderr; returns FX_CLI_FAIL. */
int fx_cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "fxprof: <cmd>: <message> (see 'fxprof <cmd> --help')"; returns FX_CLI_USAGE. */
int fx_cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Writes text with every byte a terminal could obey escaped: C0 and C1 controls, DEL and bytes
 * that are not UTF-8 as \xHH, line breaks and tabs as \n \r \t. */
void fx_cli_put_escaped(FILE *to, const char *text);
/* True for -h and --help. */
bool fx_cli_is_help(const char *arg);
/* A decimal pid > 0; anything else is FX_EINVAL with a line in eb. */
int fx_cli_parse_pid(const char *s, pid_t *out, struct fx_errbuf *eb);
/* A duration as the agent writes them (10ms, 30s, 10m), in milliseconds, at least 1 ms. */
int fx_cli_parse_timeout(const char *what, const char *s, int64_t *ms, struct fx_errbuf *eb);
/* CLOCK_MONOTONIC in milliseconds. */
int64_t fx_cli_now_ms(void);
/* Sleeps ms milliseconds unless a SIGINT/SIGTERM caught by fx_cli_catch_interrupts arrives. */
void fx_cli_sleep_ms(int64_t ms);
/* SIGINT, SIGTERM and SIGHUP set a flag instead of killing fxprof (no SA_RESTART, so blocking
 * calls return EINTR), letting the caller remove its temporary files. */
void fx_cli_catch_interrupts(void);
bool fx_cli_interrupted(void);
/* Forgets a caught interrupt: record -d's Ctrl-C ends the wait, then the stop must still run. */
void fx_cli_clear_interrupt(void);
/* `-o -`: copies fd (the profile at `path`) to stdout and closes fd; a read interrupted by
 * Ctrl-C ends the copy with an error. FX_CLI_OK or the code of the one line it printed. */
int fx_cli_copy_to_stdout(int fd, const char *path);
/* Fills `out` with `n` random bytes as 2n lowercase hex digits (cap >= 2n + 1). */
int fx_cli_random_hex(char *out, size_t cap, size_t n, struct fx_errbuf *eb);
/* The absolute, canonical path of libfxagent.so: `given` (--agent) if not NULL, else
 * $FXAGENT_LIB, else next to the fxprof binary (../agent/ in the build tree, ../lib/ when
 * installed). */
int fx_cli_find_agent(const char *given, char *out, size_t cap, struct fx_errbuf *eb);

/* ---- attach.c: HotSpot's attach protocol (version 1), spoken directly ---- */

#define FX_ATTACH_ARGS    3    /* a version 1 request always carries three arguments */
#define FX_ATTACH_ARG_MAX 1024 /* bytes per argument, JDK 8 to 25 */

struct fx_attach_target {
    pid_t pid;   /* in our pid namespace */
    pid_t tgid;  /* /proc/PID/status Tgid: differs from pid for a thread id */
    pid_t nspid; /* as the JVM sees itself: names its socket and trigger file */
    uid_t uid;   /* effective uid and gid of the target */
    gid_t gid;
    bool same_root;   /* the target sees our file system root */
    char name[64];    /* /proc/PID/status Name */
    char tmpdir[64];  /* the target's /tmp as we reach it: /proc/PID/root/tmp or /tmp */
    uint64_t sig_ign; /* /proc/PID/status SigIgn and SigCgt */
    uint64_t sig_cgt;
    char state;         /* /proc/PID/status State: R, S, D, T, t, Z, ... */
    char perfdata[256]; /* the JVM's hsperfdata file as it sees it, "" if none is mapped */
};

struct fx_attach_reply {
    int status; /* the operation's completion status; 0 = done */
    char *text; /* the rest of the reply, NUL-terminated (owned) */
    size_t len;
};

/* Checks that `pid` exists, that we may signal it, that it runs a HotSpot JVM (libjvm.so is
 * mapped executable: an unreadable map is refused), that it is neither a zombie nor stopped and
 * that it accepts attaching (not -XX:+DisableAttachMechanism), and fills `t`. Sends no signal. */
int fx_attach_target_open(pid_t pid, struct fx_attach_target *t, struct fx_errbuf *eb);
/* Sends operation `op` with up to three arguments (NULL = empty) and reads the whole reply.
 * Starts the target's attach listener first if its socket does not exist (the .attach_pid
 * file and SIGQUIT), waiting up to attach_ms. The reply must arrive within reply_ms. */
int fx_attach_execute(const struct fx_attach_target *t, const char *op,
                      const char *const args[FX_ATTACH_ARGS], int64_t attach_ms, int64_t reply_ms,
                      struct fx_attach_reply *r, struct fx_errbuf *eb);
void fx_attach_reply_destroy(struct fx_attach_reply *r);
/* The path under which the target can load `lib`: `lib` itself when the target opens the same
 * file under that path (through /proc/PID/root); else a copy in the target's /tmp, named after its
 * content (reused when an identical, safely owned copy is there), as "/tmp/fxagent-<hash>.so". */
int fx_attach_library(const struct fx_attach_target *t, const char *lib, char *out, size_t cap,
                      struct fx_errbuf *eb);
/* For a `load` reply: sets *code to N of the "return code: N" line (Agent_OnAttach's return
 * value) and returns true; false when the JVM did not call Agent_OnAttach at all. */
bool fx_attach_load_code(const struct fx_attach_reply *r, int *code);

/* ---- proc.c: what /proc says about a target; reads only, sends nothing ---- */

struct fx_proc_maps {
    bool libjvm;        /* an executable mapping of a file named libjvm.so */
    bool agent;         /* an executable mapping of fxagent (see fx_proc_read_maps) */
    bool launcher;      /* an executable mapping of libjli.so: the java launcher, JVM to be */
    char perfdata[256]; /* the hsperfdata file as the JVM sees it, "" if none is mapped */
};

/* Scans /proc/PID/maps. `agent` is set for a file named libfxagent.so or fxagent-*.so (the
 * copy fxprof places in a container) or the file `lib` itself (NULL: only by name). An
 * unreadable map is an error (FX_ESTATE, FX_ENOTFOUND if the process is gone). */
int fx_proc_read_maps(pid_t pid, const char *lib, struct fx_proc_maps *m, struct fx_errbuf *eb);
/* True when the JVM refuses attaching (-XX:+DisableAttachMechanism), from its hsperfdata's
 * sun.rt.jvmCapabilities, else from its command line and option variables; *source says which. */
bool fx_proc_attach_disabled(pid_t pid, const char *perfdata, const char **source);
/* The string counter `name` of the JVM's hsperfdata (e.g. sun.rt.javaCommand,
 * java.property.java.version) into out; false when there is no such file or counter. */
bool fx_proc_perf_string(pid_t pid, const char *perfdata, const char *name, char *out, size_t cap);

/* Whether pid is still becoming an attachable JVM (m: its maps): FORKED, a shell's child not
 * yet exec'd; STARTING, the java launcher before libjvm.so, or a JVM whose hsperfdata is not yet
 * accessible (HotSpot opens it on entering the live phase, where agents may load), or without
 * hsperfdata one younger than FX_PROC_STARTING_MS without a Notification Thread (JDK 14+
 * starts it right after); else READY (a -Xrs JVM too: it is refused, not waited for). */
#define FX_PROC_STARTING_MS 10000
enum fx_proc_start {
    FX_PROC_READY,
    FX_PROC_FORKED,
    FX_PROC_STARTING
};
enum fx_proc_start fx_proc_starting(pid_t pid, const struct fx_proc_maps *m);

/* ---- list.c: the local HotSpot JVMs, from /proc and hsperfdata; reads only ---- */

struct fx_jvm {
    pid_t pid;
    uid_t uid;
    char user[32];
    char main[256];    /* main class, jar or source file; "?" when nothing says */
    char jdk[64];      /* java.version, "?" when unknown */
    bool agent;        /* fxagent is mapped */
    const char *state; /* the agent's: "-" not loaded, "loaded", "sampling", "stopped" */
};

/* Every JVM whose maps we may read, by pid; *hidden counts the processes named java whose maps
 * we may not read (another user's, unless root). *out is the caller's to fx_free. */
int fx_jvm_scan(struct fx_jvm **out, size_t *n, unsigned *hidden, struct fx_errbuf *eb);
/* Whether `name` is the JVM's main class (or its simple name), jar (with or without .jar) or
 * source file. */
bool fx_jvm_matches(const struct fx_jvm *j, const char *name);

/* ---- http.c: the HTTP/1.1 subset of `fxprof open` ---- */

enum {
    FX_HTTP_INCOMPLETE = -1, /* the head has not fully arrived */
    FX_HTTP_BAD_REQUEST = 400,
    FX_HTTP_URI_TOO_LONG = 414,
    FX_HTTP_TOO_LARGE = 431, /* the head does not fit the buffer */
    FX_HTTP_VERSION = 505,
};

struct fx_http_request {
    char method[16];
    char target[256];          /* the path, without query or fragment */
    char request_headers[256]; /* Access-Control-Request-Headers if a plain list, else "" */
    bool private_network;      /* Access-Control-Request-Private-Network: true */
    bool has_body;
};

/* Parses the request head at the start of buf (len bytes read so far, cap the buffer's size):
 * 0 when complete, FX_HTTP_INCOMPLETE when more bytes are needed, else the status to answer.
 * A request with a body is refused (400). */
int fx_http_parse(const char *buf, size_t len, size_t cap, struct fx_http_request *req);

struct fx_http_response {
    int status;
    const char *content_type; /* NULL: none */
    bool gzip;                /* Content-Encoding: gzip */
    long long content_length;
    bool cors;                 /* Access-Control-* headers (only on the secret path) */
    const char *allow_headers; /* echoed in a preflight's answer */
    bool private_network;      /* answer a Private Network Access preflight */
};

/* Writes the response head (with Connection: close) into out; returns its length, 0 if it
 * does not fit. */
size_t fx_http_head(const struct fx_http_response *res, char *out, size_t cap);
const char *fx_http_reason(int status);

/* ---- reading a processed profile: include/fx_pfile.h (core/convert/) ---- */
#include "fx_pfile.h"

/* ---- subcommands: argv[0] is the subcommand's name ---- */

/* summary_allocs.c: the top allocating and retaining methods of the threads' nativeAllocations
 * (all threads, or the one named), printed when `print`; NULL when the profile has none. */
struct cJSON *fx_summary_allocations(const struct cJSON *root, const char *thread, unsigned ntop,
                                     bool print);

/* summary_extra.c: the views' totals (the first line's figures; --json's "views", each with
 * its unit) and the agent's counters, meta.extra (zero ones only when all). */
void fx_summary_print_totals(const struct cJSON *root, const struct fx_pfile_totals *t);
struct cJSON *fx_summary_json_totals(const struct cJSON *root, const struct fx_pfile_totals *t);
void fx_summary_print_extra(const struct cJSON *root, bool all);
struct cJSON *fx_summary_json_extra(const struct cJSON *root, bool all);

int fx_control_main(int argc, char **argv); /* control.c: start, stop, dump, status */
/* The same without catching interrupts (the caller has); answer != NULL takes the agent's "ok:"
 * text instead of printing it. record -d drives start, status and stop through it. */
int fx_control_run(int argc, char **argv, char *answer, size_t cap);
int fx_attach_raw_main(int argc, char **argv); /* control.c: attach-raw (hidden, for tests) */
int fx_record_main(int argc, char **argv);     /* record.c */

/* record -d (timed.c): options as record parsed them. */
struct fx_timed {
    const char *target; /* PID or NAME */
    int64_t duration_ms;
    const char *interval, *mode, *extra, *agent;
    const char *file; /* never a pattern; "-": stdout */
    bool open;
};
int fx_record_timed(const struct fx_timed *t);
int fx_serve_main(int argc, char **argv);   /* serve.c: open */
int fx_summary_main(int argc, char **argv); /* summary.c */
int fx_convert_main(int argc, char **argv); /* convert.c */
int fx_list_main(int argc, char **argv);    /* list.c */

/* JFR recordings (issue 35). jfr_profile.c: a recording into a profile model (threads, samples,
 * event counts in meta.extra); on failure eb says why and the model holds what was read. */
struct fx_profile;
struct fx_jfr_summary {
    uint64_t chunks, bytes_incomplete, samples, native_samples;
    uint32_t threads;
};
int fx_jfr_profile(const char *path, struct fx_profile *p, struct fx_jfr_summary *sum,
                   struct fx_errbuf *eb);
/* convert_jfr.c: whether convert's input (its first operand) is a JFR recording, by its magic;
 * fxprof convert REC.jfr [-o OUT]; a recording as a temporary profile for summary (tmp names
 * the file to load and remove, FX_CLI_OK or the code of the one line printed). */
bool fx_convert_input_is_jfr(int argc, char **argv);
int fx_convert_jfr_main(int argc, char **argv);
int fx_jfr_to_temp_profile(const char *cmd, const char *path, char *tmp, size_t cap);

#endif
