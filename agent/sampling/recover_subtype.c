/* SPDX-License-Identifier: Apache-2.0 */
/* The rule for a pc in C1's slow_subtype_check stub (issue 32, docs/VALIDATION.md 8.5g): a
 * Runtime1 stub without a frame of its own (c1_Runtime1_x86.cpp: push rdi; push rsi; push rcx;
 * push rax; check_klass_subtype_slow_path, which on JDK 23+ also moves rsp to spill temporaries;
 * the result stored over an argument; pop x4; ret, twice), called by C1 code with its two
 * arguments pushed (c1_LIRAssembler_x86.cpp: push; push; call; pop; pop). Where the return
 * address is depends on the pc, so the whole stub is decoded, from its first byte to its end:
 * every instruction must be one the decoder knows (recover_adapter.c's subset and the few more
 * this stub uses), none may write rbp, and rsp may change only by push, pop, add/sub rsp, imm and
 * lea rsp, [rsp + d]; the bytes rsp has moved since the entry are followed along the code (the
 * fall-through, and every jump's target, which must be reached with the same depth from
 * everywhere, and every ret at depth 0). The pc must be an instruction's first byte with a known
 * depth; the return address is then at sp + depth, rbp is the caller's. The caller's side
 * (fx_recover_pushed_return): the call right before the return address goes to this stub, and
 * the two pops right after it, followed by the result's test and a je (C1's type check and
 * store check, not its arraycopy's, which pops twice more), restore the caller's frame base. Signal
 * path: compiled with the handler's flags and under its symbol allow-list. */
#include "recover_x86.h"

/* The stub is ~72 bytes on JDK 17, ~250 on JDK 25: anything longer is not this stub. */
#define STUB_MAX 512
/* Depths are kept as depth / 8 + 1 in a byte (0: no instruction starts there). */
#define DEPTH_MAX (250 * 8)

#define RSP 4
#define RBP 5

/* The depth change of one decoded instruction x (bytes pushed: + deeper); false when x writes
 * rbp, writes rsp other than by the forms above, or is not known here. */
static bool effect(const struct fx_insn *x, int32_t *delta)
{
    unsigned grp = x->reg & 7;
    bool rm_reg = !x->mem, rm_sp = rm_reg && (x->rm == RSP || x->rm == RBP);
    *delta = 0;
    if (x->op >= 0x50 && x->op <= 0x57)
        return (*delta = 8, true); /* push r: reads r */
    if (x->op >= 0x58 && x->op <= 0x5F) {
        *delta = -8;
        return x->reg != RSP && x->reg != RBP;
    }
    if (x->op >= 0xB8 && x->op <= 0xBF) /* mov r, imm */
        return x->reg != RSP && x->reg != RBP;
    if ((x->op >= 0x70 && x->op <= 0x7F) || (x->op >= 0x180 && x->op <= 0x18F) || x->op == 0xEB ||
        x->op == 0xE9 || (x->op >= 0x140 && x->op <= 0x14F && x->reg != RSP && x->reg != RBP))
        return true; /* jcc, jmp (targets followed by the caller), cmovcc r, r/m */
    switch (x->op) {
    case 0x03: /* add r, r/m */
    case 0x23: /* and r, r/m */
    case 0x33: /* xor r, r/m */
    case 0x8A: /* mov r8, r/m8 */
    case 0x8B: /* mov r, r/m */
    case 0x1B6:
    case 0x1B7: /* movzx */
    case 0x1B8: /* popcnt */
        return x->reg != RSP && x->reg != RBP;
    case 0x01: /* add r/m, r */
    case 0x21:
    case 0x31:
    case 0x89: /* mov r/m, r */
    case 0xC1: /* shifts and rotates: by imm8, 1, cl */
    case 0xD1:
    case 0xD3:
        return !rm_sp;
    case 0xC7: /* mov r/m, imm32 */
        return grp == 0 && !rm_sp;
    case 0x39:
    case 0x3B:
    case 0x85: /* cmp, test */
    case 0x110:
    case 0x111: /* movss / movsd */
        return true;
    case 0x80:
        return grp == 7; /* cmp r/m8, imm8 */
    case 0xF6:
    case 0xF7:
        return grp == 0; /* test */
    case 0x1BA:          /* bt (4) reads; bts/btr/btc write r/m */
        return grp == 4 || (grp > 4 && !rm_sp);
    case 0x81:
    case 0x83:
        if (grp == 7 || !rm_sp) /* cmp, or arithmetic on memory or another register */
            return true;
        if (x->rm == RSP && x->w && (grp == 0 || grp == 5)) { /* add / sub rsp, imm */
            *delta = (int32_t)(grp == 0 ? -x->imm : x->imm);
            return x->imm >= 0 && x->imm <= DEPTH_MAX;
        }
        return false;
    case 0x8D: /* lea r, [base + disp] */
        if (x->reg == RBP || !x->mem)
            return false;
        if (x->reg != RSP)
            return true;
        *delta = -x->disp; /* lea rsp, [rsp + d]: releases d bytes */
        return x->w && x->base == RSP && !x->index && x->disp >= 0 && x->disp <= DEPTH_MAX;
    default:
        return false;
    }
}

