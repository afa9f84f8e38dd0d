/* SPDX-License-Identifier: Apache-2.0 */
/* Private to agent/validate: the validator's state (validate.c and vthread.c write it,
 * validate_report.c reads it), the stack comparison the validator and the oracle share
 * (stackcmp.c), and the step on a carrier that carries a virtual thread (vthread.c). */
#ifndef FX_VALIDATE_INTERNAL_H
#define FX_VALIDATE_INTERNAL_H

#include "validate.h"

#define PERIOD_NS      20000000  /* one thread checked every 20 ms */
#define PROBE_WAIT_NS  100000000 /* the suspended thread's handler answers within 100 ms */
#define MAX_LISTED     100       /* mismatches kept with both stacks */
#define MAX_TOP_LISTED 20        /* examples of stacks agreeing below the top frame */
#define HINT_SLOTS     256       /* threads remembered as having no Java frame (power of two) */
#define MAX_REC_LISTED 20        /* recovered stacks disagreeing, kept with both stacks */

/* Why a step compared nothing, other than an ASGCT status code. */
enum skip {
    SKIP_NO_THREAD,
    SKIP_PROBE_BUSY,
    SKIP_SUSPEND_FAILED,
    SKIP_NOT_ALIVE,
    SKIP_STACK_FAILED,
    SKIP_PROBE_TIMEOUT,
    SKIP_PROBE_FAILED,
    SKIP_VTHREAD, /* ASGCT holds a continuation the step did not find mounted */
    SKIP_MOVED,   /* the thread's JVMTI stack changed while it was held: it was not stopped */
    SKIP_COUNT
};

#define FX_VM_UPCALLS 6    /* Java methods the VM calls from C1's stubs (4.8) */
#define FX_SCOPES_MAX 1024 /* scopes copied per check; an nmethod with more proves nothing */

/* Documented HotSpot disagreements (docs/VALIDATION.md 4.1-4.3, 4.8, 4.9): still mismatches, but
 * named.
 */
enum pattern {
    PATTERN_NONE = 0,
    PATTERN_TOP_COMPILED,   /* the top compiled frame decoded at another debug-info point */
    PATTERN_LOST_RECURSIVE, /* ASGCT lacks one frame of a recursion (seen on JDK 17) */
    PATTERN_NOT_THAWED,     /* ASGCT jumps from a virtual thread's thawed top to enterSpecial */
    PATTERN_VM_UPCALL,      /* ASGCT ends at Java the VM called from a C1 runtime stub */
    PATTERN_TOP_SCOPES,     /* 4.2 proven by the scopes of the top frame's nmethod (proofs.c) */
    PATTERN_DEOPT_CUT,      /* 4.9: ASGCT ends under a frame returning to a deopt handler */
    PATTERN_COUNT
};

/* What one comparison found (classify). */
enum outcome {
    OUT_NONE, /* nothing compared (an ASGCT status, or a skip) */
    OUT_EXACT,
    OUT_BELOW_TOP,
    OUT_TRANSITION, /* stopped in a virtual thread's mount or unmount: not comparable (4.7) */
    OUT_MISMATCH,
};

/* Why a step on a carrier carrying a virtual thread compared nothing (vthread.c). */
enum vt_skip {
    VT_SKIP_SUSPEND_FAILED, /* SuspendThread of the virtual thread failed */
    VT_SKIP_UNMOUNTED,      /* it unmounted before it was suspended */
    VT_SKIP_STACK_FAILED,   /* a GetStackTrace failed */
    VT_SKIP_PROBE,          /* the probe failed or did not answer */
    VT_SKIP_MOVED,          /* its JVMTI stack changed while it was held */
    VT_SKIP_COUNT           /* also: nothing skipped */
};

#define VT_TRANSITION_MAX 8 /* java.lang.VirtualThread.notifyJvmti* methods remembered */

