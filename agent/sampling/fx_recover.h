/* SPDX-License-Identifier: Apache-2.0 */
/* The interface of stack recovery (issue 20, docs/VALIDATION.md section 8), for the signal
 * handler, codemap.c and the unit tests: the published table of code ranges (built by codemap.c
 * outside signal context) and its lookup, and the x86-64 rules that prove where the return
 * address is when the pc is in code that has no frame of its own at that point (recover.c,
 * recover_adapter.c). Every function here is signal-safe, pure, and reads only the memory it is
 * given bounds for: code bytes inside the range's [begin, end), stack words inside the thread's
 * [lo, hi). No calls but memcpy, no allocation, no globals; the rules' objects are part of the
 * signal path's allow-listed objects, and unit-tested without a JVM (tests/unit/test_recover.c). */
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
    uint32_t complete;    /* nmethod, stub: frame complete offset from begin (FX_OFF_UNKNOWN) */
    int32_t compile_id;   /* nmethod: HotSpot's compile id, checked at the blob in the handler */
    int32_t frame_words;  /* CodeBlob::_frame_size (words, return address included); <= 0 unknown */
    uint32_t stubs;       /* nmethod: its stub section's start from begin (nmethod::_stub_offset:
                           * exception and deopt handlers, call stubs); 0 unknown */
    uint8_t kind;         /* enum fx_blob_kind */
    uint8_t level;        /* nmethod: nmethod::_comp_level (1-3 C1, 4 C2), 0 unknown */
    uint8_t flags;        /* FX_RANGE_* */
    uint8_t arraycopy;    /* stub: FX_STUB_* (recover_pcdesc.h): recover_stub.c's rule applies */
};
#define FX_RANGE_INTERPRETER 0x01 /* stub: HotSpot's "Interpreter" (the template interpreter) */
#define FX_RANGE_SELF_INLINE 0x02 /* nmethod: its method is inlined into itself, or no records */
#define FX_RANGE_CALL_STUB   0x04 /* stub: StubRoutines' "call_stub", the entry from C to Java */
/* nmethod: an OSR compilation; `verified` holds its OSR entry's offset, `complete` is unknown */
#define FX_RANGE_OSR 0x08
/* stub: C1's slow_subtype_check, frameless, its arguments pushed (recover_subtype.c); nmethod:
 * a method handle intrinsic, frame size 0 read from its layout, level 0 (recover_mhintr.c) */
#define FX_RANGE_FRAMELESS 0x10
#define FX_STUB_ARRAYCOPY  1 /* fx_code_range.arraycopy: arraycopy, intrinsic (CRC32...), fill */
#define FX_STUB_INTRINSIC  2
#define FX_STUB_FILL       3 /* C2's fill stubs: their call has no JVM state, always partial (8.5d) */
/* stub: a deoptimization or uncommon trap blob (anchor walked in its first call only: 8.5m) */
#define FX_RANGE_DEOPT 0x20
/* stub: JDK 25's StubRoutines::method_entry_barrier (recover_entrybar.c) */
#define FX_RANGE_ENTRY_BARRIER 0x40
#define FX_RANGE_IC_BUFFER     0x80 /* stub: JDK 17's "InlineCacheBuffer" (recover_icstub.c) */
struct fx_codeheap_layout;
struct fx_interp_layout;
struct fx_code_recent;

/* Immutable once published (codemap.c), but for appends to `recent`: sorted by begin, no two
 * ranges overlap. heap and il: where a pc in no range is looked up next (codeheap.h,
 * fx_recover_find_any), NULL if not; found: the count of pcs found there (atomic). */
struct fx_code_table {
    const struct fx_codeheap_layout *heap;
    const struct fx_interp_layout *il;
    uint64_t *found, *lookups, *refused; /* atomic counts (fx_recover_find_any) */
    const struct fx_code_recent *recent; /* newer code than r[] (coderecent.h), or NULL */
    size_t n;
    struct fx_code_range r[];
};

#include "coderecent.h" /* fx_recover_find: the base table, then the recent one */

