/* SPDX-License-Identifier: Apache-2.0 */
/* Threads that were running before the agent could see them start (a late attach, a restart,
 * the JVM's service threads at VMInit): listed with GetAllThreads and registered from HotSpot's
 * own structures (java.lang.Thread.eetop, VMStructs) through threads.c's registry. */
#include "internal.h"

#include "fx_alloc.h"

/* A thread that started before VMInit: ThreadStart never ran on it, so its JNIEnv and tid come
 * from HotSpot's own structures. java.lang.Thread.eetop is the JavaThread*, and a JavaThread
 * embeds its JNIEnv at a fixed offset, the same for every thread, which the calling thread
 * measures on itself. The tid comes from VMStructs (vmstructs.c). Only threads that are alive
 * (eetop != 0) are registered; at VMInit they are the JVM's long-lived service threads. */
static int register_other(JNIEnv *jni, jthread thread, char *name, jfieldID eetop,
                          intptr_t env_offset)
{
    jlong jt = (*jni)->GetLongField(jni, thread, eetop);
    pid_t tid = jt != 0 ? fx_vmstructs_tid_of((const void *)(intptr_t)jt) : -1;
    if (tid <= 0) {
        fx_free(name);
        return FX_ENOTFOUND;
    }
    uintptr_t lo = 0, hi = 0;
    if (!fx_vmstructs_stack_of((const void *)(intptr_t)jt, &lo, &hi))
        lo = hi = 0;
    return fx_threads_register_existing(jni, thread, name, tid,
                                        (JNIEnv *)((intptr_t)jt + env_offset), lo, hi);
}

/* In the live phase a listed thread may be exiting while we read its JavaThread: suspended, it
 * cannot (SuspendThread fails once it is exiting), so its JavaThread and tid stay valid until
 * it is registered, and its ThreadEnd, still to come, will find the registration. */
static int start_other(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jfieldID eetop,
                       intptr_t env_offset)
{
    char *name = fx_threads_name_of(jni, thread);
    if (name == NULL || fx_threads_is_own(name)) {
        fx_free(name);
        return FX_OK;
    }
    jvmtiError err =
            fx_rec()->live_start ? (*jvmti)->SuspendThread(jvmti, thread) : JVMTI_ERROR_NONE;
    if (err == JVMTI_ERROR_THREAD_NOT_ALIVE) {
        fx_free(name);
        return FX_OK; /* gone: nothing to sample */
    }
    /* Suspended by someone else (a debugger) is as good; without can_suspend the ended-tid
     * check is the only guard. */
    int rc = register_other(jni, thread, name, eetop, env_offset);
    if (fx_rec()->live_start && err == JVMTI_ERROR_NONE)
        (*jvmti)->ResumeThread(jvmti, thread);
    return rc;
}

static jfieldID eetop_field(JNIEnv *jni)
{
    jclass cls = (*jni)->FindClass(jni, "java/lang/Thread");
    if (cls == NULL) {
        (*jni)->ExceptionClear(jni);
        return NULL;
    }
    jfieldID f = (*jni)->GetFieldID(jni, cls, "eetop", "J");
    if (f == NULL)
        (*jni)->ExceptionClear(jni);
    (*jni)->DeleteLocalRef(jni, cls);
    return f;
}

static void start_one_existing(jvmtiEnv *jvmti, JNIEnv *jni, jthread th, jthread self,
                               jfieldID eetop, intptr_t env_offset)
{
    if ((*jni)->IsSameObject(jni, th, self)) {
        fx_threads_start_current(jni, th);
        return;
    }
    if (fx_threads_known(jni, th))
        return;
    int rc = eetop != NULL && fx_vmstructs_available()
                     ? start_other(jvmti, jni, th, eetop, env_offset)
                     : FX_EUNSUPPORTED;
    if (rc != FX_OK && rc != FX_ESTATE)
        fx_threads_count_not_sampled();
}

static void scan(jvmtiEnv *jvmti, JNIEnv *jni)
{
    jthread self = NULL;
    jint n = 0;
    jthread *all = NULL;
    if (fx_jvmti_failed((*jvmti)->GetCurrentThread(jvmti, &self), "GetCurrentThread") ||
        fx_jvmti_failed((*jvmti)->GetAllThreads(jvmti, &n, &all), "GetAllThreads"))
        return;
    jfieldID eetop = eetop_field(jni);
    intptr_t env_offset = 0;
    if (eetop != NULL) {
        jlong my_eetop = (*jni)->GetLongField(jni, self, eetop);
        env_offset = (intptr_t)jni - (intptr_t)my_eetop;
        fx_vmstructs_publish_anchor(my_eetop != 0 ? env_offset : 0);
    }
    fx_receiver_publish(); /* issue 32 item 3: the heap exists by now */
    fx_interp_publish();   /* issue 32: the anchor walk's interpreted frames */
    fx_codeheap_publish(); /* issue 32: methods compiled since the code table's publish */
    for (jint i = 0; i < n; i++) {
        start_one_existing(jvmti, jni, all[i], self, eetop, env_offset);
        (*jni)->DeleteLocalRef(jni, all[i]);
    }
    (*jvmti)->Deallocate(jvmti, (unsigned char *)all);
    (*jni)->DeleteLocalRef(jni, self);
}

void fx_threads_start_existing(JNIEnv *jni)
{
    scan(fx_jvmti(), jni);
    fx_threads_scan_end();
}
