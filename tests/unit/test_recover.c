/* SPDX-License-Identifier: Apache-2.0 */
/* agent/fx_recover.h without a JVM: the code-range lookup, the caller's registers for a pc in a
 * dispatch stub, a prologue (the shapes of C2's verified_entry, C1's build_frame and the nmethod
 * entry barrier) and an epilogue, on synthetic code bytes and a synthetic stack, and the
 * ucontext patch. Each rule must refuse what it cannot prove: a pc inside an instruction, an
 * unknown instruction, a stack word outside the bounds, code bytes past the range. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fx_recover.h"

static uint8_t code[256];
static uintptr_t stack[64]; /* the thread's stack: [stack, stack + 64) */
#define LO ((uintptr_t)&stack[0])
#define HI ((uintptr_t)&stack[64])

static struct fx_code_range nmethod(size_t len, uint32_t verified, uint32_t complete)
{
    struct fx_code_range r = {.begin = (uintptr_t)code,
                              .end = (uintptr_t)code + len,
                              .blob = 1,
                              .verified = verified,
                              .complete = complete,
                              .kind = FX_BLOB_NMETHOD};
    return r;
}

static size_t put(size_t at, const uint8_t *b, size_t n)
{
    memcpy(code + at, b, n);
    return at + n;
}

START_TEST(test_find_hits_inside_and_misses_between)
{
    /* A table as codemap.c allocates one: the header, then its ranges (flexible array). */
    static _Alignas(struct fx_code_table) unsigned char
            mem[sizeof(struct fx_code_table) + 3 * sizeof(struct fx_code_range)];
    struct fx_code_table *t = (struct fx_code_table *)mem;
    const struct fx_code_range rs[3] = {
            {.begin = 100, .end = 200}, {.begin = 200, .end = 250}, {.begin = 300, .end = 301}};
    t->n = 3;
    memcpy(t->r, rs, sizeof(rs));
    ck_assert_ptr_null(fx_recover_find(t, 99));
    ck_assert_ptr_eq(fx_recover_find(t, 100), &t->r[0]);
    ck_assert_ptr_eq(fx_recover_find(t, 199), &t->r[0]);
    ck_assert_ptr_eq(fx_recover_find(t, 200), &t->r[1]);
    ck_assert_ptr_null(fx_recover_find(t, 250));
    ck_assert_ptr_null(fx_recover_find(t, 299));
    ck_assert_ptr_eq(fx_recover_find(t, 300), &t->r[2]);
    ck_assert_ptr_null(fx_recover_find(t, 301));
    ck_assert_ptr_null(fx_recover_find(NULL, 150));
}
END_TEST

START_TEST(test_dispatch_stub_return_address_at_sp)
{
    struct fx_code_range r = {.begin = 0x1000, .end = 0x1080, .kind = FX_BLOB_DISPATCH};
    stack[10] = 0xCA11E4;
    struct fx_regs in = {.pc = 0x1010, .sp = (uintptr_t)&stack[10], .fp = 0xF00}, out;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_DISPATCH);
    ck_assert_uint_eq(out.pc, 0xCA11E4);
    ck_assert_uint_eq(out.sp, (uintptr_t)&stack[11]);
    ck_assert_uint_eq(out.fp, 0xF00);
    /* the return address would be the last word's neighbour: outside the stack */
    in.sp = HI;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_STACK);
    in.sp = (uintptr_t)&stack[10] + 4; /* misaligned */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_STACK);
    in.sp = (uintptr_t)&stack[10];
    ck_assert_int_eq(fx_recover_caller(&r, &in, 0, 0, false, &out), FX_REC_STACK); /* unknown */
    r.kind = FX_BLOB_STUB;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_STUB);
}
END_TEST

/* C2 with a stack bang (C2_MacroAssembler::verified_entry): bang, push rbp, sub rsp, then the
 * entry barrier (cmp [r15+d8], imm32; jne slow); frame complete after it. */
