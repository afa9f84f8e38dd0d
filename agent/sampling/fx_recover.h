/* SPDX-License-Identifier: Apache-2.0 */
/* Owns the signal-safe half of stack recovery (issue 20, docs/VALIDATION.md section 8): the
 * published table of code ranges (built by codemap.c outside signal context), its lookup, and
 * the x86-64 rules that prove where the return address is when the pc is in code that has no
 * frame of its own at that point. Everything here is static inline, pure, and reads only the
 * memory it is given bounds for: code bytes inside the range's [begin, end), stack words inside
 * the thread's [lo, hi). No calls but memcpy, no allocation, no globals: unit-tested without a JVM
 * (tests/unit/test_recover.c) and inlined into signal_handler.c. */
#ifndef FX_RECOVER_H
#define FX_RECOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>

enum fx_blob_kind {
    FX_BLOB_DISPATCH = 1, /* "vtable stub" / "itable stub": no frame anywhere in it */
    FX_BLOB_STUB,         /* any other DynamicCodeGenerated blob: named, never recovered */
    FX_BLOB_NMETHOD,      /* a CompiledMethodLoad range */
    FX_BLOB_ADAPTER,      /* "I2C/C2I adapters...": one AdapterBlob, its i2c entry first */
    FX_BLOB_C1_BARRIER,   /* "g1_post_barrier_slow": C1's G1 post barrier, rbp-framed */
};

/* One code range. For an nmethod the layout fields come from VMStructs (codemap.c); a field it
 * could not read is FX_OFF_UNKNOWN and disables the cases that need it. */
#define FX_OFF_UNKNOWN UINT32_MAX
struct fx_code_range {
    uintptr_t begin, end; /* [begin, end) */
    uintptr_t blob;       /* nmethod: its CodeBlob header (compile id check), 0 if unknown */
    uint64_t name;        /* nmethod: its jmethodID; stub: index in codemap.c's name list */
    uint32_t verified;    /* nmethod: verified entry point, offset from begin */
    uint32_t complete;    /* nmethod: frame complete offset from begin */
    int32_t compile_id;   /* nmethod: HotSpot's compile id, checked at the blob in the handler */
    uint8_t kind;         /* enum fx_blob_kind */
    uint8_t pad[3];
};

/* Immutable once published (codemap.c): sorted by begin, no two ranges overlap. */
struct fx_code_table {
    size_t n;
    struct fx_code_range r[];
};

/* Signal-safe: the range holding pc, or NULL. */
static inline const struct fx_code_range *fx_recover_find(const struct fx_code_table *t,
                                                          uintptr_t pc)
{
    if (t == NULL || t->n == 0)
        return NULL;
    size_t lo = 0, hi = t->n; /* first index with begin > pc */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->r[mid].begin <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct fx_code_range *r = &t->r[lo - 1];
    return pc < r->end ? r : NULL;
}

/* What a recovery attempt found. Positive: the caller's registers are exact. Negative: why not
 * (each a counter and, in the profile, the failure frame stays). */
enum fx_recover_case {
    FX_REC_NONE = 0,
    FX_REC_DISPATCH = 1,   /* pc in a vtable/itable stub */
    FX_REC_PROLOGUE = 2,   /* pc between an nmethod's verified entry and its frame's completion */
    FX_REC_EPILOGUE = 3,   /* pc after the frame's release, on the straight path to ret */
    FX_REC_ICCHECK = 4,    /* pc in an nmethod's inline cache check, before the verified entry */
    FX_REC_ADAPTER = 5,    /* pc in an I2C/C2I adapter where the decode proves the return address */
    FX_REC_C1_BARRIER = 6, /* pc in g1_post_barrier_slow; caller at its slow-case continuation */
    FX_REC_CASES = 7,
    FX_REC_NOT_FOUND = -1,  /* pc in no known range */
    FX_REC_STUB = -2,       /* pc in another stub: named, no frame rule known */
    FX_REC_BODY = -3,       /* pc in an nmethod where no rule applies (its body) */
    FX_REC_LAYOUT = -4,     /* nmethod layout unknown (VMStructs) or blob changed */
    FX_REC_DECODE = -5,     /* an instruction the prologue/epilogue/ic rules do not know */
    FX_REC_STACK = -6,      /* a stack word outside the thread's stack, or bounds unknown */
    FX_REC_WALK = -7,       /* ASGCT failed from the caller's context too */
    FX_REC_TABLE_BUSY = -8, /* reserved: not used by the current publication scheme */
    FX_REC_BCI0 = -9,       /* the caller came back at bci 0: maybe a deoptimized caller */
    FX_REC_FAILS = 10,      /* -1..-9 */
};

