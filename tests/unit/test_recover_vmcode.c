/* SPDX-License-Identifier: Apache-2.0 */
/* agent/sampling/recover_vmcode.c without a JVM (docs/VALIDATION.md 8.5i): the stub side of
 * G1's refinement under C1's g1_post_barrier_slow, on the stub's real bytes as JDK 17 and
 * Temurin 25 generate them (-XX:+PrintStubCode), its step to the C1 caller's continuation on a
 * synthetic code table, the anchored route's decision on a fake frame anchor and table, and the
 * deoptimization blob's walk (8.5m) on a synthetic stack. One
 * refused case per condition. The handler's other parts are fakes here: the native walk, the text
 * map (a flag says whether an address is native code of a mapped file), the code heap lookup (the
 * table alone) and the compile id check (always current). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recover_barrier_leaf.h"
#include "recover_vmcode.h"

/* C1's g1_post_barrier_slow under G1, JDK 17 (17.0.x, Debian) and JDK 25 (Temurin 25.0.3),
 * -XX:+PrintStubCode; RET17 / RET25: the return addresses of its runtime call
 * (write_ref_field_post_entry, call rel32), once on each side of call_VM_leaf's alignment test
 * (sub rsp, 8; call; add rsp, 8 / call). Both keep rbp their frame pointer around it. */
static const char jdk17_hex[] =
        "55488bec5051488b4d1048c1e90948b800a0834c227f00004803c88039040f84d4010000f0834424c0008039"
        "000f84c5010000c6010052498b57404885d20f84140000004883ea08498957404903575048890ae99f010000"
        "4881ec80000000488944247848894c2470488954246848895c246048896c2450488974244848897c24404c89"
        "4424384c894c24304c895424284c895c24204c896424184c896c24104c897424084c893c244881ecf0030000"
        "c5fb11442408c5fb114c2410c5fb11542418c5fb115c2420c5fb11642428c5fb116c2430c5fb11742438c5fb"
        "117c2440c57b11442448c57b114c2450c57b11542458c57b115c2460c57b11642468c57b116c2470c57b1174"
        "2478c57b11bc2480000000498bf7488bf9f7c40f0000000f84120000004883ec08e802b39d0f4883c408e905"
        "000000e8f4b29d0fc5fb10442408c5fb104c2410c5fb10542418c5fb105c2420c5fb10642428c5fb106c2430"
        "c5fb10742438c5fb107c2440c57b10442448c57b104c2450c57b10542458c57b105c2460c57b10642468c57b"
        "106c2470c57b10742478c57b10bc24800000004881c4f00300004c8b3c244c8b7424084c8b6c24104c8b6424"
        "184c8b5c24204c8b5424284c8b4c24304c8b442438488b7c2440488b742448488b6c2450488b5c2460488b54"
        "2468488b4c2470488b4424784881c4800000005a5958c9c30f1f4000";
static const char jdk25_hex[] =
        "55488bec5051488b4d1048c1e90948b80080b045bb7f00004803c88039020f84c1010000f0834424c0008039"
        "000f84b2010000c6010052498b57504885d20f84140000004883ea08498957504903575848890ae98c010000"
        "4881ecd00000004889042448894c24084889542410488974241848897c24204c894424284c894c24304c8954"
        "24384c895c2440c5fb11442450c5fb114c2458c5fb11542460c5fb115c2468c5fb11642470c5fb116c2478c5"
        "fb11b42480000000c5fb11bc2488000000c57b11842490000000c57b118c2498000000c57b119424a0000000"
        "c57b119c24a8000000c57b11a424b0000000c57b11ac24b8000000c57b11b424c0000000c57b11bc24c80000"
        "00498bf7488bf940f6c40f0f84120000004883ec08e8ce10da124883c408e905000000e8c010da12c57b10bc"
        "24c8000000c57b10b424c0000000c57b10ac24b8000000c57b10a424b0000000c57b109c24a8000000c57b10"
        "9424a0000000c57b108c2498000000c57b10842490000000c5fb10bc2488000000c5fb10b42480000000c5fb"
        "106c2478c5fb10642470c5fb105c2468c5fb10542460c5fb104c2458c5fb104424504c8b5c24404c8b542438"
        "4c8b4c24304c8b442428488b7c2420488b742418488b542410488b4c2408488b04244881c4d0000000c5f877"
        "5a5958c9c30f1f8000000000";
