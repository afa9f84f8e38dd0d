/* SPDX-License-Identifier: Apache-2.0 */
/* Private to agent/validate: the validator's state (validate.c writes it, validate_report.c
 * reads it), and the stack comparison the validator and the oracle share (stackcmp.c). */
#ifndef FX_VALIDATE_INTERNAL_H
#define FX_VALIDATE_INTERNAL_H

#include "validate.h"

#define PERIOD_NS      20000000  /* one thread checked every 20 ms */
#define PROBE_WAIT_NS  100000000 /* the suspended thread's handler answers within 100 ms */
#define MAX_LISTED     100       /* mismatches kept with both stacks */
#define MAX_TOP_LISTED 20        /* examples of stacks agreeing below the top frame */
#define HINT_SLOTS     256       /* threads remembered as having no Java frame (power of two) */

/* Why a step compared nothing, other than an ASGCT status code. */
enum skip {
    SKIP_NO_THREAD,
    SKIP_PROBE_BUSY,
    SKIP_SUSPEND_FAILED,
    SKIP_NOT_ALIVE,
    SKIP_STACK_FAILED,
    SKIP_PROBE_TIMEOUT,
    SKIP_PROBE_FAILED,
    SKIP_VTHREAD,
    SKIP_COUNT
};

/* Documented HotSpot disagreements (docs/VALIDATION.md 4.2, 4.3): still mismatches, but named. */
enum pattern {
    PATTERN_NONE = 0,
    PATTERN_TOP_COMPILED,   /* the top compiled frame decoded at another debug-info point */
    PATTERN_LOST_RECURSIVE, /* ASGCT lacks one frame of a recursion (seen on JDK 17) */
    PATTERN_COUNT
};

struct mismatch {
    char *thread;
    int32_t asgct_count, jvmti_count, first_diff;
    char **asgct, **jvmti; /* frame names, n_asgct / n_jvmti of them */
    uint32_t n_asgct, n_jvmti;
    enum pattern pattern;
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
    bool looked_up; /* enter_special was looked up (on the validator thread) */
    uint64_t steps, compared, exact, below_top, mismatches, skipped[SKIP_COUNT];
    uint64_t patterns[PATTERN_COUNT]; /* [0]: mismatches of no known pattern */
    uint64_t code_skipped[FX_ASGCT_CODES], code_other, code_no_java, resume_failed;
    struct hint frameless[HINT_SLOTS];
    int64_t suspended_ns, suspended_max_ns;
    struct mismatch listed[MAX_LISTED], top_listed[MAX_TOP_LISTED];
    uint32_t n_listed, n_top_listed;
};
extern struct fx_va_state va; /* validate.c */

static inline uint64_t fx_va_get(const uint64_t *c)
{
    return __atomic_load_n(c, __ATOMIC_RELAXED);
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
/* HotSpot's name of an ASGCT status ("ticks_GC_active"), "frames" if positive. */
const char *fx_stackcmp_status_name(jint code);
/* "pkg.Class.method@bci" or "...@native"; an unnamable method is "<jmethodID 0x...>". */
void fx_stackcmp_frame_name(jvmtiEnv *jvmti, JNIEnv *env, const fx_asgct_frame *f, char *out,
                            size_t cap);
/* jdk.internal.vm.Continuation.enterSpecial (JDK 19+), cached; NULL before. */
jmethodID fx_stackcmp_enter_special(JNIEnv *env, jvmtiEnv *jvmti);

#endif
