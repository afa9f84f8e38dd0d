/* SPDX-License-Identifier: Apache-2.0 */
/* The adapter rule of stack recovery (docs/VALIDATION.md 8.5b): a decoder of the x86-64 subset
 * HotSpot's I2C/C2I adapters use, and what each instruction does to rsp, the return address
 * slot and the registers that hold it. Signal path: compiled with the handler's flags and under
 * its symbol allow-list. */
#include <string.h>

#include "recover_x86.h"

/* Does the one-byte opcode (or 0x100 | 0F-map opcode) take a ModRM byte, and how many immediate
 * bytes follow it (imm64 of movabs is decided by the caller)? Unknown opcodes: false. */
static bool fx_recover_opcode(uint16_t op, bool *modrm, unsigned *imm)
{
    *modrm = false;
    *imm = 0;
    if ((op >= 0x50 && op <= 0x5F) || op == 0x9C)
        return true;
    if (op >= 0xB8 && op <= 0xBF)
        return (*imm = 4, true);
    if ((op >= 0x70 && op <= 0x7F) || op == 0xEB || op == 0x6A) /* 6A: push imm8 */
        return (*imm = 1, true);
    if (op == 0xE9 || (op >= 0x180 && op <= 0x18F) || op == 0x68) /* 68: push imm32 */
        return (*imm = 4, true);
    if (op >= 0x140 && op <= 0x14F) /* cmovcc (recover_subtype.c; the adapters' rule refuses) */
        return (*modrm = true);
    switch (op) {
    case 0x01:
    case 0x03:
    case 0x21:
    case 0x23:
    case 0x2B:
    case 0x31:
    case 0x33:
    case 0x39:
    case 0x3B:
    case 0x85:
    case 0x89:
    case 0x8B:
    case 0x8D:
    case 0xFF:
    case 0x110:
    case 0x111:
    case 0x1B6:
    case 0x1B7:
    case 0x8A: /* the next four: recover_subtype.c's; the adapters' rule refuses them */
    case 0xD1:
    case 0xD3:
    case 0x1B8:
        return (*modrm = true);
    case 0x80:
    case 0x83:
    case 0xC1:
    case 0xF6:
    case 0x1BA: /* bt group (recover_subtype.c) */
        return (*modrm = true, *imm = 1, true);
    case 0x81:
    case 0xC7:
    case 0xF7:
        return (*modrm = true, *imm = 4, true);
    default:
        return false;
    }
}

/* Decodes the instruction at p (inside r) into *x; false if it is not in the subset: legacy
 * 66/F2/F3 prefixes, REX, two- and three-byte VEX of the 0F map (no EVEX), the opcodes of
 * fx_recover_opcode, memory operands with base, index and displacement. */
