/* SPDX-License-Identifier: Apache-2.0 */
/* What /proc tells fxprof about a target before anything is sent to it: whether it runs HotSpot
 * (an executable mapping of libjvm.so), whether fxagent is already mapped, and whether the JVM
 * accepts attaching at all (its hsperfdata's sun.rt.jvmCapabilities, else its command line and
 * option variables). A leaf: reads files, sends nothing, calls nothing else of fxprof. */
#include "fxprof.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fx_alloc.h"

#define PERFDATA_MAX  ((size_t)16 << 20) /* PerfDataMemorySize is 32 to 64 KiB by default */
#define PERF_MAGIC    0xcafec0c0u
#define PERF_PROLOGUE 32
#define PERF_ENTRY    20
#define ENVIRON_MAX   ((size_t)1 << 20)

/* ---- /proc/PID/maps ---- */

struct map_line {
    char perms[8];
    unsigned dev_major, dev_minor;
    unsigned long long inode;
    const char *path; /* "" for an anonymous mapping; " (deleted)" cut off */
    bool deleted;
};

static bool parse_map_line(char *line, struct map_line *m)
{
    int end = 0;
    line[strcspn(line, "\n")] = '\0';
    if (sscanf(line, "%*x-%*x %7s %*x %x:%x %llu %n", m->perms, &m->dev_major, &m->dev_minor,
               &m->inode, &end) < 4 ||
        end == 0)
        return false;
    char *path = line + end;
    size_t len = strlen(path);
    static const char del[] = " (deleted)";
    m->deleted = len >= sizeof del - 1 && !strcmp(path + len - (sizeof del - 1), del);
    if (m->deleted)
        path[len - (sizeof del - 1)] = '\0';
    m->path = path;
    return true;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* True when the mapped file is an fxagent: named like the installed library or like the copy
 * fxprof places in a container, or the very file `lib` (by path, or by device and inode). */
static bool is_agent(const struct map_line *m, const char *lib, const struct stat *lib_st)
{
    const char *b = base_name(m->path);
    if (!strcmp(b, "libfxagent.so") || !fnmatch("fxagent-*.so", b, 0))
        return true;
    if (lib && !strcmp(m->path, lib))
        return true;
    return lib_st && m->inode == (unsigned long long)lib_st->st_ino &&
           makedev(m->dev_major, m->dev_minor) == lib_st->st_dev;
}

int fx_proc_read_maps(pid_t pid, const char *lib, struct fx_proc_maps *out, struct fx_errbuf *eb)
{
    memset(out, 0, sizeof *out);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    /* The kernel checks access at open or at the first read, depending on its version. */
    char line[PATH_MAX + 128];
    FILE *f = fopen(path, "re");
    if (f)
        errno = 0;
    bool any = f && fgets(line, sizeof line, f);
    if (!f || (!any && errno)) {
        int err = errno;
        fx_errbuf_set(
                eb, "cannot read %s (%s), so fxprof cannot tell whether it is a JVM: not signalled",
                path, strerror(err));
        if (f)
            fclose(f);
        return err == ENOENT || err == ESRCH ? FX_ENOTFOUND : FX_ESTATE;
    }
    struct stat lib_st;
    bool have_lib = lib && stat(lib, &lib_st) == 0;
    for (; any; any = fgets(line, sizeof line, f) != NULL) {
        struct map_line m;
        if (!parse_map_line(line, &m) || m.path[0] != '/')
            continue;
        /* Executable: a data file that merely has the name does not make a JVM. */
        if (strchr(m.perms, 'x') && !strcmp(base_name(m.path), "libjvm.so"))
            out->libjvm = true;
        if (strchr(m.perms, 'x') && is_agent(&m, lib, have_lib ? &lib_st : NULL))
            out->agent = true;
        if (strchr(m.perms, 'x') && !strcmp(base_name(m.path), "libjli.so"))
            out->launcher = true;
        if (!m.deleted && !out->perfdata[0] && strstr(m.path, "/hsperfdata_") &&
            strlen(m.path) < sizeof out->perfdata)
            strcpy(out->perfdata, m.path);
    }
    fclose(f);
    return FX_OK;
}

/* ---- hsperfdata: the JVM's own word on whether it accepts attaching ---- */

static uint32_t u32(const unsigned char *p, bool little)
{
    return little ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                            (uint32_t)p[3] << 24
                  : (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 |
                            (uint32_t)p[0] << 24;
}

static int read_file(const char *path, size_t max, unsigned char **buf, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
        if (fd >= 0)
            close(fd);
        return FX_EIO;
    }
    size_t cap = st.st_size > 0 ? (size_t)st.st_size : max; /* /proc files report size 0 */
    unsigned char *b = fx_malloc(cap + 1);
    size_t n = 0;
    ssize_t r = 0;
    while (b && n < cap && (r = read(fd, b + n, cap - n)) > 0)
        n += (size_t)r;
    close(fd);
    if (!b || r < 0) {
        fx_free(b);
        return FX_EIO;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return FX_OK;
}

/* The value of the string counter `name` (a NUL-terminated byte vector), or NULL. Every offset
 * is checked against the file's size: the file is the target's to write. */
static const char *perf_string(const unsigned char *d, size_t len, const char *name)
{
    if (len < PERF_PROLOGUE || u32(d, false) != PERF_MAGIC || d[5] != 2 || !d[7])
        return NULL; /* magic (always big-endian), major version 2, accessible */
    bool little = d[4] == 1;
    size_t off = u32(d + 24, little), n = u32(d + 28, little);
    for (size_t i = 0; i < n && off <= len - PERF_ENTRY; i++) {
        size_t elen = u32(d + off, little), name_off = u32(d + off + 4, little);
        size_t vlen = u32(d + off + 8, little), data_off = u32(d + off + 16, little);
        if (elen < PERF_ENTRY || elen > len - off || name_off >= elen || data_off > elen)
            return NULL;
        const char *ename = (const char *)d + off + name_off;
        if (memchr(ename, '\0', elen - name_off) && !strcmp(ename, name)) {
            const char *v = (const char *)d + off + data_off;
            return d[off + 12] == 'B' && vlen > 0 && vlen <= elen - data_off &&
                                   memchr(v, '\0', vlen)
                           ? v
                           : NULL;
        }
        off += elen;
    }
    return NULL;
}

bool fx_proc_perf_string(pid_t pid, const char *perfdata, const char *name, char *out, size_t cap)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "/proc/%d/root%s", (int)pid, perfdata);
    unsigned char *d;
    size_t len;
    if (!perfdata[0] || read_file(path, PERFDATA_MAX, &d, &len) != FX_OK)
        return false;
    const char *v = perf_string(d, len, name);
    if (v)
        snprintf(out, cap, "%s", v);
    fx_free(d);
    return v != NULL;
}