/* The one-byte forms the shared decoder has no entry for: ret, and scas with its prefixes
 * (F2 REX.W AF: repne scasq). Their length, 0 if neither. */
static unsigned plain(const struct fx_code_range *r, uintptr_t p, bool *ret)
{
    const uint8_t *b = fx_recover_code(p);
    *ret = b[0] == 0xC3;
    if (*ret)
        return 1;
    if (fx_recover_in(r, p, 3) && b[0] == 0xF2 && b[1] == 0x48 && b[2] == 0xAF)
        return 3;
    return 0;
}

/* Records depth d (bytes) for the instruction at offset o; false on a conflict. */
static bool mark(uint8_t *at, uintptr_t o, int32_t d)
{
    if (d < 0 || d > DEPTH_MAX || (d & 7) != 0)
        return false;
    uint8_t v = (uint8_t)(d / 8 + 1);
    if (at[o] != 0 && at[o] != v)
        return false;
    at[o] = v;
    return true;
}

/* Signal-safe: the depth (bytes pushed since the entry) at the instruction at pc, by decoding
 * the stub r from its first byte to its end (see the head of this file); -1 if refused. */
int32_t fx_recover_stub_depth(const struct fx_code_range *r, uintptr_t pc)
{
    uint8_t at[STUB_MAX] = {0};  /* depth / 8 + 1 where an instruction starts */
    uint8_t jmp[STUB_MAX] = {0}; /* depth / 8 + 1 where a jump lands */
    if (r->end <= r->begin || r->end - r->begin > STUB_MAX || pc < r->begin || pc >= r->end)
        return -1;
    uintptr_t p = r->begin;
    int32_t d = 0;
    bool known = true;
    while (p < r->end) {
        uintptr_t o = p - r->begin;
        if (jmp[o] != 0) {
            if (!known)
                d = (jmp[o] - 1) * 8, known = true;
            else if (jmp[o] - 1 != d / 8)
                return -1; /* a label reached at two depths: not code this rule knows */
        }
        const uint8_t *b;
        unsigned n = fx_recover_head(r, p, &b);
        if (n > 0) { /* an alignment nop: after the last ret too, where no depth is known */
            if (known && !mark(at, o, d))
                return -1;
            p += n;
            continue;
        }
        /* code reached by no fall-through nor earlier jump (only a later one): refused */
        if (b == NULL || !known || !mark(at, o, d))
            return -1;
        bool ret = false;
        if ((n = plain(r, p, &ret)) > 0) {
            if (ret && d != 0)
                return -1; /* a ret with the return address not at [rsp] */
            known = !ret;
            p += n;
            continue;
        }
        struct fx_insn x;
        int32_t delta;
        if (!fx_recover_insn(r, p, &x) || !effect(&x, &delta))
            return -1;
        bool jump = x.op == 0xEB || x.op == 0xE9;
        if (jump || (x.op >= 0x70 && x.op <= 0x7F) || (x.op >= 0x180 && x.op <= 0x18F)) {
            uintptr_t t = p + x.len + (uintptr_t)(intptr_t)x.imm, to = t - r->begin;
            if (t < r->begin || t >= r->end)
                return -1; /* leaves the stub: a tail jump this rule does not follow */
            /* backward: to an instruction passed, at this depth; forward: noted for it */
            if (t <= p ? at[to] == 0 || !mark(at, to, d) : !mark(jmp, to, d))
                return -1;
            known = !jump; /* after a jmp: only what a jump reaches */
        }
        d += delta;
        p += x.len;
    }
    if (p != r->end)
        return -1;
    for (uintptr_t o = 0; o < r->end - r->begin; o++)
        if (jmp[o] != 0 && at[o] == 0)
            return -1; /* a jump into the middle of an instruction, or past the decode */
    uint8_t v = at[pc - r->begin];
    return v == 0 ? -1 : (int32_t)(v - 1) * 8;
}

