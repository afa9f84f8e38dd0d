/* SPDX-License-Identifier: Apache-2.0 */
/* A JVMTI agent that only takes CompiledMethodLoad events, with an empty callback: what HotSpot
 * spends posting them (its Service Thread: the deferred event queue's wake-ups, each nmethod's
 * address map and inlining records, the jmethodIDs of the inlined methods), apart from any work
 * a profiler does in its callback. bench/service_thread_cost.py builds and loads it. */
#include <jvmti.h>
#include <string.h>

static void JNICALL on_load(jvmtiEnv *jvmti, jmethodID method, jint size, const void *addr,
                            jint map_len, const jvmtiAddrLocationMap *map, const void *info)
{
    (void)jvmti, (void)method, (void)size, (void)addr, (void)map_len, (void)map, (void)info;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)options, (void)reserved;
    jvmtiEnv *jvmti = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || jvmti == NULL)
        return JNI_ERR;
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof(caps));
    caps.can_generate_compiled_method_load_events = 1;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof(cb));
    cb.CompiledMethodLoad = on_load;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE ||
        (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE ||
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_COMPILED_METHOD_LOAD,
                                           NULL) != JVMTI_ERROR_NONE)
        return JNI_ERR;
    return JNI_OK;
}
