/* SPDX-License-Identifier: Apache-2.0 */
/* Validate mode: an agent thread that, every PERIOD_NS, suspends one registered Java thread
 * (round robin, RUNNABLE ones and carriers carrying a virtual thread first), takes its JVMTI
 * stack, then its ASGCT stack through a probe (the thread's own SIGPROF handler, which runs
 * although the thread is suspended), resumes it and compares the two; a carrier carrying a
 * virtual thread is compared with that thread's stack (check_carrying, the route to it in
 * vthread.c). A trace ASGCT failed and the probe recovered, and the anchor walk the probe does
 * beside ASGCT, are compared by the recovery's rules, in classes of their own (tally).
 * Invariant: every thread this file suspends is resumed before the step ends, on every path,
 * and no step outlives fx_validate_stop. */
#include "internal.h"
#include "proofs.h"

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
    /* A carrier carrying a virtual thread is WAITING to JVMTI, whatever that thread does; the
     * mount events' slot says it carries one, which is worth a check as much as RUNNABLE. */
    bool carrying = __atomic_load_n(&t->vt_id, __ATOMIC_RELAXED) != 0;
    return (s & JVMTI_THREAD_STATE_RUNNABLE) || carrying ? 3 : 2;
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

static enum pattern known_pattern(const struct fx_stack *a, const struct fx_stack *g, int depth)
{
    if (g->count > depth)
        return PATTERN_NONE;
    if (fx_va_vt_not_thawed(a, g, va.enter_special))
        return PATTERN_NOT_THAWED;
    if (fx_stackcmp_top_compiled(a, g))
        return PATTERN_TOP_COMPILED;
    if (fx_stackcmp_cut_at_vm_upcall(a, g, va.vm_upcalls, va.n_vm_upcalls))
        return PATTERN_VM_UPCALL;
    if (fx_stackcmp_lost_recursive(a, g))
        return PATTERN_LOST_RECURSIVE;
    if (fx_va_scopes_top_nmethod(a, g, va.scopes, va.n_scopes))
        return PATTERN_TOP_SCOPES;
    struct fx_stack sh = {.count = va.shadow_n, .frames = va.shadow};
    return fx_va_cut_at_deopt(a, g, &sh, va.facts.deopt_frame) ? PATTERN_DEOPT_CUT : PATTERN_NONE;
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
    fx_asgct_frame sc[FX_SCOPES_MAX]; /* the proof, named as frames "@0" (the checker strips) */
    struct fx_stack s = {.count = fx_va_proof(pattern, sc, FX_SCOPES_MAX), sc};
    m->top_code = va.facts.top_code;
    m->scopes = s.count > 0 ? name_frames(jvmti, jni, &s, &m->n_scopes) : NULL;
}

/* An ASGCT status is a skip by code, never an agreement, whatever JVMTI saw. */
static void skip_by_code(int32_t num_frames, jint gst_count)
{
    if (num_frames > -FX_ASGCT_CODES)
        fx_va_inc(&va.code_skipped[-num_frames]);
    else
        fx_va_inc(&va.code_other);
    if (gst_count == 0)
        fx_va_inc(&va.code_no_java);
}

/* One answer of the probe, read while the thread is held. */
struct answer {
    int32_t num_frames; /* the trace in va.asg: recovered when recovery is an FX_REC_* case */
    int32_t code;       /* ASGCT's own num_frames */
    int32_t shadow_rc;  /* the anchor walk beside ASGCT (fx_probe_shadow), shadow_n frames */
    int32_t shadow_n;
    bool shadow_whole; /* the walk claims the thread's bottom Java frame (an entry frame's) */
    uint8_t recovery;  /* sample.h's recovery byte */
};

/* A recovered stack (recovery: its FX_REC_* case) compared with JVMTI's by the recovery's rules
 * (stackcmp.c) into its class's counters; disagreements listed with both stacks. */
