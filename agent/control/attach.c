/* SPDX-License-Identifier: Apache-2.0 */
/* Agent_OnAttach: `jcmd PID JVMTI.agent_load /path/libfxagent.so "COMMAND[,options]"`, or
 * fxprof (docs/ATTACH.md). One agent per JVM: the loaded image that is active (started at
 * -agentpath or by an earlier attach) takes every command. HotSpot hands the same image again
 * for the same file (the dynamic loader dedups by inode); a copy loaded from another file finds
 * the active one by its exported entry fxagent_forward_v1 and forwards the command unchanged.
 * The outcome is one line, given three ways: Agent_OnAttach's return code (jcmd prints
 * "return code: N"), the reply= file (fxprof), and the JVM's stderr. A refused command changes
 * nothing; an image that has started anything is pinned, because HotSpot unloads a library
 * whose Agent_OnAttach fails and ours may have callbacks and a signal handler installed. */
#include "control.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_options.h"

/* --- options as given --- */

/* reply= as written, for when the list as a whole did not parse. */
static void raw_reply(const char *text, char *out, size_t cap)
{
    out[0] = '\0';
    for (const char *p = text; p != NULL && *p != '\0';) {
        size_t len = strcspn(p, ",");
        if (len > 6 && !strncmp(p, "reply=", 6))
            snprintf(out, cap, "%.*s", (int)(len - 6), p + 6);
        p = p[len] == ',' ? p + len + 1 : NULL;
    }
}

struct action_rule {
    enum fx_action action;
    const char *name;
    const char *const *allowed; /* NULL: every option */
    const char *list;
};

static const char *const stop_keys[] = {"file", "quiet", "reply", NULL};
static const char *const dump_keys[] = {"file", "reset", "quiet", "reply", NULL};
static const char *const status_keys[] = {"quiet", "reply", NULL};

static const struct action_rule rules[] = {
        {FX_ACTION_START, "start", NULL, NULL},
        {FX_ACTION_STOP, "stop", stop_keys, "file, quiet, reply"},
        {FX_ACTION_DUMP, "dump", dump_keys, "file, reset, quiet, reply"},
        {FX_ACTION_STATUS, "status", status_keys, "quiet, reply"},
        {FX_ACTION_HELP, "help", status_keys, "quiet, reply"},
};

static const struct action_rule *rule_of(enum fx_action a)
{
    for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
        if (rules[i].action == a)
            return &rules[i];
    }
    return NULL;
}

static bool allowed(const char *const *keys, const char *key, size_t len)
{
    for (; *keys != NULL; keys++) {
        if (strlen(*keys) == len && !strncmp(*keys, key, len))
            return true;
    }
    return false;
}

/* Options that mean nothing for this command are refused, not ignored. */
static int check_keys(const struct action_rule *r, const struct fx_options *o, const char *text,
                      struct fx_outcome *out)
{
    if (o->validate)
        return fx_outcome_set(out, FX_RC_USAGE,
                              "option 'validate' needs the JVM started with -agentpath");
    if (r->action == FX_ACTION_START && o->reset)
        return fx_outcome_set(out, FX_RC_USAGE, "option 'reset' applies to dump only");
    if (r->allowed == NULL)
        return FX_RC_OK;
    for (const char *p = text; p != NULL && *p != '\0';) {
        size_t len = strcspn(p, ","), klen = strcspn(p, ",=");
        bool is_action = false;
        for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
            is_action |= strlen(rules[i].name) == len && !strncmp(rules[i].name, p, len);
        if (!is_action && !allowed(r->allowed, p, klen))
            return fx_outcome_set(
                    out, FX_RC_USAGE,
                    "option '%.*s' does not apply to %s (only start sets it); %s accepts: %s",
                    (int)klen, p, r->name, r->name, r->list);
        p = p[len] == ',' ? p + len + 1 : NULL;
    }
    return FX_RC_OK;
}

/* --- the outcome --- */

/* fxprof created the file (O_EXCL, 0600) and reads it back; we only append one line with one
 * write(2). No O_CREAT, no symlink, no FIFO or device (O_NONBLOCK keeps a FIFO from blocking
 * the attach listener, and the type is checked before writing). */
