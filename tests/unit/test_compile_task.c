/* SPDX-License-Identifier: Apache-2.0 */
/* agent/sampling/compile_task_sig.c without a JVM (issue 32, item 5): a fake CompilerThread,
 * ciEnv (on a fake stack) and CompileTask at the offsets the handler is given; each reason of
 * enum fx_task_read comes out where its case is built, and nothing is read for a thread without
 * a JavaThread or before the offsets are published. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

struct fx_sigstate fx_sig; /* signal_handler.c's, not linked here */

#define ENV_OFF    40 /* CompilerThread::_env */
#define TASK_OFF   16 /* ciEnv::_task */
#define METHOD_OFF 8  /* CompileTask::_method */
#define ID_OFF     0  /* CompileTask::_compile_id */

static _Alignas(16) uint8_t java_thread[128];
static _Alignas(16) uintptr_t stack[64]; /* the ciEnv at stack[8] */
static _Alignas(16) uint8_t task[64];
static _Alignas(16) uint8_t method[64];
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
    t.native_only = true;
    t.vm_thread = (uintptr_t)java_thread;
    t.stack_lo = (uintptr_t)&stack[0];
    t.stack_hi = (uintptr_t)&stack[64];
    put(java_thread, ENV_OFF, (uintptr_t)&stack[8]);
    put(&stack[8], TASK_OFF, (uintptr_t)task);
    put(task, METHOD_OFF, (uintptr_t)method);
    int32_t id = 1234;
    memcpy(task + ID_OFF, &id, sizeof(id));
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
    put(&stack[8], TASK_OFF, 0);
    ck_assert(fx_compile_task_read_sigsafe(&t, w));
    ck_assert_uint_eq(why(w), FX_TASK_NO_TASK);
    setup();
    put(&stack[8], TASK_OFF, (uintptr_t)task + 3);
    ck_assert(fx_compile_task_read_sigsafe(&t, w));
    ck_assert_uint_eq(why(w), FX_TASK_NO_TASK);
    setup();
    put(task, METHOD_OFF, 0);
    ck_assert(fx_compile_task_read_sigsafe(&t, w));
    ck_assert_uint_eq(why(w), FX_TASK_NO_METHOD);
    ck_assert_uint_eq(w[0], 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("compile_task");
    TCase *tc = tcase_create("read");
    tcase_add_test(tc, reads_method_and_id);
    tcase_add_test(tc, not_a_compiler_thread);
    tcase_add_test(tc, each_reason);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