bool fx_recover_insn(const struct fx_code_range *r, uintptr_t p, struct fx_insn *x)
{
    uintptr_t avail = r->end - p, i = 0;
    const uint8_t *b = fx_recover_code(p);
    uint8_t rex = 0;
    bool map0f = false, vex = false;
    memset(x, 0, sizeof(*x));
    x->base = -1;
    while (i < avail && i < 3 && (b[i] == 0x66 || b[i] == 0xF2 || b[i] == 0xF3))
        x->pfx = b[i++];
    if (i + 3 <= avail && (b[i] == 0xC5 || b[i] == 0xC4) && x->pfx == 0) {
        static const uint8_t pp[4] = {0, 0x66, 0xF3, 0xF2};
        uint8_t v1 = b[i + 1], v2 = v1;
        if (b[i] == 0xC4) {
            if ((v1 & 0x1F) != 1)
                return false; /* only the 0F map */
            v2 = b[i + 2];
            rex = (uint8_t)(0x40 | ((v2 & 0x80) ? 8 : 0) | ((~v1 >> 5) & 7));
            i += 3;
        } else {
            rex = (uint8_t)(0x40 | ((~v1 >> 5) & 4));
            i += 2;
        }
        x->pfx = pp[v2 & 3];
        map0f = vex = true;
    } else if (i < avail && (b[i] & 0xF0) == 0x40) {
        rex = b[i++];
    }
    if (i >= avail)
        return false;
    uint16_t op = b[i++];
    if (!map0f && op == 0x0F) {
        if (i >= avail)
            return false;
        map0f = true;
        op = b[i++];
    } else if (vex && op != 0x10 && op != 0x11) {
        return false; /* VEX: only vmovss / vmovsd */
    }
    x->op = map0f ? (uint16_t)(0x100 | op) : op;
    x->w = (rex & 8) != 0;
    bool modrm;
    unsigned imm;
    if (!fx_recover_opcode(x->op, &modrm, &imm))
        return false;
    if ((x->op >= 0x50 && x->op <= 0x5F) || (x->op >= 0xB8 && x->op <= 0xBF))
        x->reg = (unsigned)((rex & 1) << 3) | (op & 7);
    if (x->op >= 0xB8 && x->op <= 0xBF && x->w)
        imm = 8;
    if (modrm) {
        unsigned m = fx_recover_modrm_len(b + i, avail - i);
        if (m == 0)
            return false;
        uint8_t mr = b[i];
        unsigned mod = mr >> 6, rm = mr & 7;
        x->reg = (unsigned)((rex & 4) << 1) | ((mr >> 3) & 7);
        if (mod == 3) {
            x->rm = (unsigned)((rex & 1) << 3) | rm;
        } else {
            x->mem = true;
            const uint8_t *d = b + i + 1;
            if (rm == 4) {
                uint8_t sib = *d++;
                unsigned idx = (unsigned)((rex & 2) << 2) | ((sib >> 3) & 7);
                x->index = idx != 4;
                if (!(mod == 0 && (sib & 7) == 5))
                    x->base = (int)(((rex & 1) << 3) | (sib & 7));
            } else if (!(mod == 0 && rm == 5)) {
                x->base = (int)(((rex & 1) << 3) | rm);
            }
            if (mod == 1)
                x->disp = (int8_t)d[0];
            else if (mod == 2 || (mod == 0 && (rm == 5 || (rm == 4 && x->base < 0))))
                x->disp = fx_recover_i32(d);
        }
        i += m;
    }
    if (i + imm > avail)
        return false;
    if (imm == 1)
        x->imm = (int8_t)b[i];
    else if (imm == 4)
        x->imm = fx_recover_i32(b + i);
    else if (imm == 8)
        x->imm = (int64_t)((uint64_t)(uint32_t)fx_recover_i32(b + i) |
                           (uint64_t)(uint32_t)fx_recover_i32(b + i + 4) << 32);
    x->len = (unsigned)(i + imm);
    return true;
}

/* What the adapter decoder knows at a point of the code, relative to E, the address of the
 * return address slot at the adapter's entry (the caller's sp is E + 8). */
struct fx_adapter {
    uint16_t known; /* registers whose value is E + off[reg] */
    uint16_t ret;   /* registers that hold the return address */
    int32_t off[16];
    bool bounded; /* rsp is not known exactly, but rsp <= E + bound (and rsp and-ed down) */
    bool bound8;  /* and then rsp - E is a multiple of 8 */
    int32_t bound;
    bool slot; /* [E, E + 8) still holds the return address */
    bool rbp;  /* rbp is still the caller's */
};

#define FX_RSP      4
#define FX_BIT(reg) ((uint16_t)(1u << (reg)))

/* At an entry (the caller's call just happened): [rsp] is the return address. */
static void fx_adapter_entry(struct fx_adapter *a)
{
    memset(a, 0, sizeof(*a));
    a->known = FX_BIT(FX_RSP);
    a->slot = a->rbp = true;
}

/* reg gets a value the decoder does not follow. false: that would lose rsp. */
static bool fx_adapter_kill(struct fx_adapter *a, unsigned reg)
{
    if (reg == FX_RSP)
        return false;
    a->known &= (uint16_t)~FX_BIT(reg);
    a->ret &= (uint16_t)~FX_BIT(reg);
    a->rbp = a->rbp && reg != 5;
    return true;
}

static bool fx_adapter_rsp_add(struct fx_adapter *a, int64_t delta)
{
    if (delta < -(1 << 20) || delta > (1 << 20))
        return false;
    if (a->known & FX_BIT(FX_RSP))
        a->off[FX_RSP] += (int32_t)delta;
    else if (a->bounded) {
        a->bound += (int32_t)delta;
        a->bound8 = a->bound8 && delta % 8 == 0;
    } else
        return false;
    return true;
}

