/* SPDX-License-Identifier: Apache-2.0 */
/* Validate mode on a carrier that carries a virtual thread (issue 22, JDK 21+). JVMTI's stack
 * of such a carrier holds only the carrier's own frames, below the continuation; ASGCT's holds
 * the virtual thread's frames, Continuation.enterSpecial, then the carrier's. So the step
 * suspends the virtual thread too (suspending a carrier that carries one only marks it: HotSpot
 * stops it at the next unmount, and the virtual thread runs on meanwhile), and compares ASGCT
 * with the virtual thread's JVMTI stack, enterSpecial and the carrier's JVMTI stack: the
 * reference of the oracle (docs/VALIDATION.md section 1). The virtual thread is found from the
 * suspended carrier through fields of java.lang and jdk.internal.vm (struct va_vt), looked up
 * once, at the first continuation seen, so that nothing here loads or initializes a class.
 * Each such comparison is counted in va.vt besides the overall figures, and so is what the
 * mount events' slot (sampling/vthreads.c) said the carrier carried. Invariant: the virtual
 * thread this file suspends is resumed before fx_va_vt_check returns; nothing allocates while
 * a thread is held (the caller pushed a local frame for the references). */
#include "internal.h"

#include <string.h>

#define LEARN_TRIES 16 /* continuations whose Runnable had no vthread field, then give up */

void fx_va_vt_start(JNIEnv *jni, jvmtiEnv *jvmti)
{
    (void)jvmti;
    struct va_vt *v = &va.vt;
    if (v->thread_looked_up)
        return;
    v->thread_looked_up = true;
    jclass c = (*jni)->FindClass(jni, "java/lang/Thread");
    if (c != NULL) {
        v->cont = (*jni)->GetFieldID(jni, c, "cont", "Ljdk/internal/vm/Continuation;");
        if ((*jni)->ExceptionCheck(jni))
            (*jni)->ExceptionClear(jni);
        v->tid = (*jni)->GetFieldID(jni, c, "tid", "J");
        (*jni)->DeleteLocalRef(jni, c);
    }
    if ((*jni)->ExceptionCheck(jni))
        (*jni)->ExceptionClear(jni);
    if (v->cont == NULL || v->tid == NULL)
        v->why_not = "java.lang.Thread has no field cont (no virtual threads before JDK 19)";
}

