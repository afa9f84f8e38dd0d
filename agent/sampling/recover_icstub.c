/* SPDX-License-Identifier: Apache-2.0 */
/* The rule for a pc in an inline cache stub (issue 32, docs/VALIDATION.md 8.5k): JDK 17's HotSpot
 * moves a compiled call site's inline cache to a new state (monomorphic to megamorphic,
 * ...) through an ICStub in the "InlineCacheBuffer" blob when it cannot patch the call in place
 * (icBuffer.cpp, CompiledIC): the call instruction (call rel32, NativeCall) is pointed at the
 * stub's code, which until the next safepoint loads the cached value and jumps on to the
 * callee's entry (icBuffer_x86.cpp: mov rax, imm64; then jmp rel32, or mov r10, imm64; jmp r10
 * when the entry is far). Two or three instructions, none of which touches rsp, no frame: at
 * each of them the return address of the call that entered is at [rsp], as in a vtable stub
 * (recover.c gives that caller, FX_REC_ICSTUB). AsyncGetCallTrace refuses such a pc (a
 * BufferBlob, not a frame it walks), 0.7-2.5 % of Numbers' samples on JDK 17 (session 22).
 * The caller is kept only when proven here: the return address lies right after a call rel32
 * in a current compiled method whose target is a stub of this buffer holding exactly that
 * code, and the pc is at one of the stub's instruction starts. Signal path: compiled with the
 * handler's flags and under its symbol allow-list; pure (tests: unit.recover_icstub). */
#include <string.h>

#include "recover_x86.h"

/* The instruction starts of the IC stub at t in buf: t, after mov rax, imm64 (48 B8), and
 * after mov r10, imm64 (49 BA) when the jump is far; 0 if t does not hold such a stub. */
static unsigned icstub_points(const struct fx_code_range *buf, uintptr_t t, uintptr_t pts[3])
{
    if (!fx_recover_in(buf, t, 15))
        return 0;
    const uint8_t *b = fx_recover_code(t);
    if (b[0] != 0x48 || b[1] != 0xB8)
        return 0;
    pts[0] = t;
    pts[1] = t + 10;
    if (b[10] == 0xE9) /* jmp rel32 */
        return 2;
    if (!fx_recover_in(buf, t, 23) || b[10] != 0x49 || b[11] != 0xBA || b[20] != 0x41 ||
        b[21] != 0xFF || b[22] != 0xE2) /* mov r10, imm64; jmp r10 */
        return 0;
    pts[2] = t + 20;
    return 3;
}

bool fx_recover_icstub_called(const struct fx_code_range *buf, const struct fx_code_range *n,
                              uintptr_t pc, uintptr_t ret)
{
    if (ret < n->begin + 5 || !fx_recover_in(n, ret - 5, 5))
        return false;
    const uint8_t *c = fx_recover_code(ret - 5);
    if (c[0] != 0xE8) /* an inline cache's call is always call rel32 (NativeCall) */
        return false;
    int32_t rel;
    memcpy(&rel, c + 1, sizeof(rel));
    uintptr_t t = ret + (uintptr_t)(intptr_t)rel, pts[3];
    unsigned k = icstub_points(buf, t, pts);
    for (unsigned i = 0; i < k; i++)
        if (pc == pts[i])
            return true;
    return false;
}