/* A store of size bytes to [base + disp] (src: the stored register, -1 if none): the slot
 * stays valid only if the store provably misses it, or writes the return address back into it. */
static void fx_adapter_store(struct fx_adapter *a, int base, bool index, int32_t disp,
                             unsigned size, int src)
{
    if (base == 15 && !index)
        return; /* r15 is the JavaThread in Java code and adapters: thread memory, not the stack */
    int64_t at;
    if (base >= 0 && !index && (a->known & FX_BIT(base))) {
        at = (int64_t)a->off[base] + disp;
    } else if (base == FX_RSP && !index && a->bounded) {
        /* Below the slot; or, E being 8-aligned, either the slot itself or clear of it, and
         * then it writes the return address back (the i2c's push rax when the and changed
         * nothing). */
        bool same = a->bound8 && disp % 8 == 0 && size == 8 && src >= 0 && (a->ret & FX_BIT(src));
        if ((int64_t)a->bound + disp + size > 0 && !same)
            a->slot = false;
        return;
    } else {
        a->slot = false;
        return;
    }
    if (at + (int64_t)size <= 0 || at >= 8)
        return;
    a->slot = at == 0 && size == 8 && src >= 0 && (a->ret & FX_BIT(src));
}

/* reg = [base + disp] (8 bytes when full): the return address if that is the intact slot. */
static bool fx_adapter_load(struct fx_adapter *a, const struct fx_insn *x, unsigned reg, bool full)
{
    bool is_ret = full && a->slot && x->base >= 0 && !x->index && (a->known & FX_BIT(x->base)) &&
                  (int64_t)a->off[x->base] + x->disp == 0;
    if (!fx_adapter_kill(a, reg))
        return false;
    if (is_ret)
        a->ret |= FX_BIT(reg);
    return true;
}

/* dst = src, 64 bits. */
static bool fx_adapter_copy(struct fx_adapter *a, unsigned dst, unsigned src)
{
    if (dst == src)
        return true;
    bool known = (a->known & FX_BIT(src)) != 0, ret = (a->ret & FX_BIT(src)) != 0;
    int32_t off = a->off[src];
    if (dst == FX_RSP) {
        if (!known)
            return false;
        a->bounded = false;
    } else if (!fx_adapter_kill(a, dst)) {
        return false;
    }
    if (known) {
        a->known |= FX_BIT(dst);
        a->off[dst] = off;
    }
    if (ret)
        a->ret |= FX_BIT(dst);
    return true;
}

