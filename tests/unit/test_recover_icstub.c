/* SPDX-License-Identifier: Apache-2.0 */
/* unit.recover_icstub: the inline cache stub rule (agent/sampling/recover_icstub.c, recover.c's
 * FX_REC_ICSTUB, docs/VALIDATION.md 8.5k) without a JVM, on synthetic code in HotSpot's shapes
 * (icBuffer_x86.cpp: mov rax, imm64; jmp rel32, or mov r10, imm64; jmp r10 when far) and a
 * compiled caller's call rel32: the caller at [sp] at each of the stub's instructions, only
 * when the call before the return address goes to that very stub; refused inside an
 * instruction, for another stub of the buffer, a call of another form, or bytes past a range. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recover_x86.h"
#include "unit_call.h"

static uint8_t code[256]; /* [0, 64): the compiled caller; [64, 256): the InlineCacheBuffer */
static _Alignas(16) uintptr_t stack[16];
#define LO   ((uintptr_t)&stack[0])
#define HI   ((uintptr_t)&stack[16])
#define NEAR 96  /* a near stub: 48 B8 imm64; E9 rel32 */
#define FAR  128 /* a far one: 48 B8 imm64; 49 BA imm64; 41 FF E2 */

static const struct fx_code_range caller = {
        .begin = (uintptr_t)code, .end = (uintptr_t)code + 64, .kind = FX_BLOB_NMETHOD};
static const struct fx_code_range buf = {.begin = (uintptr_t)code + 64,
                                         .end = (uintptr_t)code + 256,
                                         .kind = FX_BLOB_STUB,
                                         .flags = FX_RANGE_IC_BUFFER};

/* call rel32 at `at` in the caller to code + target; returns the return address */
static uintptr_t call_to(size_t at, size_t target)
{
    return unit_call_rel32(code, at, target);
}

static void setup(void)
{
    memset(code, 0xCC, sizeof(code));
    static const uint8_t near_stub[] = {0x48, 0xB8, 1, 2, 3, 4, 5, 6, 7, 8, 0xE9, 0, 0, 0, 0};
    static const uint8_t far_stub[] = {0x48, 0xB8, 1, 2, 3, 4, 5, 6, 7,    8,    0x49, 0xBA,
                                       1,    2,    3, 4, 5, 6, 7, 8, 0x41, 0xFF, 0xE2};
    memcpy(code + NEAR, near_stub, sizeof(near_stub));
    memcpy(code + FAR, far_stub, sizeof(far_stub));
}

START_TEST(test_caller_at_sp_in_the_buffer)
{
    setup();
    stack[4] = call_to(16, NEAR);
    struct fx_regs in = {
            .pc = (uintptr_t)code + NEAR + 10, .sp = (uintptr_t)&stack[4], .fp = 0xF00};
    struct fx_regs out;
    ck_assert_int_eq(fx_recover_caller(&buf, &in, LO, HI, false, &out), FX_REC_ICSTUB);
    ck_assert_uint_eq(out.pc, (uintptr_t)code + 21);
    ck_assert_uint_eq(out.sp, (uintptr_t)&stack[5]);
    ck_assert_uint_eq(out.fp, 0xF00);
    in.sp = HI; /* the return address outside the thread's stack */
    ck_assert_int_eq(fx_recover_caller(&buf, &in, LO, HI, false, &out), FX_REC_STUB);
    /* the same stub without the flag: another stub, named, not recovered */
    struct fx_code_range other = buf;
    other.flags = 0;
    in.sp = (uintptr_t)&stack[4];
    ck_assert_int_eq(fx_recover_caller(&other, &in, LO, HI, false, &out), FX_REC_STUB);
}
END_TEST

START_TEST(test_called_near_stub)
{
    setup();
    uintptr_t ret = call_to(16, NEAR), s = (uintptr_t)code + NEAR;
    ck_assert(fx_recover_icstub_called(&buf, &caller, s, ret));       /* mov rax, imm64 */
    ck_assert(fx_recover_icstub_called(&buf, &caller, s + 10, ret));  /* jmp rel32 */
    ck_assert(!fx_recover_icstub_called(&buf, &caller, s + 5, ret));  /* inside mov */
    ck_assert(!fx_recover_icstub_called(&buf, &caller, s + 15, ret)); /* past the jmp */
    ck_assert(!fx_recover_icstub_called(&buf, &caller, s + 20, ret)); /* no far form here */
    /* pc in another stub of the buffer than the one the call goes to */
    ck_assert(!fx_recover_icstub_called(&buf, &caller, (uintptr_t)code + FAR, ret));
}
END_TEST

START_TEST(test_called_far_stub)
{
    setup();
    uintptr_t ret = call_to(30, FAR), s = (uintptr_t)code + FAR;
    ck_assert(fx_recover_icstub_called(&buf, &caller, s, ret));
    ck_assert(fx_recover_icstub_called(&buf, &caller, s + 10, ret)); /* mov r10, imm64 */
    ck_assert(fx_recover_icstub_called(&buf, &caller, s + 20, ret)); /* jmp r10 */
    ck_assert(!fx_recover_icstub_called(&buf, &caller, s + 21, ret));
    code[FAR + 22] = 0xE0; /* jmp rax: not the stub's code */
    ck_assert(!fx_recover_icstub_called(&buf, &caller, s + 20, ret));
    ck_assert(!fx_recover_icstub_called(&buf, &caller, s, ret));
}
END_TEST

START_TEST(test_refused_calls)
{
    setup();
    uintptr_t s = (uintptr_t)code + NEAR;
    /* a call through a register (41 FF D2, call r10) is not an inline cache's call */
    static const uint8_t call_r10[] = {0x41, 0xFF, 0xD2};
    memcpy(code + 18, call_r10, sizeof(call_r10));
    ck_assert(!fx_recover_icstub_called(&buf, &caller, s, (uintptr_t)code + 21));
    /* the call's target not a stub's head (mov rax, imm64) */
    uintptr_t ret = call_to(16, NEAR + 1);
    ck_assert(!fx_recover_icstub_called(&buf, &caller, s + 1, ret));
    /* a call whose target lies outside the buffer (in the caller itself) */
    ret = call_to(16, 40);
    ck_assert(!fx_recover_icstub_called(&buf, &caller, s, ret));
    /* the call would begin before the caller's range, or end past it */
    ck_assert(!fx_recover_icstub_called(&buf, &caller, s, (uintptr_t)code + 4));
    ck_assert(!fx_recover_icstub_called(&buf, &caller, s, (uintptr_t)code + 70));
    /* a stub whose code runs past the end of the buffer */
    struct fx_code_range short_buf = buf;
    short_buf.end = (uintptr_t)code + NEAR + 12;
    ret = call_to(16, NEAR);
    ck_assert(fx_recover_icstub_called(&buf, &caller, s, ret));
    ck_assert(!fx_recover_icstub_called(&short_buf, &caller, s, ret));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("recover_icstub");
    TCase *tc = tcase_create("rule");
    tcase_add_test(tc, test_caller_at_sp_in_the_buffer);
    tcase_add_test(tc, test_called_near_stub);
    tcase_add_test(tc, test_called_far_stub);
    tcase_add_test(tc, test_refused_calls);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