START_TEST(test_prologue_c2_bang_push_sub_barrier)
{
    static const uint8_t uep[] = {0x90, 0x90, 0x90, 0x90};
    static const uint8_t bang[] = {0x89, 0x84, 0x24, 0x00, 0xA0, 0xFE, 0xFF};
    static const uint8_t push[] = {0x55};
    static const uint8_t sub[] = {0x48, 0x83, 0xEC, 0x20};
    static const uint8_t barrier[] = {0x41, 0x81, 0x7F, 0x20, 0, 0, 0, 0};
    static const uint8_t jne[] = {0x0F, 0x85, 0x10, 0, 0, 0};
    static const uint8_t body[] = {0xCC, 0xCC};
    size_t at = put(0, uep, sizeof(uep));
    size_t vep = at, a_push, a_sub, a_bar, a_jne;
    at = put(at, bang, sizeof(bang));
    a_push = at;
    at = put(at, push, sizeof(push));
    a_sub = at;
    at = put(at, sub, sizeof(sub));
    a_bar = at;
    at = put(at, barrier, sizeof(barrier));
    a_jne = at;
    at = put(at, jne, sizeof(jne));
    size_t complete = at;
    at = put(at, body, sizeof(body));
    struct fx_code_range r = nmethod(at, (uint32_t)vep, (uint32_t)complete);
    uintptr_t base = (uintptr_t)code;
    stack[20] = 0xCA11E4; /* entry sp: return address */
    stack[19] = 0x5AFE0;  /* pushed rbp */
    struct fx_regs in = {.sp = (uintptr_t)&stack[20], .fp = 0xF00}, out;
    size_t at_entry[] = {vep, a_push};
    for (size_t i = 0; i < 2; i++) {
        in.pc = base + at_entry[i];
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_PROLOGUE);
        ck_assert_uint_eq(out.pc, 0xCA11E4);
        ck_assert_uint_eq(out.sp, (uintptr_t)&stack[21]);
        ck_assert_uint_eq(out.fp, 0xF00);
    }
    in.pc = base + a_sub; /* after push rbp: ret at sp + 8 */
    in.sp = (uintptr_t)&stack[19];
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_PROLOGUE);
    ck_assert_uint_eq(out.pc, 0xCA11E4);
    ck_assert_uint_eq(out.sp, (uintptr_t)&stack[21]);
    in.sp = (uintptr_t)&stack[15]; /* after sub rsp, 0x20: ret at sp + 0x28 */
    size_t in_frame[] = {a_bar, a_jne};
    for (size_t i = 0; i < 2; i++) {
        in.pc = base + in_frame[i];
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_PROLOGUE);
        ck_assert_uint_eq(out.pc, 0xCA11E4);
        ck_assert_uint_eq(out.sp, (uintptr_t)&stack[21]);
        ck_assert_uint_eq(out.fp, 0xF00); /* rbp still the caller's (no PreserveFramePointer) */
    }
    in.pc = base + a_bar + 2; /* inside an instruction */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
    in.pc = base + complete; /* the body: no rule */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_BODY);
    in.pc = base + a_jne; /* the blob is not the compilation the range was made from */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_LAYOUT);
    r.complete = FX_OFF_UNKNOWN;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_LAYOUT);
}
END_TEST

