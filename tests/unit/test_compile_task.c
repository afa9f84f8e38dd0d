/* SPDX-License-Identifier: Apache-2.0 */
/* agent/sampling/compile_task_sig.c without a JVM (issue 32, item 5): a fake CompilerThread,
 * ciEnv (on a fake stack) and CompileTask at the offsets the handler is given; each reason of
 * enum fx_task_read comes out where its case is built, and nothing is read for a thread without
 * a JavaThread or before the offsets are published. The ciEnv's window (session 26's crash): a
 * ciEnv whose _task is not stored yet holds garbage (the crash's "0 bytes)") or the previous
 * compile's task; neither faults nor names a method, nor does memory that cannot be read. */
#include <check.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

struct fx_sigstate fx_sig; /* signal_handler.c's, not linked here */

#define ENV_OFF    40 /* CompilerThread::_env */
#define THREAD_OFF 56 /* CompilerThread::_task */
#define TASK_OFF   16 /* ciEnv::_task */
#define METHOD_OFF 8  /* CompileTask::_method */
#define ID_OFF     0  /* CompileTask::_compile_id */

static _Alignas(16) uint8_t java_thread[128];
static _Alignas(16) uintptr_t stack[64]; /* the ciEnv at stack[8] */
static _Alignas(16) uint8_t task[64];
static _Alignas(16) uint8_t method[64];
static _Alignas(16) uint8_t old_task[64]; /* the previous compile's (a pooled CompileTask) */
static _Alignas(16) uint8_t old_method[64];
#define GARBAGE 0x2973657479622030u /* "0 bytes)": the crash's ciEnv::_task */
static struct fx_thread t;

static void put(void *base, size_t off, uintptr_t v)
{
    memcpy((uint8_t *)base + off, &v, sizeof(v));
}

/* A compiler thread compiling method 0x...(method) as compile 1234. */
static void setup(void)
{
    memset(&t, 0, sizeof(t));
    memset(java_thread, 0, sizeof(java_thread));
    memset(stack, 0, sizeof(stack));
    memset(task, 0, sizeof(task));
    memset(old_task, 0, sizeof(old_task));
    t.native_only = true;
    t.vm_thread = (uintptr_t)java_thread;
    t.stack_lo = (uintptr_t)&stack[0];
    t.stack_hi = (uintptr_t)&stack[64];
    put(java_thread, ENV_OFF, (uintptr_t)&stack[8]);
    put(java_thread, THREAD_OFF, (uintptr_t)task);
    put(&stack[8], TASK_OFF, (uintptr_t)task);
    put(task, METHOD_OFF, (uintptr_t)method);
    int32_t id = 1234;
    memcpy(task + ID_OFF, &id, sizeof(id));
    put(old_task, METHOD_OFF, (uintptr_t)old_method);
    id = 1233;
    memcpy(old_task + ID_OFF, &id, sizeof(id));
    fx_sig.task_thread_off = THREAD_OFF;
    fx_sig.task_pid = (int)getpid();
    fx_sig.task_task_off = TASK_OFF;
    fx_sig.task_method_off = METHOD_OFF;
    fx_sig.task_id_off = ID_OFF;
    fx_sig.task_env_off = ENV_OFF;
}

static unsigned why(const uint64_t w[2])
{
    return (unsigned)(w[1] >> 32);
}

START_TEST(reads_method_and_id)
{
    setup();
    uint64_t w[2];
    ck_assert(fx_compile_task_read_sigsafe(&t, w));
    ck_assert_uint_eq(why(w), FX_TASK_READ);
    ck_assert_uint_eq(w[0], (uintptr_t)method);
    ck_assert_uint_eq((uint32_t)w[1], 1234);
}
END_TEST

START_TEST(not_a_compiler_thread)
{
    setup();
    uint64_t w[2] = {7, 7};
    t.vm_thread = 0;
    ck_assert(!fx_compile_task_read_sigsafe(&t, w));
    ck_assert_uint_eq(w[0], 7); /* nothing written */
    setup();
    fx_sig.task_env_off = 0; /* offsets not published */
    ck_assert(!fx_compile_task_read_sigsafe(&t, w));
}
END_TEST