int fx_recover_frameless(const struct fx_code_range *r, const struct fx_regs *in, uintptr_t lo,
                         uintptr_t hi, struct fx_regs *out)
{
    int32_t d = fx_recover_stub_depth(r, in->pc);
    if (d < 0)
        return FX_REC_DECODE;
    uintptr_t ret;
    if (!fx_recover_stack_word(lo, hi, in->sp + (uintptr_t)d, &ret))
        return FX_REC_STACK;
    out->pc = ret;
    out->sp = in->sp + (uintptr_t)d + 8;
    out->fp = in->fp; /* no instruction of the stub writes rbp */
    return FX_REC_FRAMELESS;
}

/* pop r (58+r) or pop r8-r15 (41 58+r) at p, not into rsp: its length, 0 if none. */
static unsigned pop_len(const struct fx_code_range *n, uintptr_t p)
{
    if (!fx_recover_in(n, p, 1))
        return 0;
    const uint8_t *b = fx_recover_code(p);
    if (b[0] >= 0x58 && b[0] <= 0x5F && b[0] != 0x5C)
        return 1;
    return fx_recover_in(n, p, 2) && b[0] == 0x41 && b[1] >= 0x58 && b[1] <= 0x5F ? 2 : 0;
}

/* The result test C1 emits right after the two pops: cmp r32, 0 (83 /7 00) or test r32, r32 (85
 * with the same register twice), a REX for r8-r15 but no REX.W: its length, 0 if none. */
static unsigned result_test_len(const struct fx_code_range *n, uintptr_t p)
{
    if (!fx_recover_in(n, p, 4))
        return 0;
    const uint8_t *b = fx_recover_code(p);
    unsigned rex = b[0] >= 0x40 && b[0] <= 0x47 ? 1 : 0;
    uint8_t op = b[rex], modrm = b[rex + 1];
    if ((modrm & 0xC0) != 0xC0)
        return 0;
    if (op == 0x83 && ((modrm >> 3) & 7) == 7 && b[rex + 2] == 0 && !(rex && (b[0] & 4)))
        return rex + 3;
    if (op == 0x85 && ((modrm >> 3) & 7) == (modrm & 7) &&
        (!rex || ((b[0] >> 2) & 1) == (b[0] & 1)))
        return rex + 2;
    return 0;
}

bool fx_recover_pushed_return(const struct fx_code_range *n, uintptr_t stub, struct fx_regs *c)
{
    uintptr_t target;
    if (!fx_recover_call_target(n, c->pc, &target) || target != stub)
        return false;
    unsigned a = pop_len(n, c->pc), b = a > 0 ? pop_len(n, c->pc + a) : 0;
    if (b == 0)
        return false;
    /* C1's type check and aastore store check (c1_LIRAssembler_x86.cpp) test the result and
     * je to the failure: their two pops restore the frame base. Its arraycopy's type check
     * pushes two more words first and jne's to a continuation that pops them: there the base
     * is 16 bytes further, so that shape (and any other) is refused. */
    uintptr_t t = c->pc + a + b;
    unsigned k = result_test_len(n, t);
    if (k == 0 || !fx_recover_in(n, t + k, 2))
        return false;
    const uint8_t *j = fx_recover_code(t + k);
    if (!(j[0] == 0x74 || (j[0] == 0x0F && j[1] == 0x84)))
        return false;
    c->sp += 16; /* the two arguments the caller pushed, as its pops release them */
    return true;
}
