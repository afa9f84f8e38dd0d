/* SPDX-License-Identifier: Apache-2.0 */
/* Validate mode: an agent thread that, every PERIOD_NS, suspends one registered Java thread
 * (round robin, RUNNABLE ones first), takes its JVMTI stack, then its ASGCT stack through a
 * probe (the thread's own SIGPROF handler, which runs although the thread is suspended),
 * resumes it and compares the two. Invariant: every thread this file suspends is resumed before
 * the step ends, on every path, and no step outlives fx_validate_stop. */
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_json.h"
#include "fx_out_file.h"

#define SCAN_MAX        64  /* threads whose state is read per step */
#define LISTED_FRAMES   256 /* frames named per stack of a listed mismatch */
#define NAME_MAX_LEN    512
#define ANY_STATE_EVERY 8 /* every 8th step ignores the RUNNABLE preference */

struct fx_va_state va;

static void inc(uint64_t *c)
{
    __atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

int fx_validate_check(struct fx_errbuf *eb)
{
    jvmtiEnv *jvmti = fx_jvmti();
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof(caps));
    if ((*jvmti)->GetCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE || !caps.can_suspend) {
        fx_errbuf_set(eb, "option 'validate': this JVM does not let agents suspend threads "
                          "(JVMTI can_suspend)");
        return FX_EUNSUPPORTED;
    }
    return FX_OK;
}

/* --- picking a thread --- */

static struct hint *hint_slot(const struct fx_thread *t)
{
    return &va.frameless[((uintptr_t)t >> 4) & (HINT_SLOTS - 1)];
}

static bool hinted_frameless(const struct fx_thread *t)
{
    const struct hint *h = hint_slot(t);
    return h->t == t && h->tid == t->tid;
}

static void set_hint(const struct fx_thread *t, bool frameless)
{
    struct hint *h = hint_slot(t);
    if (frameless)
        *h = (struct hint){.t = t, .tid = t->tid};
    else if (h->t == t)
        *h = (struct hint){.t = NULL, .tid = 0};
}

/* -1: not ours to suspend (ended, dead, or suspended by someone else). Otherwise the higher the
 * better: 3 RUNNABLE, 2 other states, 1 no Java frame at its last check; `any` flattens the
 * preference to 1, so that waiting threads get their turn too. */
static int rank(jvmtiEnv *jvmti, struct fx_thread *t, bool any)
{
    jint s = 0;
    if (__atomic_load_n(&t->ended, __ATOMIC_ACQUIRE) || t->native_only || /* no jthread */
        (*jvmti)->GetThreadState(jvmti, t->ref, &s) != JVMTI_ERROR_NONE ||
        !(s & JVMTI_THREAD_STATE_ALIVE) || (s & JVMTI_THREAD_STATE_SUSPENDED))
        return -1;
    if (any || hinted_frameless(t))
        return 1;
    return (s & JVMTI_THREAD_STATE_RUNNABLE) ? 3 : 2;
}

/* Under the registry lock. Round robin from the cursor over the next SCAN_MAX threads: the
 * best ranked, the nearest to the cursor among equals. Positions shift as threads come and go,
 * which only makes the rotation approximate. */
static struct fx_thread *pick(jvmtiEnv *jvmti, bool any)
{
    uint32_t len = 0;
    for (struct fx_thread *t = fx_threads_head(); t != NULL; t = t->next)
        len++;
    if (len == 0)
        return NULL;
    uint32_t start = va.cursor % len, best_rel = UINT32_MAX, i = 0;
    int best_rank = -1;
    struct fx_thread *best = NULL;
    for (struct fx_thread *t = fx_threads_head(); t != NULL; t = t->next, i++) {
        uint32_t rel = (i + len - start) % len;
        if (rel >= SCAN_MAX)
            continue;
        int r = rank(jvmti, t, any);
        if (r > best_rank || (r == best_rank && r >= 0 && rel < best_rel)) {
            best_rank = r;
            best_rel = rel;
            best = t;
        }
    }
    if (best == NULL || best_rank < 0)
        return NULL;
    va.cursor = start + best_rel + 1;
    return best;
}

/* --- classifying one comparison --- */

static bool contains(const struct fx_stack *s, jmethodID m)
{
    for (jint i = 0; i < s->count; i++) {
        if (s->frames[i].method_id == m)
            return true;
    }
    return false;
}

