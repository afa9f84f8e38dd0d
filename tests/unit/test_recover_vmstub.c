/* SPDX-License-Identifier: Apache-2.0 */
/* unit.recover_vmstub: the step over a stub the VM called from C++ (agent/sampling/
 * recover_vmstub.c, docs/VALIDATION.md 8.5h) without a JVM: ICache's flush_icache_stub on the
 * bytes JDK 17's x86-64 generator emits (testl esi, esi; jz; mfence; clflush [rdi]; add rdi, 64;
 * dec esi; jnz; mfence; mov rax, rdx; ret) is proven frameless up to its ret, its caller at
 * [sp] at each pc through the ret and none past it; a stub of another name, or with an
 * instruction that may change rsp (push, sub rsp), is not proven. An arraycopy stub's rbp frame
 * (8.5d) gives its C++ caller the same way. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "recover_anchor.h"

/* flush_icache_stub as icache_x86.cpp's generator emits it (assembled from its source for this
 * test; the jcc displacements do not matter): the ret at 24, then padding */
static const uint8_t flush17[] = {0x85, 0xf6, 0x74, 0x13, 0x0f, 0xae, 0xf0, 0x0f, 0xae, 0x3f,
                                  0x48, 0x83, 0xc7, 0x40, 0xff, 0xce, 0x75, 0xf5, 0x0f, 0xae,
                                  0xf0, 0x48, 0x8b, 0xc2, 0xc3, 0xf4, 0xf4, 0xf4};
#define RET_AT 24

static _Alignas(16) uintptr_t stack[16];
#define LO     ((uintptr_t)&stack[0])
#define HI     ((uintptr_t)&stack[16])
#define LIBJVM 0x7f0000123456u /* a return address into the VM's C++ code */

START_TEST(test_flush_stub_decoded)
{
    ck_assert_uint_eq(fx_recover_vmstub_ret("flush_icache_stub", flush17, sizeof(flush17)),
                      RET_AT + 1);
    ck_assert_uint_eq(fx_recover_vmstub_ret("call_stub", flush17, sizeof(flush17)), 0);
    ck_assert_uint_eq(fx_recover_vmstub_ret(NULL, flush17, sizeof(flush17)), 0);
    ck_assert_uint_eq(fx_recover_vmstub_ret("flush_icache_stub", flush17, RET_AT), 0);
    /* decl esi as sub esi, 1 (83 EE 01, without UseIncDec) and a long jcc: still proven */
    static const uint8_t sub[] = {0x85, 0xf6, 0x0f, 0x84, 0, 0, 0, 0, 0x83, 0xee, 0x01, 0xc3};
    ck_assert_uint_eq(fx_recover_vmstub_ret("flush_icache_stub", sub, sizeof(sub)), 12);
    /* anything that may move rsp before the ret: refused */
    static const uint8_t push[] = {0x85, 0xf6, 0x55, 0xc3};         /* push rbp */
    static const uint8_t subrsp[] = {0x48, 0x83, 0xec, 0x08, 0xc3}; /* sub rsp, 8 */
    static const uint8_t movrsp[] = {0x48, 0x8b, 0xe5, 0xc3};       /* mov rsp, rbp */
    static const uint8_t decrsp[] = {0x48, 0xff, 0xcc, 0xc3};       /* dec rsp */
    ck_assert_uint_eq(fx_recover_vmstub_ret("flush_icache_stub", push, sizeof(push)), 0);
    ck_assert_uint_eq(fx_recover_vmstub_ret("flush_icache_stub", subrsp, sizeof(subrsp)), 0);
    ck_assert_uint_eq(fx_recover_vmstub_ret("flush_icache_stub", movrsp, sizeof(movrsp)), 0);
    ck_assert_uint_eq(fx_recover_vmstub_ret("flush_icache_stub", decrsp, sizeof(decrsp)), 0);
    /* but r12's (REX.B) are not rsp: dec r12d; mov r12, rdx */
    static const uint8_t r12[] = {0x41, 0xff, 0xcc, 0x4c, 0x8b, 0xe2, 0xc3};
    ck_assert_uint_eq(fx_recover_vmstub_ret("flush_icache_stub", r12, sizeof(r12)), 7);
}
END_TEST

START_TEST(test_flush_stub_step)
{
    struct fx_code_range r = {.begin = (uintptr_t)flush17,
                              .end = (uintptr_t)flush17 + sizeof(flush17),
                              .kind = FX_BLOB_STUB,
                              .stubs = RET_AT + 1};
    stack[6] = LIBJVM;
    struct fx_regs out, in = {.sp = (uintptr_t)&stack[6], .fp = 0x1234};
    for (uint32_t off = 0; off <= RET_AT; off++) {
        in.pc = r.begin + off;
        memset(&out, 0, sizeof(out));
        ck_assert_int_eq(fx_recover_vm_stub_step(&r, &in, LO, HI, &out), FX_REC_STUB_FRAME);
        ck_assert_uint_eq(out.pc, LIBJVM);
        ck_assert_uint_eq(out.sp, (uintptr_t)&stack[7]);
        ck_assert_uint_eq(out.fp, 0x1234); /* the stub never touches rbp */
    }
    in.pc = r.begin + RET_AT + 1; /* past the ret: not proven */
    ck_assert_int_eq(fx_recover_vm_stub_step(&r, &in, LO, HI, &out), FX_REC_STUB);
    in.pc = r.begin;
    r.stubs = 0; /* not decoded (another JDK's code): refused */
    ck_assert_int_eq(fx_recover_vm_stub_step(&r, &in, LO, HI, &out), FX_REC_STUB);
    r.stubs = RET_AT + 1;
    in.sp = HI; /* sp off the stack */
    ck_assert_int_eq(fx_recover_vm_stub_step(&r, &in, LO, HI, &out), FX_REC_STUB);
}
END_TEST

/* An arraycopy stub: push rbp; mov rbp, rsp; ...; its C++ caller by the rbp frame (8.5d). */
START_TEST(test_arraycopy_stub_step)
{
    static const uint8_t copy[] = {0x55, 0x48, 0x89, 0xe5, 0x90, 0x90, 0x5d, 0xc3};
    struct fx_code_range r = {.begin = (uintptr_t)copy,
                              .end = (uintptr_t)copy + sizeof(copy),
                              .kind = FX_BLOB_STUB,
                              .arraycopy = FX_STUB_ARRAYCOPY};
    stack[8] = 0x5678; /* the caller's rbp */
    stack[9] = LIBJVM;
    struct fx_regs out,
            in = {.pc = r.begin + 4, .sp = (uintptr_t)&stack[4], .fp = (uintptr_t)&stack[8]};
    ck_assert_int_eq(fx_recover_vm_stub_step(&r, &in, LO, HI, &out), FX_REC_STUB_FRAME);
    ck_assert_uint_eq(out.pc, LIBJVM);
    ck_assert_uint_eq(out.sp, (uintptr_t)&stack[10]);
    ck_assert_uint_eq(out.fp, 0x5678);
    r.arraycopy = 0; /* another stub with no rule: refused */
    ck_assert_int_eq(fx_recover_vm_stub_step(&r, &in, LO, HI, &out), FX_REC_STUB);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("recover_vmstub");
    TCase *tc = tcase_create("vm stub");
    tcase_add_test(tc, test_flush_stub_decoded);
    tcase_add_test(tc, test_flush_stub_step);
    tcase_add_test(tc, test_arraycopy_stub_step);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