/* A recovery's outcome. Positive: the caller's registers exact. Negative: why not (counted). */
enum fx_recover_case {
    FX_REC_NONE = 0,
    FX_REC_DISPATCH = 1,   /* pc in a vtable/itable stub */
    FX_REC_PROLOGUE = 2,   /* pc between an nmethod's verified entry and its frame's completion */
    FX_REC_EPILOGUE = 3,   /* pc after the frame's release, on the straight path to ret */
    FX_REC_ICCHECK = 4,    /* pc in an nmethod's inline cache check, before the verified entry */
    FX_REC_ADAPTER = 5,    /* pc in an I2C/C2I adapter where the decode proves the return address */
    FX_REC_C1_BARRIER = 6, /* pc in g1_post_barrier_slow; caller at its slow-case continuation */
    FX_REC_ANCHOR = 7,     /* not in Java (-3): Java frames walked from the frame anchor */
    FX_REC_STUB_FRAME = 8, /* pc in an arraycopy/intrinsic stub (rbp-framed): compiled caller */
    FX_REC_LEAF_NATIVE = 9,   /* pc in native code compiled code called as a leaf: its caller */
    FX_REC_INTERP_ENTRY = 10, /* pc in the interpreter's method entry, frame being built */
    FX_REC_FRAMELESS = 11,    /* pc in C1's slow_subtype_check (frameless, decoded): C1 caller */
    FX_REC_STUB_PARTIAL = 12, /* an intrinsic stub over its caller's method, inlining not known */
    FX_REC_ICSTUB = 13,       /* pc in an inline cache stub (frameless): its compiled caller */
    FX_REC_MH_INTRINSIC = 14, /* pc in a method handle intrinsic (frameless nmethod): its caller */
    FX_REC_DEOPT = 15, /* -9 in fetch_unroll_info/uncommon_trap: the blob, then the anchor walk */
    FX_REC_CASES = 16,
    FX_REC_NOT_FOUND = -1,   /* pc in no known range */
    FX_REC_STUB = -2,        /* pc in another stub: named, no frame rule known */
    FX_REC_BODY = -3,        /* pc in an nmethod where no rule applies (its body) */
    FX_REC_LAYOUT = -4,      /* nmethod layout unknown (VMStructs) or blob changed */
    FX_REC_DECODE = -5,      /* an instruction the prologue/epilogue/ic rules do not know */
    FX_REC_STACK = -6,       /* a stack word outside the thread's stack, or bounds unknown */
    FX_REC_WALK = -7,        /* ASGCT failed from the caller's context too */
    FX_REC_TABLE_BUSY = -8,  /* reserved: not used by the current publication scheme */
    FX_REC_BCI0 = -9,        /* the caller came back at bci 0: maybe a deoptimized caller */
    FX_REC_NO_ANCHOR = -10,  /* not in Java: no last Java frame in the anchor, or offsets unknown */
    FX_REC_NOT_CALLED = -11, /* a stub's return address not after a call in current compiled code */
    FX_REC_NO_PCDESC = -12, /* after a call to an intrinsic stub, the first PcDesc not at its end */
    FX_REC_PCDESC_OSR = -13,   /* after a call to an intrinsic stub, in an OSR compilation */
    FX_REC_PCDESC_TABLE = -14, /* ... the PcDesc table unknown, unreadable, or none after it */
    FX_REC_FAILS = 15,         /* -1..-14 */
};

#include "heap_memo.h" /* one sample's code heap lookups (fx_heap_memo) and their budget */

/* The most Method* proofs one anchor walk pays for, 7 system calls each (interp_frame.h). */
#define FX_INTERP_BUDGET 64

/* Why a recovered walk from the frame anchor (FX_REC_ANCHOR) ended, when not at the depth:
 * the root side of such a stack is cut, and the profile names the reason (stacks.c). */
enum fx_walk_stop {
    FX_WSTOP_NONE = 0,    /* not a recovered walk, or it ended at the depth ([truncated]) */
    FX_WSTOP_INTERPRETED, /* at an interpreted frame not proven (interp_frame_sig.c) */
    FX_WSTOP_STUB,        /* at a stub: a call stub not crossed (recover_anchor.c), or other code */
    FX_WSTOP_UNKNOWN,     /* at a pc in no known code range */
    FX_WSTOP_STALE,       /* at a compiled method whose code was replaced */
    FX_WSTOP_STACK,       /* at a stack word outside the thread's stack */
    FX_WSTOP_BUDGET,      /* after FX_INTERP_BUDGET Method* proofs: each costs system calls */
    FX_WSTOP_HEAP_BUDGET, /* after FX_HEAP_BUDGET code heap lookups (fx_heap_memo) */
};

