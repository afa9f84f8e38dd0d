/* SPDX-License-Identifier: Apache-2.0 */
/* Part of THE SIGNAL PATH (signal_handler.c's rules and allow-list): what a C1/C2 compiler
 * thread is compiling when its SIGPROF comes (issue 32, item 5). compile_task.c found the
 * thread's JavaThread* (a CompilerThread) and published the offsets; here the handler, running on
 * that same thread, reads two words of its own JavaThread, CompilerThread::_env and
 * CompilerThread::_task, then by one checked read ciEnv::_task, CompileTask::_method and
 * CompileTask::_compile_id, and names the task only when both say the same task.
 *
 * Why a ciEnv's _task alone is no proof (a JVM crashed on it, session 26): HotSpot's
 * ciEnv(CompileTask*) (JDK 17 and 25) calls thread->set_env(this) first and stores _task
 * later (after ~10 other fields and os::elapsed_counter()); ciEnv(Arena*), the compiler's
 * start-up env, does the same. A signal in that window finds _env pointing at a ciEnv whose
 * _task is the stack's old contents: garbage (a C1 thread read "0 bytes)" there and faulted), or
 * the pointer the previous compile's ciEnv left at the same address (a pooled CompileTask:
 * readable, but the wrong method). CompilerThread::_task is the authority: CompileTaskWrapper
 * sets it before the ciEnv exists (the constructor asserts thread->task() == task) and clears it
 * after the ciEnv is gone, before the task is freed (on this thread, or by a waiter woken after
 * it); this thread is stopped in its handler, so while the word holds T, T is alive. vmStructs
 * does not export it: compile_task.c derives its offset (_env + 16: _env, _log, _task in
 * CompilerThread from JDK 9 to 25, checked against the exported sizes), so a task is named only
 * when ciEnv::_task says T too: a wrong offset cannot name a wrong method, it makes every sample
 * FX_TASK_NOT_PROVEN. Which reads need no check: the JavaThread is this thread's own and lives
 * while it runs, its words are plain reads. Everything else (the ciEnv, though _env lies within
 * the thread's stack, and the task) is read by process_vm_readv on this process: unreadable
 * memory fails the call (FX_TASK_UNREADABLE), never this thread. Cost: no system call when the
 * thread is not compiling, one (three iovecs) when it is; compiler threads are sampled only
 * while they burn CPU. The Method* is named off this path (compile_task.c). A compiler thread
 * that HotSpot retires (UseDynamicNumberOfCompilerThreads) is idle, its _env NULL, when its
 * JavaThread is deleted. Tests: unit.compile_task. */
#include "internal.h"

#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* Signal-safe: one aligned word of this thread's own JavaThread (never NULL: callers check). */
static uintptr_t own_word_sigsafe(uintptr_t addr)
{
    uintptr_t w;
    memcpy(&w, (const void *)addr, sizeof(w));
    return w;
}

/* Where _env lies, before anything is read through it. */
static uint64_t env_check(uintptr_t env, uintptr_t lo, uintptr_t hi, long task_off)
{
    if (env == 0)
        return FX_TASK_IDLE;
    if (lo == 0)
        return FX_TASK_NO_BOUNDS;
    if (env < lo || env + (uintptr_t)task_off + sizeof(uintptr_t) > hi || (env & 7) != 0)
        return FX_TASK_BAD_ENV;
    return FX_TASK_READ;
}

/* The ciEnv's _task and, when the thread has a task, its Method* and compile id, by one
 * process_vm_readv; false unless every byte was read. */
static bool read_checked(uintptr_t env, uintptr_t task, uintptr_t *env_task, uintptr_t *method,
                         int32_t *id)
{
    long task_off = __atomic_load_n(&fx_sig.task_task_off, __ATOMIC_RELAXED);
    long method_off = __atomic_load_n(&fx_sig.task_method_off, __ATOMIC_RELAXED);
    long id_off = __atomic_load_n(&fx_sig.task_id_off, __ATOMIC_RELAXED);
    int pid = __atomic_load_n(&fx_sig.task_pid, __ATOMIC_RELAXED);
    struct iovec local[3] = {{.iov_base = env_task, .iov_len = sizeof(*env_task)},
                             {.iov_base = method, .iov_len = sizeof(*method)},
                             {.iov_base = id, .iov_len = sizeof(*id)}};
    struct iovec remote[3] = {
            {.iov_base = (void *)(env + (uintptr_t)task_off), .iov_len = sizeof(*env_task)},
            {.iov_base = (void *)(task + (uintptr_t)method_off), .iov_len = sizeof(*method)},
            {.iov_base = (void *)(task + (uintptr_t)id_off), .iov_len = sizeof(*id)}};
    unsigned long n = task != 0 ? 3UL : 1UL;
    long want = task != 0 ? (long)(sizeof(*env_task) + sizeof(*method) + sizeof(*id))
                          : (long)sizeof(*env_task);
    return pid > 0 && syscall(SYS_process_vm_readv, (pid_t)pid, local, n, remote, n, 0UL) == want;
}

bool fx_compile_task_read_sigsafe(const struct fx_thread *t, uint64_t out[2])
{
    uintptr_t jt = __atomic_load_n(&t->vm_thread, __ATOMIC_ACQUIRE);
    long env_off = __atomic_load_n(&fx_sig.task_env_off, __ATOMIC_ACQUIRE); /* published last */
    if (jt == 0 || env_off <= 0)
        return false;
    long task_off = __atomic_load_n(&fx_sig.task_task_off, __ATOMIC_RELAXED);
    long thread_task_off = __atomic_load_n(&fx_sig.task_thread_off, __ATOMIC_RELAXED);
    uintptr_t lo = __atomic_load_n(&t->stack_lo, __ATOMIC_ACQUIRE);
    uintptr_t hi = __atomic_load_n(&t->stack_hi, __ATOMIC_RELAXED);
    uintptr_t env = own_word_sigsafe(jt + (uintptr_t)env_off);
    uint64_t why = env_check(env, lo, hi, task_off);
    uintptr_t task = 0, env_task = 0, method = 0;
    int32_t id = 0;
    if (why == FX_TASK_READ && thread_task_off <= 0)
        why = FX_TASK_NOT_PROVEN; /* the thread's own word unknown: nothing to check against */
    if (why == FX_TASK_READ) {
        task = own_word_sigsafe(jt + (uintptr_t)thread_task_off);
        if (task != 0 && (task < 4096 || (task & 7) != 0))
            why = FX_TASK_NOT_PROVEN; /* not a task: the word is not CompilerThread::_task */
    }
    if (why == FX_TASK_READ && !read_checked(env, task, &env_task, &method, &id))
        why = FX_TASK_UNREADABLE;
    if (why == FX_TASK_READ && env_task != task)
        why = FX_TASK_NOT_PROVEN; /* the ciEnv being built (or torn down) or a wrong offset */
    else if (why == FX_TASK_READ && task == 0)
        why = FX_TASK_NO_TASK; /* both say so: the compiler's own start-up env */
    else if (why == FX_TASK_READ && (method < 4096 || (method & 7) != 0))
        why = FX_TASK_NO_METHOD;
    out[0] = why == FX_TASK_READ ? method : 0;
    out[1] = (uint64_t)(uint32_t)(why == FX_TASK_READ ? id : 0) | why << 32;
    return true;
}