/* 1: attach supported, 0: not, -1: the file does not say. */
static int perfdata_attach(pid_t pid, const char *perfdata)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "/proc/%d/root%s", (int)pid, perfdata);
    unsigned char *d;
    size_t len;
    if (!perfdata[0] || read_file(path, PERFDATA_MAX, &d, &len) != FX_OK)
        return -1;
    /* '0' or '1' per capability; the first is "attach on demand" (!DisableAttachMechanism). */
    const char *caps = perf_string(d, len, "sun.rt.jvmCapabilities");
    int r = caps && (caps[0] == '0' || caps[0] == '1') ? caps[0] - '0' : -1;
    fx_free(d);
    return r;
}

/* ---- without hsperfdata: the options the JVM was given, as far as /proc shows them ---- */

/* Updates *disabled from one option, the last one winning as in HotSpot. */
static void scan_option(const char *o, int *disabled)
{
    static const char flag[] = "DisableAttachMechanism";
    if (!strncmp(o, "-XX:", 4) && (o[4] == '+' || o[4] == '-') && !strcmp(o + 5, flag))
        *disabled = o[4] == '+';
    else if (!strncmp(o, "-XX:", 4) && !strncmp(o + 4, flag, sizeof flag - 1) &&
             o[4 + sizeof flag - 1] == '=')
        *disabled = !strcmp(o + 4 + sizeof flag, "true") || !strcmp(o + 4 + sizeof flag, "1");
}

/* The options of a variable's value, split at white space as the JVM splits them. */
static void scan_variable(const char *value, int *disabled)
{
    char opt[256];
    while (value && *value) {
        value += strspn(value, " \t\n\r");
        size_t n = strcspn(value, " \t\n\r");
        if (n > 0 && n < sizeof opt) {
            memcpy(opt, value, n);
            opt[n] = '\0';
            scan_option(opt, disabled);
        }
        value += n;
    }
}

static const char *env_value(const unsigned char *env, size_t len, const char *name)
{
    size_t nl = strlen(name);
    for (size_t i = 0; i < len; i += strlen((const char *)env + i) + 1)
        if (!strncmp((const char *)env + i, name, nl) && env[i + nl] == '=')
            return (const char *)env + i + nl + 1;
    return NULL;
}

/* -1 unknown (unreadable), 0 or 1: JAVA_TOOL_OPTIONS, then JDK_JAVA_OPTIONS and the command
 * line, then _JAVA_OPTIONS, the order in which HotSpot applies them. */
static int options_disabled(pid_t pid)
{
    char path[64];
    unsigned char *env, *cmd;
    size_t elen, clen;
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    if (read_file(path, ENVIRON_MAX, &env, &elen) != FX_OK)
        return -1;
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    if (read_file(path, ENVIRON_MAX, &cmd, &clen) != FX_OK) {
        fx_free(env);
        return -1;
    }
    int disabled = 0;
    scan_variable(env_value(env, elen, "JAVA_TOOL_OPTIONS"), &disabled);
    scan_variable(env_value(env, elen, "JDK_JAVA_OPTIONS"), &disabled);
    for (size_t i = 0; i < clen; i += strlen((const char *)cmd + i) + 1)
        scan_option((const char *)cmd + i, &disabled);
    scan_variable(env_value(env, elen, "_JAVA_OPTIONS"), &disabled);
    fx_free(env);
    fx_free(cmd);
    return disabled;
}

