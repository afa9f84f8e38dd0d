/* SPDX-License-Identifier: Apache-2.0 */
/* agent/fx_recover.h without a JVM: the code-range lookup, the caller's registers for a pc in a
 * dispatch stub, a prologue (the shapes of C2's verified_entry, C1's build_frame and the nmethod
 * entry barrier) and an epilogue, on synthetic code bytes and a synthetic stack, and the
 * ucontext patch, and the I2C/C2I adapter decoder on two real AdapterBlobs. Each rule must refuse
 * what it cannot prove: a pc inside an instruction, an unknown instruction, a stack word outside
 * the bounds, code bytes past the range. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx_recover.h"
#include "recover_x86.h"

static uint8_t code[256];
static _Alignas(16) uintptr_t stack[128]; /* the thread's stack: [stack, stack + 128) */
#define LO ((uintptr_t)&stack[0])
#define HI ((uintptr_t)&stack[128])

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
    /* another stub: named, not recovered, unless it is rbp-framed (test_stub_frame) */
    memset(code, 0x90, 16);
    r = (struct fx_code_range){
            .begin = (uintptr_t)code, .end = (uintptr_t)code + 16, .kind = FX_BLOB_STUB};
    in.pc = r.begin + 4;
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

/* Two real AdapterBlobs, as HotSpot generated them on this project's VM for the signature (int)
 * of an instance method, dumped by a JVMTI DynamicCodeGenerated callback (docs/VALIDATION.md
 * 8.5b): OpenJDK 17.0.15 (i2c 0x00, c2i unverified 0x24, c2i 0x59, patch_callers_callsite's
 * slow path 0xa4-0x186, skip_fixup 0x187) and Temurin 25.0.3 (i2c 0x00, c2i unverified 0x31,
 * c2i 0x52, the G1 c2i entry barrier 0x8d-0x395 with its out-of-line slow path at 0xfb,
 * skip_fixup 0x484). Absolute targets of calls and jumps out of the blob are as dumped. */
static const char adapter17_hex[] =
        "488b04244c8bdc4883e4f050498bc34c8b5b40488b700849899fe0020000488bc341ffe38b5e0849ba000000"
        "7bba7f00004903da483b5808488b180f8405000000e93aabffff48817b48000000000f8433010000e927abff"
        "ff448b532841f7c2080000000f842c0000004c8b53084d8b52084d8b52184180ba3b010000040f8412000000"
        "4d3bba400100000f8405000000e9eaa0ffff48817b48000000000f84e30000004c8bec488b04244883e4f09c"
        "4883ec084881ec80000000488944247848894c2470488954246848895c246048896c2450488974244848897c"
        "24404c894424384c894c24304c895424284c895c24204c896424184c896c24104c897424084c893c244881ec"
        "800a0000480fae0424c5f877488bfb488bf0e851757517c5f877480fae0c244881c4800a00004c8b3c244c8b"
        "7424084c8b6c24104c8b6424184c8b5c24204c8b5424284c8b4c24304c8b442438488b7c2440488b74244848"
        "8b6c2450488b5c2460488b542468488b4c2470488b4424784881c4800000004883c4089d498be5584c8bec48"
        "83ec10488904244889742408488b4b38ffe1f4f4";
static const char adapter25_hex[] =
        "4c8bdc584883e4f050498bc34c8b5b40488b7008493ba72006000076074989a72006000049899fd004000048"
        "8bc341ffe3448b5608443b50080f8541c0ffff488b1848837b48000f8437040000e92ec0ffff440fb7532c41"
        "f6c2080f842c0000004c8b53084d8b52084d8b52184180ba30010000040f84120000004d3bba380100000f84"
        "05000000e9734cfbff4883fb000f84fa0200004c8b53084d8b52084d8b52184d8b929800000041837a24000f"
        "8fe10200004d8b124983fa000f84c50200004d8b1241807f48000f84b70200004983fa000f84ad0200004d8b"
        "5f384d85db0f84140000004983eb084d895f384d035f404d8913e98c0200004881ec50010000488904244889"
        "4c24084889542410488974241848897c24204c894424284c894c24304c895424384c895c2440c5fb11442450"
        "c5fb114c2458c5fb11542460c5fb115c2468c5fb11642470c5fb116c2478c5fb11b42480000000c5fb11bc24"
        "88000000c57b11842490000000c57b118c2498000000c57b119424a0000000c57b119c24a8000000c57b11a4"
        "24b0000000c57b11ac24b8000000c57b11b424c0000000c57b11bc24c800000062e1ff081144241a62e1ff08"
        "114c241b62e1ff081154241c62e1ff08115c241d62e1ff081164241e62e1ff08116c241f62e1ff0811742420"
        "62e1ff08117c24216261ff08114424226261ff08114c24236261ff08115424246261ff08115c24256261ff08"
        "116424266261ff08116c24276261ff08117424286261ff08117c2429498bf7498bfa40f6c40f0f8412000000"
        "4883ec08e88b09d2184883c408e905000000e87d09d2186261ff08107c24296261ff08107424286261ff0810"
        "6c24276261ff08106424266261ff08105c24256261ff08105424246261ff08104c24236261ff081044242262"
        "e1ff08107c242162e1ff081074242062e1ff08106c241f62e1ff081064241e62e1ff08105c241d62e1ff0810"
        "54241c62e1ff08104c241b62e1ff081044241ac57b10bc24c8000000c57b10b424c0000000c57b10ac24b800"
        "0000c57b10a424b0000000c57b109c24a8000000c57b109424a0000000c57b108c2498000000c57b10842490"
        "000000c5fb10bc2488000000c5fb10b42480000000c5fb106c2478c5fb10642470c5fb105c2468c5fb105424"
        "60c5fb104c2458c5fb104424504c8b5c24404c8b5424384c8b4c24304c8b442428488b7c2420488b74241848"
        "8b542410488b4c2408488b04244881c450010000c5f8774983fa000f8505000000e96a49fbff48837b48000f"
        "84e30000004c8bec488b04244883e4f09c4883ec084881ec80000000488944247848894c2470488954246848"
        "895c246048896c2450488974244848897c24404c894424384c894c24304c895424284c895c24204c89642418"
        "4c896c24104c897424084c893c244881ec800a0000480fae0424c5f877488bfb488bf0e8a46d3c19c5f87748"
        "0fae0c244881c4800a00004c8b3c244c8b7424084c8b6c24104c8b6424184c8b5c24204c8b5424284c8b4c24"
        "304c8b442438488b7c2440488b742448488b6c2450488b5c2460488b542468488b4c2470488b4424784881c4"
        "800000004883c4089d498be54c8d6c2408584883ec10504889742408488b4b38ffe1f4f4f4f4f4f4";