/* What validate mode learns from the anchor walk beside ASGCT (recover_anchor.c; docs/VALIDATION.md
 * 4.2's proof and 4.9's evidence): the code begin of the nmethod of its first frame when compiled
 * (else 0), and the first of its frames whose return address (the callee's) lies in its nmethod's
 * stub section, where only a deoptimized frame's patched return address points (-1: none). */
struct fx_anchor_facts {
    uintptr_t top_code;
    int32_t deopt_frame;
};

/* Frame types (issue 32): one word per physical Java frame, leaf first, from the code each
 * runs in (recover_anchor.c, fx_recover_types). Top byte: FX_TYPE_INTERPRETED, or
 * FX_TYPE_COMPILED | tier (bits 0-2: nmethod::_comp_level, 0 unknown) | 8 when the method may
 * be inlined into itself (the inlined frames cannot be told from the root by method alone),
 * | FX_TYPE_FOUND where the nmethod was found in the code heaps during the sample and the
 * record's found part names it (its next word; with FX_TYPE_AGAIN the word before's again);
 * below it, a compiled frame's jmethodID. At most FX_TYPES_MAX per sample. */
#define FX_TYPE_INTERPRETED 0x20u
#define FX_TYPE_COMPILED    0x40u
#define FX_TYPE_FOUND       0x10u
#define FX_TYPE_AGAIN       0x80u
#define FX_TYPES_MAX        64

/* Issue 32: the native frames below and between the Java frames, after the types part when
 * `below` is set: a uint64_t count of words, then segments (format: native_below.c). */
#define FX_BELOW_SEGS  8
#define FX_BELOW_WORDS (FX_BELOW_SEGS + 1 + FX_NATIVE_MAX)
#define FX_BELOW_MORE  (UINT64_C(1) << 16)
/* The segment's walk began in HotSpot's call stub: the return address the Java frames' walk
 * ended at lies in the range of a stub flagged FX_RANGE_CALL_STUB (looked up again when the
 * header is written), whose name index (codemap.c) is in bits 40-55: the model shows the stub
 * as a frame of its own, leaf side of the segment, right under the Java frame it called. */
#define FX_BELOW_CALL_STUB       (UINT64_C(1) << 17)
#define FX_BELOW_STUB_NAME_SHIFT 40

struct fx_regs {
    uintptr_t pc, sp, fp;
    const uintptr_t *gpr; /* the 16 general registers in encoding order (rax..r15), or NULL */
};

/* Length of a HotSpot alignment nop at p (MacroAssembler::nop(int) on x86-64 with
 * UseAddressNop: 90, 66 90, 0F 1F /0 with its address forms, any number of 66 prefixes), or 0
 * if p holds no nop. */
unsigned fx_recover_nop_len(const struct fx_code_range *r, uintptr_t p);
/* Signal-safe: the caller's registers when pc is in r, by the rules of recover.c. [lo, hi) is
 * the thread's stack (0, 0: unknown). blob_ok: the nmethod at r->blob is still the compilation r
 * was made from (the caller checks the compile id). A case > 0, or why not (< 0). */
int fx_recover_caller(const struct fx_code_range *r, const struct fx_regs *in, uintptr_t lo,
                      uintptr_t hi, bool blob_ok, struct fx_regs *out);

/* The caller's pc for a return address ret into C1's slow-case code of nmethod n
 * (G1BarrierSetAssembler::gen_post_barrier_stub: bind entry; cmp; je continuation;
 * store_parameter; call g1_post_barrier_slow; jmp continuation): the continuation, the
 * instruction right after the barrier's branch into that code (G1BarrierSetC1::post_barrier:
 * branch(notEqual, slow); branch_destination(continuation)). Checked: a jmp at ret whose target c
 * lies before it in n, and a jcc ending at c whose target lies in (c, ret). false otherwise. */
bool fx_recover_continuation(const struct fx_code_range *n, uintptr_t ret, uintptr_t *pc);

/* recover_stub.c: the caller's registers from a pc in a stub that begins with push rbp;
 * mov rbp, rsp and keeps rbp its frame pointer (StubRoutines' leaf stubs, C1's
 * g1_post_barrier_slow): FX_REC_STUB_FRAME, or why not (FX_REC_STUB: no such head). */