struct fx_regs {
    uintptr_t pc, sp, fp;
    const uintptr_t *gpr; /* the 16 general registers in encoding order (rax..r15), or NULL */
};

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

/* Length of a HotSpot alignment nop at p (MacroAssembler::nop(int) on x86-64 with
 * UseAddressNop: 90, 66 90, 0F 1F /0 with its address forms, any number of 66 prefixes), or 0
 * if p holds no nop. */
static inline unsigned fx_recover_nop_len(const struct fx_code_range *r, uintptr_t p)
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
static inline unsigned fx_recover_head(const struct fx_code_range *r, uintptr_t p,
                                       const uint8_t **b)
{
    unsigned n = fx_recover_nop_len(r, p);
    *b = n == 0 && fx_recover_in(r, p, 1) ? fx_recover_code(p) : NULL;
    return n;
}

/* Prologue state while decoding from the verified entry: `depth` bytes pushed or allocated
 * since entry (the return address is at sp + depth), where the caller's rbp was saved (depth
 * of the slot: entry sp - rbp_slot, 0 = not saved) and whether rbp still is the caller's. */
struct fx_prologue {
    uint32_t depth, rbp_slot;
    bool rbp_changed;
};

/* Length of one prologue instruction at p and its effect on st; 0 if it is not one of the
 * shapes C2_MacroAssembler::verified_entry, C1_MacroAssembler::build_frame and
 * BarrierSetAssembler::nmethod_entry_barrier emit (docs/VALIDATION.md 8.3). */
static inline unsigned fx_recover_prologue_step(const struct fx_code_range *r, uintptr_t p,
                                                struct fx_prologue *st)
{
    const uint8_t *b;
    unsigned n = fx_recover_head(r, p, &b);
    if (n > 0 || b == NULL)
        return n;
    if (b[0] == 0x55) { /* push rbp */
        st->depth += 8;
        st->rbp_slot = st->depth;
        return 1;
    }
    if (fx_recover_in(r, p, 7) && b[0] == 0x89 && b[1] == 0x84 && b[2] == 0x24 &&
        fx_recover_i32(b + 3) < 0) /* stack bang: mov [rsp - N], eax */
        return 7;
    if (!fx_recover_in(r, p, 3))
        return 0;
    if (b[0] == 0x48 && ((b[1] == 0x89 && b[2] == 0xE5) || (b[1] == 0x8B && b[2] == 0xEC))) {
        st->rbp_changed = true; /* mov rbp, rsp (PreserveFramePointer) */
        return 3;
    }
    if (b[0] == 0x48 && (b[1] == 0x83 || b[1] == 0x81) && (b[2] == 0xEC || b[2] == 0xC5)) {
        bool imm8 = b[1] == 0x83;
        unsigned len = imm8 ? 4 : 7;
        if (!fx_recover_in(r, p, len))
            return 0;
        int32_t imm = imm8 ? (int8_t)b[3] : fx_recover_i32(b + 3);
        if (imm < 0 || imm > (1 << 20))
            return 0;
        if (b[2] == 0xEC) /* sub rsp, imm */
            st->depth += (uint32_t)imm;
        else if (!st->rbp_changed) /* add rbp, imm: only after mov rbp, rsp */
            return 0;
        return len;
    }
    /* mov [rsp + d], rbp */
    if (b[0] == 0x48 && b[1] == 0x89 && (b[2] == 0x6C || b[2] == 0xAC) && fx_recover_in(r, p, 4) &&
        b[3] == 0x24) {
        bool d8 = b[2] == 0x6C;
        unsigned len = d8 ? 5 : 8;
        if (!fx_recover_in(r, p, len))
            return 0;
        int32_t d = d8 ? (int8_t)b[4] : fx_recover_i32(b + 4);
        if (d < 0 || (uint32_t)d >= st->depth)
            return 0;
        st->rbp_slot = st->depth - (uint32_t)d;
        return len;
    }
    /* Entry barrier: cmp dword [r15 + d8], imm8 / imm32 */
    if (b[0] == 0x41 && (b[1] == 0x81 || b[1] == 0x83) && fx_recover_in(r, p, 4) && b[2] == 0x7F) {
        unsigned len = b[1] == 0x81 ? 8 : 5;
        return fx_recover_in(r, p, len) ? len : 0;
    }
    /* its branches (the fall-through continues) and C1's inline call to the barrier stub,
     * which returns here with sp as before */
    if ((b[0] == 0x74 || b[0] == 0x75) && fx_recover_in(r, p, 2))
        return 2;
    if (b[0] == 0x0F && (b[1] == 0x84 || b[1] == 0x85) && fx_recover_in(r, p, 6))
        return 6;
    if (b[0] == 0xE8 && fx_recover_in(r, p, 5))
        return 5;
    return 0;
}

