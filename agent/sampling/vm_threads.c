/* SPDX-License-Identifier: Apache-2.0 */
/* The process's threads that are not Java threads (issue 16, items 4 and 5): the JVM's GC
 * workers, C1/C2 compiler threads, VM thread, and threads a JNI library created without
 * attaching them. Owns finding them, their category and their stack bounds; threads.c registers
 * and arms them like Java threads (native_only: the handler walks their native stack and never
 * calls AsyncGetCallTrace), so stop, start and the buffer protocol treat them alike.
 *
 * Finding: /proc/self/task lists every thread; a tid not in the tid table (no Java thread, not
 * ours yet) is registered, named from /proc/self/task/TID/comm (written out in full
 * where the JVM's name is known: core/symbols/jvm_names.c); after a start's first scan, only
 * when the previous scan saw it unregistered too. A Java thread is in /proc a moment before its
 * ThreadStart and after its ThreadEnd: 200 threads started at once had 113 caught so (and not
 * armable, exiting), which the second sighting avoids; a new thread has its own name by then. In
 * cpu and itimer modes only (wall mode signals Java threads by their JVMTI state). At each start,
 * then on the drain thread every SCAN_EVERY_NS (longer where a scan is slow: SCAN_BUDGET), so
 * threads started later (GC workers start lazily) join within that; a tid that left /proc and that
 * tgkill(0) says is gone is unregistered (its timer or perf event closed, then the drain frees it).
 * A thread that ends is never unregistered while it runs: its handler could hold it. A JNI thread
 * attached to the JVM later becomes a Java thread at its ThreadStart, which replaces this entry
 * (threads.c), so no thread is sampled twice. At most VM_THREADS_MAX are registered; the others are
 * counted ("left out").
 *
 * Stack bounds (the native walk reads only within them): unknown at registration, when nothing
 * says where the thread's stack pointer is. So before a scan registers a thread it reads the
 * process's private read-write mappings (the stack table, fx_textmap_read_rw) and publishes them
 * (fx_native.stacks); the thread was listed in /proc before that read, so its stack is mapped in
 * the table, and any later table is newer still: its handler finds the mapping holding its stack
 * pointer there from its first sample on (native_walk.c). A scan whose table cannot be published
 * (the previous one still has readers) registers nobody new: they wait for the next scan
 * (counted); an unreadable maps file publishes no table (the walks stop after the leaf, counted
 * as "stack bounds unknown"). The handler also stores the stack pointer it interrupted
 * (seen_sp), and the next scan sets the mapping of the table holding it as the thread's own
 * bounds (hi, then lo: sample.h), so later samples need no lookup. The table is read only when a
 * scan has a thread to register: 2-3 reads per run of it.vm_threads' workloads, whose scans
 * took 84-121 us on average, as before (docs/DESIGN-NOTES.md, "The JVM's own threads").
 *
 * Category (docs/DESIGN-NOTES.md, "The JVM's own threads"): chosen once from the thread's name
 * by the prefix table `rules`; every frame of such a thread is in that category, so the
 * activity graph colours GC and JIT time whatever library the leaf is in.
 *
 * Limits: a tid reused by a new thread between two scans keeps the old entry (its perf event or
 * timer belongs to the dead thread): the new thread is not sampled. A new thread's comm may
 * still be its creator's for a moment; the name and category are those seen at the scan.
 * Leaf module: calls threads.c, the stack table's slot (native_walk.h), base and libc only. */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_jvm_names.h"
#include "fx_sort.h"
#include "native_walk.h"

#define VM_THREADS_MAX   256       /* registered at once */
#define SCAN_EVERY_NS    100000000 /* 100 ms: ~30-60 us per scan (docs/BENCHMARKS.md) */
#define SCAN_BUDGET      500       /* scans take at most 1/500 of a core (0.2 %) */
#define SCAN_WAIT_MAX_NS 2000000000
#define TIDS_MAX         8192 /* tids read from /proc per scan; more: the rest next time */
#define PENDING_MAX      512  /* unregistered tids remembered from one scan to the next */
#define GC_CONCURRENT    4    /* subcategories of core/model/profile_tables.c */
#define JIT_C1           1
#define JIT_C2           2