/* C2 without a bang: sub rsp, imm32; mov [rsp+d8], rbp (the frame's rbp slot). */
START_TEST(test_prologue_c2_no_bang_and_unknown_instruction)
{
    static const uint8_t sub[] = {0x48, 0x81, 0xEC, 0x18, 0, 0, 0};
    static const uint8_t mov[] = {0x48, 0x89, 0x6C, 0x24, 0x10};
    static const uint8_t odd[] = {0x48, 0x8B, 0x05, 0, 0, 0, 0}; /* mov rax, [rip] */
    size_t at = put(0, sub, sizeof(sub));
    size_t a_mov = at;
    at = put(at, mov, sizeof(mov));
    size_t a_odd = at;
    at = put(at, odd, sizeof(odd));
    size_t a_after = at;
    at = put(at, odd, sizeof(odd));
    struct fx_code_range r = nmethod(at, 0, (uint32_t)at);
    stack[30] = 0xCA11E4;
    struct fx_regs in = {.pc = (uintptr_t)code + a_mov, .sp = (uintptr_t)&stack[27], .fp = 7}, out;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_PROLOGUE);
    ck_assert_uint_eq(out.pc, 0xCA11E4);
    ck_assert_uint_eq(out.sp, (uintptr_t)&stack[31]);
    ck_assert_uint_eq(out.fp, 7);
    in.pc = (uintptr_t)code + a_odd; /* right at the unknown instruction: still provable */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_PROLOGUE);
    in.pc = (uintptr_t)code + a_after; /* past it: not */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
}
END_TEST

/* PreserveFramePointer: push rbp; mov rbp, rsp; sub rsp: the caller's rbp is the pushed one. */
START_TEST(test_prologue_preserve_frame_pointer_reads_saved_rbp)
{
    static const uint8_t seq[] = {0x55, 0x48, 0x8B, 0xEC, 0x48, 0x83, 0xEC, 0x10, 0x90};
    size_t at = put(0, seq, sizeof(seq));
    struct fx_code_range r = nmethod(at, 0, (uint32_t)at);
    stack[40] = 0xCA11E4;
    stack[39] = 0x5AFE0;
    struct fx_regs in = {.pc = (uintptr_t)code + 8, .sp = (uintptr_t)&stack[37], .fp = 99}, out;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_PROLOGUE);
    ck_assert_uint_eq(out.pc, 0xCA11E4);
    ck_assert_uint_eq(out.sp, (uintptr_t)&stack[41]);
    ck_assert_uint_eq(out.fp, 0x5AFE0);
}
END_TEST

/* MachEpilogNode / C1 remove_frame: add rsp; pop rbp; the return poll; ret. */
START_TEST(test_epilogue_each_point_on_the_path_to_ret)
{
    static const uint8_t add[] = {0x48, 0x83, 0xC4, 0x10};
    static const uint8_t pop[] = {0x5D};
    static const uint8_t vzu[] = {0xC5, 0xF8, 0x77};
    static const uint8_t poll[] = {0x49, 0x3B, 0x67, 0x28};
    static const uint8_t ja[] = {0x0F, 0x87, 0x40, 0, 0, 0};
    static const uint8_t nop5[] = {0x0F, 0x1F, 0x44, 0x00, 0x00};
    static const uint8_t ret[] = {0xC3};
    static const uint8_t prologue[] = {0x55, 0x48, 0x83, 0xEC, 0x10};
    size_t at = put(0, prologue, sizeof(prologue));
    size_t complete = at;
    size_t a_add = at;
    at = put(at, add, sizeof(add));
    size_t a_pop = at;
    at = put(at, pop, sizeof(pop));
    size_t a_vzu = at;
    at = put(at, vzu, sizeof(vzu));
    size_t a_poll = at;
    at = put(at, poll, sizeof(poll));
    size_t a_ja = at;
    at = put(at, ja, sizeof(ja));
    at = put(at, nop5, sizeof(nop5));
    size_t a_ret = at;
    at = put(at, ret, sizeof(ret));
    struct fx_code_range r = nmethod(at, 0, (uint32_t)complete);
    uintptr_t b = (uintptr_t)code;
    stack[50] = 0xCA11E4; /* return address */
    stack[49] = 0x5AFE0;  /* saved rbp */
    struct fx_regs in = {.pc = b + a_add, .sp = (uintptr_t)&stack[47], .fp = 1}, out;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_EPILOGUE);
    ck_assert_uint_eq(out.pc, 0xCA11E4);
    ck_assert_uint_eq(out.sp, (uintptr_t)&stack[51]);
    ck_assert_uint_eq(out.fp, 0x5AFE0);
    in.pc = b + a_pop;
    in.sp = (uintptr_t)&stack[49];
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_EPILOGUE);
    ck_assert_uint_eq(out.fp, 0x5AFE0);
    ck_assert_uint_eq(out.sp, (uintptr_t)&stack[51]);
    size_t after_pop[] = {a_vzu, a_poll, a_ja, a_ret};
    for (size_t i = 0; i < 4; i++) {
        in.pc = b + after_pop[i];
        in.sp = (uintptr_t)&stack[50];
        in.fp = 0x5AFE0;
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_EPILOGUE);
        ck_assert_uint_eq(out.pc, 0xCA11E4);
        ck_assert_uint_eq(out.sp, (uintptr_t)&stack[51]);
        ck_assert_uint_eq(out.fp, 0x5AFE0);
    }
    /* a range that ends before the ret: no byte past the range is read, nothing is claimed */
    r.end = b + a_ret;
    in.pc = b + a_poll;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_BODY);
    r.end = b + at;
    /* the return address outside the stack bounds */
    in.pc = b + a_ret;
    in.sp = HI - 4;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_STACK);
}
END_TEST

