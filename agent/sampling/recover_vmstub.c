/* SPDX-License-Identifier: Apache-2.0 */
/* The step over a stub the VM called from C++ (issue 32, session 26, docs/VALIDATION.md 8.5h):
 * a StubRoutines stub on top while the thread's anchor holds a last Java frame
 * (fx_recover_vm_stub_top) was called by libjvm, not by Java code, and its caller is a C++
 * frame. Two such stubs are stepped, each by a rule that proves the return address:
 *  - ICache's flush_icache_stub (ICache::invalidate_range calls it while a call site is
 *    patched): frameless. Its bytes are decoded once when the stub is posted (off the signal
 *    path, fx_recover_vmstub_ret): every instruction before its first ret must be one of the few
 *    the x86-64 generator emits (test, jcc, the fences, clflush/clflushopt, add/dec/mov of a
 *    register other than rsp), none of which changes rsp; so at every pc up to that ret the
 *    return address is at [rsp]. The offset past the ret is kept in the range's `stubs` (unused
 *    for a stub otherwise); 0 (not proven, another JDK's code) keeps the stop;
 *  - an arraycopy stub (JDK 17's Unsafe_CopyMemory0 calls unsafe_arraycopy's from C++): its rbp
 *    frame, as 8.5d proves it for a compiled caller (fx_recover_rbp_frame).
 * The caller found must then be native code (native_below.c checks it is outside the code table
 * and native_walk.c that it lies in a file mapping), where the native walk goes on.
 * Tests: unit.recover_vmstub. */

#include "recover_anchor.h"
#include "recover_x86.h"

/* An x86-64 register operand (ModRM mod 3) whose register is not rsp (r/m 4 without REX.B). */
static bool reg_not_rsp(uint8_t modrm, bool rex_b)
{
    return (modrm >> 6) == 3 && ((modrm & 7) != 4 || rex_b);
}

/* name is "flush_icache_stub" (this object is on the signal path's allow-list: no strcmp) */
static bool flush_name(const char *name)
{
    const char *want = "flush_icache_stub";
    size_t i = 0;
    for (; want[i] != '\0'; i++)
        if (name[i] != want[i])
            return false;
    return name[i] == '\0';
}

uint32_t fx_recover_vmstub_ret(const char *name, const uint8_t *code, size_t len)
{
    if (name == NULL || code == NULL || !flush_name(name))
        return 0;
    for (size_t i = 0; i < len && i < 256;) {
        size_t p = i;
        bool rex_b = false, rex = false;
        if (code[p] == 0x66 && p + 1 < len) /* clflushopt's prefix */
            p++;
        if ((code[p] & 0xF0) == 0x40 && p + 1 < len) { /* REX */
            rex = true;
            rex_b = (code[p] & 1) != 0;
            p++;
        }
        uint8_t op = code[p];
        size_t left = len - p;
        if (op == 0xC3 && p == i) /* ret: the return address still at [rsp] */
            return (uint32_t)(i + 1);
        if (op >= 0x70 && op <= 0x7F && left >= 2) { /* jcc rel8 */
            i = p + 2;
        } else if (op == 0x85 && left >= 2 && (code[p + 1] >> 6) == 3) { /* test reg, reg */
            i = p + 2;
        } else if (op == 0x0F && left >= 6 && code[p + 1] >= 0x80 && code[p + 1] <= 0x8F) {
            i = p + 6; /* jcc rel32 */
        } else if (op == 0x0F && left >= 3 && code[p + 1] == 0xAE &&
                   (code[p + 2] == 0xF0 || code[p + 2] == 0xE8 || code[p + 2] == 0xF8)) {
            i = p + 3; /* mfence, lfence, sfence */
        } else if (op == 0x0F && left >= 3 && code[p + 1] == 0xAE &&
                   ((code[p + 2] >> 3) & 7) == 7 && (code[p + 2] >> 6) != 3 &&
                   (code[p + 2] & 7) != 4 && !((code[p + 2] >> 6) == 0 && (code[p + 2] & 7) == 5)) {
            /* clflush(opt) [reg] or [reg + disp8/32]: a memory operand, no SIB, no rip */
            uint8_t mod = code[p + 2] >> 6;
            i = p + 3 + (mod == 1 ? 1 : mod == 2 ? 4 : 0);
        } else if (op == 0x83 && left >= 3 && reg_not_rsp(code[p + 1], rex_b) &&
                   (((code[p + 1] >> 3) & 7) == 0 || ((code[p + 1] >> 3) & 7) == 5)) {
            i = p + 3; /* add/sub reg, imm8 */
        } else if (op == 0xFF && left >= 2 && reg_not_rsp(code[p + 1], rex_b) &&
                   ((code[p + 1] >> 3) & 7) <= 1) {
            i = p + 2; /* inc/dec reg */
        } else if (op == 0x8B && rex && left >= 2 && (code[p + 1] >> 6) == 3 &&
                   (((code[p + 1] >> 3) & 7) != 4 || (code[p - 1] & 4) != 0)) {
            i = p + 2; /* mov reg, reg: the destination (ModRM reg, REX.R) not rsp */
        } else {
            return 0; /* anything else: not the stub this rule knows */
        }
        if (i > len)
            return 0;
    }
    return 0;
}

int fx_recover_vm_stub_step(const struct fx_code_range *r, const struct fx_regs *in, uintptr_t lo,
                            uintptr_t hi, struct fx_regs *out)
{
    if (r == NULL || r->kind != FX_BLOB_STUB || hi <= lo || in->sp < lo || in->sp > hi - 8 ||
        (in->sp & 7) != 0)
        return FX_REC_STUB;
    if (r->arraycopy == FX_STUB_ARRAYCOPY)
        return fx_recover_rbp_frame(r, in, lo, hi, out);
    if (r->stubs == 0 || in->pc < r->begin || in->pc >= r->begin + r->stubs)
        return FX_REC_STUB; /* not proven frameless there (past its ret, or not decoded) */
    uintptr_t ret;
    if (!fx_recover_stack_word(lo, hi, in->sp, &ret))
        return FX_REC_STACK;
    *out = (struct fx_regs){.pc = ret, .sp = in->sp + 8, .fp = in->fp, .gpr = NULL};
    return FX_REC_STUB_FRAME;
}