struct rule {
    const char *prefix;
    uint8_t category, subcategory;
};

/* HotSpot's thread names (comm keeps 15 bytes: "C2 CompilerThre"); first match wins. A name
 * matching none stays in the Native category (a JNI library's thread, the launcher). */
static const struct rule rules[] = {
        {"G1 Conc", FX_CAT_GC, GC_CONCURRENT},
        {"G1 Main Marker", FX_CAT_GC, GC_CONCURRENT},
        {"G1 Refine", FX_CAT_GC, GC_CONCURRENT},
        {"GC Thread", FX_CAT_GC, 0},
        {"G1 ", FX_CAT_GC, 0},
        {"ParGC", FX_CAT_GC, 0},
        {"Parallel GC", FX_CAT_GC, 0},
        {"Shenandoah", FX_CAT_GC, 0},
        {"ZDirector", FX_CAT_GC, 0},
        {"ZDriver", FX_CAT_GC, 0},
        {"ZWorker", FX_CAT_GC, 0},
        {"ZStat", FX_CAT_GC, 0},
        {"ZUnmapper", FX_CAT_GC, 0},
        {"ZUncommit", FX_CAT_GC, 0},
        {"ZRuntimeWorker", FX_CAT_GC, 0},
        {"C1 Compiler", FX_CAT_JIT, JIT_C1},
        {"C2 Compiler", FX_CAT_JIT, JIT_C2},
        {"JVMCI", FX_CAT_JIT, 0},
        {"Compiler", FX_CAT_JIT, 0},
        {"Sweeper", FX_CAT_JIT, 0},
        {"VM ", FX_CAT_VM, 0}, /* "VM Thread", "VM Periodic Tas" */
        {"Service Thread", FX_CAT_VM, 0},
        {"Monitor Deflati", FX_CAT_VM, 0},
};

static struct {
    pthread_mutex_t lock; /* a start (control thread) and the drain may both scan */
    bool active;          /* cpu or itimer mode, between a start and a stop */
    DIR *task_dir;        /* /proc/self/task while active (read_tids) */
    int64_t next_scan_ns;
    pid_t tids[VM_THREADS_MAX]; /* registered by us and not seen gone */
    unsigned n;
    pid_t pending[PENDING_MAX], next[PENDING_MAX]; /* unregistered at the last scan, sorted */
    unsigned n_pending, n_next;
    bool first; /* the start's first scan: registers at the first sighting */
    bool table; /* this scan published a stack table: it may register threads */
    uint64_t scans, scan_ns, scan_max_ns, registered, ended, became_java, failed, bounds;
    uint64_t not_armed; /* registered, but no timer could be made: ended meanwhile */
    uint64_t table_reads, table_errors, table_busy; /* the stack table: read, failed, deferred */
    char table_error[200];                          /* its last read's error */
    uint64_t left_out, left_out_max;                /* at the last scan, and the most at once */
    uint64_t scan_wait_max_ns;             /* the longest wait between two scans (adaptive) */
    uint64_t names_full, names_cut;        /* comms written out in full, and kept with "…" */
    uint64_t compilers, compilers_unknown; /* C1/C2 threads whose JavaThread was found, not */
} vt = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void classify(const char *name, uint8_t *cat, uint8_t *sub)
{
    *cat = *sub = 0;
    for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
        if (strncmp(name, rules[i].prefix, strlen(rules[i].prefix)) == 0) {
            *cat = rules[i].category;
            *sub = rules[i].subcategory;
            return;
        }
    }
}

/* The thread's comm, or "?" if it cannot be read (the thread just ended). */
static void comm_of(pid_t tid, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, cap - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        n = snprintf(buf, cap, "?");
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
}

/* What the tid is registered as: 0 nothing, 1 a native_only thread, 2 a Java thread. Under the
 * registry lock: the drain frees no struct meanwhile. */
