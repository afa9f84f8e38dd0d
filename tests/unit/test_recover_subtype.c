/* SPDX-License-Identifier: Apache-2.0 */
/* agent/sampling/recover_subtype.c without a JVM (docs/VALIDATION.md 8.5g): the depth of C1's
 * frameless slow_subtype_check stub at each of its instructions, on the stub's real bytes as
 * JDK 17 and Temurin 25 generate them (-XX:+PrintStubCode), the caller's registers from it, and
 * the caller's side (the call to the stub, the two pops of its pushed arguments). Each refusal
 * the rule makes has a case: rbp written, a label reached at two depths, a jump into an
 * instruction or out of the stub, an unknown instruction, a ret off the return address, a pc
 * inside an instruction or in the padding, a stub too long, a stack word out of bounds. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx_recover.h"

/* C1's slow_subtype_check, JDK 17 (17.0.x, Debian) and JDK 25 (Temurin 25). */
static const char jdk17_hex[] =
        "57565150488b742430488b442428488b7e288b0f4883c7084885c0f248af0f85120000004889462048c744"
        "24300100000058595e5fc348c74424300000000058595e5fc30f1f4000";
static const char jdk25_hex[] =
        "57565150488b742430488b4424284883ec20488914244c894424084c894c2410488bbea8000000488bd78a"
        "88b000000083f13f48d3e24885d20f8969000000f3480fb8d24c8b4e28493b04d174638a88b000000048d3"
        "cf480fbae701734a458b014983c1084183f83e0f8f2500000033c9413bd00f4dd1493b04d10f8430000000"
        "480fbae7020f831c00000048d1cf83c201ebdd33d2493b04d10f841100000083c201413bd07cee49c7c001"
        "000000eb034d33c04983f8004c8b4c24104c8b442408488b1424488d64242048c7c7010000000f850e0000"
        "0048c74424300100000058595e5fc348c74424300000000058595e5fc30f1f4000";

static uint8_t stub[1024];
static uint8_t caller[64];
static _Alignas(16) uintptr_t stack[128];
#define LO ((uintptr_t)&stack[0])
#define HI ((uintptr_t)&stack[128])

static struct fx_code_range load(const char *hex)
{
    size_t n = strlen(hex) / 2;
    ck_assert_uint_le(n, sizeof(stub));
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
        stub[i] = (uint8_t)v;
    }
    struct fx_code_range r = {.begin = (uintptr_t)stub,
                              .end = (uintptr_t)stub + n,
                              .verified = FX_OFF_UNKNOWN,
                              .complete = FX_OFF_UNKNOWN,
                              .kind = FX_BLOB_STUB,
                              .flags = FX_RANGE_FRAMELESS};
    return r;
}

static int32_t depth(const struct fx_code_range *r, uintptr_t off)
{
    return fx_recover_stub_depth(r, r->begin + off);
}

START_TEST(test_jdk17_every_instruction)
{
    struct fx_code_range r = load(jdk17_hex);
    /* push x4; the body at 32; the success path's pops; the miss path (the jne's target) */
    static const struct {
        unsigned off;
        int32_t d;
    } want[] = {{0, 0},   {1, 8},   {2, 16},  {3, 24},  {4, 32},  {9, 32},  {14, 32},
                {18, 32}, {20, 32}, {24, 32}, {27, 32}, {30, 32}, {36, 32}, {40, 32},
                {49, 32}, {50, 24}, {51, 16}, {52, 8},  {53, 0},  {54, 32}, {63, 32},
                {64, 24}, {65, 16}, {66, 8},  {67, 0}};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        ck_assert_int_eq(depth(&r, want[i].off), want[i].d);
    ck_assert_int_eq(depth(&r, 5), -1);  /* inside mov rsi, [rsp + 0x30] */
    ck_assert_int_eq(depth(&r, 28), -1); /* inside repne scasq */
    ck_assert_int_eq(depth(&r, 68), -1); /* the padding nop after the last ret */
    ck_assert_int_eq(depth(&r, 72), -1); /* past the stub */
}
END_TEST