#define RET17  0x12E
#define RET17B 0x13C
#define RET25  0x122
#define RET25B 0x130

static _Alignas(16) uint8_t stub[1024];
static _Alignas(16) uint8_t nm[64];
static _Alignas(16) uintptr_t stack[128];
#define LO ((uintptr_t)&stack[0])
#define HI ((uintptr_t)&stack[128])

/* --- fakes of the handler's other parts --- */
#include "fake_sig_code.h"
static struct fx_regs walked;
static int leaf_calls;

bool fx_native_walk_to_java_sigsafe(const struct fx_thread *t, const void *ucontext,
                                    struct fx_regs *at)
{
    (void)t, (void)ucontext;
    *at = walked;
    return true;
}
int fx_recover_leaf_native_sigsafe(struct fx_thread *t, void *ucontext, fx_asgct_trace *trace,
                                   uint32_t depth, struct fx_heap_memo *m)
{
    (void)t, (void)ucontext, (void)trace, (void)depth, (void)m;
    leaf_calls++;
    return FX_REC_NOT_CALLED;
}

static size_t load(const char *hex)
{
    return fake_hex_load(stub, sizeof(stub), hex);
}

static struct fx_code_range stub_range(size_t n)
{
    return (struct fx_code_range){.begin = (uintptr_t)stub,
                                  .end = (uintptr_t)stub + n,
                                  .verified = FX_OFF_UNKNOWN,
                                  .complete = FX_OFF_UNKNOWN,
                                  .kind = FX_BLOB_C1_BARRIER,
                                  .name = 7};
}

/* The registers at the stub's return address as the native walk leaves them: sp past the
 * return address, rbp the stub's frame pointer (48 bytes up: its pushes), [rbp] the caller's
 * rbp, [rbp + 8] the return address into the C1 method (C1_RET). */
#define C1_RET ((uintptr_t)nm + 0x33)
static struct fx_regs at_call(uintptr_t ret)
{
    memset(stack, 0, sizeof(stack));
    stack[70] = 0xF00;  /* the caller's rbp */
    stack[71] = C1_RET; /* into the slow-case code */
    return (struct fx_regs){.pc = ret, .sp = (uintptr_t)&stack[64], .fp = (uintptr_t)&stack[70]};
}

static void check_stub(const char *hex, unsigned ret)
{
    size_t n = load(hex);
    struct fx_code_range r = stub_range(n);
    struct fx_regs at = at_call(r.begin + ret), out;
    uintptr_t target = 0;
    ck_assert_int_eq(fx_recover_barrier_leaf(&r, &at, LO, HI, &target, &out), FX_REC_C1_BARRIER);
    ck_assert_uint_eq(out.pc, C1_RET);
    ck_assert_uint_eq(out.sp, (uintptr_t)&stack[72]);
    ck_assert_uint_eq(out.fp, 0xF00);
    ck_assert_uint_ne(target, 0);
    /* refusals: another blob; a return address not after a call (the stub's first bytes and
     * the instruction after the return address); rbp off the stack; no enter head */
    r.kind = FX_BLOB_STUB;
    ck_assert_int_eq(fx_recover_barrier_leaf(&r, &at, LO, HI, &target, &out), FX_REC_STUB);
    r.kind = FX_BLOB_C1_BARRIER;
    at.pc = r.begin + 4;
    ck_assert_int_eq(fx_recover_barrier_leaf(&r, &at, LO, HI, &target, &out), FX_REC_NOT_CALLED);
    at = at_call(r.begin + ret);
    at.fp = HI + 64;
    ck_assert_int_eq(fx_recover_barrier_leaf(&r, &at, LO, HI, &target, &out), FX_REC_STACK);
    at = at_call(r.begin + ret);
    at.fp = at.sp - 16; /* rbp below sp: not the stub's frame */
    ck_assert_int_eq(fx_recover_barrier_leaf(&r, &at, LO, HI, &target, &out), FX_REC_STACK);
    at = at_call(r.begin + ret);
    stub[0] = 0x90; /* no push rbp; mov rbp, rsp */
    ck_assert_int_eq(fx_recover_barrier_leaf(&r, &at, LO, HI, &target, &out), FX_REC_DECODE);
}