/* Virtual threads in validate mode (vthread.c). The route from a carrier to the virtual thread
 * it carries: Thread.cont (the carrier's innermost continuation) -> Continuation.target (for a
 * virtual thread, the Runnable VirtualThread's VThreadContinuation wraps the task in) -> that
 * Runnable's captured vthread field. Fields of the validator thread only; counters atomic. */
struct va_vt {
    jfieldID cont, target, vthread, tid;
    jclass wrapper; /* global ref: the Runnable's class, checked before its field is read */
    jmethodID transition[VT_TRANSITION_MAX];
    uint32_t n_transition, failed_lookups;
    bool thread_looked_up, route; /* route: every id above found */
    const char *why_not;          /* while !route: the lookup that failed, or NULL */
    fx_asgct_frame *carrier;      /* depth + 1: the carrier's frames */
    uint64_t found, compared, exact, below_top, transitions, mismatches, skipped[VT_SKIP_COUNT];
    uint64_t by_code; /* an ASGCT status instead of frames (also in the overall skips by code) */
    uint64_t patterns[PATTERN_COUNT];
    uint64_t slot_same, slot_other, slot_none; /* the mount events' slot against the route */
    uint64_t slot_transition; /* not read against it: the comparison was a mount transition */
};

struct mismatch {
    char *thread;
    int32_t asgct_count, jvmti_count, first_diff;
    char **asgct, **jvmti; /* frame names, n_asgct / n_jvmti of them */
    uint32_t n_asgct, n_jvmti;
    char **scopes; /* the proof (proofs.c, fx_va_proof), named: 4.2's scopes, 4.9's two frames */
    uint32_t n_scopes;
    uintptr_t top_code;
    enum pattern pattern;
};

/* What ASGCT said where the anchor walk was done beside it. */
enum shadow_by {
    SHADOW_BY_FRAMES,       /* a stack: the walk is checked where ASGCT works too */
    SHADOW_BY_NOT_WALKABLE, /* -4 ticks_not_walkable_not_Java: the walk gives what ASGCT did not */
    SHADOW_BY_OTHER,        /* another status */
    SHADOW_BY_COUNT
};

/* A thread whose last check found no Java frame (the JVM's service threads): picked last. */
struct hint {
    const struct fx_thread *t;
    pid_t tid;
};

/* Written by the validator thread only. The counters are atomics because a dump reads them
 * while it runs; the listed mismatches are read only after fx_validate_stop. */