START_TEST(each_reason)
{
    uint64_t w[2];
    setup();
    put(java_thread, ENV_OFF, 0);
    ck_assert(fx_compile_task_read_sigsafe(&t, w));
    ck_assert_uint_eq(why(w), FX_TASK_IDLE);
    setup();
    t.stack_lo = 0;
    ck_assert(fx_compile_task_read_sigsafe(&t, w));
    ck_assert_uint_eq(why(w), FX_TASK_NO_BOUNDS);
    setup();
    put(java_thread, ENV_OFF, (uintptr_t)task); /* not on the thread's stack */
    ck_assert(fx_compile_task_read_sigsafe(&t, w));
    ck_assert_uint_eq(why(w), FX_TASK_BAD_ENV);
    setup();
    put(java_thread, ENV_OFF, (uintptr_t)&stack[62]); /* _task would lie past the stack */
    ck_assert(fx_compile_task_read_sigsafe(&t, w));
    ck_assert_uint_eq(why(w), FX_TASK_BAD_ENV);
    setup();
    put(java_thread, ENV_OFF, (uintptr_t)&stack[8] + 4); /* misaligned */
    ck_assert(fx_compile_task_read_sigsafe(&t, w));
    ck_assert_uint_eq(why(w), FX_TASK_BAD_ENV);
    setup();
    put(&stack[8], TASK_OFF, 0); /* the compiler's start-up env: no task, and the thread none */
    put(java_thread, THREAD_OFF, 0);
    ck_assert(fx_compile_task_read_sigsafe(&t, w));
    ck_assert_uint_eq(why(w), FX_TASK_NO_TASK);
    setup();
    put(&stack[8], TASK_OFF, 0); /* the thread has a task, its ciEnv's not stored yet */
    ck_assert(fx_compile_task_read_sigsafe(&t, w));
    ck_assert_uint_eq(why(w), FX_TASK_NOT_PROVEN);
    setup();
    put(java_thread, THREAD_OFF, (uintptr_t)task + 3); /* the thread's word is not a task */
    put(&stack[8], TASK_OFF, (uintptr_t)task + 3);
    ck_assert(fx_compile_task_read_sigsafe(&t, w));
    ck_assert_uint_eq(why(w), FX_TASK_NOT_PROVEN);
    setup();
    fx_sig.task_thread_off = 0; /* CompilerThread::_task unknown: nothing proves the ciEnv's */
    ck_assert(fx_compile_task_read_sigsafe(&t, w));
    ck_assert_uint_eq(why(w), FX_TASK_NOT_PROVEN);
    ck_assert_uint_eq(w[0], 0);
    setup();
    put(task, METHOD_OFF, 0);
    ck_assert(fx_compile_task_read_sigsafe(&t, w));
    ck_assert_uint_eq(why(w), FX_TASK_NO_METHOD);
    ck_assert_uint_eq(w[0], 0);
}
END_TEST

/* Session 26's crash: a signal between ciEnv's set_env(this) and its _task store. */
START_TEST(env_being_built_garbage)
{
    uint64_t w[2];
    setup();
    put(&stack[8], TASK_OFF, GARBAGE); /* the stack's old bytes: no fault, no method */
    ck_assert(fx_compile_task_read_sigsafe(&t, w));
    ck_assert_uint_eq(why(w), FX_TASK_NOT_PROVEN);
    ck_assert_uint_eq(w[0], 0);
    ck_assert_uint_eq((uint32_t)w[1], 0);
    setup();
    put(&stack[8], TASK_OFF, GARBAGE); /* both words garbage (a wrong offset): read checked */
    put(java_thread, THREAD_OFF, GARBAGE);
    ck_assert(fx_compile_task_read_sigsafe(&t, w));
    ck_assert_uint_eq(why(w), FX_TASK_UNREADABLE);
    ck_assert_uint_eq(w[0], 0);
}
END_TEST

/* The same window, the previous compile's ciEnv at the same address: its task is valid memory
 * and names another method. Not named; the thread's own task, when the ciEnv agrees, is. */
START_TEST(env_being_built_stale_task)
{
    uint64_t w[2];
    setup();
    put(&stack[8], TASK_OFF, (uintptr_t)old_task);
    ck_assert(fx_compile_task_read_sigsafe(&t, w));
    ck_assert_uint_eq(why(w), FX_TASK_NOT_PROVEN);
    ck_assert_uint_ne(w[0], (uintptr_t)old_method);
    ck_assert_uint_eq(w[0], 0);
    setup();
    put(java_thread, THREAD_OFF, (uintptr_t)old_task); /* the pooled task reused: the same one */
    put(&stack[8], TASK_OFF, (uintptr_t)old_task);
    ck_assert(fx_compile_task_read_sigsafe(&t, w));
    ck_assert_uint_eq(why(w), FX_TASK_READ);
    ck_assert_uint_eq(w[0], (uintptr_t)old_method);
    ck_assert_uint_eq((uint32_t)w[1], 1233);
}
END_TEST

/* A ciEnv within the stack's bounds whose memory cannot be read (a guard page): no fault. */
START_TEST(env_unreadable)
{
    uint64_t w[2];
    long page = sysconf(_SC_PAGESIZE);
    uint8_t *guard = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert(guard != MAP_FAILED);
    setup();
    t.stack_lo = (uintptr_t)guard;
    t.stack_hi = (uintptr_t)guard + (uintptr_t)page;
    put(java_thread, ENV_OFF, (uintptr_t)guard + 64);
    ck_assert(fx_compile_task_read_sigsafe(&t, w));
    ck_assert_uint_eq(why(w), FX_TASK_UNREADABLE);
    setup();
    put(java_thread, THREAD_OFF, (uintptr_t)guard); /* a freed task's unmapped page */
    put(&stack[8], TASK_OFF, (uintptr_t)guard);
    ck_assert(fx_compile_task_read_sigsafe(&t, w));
    ck_assert_uint_eq(why(w), FX_TASK_UNREADABLE);
    munmap(guard, (size_t)page);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("compile_task");
    TCase *tc = tcase_create("read");
    tcase_add_test(tc, reads_method_and_id);
    tcase_add_test(tc, not_a_compiler_thread);
    tcase_add_test(tc, each_reason);
    tcase_add_test(tc, env_being_built_garbage);
    tcase_add_test(tc, env_being_built_stale_task);
    tcase_add_test(tc, env_unreadable);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