START_TEST(test_stub_jdk17)
{
    check_stub(jdk17_hex, RET17);
    check_stub(jdk17_hex, RET17B);
}
END_TEST

START_TEST(test_stub_jdk25)
{
    check_stub(jdk25_hex, RET25);
    check_stub(jdk25_hex, RET25B);
}
END_TEST

/* A call through a register loaded elsewhere: its target is not in the instruction. */
START_TEST(test_call_target_unknown)
{
    static const uint8_t s[] = {0x55, 0x48, 0x8B, 0xEC, 0x50, 0x41, 0xFF, 0xD3, 0x58, 0xC9, 0xC3};
    memcpy(stub, s, sizeof(s));
    struct fx_code_range r = stub_range(sizeof(s));
    struct fx_regs at = at_call(r.begin + 8), out;
    uintptr_t target = 0;
    ck_assert_int_eq(fx_recover_barrier_leaf(&r, &at, LO, HI, &target, &out), FX_REC_NOT_CALLED);
}
END_TEST

#define NM_METHOD 0x6000 /* the C1 method's jmethodID */
static _Alignas(struct fx_code_table) unsigned char mem[sizeof(struct fx_code_table) +
                                                        2 * sizeof(struct fx_code_range)];

/* The code table: the stub and the C1 method (its slow-case code as unit.recover's: jne T at 2,
 * the continuation C = 8, T = 0x20: cmp; je C; mov [rsp], rax; call; R = 0x33: jmp C). */
static const struct fx_code_table *table(size_t n)
{
    struct fx_code_table *t = (struct fx_code_table *)mem;
    memset(nm, 0x90, sizeof(nm));
    static const uint8_t jne[] = {0x0F, 0x85, 0x18, 0, 0, 0};
    static const uint8_t slow[] = {0x48, 0x83, 0xF8, 0x00, 0x0F, 0x84, 0xDE, 0xFF,
                                   0xFF, 0xFF, 0x48, 0x89, 0x04, 0x24, 0xE8, 0,
                                   0,    0,    0,    0xE9, 0xD0, 0xFF, 0xFF, 0xFF};
    memcpy(nm + 2, jne, sizeof(jne));
    memcpy(nm + 0x20, slow, sizeof(slow));
    struct fx_code_range s = stub_range(n);
    struct fx_code_range c = {.begin = (uintptr_t)nm,
                              .end = (uintptr_t)nm + sizeof(nm),
                              .verified = 0,
                              .complete = 0,
                              .kind = FX_BLOB_NMETHOD,
                              .name = NM_METHOD,
                              .compile_id = 1};
    bool stub_first = s.begin < c.begin;
    t->n = 2;
    t->r[0] = stub_first ? s : c;
    t->r[1] = stub_first ? c : s;
    return t;
}

