/* SPDX-License-Identifier: Apache-2.0 */
/* Validate mode: an agent thread that, every PERIOD_NS, suspends one registered Java thread
 * (round robin, RUNNABLE ones first), takes its JVMTI stack, then its ASGCT stack through a
 * probe (the thread's own SIGPROF handler, which runs although the thread is suspended),
 * resumes it and compares the two. Invariant: every thread this file suspends is resumed before
 * the step ends, on every path, and no step outlives fx_validate_stop. */
#include "fx_agent.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_json.h"
#include "fx_out_file.h"

#define PERIOD_NS       20000000  /* one thread checked every 20 ms */
#define PROBE_WAIT_NS   100000000 /* the suspended thread's handler answers within 100 ms */
#define SCAN_MAX        64        /* threads whose state is read per step */
#define MAX_LISTED      100       /* mismatches kept with both stacks */
#define MAX_TOP_LISTED  20        /* examples of stacks agreeing below the top frame */
#define LISTED_FRAMES   256       /* frames named per stack of a listed mismatch */
#define NAME_MAX_LEN    512
#define ANY_STATE_EVERY 8   /* every 8th step ignores the RUNNABLE preference */
#define HINT_SLOTS      256 /* threads remembered as having no Java frame (power of two) */

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

static const char *const skip_keys[SKIP_COUNT] = {
        "no_thread_to_check", "probe_busy",      "suspend_failed", "thread_ended",
        "stack_trace_failed", "probe_no_answer", "probe_failed",   "virtual_thread_mounted",
};

/* Documented HotSpot disagreements (docs/VALIDATION.md 4.2, 4.3): still mismatches, but named. */
enum pattern {
    PATTERN_NONE = 0,
    PATTERN_TOP_COMPILED,   /* the top compiled frame decoded at another debug-info point */
    PATTERN_LOST_RECURSIVE, /* ASGCT lacks one frame of a recursion (seen on JDK 17) */
    PATTERN_COUNT
};

