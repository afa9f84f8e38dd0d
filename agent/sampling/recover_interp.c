/* SPDX-License-Identifier: Apache-2.0 */
/* The interpreter's method entry rule of stack recovery (issue 32, docs/VALIDATION.md 8.5f): a
 * pc in the template interpreter while it builds a frame (generate_normal_entry /
 * generate_native_entry up to the end of generate_fixed_frame), where AsyncGetCallTrace refuses
 * the half-built frame. The entry is jumped to with rbx = the Method*, [rsp] = the return address
 * and r13 = the sender's sp (every caller: the interpreter's jump_from_interpreted, the c2i
 * adapter, the call stub, the method handle entries), rbp the caller's. The entry's code is
 * decoded from its first byte (the Method's _i2i_entry) to the frame's completion, following by
 * abstract interpretation, along every branch, where those three values are (a register, or a
 * stack word relative to a register): the caller's context is then (return address, sender sp,
 * caller's rbp), what frame::sender_for_interpreter_frame takes from the completed frame. Signal
 * path: compiled with the handler's flags and under its symbol allow-list. */
#include <string.h>

#include "interp_frame.h"
#include "recover_x86.h"

enum {
    V_NONE,
    V_ADDR,
    V_RET,
    V_FP,
    V_METHOD
};
/* Symbols an address is relative to: the return address slot at the entry, the sender's sp,
 * and the rsp at each join where paths disagree on it (SYM_JOIN + its index). */
enum {
    SYM_E,
    SYM_SSP,
    SYM_JOIN
};
#define MAX_SLOTS   4    /* stack words followed: the return address, rbp, r13, and one more */
#define MAX_JOINS   6    /* branch targets inside the window */
#define MAX_INSNS   96   /* per sweep: the longest entry (JDK 17's normal entry) has ~50 */
#define MAX_SWEEPS  6    /* to a fixed point: the locals loop needs two */
#define WINDOW_MAX  4096 /* bytes from the entry: the frame is built well before */
#define SSP_MAX_GAP 2064 /* c2i: the sender sp above the slot by 255 argument words, aligned */

struct val {
    int16_t off;
    uint8_t kind, sym;
};
struct slot {
    struct val at, v; /* at: V_ADDR (sym + off) */
};
struct state {
    bool live;
    uint8_t nslots;
    struct val reg[16];
    struct slot slot[MAX_SLOTS];
};
struct join {
    uintptr_t at;
    bool landed; /* the sweep reached it at an instruction's first byte */
    struct state st;
};

#define RSP 4
#define RBP 5

static bool same(struct val a, struct val b)
{
    return a.kind == b.kind && (a.kind != V_ADDR || (a.sym == b.sym && a.off == b.off));
}

static struct val addr(uint8_t sym, int64_t off) /* 64 bits: an int16 and a disp never overflow */
{
    if (off < INT16_MIN || off > INT16_MAX)
        return (struct val){0, V_NONE, 0};
    return (struct val){(int16_t)off, V_ADDR, sym};
}

/* A store of 8 bytes of v at `at`: the words it may overlap are forgotten (any word of another
 * base: no relation is known between two bases), then the word is followed if v is one. */
static void store(struct state *s, struct val at, struct val v)
{
    uint8_t k = 0;
    for (uint8_t i = 0; i < s->nslots; i++) {
        struct slot *w = &s->slot[i];
        if (at.kind == V_ADDR && w->at.sym == at.sym &&
            (w->at.off + 8 <= at.off || at.off + 8 <= w->at.off))
            s->slot[k++] = *w;
    }
    s->nslots = k;
    if (at.kind == V_ADDR && v.kind != V_NONE && k < MAX_SLOTS)
        s->slot[s->nslots++] = (struct slot){at, v};
}

static struct val load(const struct state *s, struct val at)
{
    for (uint8_t i = 0; i < s->nslots; i++)
        if (at.kind == V_ADDR && same(s->slot[i].at, at))
            return s->slot[i].v;
    return (struct val){0, V_NONE, 0};
}

/* reg = v; rsp may only become an address. */
static bool set(struct state *s, unsigned reg, struct val v)
{
    if (reg == RSP && v.kind != V_ADDR)
        return false;
    s->reg[reg] = v;
    return true;
}

static bool push(struct state *s, struct val v)
{
    struct val sp = addr(s->reg[RSP].sym, s->reg[RSP].off - 8);
    if (!set(s, RSP, sp))
        return false;
    store(s, sp, v);
    return true;
}

