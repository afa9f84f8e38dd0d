/* SPDX-License-Identifier: Apache-2.0 */
/* The rule for a pc in a method handle intrinsic (issue 32, docs/VALIDATION.md 8.5l): HotSpot
 * compiles MethodHandle.invokeBasic and linkTo{Static,Special,Virtual,Interface,Native} into
 * nmethods of their own (SharedRuntime::generate_native_wrapper's first branch,
 * gen_special_dispatch), which only move arguments into registers, load the target Method*
 * (through the MemberName, or the receiver's LambdaForm) and jump to its compiled entry
 * (MethodHandles::jump_from_method_handle), or to an error stub: no push, no call, no rsp
 * arithmetic, the stack arguments read at [rsp + 8 + n]. So at every pc the return address of
 * the call that entered is at [rsp], as in a vtable stub. HotSpot marks the frame never
 * complete (frame complete offset at the code's end, frame size 0), and AsyncGetCallTrace fails
 * there (-5): javac's main thread had ~11 such samples in 7 runs (session 24). Known by the
 * layout codemap.c read (FX_RANGE_FRAMELESS on an nmethod): frame size 0 (any Java method's and
 * native wrapper's frame holds at least the return address and rbp), level 0, not OSR. The
 * caller is kept only when proven: the code from its first byte (its entry: no inline cache
 * check) to pc decodes to instruction starts with no push, and the return address lies right
 * after a call rel32 to that first byte in a current compiled method.
 * Signal path: compiled with the handler's flags and under its symbol allow-list; pure (tests:
 * unit.recover_mhintr). */
#include "recover_x86.h"

/* The largest such nmethod decoded (linkToInterface's itable scan is the longest, ~100 bytes). */
#define FX_MH_DECODE_MAX 512u

bool fx_recover_mh_shape(const struct fx_code_range *r)
{
    return r->kind == FX_BLOB_NMETHOD && (r->flags & FX_RANGE_FRAMELESS) &&
           !(r->flags & FX_RANGE_OSR) && r->frame_words == 0 && r->level == 0;
}

int fx_recover_mh_intrinsic(const struct fx_code_range *r, const struct fx_regs *in, uintptr_t lo,
                            uintptr_t hi, struct fx_regs *out)
{
    uintptr_t p = r->begin;
    if (in->pc < p || in->pc >= r->end || in->pc - p > FX_MH_DECODE_MAX ||
        (r->stubs != 0 && in->pc >= r->begin + r->stubs))
        return FX_REC_DECODE;
    while (p < in->pc) {
        bool push = false;
        unsigned n = fx_x86_len(fx_recover_code(p), r->end - p, &push);
        if (n == 0 || push)
            return FX_REC_DECODE;
        p += n;
    }
    if (p != in->pc)
        return FX_REC_DECODE;
    uintptr_t ret;
    if (!fx_recover_stack_word(lo, hi, in->sp, &ret))
        return FX_REC_STACK;
    *out = (struct fx_regs){.pc = ret, .sp = in->sp + 8, .fp = in->fp, .gpr = NULL};
    return FX_REC_MH_INTRINSIC;
}

bool fx_recover_mh_called(const struct fx_code_range *mh, const struct fx_code_range *n,
                          uintptr_t ret)
{
    if (!fx_recover_mh_shape(mh) || ret < n->begin + 5 || !fx_recover_in(n, ret - 5, 5))
        return false;
    const uint8_t *c = fx_recover_code(ret - 5);
    int32_t rel;
    memcpy(&rel, c + 1, sizeof(rel));
    return c[0] == 0xE8 && ret + (uintptr_t)(intptr_t)rel == mh->begin;
}