static uint8_t adapter[1280];

static struct fx_code_range adapter_range(const char *hex)
{
    size_t n = strlen(hex) / 2;
    ck_assert_uint_le(n, sizeof(adapter));
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
        adapter[i] = (uint8_t)v;
    }
    struct fx_code_range r = {.begin = (uintptr_t)adapter,
                              .end = (uintptr_t)adapter + n,
                              .verified = FX_OFF_UNKNOWN,
                              .complete = FX_OFF_UNKNOWN,
                              .kind = FX_BLOB_ADAPTER};
    return r;
}

/* One point of an adapter: the registers as the code has them there (E: the entry's return
 * address slot, stack[e]), and what the rule must find. */
struct adapter_point {
    unsigned pc, sp;   /* pc offset in the blob; sp as a stack index relative to e (in words) */
    int rax, r11, r13; /* relative to e in words, or NO_REG */
    bool rax_ret;      /* rax holds the return address */
    int expect;        /* FX_REC_ADAPTER or the failure */
};
#define NO_REG 999

static void check_adapter(const struct fx_code_range *r, const struct adapter_point *pts, size_t n,
                          unsigned e)
{
    for (size_t i = 0; i < n; i++) {
        const struct adapter_point *t = &pts[i];
        uintptr_t gpr[16] = {0}, base = (uintptr_t)&stack[e];
        memset(stack, 0, sizeof(stack));
        stack[e] = 0xCA11E4;
        if (t->rax != NO_REG)
            gpr[0] = base + (uintptr_t)(intptr_t)(t->rax * 8);
        if (t->rax_ret)
            gpr[0] = 0xCA11E4;
        if (t->r11 != NO_REG)
            gpr[11] = base + (uintptr_t)(intptr_t)(t->r11 * 8);
        if (t->r13 != NO_REG)
            gpr[13] = base + (uintptr_t)(intptr_t)(t->r13 * 8);
        if (t->pc >= 0x198 && r->end - r->begin == 416)
            stack[e] = 0x5E7; /* JDK 17: mov [rsp + 8], rsi has overwritten the slot */
        struct fx_regs in = {.pc = r->begin + t->pc,
                             .sp = base + (uintptr_t)(intptr_t)((int)t->sp * 8),
                             .fp = 0xF00,
                             .gpr = gpr},
                       out = {0};
        gpr[4] = in.sp;
        int rc = fx_recover_caller(r, &in, LO, HI, false, &out);
        ck_assert_msg(rc == t->expect, "pc +0x%x: %d, want %d", t->pc, rc, t->expect);
        if (rc == FX_REC_ADAPTER) {
            ck_assert_msg(out.pc == 0xCA11E4, "pc +0x%x: return address %#lx", t->pc,
                          (unsigned long)out.pc);
            ck_assert_msg(out.sp == base + 8, "pc +0x%x: caller sp", t->pc);
            ck_assert_uint_eq(out.fp, 0xF00);
        }
    }
}

/* sp and registers relative to E in words: -1 = E - 8, "A" = the and-ed sp (E is 8 mod 16 in
 * these tests, so and rsp, -16 lowers it by one word). */
START_TEST(test_adapter_jdk17)
{
    struct fx_code_range r = adapter_range(adapter17_hex);
    unsigned e = 105; /* &stack[105] is 8 mod 16 */
    ck_assert_uint_eq(((uintptr_t)&stack[e]) & 15, 8);
    const struct adapter_point pts[] = {
            /* i2c: mov rax,[rsp]; mov r11,rsp; and rsp,-16; push rax; mov rax,r11; ... */
            {0x00, 0, NO_REG, NO_REG, NO_REG, false, FX_REC_ADAPTER},
            {0x04, 0, NO_REG, NO_REG, NO_REG, true, FX_REC_ADAPTER},
            {0x07, 0, NO_REG, 0, NO_REG, true, FX_REC_ADAPTER},
            {0x0b, -1, NO_REG, 0, NO_REG, true, FX_REC_ADAPTER},
            {0x0c, -2, NO_REG, 0, NO_REG, true, FX_REC_ADAPTER},
            {0x0f, -2, 0, 0, NO_REG, false, FX_REC_ADAPTER},
            {0x17, -2, 0, NO_REG, NO_REG, false, FX_REC_ADAPTER},
            {0x1e, -2, 0, NO_REG, NO_REG, false, FX_REC_ADAPTER},
            {0x21, -2, NO_REG, NO_REG, NO_REG, false, FX_REC_BODY},  /* after mov rax, rbx */
            {0x02, 0, NO_REG, NO_REG, NO_REG, false, FX_REC_DECODE}, /* inside an instruction */
            /* c2i unverified entry, its check, c2i entry, the clinit barrier */
            {0x24, 0, NO_REG, NO_REG, NO_REG, false, FX_REC_ADAPTER},
            {0x38, 0, NO_REG, NO_REG, NO_REG, false, FX_REC_ADAPTER},
            {0x46, 0, NO_REG, NO_REG, NO_REG, false, FX_REC_ADAPTER},
            {0x59, 0, NO_REG, NO_REG, NO_REG, false, FX_REC_ADAPTER},
            {0x84, 0, NO_REG, NO_REG, NO_REG, false, FX_REC_ADAPTER},
            {0x96, 0, NO_REG, NO_REG, NO_REG, false, FX_REC_ADAPTER},
            /* patch_callers_callsite's slow path: rsp moves, r13 keeps E */
            {0xa7, 0, NO_REG, NO_REG, 0, false, FX_REC_ADAPTER},
            {0xb0, -3, NO_REG, NO_REG, 0, true, FX_REC_ADAPTER},
            {0x111, -60, NO_REG, NO_REG, 0, false, FX_REC_DECODE}, /* past fxsave: refused */
            /* skip_fixup, reached by the taken je: pop rax; mov r13,rsp; sub rsp,16; stores */
            {0x187, 0, NO_REG, NO_REG, NO_REG, false, FX_REC_ADAPTER},
            {0x188, 1, NO_REG, NO_REG, NO_REG, true, FX_REC_ADAPTER},
            {0x18b, 1, NO_REG, NO_REG, 1, true, FX_REC_ADAPTER},
            {0x18f, -1, NO_REG, NO_REG, 1, true, FX_REC_ADAPTER},
            {0x193, -1, NO_REG, NO_REG, 1, true, FX_REC_ADAPTER},
            {0x198, -1, NO_REG, NO_REG, 1, true, FX_REC_ADAPTER}, /* slot overwritten: rax */
            {0x19c, -1, NO_REG, NO_REG, 1, true, FX_REC_ADAPTER},
    };
    check_adapter(&r, pts, sizeof(pts) / sizeof(pts[0]), e);
}
END_TEST