/* [base + disp] of a memory operand without index, or none. */
static struct val mem_at(const struct state *s, const struct fx_insn *x)
{
    if (x->base < 0 || x->index || s->reg[x->base].kind != V_ADDR)
        return (struct val){0, V_NONE, 0};
    return addr(s->reg[x->base].sym, (int64_t)s->reg[x->base].off + x->disp);
}

/* The effect of one instruction that is not a branch; false: not followed (the window ends). */
static bool apply(struct state *s, const struct fx_insn *x)
{
    static const struct val none = {0, V_NONE, 0};
    unsigned grp = x->reg & 7;
    if (x->op >= 0x50 && x->op <= 0x57) /* push r */
        return push(s, s->reg[x->reg]);
    if (x->op == 0x68 || x->op == 0x6A) /* push imm32 / imm8 */
        return push(s, none);
    if (x->op >= 0x58 && x->op <= 0x5F) { /* pop r */
        struct val sp = s->reg[RSP], v = load(s, sp);
        store(s, sp, none);
        /* pop rsp loads rsp from the stack: not followed (HotSpot does not emit it here) */
        return x->reg != RSP && set(s, RSP, addr(sp.sym, sp.off + 8)) && set(s, x->reg, v);
    }
    switch (x->op) {
    case 0x89: /* mov r/m, r */
        if (x->mem) {
            if (x->base == 15 && !x->index)
                return true; /* the JavaThread (r15), not the stack */
            store(s, mem_at(s, x), x->w ? s->reg[x->reg] : none);
            return true;
        }
        return set(s, x->rm, x->w ? s->reg[x->reg] : none);
    case 0x8B: /* mov r, r/m */
        if (x->mem)
            return set(s, x->reg, x->w ? load(s, mem_at(s, x)) : none);
        return set(s, x->reg, x->w ? s->reg[x->rm] : none);
    case 0x8D: { /* lea */
        struct val a = mem_at(s, x);
        return x->mem && set(s, x->reg, x->w ? a : none);
    }
    case 0x03:
    case 0x2B:
    case 0x23:
    case 0x33:
    case 0x1B6:
    case 0x1B7: /* add sub and xor movzx */
        return set(s, x->reg, none);
    case 0x39:
    case 0x3B:
    case 0x85:
        return true; /* cmp, test */
    case 0x81:
    case 0x83:
        if (grp == 7)
            return true; /* cmp */
        if (x->mem)
            return false;
        if (x->w && (grp == 0 || grp == 5) && s->reg[x->rm].kind == V_ADDR)
            return set(s, x->rm,
                       addr(s->reg[x->rm].sym,
                            (int64_t)s->reg[x->rm].off +
                                    (grp == 0 ? (int64_t)x->imm : -(int64_t)x->imm)));
        return set(s, x->rm, none);
    case 0xC1: /* shl / shr r, imm8 */
        return !x->mem && (grp == 4 || grp == 5) && set(s, x->rm, none);
    case 0xFF: /* inc / dec r */
        return !x->mem && grp <= 1 && set(s, x->rm, none);
    default:
        if (x->op >= 0xB8 && x->op <= 0xBF) /* mov r, imm */
            return set(s, x->reg, none);
        return false;
    }
}

/* t = the join of t and s; true if t changed. Registers or words that differ are forgotten but
 * rsp, which becomes the join's own symbol. */
static bool merge(struct state *t, const struct state *s, uint8_t sym)
{
    if (!s->live)
        return false;
    if (!t->live) {
        *t = *s;
        return true;
    }
    bool changed = false;
    for (unsigned r = 0; r < 16; r++) {
        if (same(t->reg[r], s->reg[r]))
            continue;
        struct val v = r == RSP ? addr(sym, 0) : (struct val){0, V_NONE, 0};
        changed = changed || !same(t->reg[r], v);
        t->reg[r] = v;
    }
    uint8_t k = 0;
    for (uint8_t i = 0; i < t->nslots; i++) {
        bool keep = false;
        for (uint8_t j = 0; j < s->nslots && !keep; j++)
            keep = same(t->slot[i].at, s->slot[j].at) && same(t->slot[i].v, s->slot[j].v);
        if (keep)
            t->slot[k++] = t->slot[i];
    }
    changed = changed || k != t->nslots;
    t->nslots = k;
    return changed;
}