/* The inline cache check before the verified entry (docs/VALIDATION.md 8.5): JDK 21+
 * MacroAssembler::ic_check with compressed class pointers (alignment nops, movl r10d, [rsi+8];
 * cmp r10d, [rax+8]; jne ic_miss) and JDK 17's MachUEPNode (movl r10d, [rsi+8]; shl r10, 3;
 * movabs r11, base; add r10, r11; cmp rax, r10; jne ic_miss; nops). At every boundary the
 * return address is at sp; inside an instruction, after an rsp write or on an unknown
 * instruction it is refused. */
START_TEST(test_iccheck_jdk25_and_jdk17_shapes)
{
    static const uint8_t jdk25[] = {0x66, 0x90, 0x44, 0x8B, 0x56, 0x08, 0x44, 0x3B,
                                    0x50, 0x08, 0x0F, 0x85, 0x10, 0x20, 0x30, 0x40};
    static const size_t b25[] = {0, 2, 6, 10, 16};
    static const uint8_t jdk17[] = {
            0x44, 0x8B, 0x56, 0x08, 0x49, 0xC1, 0xE2, 0x03, 0x49, 0xBB, 1, 2, 3, 4, 5,    6,
            7,    8,    0x4D, 0x03, 0xD3, 0x49, 0x3B, 0xC2, 0x0F, 0x85, 1, 2, 3, 4, 0x66, 0x90};
    static const size_t b17[] = {0, 4, 8, 18, 21, 24, 30, 32};
    static const uint8_t body[] = {0x55, 0xCC, 0xCC};
    struct fx_regs in = {.sp = (uintptr_t)&stack[40], .fp = 0xF00}, out;
    stack[40] = 0xCA11E4;
    struct {
        const uint8_t *b;
        size_t n;
        const size_t *at;
        size_t nat;
    } shapes[] = {{jdk25, sizeof(jdk25), b25, 5}, {jdk17, sizeof(jdk17), b17, 8}};
    for (size_t s = 0; s < 2; s++) {
        memset(code, 0xCC, sizeof(code));
        size_t vep = put(0, shapes[s].b, shapes[s].n);
        size_t at = put(vep, body, sizeof(body));
        struct fx_code_range r = nmethod(at, (uint32_t)vep, (uint32_t)vep + 1);
        for (size_t i = 0; i + 1 < shapes[s].nat; i++) { /* the last is the verified entry */
            in.pc = (uintptr_t)code + shapes[s].at[i];
            ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_ICCHECK);
            ck_assert_uint_eq(out.pc, 0xCA11E4);
            ck_assert_uint_eq(out.sp, (uintptr_t)&stack[41]);
            ck_assert_uint_eq(out.fp, 0xF00);
        }
        in.pc = (uintptr_t)code + shapes[s].at[1] + 1; /* inside an instruction */
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
        in.pc = (uintptr_t)code + shapes[s].at[1];
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_LAYOUT);
        in.sp = HI - 4;
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_STACK);
        in.sp = (uintptr_t)&stack[40];
    }
    /* a write to rsp (mov rsp, [rsi+8]), a push and a call are refused */
    static const uint8_t bad[][4] = {
            {0x48, 0x8B, 0x66, 0x08}, {0x50, 0x90, 0x90, 0x90}, {0xE8, 0, 0, 0}};
    for (size_t k = 0; k < 3; k++) {
        memset(code, 0x90, 32);
        put(0, bad[k], 4);
        struct fx_code_range r = nmethod(32, 24, 25);
        in.pc = (uintptr_t)code + 8;
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
    }
}
END_TEST

