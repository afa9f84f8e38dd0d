/* SPDX-License-Identifier: Apache-2.0 */
/* agent/sampling/recover_entrybar.c without a JVM (docs/VALIDATION.md 8.5j): JDK 25's nmethod
 * entry barrier stub and the methods that call it, on their real bytes as Temurin 25.0.x
 * generates them (-XX:+PrintStubCode; -XX:CompileCommand=print for a C1 and a C2 compilation
 * of `static int f(int x) { return x * 3 + 1; }`), the calls' targets moved to where the stub
 * lies here. One refused case per condition. The handler's other parts are fakes: the text map
 * (a flag says whether an address is native code of a mapped file), the code heap lookup (the
 * table alone) and the compile id check (always current). JDK 17 has no such stub under G1. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recover_entrybar.h"

/* StubRoutines::method_entry_barrier, 428 of its 429 bytes (the dump ends before the last
 * byte, the displacement of its final jmp [rsp - 8]): push -1; push rbp; mov rbp, rsp; push
 * rdi; lea; 16 registers and 8 xmm saved; test spl, 15; je; sub rsp, 8; call; add rsp, 8; jmp;
 * call (nmethod_stub_entry_barrier); restores; leave; add rsp, 8; ret; the deoptimize path. */
static const char stub25_hex[] =
        "68ffffffff55488bec57488d7c24184881ec80000000488944247848894c2470488954246848895c24604889"
        "6c2450488974244848897c24404c894424384c894c24304c895424284c895c24204c896424184c896c24104c"
        "897424084c893c244881ec80000000c5fa7f7c2470c5fa7f742460c5fa7f6c2450c5fa7f642440c5fa7f5c24"
        "30c5fa7f542420c5fa7f4c2410c5fa7f042440f6c40f0f84120000004883ec08e897543f184883c408e90500"
        "0000e889543f18c5fa6f0424c5fa6f4c2410c5fa6f542420c5fa6f5c2430c5fa6f642440c5fa6f6c2450c5fa"
        "6f742460c5fa6f7c24704881c48000000083f8010f84580000004c8b3c244c8b7424084c8b6c24104c8b6424"
        "184c8b5c24204c8b5424284c8b4c24304c8b442438488b7c2440488b742448488b6c2450488b5c2460488b54"
        "2468488b4c2470488b4424784881c4800000005fc94883c408c34c8b3c244c8b7424084c8b6c24104c8b6424"
        "184c8b5c24204c8b5424284c8b4c24304c8b442438488b7c2440488b742448488b6c2450488b5c2460488b54"
        "2468488b4c2470488b4424784881c4800000005fc948852424488b2424ff6424";
/* the return addresses of its two runtime calls (either side of call_VM_leaf's alignment test)
 * and the depth of the stub's frame below rbp there (sp after the return) */
#define RET_A   0xA9
#define DEPTH_A 0x110
#define RET_B   0xB7
#define DEPTH_B 0x108

/* C1 (tier 3): stack bang; push rbp; sub rsp, 0x20; cmp [r15 + 0x20], 0; je +5; call stub;
 * the frame complete after the call (offset 0x1B) */
static const char c1_hex[] =
        "89842400c0feff554883ec2041817f20000000007405e845e5560748b808054014c97f00008bb89000000083"
        "c70289b89000000081e7fe07000085ff0f841d000000488bc6c1e6022bf0ffc6488bc64883c4205d493b6728"
        "0f871f000000c349ba98024014c97f00004c8954240848c70424ffffffffe8e5856507ebc549ba54fa3f3cc9"
        "7f00004d899738050000e9cd8d5807498b87e005000049c787e00500000000000049c787e805000000000000"
        "4883c4205de926785c07f4f4f4f4f4f4e89b485c0748bf3c97d75ac97f00004883e4f0e8e8ca341ef449bad9"
        "fa3f3cc97f00004152e976905807f4f4f4f4f4f4";
#define C1_CALL     0x16
#define C1_COMPLETE 0x1B
/* C2: sub rsp, 0x18; mov [rsp + 0x10], rbp; cmp [r15 + 0x20], 0; jne stub (0x44); the body;
 * C2EntryBarrierStub at 0x44: call stub; jmp 0x1A (the continuation, the frame complete) */
static const char c2_hex[] =
        "4881ec1800000048896c241041817f20000000000f852a0000008d4476014883c4105d493b67280f87010000"
        "00c349baa37bec43c97f00004d899738050000e99c0cacffe89763aaffe9ccfffffff4f4e98bc4afffe80000"
        "000048832c2405e97c0facfff4f4f4f4";
