/* SPDX-License-Identifier: Apache-2.0 */
/* JVMTI capabilities, callbacks and event enabling. ASGCT's own prerequisites live here:
 * ClassLoad must be enabled (else every call returns -1), and every method needs a jmethodID
 * before it can appear in a trace, so ClassPrepare and VMInit create them (GetClassMethods).
 * DynamicCodeGenerated names the stubs of stack recovery's code ranges (codemap.c). Compiled
 * code enters them from the code heaps with codemap=heap (codemap_heap.c, issue 31, default):
 * CompiledMethodLoad/Unload are then not enabled (HotSpot's posting of them costs ~3 % of a
 * javac run) unless validate mode (its proofs read the inlining records) or a JVM without the
 * code heaps' layouts (decided at the start, then enabled and replayed) asks for them; with them
 * come the JIT markers. DebugNonSafepoints, which CompiledMethodLoad turns on, fxagent then sets
 * itself (vmflags.c; docs/VALIDATION.md 4.5). codemap=jvmti enables them. */
#include "control.h"

#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The thread replaying code events (GenerateEvents calls back on the caller's thread): its
 * CompiledMethodLoad events describe old compilations, not new JIT work, so no marker. */
static pid_t replay_tid;
static bool cml_on; /* CompiledMethodLoad/Unload enabled (at load, or at a start) */

static void create_method_ids(jvmtiEnv *jvmti, jclass klass)
{
    jint n = 0;
    jmethodID *methods = NULL;
    if ((*jvmti)->GetClassMethods(jvmti, klass, &n, &methods) == JVMTI_ERROR_NONE)
        (*jvmti)->Deallocate(jvmti, (unsigned char *)methods);
}

static void JNICALL on_class_load(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
    (void)jvmti, (void)jni, (void)thread, (void)klass; /* enabled for ASGCT's sake only */
}

static void JNICALL on_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
    (void)jni, (void)thread;
    create_method_ids(jvmti, klass);
    fx_counters_class_prepared();
}

static void JNICALL on_compiled_method_load(jvmtiEnv *jvmti, jmethodID method, jint code_size,
                                            const void *code_addr, jint map_length,
                                            const jvmtiAddrLocationMap *map,
                                            const void *compile_info)
{
    (void)jvmti, (void)map_length, (void)map;
    /* the handler finds the new range in the recent table at once (coderecent.h); the drain
     * hurries only when it went past a full one, or to fold a half full one into the base */
    if (fx_opt()->validate) /* 4.2's proof (agent/validate/scopes.c) */
        fx_validate_code_load(method, code_addr, compile_info);
    if (fx_codemap_compiled_load(method, code_addr, code_size, compile_info))
        fx_drain_hurry();
    if (__atomic_load_n(&replay_tid, __ATOMIC_RELAXED) != (pid_t)syscall(SYS_gettid) &&
        !fx_codemap_heap_on()) /* JIT markers: codemap=jvmti (validate mode enables it too) */
        fx_markers_compiled_method_load(method, code_size, compile_info);
}

static void JNICALL on_compiled_method_unload(jvmtiEnv *jvmti, jmethodID method,
                                              const void *code_addr)
{
    (void)jvmti;
    fx_codemap_compiled_unload(method, code_addr);
    if (fx_opt()->validate)
        fx_validate_code_unload(method, code_addr);
}

static void JNICALL on_dynamic_code_generated(jvmtiEnv *jvmti, const char *name,
                                              const void *address, jint length)
{
    (void)jvmti;
    if (fx_codemap_dynamic_code(name, address, length)) /* as a load's */
        fx_drain_hurry();
}

static bool cml_enable(jvmtiEnv *jvmti)
{
    return !fx_jvmti_failed((*jvmti)->SetEventNotificationMode(
                                    jvmti, JVMTI_ENABLE, JVMTI_EVENT_COMPILED_METHOD_LOAD, NULL),
                            "SetEventNotificationMode(CompiledMethodLoad)") &&
           !fx_jvmti_failed((*jvmti)->SetEventNotificationMode(
                                    jvmti, JVMTI_ENABLE, JVMTI_EVENT_COMPILED_METHOD_UNLOAD, NULL),
                            "SetEventNotificationMode(CompiledMethodUnload)");
}

void fx_jvmti_events_replay_code(void)
{
    jvmtiEnv *jvmti = fx_jvmti();
    /* codemap=heap needs the code heaps' layouts, known only now (VMInit or attach): without
     * them, CompiledMethodLoad after all, its past events replayed below */
    if (!fx_codemap_heap_start() && !cml_on)
        cml_on = cml_enable(jvmti);
    __atomic_store_n(&replay_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELAXED);
    /* Replayed here, not in codemap.c, which stays a leaf that logs nothing (no call up). */
    fx_jvmti_failed((*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED),
                    "GenerateEvents(DynamicCodeGenerated)");
    if (cml_on)
        fx_jvmti_failed((*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD),
                        "GenerateEvents(CompiledMethodLoad)");
    __atomic_store_n(&replay_tid, 0, __ATOMIC_RELAXED);
}