int fx_recover_rbp_frame(const struct fx_code_range *r, const struct fx_regs *in, uintptr_t lo,
                         uintptr_t hi, struct fx_regs *out);
/* recover_vmstub.c (8.5h), off the signal path: flush_icache_stub's offset past its first ret
 * when no instruction before it changes rsp (kept in its range's `stubs`), else 0. */
uint32_t fx_recover_vmstub_ret(const char *name, const uint8_t *code, size_t len);
/* recover_subtype.c (docs/VALIDATION.md 8.5g): the bytes rsp has moved since the entry of the
 * frameless stub r at the instruction at pc, by decoding all of r; -1 if refused. */
int32_t fx_recover_stub_depth(const struct fx_code_range *r, uintptr_t pc);
/* The caller's registers from a pc in such a stub: FX_REC_FRAMELESS, or why not. out->sp is
 * the caller's sp with its pushed arguments still on the stack (fx_recover_pushed_return). */
int fx_recover_frameless(const struct fx_code_range *r, const struct fx_regs *in, uintptr_t lo,
                         uintptr_t hi, struct fx_regs *out);
/* c->pc, a return address in compiled method n, follows a call to stub and two pops (the
 * arguments the caller pushed), then the result's test and a je (C1's type and store checks):
 * c->sp moved past them, true; false otherwise (C1's arraycopy check among them). */
bool fx_recover_pushed_return(const struct fx_code_range *n, uintptr_t stub, struct fx_regs *c);
/* ret lies in compiled method n right after a call instruction (rel32, or through a register). */
bool fx_recover_after_call(const struct fx_code_range *n, uintptr_t ret);
bool fx_recover_call_target(const struct fx_code_range *n, uintptr_t ret, uintptr_t *target);
/* recover_pcdesc.c: the call test, and for an FX_STUB_INTRINSIC stub a call to it and a PcDesc
 * of n where the call ends (docs/VALIDATION.md 8.5d; refused while VMStructs gave no table
 * layout): 0 when proven, else FX_REC_NOT_CALLED (no such call), FX_REC_NO_PCDESC (the first
 * PcDesc after it not where the call's node ends, not proven the call's own; a fill stub's
 * always, called), FX_REC_PCDESC_OSR or FX_REC_PCDESC_TABLE. */
int fx_recover_stub_refused(const struct fx_code_range *stub, const struct fx_code_range *n,
                            uintptr_t ret);
static inline bool fx_recover_stub_called(const struct fx_code_range *stub,
                                          const struct fx_code_range *n, uintptr_t ret)
{
    return fx_recover_stub_refused(stub, n, ret) == 0;
}

/* recover_interp.c: the caller's registers from a pc in the interpreter's method entry that
 * begins at entry (the entered Method's _i2i_entry; r: the interpreter's range), while it builds
 * the frame: FX_REC_INTERP_ENTRY, or why not. in->gpr is required (rbx, r13). */
int fx_recover_interp_entry(const struct fx_code_range *r, uintptr_t entry,
                            const struct fx_regs *in, uintptr_t lo, uintptr_t hi,
                            struct fx_regs *out);

#if defined(__x86_64__)
/* Signal-safe: *to = *from with the caller's registers: what ASGCT reads of a context is RIP,
 * RSP and RBP (os::fetch_frame_from_context); everything else stays the interrupted thread's. */
void fx_recover_patch(ucontext_t *to, const ucontext_t *from, const struct fx_regs *r);

/* Signal-safe: the interrupted general registers in encoding order (rax, rcx, rdx, rbx, rsp,
 * rbp, rsi, rdi, r8-r15), for the rules reading them (the adapter's, the interpreter entry's). */
static inline void fx_recover_gpr(const ucontext_t *uc, uintptr_t gpr[16])
{
    static const int reg[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP,
                                REG_RSI, REG_RDI, REG_R8,  REG_R9,  REG_R10, REG_R11,
                                REG_R12, REG_R13, REG_R14, REG_R15};
    for (int i = 0; i < 16; i++)
        gpr[i] = (uintptr_t)uc->uc_mcontext.gregs[reg[i]];
}
#endif

#endif