static void tally(jvmtiEnv *jvmti, JNIEnv *jni, const struct fx_thread *t, const struct fx_stack *a,
                  const struct fx_stack *g, uint8_t recovery, uint64_t *agreed, uint64_t *disagreed,
                  uint64_t *deeper, struct mismatch *list, uint32_t *n)
{
    jint interp = 0; /* issue 32: the anchor walk's interpreted frames (lineno a bci) */
    for (jint k = 0; recovery == FX_REC_ANCHOR && k < a->count; k++)
        interp += a->frames[k].lineno != FX_LINE_NMETHOD;
    if (interp > 0) {
        fx_va_inc(&va.anchor_interp_walks);
        __atomic_fetch_add(&va.anchor_interp_frames, (uint64_t)interp, __ATOMIC_RELAXED);
    }
    enum fx_rv_verdict v = fx_stackcmp_recovered(a, g, recovery, (int)va.depth);
    if (v == FX_RV_DEEPER) {
        fx_va_inc(deeper);
    } else if (v == FX_RV_AGREED) {
        fx_va_inc(agreed);
    } else {
        fx_va_inc(disagreed);
        list_mismatch(list, n, MAX_REC_LISTED, jvmti, jni, t, a, g, -1, PATTERN_NONE);
    }
}

/* The anchor walk done beside ASGCT: shadow_n frames in va.shadow, or shadow_rc < 0 why not. */
static void classify_shadow(jvmtiEnv *jvmti, JNIEnv *jni, const struct fx_thread *t,
                            const struct answer *ans, const struct fx_stack *g)
{
    int32_t code = ans->code, rc = ans->shadow_rc;
    enum shadow_by by = code > 0                                 ? SHADOW_BY_FRAMES
                        : code == FX_ASGCT_NOT_WALKABLE_NOT_JAVA ? SHADOW_BY_NOT_WALKABLE
                                                                 : SHADOW_BY_OTHER;
    if (rc < 0 && -rc < FX_REC_FAILS)
        fx_va_inc(&va.shadow_not[-rc]);
    if (rc != FX_REC_ANCHOR || ans->shadow_n <= 0)
        return;
    struct fx_stack a = {.count = ans->shadow_n, .frames = va.shadow};
    if (fx_va_vt_in_transition(&a, g)) {
        fx_va_inc(&va.shadow_transitions);
        return;
    }
    if (ans->shadow_whole && g->count <= (jint)va.depth) { /* issue 32: whole, or listed */
        fx_va_inc(&va.anchor_whole);
        if (!fx_stackcmp_anchor_bottom(&a, g)) {
            fx_va_inc(&va.shadow_disagreed[by]);
            list_mismatch(va.shadow_listed, &va.n_shadow_listed, MAX_REC_LISTED, jvmti, jni, t, &a,
                          g, -1, PATTERN_NONE);
            return;
        }
    }
    tally(jvmti, jni, t, &a, g, FX_REC_ANCHOR, &va.shadow_agreed[by], &va.shadow_disagreed[by],
          &va.shadow_deeper, va.shadow_listed, &va.n_shadow_listed);
}

/* One comparison of t's stacks (gst_count frames in va.gst, already in ASGCT's encoding),
 * counted and, if it is a mismatch, listed. A recovered trace is a class of its own (the
 * recovered counters) and, as ASGCT failed, OUT_NONE; the anchor walk beside ASGCT is counted
 * whatever ASGCT said. */