/* Equal but for frame 0: GetStackTrace saw the thread where it stopped for the suspension. */
static bool agrees_below_top(const struct fx_stack *a, const struct fx_stack *g, int depth)
{
    jint expect = g->count > depth ? depth : g->count;
    if (a->count != expect || expect < 1)
        return false;
    for (jint i = 1; i < expect; i++) {
        if (!fx_stackcmp_same_frame(&a->frames[i], &g->frames[i]))
            return false;
    }
    return true;
}

/* A stub's frame (FX_LINE_STUB, from a recovery) holds a stub index, not a jmethodID. */
static void frame_name(jvmtiEnv *jvmti, JNIEnv *jni, const fx_asgct_frame *f, char *buf, size_t cap)
{
    const char *stub = f->lineno == FX_LINE_STUB
                               ? fx_codemap_stub_name((uint64_t)(uintptr_t)f->method_id)
                               : NULL;
    if (f->lineno == FX_LINE_STUB)
        snprintf(buf, cap, "[stub %s]", stub != NULL ? stub : "?");
    else
        fx_stackcmp_frame_name(jvmti, jni, f, buf, cap);
}

static char **name_frames(jvmtiEnv *jvmti, JNIEnv *jni, const struct fx_stack *s, uint32_t *n)
{
    uint32_t want = s->count > 0 ? (uint32_t)s->count : 0;
    want = want > LISTED_FRAMES ? LISTED_FRAMES : want;
    char **names = fx_calloc(want > 0 ? want : 1, sizeof(*names));
    *n = 0;
    for (uint32_t i = 0; names != NULL && i < want; i++) {
        char buf[NAME_MAX_LEN];
        frame_name(jvmti, jni, &s->frames[i], buf, sizeof(buf));
        if ((names[i] = fx_strdup(buf)) == NULL)
            break;
        *n = i + 1;
    }
    return names;
}

/* docs/VALIDATION.md 4.2: below some frame the stacks agree to the bottom, and the frames just
 * above that point show the same method in both, at another bci or under other inlined
 * callees: the top compiled frame, decoded by ASGCT at another debug-info point of its code. */
static bool top_compiled_frame(const struct fx_stack *a, const struct fx_stack *g)
{
    jint i = a->count - 1, k = g->count - 1;
    while (i >= 0 && k >= 0 && fx_stackcmp_same_frame(&a->frames[i], &g->frames[k])) {
        i--;
        k--;
    }
    return i >= 0 && k >= 0 && a->frames[i].method_id == g->frames[k].method_id;
}

/* docs/VALIDATION.md 4.3: ASGCT has every JVMTI frame but one, and that one is a frame of a
 * recursion (the frame above it is the same method at the same bci). */
static bool lost_recursive_frame(const struct fx_stack *a, const struct fx_stack *g)
{
    if (a->count != g->count - 1)
        return false;
    jint k = 0;
    while (k < a->count && fx_stackcmp_same_frame(&a->frames[k], &g->frames[k]))
        k++;
    for (jint i = k; i < a->count; i++) {
        if (!fx_stackcmp_same_frame(&a->frames[i], &g->frames[i + 1]))
            return false;
    }
    return k > 0 && fx_stackcmp_same_frame(&g->frames[k - 1], &g->frames[k]);
}

static enum pattern known_pattern(const struct fx_stack *a, const struct fx_stack *g, int depth)
{
    if (g->count > depth)
        return PATTERN_NONE;
    if (top_compiled_frame(a, g))
        return PATTERN_TOP_COMPILED;
    return lost_recursive_frame(a, g) ? PATTERN_LOST_RECURSIVE : PATTERN_NONE;
}

/* Named right away: the classes may be unloaded by the time the report is written. */
static void list_mismatch(struct mismatch *list, uint32_t *n, uint32_t cap, jvmtiEnv *jvmti,
                          JNIEnv *jni, const struct fx_thread *t, const struct fx_stack *a,
                          const struct fx_stack *g, jint first_diff, enum pattern pattern)
{
    if (*n >= cap)
        return;
    struct mismatch *m = &list[(*n)++];
    m->thread = fx_strdup(t->name);
    m->asgct_count = a->count;
    m->jvmti_count = g->count;
    m->first_diff = first_diff;
    m->pattern = pattern;
    m->asgct = name_frames(jvmti, jni, a, &m->n_asgct);
    m->jvmti = name_frames(jvmti, jni, g, &m->n_jvmti);
}

/* An ASGCT status is a skip by code, never an agreement, whatever JVMTI saw. */
static void skip_by_code(int32_t num_frames, jint gst_count)
{
    if (num_frames > -FX_ASGCT_CODES)
        inc(&va.code_skipped[-num_frames]);
    else
        inc(&va.code_other);
    if (gst_count == 0)
        inc(&va.code_no_java);
}