#define C2_CALL     0x44
#define C2_CONT     0x1A
#define C2_COMPLETE 0x1A

static _Alignas(16) uint8_t code[2048];
#define STUB (&code[0])
#define C1   (&code[512])
#define C2   (&code[1024])
static size_t stub_len, c1_len, c2_len;
static _Alignas(16) uintptr_t stack[256];
#define LO ((uintptr_t)&stack[0])
#define HI ((uintptr_t)&stack[256])

/* --- fakes of the handler's other parts: fake_sig_code.h --- */
#include "fake_sig_code.h"

static size_t load(uint8_t *to, const char *hex)
{
    return fake_hex_load(to, (size_t)(&code[sizeof(code)] - to), hex);
}

/* the call rel32 at `at` goes to the stub */
static void aim(uint8_t *at)
{
    int32_t rel = (int32_t)((intptr_t)STUB - (intptr_t)(at + 5));
    memcpy(at + 1, &rel, sizeof(rel));
}

static void setup(void)
{
    memset(code, 0xF4, sizeof(code));
    memset(stack, 0, sizeof(stack));
    stub_len = load(STUB, stub25_hex);
    c1_len = load(C1, c1_hex);
    c2_len = load(C2, c2_hex);
    aim(C1 + C1_CALL);
    aim(C2 + C2_CALL);
    fake_mapped = true;
}

static struct fx_code_range stub_range(void)
{
    return (struct fx_code_range){.begin = (uintptr_t)STUB,
                                  .end = (uintptr_t)STUB + stub_len,
                                  .verified = FX_OFF_UNKNOWN,
                                  .complete = FX_OFF_UNKNOWN,
                                  .kind = FX_BLOB_STUB,
                                  .flags = FX_RANGE_ENTRY_BARRIER};
}

static struct fx_code_range nm_range(const uint8_t *b, size_t len, uint32_t complete)
{
    return (struct fx_code_range){.begin = (uintptr_t)b,
                                  .end = (uintptr_t)b + len,
                                  .name = 7,
                                  .verified = 0,
                                  .complete = complete,
                                  .kind = FX_BLOB_NMETHOD};
}

/* the stub's frame: rbp at stack[128], saved rbp, the cookie, the return address */
#define FP ((uintptr_t)&stack[128])
static void frame(uintptr_t ret)
{
    stack[128] = 0x5150;
    stack[129] = UINTPTR_MAX;
    stack[130] = ret;
}

START_TEST(test_stub_frame)
{
    struct fx_code_range s = stub_range();
    uintptr_t target = 0;
    struct fx_regs out, at = {(uintptr_t)STUB + RET_A, FP - DEPTH_A, FP, NULL};
    frame(0x1234);
    ck_assert_int_eq(fx_recover_entry_barrier(&s, &at, LO, HI, &target, &out), FX_REC_STUB_FRAME);
    ck_assert_uint_eq(out.pc, 0x1234);
    ck_assert_uint_eq(out.sp, FP + 24);
    ck_assert_uint_eq(out.fp, 0x5150);
    ck_assert_uint_eq(target, (uintptr_t)STUB + RET_A + 0x183F5497);
    at = (struct fx_regs){(uintptr_t)STUB + RET_B, FP - DEPTH_B, FP, NULL};
    ck_assert_int_eq(fx_recover_entry_barrier(&s, &at, LO, HI, &target, &out), FX_REC_STUB_FRAME);
    ck_assert_uint_eq(target, (uintptr_t)STUB + RET_B + 0x183F5489);
}
END_TEST

