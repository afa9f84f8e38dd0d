/* SPDX-License-Identifier: Apache-2.0 */
/* Private to agent/sampling: the state the signal handler reads (fx_sig), the per-thread timer
 * engine the registry arms, and HotSpot's VMStructs. No file outside this folder includes it. */
#ifndef FX_SAMPLING_INTERNAL_H
#define FX_SAMPLING_INTERNAL_H

#include "codeheap.h"
#include "compile_task.h"
#include "interp_frame.h"
#include "receiver.h"
#include "sampling.h"

/* --- signal_handler.c: the signal path and the state it reads --- */

#define FX_TID_SLOTS     16384 /* power of two */
#define FX_TID_MAX_PROBE 64

struct fx_tid_slot {
    int32_t tid; /* 0 never used, -1 removed, else a registered thread (atomic) */
    struct fx_thread *thread;
};

struct fx_sigstate {
    fx_asgct_fn asgct;     /* resolved before any timer exists */
    int enabled;           /* atomic: 0 once sampling stops; the handler then records nothing */
    int64_t clock_read_ns; /* what timing adds: the cost of a CPU-clock read, measured at load */
    int read_cpu_clock;    /* atomic: the handler reads the thread's CPU clock per sample (itimer
                              and wall modes, perf without kernel time); else each signal *is*
                              weight x interval of it */
    uint64_t no_thread;    /* signals on threads that are not registered */
    uint64_t disabled;     /* signals after sampling stopped */
    uint64_t rearm_failed; /* perf events that could not be enabled again at a restart */
    uint64_t probe_late;   /* probe signals that found no request (the requester gave up) */
    uint64_t no_buffer;    /* signals on a thread whose ring or frame buffer is missing */
    uint64_t in_flight;    /* atomic: handlers between the enabled check and their last use of
                              a thread's buffers (see threads.c, "Buffers") */
    /* Stack recovery (codemap.c publishes, the handler reads; see fx_recover.h). */
    struct fx_code_table *code_table; /* atomic: the current table, or NULL */
    uint64_t code_readers;            /* atomic: handlers between loading code_table and done */
    long compile_id_off;              /* nmethod::_compile_id, -1 unknown (set before tables) */
    /* The not-in-Java recovery (issue 26, recover_anchor.c): the frame anchor's fields as offsets
     * from a thread's JNIEnv (JavaThread::_jni_environment is inside the JavaThread); 0 unknown.
     * Set once (atomic) when threads.c first scans the threads (vmstructs.c). */
    long anchor_sp_off, anchor_pc_off;
    long anchor_fp_off; /* _last_Java_fp the same way (frame types from the anchor), 0 unknown */
    /* Issue 32: the anchor walk names interpreted frames by this layout (interp_frame.h;
     * threads_existing.c publishes it once, interp.pid last with release); pid 0 unknown. */
    struct fx_interp_layout interp;
    /* Issue 32: the code heaps' layout, for a pc in a method compiled since the code table was
     * published (codeheap.h; fx_codeheap_publish at VMInit, threads_existing.c, codeheap.pid last
     * with release). */
    struct fx_codeheap_layout codeheap;
    uint64_t codeheap_found; /* atomic: pcs the walks found there (fx_recover_find_any) */
    uint64_t codeheap_lookups, codeheap_refused; /* atomic: lookups made, refused (budget) */
    /* Issue 22, mount tracking without events (vthreads.c): JavaThread::_monitor_owner_id as an
     * offset from a thread's JNIEnv, non-zero while that is the way (else the mount events'
     * slot in struct fx_thread is); a start sets or clears it. */
    long vt_owner_off;
    /* Issue 32, item 5 (compile_task.c publishes once, env last; compile_task_sig.c reads):
     * CompilerThread::_env, ciEnv::_task, CompileTask::_method and _compile_id; 0 unknown.
     * CompilerThread::_task (not exported: derived, compile_task.c), 0 unknown; this process's
     * pid for the checked reads. */
    long task_env_off, task_task_off, task_method_off, task_id_off, task_thread_off;
    int task_pid;
    /* Issue 32, item 3 (receiver.c publishes, recv_mode last with release; receiver_sig.c
     * reads): the Java heap's reserved [lo, hi), the klass word's offset in an object, the
     * narrow klass base and shift, this process's pid for the checked read; enum fx_recv_mode. */
    uintptr_t recv_heap_lo, recv_heap_hi, recv_base;
    long recv_klass_off;
    int recv_shift, recv_mode, recv_pid;
    int recv_mark_shift; /* FX_RECV_MODE_COMPACT: markWord::klass_shift */
    struct fx_tid_slot table[FX_TID_SLOTS];
};