/* Caller registers from a pc in [verified entry, frame complete): decode from the verified
 * entry to pc; the pc must be one of the decoded instruction boundaries. */
static inline int fx_recover_prologue(const struct fx_code_range *r, const struct fx_regs *in,
                                      uintptr_t lo, uintptr_t hi, struct fx_regs *out)
{
    struct fx_prologue st = {0, 0, false};
    uintptr_t p = r->begin + r->verified;
    for (unsigned i = 0; i < 64 && p < in->pc; i++) {
        unsigned n = fx_recover_prologue_step(r, p, &st);
        if (n == 0)
            return FX_REC_DECODE;
        p += n;
    }
    if (p != in->pc)
        return FX_REC_DECODE;
    uintptr_t ret, fp = in->fp;
    if (!fx_recover_stack_word(lo, hi, in->sp + st.depth, &ret))
        return FX_REC_STACK;
    if (st.rbp_changed &&
        (st.rbp_slot == 0 || !fx_recover_stack_word(lo, hi, in->sp + st.depth - st.rbp_slot, &fp)))
        return FX_REC_STACK;
    out->pc = ret;
    out->sp = in->sp + st.depth + 8;
    out->fp = fp;
    return FX_REC_PROLOGUE;
}

/* Caller registers from a pc on the straight path to the method's ret after its frame is
 * released: add rsp, imm; pop rbp; vzeroupper; the return poll (cmp rsp, [r15 + d]; ja slow);
 * nops; ret. The path is decoded forward from pc: along it nothing writes the stack, so the
 * words ret and pop rbp will read are the ones there now. Without a pop rbp on the path,
 * rbp already is the caller's (the frame was released, MachEpilogNode / remove_frame). */
