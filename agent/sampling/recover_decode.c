/* SPDX-License-Identifier: Apache-2.0 */
/* The x86-64 decoding the recovery rules share (recover.c, recover_adapter.c): HotSpot's
 * alignment nops, the head every decoder starts with, and the length of a ModRM operand. Signal
 * path: compiled with the handler's flags and under its symbol allow-list. */
#include "recover_x86.h"

/* Length of a HotSpot alignment nop at p (MacroAssembler::nop(int) on x86-64 with
 * UseAddressNop: 90, 66 90, 0F 1F /0 with its address forms, any number of 66 prefixes), or 0
 * if p holds no nop. */
unsigned fx_recover_nop_len(const struct fx_code_range *r, uintptr_t p)
{
    unsigned pre = 0;
    while (pre < 4 && fx_recover_in(r, p + pre, 1) && fx_recover_code(p)[pre] == 0x66)
        pre++;
    if (!fx_recover_in(r, p + pre, 1))
        return 0;
    const uint8_t *b = fx_recover_code(p + pre);
    if (b[0] == 0x90)
        return pre + 1;
    if (b[0] != 0x0F || !fx_recover_in(r, p + pre, 3) || b[1] != 0x1F)
        return 0;
    uint8_t modrm = b[2];
    if ((modrm & 0x38) != 0) /* /0 only */
        return 0;
    unsigned len = 3, mod = modrm >> 6, rm = modrm & 7;
    if (mod == 3)
        return 0;
    if (rm == 4)
        len++; /* SIB */
    if (mod == 1)
        len += 1;
    else if (mod == 2)
        len += 4;
    else if (rm == 5)
        return 0; /* rip-relative: HotSpot's nops never use it */
    return fx_recover_in(r, p + pre, len) ? pre + len : 0;
}

/* The shared head of the decoders: the length of an alignment nop at p (then *b is NULL), else
 * 0 with *b the code bytes at p, or NULL if p is outside the range. */
unsigned fx_recover_head(const struct fx_code_range *r, uintptr_t p, const uint8_t **b)
{
    unsigned n = fx_recover_nop_len(r, p);
    *b = n == 0 && fx_recover_in(r, p, 1) ? fx_recover_code(p) : NULL;
    return n;
}

/* Length of a ModRM operand (ModRM byte, SIB, displacement) at b, 0 if it does not fit in avail
 * bytes. */
unsigned fx_recover_modrm_len(const uint8_t *b, uintptr_t avail)
{
    if (avail < 1)
        return 0;
    unsigned mod = b[0] >> 6, rm = b[0] & 7, len = 1;
    if (mod != 3 && rm == 4) {
        if (avail < 2)
            return 0;
        len++;
        if (mod == 0 && (b[1] & 7) == 5)
            len += 4; /* SIB without base: disp32 */
    }
    if (mod == 0 && rm == 5)
        len += 4; /* rip + disp32 */
    else if (mod == 1)
        len += 1;
    else if (mod == 2)
        len += 4;
    return len <= avail ? len : 0;
}