START_TEST(test_step_to_continuation)
{
    size_t n = load(jdk17_hex);
    const struct fx_code_table *tab = table(n);
    struct fx_code_range got;
    struct fx_regs at = at_call((uintptr_t)stub + RET17);
    fake_mapped = true;
    ck_assert(fx_recover_barrier_leaf_step(tab, NULL, LO, HI, &at, &got));
    ck_assert_uint_eq(at.pc, (uintptr_t)nm + 8); /* the barrier's continuation */
    ck_assert_uint_eq(at.sp, (uintptr_t)&stack[72]);
    ck_assert_uint_eq(at.fp, 0xF00);
    ck_assert_uint_eq(got.begin, (uintptr_t)stub);
    /* refusals, *at unchanged: the call's target not native code of a file; a return address
     * in no C1 method; no continuation there (a call, not the jmp, at it); not in the stub */
    struct fx_regs before = at_call((uintptr_t)stub + RET17);
    at = before;
    fake_mapped = false;
    ck_assert(!fx_recover_barrier_leaf_step(tab, NULL, LO, HI, &at, &got));
    ck_assert_uint_eq(at.pc, before.pc);
    fake_mapped = true;
    stack[71] = 0x1234;
    ck_assert(!fx_recover_barrier_leaf_step(tab, NULL, LO, HI, &at, &got));
    stack[71] = (uintptr_t)nm + 0x2E; /* after the slow-case code's call: no jmp there */
    ck_assert(!fx_recover_barrier_leaf_step(tab, NULL, LO, HI, &at, &got));
    at = at_call((uintptr_t)nm + 0x33); /* a pc in the C1 method, not in the stub */
    ck_assert(!fx_recover_barrier_leaf_step(tab, NULL, LO, HI, &at, &got));
}
END_TEST

/* The call's target in the code table (an rbp step that skipped frames would look so). */
START_TEST(test_step_target_in_code)
{
    static const uint8_t s[] = {0x55, 0x48, 0x8B, 0xEC, 0x50, 0xE8, 0, 0, 0, 0, 0x58, 0xC9, 0xC3};
    memcpy(stub, s, sizeof(s));
    const struct fx_code_table *tab = table(sizeof(s));
    int32_t rel = (int32_t)((intptr_t)nm - (intptr_t)(stub + 10)); /* call into the C1 method */
    memcpy(stub + 6, &rel, sizeof(rel));
    struct fx_regs at = at_call((uintptr_t)stub + 10);
    struct fx_code_range got;
    fake_mapped = true;
    ck_assert(!fx_recover_barrier_leaf_step(tab, NULL, LO, HI, &at, &got));
    rel = 0x1000; /* elsewhere: native code (the fake says so) */
    memcpy(stub + 6, &rel, sizeof(rel));
    ck_assert(fx_recover_barrier_leaf_step(tab, NULL, LO, HI, &at, &got));
}
END_TEST

/* The anchored route: ASGCT's code, the anchor's fields (offsets from the JNIEnv), the pc, and
 * the blob the anchor's frame is in (its pc, or the word below its sp). */