static const char *const pattern_keys[PATTERN_COUNT] = {NULL, "top_compiled_frame",
                                                        "lost_recursive_frame"};

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
static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stop, running;
    uint32_t cursor, depth;
    jvmtiFrameInfo *info;
    fx_asgct_frame *gst, *asg;
    jmethodID enter_special;
    uint64_t steps, compared, exact, below_top, mismatches, skipped[SKIP_COUNT];
    uint64_t patterns[PATTERN_COUNT]; /* [0]: mismatches of no known pattern */
    uint64_t code_skipped[FX_ASGCT_CODES], code_other, code_no_java, resume_failed;
    struct hint frameless[HINT_SLOTS];
    int64_t suspended_ns, suspended_max_ns;
    struct mismatch listed[MAX_LISTED], top_listed[MAX_TOP_LISTED];
    uint32_t n_listed, n_top_listed;
} va = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static void inc(uint64_t *c)
{
    __atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static uint64_t get(const uint64_t *c)
{
    return __atomic_load_n(c, __ATOMIC_RELAXED);
}

int fx_validate_setup(jvmtiEnv *jvmti, struct fx_errbuf *eb)
{
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
    if (__atomic_load_n(&t->ended, __ATOMIC_ACQUIRE) ||
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

static char **name_frames(jvmtiEnv *jvmti, JNIEnv *jni, const struct fx_stack *s, uint32_t *n)
{
    uint32_t want = s->count > 0 ? (uint32_t)s->count : 0;
    want = want > LISTED_FRAMES ? LISTED_FRAMES : want;
    char **names = fx_calloc(want > 0 ? want : 1, sizeof(*names));
    *n = 0;
    for (uint32_t i = 0; names != NULL && i < want; i++) {
        char buf[NAME_MAX_LEN];
        fx_stackcmp_frame_name(jvmti, jni, &s->frames[i], buf, sizeof(buf));
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

static void classify(jvmtiEnv *jvmti, JNIEnv *jni, const struct fx_thread *t, int32_t num_frames,
                     jint gst_count)
{
    struct fx_stack a = {.count = num_frames, .frames = va.asg};
    struct fx_stack g = {.count = gst_count, .frames = va.gst};
    set_hint(t, gst_count == 0);
    if (num_frames <= 0) {
        skip_by_code(num_frames, gst_count);
        return;
    }
    fx_stackcmp_from_jvmti(va.info, gst_count, va.gst);
    /* JVMTI on a carrier gives the carrier's frames only, ASGCT the virtual thread's on top. */
    if (va.enter_special != NULL && contains(&a, va.enter_special) &&
        !contains(&g, va.enter_special)) {
        inc(&va.skipped[SKIP_VTHREAD]);
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
    int rc = fx_probe_begin(t, va.depth);
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
    int64_t t0 = fx_agent_now_ns();
    jint n = 0;
    int32_t num_frames = 0;
    err = (*jvmti)->GetStackTrace(jvmti, t->ref, 0, (jint)va.depth + 1, va.info, &n);
    if (err == JVMTI_ERROR_NONE)
        rc = fx_probe_run(t, PROBE_WAIT_NS, va.asg, &num_frames);
    if ((*jvmti)->ResumeThread(jvmti, t->ref) != JVMTI_ERROR_NONE)
        inc(&va.resume_failed);
    account_suspension(fx_agent_now_ns() - t0);
    fx_probe_end(t);
    if (err != JVMTI_ERROR_NONE)
        inc(&va.skipped[err == JVMTI_ERROR_THREAD_NOT_ALIVE ? SKIP_NOT_ALIVE : SKIP_STACK_FAILED]);
    else if (rc != FX_OK)
        inc(&va.skipped[rc == FX_ESTATE ? SKIP_PROBE_TIMEOUT : SKIP_PROBE_FAILED]);
    else
        classify(jvmti, jni, t, num_frames, n);
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

static bool validate_sleep(struct timespec *next)
{
    uint64_t ns = (uint64_t)next->tv_nsec + PERIOD_NS;
    next->tv_sec += (time_t)(ns / 1000000000);
    next->tv_nsec = (long)(ns % 1000000000);
    pthread_mutex_lock(&va.lock);
    while (!va.stop && pthread_cond_timedwait(&va.cond, &va.lock, next) == 0)
        ;
    bool stop = va.stop;
    pthread_mutex_unlock(&va.lock);
    return !stop;
}

static void JNICALL validate_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
    (void)arg;
    va.enter_special = fx_stackcmp_enter_special(jni, jvmti);
    struct timespec next;
    clock_gettime(CLOCK_REALTIME, &next); /* the default clock of pthread_cond_timedwait */
    while (validate_sleep(&next))
        step(jvmti, jni);
    pthread_mutex_lock(&va.lock);
    va.running = false;
    pthread_cond_broadcast(&va.cond);
    pthread_mutex_unlock(&va.lock);
}

int fx_validate_start(JNIEnv *jni)
{
    va.depth = fx_ag.opt.depth;
    va.info = fx_calloc((size_t)va.depth + 1, sizeof(*va.info));
    va.gst = fx_calloc((size_t)va.depth + 1, sizeof(*va.gst));
    va.asg = fx_calloc(va.depth, sizeof(*va.asg));
    if (va.info == NULL || va.gst == NULL || va.asg == NULL)
        return FX_ENOMEM;
    va.running = true;
    int rc = fx_agent_run_thread(jni, "fxagent validator", validate_main, NULL);
    if (rc != FX_OK)
        va.running = false;
    return rc;
}

void fx_validate_stop(void)
{
    pthread_mutex_lock(&va.lock);
    va.stop = true;
    pthread_cond_broadcast(&va.cond);
    while (va.running)
        pthread_cond_wait(&va.cond, &va.lock);
    pthread_mutex_unlock(&va.lock);
}

/* --- the report --- */

/* A consistent-enough copy of the counters (a dump reads them while the validator runs). */
struct summary {
    char *vm_version, *vm_vendor, *vm_name;
    uint64_t compared, exact, below_top, mismatches, known, skipped_code, skipped_other;
    double exact_rate, agree_rate, known_rate; /* of compared; -1 when nothing was compared */
};

static char *property(jvmtiEnv *jvmti, const char *key)
{
    char *v = NULL;
    if ((*jvmti)->GetSystemProperty(jvmti, key, &v) != JVMTI_ERROR_NONE || v == NULL)
        return NULL;
    char *copy = fx_strdup(v);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)v);
    return copy;
}

static void summarize(jvmtiEnv *jvmti, struct summary *s)
{
    memset(s, 0, sizeof(*s));
    s->vm_version = property(jvmti, "java.vm.version");
    s->vm_vendor = property(jvmti, "java.vm.vendor");
    s->vm_name = property(jvmti, "java.vm.name");
    s->compared = get(&va.compared);
    s->exact = get(&va.exact);
    s->below_top = get(&va.below_top);
    s->mismatches = get(&va.mismatches);
    s->known = s->mismatches - get(&va.patterns[PATTERN_NONE]);
    s->skipped_code = get(&va.code_other);
    for (int i = 0; i < FX_ASGCT_CODES; i++)
        s->skipped_code += get(&va.code_skipped[i]);
    for (int i = SKIP_NO_THREAD + 1; i < SKIP_COUNT; i++) /* a step with no thread skips none */
        s->skipped_other += get(&va.skipped[i]);
    s->exact_rate = s->compared ? (double)s->exact / (double)s->compared : -1;
    s->agree_rate = s->compared ? (double)(s->exact + s->below_top) / (double)s->compared : -1;
    s->known_rate =
            s->compared ? (double)(s->exact + s->below_top + s->known) / (double)s->compared : -1;
}

static void summary_free(struct summary *s)
{
    fx_free(s->vm_version);
    fx_free(s->vm_vendor);
    fx_free(s->vm_name);
}

static void json_rate(struct fx_json *j, const char *key, double rate)
{
    fx_json_key(j, key);
    if (rate < 0)
        fx_json_null(j);
    else
        fx_json_double(j, rate, 6);
}

static void json_u64(struct fx_json *j, const char *key, uint64_t v)
{
    fx_json_key(j, key);
    fx_json_u64(j, v);
}

static void json_names(struct fx_json *j, const char *key, char **names, uint32_t n)
{
    fx_json_key(j, key);
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < n; i++)
        fx_json_str(j, names[i]);
    fx_json_arr_end(j);
}

static void json_list(struct fx_json *j, const char *key, const struct mismatch *list, uint32_t n)
{
    fx_json_key(j, key);
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < n; i++) {
        const struct mismatch *m = &list[i];
        fx_json_obj_begin(j);
        fx_json_key(j, "thread");
        fx_json_str(j, m->thread);
        fx_json_key(j, "first_difference");
        fx_json_i64(j, m->first_diff);
        fx_json_key(j, "asgct_num_frames");
        fx_json_i64(j, m->asgct_count);
        fx_json_key(j, "jvmti_frames");
        fx_json_i64(j, m->jvmti_count);
        fx_json_key(j, "known_pattern");
        fx_json_str(j, pattern_keys[m->pattern]);
        json_names(j, "asgct", m->asgct, m->n_asgct);
        json_names(j, "jvmti", m->jvmti, m->n_jvmti);
        fx_json_obj_end(j);
    }
    fx_json_arr_end(j);
}

static void json_mismatches(struct fx_json *j)
{
    json_list(j, "mismatch_list", va.listed, va.n_listed);
    json_u64(j, "mismatches_not_listed", va.mismatches - va.n_listed);
    json_list(j, "below_top_examples", va.top_listed, va.n_top_listed);
}

static void json_skips(struct fx_json *j)
{
    fx_json_key(j, "skipped_by_code_detail");
    fx_json_obj_begin(j);
    for (int i = 0; i < FX_ASGCT_CODES; i++)
        json_u64(j, fx_stackcmp_status_name(-i), va.code_skipped[i]);
    json_u64(j, "other_codes", va.code_other);
    fx_json_obj_end(j);
    json_u64(j, "skipped_by_code_without_jvmti_frames", va.code_no_java);
    fx_json_key(j, "skipped_other");
    fx_json_obj_begin(j);
    for (int i = 0; i < SKIP_COUNT; i++)
        json_u64(j, skip_keys[i], va.skipped[i]);
    fx_json_obj_end(j);
}

static void json_jvm(struct fx_json *j, const struct summary *s)
{
    fx_json_key(j, "jvm");
    fx_json_obj_begin(j);
    fx_json_key(j, "java.vm.name");
    fx_json_str(j, s->vm_name);
    fx_json_key(j, "java.vm.version");
    fx_json_str(j, s->vm_version);
    fx_json_key(j, "java.vm.vendor");
    fx_json_str(j, s->vm_vendor);
    fx_json_obj_end(j);
}

static void json_settings(struct fx_json *j)
{
    fx_json_key(j, "settings");
    fx_json_obj_begin(j);
    json_u64(j, "period_ms", PERIOD_NS / 1000000);
    json_u64(j, "probe_wait_ms", PROBE_WAIT_NS / 1000000);
    json_u64(j, "depth", va.depth);
    fx_json_obj_end(j);
}

static void json_costs(struct fx_json *j)
{
    struct fx_probe_stats ps;
    fx_probe_stats(&ps);
    json_u64(j, "resume_failed", va.resume_failed);
    json_u64(j, "probe_signals_late", __atomic_load_n(&fx_sig.probe_late, __ATOMIC_RELAXED));
    json_u64(j, "probes_retired", ps.retired);
    fx_json_key(j, "suspended_ms_total");
    fx_json_double(j, (double)va.suspended_ns / 1e6, 3);
    fx_json_key(j, "suspended_ms_max");
    fx_json_double(j, (double)va.suspended_max_ns / 1e6, 3);
}

/* After fx_validate_stop: the validator's fields are no longer written. */
static void json_body(struct fx_json *j, const struct summary *s)
{
    fx_json_obj_begin(j);
    json_u64(j, "fxagent_validate_report", 1);
    json_jvm(j, s);
    json_settings(j);
    json_u64(j, "steps", va.steps);
    json_u64(j, "compared", s->compared);
    json_u64(j, "exact", s->exact);
    json_u64(j, "below_top", s->below_top);
    json_u64(j, "mismatches", s->mismatches);
    json_u64(j, "mismatches_known_pattern", s->known);
    fx_json_key(j, "mismatches_by_pattern");
    fx_json_obj_begin(j);
    for (int i = 1; i < PATTERN_COUNT; i++)
        json_u64(j, pattern_keys[i], va.patterns[i]);
    json_u64(j, "unexplained", va.patterns[PATTERN_NONE]);
    fx_json_obj_end(j);
    json_rate(j, "exact_rate", s->exact_rate);
    json_rate(j, "agreement_below_top_rate", s->agree_rate);
    json_rate(j, "agreement_with_known_pattern_rate", s->known_rate);
    json_u64(j, "skipped_by_code", s->skipped_code);
    json_u64(j, "skipped_other_total", s->skipped_other);
    json_skips(j);
    json_costs(j);
    json_mismatches(j);
    fx_json_obj_end(j);
}

/* Written like a profile: a temporary file renamed into place, or the fallback folder. */
static int write_report(const char *path, const struct summary *s, char *written, size_t cap)
{
    struct fx_out_file f;
    struct fx_errbuf eb = {{0}};
    memset(&f, 0, sizeof(f));
    struct fx_json *j = fx_malloc(sizeof(*j));
    int rc = j == NULL ? FX_ENOMEM : fx_out_file_open(&f, path, 0644, &eb);
    if (rc == FX_OK) {
        fx_json_init(j, fx_out_file_sink(&f));
        json_body(j, s);
        rc = fx_json_finish(j);
        snprintf(written, cap, "%s", f.target ? f.target : path);
        if (rc == FX_OK)
            rc = fx_out_file_commit(&f, &eb);
    }
    if (rc != FX_OK)
        fx_agent_log("validate: could not write the report %s: %s", path,
                     eb.msg[0] ? eb.msg : fx_strerror(rc));
    else if (f.fell_back) /* the words of a profile's fallback (dump.c) */
        fx_agent_log("validate: could not write %s (%s); wrote %s instead", path, f.reason,
                     written);
    fx_out_file_abort(&f);
    fx_free(j);
    return rc;
}

static void rate_text(double rate, char *out, size_t cap)
{
    if (rate < 0)
        snprintf(out, cap, "n/a");
    else
        snprintf(out, cap, "%.2f %%", rate * 100);
}

void fx_validate_extra(jvmtiEnv *jvmti, struct fx_profile *p)
{
    if (!fx_ag.opt.validate || p == NULL)
        return;
    const char *g = "validate";
    struct summary s;
    summarize(jvmti, &s);
    char buf[512];
    snprintf(buf, sizeof(buf), "%s %s (%s)", s.vm_name ? s.vm_name : "?",
             s.vm_version ? s.vm_version : "?", s.vm_vendor ? s.vm_vendor : "?");
    fx_profile_extra_str(p, g, "JVM", buf);
    fx_profile_extra_int(p, g, "stacks compared", (int64_t)s.compared);
    fx_profile_extra_int(p, g, "exact", (int64_t)s.exact);
    fx_profile_extra_int(p, g, "agreeing below the top frame", (int64_t)s.below_top);
    fx_profile_extra_int(p, g, "mismatches", (int64_t)s.mismatches);
    fx_profile_extra_int(p, g, "mismatches of known HotSpot patterns", (int64_t)s.known);
    rate_text(s.exact_rate, buf, sizeof(buf));
    fx_profile_extra_str(p, g, "exact rate", buf);
    rate_text(s.agree_rate, buf, sizeof(buf));
    fx_profile_extra_str(p, g, "agreement below the top frame", buf);
    fx_profile_extra_int(p, g, "skipped by ASGCT code", (int64_t)s.skipped_code);
    fx_profile_extra_int(p, g, "skipped for other reasons", (int64_t)s.skipped_other);
    summary_free(&s);
}

static void free_list(struct mismatch *list, uint32_t *n)
{
    for (uint32_t i = 0; i < *n; i++) {
        struct mismatch *m = &list[i];
        for (uint32_t k = 0; k < m->n_asgct; k++)
            fx_free(m->asgct[k]);
        for (uint32_t k = 0; k < m->n_jvmti; k++)
            fx_free(m->jvmti[k]);
        fx_free(m->asgct);
        fx_free(m->jvmti);
        fx_free(m->thread);
    }
    *n = 0;
}

static void say(const struct summary *s, const char *written)
{
    char exact[32], agree[32];
    rate_text(s->exact_rate, exact, sizeof(exact));
    rate_text(s->agree_rate, agree, sizeof(agree));
    fx_agent_log("validate: %llu stacks compared on %s: %llu exact (%s), %llu agreeing below the "
                 "top frame (agreement %s), %llu mismatches (%llu of known HotSpot patterns); "
                 "%llu skipped by ASGCT code, %llu for other reasons%s%s",
                 (unsigned long long)s->compared, s->vm_version ? s->vm_version : "?",
                 (unsigned long long)s->exact, exact, (unsigned long long)s->below_top, agree,
                 (unsigned long long)s->mismatches, (unsigned long long)s->known,
                 (unsigned long long)s->skipped_code, (unsigned long long)s->skipped_other,
                 written[0] ? "; report " : "", written);
}

void fx_validate_report(jvmtiEnv *jvmti)
{
    if (!fx_ag.opt.validate)
        return;
    struct summary s;
    summarize(jvmti, &s);
    char written[4096] = "";
    if (fx_ag.opt.validate_report != NULL &&
        write_report(fx_ag.opt.validate_report, &s, written, sizeof(written)) != FX_OK)
        written[0] = '\0';
    if (!fx_ag.opt.quiet)
        say(&s, written);
    free_list(va.listed, &va.n_listed);
    free_list(va.top_listed, &va.n_top_listed);
    summary_free(&s);
}