/* A recovered stack (recovery: its FX_REC_* case) compared with JVMTI's by the recovery's rules
 * (stackcmp.c) into its class's counters; disagreements listed with both stacks. */
static void tally(jvmtiEnv *jvmti, JNIEnv *jni, const struct fx_thread *t, const struct fx_stack *a,
                  const struct fx_stack *g, uint8_t recovery, uint64_t *agreed, uint64_t *disagreed,
                  uint64_t *deeper, struct mismatch *list, uint32_t *n)
{
    enum fx_rv_verdict v = fx_stackcmp_recovered(a, g, recovery, (int)va.depth);
    if (v == FX_RV_DEEPER) {
        inc(deeper);
    } else if (v == FX_RV_AGREED) {
        inc(agreed);
    } else {
        inc(disagreed);
        list_mismatch(list, n, MAX_REC_LISTED, jvmti, jni, t, a, g, -1, PATTERN_NONE);
    }
}

/* The anchor walk done beside ASGCT (fx_probe_shadow), n frames or rc < 0 why not. */
static void classify_shadow(jvmtiEnv *jvmti, JNIEnv *jni, const struct fx_thread *t, int32_t code,
                            int32_t rc, int32_t n, const struct fx_stack *g)
{
    enum shadow_by by = code > 0                                 ? SHADOW_BY_FRAMES
                        : code == FX_ASGCT_NOT_WALKABLE_NOT_JAVA ? SHADOW_BY_NOT_WALKABLE
                                                                 : SHADOW_BY_OTHER;
    if (rc < 0 && -rc < FX_REC_FAILS)
        inc(&va.shadow_not[-rc]);
    if (rc != FX_REC_ANCHOR || n <= 0)
        return;
    struct fx_stack a = {.count = n, .frames = va.shadow};
    tally(jvmti, jni, t, &a, g, FX_REC_ANCHOR, &va.shadow_agreed[by], &va.shadow_disagreed[by],
          &va.shadow_deeper, va.shadow_listed, &va.n_shadow_listed);
}

/* num_frames: the probe's trace (recovered when recovery is an FX_REC_* case), code: ASGCT's. */
static void classify(jvmtiEnv *jvmti, JNIEnv *jni, const struct fx_thread *t, int32_t num_frames,
                     int32_t code, uint8_t recovery, int32_t shadow_rc, int32_t shadow_n,
                     jint gst_count)
{
    struct fx_stack a = {.count = num_frames, .frames = va.asg};
    struct fx_stack g = {.count = gst_count, .frames = va.gst};
    bool recovered = recovery > 0 && recovery < FX_REC_CASES && num_frames > 0;
    set_hint(t, gst_count == 0);
    if (code <= 0) /* ASGCT's own answer is a skip, recovered or not */
        skip_by_code(code, gst_count);
    uint8_t why = recovery & (uint8_t) ~(FX_REC_FAILED | FX_REC_NAMED); /* sample.h's byte */
    if (recovery >= FX_REC_FAILED && why < FX_REC_FAILS)
        inc(&va.rec_not[why]);
    fx_stackcmp_from_jvmti(va.info, gst_count, va.gst);
    classify_shadow(jvmti, jni, t, code, shadow_rc, shadow_n, &g);
    if (num_frames <= 0 || (code <= 0 && !recovered))
        return;
    /* JVMTI on a carrier gives the carrier's frames only, ASGCT the virtual thread's on top. */
    if (va.enter_special != NULL && contains(&a, va.enter_special) &&
        !contains(&g, va.enter_special)) {
        inc(&va.skipped[SKIP_VTHREAD]);
        return;
    }
    if (recovered) {
        tally(jvmti, jni, t, &a, &g, recovery, &va.rec_agreed[recovery],
              &va.rec_disagreed[recovery], &va.rec_deeper, va.rec_listed, &va.n_rec_listed);
        return;
    }
    inc(&va.compared);
    struct fx_stack_verdict v = fx_stackcmp_compare(&a, &g, (int)va.depth);
    if (v.first_diff < 0) {
        inc(&va.exact);
    } else if (agrees_below_top(&a, &g, (int)va.depth)) {
        inc(&va.below_top);
        list_mismatch(va.top_listed, &va.n_top_listed, MAX_TOP_LISTED, jvmti, jni, t, &a, &g, 0,
                      PATTERN_NONE);
    } else {
        enum pattern known = known_pattern(&a, &g, (int)va.depth);
        inc(&va.mismatches);
        inc(&va.patterns[known]);
        list_mismatch(va.listed, &va.n_listed, MAX_LISTED, jvmti, jni, t, &a, &g, v.first_diff,
                      known);
    }
}

