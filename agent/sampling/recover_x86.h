/* SPDX-License-Identifier: Apache-2.0 */
/* Private to the recovery rules (recover.c, recover_adapter.c): the bounded reads every rule
 * makes (native_below.c's too), and the decoder pieces the two files share. */
#ifndef FX_RECOVER_X86_H
#define FX_RECOVER_X86_H

#include "fx_recover.h"

/* Signal-safe: reads the 8-byte word at a if [a, a+8) is inside [lo, hi). */
static inline bool fx_recover_stack_word(uintptr_t lo, uintptr_t hi, uintptr_t a, uintptr_t *out)
{
    if (a < lo || a > hi || hi - a < 8 || (a & 7) != 0)
        return false;
    *out = *(const uintptr_t *)a;
    return true;
}

/* The code bytes of [p, p+n) lie inside the range. */
static inline bool fx_recover_in(const struct fx_code_range *r, uintptr_t p, uintptr_t n)
{
    return p >= r->begin && p <= r->end && r->end - p >= n;
}

static inline const uint8_t *fx_recover_code(uintptr_t p)
{
    return (const uint8_t *)p;
}

static inline int32_t fx_recover_i32(const uint8_t *b)
{
    uint32_t v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return (int32_t)v;
}

/* One instruction of the subset the adapter decoder knows (fx_recover_insn). */
struct fx_insn {
    unsigned len;
    uint16_t op;  /* the opcode byte, or 0x100 | the byte after 0F */
    uint8_t pfx;  /* 0x66, 0xF2, 0xF3 (also VEX's implied one) or 0 */
    bool w, mem;  /* REX.W / VEX.W; ModRM names memory */
    unsigned reg; /* ModRM reg with REX.R, or the register of an opcode + r form */
    unsigned rm;  /* ModRM rm with REX.B when mod is 3 */
    int base;     /* memory base with REX.B; -1: none (rip-relative or absolute) */
    bool index;   /* memory operand has an index register */
    int32_t disp;
    int64_t imm; /* immediate, or a branch's displacement */
};

/* The shared head of the decoders: the length of an alignment nop at p (then *b is NULL), else
 * 0 with *b the code bytes at p, or NULL if p is outside the range. */
unsigned fx_recover_head(const struct fx_code_range *r, uintptr_t p, const uint8_t **b);
/* recover_decode.c: the length of a ModRM operand (ModRM, SIB, displacement) at b, avail bytes
 * readable; 0 if not. */
unsigned fx_recover_modrm_len(const uint8_t *b, uintptr_t avail);
/* recover_decode.c: the length of the x86-64 instruction at b (at most avail bytes read), 0 if
 * not decoded: an opcode not valid in 64-bit mode or never in HotSpot's code (3DNow!, XOP), a
 * prefix where none may be. *push: it pushes (push r, imm, r/m; pushf; push fs/gs).
 * Tests: unit.recover (test_x86_len, on objdump's decode of real nmethods). */
unsigned fx_x86_len(const uint8_t *b, uintptr_t avail, bool *push);
/* recover_adapter.c: decodes the instruction at p (inside r) into *x; false if it is not in the
 * subset (shared with recover_interp.c and recover_subtype.c). */
bool fx_recover_insn(const struct fx_code_range *r, uintptr_t p, struct fx_insn *x);
/* recover_stub.c (a partial stack's callers, recover_partial.c): the caller of nmethod n whose sp
 * at a call is sp, by n's frame size (words, return address included): FX_REC_STUB_PARTIAL, or
 * FX_REC_LAYOUT/FX_REC_STACK. */
int fx_recover_compiled_sender(const struct fx_code_range *n, uintptr_t sp, uintptr_t lo,
                               uintptr_t hi, struct fx_regs *out);

/* recover_icstub.c (docs/VALIDATION.md 8.5k): ret lies in compiled method n right after a call
 * rel32 to an inline cache stub in buf (the "InlineCacheBuffer" range) whose code is the stub's
 * (mov rax, imm64; jmp), and pc is at one of that stub's instructions (signal_handler.c's and
 * native_below.c's proof of the caller FX_REC_ICSTUB gives). */
bool fx_recover_icstub_called(const struct fx_code_range *buf, const struct fx_code_range *n,
                              uintptr_t pc, uintptr_t ret);

/* recover_mhintr.c (docs/VALIDATION.md 8.5l): r has a method handle intrinsic's layout (an
 * nmethod flagged FX_RANGE_FRAMELESS: frame size 0, level 0); the caller's registers from a pc
 * in one (the code to pc decoded, no push: the return address at sp), FX_REC_MH_INTRINSIC or
 * why not; ret lies in compiled method n right after a call rel32 to mh's entry. */
bool fx_recover_mh_shape(const struct fx_code_range *r);
int fx_recover_mh_intrinsic(const struct fx_code_range *r, const struct fx_regs *in, uintptr_t lo,
                            uintptr_t hi, struct fx_regs *out);
bool fx_recover_mh_called(const struct fx_code_range *mh, const struct fx_code_range *n,
                          uintptr_t ret);

/* Caller registers from a pc in an AdapterBlob (recover_adapter.c, docs/VALIDATION.md 8.5b). */
int fx_recover_adapter(const struct fx_code_range *r, const struct fx_regs *in, uintptr_t lo,
                       uintptr_t hi, struct fx_regs *out);

#endif