START_TEST(test_adapter_jdk25)
{
    struct fx_code_range r = adapter_range(adapter25_hex);
    unsigned e = 105;
    const struct adapter_point pts[] = {
            /* i2c: mov r11,rsp; pop rax; and rsp,-16; push rax; mov rax,r11; ...; the
             * continuation fast path (cmp rsp,[r15+d]; jbe; mov [r15+d],rsp) */
            {0x00, 0, NO_REG, NO_REG, NO_REG, false, FX_REC_ADAPTER},
            {0x03, 0, NO_REG, 0, NO_REG, false, FX_REC_ADAPTER},
            {0x04, 1, NO_REG, 0, NO_REG, true, FX_REC_ADAPTER},
            {0x08, 0, NO_REG, 0, NO_REG, true, FX_REC_ADAPTER},
            {0x09, -1, NO_REG, 0, NO_REG, true, FX_REC_ADAPTER},
            {0x0c, -1, 0, 0, NO_REG, false, FX_REC_ADAPTER},
            {0x1d, -1, 0, NO_REG, NO_REG, false, FX_REC_ADAPTER},
            {0x24, -1, 0, NO_REG, NO_REG, false, FX_REC_ADAPTER},
            {0x2e, -1, NO_REG, NO_REG, NO_REG, false, FX_REC_BODY},
            /* c2i unverified (ic_check), c2i entry, clinit barrier, the entry barrier's fast
             * path up to its out-of-line slow path, which saves registers below rsp */
            {0x31, 0, NO_REG, NO_REG, NO_REG, false, FX_REC_ADAPTER},
            {0x42, 0, NO_REG, NO_REG, NO_REG, false, FX_REC_ADAPTER},
            {0x52, 0, NO_REG, NO_REG, NO_REG, false, FX_REC_ADAPTER},
            {0x8d, 0, NO_REG, NO_REG, NO_REG, false, FX_REC_ADAPTER},
            {0xda, 0, NO_REG, NO_REG, NO_REG, false, FX_REC_ADAPTER},
            {0xfb, 0, NO_REG, NO_REG, NO_REG, false, FX_REC_ADAPTER},
            {0x102, -42, NO_REG, NO_REG, NO_REG, false, FX_REC_ADAPTER},
            {0x1b4, -42, NO_REG, NO_REG, NO_REG, false, FX_REC_DECODE}, /* past an EVEX store */
            {0x396, 0, NO_REG, NO_REG, NO_REG, false, FX_REC_DECODE},   /* only behind it */
            /* skip_fixup: lea r13,[rsp+8]; pop rax; sub rsp,16; push rax; mov [rsp+8],rsi */
            {0x484, 0, NO_REG, NO_REG, NO_REG, false, FX_REC_ADAPTER},
            {0x489, 0, NO_REG, NO_REG, 1, false, FX_REC_ADAPTER},
            {0x48a, 1, NO_REG, NO_REG, 1, true, FX_REC_ADAPTER},
            {0x48e, -1, NO_REG, NO_REG, 1, true, FX_REC_ADAPTER},
            {0x48f, -2, NO_REG, NO_REG, 1, true, FX_REC_ADAPTER},
            {0x494, -2, NO_REG, NO_REG, 1, true, FX_REC_ADAPTER},
            {0x498, -2, NO_REG, NO_REG, 1, true, FX_REC_ADAPTER},
    };
    check_adapter(&r, pts, sizeof(pts) / sizeof(pts[0]), e);
}
END_TEST

/* What the adapter rule must refuse: a blob that does not begin with an i2c entry, a call, a
 * store over the slot through an unknown base, rsp overwritten from memory. */
START_TEST(test_adapter_refuses)
{
    uintptr_t gpr[16] = {0};
    stack[41] = 0xCA11E4;
    struct fx_regs in = {.sp = (uintptr_t)&stack[41], .fp = 0xF00, .gpr = gpr}, out;
    struct fx_code_range r = adapter_range("90488b0424"); /* nop first: not an i2c entry */
    in.pc = r.begin + 5;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_DECODE);
    r = adapter_range("488b0424e80000000090"); /* mov rax,[rsp]; call */
    in.pc = r.begin + 9;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_DECODE);
    in.pc = r.begin + 4; /* before the call: fine */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_ADAPTER);
    r = adapter_range("488b04244c8bdc4d891390"); /* ...; mov [r11], r10: ret still in rax */
    in.pc = r.begin + 10;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_ADAPTER);
    r = adapter_range("4c8bdc4d891390"); /* mov r11,rsp; mov [r11], r10: slot lost */
    in.pc = r.begin + 6;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_BODY);
    r = adapter_range("488b0424488b242490"); /* ...; mov rsp, [rsp] */
    in.pc = r.begin + 8;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_DECODE);
    r = adapter_range("488b04244c8bdc5d90"); /* ...; pop rbp: rbp no longer the caller's */
    in.pc = r.begin + 8;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_BODY);
    r = adapter_range("4c8bdc48891c2490"); /* mov r11,rsp; mov [rsp], rbx over the slot */
    in.pc = r.begin + 7;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_BODY);
    in.sp = HI; /* the slot outside the stack */
    in.pc = r.begin + 3;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_STACK);
}
END_TEST

/* A StubRoutines arraycopy stub as stubGenerator_x86_64*.cpp emits one (issue 32): enter (push rbp;
 * mov rbp, rsp as 48 89 E5), push rbx; pop rbx; vzeroupper; leave; ret. The return address is at
 * [sp] at the entry and at ret, [sp + 8] after the push, [rbp + 8] in the frame (leave
 * included); inside mov rbp, rsp, with rbp below sp or off the stack, nothing is claimed. */
