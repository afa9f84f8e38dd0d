/* SPDX-License-Identifier: Apache-2.0 */
/* HotSpot's exported type table (gHotSpotVMStructs, the Serviceability Agent's map of field
 * offsets), read once for the two offsets fxagent needs: Thread::_osthread and
 * OSThread::_thread_id, which give the kernel tid of a thread fxagent did not see start.
 * Nothing here is written; a missing symbol or field only disables that one use. */
#include "fx_agent.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static long osthread_off = -1; /* Thread::_osthread */
static long tid_off = -1;      /* OSThread::_thread_id */

static uint64_t sym_u64(const char *name, bool *ok)
{
    const uint64_t *p = dlsym(RTLD_DEFAULT, name);
    if (p == NULL)
        *ok = false;
    return p != NULL ? *p : 0;
}

static void match(const char *type, const char *field, uint64_t off)
{
    if (type == NULL || field == NULL)
        return;
    if (strcmp(field, "_osthread") == 0 &&
        (strcmp(type, "Thread") == 0 || strcmp(type, "JavaThread") == 0))
        osthread_off = (long)off;
    else if (strcmp(type, "OSThread") == 0 && strcmp(field, "_thread_id") == 0)
        tid_off = (long)off;
}

static void load(void)
{
    bool ok = true;
    const char *const *base = dlsym(RTLD_DEFAULT, "gHotSpotVMStructs");
    uint64_t type_off = sym_u64("gHotSpotVMStructEntryTypeNameOffset", &ok);
    uint64_t field_off = sym_u64("gHotSpotVMStructEntryFieldNameOffset", &ok);
    uint64_t static_off = sym_u64("gHotSpotVMStructEntryIsStaticOffset", &ok);
    uint64_t offset_off = sym_u64("gHotSpotVMStructEntryOffsetOffset", &ok);
    uint64_t stride = sym_u64("gHotSpotVMStructEntryArrayStride", &ok);
    if (!ok || base == NULL || *base == NULL || stride == 0)
        return;
    for (const char *e = *base;; e += stride) {
        const char *type = *(const char *const *)(e + type_off);
        if (type == NULL)
            break;
        if (*(const int32_t *)(e + static_off) == 0)
            match(type, *(const char *const *)(e + field_off), *(const uint64_t *)(e + offset_off));
    }
}

bool fx_vmstructs_available(void)
{
    pthread_once(&once, load);
    return osthread_off >= 0 && tid_off >= 0;
}

pid_t fx_vmstructs_tid_of(const void *java_thread)
{
    if (java_thread == NULL || !fx_vmstructs_available())
        return -1;
    const char *os = *(const char *const *)((const char *)java_thread + osthread_off);
    if (os == NULL)
        return -1;
    return *(const pid_t *)(os + tid_off);
}
