/* SPDX-License-Identifier: Apache-2.0 */
/* The rule for a pc in an rbp-framed stub (issue 32 item 4, docs/VALIDATION.md 8.5d): the
 * StubRoutines stubs compiled code calls as leaf calls (arraycopy, CRC32/Adler32, MD5/SHA,
 * Base64, ...) begin with MacroAssembler::enter (push rbp; mov rbp, rsp: "required for proper
 * stackwalking of RuntimeStub frame" in stubGenerator_x86_64*.cpp) and end with leave; ret, and
 * keep rbp as their frame pointer in between; C1's g1_post_barrier_slow is built the same way
 * (StubAssembler::prologue / epilogue). So the return address is at [sp] at the entry and at the
 * ret, [sp + 8] after the push, and [rbp + 8] in the body. A stub's caller is then proved two
 * more ways before anything is kept: the return address must lie in a current compiled method
 * right after a call instruction (fx_recover_after_call), and AsyncGetCallTrace must walk from
 * there. Signal path: compiled with the handler's flags and under its symbol allow-list. */
#include <string.h>

#include "recover_x86.h"

/* A stub's frame is a few saved registers and, in the digest stubs, a message schedule of a
 * few hundred bytes: an rbp further above sp than this is not one. */
#define FRAME_MAX 4096

/* push rbp; then mov rbp, rsp in either of its encodings (48 89 E5 / 48 8B EC) at `at` */
static bool enter_at(const struct fx_code_range *r, uintptr_t at)
{
    if (!fx_recover_in(r, at, 4))
        return false;
    const uint8_t *b = fx_recover_code(at);
    return b[0] == 0x55 && b[1] == 0x48 &&
           ((b[2] == 0x89 && b[3] == 0xE5) || (b[2] == 0x8B && b[3] == 0xEC));
}

/* The head's length before enter: 0, or 3 where the stub first saves its count in r11 (mov r11,
 * rdx: 4C 8B DA or 49 89 D3; JDK 25's fill stubs, generate_fill, session 24), which moves no
 * stack; -1 for no such head. */
static int enter_offset(const struct fx_code_range *r)
{
    if (enter_at(r, r->begin))
        return 0;
    if (!fx_recover_in(r, r->begin, 3))
        return -1;
    const uint8_t *b = fx_recover_code(r->begin);
    bool mov = (b[0] == 0x4C && b[1] == 0x8B && b[2] == 0xDA) ||
               (b[0] == 0x49 && b[1] == 0x89 && b[2] == 0xD3);
    return mov && enter_at(r, r->begin + 3) ? 3 : -1;
}

int fx_recover_rbp_frame(const struct fx_code_range *r, const struct fx_regs *in, uintptr_t lo,
                         uintptr_t hi, struct fx_regs *out)
{
    int h = enter_offset(r);
    if (h < 0 || !fx_recover_in(r, in->pc, 1))
        return FX_REC_STUB;
    uintptr_t e, fp = in->fp, push = r->begin + (uintptr_t)h;
    if (in->pc == r->begin || in->pc == push || fx_recover_code(in->pc)[0] == 0xC3)
        e = in->sp; /* at entry, at the push (the mov before it moves no stack), or at ret */
    else if (in->pc == push + 1) /* after push rbp */
        e = in->sp + 8;
    else if (in->pc >= push + 4) { /* the frame: rbp + 8 is the slot, [rbp] the caller's rbp */
        if (in->fp < in->sp || in->fp - in->sp > FRAME_MAX)
            return FX_REC_STACK; /* rbp below sp or far above it: not this stub's frame */
        e = in->fp + 8;
        if (!fx_recover_stack_word(lo, hi, in->fp, &fp))
            return FX_REC_STACK;
    } else
        return FX_REC_DECODE; /* inside mov rbp, rsp, or inside the mov before the push */
    uintptr_t ret;
    if (!fx_recover_stack_word(lo, hi, e, &ret))
        return FX_REC_STACK;
    out->pc = ret;
    out->sp = e + 8;
    out->fp = fp;
    return FX_REC_STUB_FRAME;
}

/* The forms compiled code calls a stub with: call rel32 (E8, C1 and near targets), and
 * mov r10, imm64; call r10 (41 FF D2, C2's Java_To_Runtime and far targets); also call r/m64
 * through another register (FF D0+r, 41 FF D0+r). */
bool fx_recover_after_call(const struct fx_code_range *n, uintptr_t ret)
{
    if (ret < n->begin + 5 || !fx_recover_in(n, ret - 5, 5))
        return false;
    const uint8_t *b = fx_recover_code(ret - 5);
    if (b[0] == 0xE8)
        return true;
    if (b[2] == 0x41 && b[3] == 0xFF && (b[4] & 0xF8) == 0xD0)
        return true;
    return b[3] == 0xFF && (b[4] & 0xF8) == 0xD0 && (b[4] & 7) != 4;
}

/* Where the call right before ret went, for the two forms with a target in the instruction:
 * call rel32, and mov r10, imm64 (49 BA); call r10. False for a call through a register
 * loaded elsewhere: its target cannot be read here. */
bool fx_recover_call_target(const struct fx_code_range *n, uintptr_t ret, uintptr_t *target)
{
    if (ret >= n->begin + 5 && fx_recover_in(n, ret - 5, 5)) {
        const uint8_t *b = fx_recover_code(ret - 5);
        if (b[0] == 0xE8) {
            int32_t rel;
            memcpy(&rel, b + 1, sizeof(rel));
            *target = ret + (uintptr_t)(intptr_t)rel;
            return true;
        }
    }
    if (ret < n->begin + 13 || !fx_recover_in(n, ret - 13, 13))
        return false;
    const uint8_t *b = fx_recover_code(ret - 13);
    if (b[0] != 0x49 || b[1] != 0xBA || b[10] != 0x41 || b[11] != 0xFF || b[12] != 0xD2)
        return false;
    memcpy(target, b + 2, sizeof(*target));
    return true;
}

/* N's caller at a call in N's body (fx_recover.h; docs/VALIDATION.md 8.5d, partial stacks) */
int fx_recover_compiled_sender(const struct fx_code_range *n, uintptr_t sp, uintptr_t lo,
                               uintptr_t hi, struct fx_regs *out)
{
    if (n->kind != FX_BLOB_NMETHOD || n->frame_words < 2)
        return FX_REC_LAYOUT;
    if (hi <= lo || sp < lo || sp >= hi || (uintptr_t)n->frame_words > (hi - sp) / 8)
        return FX_REC_STACK;
    uintptr_t sender = sp + (uintptr_t)n->frame_words * 8;
    if (!fx_recover_stack_word(lo, hi, sender - 8, &out->pc) ||
        !fx_recover_stack_word(lo, hi, sender - 16, &out->fp))
        return FX_REC_STACK;
    out->sp = sender;
    out->gpr = NULL;
    return FX_REC_STUB_PARTIAL;
}