/* One point of a stub: the rule's answer is `rule` with the caller at (0xCA11E4, sp_out, 0xF00). */
static void expect_caller(const struct fx_code_range *r, struct fx_regs in, uintptr_t sp_out,
                          int rule)
{
    struct fx_regs out;
    ck_assert_int_eq(fx_recover_caller(r, &in, LO, HI, false, &out), rule);
    ck_assert_uint_eq(out.pc, 0xCA11E4);
    ck_assert_uint_eq(out.sp, sp_out);
    ck_assert_uint_eq(out.fp, 0xF00);
}

START_TEST(test_stub_frame)
{
    static const uint8_t stub[] = {0x55, 0x48, 0x89, 0xE5, 0x53, 0x5B,
                                   0xC5, 0xF8, 0x77, 0xC9, 0xC3};
    memcpy(code, stub, sizeof(stub));
    struct fx_code_range r = {.begin = (uintptr_t)code,
                              .end = (uintptr_t)code + sizeof(stub),
                              .kind = FX_BLOB_STUB,
                              .arraycopy = 1};
    uintptr_t e = (uintptr_t)&stack[60];
    stack[60] = 0xCA11E4;
    stack[59] = 0xF00; /* the caller's rbp, saved by push rbp */
    expect_caller(&r, (struct fx_regs){r.begin, e, 0xF00, NULL}, e + 8, FX_REC_STUB_FRAME);
    expect_caller(&r, (struct fx_regs){r.begin + 1, e - 8, 0xF00, NULL}, e + 8, FX_REC_STUB_FRAME);
    static const unsigned body[] = {4, 5, 6, 9}; /* push rbx, pop rbx, vzeroupper, leave */
    for (unsigned i = 0; i < 4; i++)
        expect_caller(&r, (struct fx_regs){r.begin + body[i], e - 16, e - 8, NULL}, e + 8,
                      FX_REC_STUB_FRAME);
    /* at ret, after leave */
    expect_caller(&r, (struct fx_regs){r.begin + 10, e, 0xF00, NULL}, e + 8, FX_REC_STUB_FRAME);
    struct fx_regs in = {r.begin, e, 0xF00, NULL}, out;
    in.pc = r.begin + 2; /* inside mov rbp, rsp */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_DECODE);
    in = (struct fx_regs){.pc = r.begin + 5, .sp = e - 16, .fp = e - 24}; /* rbp below sp */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_STACK);
    /* rbp more than FRAME_MAX (4096) above sp: bounds of a 1 MiB stack, nothing read */
    in = (struct fx_regs){.pc = r.begin + 5, .sp = 0x100000, .fp = 0x100000 + 4104};
    ck_assert_int_eq(fx_recover_caller(&r, &in, 0x100000, 0x200000, false, &out), FX_REC_STACK);
    in = (struct fx_regs){.pc = r.begin + 5, .sp = e - 16, .fp = HI}; /* rbp off the stack */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_STACK);
    in = (struct fx_regs){.pc = r.begin + 5, .sp = e - 16, .fp = e - 8};
    ck_assert_int_eq(fx_recover_caller(&r, &in, 0, 0, false, &out), FX_REC_STUB); /* no bounds */
    r.arraycopy = 0; /* another stub with the same head: the rule is the arraycopy stubs' only */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_STUB);
    r.arraycopy = 1;
    code[3] = 0xEC; /* push rbp; mov rbp, rsp as 48 89 EC is no such head */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_STUB);
    code[2] = 0x8B; /* 48 8B EC is (MacroAssembler::enter's other encoding) */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_STUB_FRAME);
}
END_TEST

/* JDK 25's fill stubs (Temurin 25.0.3's arrayof_jint_fill, PrintStubCode): mov r11, rdx
 * (4C 8B DA) before enter, which moves no stack; then push rbp; mov rbp, rsp; the body; leave;
 * ret. The return address is at [sp] at the entry and at the push, [sp + 8] after it, [rbp + 8]
 * in the frame; inside the mov, or with another instruction before enter, nothing. */
START_TEST(test_stub_frame_after_mov)
{
    static const uint8_t stub[] = {0x4C, 0x8B, 0xDA, 0x55, 0x48, 0x8B,
                                   0xEC, 0x53, 0x5B, 0xC9, 0xC3};
    memcpy(code, stub, sizeof(stub));
    struct fx_code_range r = {.begin = (uintptr_t)code,
                              .end = (uintptr_t)code + sizeof(stub),
                              .kind = FX_BLOB_STUB,
                              .arraycopy = FX_STUB_FILL};
    uintptr_t e = (uintptr_t)&stack[60];
    stack[60] = 0xCA11E4;
    stack[59] = 0xF00;
    expect_caller(&r, (struct fx_regs){r.begin, e, 0xF00, NULL}, e + 8, FX_REC_STUB_FRAME);
    expect_caller(&r, (struct fx_regs){r.begin + 3, e, 0xF00, NULL}, e + 8, FX_REC_STUB_FRAME);
    expect_caller(&r, (struct fx_regs){r.begin + 4, e - 8, 0xF00, NULL}, e + 8, FX_REC_STUB_FRAME);
    static const unsigned body[] = {7, 8, 9}; /* push rbx, pop rbx, leave */
    for (unsigned i = 0; i < 3; i++)
        expect_caller(&r, (struct fx_regs){r.begin + body[i], e - 16, e - 8, NULL}, e + 8,
                      FX_REC_STUB_FRAME);
    expect_caller(&r, (struct fx_regs){r.begin + 10, e, 0xF00, NULL}, e + 8, FX_REC_STUB_FRAME);
    struct fx_regs in = {r.begin + 1, e, 0xF00, NULL}, out; /* inside the mov */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_DECODE);
    in.pc = r.begin + 5; /* inside mov rbp, rsp */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_DECODE);
    in = (struct fx_regs){r.begin + 7, e - 16, e - 8, NULL};
    code[2] = 0xDB; /* mov r11, rbx: no such head */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_STUB);
    static const uint8_t mov2[] = {0x49, 0x89, 0xD3}; /* mov r11, rdx's other encoding */
    memcpy(code, mov2, sizeof(mov2));
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_STUB_FRAME);
    code[3] = 0x90; /* no push rbp after the mov */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_STUB);
}
END_TEST