START_TEST(test_anchored_route)
{
    static _Alignas(16) uintptr_t env[8];
    struct fx_thread t;
    memset(&t, 0, sizeof(t));
    t.env = (JNIEnv *)(void *)env;
    t.stack_lo = LO, t.stack_hi = HI;
    fx_sig.anchor_sp_off = 8, fx_sig.anchor_pc_off = 16, fx_sig.anchor_fp_off = 24;
    size_t n = load(jdk17_hex); /* any stub: here the one the anchor's frame is in */
    struct fx_code_table *tab = (struct fx_code_table *)table(n);
    struct fx_code_range *s = tab->r[0].begin == (uintptr_t)stub ? &tab->r[0] : &tab->r[1];
    s->kind = FX_BLOB_STUB;
    fx_sig.code_table = tab;
    ucontext_t uc;
    memset(&uc, 0, sizeof(uc));
    uc.uc_mcontext.gregs[REG_RIP] = 0x7F0000001000;
    memset(stack, 0, sizeof(stack));
    stack[63] = (uintptr_t)stub + 40; /* the call's return address below the anchor's sp */
    env[1] = (uintptr_t)&stack[64], env[2] = 0, env[3] = 0; /* sp set, pc not yet */
    fake_mapped = true;
    ck_assert(fx_vmcode_anchored_sigsafe(&t, &uc, FX_ASGCT_NOT_WALKABLE_JAVA, NULL));
    ck_assert(fx_vmcode_anchored_sigsafe(&t, &uc, FX_ASGCT_UNKNOWN_JAVA, NULL));
    env[3] = 0xF00; /* C1's call_RT: fp set */
    ck_assert(fx_vmcode_anchored_sigsafe(&t, &uc, FX_ASGCT_NOT_WALKABLE_JAVA, NULL));
    env[2] = (uintptr_t)stub + 8; /* made walkable (last_frame()), or C2's exception blob */
    ck_assert(fx_vmcode_anchored_sigsafe(&t, &uc, FX_ASGCT_NOT_WALKABLE_JAVA, NULL));
    s->flags = FX_RANGE_DEOPT; /* a deoptimization blob: unpack_frames fills frames under it */
    ck_assert(!fx_vmcode_anchored_sigsafe(&t, &uc, FX_ASGCT_NOT_WALKABLE_JAVA, NULL));
    s->flags = 0;
    env[2] = 0x1234; /* the anchor's frame in no known blob */
    ck_assert(!fx_vmcode_anchored_sigsafe(&t, &uc, FX_ASGCT_NOT_WALKABLE_JAVA, NULL));
    /* issue 31: in an nmethod the code heaps give (codemap=heap: not in the table yet) */
    struct fx_heap_memo m = {.lookups = 0};
    m.kept[0] = (struct fx_code_range){.begin = 0x1000, .end = 0x2000, .kind = FX_BLOB_NMETHOD};
    ck_assert(fx_vmcode_anchored_sigsafe(&t, &uc, FX_ASGCT_NOT_WALKABLE_JAVA, &m));
    env[2] = 0;
    env[1] = LO; /* the word below the anchor's sp outside the stack */
    ck_assert(!fx_vmcode_anchored_sigsafe(&t, &uc, FX_ASGCT_NOT_WALKABLE_JAVA, NULL));
    env[1] = (uintptr_t)&stack[64];
    ck_assert(
            !fx_vmcode_anchored_sigsafe(&t, &uc, FX_ASGCT_UNKNOWN_NOT_JAVA, NULL)); /* -3: 8.9's */
    ck_assert(!fx_vmcode_anchored_sigsafe(&t, &uc, 3, NULL));                       /* an answer */
    fake_mapped = false; /* the pc in the code cache (anonymous memory) */
    ck_assert(!fx_vmcode_anchored_sigsafe(&t, &uc, FX_ASGCT_NOT_WALKABLE_JAVA, NULL));
    fake_mapped = true;
    env[1] = 0; /* no last Java frame: the unanchored case */
    ck_assert(!fx_vmcode_anchored_sigsafe(&t, &uc, FX_ASGCT_NOT_WALKABLE_JAVA, NULL));
    env[1] = (uintptr_t)&stack[64];
    ck_assert(fx_vmcode_anchored_sigsafe(&t, &uc, FX_ASGCT_NOT_WALKABLE_JAVA, NULL));
    fx_sig.anchor_pc_off = 0; /* offsets unknown */
    ck_assert(!fx_vmcode_anchored_sigsafe(&t, &uc, FX_ASGCT_NOT_WALKABLE_JAVA, NULL));
    ck_assert(!fx_vmcode_anchored_sigsafe(&t, NULL, FX_ASGCT_NOT_WALKABLE_JAVA, NULL));
    fx_sig.code_table = NULL;
}
END_TEST

/* The whole recovery with a fake AsyncGetCallTrace: from the continuation - 1, the stub's frame
 * on top; a native walk that ends elsewhere goes to the leaf rule (8.5e). */
