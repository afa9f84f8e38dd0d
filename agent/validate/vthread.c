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
 * The step itself is validate.c's (check_carrying); this file is the leaf it calls: the route,
 * the mount events' slot read against it, and the two virtual-thread shapes the classification
 * names (transitions, frozen frames). It calls stackcmp.c only. */
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

uint64_t *fx_va_vt_slot(JNIEnv *jni, const struct fx_thread *t, jobject vt)
{
    struct va_vt *v = &va.vt;
    uint32_t seq = __atomic_load_n(&t->vt_seq, __ATOMIC_ACQUIRE);
    uint64_t id = __atomic_load_n(&t->vt_id, __ATOMIC_RELAXED);
    if ((seq & 1u) || id == 0)
        return &v->slot_none;
    return id == (uint64_t)(*jni)->GetLongField(jni, vt, v->tid) ? &v->slot_same : &v->slot_other;
}

/* JVMTI's mount and unmount transitions. */
static bool is_transition(jmethodID m)
{
    for (uint32_t i = 0; m != NULL && i < va.vt.n_transition; i++) {
        if (va.vt.transition[i] == m)
            return true;
    }
    return false;
}

#define TRANSITION_TOP 3 /* frames of each stack searched for a notifyJvmti* method */
bool fx_va_vt_in_transition(const struct fx_stack *a, const struct fx_stack *g)
{
    for (jint i = 0; i < TRANSITION_TOP; i++) {
        if ((i < a->count && is_transition(a->frames[i].method_id)) ||
            (i < g->count && is_transition(g->frames[i].method_id)))
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