static inline int fx_recover_epilogue(const struct fx_code_range *r, const struct fx_regs *in,
                                      uintptr_t lo, uintptr_t hi, struct fx_regs *out)
{
    uint32_t depth = 0; /* bytes the path still releases before ret */
    uintptr_t fp = in->fp, p = in->pc;
    bool popped = false, added = false;
    for (unsigned i = 0; i < 16; i++) {
        const uint8_t *b;
        unsigned n = fx_recover_head(r, p, &b);
        if (n > 0) {
            p += n;
            continue;
        }
        if (b == NULL)
            return FX_REC_DECODE;
        if (b[0] == 0xC3) {
            uintptr_t ret;
            if (!popped && added)
                return FX_REC_DECODE; /* a frame released without restoring rbp: not ours */
            if (!fx_recover_stack_word(lo, hi, in->sp + depth, &ret))
                return FX_REC_STACK;
            out->pc = ret;
            out->sp = in->sp + depth + 8;
            out->fp = fp;
            return FX_REC_EPILOGUE;
        }
        if (b[0] == 0x5D && !popped) { /* pop rbp */
            if (!fx_recover_stack_word(lo, hi, in->sp + depth, &fp))
                return FX_REC_STACK;
            depth += 8;
            popped = true;
            p += 1;
            continue;
        }
        if (fx_recover_in(r, p, 3) && b[0] == 0xC5 && b[1] == 0xF8 && b[2] == 0x77) {
            p += 3; /* vzeroupper */
            continue;
        }
        if (!popped && !added && fx_recover_in(r, p, 4) && b[0] == 0x48 &&
            (b[1] == 0x83 || b[1] == 0x81) && b[2] == 0xC4) { /* add rsp, imm */
            bool imm8 = b[1] == 0x83;
            unsigned len = imm8 ? 4 : 7;
            if (!fx_recover_in(r, p, len))
                return FX_REC_DECODE;
            int32_t imm = imm8 ? (int8_t)b[3] : fx_recover_i32(b + 3);
            if (imm < 0 || imm > (1 << 20))
                return FX_REC_DECODE;
            depth += (uint32_t)imm;
            added = true;
            p += len;
            continue;
        }
        /* cmp rsp, [r15 + d8 / d32] */
        if (fx_recover_in(r, p, 4) && b[0] == 0x49 && b[1] == 0x3B && b[2] == 0x67) {
            p += 4;
            continue;
        }
        if (fx_recover_in(r, p, 7) && b[0] == 0x49 && b[1] == 0x3B && b[2] == 0xA7) {
            p += 7;
            continue;
        }
        /* ja slow path: the fall-through is the path to ret */
        if (fx_recover_in(r, p, 2) && b[0] == 0x77) {
            p += 2;
            continue;
        }
        if (fx_recover_in(r, p, 6) && b[0] == 0x0F && b[1] == 0x87) {
            p += 6;
            continue;
        }
        return FX_REC_DECODE;
    }
    return FX_REC_DECODE;
}

/* The caller's registers when nothing was pushed since its call: the return address at [sp],
 * its sp above it, rbp untouched. */
static inline int fx_recover_at_sp(const struct fx_regs *in, uintptr_t lo, uintptr_t hi,
                                   struct fx_regs *out, int rule)
{
    uintptr_t ret;
    if (!fx_recover_stack_word(lo, hi, in->sp, &ret))
        return FX_REC_STACK;
    out->pc = ret;
    out->sp = in->sp + 8;
    out->fp = in->fp;
    return rule;
}

/* Length of a ModRM operand (ModRM byte, SIB, displacement) at b, 0 if it does not fit in avail
 * bytes. */
static inline unsigned fx_recover_modrm_len(const uint8_t *b, uintptr_t avail)
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

/* Length of one instruction of an inline cache check at p, 0 if it is not one of the shapes
 * MacroAssembler::ic_check (JDK 21+), C1_MacroAssembler::inline_cache_check and MachUEPNode::emit
 * (JDK 17), and the native wrapper's check (SharedRuntime::generate_native_wrapper) emit: klass
 * loads and decodes (mov, movabs, shl/shr, add, xor into a register other than rsp), compares,
 * and branches (jcc, jmp rel32) whose targets are the ic-miss stub or the verified entry. None of
 * them writes rsp or memory (docs/VALIDATION.md 8.5). */
