/* SPDX-License-Identifier: Apache-2.0 */
/* unit.native_walk: the native walk's end at Java code (agent/sampling/native_walk.c, issue 32)
 * on a synthetic text map and stack, no JVM: an address in no mapping inside the code cache's
 * reservation ([CodeCache::_low_bound, _high_bound), published with the code heap layout) is
 * code committed since the map was read, and the walk stops there at Java code, as at an
 * anonymous executable mapping; one byte outside it, or with no layout published, it stays
 * "an address in no executable mapping". The leaf pc and a return address (looked up one byte
 * back) are both checked at the bounds. */
#include <check.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "native_walk.h"
#include "unit_tmpfile.h"

struct fx_sigstate fx_sig; /* signal_handler.c's, which this test does not link */

#define LIB_LO   0x10000000u /* /lib/fake.so, r-xp */
#define CACHE_LO 0x20000000u /* the code cache's reservation, in no mapping of the map */
#define CACHE_HI 0x20100000u

static void map_setup(void)
{
    char path[64];
    unit_tmpfile_str(path, "10000000-10001000 r-xp 00000000 08:01 42 /lib/fake.so\n");
    struct fx_textmap *t = NULL;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_textmap_read(path, &t, &eb), FX_OK);
    unlink(path);
    ck_assert_int_eq(fx_textmap_slot_publish(&fx_native.maps, t), FX_OK);
    __atomic_store_n(&fx_native.enabled, 1, __ATOMIC_RELEASE);
    memset(&fx_sig.codeheap, 0, sizeof(fx_sig.codeheap));
    fx_sig.codeheap.lo = CACHE_LO;
    fx_sig.codeheap.hi = CACHE_HI;
    fx_sig.codeheap.pid = (int32_t)getpid();
}

/* The walk from pc, rbp and rsp; returns the frames and the stop reason. */
static uint32_t walk(const struct fx_thread *t, uintptr_t pc, uintptr_t fp, uintptr_t sp,
                     uint8_t *stop)
{
    ucontext_t uc;
    memset(&uc, 0, sizeof(uc));
    uc.uc_mcontext.gregs[REG_RIP] = (greg_t)pc;
    uc.uc_mcontext.gregs[REG_RBP] = (greg_t)fp;
    uc.uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
    uint64_t pcs[FX_NATIVE_MAX];
    return fx_native_walk_sigsafe(t, &uc, true, pcs, stop);
}

static uint8_t leaf_stop(uintptr_t pc)
{
    struct fx_thread t;
    memset(&t, 0, sizeof(t));
    uint8_t stop = FX_NSTOP_OFF;
    ck_assert_uint_eq(walk(&t, pc, 0, 0, &stop), 0);
    return stop;
}

START_TEST(test_native_walk_leaf_in_the_code_cache_is_java)
{
    map_setup();
    uint64_t before = fx_native.code_cache, misses = fx_native.misses;
    ck_assert_uint_eq(leaf_stop(CACHE_LO), FX_NSTOP_JAVA);
    ck_assert_uint_eq(leaf_stop(CACHE_HI - 1), FX_NSTOP_JAVA);
    ck_assert_uint_eq(fx_native.code_cache, before + 2);
    ck_assert_uint_eq(fx_native.misses, misses); /* no re-read for the code cache */
    ck_assert_uint_eq(leaf_stop(CACHE_LO - 1), FX_NSTOP_NOT_TEXT);
    ck_assert_uint_eq(leaf_stop(CACHE_HI), FX_NSTOP_NOT_TEXT);
    ck_assert_uint_eq(fx_native.misses, misses + 2);
}
END_TEST

START_TEST(test_native_walk_no_layout_no_code_cache)
{
    map_setup();
    __atomic_store_n(&fx_sig.codeheap.pid, 0, __ATOMIC_RELEASE);
    ck_assert_uint_eq(leaf_stop(CACHE_LO + 0x100), FX_NSTOP_NOT_TEXT);
}
END_TEST

/* A native leaf in /lib/fake.so whose frame pointer chain returns to ret: one native frame,
 * then the stop the return address (looked up at ret - 1) gives. */
static uint8_t return_stop(uintptr_t ret)
{
    static uintptr_t stack[64];
    struct fx_thread t;
    memset(&t, 0, sizeof(t));
    t.stack_lo = (uintptr_t)stack;
    t.stack_hi = (uintptr_t)(stack + 64);
    stack[32] = 0; /* the caller's rbp: the chain's end */
    stack[33] = ret;
    uint8_t stop = FX_NSTOP_OFF;
    ck_assert_uint_eq(walk(&t, LIB_LO + 0x10, (uintptr_t)&stack[32], (uintptr_t)&stack[30], &stop),
                      1);
    return stop;
}