static struct join *join_at(struct join *j, unsigned *nj, uintptr_t at, bool add)
{
    for (unsigned i = 0; i < *nj; i++)
        if (j[i].at == at)
            return &j[i];
    if (!add || *nj == MAX_JOINS)
        return NULL;
    j[*nj].at = at;
    j[*nj].st.live = false;
    j[*nj].landed = false;
    return &j[(*nj)++];
}

/* The end of the frame's build in every entry: movbool(do_not_unlock_if_synchronized, true),
 * mov byte [r15 + d32], 1 (generate_normal_entry / generate_native_entry, JDK 17 and 25). */
static bool window_end(const struct fx_code_range *r, uintptr_t p)
{
    const uint8_t *b = fx_recover_code(p);
    return fx_recover_in(r, p, 8) && b[0] == 0x41 && b[1] == 0xC6 && b[2] == 0x87 && b[7] == 1;
}

/* One sweep from the entry to the window's end; *at_pc: the state at pc. 1: a fixed point,
 * 0: a join changed behind the sweep (sweep again), -1: not an entry this rule knows. */
static int sweep(const struct fx_code_range *r, uintptr_t entry, uintptr_t pc, struct join *j,
                 unsigned *nj, struct state *at_pc)
{
    struct state s;
    memset(&s, 0, sizeof(s));
    s.live = true;
    s.reg[RSP] = addr(SYM_E, 0);
    s.reg[RBP] = (struct val){0, V_FP, 0};
    s.reg[13] = addr(SYM_SSP, 0);
    s.reg[3] = (struct val){0, V_METHOD, 0};
    s.slot[0] = (struct slot){addr(SYM_E, 0), {0, V_RET, 0}};
    s.nslots = 1;
    at_pc->live = false;
    int fixed = 1;
    uintptr_t p = entry;
    for (unsigned k = 0; k < *nj; k++)
        j[k].landed = false;
    for (unsigned i = 0; i < MAX_INSNS; i++) {
        struct join *t = join_at(j, nj, p, false);
        if (t != NULL) {
            merge(&t->st, &s, (uint8_t)(SYM_JOIN + (t - j)));
            s = t->st;
            t->landed = true;
        }
        if (p == pc)
            *at_pc = s;
        if (window_end(r, p)) {
            /* a join the sweep never reached (past the end, or inside an instruction) is code
             * whose state the result lacks: not an entry this rule knows */
            for (unsigned k = 0; fixed == 1 && k < *nj; k++)
                if (!j[k].landed)
                    return -1;
            return fixed;
        }
        const uint8_t *b;
        unsigned n = fx_recover_head(r, p, &b);
        if (n > 0) {
            p += n;
            continue;
        }
        struct fx_insn x;
        if (b == NULL || !fx_recover_insn(r, p, &x))
            return -1;
        p += x.len;
        bool jcc = (x.op >= 0x70 && x.op <= 0x7F) || (x.op >= 0x180 && x.op <= 0x18F);
        if (jcc || x.op == 0xE9 || x.op == 0xEB) {
            uintptr_t to = p + (uintptr_t)x.imm;
            if (to >= entry && to < entry + WINDOW_MAX) { /* inside the window: a join */
                struct join *k = join_at(j, nj, to, true);
                if (k == NULL)
                    return -1;
                if (merge(&k->st, &s, (uint8_t)(SYM_JOIN + (k - j))) && to < p)
                    fixed = 0;
            } else if (to >= entry) {
                return -1;
            } /* else: out of the entry (the StackOverflowError stub), no way back */
            if (!jcc)
                s.live = false;
            continue;
        }
        if (s.live && !apply(&s, &x))
            return -1;
    }
    return -1;
}

/* Where v is now: a register's value, or a stack word relative to a register (its value -
 * its offset is the symbol's address). */
static bool resolve(const struct state *s, const struct fx_regs *in, struct val v, uintptr_t lo,
                    uintptr_t hi, uintptr_t *out, unsigned depth)
{
    for (unsigned k = 0; k < 16; k++) {
        unsigned r = (k + RSP) & 15; /* rsp, then rbp, ... */
        if (!same(s->reg[r], v))
            continue;
        if (r == RSP || r == RBP || in->gpr != NULL) {
            *out = r == RSP ? in->sp : r == RBP ? in->fp : in->gpr[r];
            return true;
        }
    }
    if (v.kind == V_ADDR) { /* sym + off from any register holding sym + k */
        for (unsigned k = 0; k < 16; k++) {
            unsigned r = (k + RSP) & 15;
            struct val a = s->reg[r];
            if (a.kind != V_ADDR || a.sym != v.sym || (r != RSP && r != RBP && in->gpr == NULL))
                continue;
            uintptr_t base = r == RSP ? in->sp : r == RBP ? in->fp : in->gpr[r];
            *out = base - (uintptr_t)(intptr_t)a.off + (uintptr_t)(intptr_t)v.off;
            return true;
        }
    }
    for (uint8_t i = 0; i < s->nslots; i++) {
        uintptr_t at;
        if (depth < 2 && same(s->slot[i].v, v) &&
            resolve(s, in, s->slot[i].at, lo, hi, &at, depth + 1))
            return fx_recover_stack_word(lo, hi, at, out);
    }
    return false;
}