extern struct fx_sigstate fx_sig;

void fx_signal_handler_on_sigprof(int sig, siginfo_t *si, void *ucontext);
uint32_t fx_signal_handler_hash_sigsafe(int32_t tid);
/* The registered thread with this tid, or NULL. Stable only for the thread itself (or under
 * fx_threads_lock with `ended` unset): see the invariant in sample.h. */
struct fx_thread *fx_signal_handler_lookup_sigsafe(int32_t tid);
/* enum fx_vt_rec of thread t, called on t itself: the virtual thread mounted on it (*id). */
uint8_t fx_signal_handler_vthread_sigsafe(const struct fx_thread *t, uint64_t *id);
/* si_value of a probe's SIGPROF (si_code SI_QUEUE): such a signal never becomes a sample. */
#define FX_PROBE_SIGVAL 0x66787072
/* The handler times its own CPU cost on about one signal in this many (a power of two). */
#define FX_TIMED_ONE_IN 16

/* --- cpu_timer.c: the per-thread engine (cpu mode) --- */

/* Arms t's perf event or CPU-clock timer; a no-op for itimer and wall. */
int fx_timer_arm(struct fx_thread *t);
void fx_timer_disarm(struct fx_thread *t);
/* Agent_OnLoad or a start with options o: one line in eb if engine=perf cannot work at all. */
int fx_timer_probe(const struct fx_options *o, struct fx_errbuf *eb);
/* perf_events had to exclude kernel time (perf_event_paranoid): see fx_sig.read_cpu_clock. */
bool fx_timer_excludes_kernel(void);
/* Why perf_events could not be used ("" if it could, or was not tried). */
void fx_timer_perf_error(char *buf, size_t cap);

/* --- kstack.c: kernel frames of perf samples (issue 16, kstack=yes) --- */

struct perf_event_attr;
/* Asks a perf event for the kernel callchain when kernel frames are wanted and the event
 * counts kernel time; true if it did. */
bool fx_kstack_attr(struct perf_event_attr *a);
/* The open with it failed with err: the fields are cleared for a retry; unless err is EACCES
 * (perf_event_paranoid), no later event asks again. */
void fx_kstack_attr_failed(struct perf_event_attr *a, int err);
/* Maps fd's ring for t and publishes it to t's handler (before the event is enabled). */
void fx_kstack_map(struct fx_thread *t, int fd);
/* Unmaps t's ring: only where no handler can be reading it (see kstack.c). */
void fx_kstack_unmap(struct fx_thread *t);
/* Unmaps t's ring if the caller is t itself (its own handler cannot be mid-read). */
void fx_kstack_unmap_own(struct fx_thread *t);
/* Kernel frames are wanted by this recording's options (and perf has not refused them). */
bool fx_kstack_wanted(void);
/* Lazy arming: t was sampled twice within a second (or starts a new second of counting): true
 * when it is due for its perf event (timer-armed first) or its callchain and ring. */
bool fx_kstack_due(struct fx_thread *t, int64_t now_ns);
/* Replaces t's perf event with one carrying the kernel callchain, its ring mapped (cpu_timer.c;
 * under the registry lock, t neither ended nor disarmed). Tried once per arm. */
void fx_timer_kstack_upgrade(struct fx_thread *t);
/* engine=auto: replaces t's timer_create timer by a perf event (with the callchain and its ring
 * when kernel frames are wanted) once t runs; under the registry lock, tried once per arm. */