static inline unsigned fx_recover_iccheck_step(const struct fx_code_range *r, uintptr_t p)
{
    const uint8_t *b;
    unsigned n = fx_recover_head(r, p, &b);
    if (n > 0 || b == NULL)
        return n;
    uintptr_t avail = r->end - p;
    if ((b[0] == 0x74 || b[0] == 0x75) && avail >= 2) /* je / jne rel8 */
        return 2;
    if (b[0] == 0x0F && avail >= 6 && (b[1] == 0x84 || b[1] == 0x85)) /* je / jne rel32 */
        return 6;
    if (b[0] == 0xE9 && avail >= 5) /* jmp rel32 (native wrapper: to the ic-miss stub) */
        return 5;
    uint8_t rex = 0;
    unsigned pre = 0;
    if ((b[0] & 0xF0) == 0x40) {
        rex = b[0];
        pre = 1;
    }
    if (avail < pre + 1)
        return 0;
    uint8_t op = b[pre];
    if ((op & 0xF8) == 0xB8) { /* mov r, imm32 / movabs r, imm64 */
        unsigned dst = (unsigned)((rex & 1) << 3) | (op & 7), len = pre + 1 + ((rex & 8) ? 8 : 4);
        return dst != 4 && avail >= len ? len : 0;
    }
    if (avail < pre + 2)
        return 0;
    uint8_t modrm = b[pre + 1];
    unsigned mod = modrm >> 6, reg = (unsigned)((rex >> 2) & 1) << 3 | ((modrm >> 3) & 7);
    unsigned rm = (unsigned)((rex & 1) << 3) | (modrm & 7);
    unsigned m = fx_recover_modrm_len(b + pre + 1, avail - pre - 1);
    if (m == 0)
        return 0;
    switch (op) {
    case 0x3B: /* cmp r, r/m */
    case 0x39: /* cmp r/m, r */
        return pre + 1 + m;
    case 0x8B: /* mov r, r/m: the klass load */
    case 0x03: /* add r, r/m */
    case 0x33: /* xor r, r/m */
        return reg != 4 ? pre + 1 + m : 0;
    case 0x01: /* add r, r */
    case 0x31: /* xor r, r */
        return mod == 3 && rm != 4 ? pre + 1 + m : 0;
    case 0xC1: /* shl / shr r, imm8: the klass decode */
        if (mod != 3 || rm == 4 || (((modrm >> 3) & 7) != 4 && ((modrm >> 3) & 7) != 5))
            return 0;
        return avail >= pre + 1 + m + 1 ? pre + 1 + m + 1 : 0;
    default:
        return 0;
    }
}

/* Caller registers from a pc in [begin, verified entry): the unverified entry is entered by the
 * caller's call (a compiled inline cache) with the return address at [rsp]; the check decoded
 * from begin (alignment nops first on JDK 21+) to pc must be only the shapes above. */