START_TEST(test_stub_refused)
{
    struct fx_code_range s = stub_range();
    uintptr_t target = 0;
    struct fx_regs out, at = {(uintptr_t)STUB + RET_A, FP - DEPTH_A, FP, NULL};
    frame(0x1234);
    s.flags = 0; /* another stub */
    ck_assert_int_eq(fx_recover_entry_barrier(&s, &at, LO, HI, &target, &out), FX_REC_STUB);
    s = stub_range();
    STUB[5] = 0x90; /* no push rbp in the head */
    ck_assert_int_eq(fx_recover_entry_barrier(&s, &at, LO, HI, &target, &out), FX_REC_DECODE);
    STUB[5] = 0x55;
    at.pc = (uintptr_t)STUB + RET_A + 4; /* not after a call */
    ck_assert_int_eq(fx_recover_entry_barrier(&s, &at, LO, HI, &target, &out), FX_REC_NOT_CALLED);
    at.pc = (uintptr_t)STUB + 5; /* in the head */
    ck_assert_int_eq(fx_recover_entry_barrier(&s, &at, LO, HI, &target, &out), FX_REC_NOT_CALLED);
    at = (struct fx_regs){(uintptr_t)STUB + RET_A, FP + 8, FP, NULL}; /* rbp below sp */
    ck_assert_int_eq(fx_recover_entry_barrier(&s, &at, LO, HI, &target, &out), FX_REC_STACK);
    at = (struct fx_regs){(uintptr_t)STUB + RET_A, FP - 8192, FP, NULL}; /* too far */
    ck_assert_int_eq(fx_recover_entry_barrier(&s, &at, LO, HI, &target, &out), FX_REC_STACK);
    at = (struct fx_regs){(uintptr_t)STUB + RET_A, HI - 16, HI - 8, NULL}; /* off the stack */
    ck_assert_int_eq(fx_recover_entry_barrier(&s, &at, LO, HI, &target, &out), FX_REC_STACK);
    at = (struct fx_regs){(uintptr_t)STUB + RET_A, FP - DEPTH_A, FP, NULL};
    stack[129] = FP + 0x200; /* deoptimize() wrote the new rsp into the cookie */
    ck_assert_int_eq(fx_recover_entry_barrier(&s, &at, LO, HI, &target, &out), FX_REC_DECODE);
}
END_TEST

START_TEST(test_entry_return)
{
    struct fx_code_range n1 = nm_range(C1, c1_len, C1_COMPLETE);
    struct fx_code_range n2 = nm_range(C2, c2_len, C2_COMPLETE);
    uintptr_t pc = 0, s = (uintptr_t)STUB;
    /* C1: the inline call, last in the prologue */
    ck_assert(fx_recover_entry_return(&n1, s, (uintptr_t)C1 + C1_CALL + 5, &pc));
    ck_assert_uint_eq(pc, (uintptr_t)C1 + C1_CALL + 5);
    /* C2: the out-of-line stub's call, its jmp back to the continuation after the jne */
    ck_assert(fx_recover_entry_return(&n2, s, (uintptr_t)C2 + C2_CALL + 5, &pc));
    ck_assert_uint_eq(pc, (uintptr_t)C2 + C2_CONT);
    /* refused: another target, not after a call, the layout unknown, an OSR compilation, the
     * call past the prologue in C1's body, C2's continuation outside the prologue */
    ck_assert(!fx_recover_entry_return(&n1, s + 16, (uintptr_t)C1 + C1_CALL + 5, &pc));
    ck_assert(!fx_recover_entry_return(&n1, s, (uintptr_t)C1 + C1_CALL + 4, &pc));
    struct fx_code_range bad = n1;
    bad.complete = FX_OFF_UNKNOWN;
    ck_assert(!fx_recover_entry_return(&bad, s, (uintptr_t)C1 + C1_CALL + 5, &pc));
    bad = n1;
    bad.flags = FX_RANGE_OSR;
    ck_assert(!fx_recover_entry_return(&bad, s, (uintptr_t)C1 + C1_CALL + 5, &pc));
    bad = n1;
    bad.complete = C1_CALL; /* the call after the frame's completion: no jmp back there */
    ck_assert(!fx_recover_entry_return(&bad, s, (uintptr_t)C1 + C1_CALL + 5, &pc));
    bad = n2;
    bad.complete = 0x10;
    ck_assert(!fx_recover_entry_return(&bad, s, (uintptr_t)C2 + C2_CALL + 5, &pc));
    C2[0x16] = 0x60; /* the prologue's jne goes past the return address, not to the call */
    ck_assert(!fx_recover_entry_return(&n2, s, (uintptr_t)C2 + C2_CALL + 5, &pc));
}
END_TEST

static struct fx_code_table *table(struct fx_code_range a, struct fx_code_range b,
                                   struct fx_code_range c)
{
    static _Alignas(16)
            uint8_t mem[sizeof(struct fx_code_table) + 3 * sizeof(struct fx_code_range)];
    struct fx_code_table *t = (struct fx_code_table *)mem;
    memset(mem, 0, sizeof(mem));
    t->n = 3;
    t->r[0] = a, t->r[1] = b, t->r[2] = c;
    return t;
}

/* The known answer: the walk reaches the stub's runtime call with the entered C2 method's frame
 * built under it (sub rsp, 0x18; rbp saved at [rsp + 0x10]): the entered method's caller. */
