/* SPDX-License-Identifier: Apache-2.0 */
/* Part of THE SIGNAL PATH (signal_handler.c's rules and allow-list): what a C1/C2 compiler
 * thread is compiling when its SIGPROF comes (issue 32, item 5). compile_task.c found the
 * thread's JavaThread* (a CompilerThread) and published the offsets; here the handler, running on
 * that same thread, reads CompilerThread::_env -> ciEnv::_task -> CompileTask::_method and
 * _compile_id.
 *
 * Why each read is safe: the JavaThread is this thread's own and lives while it runs. The ciEnv
 * is a local of CompileBroker::invoke_compiler_on_method, on this thread's stack: _env is read
 * further only when it lies within the thread's stack bounds, aligned. The thread is stopped in
 * this handler, so what its stack holds cannot change meanwhile: a ciEnv set as _env is alive
 * (its destructor clears _env before the task is freed, after the ciEnv's scope), so the task
 * it points to is alive too, and so is the task's Method (the task holds its holder class). A
 * NULL or misaligned pointer anywhere stops the read with its reason (enum fx_task_read). The
 * Method* is named off this path (compile_task.c). A compiler thread that HotSpot retires
 * (UseDynamicNumberOfCompilerThreads) is idle, its _env NULL, when its JavaThread is deleted. */
#include "internal.h"

#include <string.h>

/* Signal-safe: one aligned word at addr (never NULL: callers check). */
static uintptr_t word_sigsafe(uintptr_t addr)
{
    uintptr_t w;
    memcpy(&w, (const void *)addr, sizeof(w));
    return w;
}

bool fx_compile_task_read_sigsafe(const struct fx_thread *t, uint64_t out[2])
{
    uintptr_t jt = __atomic_load_n(&t->vm_thread, __ATOMIC_ACQUIRE);
    long env_off = __atomic_load_n(&fx_sig.task_env_off, __ATOMIC_ACQUIRE); /* published last */
    if (jt == 0 || env_off <= 0)
        return false;
    long task_off = __atomic_load_n(&fx_sig.task_task_off, __ATOMIC_RELAXED);
    long method_off = __atomic_load_n(&fx_sig.task_method_off, __ATOMIC_RELAXED);
    long id_off = __atomic_load_n(&fx_sig.task_id_off, __ATOMIC_RELAXED);
    uintptr_t lo = __atomic_load_n(&t->stack_lo, __ATOMIC_ACQUIRE);
    uintptr_t hi = __atomic_load_n(&t->stack_hi, __ATOMIC_RELAXED);
    uint64_t why = FX_TASK_READ;
    out[0] = 0;
    uintptr_t env = word_sigsafe(jt + (uintptr_t)env_off);
    if (env == 0)
        why = FX_TASK_IDLE;
    else if (lo == 0)
        why = FX_TASK_NO_BOUNDS;
    else if (env < lo || env + (uintptr_t)task_off + sizeof(uintptr_t) > hi || (env & 7) != 0)
        why = FX_TASK_BAD_ENV;
    uintptr_t task = why == FX_TASK_READ ? word_sigsafe(env + (uintptr_t)task_off) : 0;
    if (why == FX_TASK_READ && (task < 4096 || (task & 7) != 0))
        why = FX_TASK_NO_TASK;
    int32_t id = 0;
    if (why == FX_TASK_READ) {
        out[0] = word_sigsafe(task + (uintptr_t)method_off);
        memcpy(&id, (const void *)(task + (uintptr_t)id_off), sizeof(id));
        if (out[0] < 4096 || (out[0] & 7) != 0) {
            out[0] = 0;
            why = FX_TASK_NO_METHOD;
        }
    }
    out[1] = (uint64_t)(uint32_t)id | why << 32;
    return true;
}