/* The notifyJvmti* methods of java.lang.VirtualThread (loaded: a virtual thread exists). */
static void look_up_transitions(JNIEnv *jni, jvmtiEnv *jvmti)
{
    struct va_vt *v = &va.vt;
    jclass c = (*jni)->FindClass(jni, "java/lang/VirtualThread");
    jint n = 0;
    jmethodID *methods = NULL;
    if (c != NULL && (*jvmti)->GetClassMethods(jvmti, c, &n, &methods) == JVMTI_ERROR_NONE) {
        for (jint i = 0; i < n && v->n_transition < VT_TRANSITION_MAX; i++) {
            char *name = NULL;
            if ((*jvmti)->GetMethodName(jvmti, methods[i], &name, NULL, NULL) == JVMTI_ERROR_NONE &&
                strncmp(name, "notifyJvmti", 11) == 0)
                v->transition[v->n_transition++] = methods[i];
            (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
        }
        (*jvmti)->Deallocate(jvmti, (unsigned char *)methods);
    }
    if ((*jni)->ExceptionCheck(jni))
        (*jni)->ExceptionClear(jni);
    if (c != NULL)
        (*jni)->DeleteLocalRef(jni, c);
}

static jfieldID field(JNIEnv *jni, jclass c, const char *name, const char *sig)
{
    jfieldID f = c != NULL ? (*jni)->GetFieldID(jni, c, name, sig) : NULL;
    if ((*jni)->ExceptionCheck(jni))
        (*jni)->ExceptionClear(jni);
    return f;
}

/* Continuation.target and VThreadContinuation's Runnable (an anonymous class whose captured
 * virtual thread javac names val$vthread, JDK 21 to 25), from a live continuation. */
void fx_va_vt_learn(JNIEnv *jni, jthread carrier)
{
    struct va_vt *v = &va.vt;
    if (v->route || v->cont == NULL || v->failed_lookups >= LEARN_TRIES)
        return;
    jobject cont = (*jni)->GetObjectField(jni, carrier, v->cont);
    if (cont == NULL)
        return;
    jclass cc = (*jni)->FindClass(jni, "jdk/internal/vm/Continuation");
    if ((*jni)->ExceptionCheck(jni))
        (*jni)->ExceptionClear(jni);
    jfieldID target = field(jni, cc, "target", "Ljava/lang/Runnable;");
    jobject run = target != NULL ? (*jni)->GetObjectField(jni, cont, target) : NULL;
    jclass rc = run != NULL ? (*jni)->GetObjectClass(jni, run) : NULL;
    jfieldID vf = field(jni, rc, "val$vthread", "Ljava/lang/VirtualThread;");
    if (vf == NULL) {
        v->failed_lookups++;
        v->why_not = target == NULL ? "jdk.internal.vm.Continuation has no field target"
                                    : "the continuation's Runnable has no field val$vthread";
        return;
    }
    v->wrapper = (*jni)->NewGlobalRef(jni, rc);
    if (v->wrapper == NULL)
        return;
    v->target = target;
    v->vthread = vf;
    look_up_transitions(jni, fx_jvmti());
    v->why_not = NULL;
    v->route = true;
}

jobject fx_va_vt_mounted(JNIEnv *jni, jthread carrier, jobject *cont)
{
    struct va_vt *v = &va.vt;
    *cont = NULL;
    if (!v->route)
        return NULL;
    jobject c = (*jni)->GetObjectField(jni, carrier, v->cont);
    jobject run = c != NULL ? (*jni)->GetObjectField(jni, c, v->target) : NULL;
    /* Another kind of continuation (jdk.internal.vm is open to the JDK only) has no vthread:
     * its Runnable's class is checked before the field is read. */
    jobject vt = run != NULL && (*jni)->IsInstanceOf(jni, run, v->wrapper)
                         ? (*jni)->GetObjectField(jni, run, v->vthread)
                         : NULL;
    if (vt != NULL) {
        *cont = c;
        fx_va_inc(&v->found);
    }
    return vt;
}

bool fx_va_vt_transition(jmethodID m)
{
    for (uint32_t i = 0; m != NULL && i < va.vt.n_transition; i++) {
        if (va.vt.transition[i] == m)
            return true;
    }
    return false;
}

static jint index_of(const struct fx_stack *s, jmethodID m)
{
    for (jint i = 0; i < s->count; i++) {
        if (s->frames[i].method_id == m)
            return i;
    }
    return -1;
}

bool fx_va_vt_not_thawed(const struct fx_stack *a, const struct fx_stack *g, jmethodID entry)
{
    jint e = entry != NULL ? index_of(a, entry) : -1;
    jint m = e >= 1 ? index_of(g, entry) : -1;
    if (m <= e || a->count - e != g->count - m)
        return false;
    for (jint i = 0; i < e; i++) {
        if (!fx_stackcmp_same_frame(&a->frames[i], &g->frames[i]))
            return false;
    }
    for (jint i = e; i < a->count; i++) {
        if (!fx_stackcmp_same_frame(&a->frames[i], &g->frames[i - e + m]))
            return false;
    }
    return true;
}

/* The slot the carrier's mount and unmount callbacks write, against the route's answer. */
static void check_slot(JNIEnv *jni, const struct fx_thread *t, jobject vt)
{
    struct va_vt *v = &va.vt;
    uint32_t seq = __atomic_load_n(&t->vt_seq, __ATOMIC_ACQUIRE);
    uint64_t id = __atomic_load_n(&t->vt_id, __ATOMIC_RELAXED);
    if ((seq & 1u) || id == 0)
        fx_va_inc(&v->slot_none);
    else
        fx_va_inc(id == (uint64_t)(*jni)->GetLongField(jni, vt, v->tid) ? &v->slot_same
                                                                        : &v->slot_other);
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

/* vt suspended and still mounted: both JVMTI stacks, ASGCT's, vt's JVMTI stack again. Returns
 * the skip, or VT_SKIP_COUNT when there is something to compare (*n frames in va.gst). */
static enum vt_skip take(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_thread *t, jobject vt, jint *n,
                         jint *nc, int32_t *num_frames)
{
    jvmtiError err = (*jvmti)->GetStackTrace(jvmti, vt, 0, (jint)va.depth + 1, va.info, n);
    if (err != JVMTI_ERROR_NONE)
        return VT_SKIP_STACK_FAILED;
    fx_stackcmp_from_jvmti(va.info, *n, va.gst);
    err = (*jvmti)->GetStackTrace(jvmti, t->ref, 0, (jint)va.depth + 1, va.info, nc);
    if (err != JVMTI_ERROR_NONE)
        return VT_SKIP_STACK_FAILED;
    fx_stackcmp_from_jvmti(va.info, *nc, va.vt.carrier);
    if (fx_probe_run(t, PROBE_WAIT_NS, va.asg, num_frames) != FX_OK)
        return VT_SKIP_PROBE;
    if (!fx_va_still(jvmti, vt, va.gst, *n))
        return VT_SKIP_MOVED;
    check_slot(jni, t, vt);
    return VT_SKIP_COUNT;
}

void fx_va_vt_check(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_thread *t, jobject vt, jobject cont)
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
    int32_t num_frames = 0;
    if (now != NULL && (*jni)->IsSameObject(jni, now, cont))
        skip = take(jvmti, jni, t, vt, &n, &nc, &num_frames);
    if ((*jvmti)->ResumeThread(jvmti, vt) != JVMTI_ERROR_NONE)
        fx_va_inc(&va.resume_failed);
    if (skip != VT_SKIP_COUNT) {
        fx_va_inc(&v->skipped[skip]);
        return;
    }
    struct fx_stack g = {.count = n, .frames = va.gst};
    fx_stackcmp_join_carrier(&g, va.enter_special, v->carrier, nc, (int)va.depth + 1);
    enum pattern pattern = PATTERN_NONE;
    enum outcome out = fx_va_classify(jvmti, jni, t, num_frames, g.count, &pattern);
    count(out, pattern);
}
