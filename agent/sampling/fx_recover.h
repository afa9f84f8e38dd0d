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
    FX_REC_DISPATCH = 1, /* pc in a vtable/itable stub */
    FX_REC_PROLOGUE = 2, /* pc between an nmethod's verified entry and its frame's completion */
    FX_REC_EPILOGUE = 3, /* pc after the frame's release, on the straight path to ret */
    FX_REC_ICCHECK = 4,  /* pc in an nmethod's inline cache check, before the verified entry */
    FX_REC_CASES = 5,
    FX_REC_NOT_FOUND = -1,  /* pc in no known range */
    FX_REC_STUB = -2,       /* pc in another stub: named, no frame rule known */
    FX_REC_BODY = -3,       /* pc in an nmethod where no rule applies (its body) */
    FX_REC_LAYOUT = -4,     /* nmethod layout unknown (VMStructs) or blob changed */
    FX_REC_DECODE = -5,     /* an instruction the prologue/epilogue/ic rules do not know */
    FX_REC_STACK = -6,      /* a stack word outside the thread's stack, or bounds unknown */
    FX_REC_WALK = -7,       /* ASGCT failed from the caller's context too */
    FX_REC_TABLE_BUSY = -8, /* reserved: not used by the current publication scheme */
    FX_REC_FAILS = 9,       /* -1..-8 */
};

struct fx_regs {
    uintptr_t pc, sp, fp;
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
    unsigned n = fx_recover_nop_len(r, p);
    if (n > 0)
        return n;
    if (!fx_recover_in(r, p, 1))
        return 0;
    const uint8_t *b = fx_recover_code(p);
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
        unsigned n = fx_recover_nop_len(r, p);
        if (n > 0) {
            p += n;
            continue;
        }
        if (!fx_recover_in(r, p, 1))
            return FX_REC_DECODE;
        const uint8_t *b = fx_recover_code(p);
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
    unsigned n = fx_recover_nop_len(r, p);
    if (n > 0)
        return n;
    if (!fx_recover_in(r, p, 1))
        return 0;
    const uint8_t *b = fx_recover_code(p);
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
