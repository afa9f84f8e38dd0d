/* SPDX-License-Identifier: Apache-2.0 */
/* unit.recover_mhintr: the method handle intrinsic rule (agent/sampling/recover_mhintr.c,
 * recover.c's FX_REC_MH_INTRINSIC, docs/VALIDATION.md 8.5l) without a JVM, on the real code of
 * MethodHandle.linkToStatic and invokeBasic (-XX:+PrintNativeNMethods, JDK 17 and Temurin 25)
 * and a compiled caller's call rel32: the caller at [sp] at each of their instruction starts;
 * refused inside an instruction, after a push, past the stub section, for another layout
 * (not flagged by codemap.c, a frame size, a tier, OSR, a stale blob), and the call proven only
 * when it is a call rel32 to that very nmethod's first byte. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recover_x86.h"
#include "unit_call.h"

static uint8_t code[256]; /* [0, 64): the compiled caller; [MH, ...): the intrinsic */
static _Alignas(16) uintptr_t stack[16];
#define LO ((uintptr_t)&stack[0])
#define HI ((uintptr_t)&stack[16])
#define MH 64

/* JDK 17 and 25 (the same bytes but the rel32 of the error jump and JDK 17's padding):
 * mov ebx, [rdx + 0x24]; shl rbx, 3; mov rbx, [rbx + 0x10]; test rbx, rbx; je +3;
 * jmp [rbx + 0x40]; jmp throw_AbstractMethodError */
static const uint8_t link_to_static[] = {0x8B, 0x5A, 0x24, 0x48, 0xC1, 0xE3, 0x03, 0x48, 0x8B, 0x5B,
                                         0x10, 0x48, 0x85, 0xDB, 0x0F, 0x84, 0x03, 0x00, 0x00, 0x00,
                                         0xFF, 0x63, 0x40, 0xE9, 0x64, 0x87, 0xAA, 0xFF};
static const unsigned link_to_static_starts[] = {0, 3, 7, 11, 14, 20, 23};
/* Temurin 25's invokeBasic(I)I: the receiver's form, vmentry, method, vmtarget, then the same */
static const uint8_t invoke_basic[] = {
        0x8B, 0x5E, 0x14, 0x48, 0xC1, 0xE3, 0x03, 0x8B, 0x5B, 0x28, 0x48, 0xC1, 0xE3, 0x03,
        0x8B, 0x5B, 0x24, 0x48, 0xC1, 0xE3, 0x03, 0x48, 0x8B, 0x5B, 0x10, 0x48, 0x85, 0xDB,
        0x0F, 0x84, 0x03, 0x00, 0x00, 0x00, 0xFF, 0x63, 0x40, 0xE9, 0x36, 0xF4, 0xAB, 0xFF};
static const unsigned invoke_basic_starts[] = {0, 3, 7, 10, 14, 17, 21, 25, 28, 34, 37};

static const struct fx_code_range caller = {
        .begin = (uintptr_t)code, .end = (uintptr_t)code + 64, .kind = FX_BLOB_NMETHOD};

/* The intrinsic's range as codemap.c builds it from CompiledMethodLoad and VMStructs. */
static struct fx_code_range intrinsic(size_t len)
{
    return (struct fx_code_range){.begin = (uintptr_t)code + MH,
                                  .end = (uintptr_t)code + MH + len,
                                  .blob = 1,
                                  .verified = FX_OFF_UNKNOWN, /* complete at the end: none */
                                  .complete = FX_OFF_UNKNOWN,
                                  .frame_words = 0,
                                  .kind = FX_BLOB_NMETHOD,
                                  .level = 0,
                                  .flags = FX_RANGE_FRAMELESS};
}

/* call rel32 at `at` in the caller to code + target; returns the return address */
static uintptr_t call_to(size_t at, size_t target)
{
    return unit_call_rel32(code, at, target);
}

static void setup(const uint8_t *mh, size_t len)
{
    memset(code, 0xCC, sizeof(code));
    memcpy(code + MH, mh, len);
}

static void caller_at_every_start(const uint8_t *mh, size_t len, const unsigned *starts, size_t n)
{
    setup(mh, len);
    struct fx_code_range r = intrinsic(len);
    stack[4] = call_to(16, MH);
    for (size_t i = 0; i < n; i++) {
        struct fx_regs in = {.pc = r.begin + starts[i], .sp = (uintptr_t)&stack[4], .fp = 0xF00};
        struct fx_regs out;
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_MH_INTRINSIC);
        ck_assert_uint_eq(out.pc, (uintptr_t)code + 21);
        ck_assert_uint_eq(out.sp, (uintptr_t)&stack[5]);
        ck_assert_uint_eq(out.fp, 0xF00);
        ck_assert(fx_recover_mh_called(&r, &caller, out.pc));
        /* one byte on: inside that instruction (none is one byte long) */
        in.pc++;
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
    }
}