START_TEST(test_jdk25_table_lookup_moves_rsp)
{
    struct fx_code_range r = load(jdk25_hex);
    ck_assert_int_eq(depth(&r, 0), 0);
    ck_assert_int_eq(depth(&r, 3), 24);
    ck_assert_int_eq(depth(&r, 14), 32);  /* sub rsp, 0x20 */
    ck_assert_int_eq(depth(&r, 18), 64);  /* its spills */
    ck_assert_int_eq(depth(&r, 63), 64);  /* popcnt */
    ck_assert_int_eq(depth(&r, 146), 64); /* the loop's backward jmp */
    ck_assert_int_eq(depth(&r, 198), 64); /* lea rsp, [rsp + 0x20] */
    ck_assert_int_eq(depth(&r, 203), 32); /* after it */
    ck_assert_int_eq(depth(&r, 228), 8);  /* the success path's last pop */
    ck_assert_int_eq(depth(&r, 229), 0);  /* its ret */
    ck_assert_int_eq(depth(&r, 230), 32); /* the miss path */
    ck_assert_int_eq(depth(&r, 243), 0);
    ck_assert_int_eq(depth(&r, 64), -1); /* inside popcnt */
}
END_TEST

/* One byte changed at off: the whole stub refused. */
static void refused_with(const char *hex, unsigned off, uint8_t byte, const char *why)
{
    struct fx_code_range r = load(hex);
    stub[off] = byte;
    for (unsigned p = 0; p < r.end - r.begin; p++)
        ck_assert_msg(fx_recover_stub_depth(&r, r.begin + p) == -1, "%s: pc +%u", why, p);
}

START_TEST(test_refusals)
{
    refused_with(jdk17_hex, 19, 0x2F, "mov ebp, [rdi]: rbp written");
    refused_with(jdk17_hex, 32, 0x0E, "jne to the pop at depth 24: a label at two depths");
    refused_with(jdk17_hex, 32, 0x13, "jne into an instruction");
    refused_with(jdk17_hex, 32, 0x40, "jne out of the stub");
    refused_with(jdk17_hex, 24, 0xE8, "a call");
    refused_with(jdk17_hex, 52, 0x90, "a pop fewer: a ret off the return address");
    struct fx_code_range r = load(jdk17_hex);
    stub[24] = 0x0F, stub[25] = 0xA2, stub[26] = 0x90; /* cpuid: not known */
    ck_assert_int_eq(fx_recover_stub_depth(&r, r.begin + 40), -1);
    r = load(jdk25_hex);
    stub[198 + 4] = 0x28; /* lea rsp, [rsp + 0x28]: the ret at 229 off the return address */
    ck_assert_int_eq(fx_recover_stub_depth(&r, r.begin + 4), -1);
    r = load(jdk17_hex);
    r.end = r.begin + 600; /* longer than the stub can be */
    ck_assert_int_eq(fx_recover_stub_depth(&r, r.begin), -1);
}
END_TEST

START_TEST(test_caller_registers)
{
    struct fx_code_range r = load(jdk17_hex);
    uintptr_t e = (uintptr_t)&stack[60], fp = 0xF00;
    stack[60] = 0xCA11E4;
    struct fx_regs in = {r.begin + 40, e - 32, fp, NULL}, out;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_FRAMELESS);
    ck_assert_uint_eq(out.pc, 0xCA11E4);
    ck_assert_uint_eq(out.sp, e + 8);
    ck_assert_uint_eq(out.fp, fp);
    in = (struct fx_regs){r.begin + 2, e - 16, fp, NULL};
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_FRAMELESS);
    ck_assert_uint_eq(out.pc, 0xCA11E4);
    in = (struct fx_regs){r.begin + 5, e - 32, fp, NULL}; /* inside an instruction */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_DECODE);
    in = (struct fx_regs){r.begin + 40, HI - 16, fp, NULL}; /* the slot past the stack */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_STACK);
    r.flags = 0; /* without the flag: another stub, named */
    in = (struct fx_regs){r.begin + 40, e - 32, fp, NULL};
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_STUB);
}
END_TEST

/* A C1 caller: call rel32 to `to` at caller[8], then the bytes `after` (its pops). */
static struct fx_code_range c1_caller(uintptr_t to, const uint8_t *after, size_t n)
{
    memset(caller, 0x90, sizeof(caller));
    caller[8] = 0xE8;
    int32_t rel = (int32_t)((intptr_t)to - (intptr_t)(uintptr_t)&caller[13]);
    memcpy(&caller[9], &rel, sizeof(rel));
    memcpy(&caller[13], after, n);
    struct fx_code_range c = {.begin = (uintptr_t)caller,
                              .end = (uintptr_t)caller + sizeof(caller),
                              .kind = FX_BLOB_NMETHOD};
    return c;
}