static int kind_of(pid_t tid)
{
    fx_threads_lock();
    struct fx_thread *t = fx_signal_handler_lookup_sigsafe(tid);
    int k = t == NULL ? 0 : t->native_only ? 1 : 2;
    fx_threads_unlock();
    return k;
}

static int cmp_tid(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

/* Every tid of /proc/self/task, sorted, into `out` (TIDS_MAX); -1 if it cannot be read. Under
 * vt.lock. The directory stays open while sampling runs and is read again from its start
 * (rewinddir: procfs lists the threads anew): its open, buffer and close at every scan were a
 * third of a scan's CPU on javac (issue 31). Closed at the stop (fx_vm_threads_stop). */
static int read_tids(pid_t *out)
{
    if (vt.task_dir == NULL && (vt.task_dir = opendir("/proc/self/task")) == NULL)
        return -1;
    rewinddir(vt.task_dir);
    int n = 0;
    struct dirent *e;
    errno = 0;
    while (n < TIDS_MAX && (e = readdir(vt.task_dir)) != NULL) {
        long v = e->d_name[0] >= '1' && e->d_name[0] <= '9' ? strtol(e->d_name, NULL, 10) : 0;
        if (v > 0)
            out[n++] = (pid_t)v;
    }
    if (errno != 0 && n < TIDS_MAX) { /* a failed read: opened again at the next scan */
        closedir(vt.task_dir);
        vt.task_dir = NULL;
        return -1;
    }
    fx_sort(out, (size_t)n, sizeof(*out), cmp_tid);
    return n;
}

/* Under vt.lock: reads and publishes the stack table (see the file comment); false if it could not
 * be published (the one before still has readers). An unreadable maps file publishes none. */
static bool publish_stacks(void)
{
    struct fx_errbuf eb = {{0}};
    struct fx_textmap *st = NULL;
    if (fx_textmap_slot_reclaim(&fx_native.stacks)) {
        vt.table_busy++;
        return false;
    }
    if (fx_textmap_read_rw("/proc/self/maps", &st, &eb) != FX_OK) {
        vt.table_errors++;
        snprintf(vt.table_error, sizeof(vt.table_error), "%s", eb.msg);
    }
    vt.table_reads += st != NULL;
    if (fx_textmap_slot_publish(&fx_native.stacks, st) == FX_OK) /* reclaimed: cannot be full */
        return true;
    fx_textmap_free(st);
    vt.table_busy++;
    return false;
}

/* How many of the live tids that are not Java threads have this comm (the name of a numbered
 * family's thread, fx_jvm_names_thread). Only for such a thread: one more /proc read a thread. */
static unsigned same_comm(const char *comm, const pid_t *live, int n_live)
{
    unsigned k = 0;
    char other[32];
    for (int i = 0; i < n_live; i++) {
        if (kind_of(live[i]) == 2)
            continue;
        comm_of(live[i], other, sizeof(other));
        k += strcmp(other, comm) == 0;
    }
    return k;
}

/* Under vt.lock: a registered C1/C2 compiler thread's JavaThread and stack (compile_task.c),
 * given to its handler, which then reads what it compiles (issue 32). The struct is written
 * under the registry lock: the drain cannot free it meanwhile. */
static void compiler_thread(pid_t tid)
{
    uintptr_t lo = 0, hi = 0, jt = fx_compile_task_thread_of(tid, &lo, &hi);
    vt.compilers += jt != 0;
    vt.compilers_unknown += jt == 0;
    fx_threads_lock();
    struct fx_thread *t = jt != 0 ? fx_signal_handler_lookup_sigsafe(tid) : NULL;
    if (t != NULL && __atomic_load_n(&t->stack_lo, __ATOMIC_RELAXED) == 0) {
        __atomic_store_n(&t->stack_hi, hi, __ATOMIC_RELEASE); /* hi, then lo: sample.h */
        __atomic_store_n(&t->stack_lo, lo, __ATOMIC_RELEASE);
    }
    if (t != NULL)
        __atomic_store_n(&t->vm_thread, jt, __ATOMIC_RELEASE);
    fx_threads_unlock();
}

/* Under vt.lock: a tid not yet registered, named by its comm, written out in full where HotSpot's
 * name is known (fx_jvm_names_thread). */
static void add_one(pid_t tid, pid_t self, const pid_t *live, int n_live)
{
    char name[32], full[64];
    if (tid == self || fx_signal_handler_lookup_sigsafe(tid) != NULL)
        return;
    if (!vt.first && !bsearch(&tid, vt.pending, vt.n_pending, sizeof(pid_t), cmp_tid)) {
        if (vt.n_next < PENDING_MAX) /* tids come sorted: so does next */
            vt.next[vt.n_next++] = tid;
        return;
    }
    comm_of(tid, name, sizeof(name));
    if (fx_threads_is_own(name)) /* the agent's own threads ("fxagent drain", "fxagent running") */
        return;
    if (vt.n == VM_THREADS_MAX) {
        vt.left_out++;
        return;
    }
    if (!vt.table && !(vt.table = publish_stacks())) {
        if (vt.n_next < PENDING_MAX) /* the next scan registers it */
            vt.next[vt.n_next++] = tid;
        return;
    }
    uint8_t cat, sub;
    classify(name, &cat, &sub);
    unsigned same = fx_jvm_names_numbered(name) ? same_comm(name, live, n_live) : 0;
    enum fx_thread_name_kind kind = fx_jvm_names_thread(name, same, full, sizeof(full));
    vt.names_full += kind == FX_THREAD_NAME_FULL || kind == FX_THREAD_NAME_NUMBERED;
    vt.names_cut += kind == FX_THREAD_NAME_CUT;
    char *copy = fx_strdup(full);
    int rc = copy != NULL ? fx_threads_start_native(tid, copy, cat, sub) : FX_ENOMEM;
    if (kind_of(tid) == 1) { /* registered, armed or not (a thread gone meanwhile) */
        vt.tids[vt.n++] = tid;
        vt.registered++;
        vt.not_armed += rc != FX_OK;
        if (rc == FX_OK && cat == FX_CAT_JIT && (sub == JIT_C1 || sub == JIT_C2))
            compiler_thread(tid);
    } else if (rc != FX_ESTATE) {
        vt.failed++;
    }
}

/* Under vt.lock: drops the tids that are gone (from /proc, and by tgkill) or are Java threads
 * now. `live` sorted, or NULL: ask tgkill alone. */
static void prune(const pid_t *live, int n_live)
{
    pid_t pid = getpid();
    unsigned kept = 0;
    for (unsigned i = 0; i < vt.n; i++) {
        pid_t tid = vt.tids[i];
        bool listed = live != NULL && bsearch(&tid, live, (size_t)n_live, sizeof(pid_t), cmp_tid);
        bool gone = !listed && syscall(SYS_tgkill, pid, tid, 0) != 0 && errno == ESRCH;
        if (gone) {
            if (fx_threads_end_native(tid))
                vt.ended++;
            else
                vt.became_java++; /* its ThreadStart replaced our entry, then it ended */
            continue;
        }
        int k = kind_of(tid);
        if (k != 1) {
            vt.became_java += k == 2;
            continue;
        }
        vt.tids[kept++] = tid;
    }
    vt.n = kept;
}

/* Under vt.lock: own stack bounds for the threads whose handler left a stack pointer, from the
 * stack table (read after each was registered, so it holds their stacks). The struct is read
 * under the registry lock: the drain cannot free it meanwhile. */
static void find_bounds(void)
{
    uint32_t ticket;
    const struct fx_textmap *st = fx_textmap_slot_enter_sigsafe(&fx_native.stacks, &ticket);
    for (unsigned i = 0; st != NULL && i < vt.n; i++) {
        fx_threads_lock();
        struct fx_thread *t = fx_signal_handler_lookup_sigsafe(vt.tids[i]);
        uintptr_t sp = t != NULL && __atomic_load_n(&t->stack_lo, __ATOMIC_RELAXED) == 0
                               ? __atomic_load_n(&t->seen_sp, __ATOMIC_RELAXED)
                               : 0;
        const struct fx_textmap_entry *e = sp != 0 ? fx_textmap_lookup_sigsafe(st, sp) : NULL;
        if (e != NULL) {
            __atomic_store_n(&t->stack_hi, e->end, __ATOMIC_RELEASE);
            __atomic_store_n(&t->stack_lo, e->start, __ATOMIC_RELEASE);
            vt.bounds++;
        }
        fx_threads_unlock();
    }
    fx_textmap_slot_leave_sigsafe(&fx_native.stacks, ticket);
}

/* Under vt.lock. */
static void scan(void)
{
    int64_t t0 = fx_now_ns();
    pid_t *live = fx_calloc(TIDS_MAX, sizeof(pid_t));
    int n = live != NULL ? read_tids(live) : -1;
    if (n >= 0) {
        prune(live, n);
        pid_t self = (pid_t)syscall(SYS_gettid);
        vt.left_out = vt.n_next = 0;
        vt.table = false; /* after read_tids: a table read from here on holds their stacks */
        for (int i = 0; i < n; i++)
            add_one(live[i], self, live, n);
        memcpy(vt.pending, vt.next, vt.n_next * sizeof(pid_t));
        vt.n_pending = vt.n_next;
        vt.first = false;
        vt.left_out_max = vt.left_out > vt.left_out_max ? vt.left_out : vt.left_out_max;
        find_bounds();
    }
    fx_free(live);
    uint64_t spent = (uint64_t)(fx_now_ns() - t0);
    vt.scans++;
    vt.scan_ns += spent;
    vt.scan_max_ns = spent > vt.scan_max_ns ? spent : vt.scan_max_ns;
    /* /proc/self/task costs ~2.7 us a thread: 1.4 ms a scan with 500 threads, 1.4 % of a core
     * at one scan per 100 ms. The next scan waits SCAN_BUDGET times what this one took, so
     * scanning stays within 1/SCAN_BUDGET of a core; new JVM threads are seen that much later. */
    uint64_t wait = spent * SCAN_BUDGET > SCAN_EVERY_NS ? spent * SCAN_BUDGET : SCAN_EVERY_NS;
    wait = wait < SCAN_WAIT_MAX_NS ? wait : SCAN_WAIT_MAX_NS; /* one slow scan (lock contention) */
    vt.scan_wait_max_ns = wait > vt.scan_wait_max_ns ? wait : vt.scan_wait_max_ns;
    vt.next_scan_ns = fx_now_ns() + (int64_t)wait;
}

void fx_vm_threads_prune(void)
{
    pthread_mutex_lock(&vt.lock);
    prune(NULL, 0);
    pthread_mutex_unlock(&vt.lock);
}

void fx_vm_threads_start(void)
{
    pthread_mutex_lock(&vt.lock);
    vt.active = fx_opt()->mode == FX_MODE_CPU || fx_opt()->mode == FX_MODE_ITIMER;
    vt.first = true;
    if (vt.active)
        scan();
    pthread_mutex_unlock(&vt.lock);
}

void fx_vm_threads_stop(void)
{
    pthread_mutex_lock(&vt.lock);
    vt.active = false;
    if (vt.task_dir != NULL)
        closedir(vt.task_dir);
    vt.task_dir = NULL;
    pthread_mutex_unlock(&vt.lock);
}

void fx_vm_threads_refresh(void)
{
    pthread_mutex_lock(&vt.lock);
    if (vt.active && fx_now_ns() >= vt.next_scan_ns)
        scan();
    pthread_mutex_unlock(&vt.lock);
}

void fx_vm_threads_report(struct fx_profile *p)
{
    const char *g = "Threads that are not Java threads";
    pthread_mutex_lock(&vt.lock);
    if (vt.scans == 0) {
        pthread_mutex_unlock(&vt.lock);
        return;
    }
    fx_profile_extra_int(p, g, "registered (GC, JIT, VM, JNI-created...)", (int64_t)vt.registered);
    fx_profile_extra_int(p, g, "registered now", (int64_t)vt.n);
    fx_profile_extra_int(p, g, "ended", (int64_t)vt.ended);
    fx_profile_extra_detail(p, g, "became Java threads (attached to the JVM)",
                            (int64_t)vt.became_java);
    fx_profile_extra_loss(p, g, "left out at the last scan (cap 256)", (int64_t)vt.left_out);
    fx_profile_extra_loss(p, g, "left out at most (cap 256)", (int64_t)vt.left_out_max);
    fx_profile_extra_loss(p, g, "could not be registered", (int64_t)vt.failed);
    fx_profile_extra_detail(p, g, "registered but not armed (ended meanwhile)",
                            (int64_t)vt.not_armed);
    fx_profile_extra_int(p, g, "names written out in full (the kernel keeps 15 characters)",
                         (int64_t)vt.names_full);
    fx_profile_extra_detail(p, g, "names kept as the kernel cut them (ending in \xe2\x80\xa6)",
                            (int64_t)vt.names_cut);
    fx_profile_extra_int(p, g, "stack bounds found", (int64_t)vt.bounds);
    fx_profile_extra_int(p, g, "C1/C2 compiler threads found in the JVM's thread list (this JVM)",
                         (int64_t)vt.compilers);
    fx_profile_extra_loss(p, g, "C1/C2 compiler threads not found there (no compile task read)",
                          (int64_t)vt.compilers_unknown);
    fx_profile_extra_int(p, g, "stack table reads (/proc/self/maps, read-write mappings)",
                         (int64_t)vt.table_reads);
    fx_profile_extra_int(p, g, "stack table read failures", (int64_t)vt.table_errors);
    if (vt.table_error[0] != '\0')
        fx_profile_extra_str(p, g, "stack table last read error", vt.table_error);
    fx_profile_extra_int(p, g, "registrations deferred (stack table still read)",
                         (int64_t)vt.table_busy);
    fx_profile_extra_int(p, g,
                         "samples whose stack was found in the stack table (before own bounds)",
                         (int64_t)__atomic_load_n(&fx_native.stack_found, __ATOMIC_RELAXED));
    fx_profile_extra_int(p, g, "samples whose stack pointer is in no stack table mapping",
                         (int64_t)__atomic_load_n(&fx_native.stack_not_found, __ATOMIC_RELAXED));
    fx_profile_extra_int(p, g, "scans of /proc/self/task", (int64_t)vt.scans);
    fx_profile_extra_int(p, g, "mean scan us", (int64_t)(vt.scan_ns / vt.scans / 1000));
    fx_profile_extra_int(p, g, "max scan us", (int64_t)(vt.scan_max_ns / 1000));
    fx_profile_extra_int(
            p, g, "longest time between scans (ms; 100, or 500 x the scan's time, at most 2000)",
            (int64_t)(vt.scan_wait_max_ns / 1000000));
    pthread_mutex_unlock(&vt.lock);
}

/* The registry (tids, pending) is the JVM's and stays; its events are the recording's. With no
 * scan in the new recording (wall mode) the group is left out, as on a first start. */
void fx_vm_threads_new_recording(void)
{
    pthread_mutex_lock(&vt.lock);
    vt.scans = vt.scan_ns = vt.scan_max_ns = vt.scan_wait_max_ns = vt.registered = vt.ended =
            vt.became_java = 0;
    vt.failed = vt.bounds = vt.not_armed = vt.left_out = vt.left_out_max = 0;
    vt.table_reads = vt.table_errors = vt.table_busy = vt.names_full = vt.names_cut = 0;
    vt.table_error[0] = '\0';
    __atomic_store_n(&fx_native.stack_found, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&fx_native.stack_not_found, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&vt.lock);
}