START_TEST(test_link_to_static)
{
    caller_at_every_start(link_to_static, sizeof(link_to_static), link_to_static_starts,
                          sizeof(link_to_static_starts) / sizeof(link_to_static_starts[0]));
}
END_TEST

START_TEST(test_invoke_basic)
{
    caller_at_every_start(invoke_basic, sizeof(invoke_basic), invoke_basic_starts,
                          sizeof(invoke_basic_starts) / sizeof(invoke_basic_starts[0]));
}
END_TEST

START_TEST(test_refused)
{
    setup(link_to_static, sizeof(link_to_static));
    struct fx_code_range r = intrinsic(sizeof(link_to_static)), o;
    stack[4] = call_to(16, MH);
    struct fx_regs in = {.pc = r.begin + 20, .sp = (uintptr_t)&stack[4], .fp = 0xF00}, out;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_MH_INTRINSIC);
    /* a stale blob (its compile id changed): nothing said */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_LAYOUT);
    /* other layouts are not the intrinsic's: not flagged by codemap.c, a frame, a tier, OSR */
    o = r, o.flags = 0;
    ck_assert(!fx_recover_mh_shape(&o));
    ck_assert_int_ne(fx_recover_caller(&o, &in, LO, HI, true, &out), FX_REC_MH_INTRINSIC);
    o = r, o.frame_words = 2;
    ck_assert(!fx_recover_mh_shape(&o));
    ck_assert_int_ne(fx_recover_caller(&o, &in, LO, HI, true, &out), FX_REC_MH_INTRINSIC);
    ck_assert(!fx_recover_mh_called(&o, &caller, (uintptr_t)code + 21));
    o = r, o.level = 4;
    ck_assert_int_ne(fx_recover_caller(&o, &in, LO, HI, true, &out), FX_REC_MH_INTRINSIC);
    o = r, o.flags |= FX_RANGE_OSR;
    ck_assert_int_ne(fx_recover_caller(&o, &in, LO, HI, true, &out), FX_REC_MH_INTRINSIC);
    o = r, o.frame_words = -1; /* the frame size not read */
    ck_assert_int_ne(fx_recover_caller(&o, &in, LO, HI, true, &out), FX_REC_MH_INTRINSIC);
    /* a pc in the stub section */
    o = r, o.stubs = 20;
    ck_assert_int_eq(fx_recover_caller(&o, &in, LO, HI, true, &out), FX_REC_DECODE);
    /* a push on the way (push rbx at the start): rsp moved, refused after it */
    code[MH] = 0x53;
    in.pc = r.begin + 1;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
    code[MH] = 0x8B;
    /* an instruction the decoder does not know on the way (a reserved 0F 04) */
    code[MH + 7] = 0x0F, code[MH + 8] = 0x04;
    in.pc = r.begin + 11;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
    setup(link_to_static, sizeof(link_to_static));
    /* the return address outside the thread's stack */
    in.pc = r.begin + 20, in.sp = HI;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_STACK);
}
END_TEST

START_TEST(test_refused_calls)
{
    setup(link_to_static, sizeof(link_to_static));
    struct fx_code_range r = intrinsic(sizeof(link_to_static));
    /* a call to the intrinsic's second instruction, or into the caller itself */
    ck_assert(!fx_recover_mh_called(&r, &caller, call_to(16, MH + 3)));
    ck_assert(!fx_recover_mh_called(&r, &caller, call_to(16, 40)));
    ck_assert(fx_recover_mh_called(&r, &caller, call_to(16, MH)));
    /* a call through a register (FF D3, call rbx) */
    static const uint8_t call_rbx[] = {0xFF, 0xD3};
    memcpy(code + 19, call_rbx, sizeof(call_rbx));
    ck_assert(!fx_recover_mh_called(&r, &caller, (uintptr_t)code + 21));
    /* the call would begin before the caller's range, or end past it */
    ck_assert(!fx_recover_mh_called(&r, &caller, (uintptr_t)code + 4));
    ck_assert(!fx_recover_mh_called(&r, &caller, (uintptr_t)code + 70));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("recover_mhintr");
    TCase *tc = tcase_create("rule");
    tcase_add_test(tc, test_link_to_static);
    tcase_add_test(tc, test_invoke_basic);
    tcase_add_test(tc, test_refused);
    tcase_add_test(tc, test_refused_calls);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