/* The stub's return address must follow a call in the compiled caller: call rel32, C2's
 * mov r10, imm64; call r10, a call through another register; nothing else. */
START_TEST(test_after_call)
{
    memset(code, 0x90, 64);
    struct fx_code_range n = nmethod(64, 0, 0);
    uintptr_t base = (uintptr_t)code;
    code[10] = 0xE8; /* call rel32 at 10: returns to 15 */
    ck_assert(fx_recover_after_call(&n, base + 15));
    ck_assert(!fx_recover_after_call(&n, base + 16));
    static const uint8_t r10[] = {0x49, 0xBA, 1, 2, 3, 4, 5, 6, 7, 8, 0x41, 0xFF, 0xD2};
    memcpy(code + 20, r10, sizeof(r10)); /* returns to 33 */
    ck_assert(fx_recover_after_call(&n, base + 33));
    code[40] = 0xFF; /* call rax: returns to 42 */
    code[41] = 0xD0;
    ck_assert(fx_recover_after_call(&n, base + 42));
    code[41] = 0xD4; /* call rsp: never */
    ck_assert(!fx_recover_after_call(&n, base + 42));
    ck_assert(!fx_recover_after_call(&n, base + 50)); /* nops */
    code[0] = 0xE8;
    ck_assert(!fx_recover_after_call(&n, base + 4));  /* the call would begin before the range */
    ck_assert(!fx_recover_after_call(&n, base + 70)); /* past the range */
    /* the call's target, where the instruction holds it (the leaf-native recovery's proof) */
    uintptr_t to = 0;
    int32_t rel = 0x100;
    code[0] = 0x90;
    memcpy(code + 11, &rel, sizeof(rel));
    ck_assert(fx_recover_call_target(&n, base + 15, &to));
    ck_assert_uint_eq(to, base + 15 + 0x100);
    ck_assert(fx_recover_call_target(&n, base + 33, &to));
    ck_assert_uint_eq(to, 0x0807060504030201u);
    ck_assert(!fx_recover_call_target(&n, base + 42, &to)); /* through a register loaded before */
    ck_assert(!fx_recover_call_target(&n, base + 50, &to));
    ck_assert(!fx_recover_call_target(&n, base + 12, &to)); /* would begin before the range */
}
END_TEST

/* C1's g1_post_barrier_slow (rbp-framed: push rbp; mov rbp, rsp; ...; leave; ret) and the
 * continuation in C1's slow-case code it returns to. */
START_TEST(test_c1_barrier_frame_and_continuation)
{
    static const uint8_t stub[] = {0x55, 0x48, 0x8B, 0xEC, 0x50, 0x51, 0x59, 0x58, 0xC9, 0xC3};
    memcpy(code, stub, sizeof(stub));
    struct fx_code_range r = {.begin = (uintptr_t)code,
                              .end = (uintptr_t)code + sizeof(stub),
                              .kind = FX_BLOB_C1_BARRIER};
    uintptr_t e = (uintptr_t)&stack[50];
    stack[50] = 0xCA11E4;
    stack[49] = 0xF00; /* the caller's rbp, saved by push rbp */
    struct fx_regs in = {.pc = r.begin, .sp = e, .fp = 0xF00}, out;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_C1_BARRIER);
    ck_assert_uint_eq(out.pc, 0xCA11E4);
    ck_assert_uint_eq(out.sp, e + 8);
    ck_assert_uint_eq(out.fp, 0xF00);
    in = (struct fx_regs){.pc = r.begin + 1, .sp = e - 8, .fp = 0xF00}; /* after push rbp */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_C1_BARRIER);
    ck_assert_uint_eq(out.sp, e + 8);
    ck_assert_uint_eq(out.fp, 0xF00);
    for (unsigned pc = 4; pc <= 8; pc += (pc == 4 || pc == 6) ? 2 : 1) { /* in the frame */
        in = (struct fx_regs){.pc = r.begin + pc, .sp = e - 24, .fp = e - 8};
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_C1_BARRIER);
        ck_assert_uint_eq(out.pc, 0xCA11E4);
        ck_assert_uint_eq(out.sp, e + 8);
        ck_assert_uint_eq(out.fp, 0xF00);
    }
    in = (struct fx_regs){.pc = r.begin + 9, .sp = e, .fp = 0xF00}; /* at ret, after leave */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_C1_BARRIER);
    ck_assert_uint_eq(out.sp, e + 8);
    in.pc = r.begin + 2; /* inside mov rbp, rsp */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_DECODE);
    in = (struct fx_regs){.pc = r.begin + 6, .sp = e - 24, .fp = HI}; /* rbp off the stack */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_STACK);
    code[0] = 0x90; /* not the prologue */
    in = (struct fx_regs){.pc = r.begin + 6, .sp = e - 24, .fp = e - 8};
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_DECODE);

    /* nmethod: 0: nop nop; 2: jne T (rel32); C = 8: body nops; T = 0x20: cmp rax, 0; je C;
     * mov [rsp], rax; call; R = 0x33: jmp C */
    memset(code, 0x90, 0x40);
    static const uint8_t jne[] = {0x0F, 0x85, 0x18, 0, 0, 0};
    static const uint8_t slow[] = {0x48, 0x83, 0xF8, 0x00, 0x0F, 0x84, 0xDE, 0xFF,
                                   0xFF, 0xFF, 0x48, 0x89, 0x04, 0x24, 0xE8, 0,
                                   0,    0,    0,    0xE9, 0xD0, 0xFF, 0xFF, 0xFF};
    put(2, jne, sizeof(jne));
    put(0x20, slow, sizeof(slow));
    struct fx_code_range n = nmethod(0x40, 0, 1);
    uintptr_t pc = 0;
    ck_assert(fx_recover_continuation(&n, n.begin + 0x33, &pc));
    ck_assert_uint_eq(pc, n.begin + 8);
    ck_assert(!fx_recover_continuation(&n, n.begin + 0x2E, &pc)); /* the call, not a jmp */
    code[3] = 0x40; /* the jne now targets 0x48: beyond the return address */
    ck_assert(!fx_recover_continuation(&n, n.begin + 0x33, &pc));
    code[3] = 0x18;
    code[2] = 0x90; /* no jcc ends at the continuation */
    ck_assert(!fx_recover_continuation(&n, n.begin + 0x33, &pc));
}
END_TEST

