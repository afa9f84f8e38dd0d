/* SPDX-License-Identifier: Apache-2.0 */
/* The x86-64 rules of stack recovery but the adapters' (recover_adapter.c): alignment nops, a
 * compiled method's prologue, epilogue and inline cache check, a dispatch stub, C1's G1 post
 * barrier stub and its continuation, and the caller's context patched into a ucontext. Each
 * rule's proof is in docs/VALIDATION.md section 8. Signal path: compiled with the handler's flags
 * and under its symbol allow-list. */
#include <string.h>

#include "recover_x86.h"

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
static unsigned fx_recover_prologue_step(const struct fx_code_range *r, uintptr_t p,
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
static int fx_recover_prologue(const struct fx_code_range *r, const struct fx_regs *in,
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
static int fx_recover_epilogue(const struct fx_code_range *r, const struct fx_regs *in,
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

/* An OSR compilation (issue 32): the interpreter jumps to its OSR entry with the return address
 * of the frame it replaces on top (TemplateTable::branch: the interpreter frame popped, the
 * sender's pc pushed), as a call to a verified entry would leave it; the code from there builds
 * the frame as a normal entry does (C2's MachPrologNode, C1's build_frame), and the body, the
 * epilogue and the stubs follow it. The prologue is decoded from the OSR entry with the normal
 * prologue's steps to the first instruction that is not one; it must have allocated exactly the
 * frame (return address + pushes + sub rsp = CodeBlob::_frame_size words), else nothing is said
 * about this nmethod. A pc inside that prologue is refused (FX_REC_DECODE); after it, the
 * epilogue rule or the body (FX_REC_BODY: the frame is built, its size holds). A pc before the
 * OSR entry (session 22): in C1's code (tiers 1-3) the same, because an OSR nmethod is entered
 * nowhere else (ciEnv::register_method puts it on its holder's OSR list, never in Method::_code,
 * so no call reaches its other entries; the interpreter's OSR migration jumps to
 * osr_entry_point), and C1 lays its blocks out by its linear scan order, the loop's blocks
 * before the OSR entry's (LIR_Assembler::osr_entry: build_frame, then a jump to the loop): code
 * there runs only after that jump, the frame built (javac's main thread: 11 of 17 walks stopped
 * at the top in a run, docs/VALIDATION.md 8.1). C2's code before its OSR entry is not known
 * here: refused. */
/* Whether the byte before p ends a push (push r: 0x50-0x57; REX.B push r8-r15, 0x41 0x50-0x57,
 * ends the same) and whether a push begins at p, inside r. */
static bool ends_push(const struct fx_code_range *r, uintptr_t p)
{
    return p > r->begin && fx_recover_code(p)[-1] >= 0x50 && fx_recover_code(p)[-1] <= 0x57;
}
static bool push_at(const struct fx_code_range *r, uintptr_t p)
{
    const uint8_t *c = fx_recover_code(p);
    return (c[0] >= 0x50 && c[0] <= 0x57) ||
           (p + 1 < r->end && c[0] == 0x41 && c[1] >= 0x50 && c[1] <= 0x57);
}

/* C2's body (tier 4, session 23): whether the instruction right before pc may be a push, told
 * by decoding every instruction from start, the body's first (the end of the prologue: HotSpot's
 * frame-complete offset, or an OSR entry's decoded prologue), to pc, which must be where one
 * begins (an interrupted pc is). C2's instruction section holds instructions only, its constants
 * and jump tables in the constants section before it, its alignment padding nops; so from an
 * instruction boundary each length (fx_x86_len) gives the next, and the instruction ending at pc
 * is known. false only when it was decoded and is not a push; true for a push, a length not
 * decoded, a decode not landing on pc, start unknown or more than FX_BODY_DECODE_MAX bytes
 * before pc (the handler's time: ~2.5 ns a byte decoded, unit.recover test_x86_len). */
#define FX_BODY_DECODE_MAX 16384u
static bool c2_push_before(const struct fx_code_range *r, uintptr_t start, uintptr_t pc)
{
    if (start == 0 || start < r->begin || start > pc || pc - start > FX_BODY_DECODE_MAX)
        return true;
    bool push = false; /* at start itself: the prologue's end, the frame complete there */
    for (uintptr_t p = start; p < pc;) {
        unsigned n = fx_x86_len(fx_recover_code(p), r->end - p, &push);
        if (n == 0)
            return true;
        p += n;
        if (p > pc)
            return true;
    }
    return push;
}

/* A pc where no rule applies is in the body, whose frame is built and its size holds
 * (FX_REC_BODY), but where rsp is off the frame's base for a few instructions: in the stub
 * section (the deopt handler's `call next`, the exception handler, call stubs: at or past
 * nmethod::_stub_offset), or between pushes and pops. C1's bodies (tiers 1-3) push only in its
 * type checks, two registers at a time (c1_LIRAssembler_x86.cpp: `push; push; call
 * slow_subtype_check; pop; pop`, and arraycopy's `push src; push dst` around its checks), so
 * there refused (FX_REC_DECODE) are: a pc after the first push of a pair (a push byte before it,
 * a push at it) or after both (push bytes before it and before that push); a lone byte 0x50-0x57
 * before pc is no push of C1's: it ends a longer instruction (a displacement or an immediate;
 * session 17: such bytes refused 0.1-0.3 % of javac's samples, whose walk below then stopped at
 * the top). C2 pushes alone (String.compareTo's intrinsic: `sub ecx, edx; push rcx; cmovle`,
 * indexOf's, RTM profiling's `push rax`), so in code of no known tier any such byte before pc
 * is refused, and in C2's (tier 4) the instruction before pc is decoded instead (session 23:
 * c2_push_before; the byte was a displacement, a SIB byte or a rel8 in javac's repeated
 * refusals). A pop at pc (0x58-0x5F / 0x41 0x58-0x5F: in 64-bit code an instruction beginning
 * so is a pop) is refused in all. start: where the body's first instruction begins (the end of
 * the prologue), 0 if not known. */
static int fx_recover_body(const struct fx_code_range *r, uintptr_t start, uintptr_t pc)
{
    if (r->stubs != 0 && pc >= r->begin + r->stubs)
        return FX_REC_DECODE;
    const uint8_t *c = fx_recover_code(pc);
    bool c1 = r->level >= 1 && r->level <= 3;
    if (ends_push(r, pc) &&
        (r->level == 4 ? c2_push_before(r, start, pc)
                       : !c1 || push_at(r, pc) || ends_push(r, pc - 1) ||
                                 (pc - 2 > r->begin && c[-2] == 0x41 && ends_push(r, pc - 2))))
        return FX_REC_DECODE;
    if ((c[0] >= 0x58 && c[0] <= 0x5F) ||
        (pc + 1 < r->end && c[0] == 0x41 && c[1] >= 0x58 && c[1] <= 0x5F))
        return FX_REC_DECODE;
    return FX_REC_BODY;
}

static int fx_recover_osr(const struct fx_code_range *r, const struct fx_regs *in, uintptr_t lo,
                          uintptr_t hi, struct fx_regs *out)
{
    struct fx_prologue st = {0, 0, false};
    uintptr_t p = r->begin + r->verified;
    bool before = in->pc < p;
    if ((before && !(r->level >= 1 && r->level <= 3)) || r->frame_words <= 0)
        return FX_REC_DECODE;
    unsigned i = 0;
    for (unsigned n; i < 64 && (n = fx_recover_prologue_step(r, p, &st)) > 0; i++)
        p += n;
    /* rbp saved right below the return address, where frame::sender_for_compiled_frame (and
     * the walks after this frame) read it */
    if (i == 64 || (uint64_t)st.depth + 8 != (uint64_t)r->frame_words * 8 || st.rbp_slot != 8 ||
        (!before && in->pc < p))
        return FX_REC_DECODE;
    int rc = fx_recover_epilogue(r, in, lo, hi, out);
    return rc == FX_REC_DECODE ? fx_recover_body(r, before ? 0 : p, in->pc) : rc;
}

/* The caller's registers when nothing was pushed since its call: the return address at [sp],
 * its sp above it, rbp untouched. */
static int fx_recover_at_sp(const struct fx_regs *in, uintptr_t lo, uintptr_t hi,
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

/* Length of one instruction of an inline cache check at p, 0 if it is not one of the shapes
 * MacroAssembler::ic_check (JDK 21+), C1_MacroAssembler::inline_cache_check and MachUEPNode::emit
 * (JDK 17), and the native wrapper's check (SharedRuntime::generate_native_wrapper) emit: klass
 * loads and decodes (mov, movabs, shl/shr, add, xor into a register other than rsp), compares,
 * and branches (jcc, jmp rel32) whose targets are the ic-miss stub or the verified entry. None of
 * them writes rsp or memory (docs/VALIDATION.md 8.5). */
static unsigned fx_recover_iccheck_step(const struct fx_code_range *r, uintptr_t p)
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
static int fx_recover_iccheck(const struct fx_code_range *r, const struct fx_regs *in, uintptr_t lo,
                              uintptr_t hi, struct fx_regs *out)
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

/* From a pc in C1's g1_post_barrier_slow (docs/VALIDATION.md 8.5c), the registers at its return:
 * the stub begins with push rbp; mov rbp, rsp (StubAssembler::prologue) and ends with leave; ret
 * (epilogue), and keeps rbp as its frame pointer in between (recover_stub.c's rule). out->pc is
 * the return address, in C1's slow-case code (fx_recover_continuation makes it the caller's pc). */
static int fx_recover_c1_barrier(const struct fx_code_range *r, const struct fx_regs *in,
                                 uintptr_t lo, uintptr_t hi, struct fx_regs *out)
{
    int rc = fx_recover_rbp_frame(r, in, lo, hi, out);
    if (rc == FX_REC_STUB)
        return FX_REC_DECODE;
    return rc == FX_REC_STUB_FRAME ? FX_REC_C1_BARRIER : rc;
}

/* The caller's pc for a return address ret into C1's slow-case code of nmethod n
 * (G1BarrierSetAssembler::gen_post_barrier_stub: bind entry; cmp; je continuation;
 * store_parameter; call g1_post_barrier_slow; jmp continuation): the continuation, the
 * instruction right after the barrier's branch into that code (G1BarrierSetC1::post_barrier:
 * branch(notEqual, slow); branch_destination(continuation)). Checked: a jmp at ret whose target c
 * lies before it in n, and a jcc ending at c whose target lies in (c, ret). false otherwise. */
bool fx_recover_continuation(const struct fx_code_range *n, uintptr_t ret, uintptr_t *pc)
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
int fx_recover_caller(const struct fx_code_range *r, const struct fx_regs *in, uintptr_t lo,
                      uintptr_t hi, bool blob_ok, struct fx_regs *out)
{
    if (hi <= lo || in->sp < lo || in->sp >= hi)
        return r->kind == FX_BLOB_STUB ? FX_REC_STUB : FX_REC_STACK;
    if (r->kind == FX_BLOB_STUB && (r->flags & FX_RANGE_FRAMELESS)) /* C1's subtype check */
        return fx_recover_frameless(r, in, lo, hi, out);
    if (r->kind == FX_BLOB_STUB && (r->flags & FX_RANGE_IC_BUFFER)) /* frameless (8.5k) */
        return fx_recover_at_sp(in, lo, hi, out, FX_REC_ICSTUB);
    if (r->kind == FX_BLOB_STUB) /* issue 32: arraycopy, intrinsic stubs (8.5d) */
        return r->arraycopy ? fx_recover_rbp_frame(r, in, lo, hi, out) : FX_REC_STUB;
    if (r->kind == FX_BLOB_DISPATCH)
        return fx_recover_at_sp(in, lo, hi, out, FX_REC_DISPATCH);
    if (r->kind == FX_BLOB_ADAPTER)
        return fx_recover_adapter(r, in, lo, hi, out);
    if (r->kind == FX_BLOB_C1_BARRIER)
        return fx_recover_c1_barrier(r, in, lo, hi, out);
    if (r->kind != FX_BLOB_NMETHOD)
        return FX_REC_NOT_FOUND;
    if (blob_ok && fx_recover_mh_shape(r)) /* frameless, never complete (8.5l) */
        return fx_recover_mh_intrinsic(r, in, lo, hi, out);
    if (blob_ok && (r->flags & FX_RANGE_OSR) && r->verified != FX_OFF_UNKNOWN)
        return fx_recover_osr(r, in, lo, hi, out);
    if (!blob_ok || r->verified == FX_OFF_UNKNOWN || r->complete == FX_OFF_UNKNOWN)
        return FX_REC_LAYOUT;
    uintptr_t vep = r->begin + r->verified, done = r->begin + r->complete;
    if (in->pc >= vep && in->pc < done)
        return fx_recover_prologue(r, in, lo, hi, out);
    if (in->pc >= done) {
        int rc = fx_recover_epilogue(r, in, lo, hi, out);
        return rc == FX_REC_DECODE ? fx_recover_body(r, done, in->pc) : rc;
    }
    return fx_recover_iccheck(r, in, lo, hi, out); /* before the verified entry */
}

#if defined(__x86_64__)
/* Signal-safe: *to = *from with the caller's registers: what ASGCT reads of a context is RIP,
 * RSP and RBP (os::fetch_frame_from_context); everything else stays the interrupted thread's. */
void fx_recover_patch(ucontext_t *to, const ucontext_t *from, const struct fx_regs *r)
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