struct fx_va_state {
    uint32_t cursor, depth;
    jvmtiFrameInfo *info;
    fx_asgct_frame *gst, *asg;
    jmethodID enter_special;
    jmethodID vm_upcalls[FX_VM_UPCALLS]; /* 4.8, n_vm_upcalls of them found */
    int n_vm_upcalls;
    jmethodID scopes[FX_SCOPES_MAX]; /* the last probe's top nmethod's scopes (proofs.c) */
    uint32_t n_scopes;
    struct fx_anchor_facts facts; /* the last probe's anchor walk: 4.2's nmethod, 4.9's frame */
    int32_t shadow_n;             /* that walk's frames in shadow (FX_REC_ANCHOR), else 0 */
    bool looked_up;               /* enter_special was looked up (on the validator thread) */
    uint64_t steps, compared, exact, below_top, transitions, mismatches, skipped[SKIP_COUNT];
    uint64_t patterns[PATTERN_COUNT]; /* [0]: mismatches of no known pattern */
    uint64_t code_skipped[FX_ASGCT_CODES], code_other, code_no_java, resume_failed;
    struct hint frameless[HINT_SLOTS];
    int64_t suspended_ns, suspended_max_ns;
    struct mismatch listed[MAX_LISTED], top_listed[MAX_TOP_LISTED];
    uint32_t n_listed, n_top_listed;
    struct va_vt vt;
    /* Stacks ASGCT failed and the probe recovered (fx_recover.h), by FX_REC_* case: their own
     * class, outside compared/exact/mismatches (ASGCT's own code is still a skip by code). */
    uint64_t rec_agreed[FX_REC_CASES], rec_disagreed[FX_REC_CASES], rec_deeper;
    uint64_t rec_not[FX_REC_FAILS]; /* the probe tried to recover and could not, by reason */
    /* Recovered stacks and anchor walks of a thread stopped in a virtual thread's mount or
     * unmount (docs/VALIDATION.md 4.7): JVMTI hides the transition's frames, not comparable. */
    uint64_t rec_transitions, shadow_transitions;
    struct mismatch rec_listed[MAX_REC_LISTED];
    uint32_t n_rec_listed;
    /* The anchor walk done beside ASGCT (fx_probe_shadow), by what ASGCT said (enum shadow_by),
     * compared like a recovered FX_REC_ANCHOR stack: the walk's rules checked on stopped
     * threads, which ASGCT almost never answers -3 for (docs/VALIDATION.md 5.1). */
    fx_asgct_frame *shadow;
    uint64_t shadow_agreed[SHADOW_BY_COUNT], shadow_disagreed[SHADOW_BY_COUNT], shadow_deeper;
    uint64_t shadow_not[FX_REC_FAILS]; /* the walk gave nothing, by reason */
    /* issue 32: compared anchor walks (beside ASGCT or recovered) that name interpreted
     * frames, and those frames: each must be JVMTI's frame exactly (stackcmp.c) */
    uint64_t anchor_interp_walks, anchor_interp_frames;
    uint64_t anchor_whole; /* walks beside ASGCT ended at the first entry frame: bottom checked */
    struct mismatch shadow_listed[MAX_REC_LISTED];
    uint32_t n_shadow_listed;
};
extern struct fx_va_state va; /* validate.c */

static inline uint64_t fx_va_get(const uint64_t *c)
{
    return __atomic_load_n(c, __ATOMIC_RELAXED);
}

