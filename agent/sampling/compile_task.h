/* SPDX-License-Identifier: Apache-2.0 */
/* agent/sampling, public: the method a C1/C2 compiler thread compiles (issue 32, item 5), as its
 * samples carry it. A compiler thread's JavaThread* (struct fx_thread.vm_thread, set once after
 * registration by vm_threads.c through compile_task.c, read by its handler with acquire) lets
 * its handler read CompilerThread::_env and _task, ciEnv::_task and the CompileTask, naming it
 * only when the thread's and the ciEnv's task agree (compile_task_sig.c);
 * the record (sample.h, bit `task`) then holds two uint64_t after its below part, before any
 * trace context: the Method* and (uint32_t)compile id | enum fx_task_read << 32. The drain names
 * the Method* here. */
#ifndef FX_COMPILE_TASK_H
#define FX_COMPILE_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the handler read of the thread's compile. */
enum fx_task_read {
    FX_TASK_READ = 0,  /* the Method* and compile id were read */
    FX_TASK_IDLE,      /* _env NULL: not compiling (waiting for a task, or between two) */
    FX_TASK_NO_BOUNDS, /* the thread's stack bounds unknown yet: _env cannot be checked */
    FX_TASK_BAD_ENV,   /* _env outside the thread's stack or misaligned: not read further */
    FX_TASK_NO_TASK,   /* ciEnv without a task (the compiler's own start-up) */
    FX_TASK_NO_METHOD, /* a task without a Method* */
    /* the ciEnv's _task is not the thread's CompilerThread::_task: a ciEnv being built (its
     * _task not stored yet: stack garbage or the previous compile's task) or torn down, or the
     * thread's word unknown; never named (compile_task_sig.c) */
    FX_TASK_NOT_PROVEN,
    FX_TASK_UNREADABLE, /* the checked read of the ciEnv or the task failed */
    FX_TASK_COUNT
};

/* Drain: "pkg.Class.method" of the Method* a compiler thread's sample carries, read by checked
 * reads (compile_task.c); false if anything read does not check out (then nothing is claimed). */
bool fx_compile_task_method_name(uint64_t method, char *buf, size_t cap);
/* Drain: "pkg.Class" of a Klass* (Klass::_name, its Symbol) by the same checked reads; false if
 * they do not check out. A dispatch stub's receiver (receiver.h) is named so. */
bool fx_compile_task_class_name(uint64_t klass, char *buf, size_t cap);

#endif
