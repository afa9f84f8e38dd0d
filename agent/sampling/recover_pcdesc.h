/* SPDX-License-Identifier: Apache-2.0 */
/* The PcDesc check of the intrinsics' stubs (issue 32 item 4, docs/VALIDATION.md 8.5d): a
 * compiled caller's return address is accepted under an intrinsic StubRoutines stub only where
 * it follows a call to that stub and the caller's nmethod (not an OSR compilation) has its first
 * PcDesc at or after it exactly where the call's node ends (the return address, or after the
 * post-call nop there), the scope AsyncGetCallTrace names from there (the call's own). The layout
 * of the nmethod's PcDesc table comes from VMStructs (vmstructs.c, published by codemap.c); the
 * check runs in the signal handler and reads by process_vm_readv (recover_pcdesc.c). */
#ifndef FX_RECOVER_PCDESC_H
#define FX_RECOVER_PCDESC_H

#include <stdbool.h>
#include <stdint.h>

#include "fx_recover.h"

/* The most PcDescs a table may hold here: a larger one is refused, not searched. */
#define FX_PCDESC_MAX (1u << 20)

/* Where an nmethod's PcDesc table lies, by VMStructs. JDK <= 22: scopes_pcs_begin/end =
 * the nmethod + _scopes_pcs_offset / + _dependencies_offset (data = -1); JDK 23+: the
 * _immutable_data pointer + _scopes_pcs_offset / + _scopes_data_offset, both within
 * _immutable_data_size. All int fields; pid: this process (0: not published). */
struct fx_pcdesc_layout {
    int32_t pid;
    int32_t begin;     /* offset in the nmethod of the int "table begins at" */
    int32_t end;       /* offset in the nmethod of the int "table ends at" */
    int32_t data;      /* offset of the _immutable_data pointer, -1: offsets from the nmethod */
    int32_t data_size; /* offset of the int _immutable_data_size, -1: none */
    int32_t size;      /* sizeof(PcDesc) */
    int32_t pc;        /* PcDesc::_pc_offset, an int */
};

/* The post-call nop C2 emits in a call's node since JDK 21 (Loom): 0F 1F 84 00 and 4 bytes. */
#define FX_POST_CALL_NOP 8u

/* Where nmethod n's first PcDesc at or after a return address lies (fx_recover_pcdesc_find). */
enum fx_pcdesc_found {
    FX_PCDESC_AT_END = 0,    /* exactly where the call's node ends: ret + skip */
    FX_PCDESC_ELSEWHERE = 1, /* inside the post-call nop, or past it (a run stretched on) */
    FX_PCDESC_UNKNOWN = 2,   /* none in the code after ret, or the table unknown or unreadable */
};

/* Signal-safe: where the first PcDesc of nmethod n (blob and begin = code begin known) at or
 * after ret lies, against ret + skip (skip: 0, or FX_POST_CALL_NOP with the nop in the code). */
enum fx_pcdesc_found fx_recover_pcdesc_find(const struct fx_pcdesc_layout *l,
                                            const struct fx_code_range *n, uintptr_t ret,
                                            uint32_t skip);
static inline bool fx_recover_pcdesc_at(const struct fx_pcdesc_layout *l,
                                        const struct fx_code_range *n, uintptr_t ret, uint32_t skip)
{
    return fx_recover_pcdesc_find(l, n, ret, skip) == FX_PCDESC_AT_END;
}
/* FX_POST_CALL_NOP if n's bytes at ret are a post-call nop, else 0 (reads n's code). */
uint32_t fx_recover_post_call_nop(const struct fx_code_range *n, uintptr_t ret);
/* Publishes l for fx_recover_stub_refused (codemap.c, once VMStructs are read; pid last). */
void fx_recover_pcdesc_publish(const struct fx_pcdesc_layout *l);
/* Signal-safe: the call right before ret in compiled method n went to stub itself, its target
 * read in the instruction (call rel32; mov r10, imm64; call r10): the call test of
 * fx_recover_stub_refused (which adds the scope's) and all the walk below needs (native_below.c:
 * the frame chain, not the inlined frames; docs/VALIDATION.md 8.5d). Tests: unit.recover_pcdesc. */
static inline bool fx_recover_stub_return(const struct fx_code_range *stub,
                                          const struct fx_code_range *n, uintptr_t ret)
{
    uintptr_t target;
    return fx_recover_after_call(n, ret) && fx_recover_call_target(n, ret, &target) &&
           target >= stub->begin && target < stub->end;
}
/* Whether the first frame AsyncGetCallTrace named at a caller's return address less one (method
 * and bci) may be a deoptimized caller's (docs/VALIDATION.md 8.5a): that walk, from the stub
 * section where the patched return address points, names exactly the nmethod's root method at
 * bci 0 (vframeStreamCommon::fill_from_compiled_native_frame: nm()->method(), bci 0, no
 * inlining). So a frame at bci 0 of another method, a method inlined into that nmethod (a real
 * call at bci 0: System.nanoTime at Budget.more@0), is not that answer; root 0: not known, may
 * be. Tests: unit.recover_pcdesc. */
static inline bool fx_recover_bci0_deopt(int32_t bci, uintptr_t method, uintptr_t root)
{
    return bci == 0 && (root == 0 || method == root);
}

#endif