bool fx_proc_attach_disabled(pid_t pid, const char *perfdata, const char **source)
{
    int attach = perfdata_attach(pid, perfdata);
    if (attach >= 0) {
        *source = "its hsperfdata says attaching is not supported";
        return attach == 0;
    }
    *source = "its command line or JAVA_TOOL_OPTIONS/JDK_JAVA_OPTIONS/_JAVA_OPTIONS say so";
    return options_disabled(pid) == 1;
}

/* ---- a JVM still starting ---- */

/* /proc/PID/exe's target into out ("" when unreadable: another user's process). */
static void exe_of(pid_t pid, char *out, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(path, out, cap - 1);
    out[n > 0 ? n : 0] = '\0';
}

/* From /proc/PID/stat: the parent's pid, the name (comm) and the start time in clock ticks
 * since boot; false when the process is gone. */
static bool stat_of(pid_t pid, pid_t *ppid, char *comm, size_t cap, unsigned long long *start)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    bool ok = f && fgets(line, sizeof line, f);
    if (f)
        fclose(f);
    char *open = ok ? strchr(line, '(') : NULL, *close = ok ? strrchr(line, ')') : NULL;
    int p;
    /* after the name: state, ppid, 17 fields, starttime (field 22) */
    if (!open || !close || close < open ||
        sscanf(close + 1,
               " %*c %d %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
               &p, start) != 2)
        return false;
    snprintf(comm, cap, "%.*s", (int)(close - open - 1), open + 1);
    *ppid = (pid_t)p;
    return true;
}

/* How long ago pid started, in ms; -1 when unknown. */
static int64_t age_ms(pid_t pid)
{
    char comm[32];
    pid_t ppid;
    unsigned long long start;
    double up;
    FILE *f = fopen("/proc/uptime", "re");
    bool ok = f && fscanf(f, "%lf", &up) == 1;
    if (f)
        fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    if (!ok || hz <= 0 || !stat_of(pid, &ppid, comm, sizeof comm, &start))
        return -1;
    return (int64_t)(up * 1000) - (int64_t)(start * 1000 / (unsigned long long)hz);
}

/* A child a shell forked for `java ... &` is the shell until it execs: same file, same name. */
static bool unexeced_fork(pid_t pid)
{
    char exe[PATH_MAX], pexe[PATH_MAX], comm[32], pcomm[32];
    pid_t ppid, pp;
    unsigned long long start;
    if (!stat_of(pid, &ppid, comm, sizeof comm, &start) || ppid <= 1 ||
        !stat_of(ppid, &pp, pcomm, sizeof pcomm, &start))
        return false;
    exe_of(pid, exe, sizeof exe);
    exe_of(ppid, pexe, sizeof pexe);
    return exe[0] && !strcmp(exe, pexe) && !strcmp(comm, pcomm);
}

/* 1: the hsperfdata's prologue says accessible, 0: not yet (or not even its magic), -1: none. */
static int perf_accessible(pid_t pid, const char *perfdata)
{
    char path[PATH_MAX + 32];
    unsigned char d[8];
    snprintf(path, sizeof path, "/proc/%d/root%s", (int)pid, perfdata);
    int fd = perfdata[0] ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
    if (fd < 0)
        return -1;
    ssize_t n = pread(fd, d, sizeof d, 0);
    close(fd);
    return n == (ssize_t)sizeof d && u32(d, false) == PERF_MAGIC && d[7];
}

/* Whether one of pid's threads is named `name` (HotSpot names its threads from JDK 9 on). */
static bool has_thread(pid_t pid, const char *name)
{
    char path[96], comm[32];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    struct dirent *e;
    bool found = false;
    while (d && !found && (e = readdir(d)) != NULL) {
        snprintf(path, sizeof path, "/proc/%d/task/%.16s/comm", (int)pid, e->d_name);
        FILE *f = e->d_name[0] != '.' ? fopen(path, "re") : NULL;
        if (f && fgets(comm, sizeof comm, f)) {
            comm[strcspn(comm, "\n")] = '\0';
            found = !strcmp(comm, name);
        }
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return found;
}

enum fx_proc_start fx_proc_starting(pid_t pid, const struct fx_proc_maps *m)
{
    if (!m->libjvm) {
        char exe[PATH_MAX];
        exe_of(pid, exe, sizeof exe);
        if (m->launcher || !strcmp(base_name(exe), "java"))
            return FX_PROC_STARTING;
        return unexeced_fork(pid) ? FX_PROC_FORKED : FX_PROC_READY;
    }
    int accessible = perf_accessible(pid, m->perfdata);
    if (accessible >= 0)
        return accessible ? FX_PROC_READY : FX_PROC_STARTING;
    /* No hsperfdata (-XX:-UsePerfData): JDK 14+ starts its Notification Thread right after the
     * live phase begins (seen on 17 and 25); older JDKs have none, so age decides. */
    int64_t age = age_ms(pid);
    return has_thread(pid, "Notification Th") || age < 0 || age >= FX_PROC_STARTING_MS
                   ? FX_PROC_READY
                   : FX_PROC_STARTING;
}