START_TEST(test_nop_forms)
{
    static const uint8_t n[][9] = {
            {1, 0x90},
            {2, 0x66, 0x90},
            {4, 0x0F, 0x1F, 0x40, 0x00},
            {5, 0x0F, 0x1F, 0x44, 0x00, 0x00},
            {6, 0x66, 0x0F, 0x1F, 0x44, 0x00, 0x00},
            {7, 0x0F, 0x1F, 0x80, 0, 0, 0, 0},
            {8, 0x0F, 0x1F, 0x84, 0x00, 0, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++) {
        memset(code, 0xCC, sizeof(code));
        memcpy(code, n[i] + 1, n[i][0]);
        struct fx_code_range r = nmethod(sizeof(code), 0, 64);
        ck_assert_uint_eq(fx_recover_nop_len(&r, (uintptr_t)code), n[i][0]);
        r.end = r.begin + n[i][0] - 1; /* cut: not a nop inside the range */
        ck_assert_uint_eq(fx_recover_nop_len(&r, (uintptr_t)code), 0);
    }
    code[0] = 0x0F, code[1] = 0x1F, code[2] = 0x48; /* 0F 1F /1: not a nop */
    struct fx_code_range r = nmethod(sizeof(code), 0, 64);
    ck_assert_uint_eq(fx_recover_nop_len(&r, (uintptr_t)code), 0);
}
END_TEST

START_TEST(test_patch_sets_the_three_registers_only)
{
    ucontext_t from, to;
    memset(&from, 0x5A, sizeof(from));
    struct fx_regs r = {.pc = 0x1234, .sp = 0x5678, .fp = 0x9ABC};
    fx_recover_patch(&to, &from, &r);
    ck_assert_uint_eq((uintptr_t)to.uc_mcontext.gregs[REG_RIP], 0x1234 - 1); /* in the call */
    ck_assert_uint_eq((uintptr_t)to.uc_mcontext.gregs[REG_RSP], 0x5678);
    ck_assert_uint_eq((uintptr_t)to.uc_mcontext.gregs[REG_RBP], 0x9ABC);
    ck_assert_int_eq((int)to.uc_mcontext.gregs[REG_RAX], (int)from.uc_mcontext.gregs[REG_RAX]);
    ck_assert_uint_eq((uintptr_t)from.uc_mcontext.gregs[REG_RIP], 0x5A5A5A5A5A5A5A5Aull);
}
END_TEST

static Suite *recover_suite(void)
{
    Suite *s = suite_create("recover");
    TCase *tc = tcase_create("rules");
    tcase_add_test(tc, test_find_hits_inside_and_misses_between);
    tcase_add_test(tc, test_dispatch_stub_return_address_at_sp);
    tcase_add_test(tc, test_prologue_c2_bang_push_sub_barrier);
    tcase_add_test(tc, test_prologue_c2_no_bang_and_unknown_instruction);
    tcase_add_test(tc, test_prologue_preserve_frame_pointer_reads_saved_rbp);
    tcase_add_test(tc, test_epilogue_each_point_on_the_path_to_ret);
    tcase_add_test(tc, test_iccheck_jdk25_and_jdk17_shapes);
    tcase_add_test(tc, test_nop_forms);
    tcase_add_test(tc, test_patch_sets_the_three_registers_only);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(recover_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