void fx_timer_perf_upgrade(struct fx_thread *t);

/* --- threads.c, for the engines --- */

/* A start after fx_threads_disarm_all: every live registered thread is armed with the
 * recording's options, and new threads arm themselves again. A no-op at a first start. */
void fx_threads_arm_all(void);
/* Deletes every thread's timer and closes its perf event (stop, VMDeath); new threads are not
 * registered until fx_threads_arm_all. */
void fx_threads_disarm_all(void);
/* With sampling disabled and no handler in flight (fx_sampling_quiet): frees every live
 * thread's empty ring and its frame buffer (a stop), or gives each the ring and depth of the
 * recording's options (a start). */
void fx_threads_free_buffers(void);
void fx_threads_build_buffers(void);
/* fx_sampling_new_recording's share: per-thread figures and the registry's counts (the live
 * threads are this recording's "sampled" ones). */
void fx_threads_new_recording(void);

/* A thread of the process that is not a Java thread (vm_threads.c): registered without JNIEnv
 * (native_only, no AsyncGetCallTrace) and armed like a Java thread; takes `name`. FX_ESTATE if
 * the tid is registered already or sampling is stopped. */
int fx_threads_start_native(pid_t tid, char *name, uint8_t category, uint8_t subcategory);
/* A native_only thread whose tid is gone: disarmed, unregistered, ended (the drain frees it);
 * false if the tid is not such a thread. Never for a live thread: its handler may hold it. */
bool fx_threads_end_native(pid_t tid);

/* --- threads.c, for threads_existing.c (threads that started before us) --- */

bool fx_threads_known(JNIEnv *jni, jthread thread);    /* already registered */
char *fx_threads_name_of(JNIEnv *jni, jthread thread); /* fx_malloc'd; "?" when unknown */
/* Registers and arms a running Java thread found by the scan; takes `name`. */
int fx_threads_register_existing(JNIEnv *jni, jthread thread, char *name, pid_t tid, JNIEnv *env,
                                 uintptr_t stack_lo, uintptr_t stack_hi);
void fx_threads_count_not_sampled(void);
void fx_threads_scan_end(void);

/* --- engines.c: the process-wide part of the engines --- */

/* itimer's setitimer, wall's sampler thread. */
int fx_engines_start(JNIEnv *jni);
void fx_engines_stop(void);
/* A new recording: the wall sampler's tick count starts from zero. */
void fx_engines_new_recording(void);

/* --- vmstructs.c: HotSpot's exported type table --- */

/* The OS thread id of a JavaThread* (the java.lang.Thread eetop field), or -1. */
pid_t fx_vmstructs_tid_of(const void *java_thread);
bool fx_vmstructs_available(void);
/* Offset of JavaThread::_thread_state (a 4-byte enum), or -1. */
long fx_vmstructs_thread_state_offset(void);
/* The JavaThread's stack [lo, hi); false if VMStructs does not say. */
bool fx_vmstructs_stack_of(const void *java_thread, uintptr_t *lo, uintptr_t *hi);
struct fx_nmethod_layout {
    uintptr_t blob;         /* the nmethod (CodeBlob header) */
    uintptr_t verified;     /* verified entry point */
    long frame_complete;    /* from code begin; -1: never */
    int32_t compile_id;     /* unique per compilation */
    int32_t entry_bci;      /* -1 for a normal method entry, else an OSR compilation */
    uintptr_t osr_entry;    /* an OSR compilation's entry (nmethod::_osr_entry_point), 0 */
    long compile_id_offset; /* of _compile_id in the nmethod */
    int32_t frame_words;    /* CodeBlob::_frame_size (words, return address included), -1 */
    int32_t level;          /* nmethod::_comp_level (1-3 C1, 4 C2), -1 unknown */
    uintptr_t stubs;        /* its stub section (nmethod::_stub_offset from the blob), 0 */
};
/* The layout of the nmethod whose code begins at code_addr (CompiledMethodLoad's code_addr),
 * found through the code heap's segment map and checked against its code begin; false if
 * VMStructs lacks a field or the blob found does not begin there. */