START_TEST(test_step_c2)
{
    struct fx_code_table *t = table(stub_range(), nm_range(C1, c1_len, C1_COMPLETE),
                                    nm_range(C2, c2_len, C2_COMPLETE));
    struct fx_heap_memo m = {.lookups = 0};
    frame((uintptr_t)C2 + C2_CALL + 5);
    uintptr_t nsp = FP + 24; /* the nmethod's sp: its frame 0x18 bytes, then its return */
    stack[(nsp - LO) / 8 + 2] = 0x4242; /* [sp + 0x10]: the caller's rbp, saved */
    stack[(nsp - LO) / 8 + 3] = 0x7777; /* [sp + 0x18]: the return address into the caller */
    struct fx_regs at = {(uintptr_t)STUB + RET_A, FP - DEPTH_A, FP, NULL};
    struct fx_code_range s, nm;
    ck_assert(fx_recover_entry_barrier_step(t, &m, LO, HI, &at, &s, &nm));
    ck_assert_uint_eq(at.pc, 0x7777);
    ck_assert_uint_eq(at.sp, nsp + 0x20);
    ck_assert_uint_eq(at.fp, 0x5150); /* rbp is still the caller's (no mov rbp, rsp) */
    ck_assert_uint_eq(s.begin, (uintptr_t)STUB);
    ck_assert_uint_eq(nm.begin, (uintptr_t)C2);
    /* refused: the return slot holds a blob's first byte (deoptimize()'s handle_wrong_method) */
    stack[(nsp - LO) / 8 + 3] = (uintptr_t)C1;
    struct fx_regs wrong = {(uintptr_t)STUB + RET_A, FP - DEPTH_A, FP, NULL};
    ck_assert(!fx_recover_entry_barrier_step(t, &m, LO, HI, &wrong, &s, &nm));
    /* refused: the runtime call's target in the code table, or not in a mapped file */
    struct fx_regs again = {(uintptr_t)STUB + RET_A, FP - DEPTH_A, FP, NULL};
    fake_mapped = false;
    ck_assert(!fx_recover_entry_barrier_step(t, &m, LO, HI, &again, &s, &nm));
    fake_mapped = true;
    struct fx_code_range big = stub_range();
    big.end = (uintptr_t)STUB + RET_A + 0x183F5497 + 1;
    struct fx_code_table *t2 =
            table(big, nm_range(C1, c1_len, C1_COMPLETE), nm_range(C2, c2_len, C2_COMPLETE));
    t2->n = 1;
    ck_assert(!fx_recover_entry_barrier_step(t2, &m, LO, HI, &again, &s, &nm));
    ck_assert_uint_eq(again.pc, (uintptr_t)STUB + RET_A); /* nothing changed */
}
END_TEST

START_TEST(test_step_c1)
{
    struct fx_code_table *t = table(stub_range(), nm_range(C1, c1_len, C1_COMPLETE),
                                    nm_range(C2, c2_len, C2_COMPLETE));
    struct fx_heap_memo m = {.lookups = 0};
    frame((uintptr_t)C1 + C1_CALL + 5);
    uintptr_t nsp = FP + 24;            /* C1: push rbp; sub rsp, 0x20: return at [sp + 0x28] */
    stack[(nsp - LO) / 8 + 4] = 0x4343; /* the pushed rbp */
    stack[(nsp - LO) / 8 + 5] = 0x8888;
    struct fx_regs at = {(uintptr_t)STUB + RET_B, FP - DEPTH_B, FP, NULL};
    struct fx_code_range s, nm;
    ck_assert(fx_recover_entry_barrier_step(t, &m, LO, HI, &at, &s, &nm));
    ck_assert_uint_eq(at.pc, 0x8888);
    ck_assert_uint_eq(at.sp, nsp + 0x30);
    ck_assert_uint_eq(nm.begin, (uintptr_t)C1);
    /* refused: a return address into neither nmethod (the prologue not reached) */
    frame((uintptr_t)C1 + 0x40);
    struct fx_regs again = {(uintptr_t)STUB + RET_B, FP - DEPTH_B, FP, NULL};
    ck_assert(!fx_recover_entry_barrier_step(t, &m, LO, HI, &again, &s, &nm));
    /* refused: a prologue the decoder does not know (the stack bang's opcode changed) */
    frame((uintptr_t)C1 + C1_CALL + 5);
    C1[0] = 0x90;
    C1[1] = 0x90;
    ck_assert(!fx_recover_entry_barrier_step(t, &m, LO, HI, &again, &s, &nm));
}
END_TEST

static Suite *entrybar_suite(void)
{
    Suite *s = suite_create("recover_entrybar");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_stub_frame);
    tcase_add_test(tc, test_stub_refused);
    tcase_add_test(tc, test_entry_return);
    tcase_add_test(tc, test_step_c2);
    tcase_add_test(tc, test_step_c1);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(entrybar_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