static bool pushed(uintptr_t to, const uint8_t *after, size_t n, uintptr_t *sp)
{
    struct fx_code_range c = c1_caller(to, after, n);
    struct fx_regs at = {(uintptr_t)&caller[13], 0x7000, 0xF00, NULL};
    bool ok = fx_recover_pushed_return(&c, (uintptr_t)stub, &at);
    *sp = at.sp;
    return ok;
}

START_TEST(test_pushed_return)
{
    uintptr_t sp;
    /* C1's type check: pop rsi; pop rsi; cmp esi, 0; je (emit_typecheck_helper) */
    static const uint8_t typecheck[] = {0x5E, 0x5E, 0x83, 0xFE, 0x00, 0x74, 0x10};
    /* its store check: pop r9; pop rbx; test ebx, ebx; je rel32 (emit_opTypeCheck) */
    static const uint8_t store[] = {0x41, 0x59, 0x5B, 0x85, 0xDB, 0x0F, 0x84, 1, 0, 0, 0};
    /* r8-r15: pop r10; pop r10; test r10d, r10d; je; and cmp r11d, 0; je */
    static const uint8_t wide_test[] = {0x41, 0x5A, 0x41, 0x5A, 0x45, 0x85, 0xD2, 0x74, 0x10};
    static const uint8_t wide_cmp[] = {0x41, 0x5B, 0x41, 0x5B, 0x41, 0x83, 0xFB, 0x00, 0x74, 1};
    ck_assert(pushed((uintptr_t)stub, typecheck, sizeof(typecheck), &sp));
    ck_assert_uint_eq(sp, 0x7000 + 16);
    ck_assert(pushed((uintptr_t)stub, store, sizeof(store), &sp));
    ck_assert_uint_eq(sp, 0x7000 + 16);
    ck_assert(pushed((uintptr_t)stub, wide_test, sizeof(wide_test), &sp));
    ck_assert(pushed((uintptr_t)stub, wide_cmp, sizeof(wide_cmp), &sp));
    ck_assert(!pushed((uintptr_t)stub + 1, typecheck, sizeof(typecheck), &sp)); /* elsewhere */
    ck_assert_uint_eq(sp, 0x7000);
    /* refused: C1's arraycopy check (pop dst; pop src; test src, src; jne cont: two more words
     * pushed before, popped at cont, so the frame base is not 16 bytes up) */
    static const uint8_t arraycopy[] = {0x5F, 0x5E, 0x85, 0xF6, 0x75, 0x10};
    ck_assert(!pushed((uintptr_t)stub, arraycopy, sizeof(arraycopy), &sp));
    ck_assert_uint_eq(sp, 0x7000);
    static const uint8_t one[] = {0x5E, 0x85, 0xF6, 0x74, 0x10};                 /* one pop */
    static const uint8_t into_rsp[] = {0x5E, 0x5C, 0x85, 0xE4, 0x74, 0x10};      /* pop rsp */
    static const uint8_t no_test[] = {0x5E, 0x5E, 0x74, 0x10, 0x90, 0x90};       /* je alone */
    static const uint8_t mixed[] = {0x5E, 0x5E, 0x85, 0xF7, 0x74, 0x10};         /* test esi, edi */
    static const uint8_t cmp_one[] = {0x5E, 0x5E, 0x83, 0xFE, 0x01, 0x74, 0x10}; /* cmp esi, 1 */
    static const uint8_t wide64[] = {0x5E, 0x5E, 0x48, 0x85, 0xF6, 0x74, 0x10};  /* test rsi, rsi */
    ck_assert(!pushed((uintptr_t)stub, one, sizeof(one), &sp));
    ck_assert(!pushed((uintptr_t)stub, into_rsp, sizeof(into_rsp), &sp));
    ck_assert(!pushed((uintptr_t)stub, no_test, sizeof(no_test), &sp));
    ck_assert(!pushed((uintptr_t)stub, mixed, sizeof(mixed), &sp));
    ck_assert(!pushed((uintptr_t)stub, cmp_one, sizeof(cmp_one), &sp));
    ck_assert(!pushed((uintptr_t)stub, wide64, sizeof(wide64), &sp));
}
END_TEST

static Suite *subtype_suite(void)
{
    Suite *s = suite_create("recover_subtype");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_jdk17_every_instruction);
    tcase_add_test(tc, test_jdk25_table_lookup_moves_rsp);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_caller_registers);
    tcase_add_test(tc, test_pushed_return);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(subtype_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