/* --- one step --- */

static enum skip suspend_error(jvmtiError err)
{
    return err == JVMTI_ERROR_THREAD_NOT_ALIVE ? SKIP_NOT_ALIVE : SKIP_SUSPEND_FAILED;
}

static void account_suspension(int64_t ns)
{
    va.suspended_ns += ns;
    if (ns > va.suspended_max_ns)
        va.suspended_max_ns = ns;
}

/* Under the registry lock, so t can be neither unregistered nor freed meanwhile. The probe is
 * taken (and its buffer allocated) before the suspension: nothing allocates while t is held. */
static void check_thread(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_thread *t)
{
    int rc = fx_probe_begin(t, va.depth, true);
    if (rc != FX_OK) {
        inc(&va.skipped[rc == FX_ESTATE ? SKIP_PROBE_BUSY : SKIP_PROBE_FAILED]);
        return;
    }
    jvmtiError err = (*jvmti)->SuspendThread(jvmti, t->ref);
    if (err != JVMTI_ERROR_NONE) {
        fx_probe_end(t);
        inc(&va.skipped[suspend_error(
                err)]); /* including "already suspended": not ours to resume */
        return;
    }
    int64_t t0 = fx_now_ns();
    jint n = 0;
    int32_t num_frames = 0, code = 0, shadow_rc = 0, shadow_n = 0;
    uint8_t recovery = 0;
    err = (*jvmti)->GetStackTrace(jvmti, t->ref, 0, (jint)va.depth + 1, va.info, &n);
    if (err == JVMTI_ERROR_NONE)
        rc = fx_probe_run(t, PROBE_WAIT_NS, va.asg, &num_frames);
    if (err == JVMTI_ERROR_NONE && rc == FX_OK) {
        fx_probe_recovery(t, &code, &recovery);
        shadow_rc = fx_probe_shadow(t, va.shadow, &shadow_n);
    }
    if ((*jvmti)->ResumeThread(jvmti, t->ref) != JVMTI_ERROR_NONE)
        inc(&va.resume_failed);
    account_suspension(fx_now_ns() - t0);
    fx_probe_end(t);
    if (err != JVMTI_ERROR_NONE)
        inc(&va.skipped[err == JVMTI_ERROR_THREAD_NOT_ALIVE ? SKIP_NOT_ALIVE : SKIP_STACK_FAILED]);
    else if (rc != FX_OK)
        inc(&va.skipped[rc == FX_ESTATE ? SKIP_PROBE_TIMEOUT : SKIP_PROBE_FAILED]);
    else
        classify(jvmti, jni, t, num_frames, code, recovery, shadow_rc, shadow_n, n);
}

static void step(jvmtiEnv *jvmti, JNIEnv *jni)
{
    fx_threads_lock();
    struct fx_thread *t = pick(jvmti, va.steps % ANY_STATE_EVERY == 0);
    if (t == NULL)
        inc(&va.skipped[SKIP_NO_THREAD]);
    else
        check_thread(jvmti, jni, t);
    fx_threads_unlock();
    inc(&va.steps);
}

/* --- the thread --- */

static void validate_tick(JNIEnv *jni, void *arg)
{
    (void)arg;
    jvmtiEnv *jvmti = fx_jvmti();
    if (va.enter_special == NULL && !va.looked_up)
        va.enter_special = fx_stackcmp_enter_special(jni, jvmti);
    va.looked_up = true;
    step(jvmti, jni);
}

static struct fx_periodic validator = {
        .name = "fxagent validator", .period_ns = PERIOD_NS, .tick = validate_tick};

/* Each start (a stop stops the validator), with that recording's depth. */
int fx_validate_start(JNIEnv *jni)
{
    fx_free(va.info);
    fx_free(va.gst);
    fx_free(va.asg);
    fx_free(va.shadow);
    va.depth = fx_opt()->depth;
    va.info = fx_calloc((size_t)va.depth + 1, sizeof(*va.info));
    va.gst = fx_calloc((size_t)va.depth + 1, sizeof(*va.gst));
    va.asg = fx_calloc(va.depth, sizeof(*va.asg));
    va.shadow = fx_calloc(va.depth, sizeof(*va.shadow));
    if (va.info == NULL || va.gst == NULL || va.asg == NULL || va.shadow == NULL)
        return FX_ENOMEM;
    return fx_periodic_start(jni, &validator);
}

void fx_validate_stop(void)
{
    fx_periodic_stop(&validator);
}