static uintptr_t asked_pc;
static fx_asgct_frame answer = {.lineno = 12, .method_id = (jmethodID)0x5000};
static void fake_asgct(fx_asgct_trace *trace, jint depth, void *ucontext)
{
    (void)depth;
    ucontext_t *uc = ucontext;
    asked_pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    trace->frames[0] = answer;
    trace->num_frames = 1;
}

/* The state of a recovery from the JDK 25 stub's runtime call: the table, the fake ASGCT, the
 * native walk ended at the call's return address; a thread and an empty context. */
struct recovery {
    struct fx_thread t;
    fx_asgct_frame frames[4];
    fx_asgct_trace trace;
    fx_asgct_frame blob;
    ucontext_t uc;
};
static void recovery_setup(struct recovery *r)
{
    fx_sig.code_table = (struct fx_code_table *)table(load(jdk25_hex));
    fx_sig.asgct = fake_asgct;
    fake_mapped = true;
    walked = at_call((uintptr_t)stub + RET25);
    memset(r, 0, sizeof(*r));
    r->t.stack_lo = LO, r->t.stack_hi = HI;
    r->trace = (fx_asgct_trace){.num_frames = FX_ASGCT_NOT_WALKABLE_JAVA, .frames = r->frames};
}

START_TEST(test_recovery)
{
    struct recovery r;
    recovery_setup(&r);
    ck_assert_int_eq(fx_recover_vmcode_sigsafe(&r.t, &r.uc, &r.trace, 4, &r.blob, NULL),
                     FX_REC_C1_BARRIER);
    ck_assert_uint_eq(asked_pc, (uintptr_t)nm + 7);
    ck_assert_int_eq(r.trace.num_frames, 2);
    ck_assert_int_eq(r.frames[0].lineno, FX_LINE_STUB);
    ck_assert_ptr_eq(r.frames[0].method_id, (jmethodID)7);
    ck_assert_ptr_eq(r.frames[1].method_id, (jmethodID)0x5000);
    leaf_calls = 0;
    walked.pc = (uintptr_t)nm + 0x33; /* the walk ended in compiled code: the leaf rule's */
    r.trace.num_frames = FX_ASGCT_UNKNOWN_JAVA;
    ck_assert_int_eq(fx_recover_vmcode_sigsafe(&r.t, &r.uc, &r.trace, 4, &r.blob, NULL),
                     FX_REC_NOT_CALLED);
    ck_assert_int_eq(leaf_calls, 1);
    fx_sig.code_table = NULL;
}
END_TEST

/* 8.5a: a caller frame at bci 0 is AsyncGetCallTrace's fallback (the nmethod's own method at
 * bci 0, no inlined frames: a deoptimized caller) only if its method is the nmethod's own; an
 * inlined method at bci 0 (System.nanoTime first in Budget.more) is a scope of its debug
 * information: kept. The pure rule, then through the barrier's recovery (the caller's nmethod
 * looked up at the continuation - 1). Fails with every bci 0 refused, or none. */
START_TEST(test_bci0)
{
    struct fx_code_range n = {.kind = FX_BLOB_NMETHOD, .name = 0x6000};
    struct fx_code_range s = {.kind = FX_BLOB_STUB, .name = 0x6000};
    ck_assert(!fx_recover_bci0_refused(3, 0x6000, &n));  /* not bci 0 */
    ck_assert(fx_recover_bci0_refused(0, 0x6000, &n));   /* the nmethod's own method */
    ck_assert(!fx_recover_bci0_refused(0, 0x5000, &n));  /* an inlined method's bci 0 */
    ck_assert(fx_recover_bci0_refused(0, 0, &n));        /* method unknown */
    ck_assert(fx_recover_bci0_refused(0, 0x5000, NULL)); /* no code known there */
    ck_assert(fx_recover_bci0_refused(0, 0x5000, &s));   /* not an nmethod */
    ck_assert(!fx_recover_bci0_refused(-3, 0x6000, &n)); /* a native method's frame */

    struct recovery r;
    recovery_setup(&r);
    answer = (fx_asgct_frame){.lineno = 0, .method_id = (jmethodID)NM_METHOD};
    ck_assert_int_eq(fx_recover_vmcode_sigsafe(&r.t, &r.uc, &r.trace, 4, &r.blob, NULL),
                     FX_REC_BCI0);
    answer.method_id = (jmethodID)0x5000;
    ck_assert_int_eq(fx_recover_vmcode_sigsafe(&r.t, &r.uc, &r.trace, 4, &r.blob, NULL),
                     FX_REC_C1_BARRIER);
    ck_assert_ptr_eq(r.frames[1].method_id, (jmethodID)0x5000);
    ck_assert_int_eq(r.frames[1].lineno, 0);
    answer = (fx_asgct_frame){.lineno = 12, .method_id = (jmethodID)0x5000};
    fx_sig.code_table = NULL;
}
END_TEST