bool fx_vmstructs_nmethod(uintptr_t code_addr, struct fx_nmethod_layout *out);
/* Publishes the frame anchor's _last_Java_sp and _last_Java_pc as offsets from a JNIEnv
 * (fx_sig.anchor_*_off) given the JNIEnv's offset in its JavaThread (issue 26); nothing if
 * VMStructs does not say or env_offset is unknown (<= 0). */
void fx_vmstructs_publish_anchor(intptr_t env_offset);
/* The frame size (words) of the CodeBlob whose code begins at code_addr (a stub), or -1; its
 * frame complete offset from there in *complete (-1: unknown, or frame_never_safe). */
int32_t fx_vmstructs_stub_frame_words(uintptr_t code_addr, int32_t *complete);
/* JavaThread::_monitor_owner_id (JDK 24+: the java.lang.Thread id of what the thread runs, the
 * mounted virtual thread's while one is) as an offset from a JNIEnv at env_offset in its
 * JavaThread; 0 if VMStructs does not export it or it does not check out. */
long fx_vmstructs_owner_id_env_offset(long env_offset);
/* The same from the JavaThread itself, or -1. */
long fx_vmstructs_owner_id_offset(void);
/* type::field's offset (-1: not exported), a static field's address (NULL), a type's size (-1),
 * each by one walk of HotSpot's table: for names looked up once. */
long fx_vmstructs_field(const char *type, const char *field);
const void *fx_vmstructs_static(const char *type, const char *field);
long fx_vmstructs_size(const char *type);
/* A constant of gHotSpotVMLongConstants ("markWord::klass_shift") or gHotSpotVMIntConstants
 * ("frame::interpreter_frame_last_sp_offset"); false if not exported. */
bool fx_vmstructs_long_constant(const char *name, int64_t *out);
bool fx_vmstructs_int_constant(const char *name, int64_t *out);

/* --- compile_task.c, compile_task_sig.c: the method a compiler thread compiles (issue 32) --- */

/* Signal-safe: t's compile, if t is a compiler thread: out[0] the Method*, out[1] the compile id
 * | enum fx_task_read << 32; false (nothing written) for any other thread. */
bool fx_compile_task_read_sigsafe(const struct fx_thread *t, uint64_t out[2]);
/* Any thread: the JavaThread* of the thread tid (a compiler thread: the caller knows it by its
 * name and by JVMTI not knowing it), found in the JVM's thread list by checked reads, with its
 * stack [*lo, *hi); 0 if not found. Publishes the offsets the handler reads (once). */
uintptr_t fx_compile_task_thread_of(pid_t tid, uintptr_t *lo, uintptr_t *hi);

/* --- receiver.c, receiver_sig.c: a dispatch stub's receiver (issue 32, item 3) --- */

/* Signal-safe: the Klass* of the receiver in j_rarg0 of the interrupted context (its pc in a
 * vtable or itable stub), or an enum fx_recv_read below FX_RECV_KLASS_MIN (receiver.h). */
uint64_t fx_receiver_read_sigsafe(const void *ucontext);

/* --- recover_icstub_sig.c: a frameless callee's caller proven (issue 32, VALIDATION 8.5k-l) --- */

/* Signal-safe: for rc FX_REC_ICSTUB or FX_REC_MH_INTRINSIC, ret (the return address at sp when pc
 * is in buf: an IC stub, a method handle intrinsic) lies in a current nmethod right after a call
 * to that stub (recover_icstub.c) or intrinsic (recover_mhintr.c); true for any other rc. */
bool fx_recover_called_sigsafe(int rc, const struct fx_code_range *buf, uintptr_t pc, uintptr_t ret,
                               struct fx_heap_memo *m);

/* --- vtwait.c: where virtual threads wait (issue 22), from vthreads.c's callbacks --- */

void fx_vtwait_unmount(uint64_t id);
void fx_vtwait_mount(JNIEnv *jni, jthread vthread, uint64_t id);
/* Stopped, its pass over: the wait queue and the unmount table's pages go back. */
void fx_vtwait_free(void);

#endif