int fx_recover_interp_entry(const struct fx_code_range *r, uintptr_t entry,
                            const struct fx_regs *in, uintptr_t lo, uintptr_t hi,
                            struct fx_regs *out)
{
    struct join j[MAX_JOINS];
    struct state at_pc;
    unsigned nj = 0;
    if (!fx_recover_in(r, entry, 1) || in->pc < entry || in->pc - entry >= WINDOW_MAX)
        return FX_REC_DECODE;
    int rc = 0;
    for (unsigned i = 0; i < MAX_SWEEPS && rc == 0; i++)
        rc = sweep(r, entry, in->pc, j, &nj, &at_pc);
    if (rc != 1)
        return FX_REC_DECODE; /* not an entry of the shapes known, or no fixed point */
    if (!at_pc.live)
        return FX_REC_STUB; /* pc on no point of the frame's build: elsewhere in the interpreter */
    uintptr_t ret, ssp, fp, e;
    struct val method = {0, V_METHOD, 0};
    if (in->gpr == NULL || !same(at_pc.reg[3], method))
        return FX_REC_DECODE; /* rbx is no longer the entered method */
    if (!resolve(&at_pc, in, (struct val){0, V_RET, 0}, lo, hi, &ret, 0) ||
        !resolve(&at_pc, in, (struct val){0, V_FP, 0}, lo, hi, &fp, 0) ||
        !resolve(&at_pc, in, addr(SYM_SSP, 0), lo, hi, &ssp, 0))
        return FX_REC_STACK;
    /* the sender sp lies above everything the entry pushed, and a little above the return
     * address's slot where that is still known (the c2i adapter's argument area at most) */
    if ((ssp & 7) != 0 || ssp < in->sp || ssp > hi ||
        (resolve(&at_pc, in, addr(SYM_E, 0), lo, hi, &e, 0) && (ssp < e || ssp - e > SSP_MAX_GAP)))
        return FX_REC_STACK;
    out->pc = ret;
    out->sp = ssp;
    out->fp = fp;
    return FX_REC_INTERP_ENTRY;
}

/* The interpreter's method entry, read from the Method* in rbx (proven by its jmethodID); a pc
 * elsewhere in the interpreter, or rbx no such Method*, stays "another stub" (FX_REC_STUB). */
static int interp_sigsafe(const struct fx_code_range *r, const struct fx_interp_layout *l,
                          const struct fx_regs *in, uintptr_t lo, uintptr_t hi, struct fx_regs *out,
                          fx_asgct_frame *top)
{
    uint64_t id;
    uintptr_t entry;
    if (l == NULL || __atomic_load_n(&l->pid, __ATOMIC_ACQUIRE) == 0 || in->gpr == NULL ||
        !fx_interp_entry_sigsafe(l, in->gpr[3], &id, &entry) || in->pc < entry ||
        in->pc - entry >= WINDOW_MAX)
        return FX_REC_STUB;
    int rc = fx_recover_interp_entry(r, entry, in, lo, hi, out);
    if (rc > 0)
        *top = (fx_asgct_frame){.lineno = FX_LINE_NMETHOD, .method_id = (jmethodID)(uintptr_t)id};
    return rc;
}

int fx_recover_caller_sigsafe(const struct fx_code_range *r, const struct fx_interp_layout *l,
                              const struct fx_regs *in, uintptr_t lo, uintptr_t hi, bool blob_ok,
                              struct fx_regs *out, fx_asgct_frame *top)
{
    if (r->kind == FX_BLOB_STUB && (r->flags & FX_RANGE_INTERPRETER) && hi > lo && in->sp >= lo &&
        in->sp < hi)
        return interp_sigsafe(r, l, in, lo, hi, out, top);
    return fx_recover_caller(r, in, lo, hi, blob_ok, out);
}