/* issue 32: an OSR compilation, entered at its OSR entry (offset 16 here): its prologue there
 * must build exactly the frame; after it the body or the epilogue, inside it nothing; before
 * the entry (session 22) the body or the epilogue in C1's code (its loop's blocks lie there,
 * run after the entry's jump), nothing in C2's or code of no known tier. */
START_TEST(test_osr_entry_rule)
{
    memset(code, 0xCC, sizeof(code)); /* int3: no instruction a rule knows */
    static const uint8_t pro[] = {0x89, 0x84, 0x24, 0x00, 0xC0, 0xFF, 0xFF,   /* bang */
                                  0x55,                                       /* push rbp */
                                  0x48, 0x83, 0xEC, 0x30};                    /* sub rsp, 48 */
    static const uint8_t body[] = {0x48, 0x8B, 0x06, 0x48, 0x8B, 0x5E, 0x08}; /* OSR buffer */
    static const uint8_t epi[] = {0x48, 0x83, 0xC4, 0x30, 0x5D, 0xC3};        /* add; pop; ret */
    size_t b = put(16, pro, sizeof(pro));
    size_t e = put(b, body, sizeof(body));
    put(e, epi, sizeof(epi));
    struct fx_code_range r = nmethod(128, 16, FX_OFF_UNKNOWN);
    r.flags = FX_RANGE_OSR;
    r.frame_words = 8; /* return address, rbp, 48 bytes */
    struct fx_regs in = {.pc = r.begin + b + 3, .sp = (uintptr_t)&stack[20], .fp = 0xF00}, out;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_BODY);
    in.pc = r.begin + e + 4; /* after add rsp: rbp and the return address on top */
    stack[20] = 0xB0;
    stack[21] = 0xCA11E4;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_EPILOGUE);
    ck_assert_uint_eq(out.pc, 0xCA11E4);
    ck_assert_uint_eq(out.fp, 0xB0);
    ck_assert_uint_eq(out.sp, (uintptr_t)&stack[22]);
    in.pc = r.begin + 16 + 7; /* in the prologue: refused */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
    in.pc = r.begin + 4; /* before the OSR entry, no tier known: refused */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
    r.level = 4; /* C2: what lies before its OSR entry is not known here */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
    for (uint8_t level = 1; level <= 3; level++) { /* C1: its loop's blocks, the frame built */
        r.level = level;
        in.pc = r.begin + 4;
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_BODY);
        put(4, epi, sizeof(epi)); /* an epilogue before the entry: 8.4's rule, decoded at pc */
        in.pc = r.begin + 8;
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_EPILOGUE);
        ck_assert_uint_eq(out.pc, 0xCA11E4);
        ck_assert_uint_eq(out.sp, (uintptr_t)&stack[22]);
        memset(code + 4, 0xCC, sizeof(epi));
        in.pc = r.begin + 16 + 7; /* the OSR entry's prologue stays refused */
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
        code[16 + 11] = 0x28; /* sub rsp, 40: not the blob's frame: nothing before it either */
        in.pc = r.begin + 4;
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
        code[16 + 11] = 0x30;
    }
    r.level = 0;
    in.pc = r.begin + b + 3;
    r.frame_words = 9; /* the prologue built another frame than the blob says */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
    r.frame_words = 8;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, false, &out), FX_REC_LAYOUT); /* stale */
    r.stubs = (uint32_t)(b + 3); /* the pc in the stub section: rsp off the frame's base */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
    r.stubs = 0;
    /* C2's shape: sub rsp, 56; mov [rsp + 48], rbp: rbp below the return address, walked */
    static const uint8_t c2[] = {0x48, 0x83, 0xEC, 0x38, 0x48, 0x89, 0x6C, 0x24, 0x30};
    b = put(16, c2, sizeof(c2));
    in.pc = r.begin + b + 3;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_BODY);
    code[16 + 8] = 0x28; /* mov [rsp + 40], rbp: the frame's size holds, rbp elsewhere */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
}
END_TEST

/* The body claim (the frame built, its size holds) refused where rsp is off the frame's base:
 * right after a push (C1's slow subtype check pushes around its call), right before a pop, in
 * the stub section (the deopt handler's call next, the exception handler). */
START_TEST(test_body_refused_off_the_frame_base)
{
    memset(code, 0x90, sizeof(code)); /* nops: no rule's instruction */
    struct fx_code_range r = nmethod(64, 0, 4);
    r.level = 1; /* C1's code: its pushes come in pairs (below: other tiers) */
    struct fx_regs in = {.pc = r.begin + 20, .sp = (uintptr_t)&stack[20], .fp = 0xF00}, out;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_BODY);
    /* C1's pushes come in pairs (push; push; call slow_subtype_check): pc after both (either
     * push with or without REX.B) or between them (a push at pc) is off the frame's base */
    const uint8_t after_pair[][3] = {{0x90, 0x53, 0x51},      /* push rbx; push rcx */
                                     {0x52, 0x41, 0x50},      /* push rdx; push r8 */
                                     {0x50, 0x41, 0x57}};     /* push rax; push r15 */
    const uint8_t at_pop[][2] = {{0x5B, 0x90}, {0x41, 0x5F}}; /* pop rbx; pop r15 */
    for (int i = 0; i < 3; i++) {
        put(17, after_pair[i], 3);
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
        put(17, (const uint8_t[]){0x90, 0x90, 0x90}, 3);
    }
    put(19, (const uint8_t[]){0x56, 0x41, 0x51}, 3); /* push rsi; at pc the pair's second push */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
    put(19, (const uint8_t[]){0x56, 0x57, 0x90}, 3);
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
    put(19, (const uint8_t[]){0x90, 0x90, 0x90}, 3);
    for (int i = 0; i < 2; i++) {
        put(20, at_pop[i], 2);
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
        put(20, (const uint8_t[]){0x90, 0x90}, 2);
    }
    /* session 17: a lone byte 0x50-0x57 before pc ends a longer instruction, no push of C1's
     * (mov eax, [rbp + 0x54]: 8B 45 54; mov r8, [rsp + 0x50]: 4C 8B 44 24 50): in C1's code
     * (tiers 1-3) only; C2 (tier 4) and code of no known tier push alone (String.compareTo's
     * intrinsic: sub ecx, edx; push rcx; cmovle edx, eax: 2B CA 51 | 0F 4E D0), so there any
     * such byte is refused, but in C2's code, where the instruction before pc is decoded from
     * the frame-complete offset (4 here) on (session 23): a push only is refused there */
    for (uint8_t level = 0; level <= 4; level++) {
        r.level = level;
        int lone = level >= 1 ? FX_REC_BODY : FX_REC_DECODE;
        int push = level >= 1 && level <= 3 ? FX_REC_BODY : FX_REC_DECODE;
        put(17, (const uint8_t[]){0x8B, 0x45, 0x54}, 3);
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), lone);
        put(15, (const uint8_t[]){0x4C, 0x8B, 0x44, 0x24, 0x50}, 5);
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), lone);
        put(17, (const uint8_t[]){0x2B, 0xCA, 0x51, 0x0F, 0x4E, 0xD0}, 6); /* pc at the cmov */
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), push);
        put(15, (const uint8_t[]){0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90}, 8);
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_BODY);
    }
    r.level = 1;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_BODY);
    r.stubs = 32; /* _stub_offset: the stub section from code + 32 */
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_BODY);
    in.pc = r.begin + 32;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
    in.pc = r.begin + 50;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
}
END_TEST