/* The effect of one non-branch instruction; false if the decoder cannot follow it. */
static bool fx_adapter_apply(struct fx_adapter *a, const struct fx_insn *x)
{
    unsigned size = x->w ? 8 : 4, grp = x->reg & 7;
    switch (x->op) {
    case 0x9C: /* pushf */
    case 0x50:
    case 0x51:
    case 0x52:
    case 0x53:
    case 0x54:
    case 0x55:
    case 0x56:
    case 0x57:
    case 0x58:
    case 0x59:
    case 0x5A:
    case 0x5B:
    case 0x5C:
    case 0x5D:
    case 0x5E:
    case 0x5F:
        if (x->op == 0x9C || x->op < 0x58) { /* push */
            if (!fx_adapter_rsp_add(a, -8))
                return false;
            fx_adapter_store(a, FX_RSP, false, 0, 8, x->op == 0x9C ? -1 : (int)x->reg);
            return true;
        } else { /* pop */
            bool is_ret = a->slot && (a->known & FX_BIT(FX_RSP)) && a->off[FX_RSP] == 0;
            if (!fx_adapter_kill(a, x->reg))
                return false;
            if (is_ret)
                a->ret |= FX_BIT(x->reg);
            return fx_adapter_rsp_add(a, 8);
        }
    case 0x89: /* mov r/m, r */
        if (x->mem) {
            fx_adapter_store(a, x->base, x->index, x->disp, size, (int)x->reg);
            return true;
        }
        return x->w ? fx_adapter_copy(a, x->rm, x->reg) : fx_adapter_kill(a, x->rm);
    case 0x8B: /* mov r, r/m */
        if (x->mem)
            return fx_adapter_load(a, x, x->reg, x->w);
        return x->w ? fx_adapter_copy(a, x->reg, x->rm) : fx_adapter_kill(a, x->reg);
    case 0x8D: /* lea r, [base + disp] */
        if (!x->mem)
            return false;
        if (x->w && x->base >= 0 && !x->index && (a->known & FX_BIT(x->base))) {
            int32_t off = a->off[x->base] + x->disp;
            if (x->reg == FX_RSP)
                a->bounded = false;
            else if (!fx_adapter_kill(a, x->reg))
                return false;
            a->known |= FX_BIT(x->reg);
            a->off[x->reg] = off;
            return true;
        }
        return fx_adapter_kill(a, x->reg);
    case 0x1B6: /* movzx r, r/m8 */
    case 0x1B7: /* movzx r, r/m16 */
    case 0x03:  /* add r, r/m */
    case 0x23:  /* and r, r/m */
    case 0x33:  /* xor r, r/m */
        return fx_adapter_kill(a, x->reg);
    case 0x01: /* add r/m, r */
    case 0x21: /* and r/m, r */
    case 0x31: /* xor r/m, r */
        if (x->mem) {
            fx_adapter_store(a, x->base, x->index, x->disp, size, -1);
            return true;
        }
        return fx_adapter_kill(a, x->rm);
    case 0x39: /* cmp r/m, r */
    case 0x3B: /* cmp r, r/m */
    case 0x85: /* test r/m, r */
        return true;
    case 0x80: /* cmp r/m8, imm8 */
        return grp == 7;
    case 0xF6: /* test r/m8, imm8 */
    case 0xF7: /* test r/m32, imm32 */
        return grp == 0;
    case 0x81:
    case 0x83:
        if (grp == 7) /* cmp */
            return true;
        if (x->mem) { /* read-modify-write of memory */
            fx_adapter_store(a, x->base, x->index, x->disp, size, -1);
            return true;
        }
        if (x->rm == FX_RSP && x->w && (grp == 0 || grp == 5)) /* add / sub rsp, imm */
            return fx_adapter_rsp_add(a, grp == 0 ? x->imm : -x->imm);
        if (x->rm == FX_RSP && x->w && grp == 4 && x->imm < 0) { /* and rsp, -2^k: rsp only drops */
            if (a->known & FX_BIT(FX_RSP)) {
                a->bounded = true;
                a->bound = a->off[FX_RSP];
                a->bound8 = a->bound % 8 == 0 && x->imm <= -8;
                a->known &= (uint16_t)~FX_BIT(FX_RSP);
            }
            return a->bounded;
        }
        if (x->w && (grp == 0 || grp == 5) && (a->known & FX_BIT(x->rm))) {
            a->off[x->rm] += (int32_t)(grp == 0 ? x->imm : -x->imm);
            a->ret &= (uint16_t)~FX_BIT(x->rm);
            return true;
        }
        return fx_adapter_kill(a, x->rm);
    case 0xC1: /* shl / shr r, imm8 */
        return !x->mem && (grp == 4 || grp == 5) && fx_adapter_kill(a, x->rm);
    case 0xC7: /* mov r/m, imm32 */
        if (grp != 0)
            return false;
        if (x->mem) {
            fx_adapter_store(a, x->base, x->index, x->disp, size, -1);
            return true;
        }
        return fx_adapter_kill(a, x->rm);
    case 0x110: /* movss / movsd xmm, m (legacy SSE or VEX) */
    case 0x111: /* movss / movsd m, xmm */
        if (!x->mem || (x->pfx != 0xF2 && x->pfx != 0xF3))
            return false;
        if (x->op == 0x111)
            fx_adapter_store(a, x->base, x->index, x->disp, x->pfx == 0xF3 ? 4 : 8, -1);
        return true;
    default:
        if (x->op >= 0xB8 && x->op <= 0xBF) /* mov r, imm */
            return fx_adapter_kill(a, x->reg);
        return false;
    }
}