static void reply_to(const char *path, const char *line)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        fx_log("reply=%s: cannot open it: %s", path, strerror(errno));
        return;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        fx_log("reply=%s: not a regular file; no reply written", path);
    } else if (write(fd, line, strlen(line)) != (ssize_t)strlen(line)) {
        fx_log("reply=%s: the reply could not be written: %s", path, strerror(errno));
    }
    close(fd);
}

static void tell(const struct fx_outcome *out, const char *what, const char *reply, bool quiet)
{
    char line[sizeof(out->text) + 16];
    snprintf(line, sizeof(line), "%s: %s\n", out->code == FX_RC_OK ? "ok" : "error", out->text);
    if (reply != NULL && reply[0] != '\0')
        reply_to(reply, line);
    if (out->code != FX_RC_OK)
        fx_log("%s: error: %s", what, out->text); /* a refusal is never silent */
    else if (!quiet)
        fx_log("%s: %s", what, out->text);
}

/* HotSpot unloads a library whose Agent_OnAttach fails: from the first start on, ours must
 * stay (JVMTI callbacks, the SIGPROF handler, agent threads all point into it). */
static void pin_self(void)
{
    Dl_info info;
    if (dladdr((void *)pin_self, &info) == 0 || info.dli_fname == NULL ||
        dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) == NULL)
        fx_log("warning: could not pin libfxagent.so in memory: %s", dlerror());
}

static int run_parsed(JavaVM *vm, struct fx_options *o, const char *text, struct fx_outcome *out)
{
    const struct action_rule *r = rule_of(o->action);
    if (r == NULL)
        return fx_outcome_set(
                out, FX_RC_USAGE,
                "no command: give start, stop, dump or status first (e.g. start,interval=10ms)");
    if (check_keys(r, o, text, out) != FX_RC_OK)
        return out->code;
    if (o->action == FX_ACTION_HELP) {
        fputs(fx_options_help(), stderr);
        return fx_outcome_set(out, FX_RC_OK, "the option list is on the JVM's standard error");
    }
    if (o->action == FX_ACTION_START && !fx_commands_active())
        pin_self();
    return fx_commands_run(vm, o, text, out);
}

static jint run_here(JavaVM *vm, const char *options)
{
    const char *text = options != NULL ? options : "";
    struct fx_options o;
    struct fx_errbuf eb = {{0}};
    struct fx_outcome out = {0};
    char reply[4096];
    if (fx_options_parse(text, &o, &eb) != FX_OK) {
        raw_reply(text, reply, sizeof(reply));
        fx_outcome_set(&out, FX_RC_USAGE, "%s", eb.msg);
        tell(&out, "attach", reply, false);
        return out.code;
    }
    const struct action_rule *r = rule_of(o.action);
    bool quiet = o.quiet;
    snprintf(reply, sizeof(reply), "%s", o.reply != NULL ? o.reply : "");
    run_parsed(vm, &o, text, &out);
    tell(&out, r != NULL ? r->name : "attach", reply, quiet);
    fx_options_destroy(&o); /* after a first start, the agent took its strings */
    return out.code;
}

/* --- another copy of the library --- */

JNIEXPORT jint JNICALL fxagent_forward_v1(JavaVM *vm, char *options, jint *handled);

JNIEXPORT jint JNICALL fxagent_forward_v1(JavaVM *vm, char *options, jint *handled)
{
    if (!fx_commands_active()) {
        *handled = 0;
        return 0;
    }
    *handled = 1;
    return run_here(vm, options);
}

typedef jint (*forward_fn)(JavaVM *vm, char *options, jint *handled);

struct forwarding {
    JavaVM *vm;
    char *options;
    jint handled, rc;
};

static bool forward_to(void *sym, const char *object, void *arg)
{
    (void)object;
    struct forwarding *a = arg;
    a->rc = ((forward_fn)sym)(a->vm, a->options, &a->handled);
    return a->handled != 0;
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    struct forwarding a = {vm, options, 0, 0};
    if (!fx_commands_active() && fx_copies_find("fxagent_forward_v1", forward_to, &a))
        return a.rc; /* the first other copy that is active took the command */
    return run_here(vm, options);
}