/* c2_inflate: offset 0x123, verified entry 0x0, frame complete 0x1a, 6-word frame */
static const char c2_inflate[] =
        "89842400c0feff554883ec2041817f20090000000f85f0010000488934248b6e0c81fd000008000f877c0100"
        "004c63d54e8d1455170000004983e2f8498b87c80100004c8bd84d03da4d3b9fd80100000f83530100004d89"
        "9fc8010000410f18830001000048c70001000000410f188340010000c74008982e170089680c410f18838001"
        "0000488b34244883c610488bf84883c7108bd58bcaf7c2f0ffffff0f8484000000f7c200f0ffff0f84540000"
        "0083e11f83e2e0741f488d3416488d3c5748f7da62f27d4830041662f1ff487f04574883c22075ecf7c1ffff"
        "ffff0f84b2000000baffffffffc4e271f7d2f7d2c5fb92fa62f27dcf300662f1ff4f7f07e99100000083e10f"
        "83e2f0741c488d3416488d3c5748f7dac4e27d300416c5fe7f04574883c210";
/* c2_clear: offset 0x11f, verified entry 0x10, frame complete 0x2a, 12-word frame */
static const char c2_clear[] =
        "6690448b5608443b50080f85309da8ff89842400c0feff554883ec5041817f200b0000000f854c1100004c8b"
        "ce448b5e144585db740b478b54dc0c4f8d04dceb064533d24533c0448b5e244585d27e29438d0c1281f90000"
        "00400f8d7c060000418d7af081fff0ffff3f0f8390060000438d1c1b448bd9eb144585db0f8fa1040000bb0c"
        "00000041bb1000000085db0f8495040000895e244181fb000004000f87c7040000498b9fc8010000418bfb48"
        "63cf488d0c8d17000000488bf94883e7f8488bd34803d7493b97d80100000f8398040000498997c80100000f"
        "18820001000048c703010000000f188240010000c7430880e52c0044895b0c0f188280010000488bfb4883c7"
        "1048c1e9034883c1fe4833c04883f9087f1048ffc97856488904cf";

static size_t put_hex(uint8_t *to, const char *hex)
{
    size_t n = strlen(hex) / 2;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
        to[i] = (uint8_t)v;
    }
    return n;
}

/* fx_x86_len (recover_decode.c) against objdump's decode (binutils 2.40), one instruction of
 * each form: legacy prefixes, REX, the one-byte map's immediates (imm8, imm16/32 by 0x66, imm64,
 * moffs, enter, the F6/F7 tests by ModRM.reg), the 0F, 0F38 and 0F3A maps, VEX2, VEX3 and EVEX
 * with their maps' immediates, and every push form; then what it must not decode. */
START_TEST(test_x86_len)
{
    static const struct {
        const char *hex;
        bool push;
    } ok[] = {{"0000", 0},
              {"0d00280000", 0},
              {"480d00000800", 0},
              {"660de001", 0},
              {"6681ce0001", 0},
              {"4869c05f0b4e83", 0},
              {"6900973d0000", 0},
              {"6bc064", 0},
              {"48f7da", 0},
              {"f68558ffffff01", 0},
              {"f7c2f0ffffff", 0},
              {"f6d0", 0},
              {"48f7e1", 0},
              {"ffc1", 0},
              {"ff742408", 1},
              {"41ff7508", 1},
              {"50", 1},
              {"4157", 1},
              {"6803050000", 1},
              {"6a00", 1},
              {"9c", 1},
              {"58", 0},
              {"415f", 0},
              {"8f4008", 0},
              {"b801000000", 0},
              {"48b90090f315477f0000", 0},
              {"66b94aba", 0},
              {"a03556b6c782bd671c", 0},
              {"67a112345678", 0},
              {"c3", 0},
              {"c22348", 0},
              {"c86bc8c4", 0},
              {"c9", 0},
              {"e88c0b8dff", 0},
              {"e9000000ff", 0},
              {"eb10", 0},
              {"7003", 0},
              {"0f84b2000000", 0},
              {"c7f800010000", 0},
              {"c6f801", 0},
              {"488b442450", 0},
              {"4c8b442450", 0},
              {"8b4554", 0},
              {"89842400c0feff", 0},
              {"488d3c57", 0},
              {"41c7442408ffffffff", 0},
              {"0f1f840000000000", 0},
              {"660f1f440000", 0},
              {"0f01e8", 0},
              {"0f0b", 0},
              {"0fa0", 1},
              {"0fa8", 1},
              {"0fb6c1", 0},
              {"f3480fb8c1", 0},
              {"660f54c2", 0},
              {"660f73f108", 0},
              {"f20f70c01b", 0},
              {"0f38c9f3", 0},
              {"660f3a0fc108", 0},
              {"c5f877", 0},
              {"c5fe7f0457", 0},
              {"c4e27d300416", 0},
              {"c441781077a0", 0},
              {"c4e36d0fe908", 0},
              {"c4e2fbf6a620000000", 0},
              {"62a1fd20dbc6", 0},
              {"62e2dd28b44902", 0},
              {"62a3fd2803db01", 0},
              {"62f27d480416", 0},
              {"62f17d4872d005", 0}};
    uint8_t b[32];
    bool push;
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        memset(b, 0xCC, sizeof(b));
        size_t n = put_hex(b, ok[i].hex);
        ck_assert_msg(fx_x86_len(b, sizeof(b), &push) == n, "%s", ok[i].hex);
        ck_assert_msg(push == ok[i].push, "%s", ok[i].hex);
        ck_assert_uint_eq(fx_x86_len(b, n - 1, &push), 0); /* one byte short */
    }
    /* never in HotSpot's code, or not valid in 64-bit mode: 0x66 on a rel32 call, AMD's XOP,
     * VEX after REX or a prefix, 3DNow!, push es, mov to a debug register, 16 prefixes */
    static const char *refused[] = {
            "66e800000000", "8fe878c2f80d", "48c5f877",
            "66c5f877",     "0f0fc00d",     "06",
            "0f2387",       "4848c3",       "6666666666666666666666666666666690"};
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        memset(b, 0xCC, sizeof(b));
        put_hex(b, refused[i]);
        ck_assert_msg(fx_x86_len(b, sizeof(b), &push) == 0, "%s", refused[i]);
    }
}
END_TEST