static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti;
    /* Before VMInit the main thread registers everything at once (lifecycle.c). */
    if (fx_phase() == FX_PHASE_LIVE)
        fx_threads_start_current(jni, thread);
}

static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti;
    fx_threads_end_current(jni, thread);
}

void fx_jvmti_events_prepare_loaded_classes(JNIEnv *jni)
{
    jvmtiEnv *jvmti = fx_jvmti();
    jint n = 0;
    jclass *classes = NULL;
    if (fx_jvmti_failed((*jvmti)->GetLoadedClasses(jvmti, &n, &classes), "GetLoadedClasses"))
        return;
    uint64_t prepared = 0;
    for (jint i = 0; i < n; i++) {
        jint status = 0;
        if ((*jvmti)->GetClassStatus(jvmti, classes[i], &status) == JVMTI_ERROR_NONE &&
            (status & JVMTI_CLASS_STATUS_PREPARED)) {
            create_method_ids(jvmti, classes[i]);
            prepared += !(status & JVMTI_CLASS_STATUS_ARRAY);
        }
        (*jni)->DeleteLocalRef(jni, classes[i]);
    }
    fx_counters_classes_at_start(prepared);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)classes);
}

/* Required capabilities fail the load; optional ones (for later markers and validate mode)
 * are taken only if the VM offers them. */
static int add_capabilities(jvmtiEnv *jvmti)
{
    jvmtiCapabilities req;
    memset(&req, 0, sizeof(req));
    req.can_get_line_numbers = 1;
    req.can_get_source_file_name = 1;
    req.can_generate_compiled_method_load_events = 1;
    if (fx_jvmti_failed((*jvmti)->AddCapabilities(jvmti, &req), "AddCapabilities"))
        return FX_EUNSUPPORTED;
    jvmtiCapabilities opt;
    memset(&opt, 0, sizeof(opt));
    opt.can_generate_garbage_collection_events = 1;
    opt.can_suspend = 1;
    fx_locks_add_capabilities(&opt);
    (*jvmti)->AddCapabilities(jvmti, &opt);
    return FX_OK;
}

static const jvmtiEvent events[] = {
        JVMTI_EVENT_VM_INIT,
        JVMTI_EVENT_VM_DEATH,
        JVMTI_EVENT_THREAD_START,
        JVMTI_EVENT_THREAD_END,
        JVMTI_EVENT_CLASS_LOAD,
        JVMTI_EVENT_CLASS_PREPARE,
        JVMTI_EVENT_DYNAMIC_CODE_GENERATED,
};

int fx_jvmti_events_setup(jvmtiEnv *jvmti, jvmtiEventVMInit vm_init, jvmtiEventVMDeath vm_death)
{
    if (add_capabilities(jvmti) != FX_OK)
        return FX_EUNSUPPORTED;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof(cb));
    cb.VMInit = vm_init;
    cb.VMDeath = vm_death;
    cb.ThreadStart = on_thread_start;
    cb.ThreadEnd = on_thread_end;
    cb.ClassLoad = on_class_load;
    cb.ClassPrepare = on_class_prepare;
    cb.CompiledMethodLoad = on_compiled_method_load;
    cb.CompiledMethodUnload = on_compiled_method_unload;
    cb.DynamicCodeGenerated = on_dynamic_code_generated;
    fx_markers_fill_callbacks(&cb);
    fx_allocs_fill_callbacks(&cb);
    fx_locks_fill_callbacks(&cb);
    if (fx_jvmti_failed((*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof(cb)),
                        "SetEventCallbacks"))
        return FX_EUNSUPPORTED;
    fx_vthreads_setup(jvmti); /* JDK 21+: mount tracking (issue 22) */
    fx_codemap_setup();
    fx_locks_setup();
    fx_allocs_onload(); /* alloc= at load: every thread's first draw (allocs.c) */
    for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
        if (fx_jvmti_failed(
                    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL),
                    "SetEventNotificationMode"))
            return FX_EUNSUPPORTED;
    }
    /* CompiledMethodLoad from the start where the code heaps will not do: codemap=jvmti, the
     * validate proofs, the test switch of codemap.c (it.validate_recovered: its oracle) */
    const char *test = getenv("FXAGENT_TEST_CODEHEAP_ONLY");
    if (fx_opt()->codemap == FX_CODEMAP_JVMTI || fx_opt()->validate ||
        (test != NULL && test[0] == '1')) {
        if (!cml_enable(jvmti))
            return FX_EUNSUPPORTED;
        cml_on = true;
    }
    return FX_OK;
}