/* 8.5m: AsyncGetCallTrace's -9 in the deoptimization blob's call to fetch_unroll_info, on a
 * synthetic stack: the blob's frame (4 words) at the anchor's sp, the deoptee's (6 words, its
 * return address patched to its deopt handler, in its stub section), its compiled caller's
 * (4 words), then a pc in no code: the walk named so. Refused: the anchor's pc unpack_frames'
 * the_pc (no return address), the native frames returning elsewhere than at the anchor's sp
 * (unpack_frames after its alignment) or into compiled code (Java run from inside
 * uncommon_trap), a stub that is no deoptimization blob, one without a frame size, no anchor. */
static _Alignas(16) uint8_t code[192]; /* the blob, the deoptee, its caller */
static _Alignas(struct fx_code_table) unsigned char dmem[sizeof(struct fx_code_table) +
                                                         3 * sizeof(struct fx_code_range)];
#define BLOB_RET ((uintptr_t)code + 0x20) /* after the blob's call to fetch_unroll_info */
#define THE_PC   ((uintptr_t)code + 0x18) /* unpack_frames' anchor pc */

START_TEST(test_deopt)
{
    static _Alignas(16) uintptr_t env[8];
    struct fx_code_table *tab = (struct fx_code_table *)dmem;
    memset(dmem, 0, sizeof(dmem));
    tab->n = 3;
    tab->r[0] = (struct fx_code_range){.begin = (uintptr_t)code,
                                       .end = (uintptr_t)code + 64,
                                       .kind = FX_BLOB_STUB,
                                       .flags = FX_RANGE_DEOPT,
                                       .frame_words = 4,
                                       .name = 9};
    for (int i = 1; i < 3; i++)
        tab->r[i] = (struct fx_code_range){.begin = (uintptr_t)code + 64 * (unsigned)i,
                                           .end = (uintptr_t)code + 64 * (unsigned)i + 64,
                                           .kind = FX_BLOB_NMETHOD,
                                           .frame_words = 6 - 2 * (i - 1),
                                           .name = 0x6000 + (unsigned)i,
                                           .stubs = 0x30};
    fx_sig.code_table = tab;
    fx_sig.anchor_sp_off = 8, fx_sig.anchor_pc_off = 16, fx_sig.anchor_fp_off = 24;
    memset(stack, 0, sizeof(stack));
    stack[39] = BLOB_RET;                     /* the call's return address below the anchor's sp */
    stack[43] = (uintptr_t)code + 64 + 0x38;  /* the deoptee's deopt handler */
    stack[49] = (uintptr_t)code + 128 + 0x10; /* into its caller's body */
    stack[53] = 0x1234;                       /* no code */
    struct fx_thread t;
    memset(&t, 0, sizeof(t));
    t.env = (JNIEnv *)(void *)env;
    t.stack_lo = LO, t.stack_hi = HI;
    env[1] = (uintptr_t)&stack[40], env[2] = 0, env[3] = 0xF00;
    walked = (struct fx_regs){.pc = BLOB_RET, .sp = (uintptr_t)&stack[40], .fp = 0xF00};
    ucontext_t uc;
    memset(&uc, 0, sizeof(uc));
    fx_asgct_frame frames[8];
    fx_asgct_trace tr = {.num_frames = FX_ASGCT_DEOPT, .frames = frames};
    uint8_t stop = FX_WSTOP_NONE;
    ck_assert_int_eq(fx_recover_deopt_sigsafe(&t, &uc, &tr, 8, &stop, NULL), FX_REC_DEOPT);
    ck_assert_int_eq(tr.num_frames, 3);
    ck_assert_int_eq(frames[0].lineno, FX_LINE_STUB);
    ck_assert_ptr_eq(frames[0].method_id, (jmethodID)9);
    ck_assert_int_eq(frames[1].lineno, FX_LINE_NMETHOD);
    ck_assert_ptr_eq(frames[1].method_id, (jmethodID)0x6001);
    ck_assert_ptr_eq(frames[2].method_id, (jmethodID)0x6002);
    ck_assert_int_eq(stop, FX_WSTOP_UNKNOWN);
    env[2] = BLOB_RET; /* made walkable by fetch_unroll_info_helper's last_frame() */
    ck_assert_int_eq(fx_recover_deopt_sigsafe(&t, &uc, &tr, 8, &stop, NULL), FX_REC_DEOPT);
    ck_assert_int_eq(fx_recover_deopt_sigsafe(&t, &uc, &tr, 1, &stop, NULL), 0); /* no room */
    env[2] = THE_PC;                                                             /* unpack_frames */
    ck_assert_int_eq(fx_recover_deopt_sigsafe(&t, &uc, &tr, 8, &stop, NULL), 0);
    env[2] = 0;
    walked.sp -= 8; /* unpack_frames' call after the alignment */
    ck_assert_int_eq(fx_recover_deopt_sigsafe(&t, &uc, &tr, 8, &stop, NULL), 0);
    walked.sp += 8;
    walked.pc = (uintptr_t)code + 128 + 0x10; /* compiled code */
    ck_assert_int_eq(fx_recover_deopt_sigsafe(&t, &uc, &tr, 8, &stop, NULL), 0);
    walked.pc = BLOB_RET;
    tab->r[0].flags = 0; /* another stub */
    ck_assert_int_eq(fx_recover_deopt_sigsafe(&t, &uc, &tr, 8, &stop, NULL), 0);
    tab->r[0].flags = FX_RANGE_DEOPT, tab->r[0].frame_words = 0; /* no frame size */
    ck_assert_int_eq(fx_recover_deopt_sigsafe(&t, &uc, &tr, 8, &stop, NULL), 0);
    tab->r[0].frame_words = 4;
    stack[43] = 0x1234; /* the deoptee in no code: nothing named */
    ck_assert_int_lt(fx_recover_deopt_sigsafe(&t, &uc, &tr, 8, &stop, NULL), 0);
    stack[43] = (uintptr_t)code + 64 + 0x38;
    env[1] = 0; /* no anchor */
    ck_assert_int_eq(fx_recover_deopt_sigsafe(&t, &uc, &tr, 8, &stop, NULL), 0);
    env[1] = (uintptr_t)&stack[40];
    ck_assert_int_eq(fx_recover_deopt_sigsafe(&t, &uc, &tr, 8, &stop, NULL), FX_REC_DEOPT);
    fx_sig.code_table = NULL;
}
END_TEST

static Suite *vmcode_suite(void)
{
    Suite *s = suite_create("recover_vmcode");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_stub_jdk17);
    tcase_add_test(tc, test_stub_jdk25);
    tcase_add_test(tc, test_call_target_unknown);
    tcase_add_test(tc, test_step_to_continuation);
    tcase_add_test(tc, test_step_target_in_code);
    tcase_add_test(tc, test_anchored_route);
    tcase_add_test(tc, test_recovery);
    tcase_add_test(tc, test_bci0);
    tcase_add_test(tc, test_deopt);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(vmcode_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