/* Session 23: C2's body after a byte 0x50-0x57, on real nmethods of javac's main thread
 * (Temurin 25, the samples the byte check refused again and again): the instruction before pc
 * decoded from the frame-complete offset: a rel8 (js +0x56, ClearArray's loop) and a SIB byte
 * (vmovdqu [rdi + rdx*2], byte_array_inflate's loop) are no push: the body; a push there is
 * refused, as are an instruction not decoded on the way, a decode not landing on pc, a pc
 * further than FX_BODY_DECODE_MAX bytes from the frame's completion, and code of no known tier.
 * Fails without the decode (every such pc refused). */
START_TEST(test_c2_body_decoded)
{
    static uint8_t big[16400];
    struct {
        const char *hex;
        uint32_t verified, complete, before; /* before: the length of the instruction before pc */
    } nm[] = {{c2_clear, 0x10, 0x2a, 2}, {c2_inflate, 0, 0x1a, 5}};
    for (int k = 0; k < 2; k++) {
        memset(big, 0xCC, sizeof(big));
        size_t n = put_hex(big, nm[k].hex);
        struct fx_code_range r = {.begin = (uintptr_t)big,
                                  .end = (uintptr_t)big + n,
                                  .blob = 1,
                                  .verified = nm[k].verified,
                                  .complete = nm[k].complete,
                                  .frame_words = 12,
                                  .kind = FX_BLOB_NMETHOD,
                                  .level = 4};
        uintptr_t pc = r.begin + n - 4; /* the last instruction's: the sampled pc */
        ck_assert(big[n - 5] >= 0x50 && big[n - 5] <= 0x57);
        struct fx_regs in = {.pc = pc, .sp = (uintptr_t)&stack[20], .fp = 0xF00}, out;
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_BODY);
        r.level = 0;
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
        r.level = 4;
        uint8_t keep[8];
        size_t at = n - 4 - nm[k].before; /* the instruction before pc */
        memcpy(keep, big + at, nm[k].before);
        memset(big + at, 0x90, nm[k].before - 1); /* nops, then push with the same byte */
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
        memcpy(big + at, keep, nm[k].before);
        big[n - 5] = 0x57; /* js +0x57, vmovdqu [rdi + rdx*2]: no push still */
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_BODY);
        memcpy(big + at, keep, nm[k].before);
        uint8_t first = big[nm[k].complete];
        big[nm[k].complete] = 0x06; /* not valid in 64-bit mode: not decoded */
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
        big[nm[k].complete] = first;
        ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_BODY);
    }
    /* the budget: FX_BODY_DECODE_MAX (16384) bytes from the frame's completion to pc */
    memset(big, 0x90, sizeof(big));
    struct fx_code_range r = {.begin = (uintptr_t)big,
                              .end = (uintptr_t)big + sizeof(big),
                              .blob = 1,
                              .complete = 8,
                              .kind = FX_BLOB_NMETHOD,
                              .level = 4};
    put_hex(big + 8 + 16384 - 3, "8b4554"); /* mov eax, [rbp + 0x54] ending at the budget */
    struct fx_regs in = {.pc = r.begin + 8 + 16384, .sp = (uintptr_t)&stack[20]}, out;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_BODY);
    big[8 + 16384 - 4] = 0x90;
    put_hex(big + 8 + 16384 - 2, "8b4554");
    in.pc += 1;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
    put_hex(big + 100, "b850000000"); /* mov eax, 0x50; pc after its 0x50: inside it */
    in.pc = r.begin + 102;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
    in.pc = r.begin + 105;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_BODY);
    /* an OSR compilation of C2 after its entry's prologue: decoded from the prologue's end */
    memset(code, 0xCC, sizeof(code));
    static const uint8_t pro[] = {0x89, 0x84, 0x24, 0x00, 0xC0, 0xFF, 0xFF, /* bang */
                                  0x55, 0x48, 0x83, 0xEC, 0x30,             /* push; sub 48 */
                                  0x48, 0x8B, 0x46, 0x50};                  /* mov rax, [rsi+80] */
    size_t e = put(16, pro, sizeof(pro));
    r = nmethod(128, 16, FX_OFF_UNKNOWN);
    r.flags = FX_RANGE_OSR;
    r.frame_words = 8;
    r.level = 4;
    in.pc = r.begin + e;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_BODY);
    r.level = 0;
    ck_assert_int_eq(fx_recover_caller(&r, &in, LO, HI, true, &out), FX_REC_DECODE);
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
    tcase_add_test(tc, test_adapter_jdk17);
    tcase_add_test(tc, test_adapter_jdk25);
    tcase_add_test(tc, test_adapter_refuses);
    tcase_add_test(tc, test_c1_barrier_frame_and_continuation);
    tcase_add_test(tc, test_stub_frame);
    tcase_add_test(tc, test_stub_frame_after_mov);
    tcase_add_test(tc, test_after_call);
    tcase_add_test(tc, test_osr_entry_rule);
    tcase_add_test(tc, test_body_refused_off_the_frame_base);
    tcase_add_test(tc, test_x86_len);
    tcase_add_test(tc, test_c2_body_decoded);
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