START_TEST(test_native_walk_return_into_the_code_cache_is_java)
{
    map_setup();
    ck_assert_uint_eq(return_stop(CACHE_LO + 1), FX_NSTOP_JAVA);
    ck_assert_uint_eq(return_stop(CACHE_HI), FX_NSTOP_JAVA);
    ck_assert_uint_eq(return_stop(CACHE_LO), FX_NSTOP_NOT_TEXT);
    ck_assert_uint_eq(return_stop(CACHE_HI + 1), FX_NSTOP_NOT_TEXT);
}
END_TEST

/* native_below.c's proven step over a stub the VM called (not linked here; unit.recover_vmstub
 * tests its rules): the stub at STUB, frameless, its return address at [sp]. */
#define STUB (CACHE_LO + 0x40)
bool fx_native_vm_stub_sigsafe(const struct fx_thread *t, struct fx_regs *at)
{
    (void)t;
    if (at->pc != STUB)
        return false;
    memcpy(&at->pc, (const void *)at->sp, sizeof(at->pc));
    at->sp += 8;
    return true;
}

/* Session 26 (8.5h): a leaf in a stub the VM called, its return address into the VM's code
 * (/lib/fake.so), whose frame returns into a runtime stub in the code cache: the leaf walk
 * records the stub's pc and the VM's frame and stops at Java code there, the registers of that
 * frame given for the join at the anchor; any other code cache leaf stays a stop at the leaf. */
START_TEST(test_native_walk_steps_a_stub_the_vm_called)
{
    static uintptr_t stack[64];
    map_setup();
    struct fx_thread t;
    memset(&t, 0, sizeof(t));
    t.stack_lo = (uintptr_t)stack;
    t.stack_hi = (uintptr_t)(stack + 64);
    stack[20] = LIB_LO + 0x20;    /* the stub's return address, into the VM */
    stack[32] = 0;                /* the VM frame's saved rbp: the chain's end */
    stack[33] = CACHE_LO + 0x100; /* its return into the runtime stub at the anchor */
    ucontext_t uc;
    memset(&uc, 0, sizeof(uc));
    uc.uc_mcontext.gregs[REG_RIP] = (greg_t)STUB;
    uc.uc_mcontext.gregs[REG_RBP] = (greg_t)(uintptr_t)&stack[32];
    uc.uc_mcontext.gregs[REG_RSP] = (greg_t)(uintptr_t)&stack[20];
    uint64_t pcs[FX_NATIVE_MAX];
    uint8_t stop = FX_NSTOP_OFF;
    ck_assert_uint_eq(fx_native_walk_sigsafe(&t, &uc, true, pcs, &stop), 2);
    ck_assert_uint_eq(stop, FX_NSTOP_JAVA);
    ck_assert_uint_eq(pcs[0], STUB);
    ck_assert_uint_eq(pcs[1], LIB_LO + 0x20);
    struct fx_regs at;
    ck_assert(fx_native_walk_vm_stub_sigsafe(&t, &uc, &at));
    ck_assert_uint_eq(at.pc, CACHE_LO + 0x100);
    ck_assert_uint_eq(at.sp, (uintptr_t)&stack[34]);
    /* not interrupted (alloc_walk.c's context): no step */
    ck_assert_uint_eq(fx_native_walk_sigsafe(&t, &uc, false, pcs, &stop), 0);
    /* another code cache pc: a stop at the leaf, no join */
    uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(STUB + 8);
    ck_assert_uint_eq(fx_native_walk_sigsafe(&t, &uc, true, pcs, &stop), 0);
    ck_assert_uint_eq(stop, FX_NSTOP_JAVA);
    ck_assert(!fx_native_walk_vm_stub_sigsafe(&t, &uc, &at));
    /* a stub whose caller is not in a file mapping (the code cache): no step */
    uc.uc_mcontext.gregs[REG_RIP] = (greg_t)STUB;
    stack[20] = CACHE_LO + 0x200;
    ck_assert_uint_eq(fx_native_walk_sigsafe(&t, &uc, true, pcs, &stop), 0);
    ck_assert(!fx_native_walk_vm_stub_sigsafe(&t, &uc, &at));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("native_walk");
    TCase *tc = tcase_create("code cache");
    tcase_add_test(tc, test_native_walk_leaf_in_the_code_cache_is_java);
    tcase_add_test(tc, test_native_walk_no_layout_no_code_cache);
    tcase_add_test(tc, test_native_walk_return_into_the_code_cache_is_java);
    tcase_add_test(tc, test_native_walk_steps_a_stub_the_vm_called);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
