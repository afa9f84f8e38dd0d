/* SPDX-License-Identifier: Apache-2.0 */
/* A bench-only JVMTI agent (not part of libfxagent): it prices what HotSpot's virtual-thread
 * support costs a mount before fxagent does anything, for bench/run_vthreads_mounts.sh.
 *   -agentpath:vt_mount_probe.so=none    a JVMTI environment and nothing else;
 *   -agentpath:vt_mount_probe.so=cap     + the capability can_support_virtual_threads;
 *   -agentpath:vt_mount_probe.so=events  + VirtualThreadMount/Unmount enabled with callbacks
 *                                          that only count.
 * At exit it prints "probe MODE: N mounts, M unmounts" to stderr (the count proves the events
 * were on). Built by the bench script with the JDK's headers. */
#include <jvmti.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define CAP_VT_BYTE 5 /* jvmtiCapabilities.can_support_virtual_threads, as agent/sampling */
#define CAP_VT_BIT  0x10

static char mode[16];
static unsigned long mounts, unmounts; /* atomic */
static jint mount_ix = -1, unmount_ix = -1;

static void JNICALL on_mount(jvmtiEnv *jvmti, ...)
{
    (void)jvmti;
    __atomic_fetch_add(&mounts, 1, __ATOMIC_RELAXED);
}

static void JNICALL on_unmount(jvmtiEnv *jvmti, ...)
{
    (void)jvmti;
    __atomic_fetch_add(&unmounts, 1, __ATOMIC_RELAXED);
}

static void find_events(jvmtiEnv *jvmti)
{
    jint n = 0;
    jvmtiExtensionEventInfo *ev = NULL;
    if ((*jvmti)->GetExtensionEvents(jvmti, &n, &ev) != JVMTI_ERROR_NONE)
        return;
    for (jint i = 0; i < n; i++) {
        if (strcmp(ev[i].id, "com.sun.hotspot.events.VirtualThreadMount") == 0)
            mount_ix = ev[i].extension_event_index;
        else if (strcmp(ev[i].id, "com.sun.hotspot.events.VirtualThreadUnmount") == 0)
            unmount_ix = ev[i].extension_event_index;
    }
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread t)
{
    (void)jni, (void)t;
    if (strcmp(mode, "events") != 0)
        return;
    find_events(jvmti);
    if (mount_ix < 0 || unmount_ix < 0 ||
        (*jvmti)->SetExtensionEventCallback(jvmti, mount_ix, (jvmtiExtensionEvent)on_mount) ||
        (*jvmti)->SetExtensionEventCallback(jvmti, unmount_ix, (jvmtiExtensionEvent)on_unmount) ||
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, (jvmtiEvent)mount_ix, NULL) ||
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, (jvmtiEvent)unmount_ix, NULL))
        fprintf(stderr, "probe: the mount events could not be enabled\n");
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    (void)jvmti, (void)jni;
    fprintf(stderr, "probe %s: %lu mounts, %lu unmounts\n", mode, mounts, unmounts);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    snprintf(mode, sizeof(mode), "%s", options != NULL ? options : "none");
    jvmtiEnv *jvmti = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK)
        return JNI_ERR;
    if (strcmp(mode, "cap") == 0 || strcmp(mode, "events") == 0) {
        jvmtiCapabilities want;
        memset(&want, 0, sizeof(want));
        ((unsigned char *)&want)[CAP_VT_BYTE] |= CAP_VT_BIT;
        if ((*jvmti)->AddCapabilities(jvmti, &want) != JVMTI_ERROR_NONE) {
            fprintf(stderr, "probe: no can_support_virtual_threads\n");
            return JNI_ERR;
        }
    }
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof(cb));
    cb.VMInit = on_vm_init;
    cb.VMDeath = on_vm_death;
    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb));
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
    return JNI_OK;
}