static inline int fx_recover_iccheck(const struct fx_code_range *r, const struct fx_regs *in,
                                     uintptr_t lo, uintptr_t hi, struct fx_regs *out)
{
    uintptr_t p = r->begin;
    for (unsigned i = 0; i < 32 && p < in->pc; i++) {
        unsigned n = fx_recover_iccheck_step(r, p);
        if (n == 0)
            return FX_REC_DECODE;
        p += n;
    }
    if (p != in->pc)
        return FX_REC_DECODE;
    return fx_recover_at_sp(in, lo, hi, out, FX_REC_ICCHECK);
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

/* Does the one-byte opcode (or 0x100 | 0F-map opcode) take a ModRM byte, and how many immediate
 * bytes follow it (imm64 of movabs is decided by the caller)? Unknown opcodes: false. */
static inline bool fx_recover_opcode(uint16_t op, bool *modrm, unsigned *imm)
{
    *modrm = false;
    *imm = 0;
    if ((op >= 0x50 && op <= 0x5F) || op == 0x9C)
        return true;
    if (op >= 0xB8 && op <= 0xBF)
        return (*imm = 4, true);
    if ((op >= 0x70 && op <= 0x7F) || op == 0xEB)
        return (*imm = 1, true);
    if (op == 0xE9 || (op >= 0x180 && op <= 0x18F))
        return (*imm = 4, true);
    switch (op) {
    case 0x01:
    case 0x03:
    case 0x21:
    case 0x23:
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
        return (*modrm = true);
    case 0x80:
    case 0x83:
    case 0xC1:
    case 0xF6:
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
static inline bool fx_recover_insn(const struct fx_code_range *r, uintptr_t p, struct fx_insn *x)
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
static inline void fx_adapter_entry(struct fx_adapter *a)
{
    memset(a, 0, sizeof(*a));
    a->known = FX_BIT(FX_RSP);
    a->slot = a->rbp = true;
}

/* reg gets a value the decoder does not follow. false: that would lose rsp. */
static inline bool fx_adapter_kill(struct fx_adapter *a, unsigned reg)
{
    if (reg == FX_RSP)
        return false;
    a->known &= (uint16_t)~FX_BIT(reg);
    a->ret &= (uint16_t)~FX_BIT(reg);
    a->rbp = a->rbp && reg != 5;
    return true;
}

static inline bool fx_adapter_rsp_add(struct fx_adapter *a, int64_t delta)
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
static inline void fx_adapter_store(struct fx_adapter *a, int base, bool index, int32_t disp,
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
static inline bool fx_adapter_load(struct fx_adapter *a, const struct fx_insn *x, unsigned reg,
                                   bool full)
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
static inline bool fx_adapter_copy(struct fx_adapter *a, unsigned dst, unsigned src)
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
static inline bool fx_adapter_apply(struct fx_adapter *a, const struct fx_insn *x)
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
static inline int fx_recover_adapter(const struct fx_code_range *r, const struct fx_regs *in,
                                     uintptr_t lo, uintptr_t hi, struct fx_regs *out)
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

/* From a pc in C1's g1_post_barrier_slow (docs/VALIDATION.md 8.5c), the registers at its return:
 * the stub begins with push rbp; mov rbp, rsp (StubAssembler::prologue) and ends with leave; ret
 * (epilogue), and keeps rbp as its frame pointer in between. out->pc is the return address, in
 * C1's slow-case code (fx_recover_continuation makes it the caller's pc). */
static inline int fx_recover_c1_barrier(const struct fx_code_range *r, const struct fx_regs *in,
                                        uintptr_t lo, uintptr_t hi, struct fx_regs *out)
{
    static const uint8_t head[4] = {0x55, 0x48, 0x8B, 0xEC}; /* push rbp; mov rbp, rsp */
    if (!fx_recover_in(r, r->begin, 4) || memcmp(fx_recover_code(r->begin), head, 4) != 0 ||
        !fx_recover_in(r, in->pc, 1))
        return FX_REC_DECODE;
    uintptr_t e, fp = in->fp;
    if (in->pc == r->begin || fx_recover_code(in->pc)[0] == 0xC3) /* at entry, or at ret */
        e = in->sp;
    else if (in->pc == r->begin + 1) /* after push rbp */
        e = in->sp + 8;
    else if (in->pc >= r->begin + 4) { /* the frame: rbp + 8 is the slot, [rbp] the caller's rbp */
        e = in->fp + 8;
        if (!fx_recover_stack_word(lo, hi, in->fp, &fp))
            return FX_REC_STACK;
    } else
        return FX_REC_DECODE; /* inside mov rbp, rsp */
    uintptr_t ret;
    if (!fx_recover_stack_word(lo, hi, e, &ret))
        return FX_REC_STACK;
    out->pc = ret;
    out->sp = e + 8;
    out->fp = fp;
    return FX_REC_C1_BARRIER;
}

/* The caller's pc for a return address ret into C1's slow-case code of nmethod n
 * (G1BarrierSetAssembler::gen_post_barrier_stub: bind entry; cmp; je continuation;
 * store_parameter; call g1_post_barrier_slow; jmp continuation): the continuation, the
 * instruction right after the barrier's branch into that code (G1BarrierSetC1::post_barrier:
 * branch(notEqual, slow); branch_destination(continuation)). Checked: a jmp at ret whose target c
 * lies before it in n, and a jcc ending at c whose target lies in (c, ret). false otherwise. */
static inline bool fx_recover_continuation(const struct fx_code_range *n, uintptr_t ret,
                                           uintptr_t *pc)
{
    if (!fx_recover_in(n, ret, 2))
        return false;
    const uint8_t *b = fx_recover_code(ret);
    uintptr_t c, t;
    if (b[0] == 0xE9 && fx_recover_in(n, ret, 5))
        c = ret + 5 + (uintptr_t)(intptr_t)fx_recover_i32(b + 1);
    else if (b[0] == 0xEB)
        c = ret + 2 + (uintptr_t)(intptr_t)(int8_t)b[1];
    else
        return false;
    if (c >= ret || c < n->begin + 2)
        return false;
    const uint8_t *j6 = fx_recover_code(c - 6), *j2 = fx_recover_code(c - 2);
    if (c >= n->begin + 6 && j6[0] == 0x0F && (j6[1] & 0xF0) == 0x80)
        t = c + (uintptr_t)(intptr_t)fx_recover_i32(j6 + 2);
    else if ((j2[0] & 0xF0) == 0x70)
        t = c + (uintptr_t)(intptr_t)(int8_t)j2[1];
    else
        return false;
    if (t <= c || t >= ret)
        return false;
    *pc = c;
    return true;
}

/* Signal-safe: the caller's registers when pc is in r, by the rules above. [lo, hi) is the
 * thread's stack (0, 0: unknown). blob_ok: the nmethod at r->blob is still the compilation r
 * was made from (the caller checks the compile id). */
static inline int fx_recover_caller(const struct fx_code_range *r, const struct fx_regs *in,
                                    uintptr_t lo, uintptr_t hi, bool blob_ok, struct fx_regs *out)
{
    if (r->kind == FX_BLOB_STUB)
        return FX_REC_STUB;
    if (hi <= lo || in->sp < lo || in->sp >= hi)
        return FX_REC_STACK;
    if (r->kind == FX_BLOB_DISPATCH)
        return fx_recover_at_sp(in, lo, hi, out, FX_REC_DISPATCH);
    if (r->kind == FX_BLOB_ADAPTER)
        return fx_recover_adapter(r, in, lo, hi, out);
    if (r->kind == FX_BLOB_C1_BARRIER)
        return fx_recover_c1_barrier(r, in, lo, hi, out);
    if (r->kind != FX_BLOB_NMETHOD)
        return FX_REC_NOT_FOUND;
    if (!blob_ok || r->verified == FX_OFF_UNKNOWN || r->complete == FX_OFF_UNKNOWN)
        return FX_REC_LAYOUT;
    uintptr_t vep = r->begin + r->verified, done = r->begin + r->complete;
    if (in->pc >= vep && in->pc < done)
        return fx_recover_prologue(r, in, lo, hi, out);
    if (in->pc >= done) {
        int rc = fx_recover_epilogue(r, in, lo, hi, out);
        return rc == FX_REC_DECODE ? FX_REC_BODY : rc;
    }
    return fx_recover_iccheck(r, in, lo, hi, out); /* before the verified entry */
}

#if defined(__x86_64__)
/* Signal-safe: *to = *from with the caller's registers: what ASGCT reads of a context is RIP,
 * RSP and RBP (os::fetch_frame_from_context); everything else stays the interrupted thread's. */
static inline void fx_recover_patch(ucontext_t *to, const ucontext_t *from, const struct fx_regs *r)
{
    memcpy(to, from, sizeof(*to));
    /* The return address less one: AsyncGetCallTrace names a top compiled frame by the first
     * debug record at or after pc + 1 (forte.cpp, is_decipherable_compiled_frame, then sets the
     * frame's pc to that record), which for the return address itself is the record after the
     * call (a later line, e.g. the loop's back-edge poll). pc - 1 is inside the call
     * instruction, in the same blob, and finds the call's own record: the caller's exact line,
     * as an ordinary walk gets it from the return address of a frame below the top. */
    to->uc_mcontext.gregs[REG_RIP] = (greg_t)(r->pc - 1);
    to->uc_mcontext.gregs[REG_RSP] = (greg_t)r->sp;
    to->uc_mcontext.gregs[REG_RBP] = (greg_t)r->fp;
}
#endif

#endif