/* Caller registers from a pc in an AdapterBlob (docs/VALIDATION.md 8.5b). The blob begins with
 * its i2c adapter (SharedRuntime::generate_i2c2i_adapters), then the c2i unverified entry, the
 * c2i entry and the c2i adapter; each entry is reached by a call (or the interpreter's jump with
 * its return address pushed), so [rsp] is the return address there. The code is decoded from
 * the blob's begin to the pc, following what each instruction does to rsp, to the registers
 * that hold E + k (E: the entry's return address slot) or the return address, and to the slot.
 * Branches: decoding goes on at the next instruction; after an unconditional jump it restarts
 * from the entry state (in an adapter every instruction after one is an entry or a label reached
 * only from points with the entry state); a `je` right after `cmp qword [rbx + d], 0` is taken
 * when the pc is at or past its target (its target is the c2i adapter's skip_fixup, reached
 * with the entry state). A call, an unknown instruction or a pc inside an instruction refuses. */
int fx_recover_adapter(const struct fx_code_range *r, const struct fx_regs *in, uintptr_t lo,
                       uintptr_t hi, struct fx_regs *out)
{
    static const uint8_t i2c17[4] = {0x48, 0x8B, 0x04, 0x24}, i2c21[3] = {0x4C, 0x8B, 0xDC};
    if (!(fx_recover_in(r, r->begin, 4) && memcmp(fx_recover_code(r->begin), i2c17, 4) == 0) &&
        !(fx_recover_in(r, r->begin, 3) && memcmp(fx_recover_code(r->begin), i2c21, 3) == 0))
        return FX_REC_DECODE; /* not an i2c entry: mov rax, [rsp] (JDK 17) / mov r11, rsp */
    struct fx_adapter a;
    fx_adapter_entry(&a);
    uintptr_t p = r->begin;
    bool code_check = false; /* the last instruction was cmp qword [rbx + d], 0 */
    for (unsigned i = 0; i < 1024 && p < in->pc; i++) {
        const uint8_t *b;
        unsigned n = fx_recover_head(r, p, &b);
        if (n > 0) {
            p += n;
            code_check = false;
            continue;
        }
        struct fx_insn x;
        if (b == NULL || !fx_recover_insn(r, p, &x))
            return FX_REC_DECODE;
        p += x.len;
        bool jcc = (x.op >= 0x70 && x.op <= 0x7F) || (x.op >= 0x180 && x.op <= 0x18F);
        if (jcc || x.op == 0xE9 || x.op == 0xEB) {
            uintptr_t target = p + (uintptr_t)x.imm;
            if (code_check && (x.op == 0x74 || x.op == 0x184) && x.imm > 0 && target <= in->pc)
                p = target;
            else if (!jcc)
                fx_adapter_entry(&a);
            code_check = false;
            continue;
        }
        code_check = (x.op == 0x81 || x.op == 0x83) && x.w && x.mem && x.base == 3 && !x.index &&
                     (x.reg & 7) == 7 && x.imm == 0;
        if (x.op == 0xFF) { /* jmp reg: the end of the i2c (then the c2i unverified entry) */
            if ((x.reg & 7) != 4 || x.mem)
                return FX_REC_DECODE;
            fx_adapter_entry(&a);
            continue;
        }
        if (!fx_adapter_apply(&a, &x))
            return FX_REC_DECODE;
    }
    if (p != in->pc)
        return FX_REC_DECODE;
    if (!a.rbp)
        return FX_REC_BODY;
    uintptr_t e = 0;
    bool have = false;
    for (unsigned reg = 0; reg < 16 && !have; reg++) {
        unsigned k = (reg + FX_RSP) & 15; /* rsp first */
        if (!(a.known & FX_BIT(k)))
            continue;
        if (k != FX_RSP && in->gpr == NULL)
            continue;
        e = (k == FX_RSP ? in->sp : in->gpr[k]) - (uintptr_t)(intptr_t)a.off[k];
        have = true;
    }
    if (!have)
        return FX_REC_BODY; /* e.g. the i2c's last two instructions: E is in no register */
    uintptr_t ret;
    if (a.slot) {
        if (!fx_recover_stack_word(lo, hi, e, &ret))
            return FX_REC_STACK;
    } else if (a.ret != 0 && in->gpr != NULL) {
        unsigned k = 0;
        while (!(a.ret & FX_BIT(k)))
            k++;
        ret = in->gpr[k];
        if (e < lo || e >= hi || hi - e < 8 || (e & 7) != 0)
            return FX_REC_STACK;
    } else {
        return FX_REC_BODY;
    }
    out->pc = ret;
    out->sp = e + 8;
    out->fp = in->fp;
    return FX_REC_ADAPTER;
}