static enum outcome classify(jvmtiEnv *jvmti, JNIEnv *jni, const struct fx_thread *t,
                             const struct answer *ans, jint gst_count, enum pattern *pattern)
{
    struct fx_stack a = {.count = ans->num_frames, .frames = va.asg};
    struct fx_stack g = {.count = gst_count, .frames = va.gst};
    uint8_t recovery = ans->recovery;
    bool recovered = recovery > 0 && recovery < FX_REC_CASES && a.count > 0;
    *pattern = PATTERN_NONE;
    set_hint(t, gst_count == 0);
    if (ans->code <= 0) /* ASGCT's own answer is a skip, recovered or not */
        skip_by_code(ans->code, gst_count);
    uint8_t why = recovery & (uint8_t) ~(FX_REC_FAILED | FX_REC_NAMED); /* sample.h's byte */
    if (recovery >= FX_REC_FAILED && why < FX_REC_FAILS)
        fx_va_inc(&va.rec_not[why]);
    classify_shadow(jvmti, jni, t, ans, &g);
    if (a.count <= 0 || (ans->code <= 0 && !recovered))
        return OUT_NONE;
    /* JVMTI on a carrier gives the carrier's frames only, ASGCT the virtual thread's on top:
     * a virtual thread the step did not find (vthread.c finds it when it can). */
    if (va.enter_special != NULL && contains(&a, va.enter_special) &&
        !contains(&g, va.enter_special)) {
        fx_va_inc(&va.skipped[SKIP_VTHREAD]);
        return OUT_NONE;
    }
    if (recovered) {
        if (fx_va_vt_in_transition(&a, &g)) /* 4.7: JVMTI hides the transition's frames */
            fx_va_inc(&va.rec_transitions);
        else
            tally(jvmti, jni, t, &a, &g, recovery, &va.rec_agreed[recovery],
                  &va.rec_disagreed[recovery], &va.rec_deeper, va.rec_listed, &va.n_rec_listed);
        return OUT_NONE;
    }
    fx_va_inc(&va.compared);
    struct fx_stack_verdict v = fx_stackcmp_compare(&a, &g, (int)va.depth);
    if (v.first_diff < 0) {
        fx_va_inc(&va.exact);
        return OUT_EXACT;
    }
    if (fx_va_vt_in_transition(&a, &g)) {
        fx_va_inc(&va.transitions);
        return OUT_TRANSITION;
    }
    if (agrees_below_top(&a, &g, (int)va.depth)) {
        fx_va_inc(&va.below_top);
        list_mismatch(va.top_listed, &va.n_top_listed, MAX_TOP_LISTED, jvmti, jni, t, &a, &g, 0,
                      PATTERN_NONE);
        return OUT_BELOW_TOP;
    }
    enum pattern known = known_pattern(&a, &g, (int)va.depth);
    fx_va_inc(&va.mismatches);
    fx_va_inc(&va.patterns[known]);
    list_mismatch(va.listed, &va.n_listed, MAX_LISTED, jvmti, jni, t, &a, &g, v.first_diff, known);
    *pattern = known;
    return OUT_MISMATCH;
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

/* The thread's JVMTI stack again (into va.info) is gst's n frames: it did not move. */
static bool still(jvmtiEnv *jvmti, jthread thread, const fx_asgct_frame *gst, jint n)
{
    jint again = 0;
    if ((*jvmti)->GetStackTrace(jvmti, thread, 0, (jint)va.depth + 1, va.info, &again) !=
                JVMTI_ERROR_NONE ||
        again != n)
        return false;
    for (jint i = 0; i < n; i++) {
        fx_asgct_frame f;
        fx_stackcmp_from_jvmti(&va.info[i], 1, &f);
        if (!fx_stackcmp_same_frame(&f, &gst[i]))
            return false;
    }
    return true;
}

/* The probe on t (held): the trace into va.asg and, while t is still held, what ASGCT itself
 * said, the recovery and the anchor walk beside it (into va.shadow). */
static int run_probe(struct fx_thread *t, struct answer *ans)
{
    *ans = (struct answer){0};
    va.n_scopes = 0;
    va.shadow_n = 0;
    int rc = fx_probe_run(t, PROBE_WAIT_NS, va.asg, &ans->num_frames);
    if (rc == FX_OK) {
        fx_probe_recovery(t, &ans->code, &ans->recovery);
        ans->shadow_rc =
                fx_probe_shadow(t, va.shadow, &ans->shadow_n, &ans->shadow_whole, &va.facts);
        va.shadow_n = ans->shadow_rc == FX_REC_ANCHOR ? ans->shadow_n : 0; /* 4.9's evidence */
        /* the top nmethod's scopes, copied while t runs in it (it cannot be freed meanwhile) */
        bool top = ans->shadow_n > 0 && va.shadow[0].lineno == FX_LINE_NMETHOD;
        va.n_scopes = top ? fx_va_scopes_copy(va.facts.top_code, va.shadow[0].method_id, va.scopes,
                                              FX_SCOPES_MAX)
                          : 0;
    }
    return rc;
}

/* t suspended, carrying no virtual thread: its JVMTI stack, ASGCT's through the probe, and its
 * JVMTI stack once more, which tells a thread that was not stopped (a carrier whose virtual
 * thread unmounted after the suspension, on its way to where HotSpot stops it). */
static void check_stopped(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_thread *t, int64_t t0)
{
    jint n = 0;
    struct answer ans = {0};
    int rc = FX_OK;
    bool moved = false;
    jvmtiError err = (*jvmti)->GetStackTrace(jvmti, t->ref, 0, (jint)va.depth + 1, va.info, &n);
    if (err == JVMTI_ERROR_NONE) {
        fx_stackcmp_from_jvmti(va.info, n, va.gst);
        rc = run_probe(t, &ans);
        moved = rc == FX_OK && !still(jvmti, t->ref, va.gst, n);
    }
    if ((*jvmti)->ResumeThread(jvmti, t->ref) != JVMTI_ERROR_NONE)
        fx_va_inc(&va.resume_failed);
    account_suspension(fx_now_ns() - t0);
    enum pattern pattern;
    if (err != JVMTI_ERROR_NONE)
        fx_va_inc(&va.skipped[err == JVMTI_ERROR_THREAD_NOT_ALIVE ? SKIP_NOT_ALIVE
                                                                  : SKIP_STACK_FAILED]);
    else if (rc != FX_OK)
        fx_va_inc(&va.skipped[rc == FX_ESTATE ? SKIP_PROBE_TIMEOUT : SKIP_PROBE_FAILED]);
    else if (moved)
        fx_va_inc(&va.skipped[SKIP_MOVED]);
    else
        classify(jvmti, jni, t, &ans, n, &pattern);
}

static void count(enum outcome out, enum pattern pattern)
{
    struct va_vt *v = &va.vt;
    uint64_t *c[] = {[OUT_EXACT] = &v->exact,
                     [OUT_BELOW_TOP] = &v->below_top,
                     [OUT_TRANSITION] = &v->transitions,
                     [OUT_MISMATCH] = &v->mismatches};
    if (out == OUT_NONE) {
        fx_va_inc(&v->by_code);
        return;
    }
    fx_va_inc(&v->compared);
    fx_va_inc(c[out]);
    if (out == OUT_MISMATCH)
        fx_va_inc(&v->patterns[pattern]);
}

/* vt suspended and still mounted: both JVMTI stacks, ASGCT's, vt's JVMTI stack again, and what
 * the mount events' slot says (*slot: its counter). Returns the skip, or VT_SKIP_COUNT when
 * there is something to compare (*n frames in va.gst). */
static enum vt_skip take(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_thread *t, jobject vt, jint *n,
                         jint *nc, struct answer *ans, uint64_t **slot)
{
    jvmtiError err = (*jvmti)->GetStackTrace(jvmti, vt, 0, (jint)va.depth + 1, va.info, n);
    if (err != JVMTI_ERROR_NONE)
        return VT_SKIP_STACK_FAILED;
    fx_stackcmp_from_jvmti(va.info, *n, va.gst);
    err = (*jvmti)->GetStackTrace(jvmti, t->ref, 0, (jint)va.depth + 1, va.info, nc);
    if (err != JVMTI_ERROR_NONE)
        return VT_SKIP_STACK_FAILED;
    fx_stackcmp_from_jvmti(va.info, *nc, va.vt.carrier);
    if (run_probe(t, ans) != FX_OK)
        return VT_SKIP_PROBE;
    if (!still(jvmti, vt, va.gst, *n))
        return VT_SKIP_MOVED;
    *slot = fx_va_vt_slot(jni, t, vt);
    return VT_SKIP_COUNT;
}

/* The step on t (suspended) carrying vt (vthread.c found it): vt suspended too, its JVMTI stack
 * joined to the carrier's against ASGCT's, counted in va.vt and the overall figures. */
static void check_carrying(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_thread *t, jobject vt,
                           jobject cont)
{
    struct va_vt *v = &va.vt;
    if ((*jvmti)->SuspendThread(jvmti, vt) != JVMTI_ERROR_NONE) {
        fx_va_inc(&v->skipped[VT_SKIP_SUSPEND_FAILED]); /* "already suspended" too: not ours */
        return;
    }
    /* Stopped if still mounted: the marked carrier stops at its next unmount, never mounts it
     * again. Its continuation is its own, so the same one on the carrier is the same thread. */
    jobject now = (*jni)->GetObjectField(jni, t->ref, v->cont);
    enum vt_skip skip = VT_SKIP_UNMOUNTED;
    jint n = 0, nc = 0;
    struct answer ans = {0};
    uint64_t *slot = NULL;
    if (now != NULL && (*jni)->IsSameObject(jni, now, cont))
        skip = take(jvmti, jni, t, vt, &n, &nc, &ans, &slot);
    if ((*jvmti)->ResumeThread(jvmti, vt) != JVMTI_ERROR_NONE)
        fx_va_inc(&va.resume_failed);
    if (skip != VT_SKIP_COUNT) {
        fx_va_inc(&v->skipped[skip]);
        return;
    }
    struct fx_stack g = {.count = n, .frames = va.gst};
    fx_stackcmp_join_carrier(&g, va.enter_special, v->carrier, nc, (int)va.depth + 1);
    enum pattern pattern = PATTERN_NONE;
    enum outcome out = classify(jvmti, jni, t, &ans, g.count, &pattern);
    count(out, pattern);
    /* 4.7: stopped mid-switch, the slot is not comparable: the mount callback that writes it
     * runs after the switch, the unmount one before it. */
    fx_va_inc(out == OUT_TRANSITION ? &v->slot_transition : slot);
}

/* Under the registry lock, so t can be neither unregistered nor freed meanwhile. The probe is
 * taken (and its buffer allocated) before the suspension, and room for the local references:
 * nothing allocates while t is held. */
static void check_thread(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_thread *t)
{
    int rc = fx_probe_begin(t, va.depth, true);
    if (rc != FX_OK) {
        fx_va_inc(&va.skipped[rc == FX_ESTATE ? SKIP_PROBE_BUSY : SKIP_PROBE_FAILED]);
        return;
    }
    if ((*jni)->PushLocalFrame(jni, 16) != JNI_OK) {
        (*jni)->ExceptionClear(jni);
        fx_probe_end(t);
        fx_va_inc(&va.skipped[SKIP_PROBE_FAILED]);
        return;
    }
    fx_va_vt_learn(jni, t->ref);
    jvmtiError err = (*jvmti)->SuspendThread(jvmti, t->ref);
    if (err == JVMTI_ERROR_NONE) {
        int64_t t0 = fx_now_ns();
        jobject cont = NULL;
        jobject vt = fx_va_vt_mounted(jni, t->ref, &cont);
        if (vt != NULL) {
            check_carrying(jvmti, jni, t, vt, cont);
            if ((*jvmti)->ResumeThread(jvmti, t->ref) != JVMTI_ERROR_NONE)
                fx_va_inc(&va.resume_failed);
            account_suspension(fx_now_ns() - t0);
        } else {
            check_stopped(jvmti, jni, t, t0);
        }
    } else { /* including "already suspended": not ours to resume */
        fx_va_inc(&va.skipped[suspend_error(err)]);
    }
    (*jni)->PopLocalFrame(jni, NULL);
    fx_probe_end(t);
}

static void step(jvmtiEnv *jvmti, JNIEnv *jni)
{
    fx_threads_lock();
    struct fx_thread *t = pick(jvmti, va.steps % ANY_STATE_EVERY == 0);
    if (t == NULL)
        fx_va_inc(&va.skipped[SKIP_NO_THREAD]);
    else
        check_thread(jvmti, jni, t);
    fx_threads_unlock();
    fx_va_inc(&va.steps);
}

/* --- the thread --- */

static void validate_tick(JNIEnv *jni, void *arg)
{
    (void)arg;
    jvmtiEnv *jvmti = fx_jvmti();
    if (va.enter_special == NULL && !va.looked_up) {
        va.enter_special = fx_stackcmp_enter_special(jni, jvmti);
        va.n_vm_upcalls = fx_stackcmp_vm_upcalls(jni, va.vm_upcalls);
        fx_va_vt_start(jni, jvmti);
    }
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
    fx_free(va.vt.carrier);
    fx_free(va.shadow);
    va.depth = fx_opt()->depth;
    va.info = fx_calloc((size_t)va.depth + 1, sizeof(*va.info));
    va.gst = fx_calloc((size_t)va.depth + 1, sizeof(*va.gst));
    va.asg = fx_calloc(va.depth, sizeof(*va.asg));
    va.vt.carrier = fx_calloc((size_t)va.depth + 1, sizeof(*va.vt.carrier));
    va.shadow = fx_calloc(va.depth, sizeof(*va.shadow));
    if (va.info == NULL || va.gst == NULL || va.asg == NULL || va.vt.carrier == NULL ||
        va.shadow == NULL)
        return FX_ENOMEM;
    return fx_periodic_start(jni, &validator);
}

void fx_validate_stop(void)
{
    fx_periodic_stop(&validator);
}