static inline void fx_va_inc(uint64_t *c)
{
    __atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

/* --- stackcmp.c: ASGCT and JVMTI stacks in one encoding, compared; names for reports --- */

#define FX_ASGCT_NATIVE_LINE      (-3)      /* ASGCT lineno of a native frame (JVMTI location -1) */
#define FX_STACKCMP_ASGCT_MISSING INT32_MIN /* no AsyncGetCallTrace symbol (oracle only) */

/* frames[i] is the i-th frame from the top. */
struct fx_stack {
    jint count; /* ASGCT: num_frames, possibly a negative status; JVMTI: frame count */
    fx_asgct_frame *frames;
};

struct fx_stack_verdict {
    jint compared;   /* frames that agreed, when the stacks agree */
    bool truncated;  /* the JVMTI stack is deeper than depth: its top depth frames compared */
    jint first_diff; /* -1: the stacks agree */
    jint carrier;    /* frames of a virtual thread's carrier in the JVMTI stack (oracle) */
};

/* JVMTI frames in ASGCT's encoding (native: location -1 becomes lineno -3). */
void fx_stackcmp_from_jvmti(const jvmtiFrameInfo *info, jint n, fx_asgct_frame *out);
/* Up to max frames of thread (NULL: the current one); allocates a scratch buffer. */
jvmtiError fx_stackcmp_take_jvmti(jvmtiEnv *jvmti, jthread thread, fx_asgct_frame *frames, int max,
                                  jint *count);
bool fx_stackcmp_same_frame(const fx_asgct_frame *a, const fx_asgct_frame *b);
/* ASGCT must hold exactly min(JVMTI count, depth) frames, each equal to JVMTI's. */
struct fx_stack_verdict fx_stackcmp_compare(const struct fx_stack *asgct,
                                            const struct fx_stack *jvmti, int depth);
/* A recovered stack (recovery: the FX_REC_* case) against JVMTI's: see stackcmp.c. */
enum fx_rv_verdict {
    FX_RV_AGREED,
    FX_RV_DISAGREED,
    FX_RV_DEEPER /* JVMTI's stack is deeper than depth: the match could not be placed */
};
/* An anchor walk that claims to be whole (it ended at the thread's first entry frame): its
 * last frame is JVMTI's bottom frame (an nmethod's method, or an interpreted frame exactly). */
bool fx_stackcmp_anchor_bottom(const struct fx_stack *a, const struct fx_stack *g);
enum fx_rv_verdict fx_stackcmp_recovered(const struct fx_stack *asgct, const struct fx_stack *jvmti,
                                         uint8_t recovery, int depth);
/* HotSpot's name of an ASGCT status ("ticks_GC_active"), "frames" if positive. */
const char *fx_stackcmp_status_name(jint code);
/* "pkg.Class.method@bci" or "...@native"; an unnamable method is "<jmethodID 0x...>". */
void fx_stackcmp_frame_name(jvmtiEnv *jvmti, JNIEnv *env, const fx_asgct_frame *f, char *out,
                            size_t cap);
/* jdk.internal.vm.Continuation.enterSpecial (JDK 19+), cached; NULL before. */
jmethodID fx_stackcmp_enter_special(JNIEnv *env, jvmtiEnv *jvmti);
int fx_stackcmp_vm_upcalls(JNIEnv *env, jmethodID *ids);
bool fx_stackcmp_lost_recursive(const struct fx_stack *a, const struct fx_stack *g);
bool fx_stackcmp_top_compiled(const struct fx_stack *a, const struct fx_stack *g);
jint fx_stackcmp_cut_at(const struct fx_stack *a, const struct fx_stack *g, jint from);
bool fx_stackcmp_cut_at_vm_upcall(const struct fx_stack *a, const struct fx_stack *g,
                                  const jmethodID *ids, int n);
/* What ASGCT walks into below a virtual thread's JVMTI stack vt: enterSpecial (entry; not when
 * the carrier's stack already starts with it) and the carrier's n frames, up to max frames in
 * all (docs/VALIDATION.md section 1). Returns the frames appended. */
jint fx_stackcmp_join_carrier(struct fx_stack *vt, jmethodID entry, const fx_asgct_frame *carrier,
                              jint n, int max);

/* --- vthread.c: a carrier carrying a virtual thread (JDK 21+); a leaf validate.c calls --- */

/* The validator thread's first tick: Thread.cont, or why there is no route. */
void fx_va_vt_start(JNIEnv *jni, jvmtiEnv *jvmti);
/* Before t is suspended (JNI may allocate): the rest of the route, learnt from the first
 * continuation found on a carrier. */
void fx_va_vt_learn(JNIEnv *jni, jthread carrier);
/* With the carrier suspended: the virtual thread it carries (a local ref) and its continuation,
 * or NULL. A carrier suspended while it carries one goes on running it until it unmounts
 * (HotSpot marks it and stops it there): only the virtual thread's own suspension stops it. */
jobject fx_va_vt_mounted(JNIEnv *jni, jthread carrier, jobject *cont);
/* With the carrier t and vt held: the counter of what the mount events' slot names (the
 * same virtual thread as the route, another, or none), for the caller to add to. */
uint64_t *fx_va_vt_slot(JNIEnv *jni, const struct fx_thread *t, jobject vt);
/* docs/VALIDATION.md 4.7: a thread stopped in a virtual thread's mount or unmount (a
 * VirtualThread.notifyJvmti* method among the top frames of either stack), where JVMTI hides
 * the transition's frames or still shows the other side of the switch. */
bool fx_va_vt_in_transition(const struct fx_stack *a, const struct fx_stack *g);
/* docs/VALIDATION.md 4.1: ASGCT has a's frames above enterSpecial, then jumps to g's
 * enterSpecial and agrees to the bottom, leaving out the frames still frozen in the heap. */
bool fx_va_vt_not_thawed(const struct fx_stack *a, const struct fx_stack *g, jmethodID entry);

#endif
