/* SPDX-License-Identifier: Apache-2.0 */
/* agent/sampling/recover_anchor.c without a JVM, on a synthetic code table and stack: the
 * not-in-Java walk says why it stopped (issue 30: "[truncated]" only at the depth; an
 * interpreted frame, a stub, unknown code each their own reason), and the frame types walk
 * (issue 32) crosses compiled frames by their frame size and interpreted frames by rbp, typing
 * each, and refuses a top frame whose pc is not in a compiled method's body; the anchor walk
 * names an interpreted frame by its Method* and bcp through HotSpot's structures (here fakes
 * laid out as JDK 25's VMStructs says), only when the jmethodID points back at the Method*,
 * each Method* proven once a walk, within a budget of system calls (a deep stack's); a walk
 * below's top in a stub the VM or native code called is told apart (session 26). */
#include <check.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "codeheap.h"
#include "recover_anchor.h"

static _Alignas(16) uint8_t area[4096]; /* a blob header at 0, code after it */
static _Alignas(16) uintptr_t stack[64];
#define LO       ((uintptr_t)&stack[0])
#define HI       ((uintptr_t)&stack[64])
#define A        ((uintptr_t)area + 256)  /* nmethod of method 0x1000, C2, 2 words */
#define B        ((uintptr_t)area + 512)  /* nmethod of method 0x2000, C1, 2 words */
#define INTERP   ((uintptr_t)area + 1024) /* the template interpreter */
#define CALLSTUB ((uintptr_t)area + 2048)
#define CID_OFF  16

static _Alignas(struct fx_code_table) unsigned char mem[sizeof(struct fx_code_table) +
                                                        4 * sizeof(struct fx_code_range)];

static const struct fx_code_table *table(void)
{
    struct fx_code_table *t = (struct fx_code_table *)mem;
    int32_t cid = 77;
    memset(area, 0, sizeof(area));
    memcpy(area + CID_OFF, &cid, sizeof(cid));
    const struct fx_code_range rs[4] = {
            {.begin = A,
             .end = A + 256,
             .blob = (uintptr_t)area,
             .name = 0x1000,
             .verified = 0,
             .complete = 16,
             .compile_id = 77,
             .frame_words = 2,
             .kind = FX_BLOB_NMETHOD,
             .level = 4},
            {.begin = B,
             .end = B + 256,
             .blob = (uintptr_t)area,
             .name = 0x2000,
             .verified = 0,
             .complete = 16,
             .compile_id = 77,
             .frame_words = 2,
             .kind = FX_BLOB_NMETHOD,
             .level = 1},
            {.begin = INTERP,
             .end = INTERP + 1024,
             .name = 3,
             .kind = FX_BLOB_STUB,
             .flags = FX_RANGE_INTERPRETER},
            {.begin = CALLSTUB, .end = CALLSTUB + 64, .name = 4, .kind = FX_BLOB_STUB}};
    t->n = 4;
    memcpy(t->r, rs, sizeof(rs));
    memset(stack, 0, sizeof(stack));
    return t;
}

static const struct fx_interp_layout *layout; /* NULL: interpreted frames are not named */

static int anchor(const struct fx_code_table *t, uint32_t cap, uint32_t *n, uint8_t *stop,
                  fx_asgct_frame *out)
{
    struct fx_regs last = {.pc = A + 100, .sp = (uintptr_t)&stack[10]};
    fx_asgct_frame blob = {0};
    return fx_recover_anchor(t, NULL, CID_OFF, &last, layout, LO, HI, out, cap, n, &blob, stop,
                             NULL);
}

START_TEST(test_anchor_stop_reasons)
{
    const struct fx_code_table *t = table();
    fx_asgct_frame out[8];
    uint32_t n;
    uint8_t stop;
    stack[11] = INTERP + 10; /* A's caller is interpreted */
    ck_assert_int_eq(anchor(t, 8, &n, &stop, out), FX_REC_ANCHOR);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(stop, FX_WSTOP_INTERPRETED);
    ck_assert_ptr_eq(out[0].method_id, (jmethodID)0x1000);
    stack[11] = B + 10; /* A's caller compiled, its caller the call stub */
    stack[13] = CALLSTUB + 8;
    ck_assert_int_eq(anchor(t, 8, &n, &stop, out), FX_REC_ANCHOR);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(stop, FX_WSTOP_STUB);
    ck_assert_ptr_eq(out[1].method_id, (jmethodID)0x2000);
    ck_assert_int_eq(anchor(t, 1, &n, &stop, out), FX_REC_ANCHOR); /* the depth: no reason */
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(stop, FX_WSTOP_NONE);
    stack[13] = 12345; /* in no range */
    ck_assert_int_eq(anchor(t, 8, &n, &stop, out), FX_REC_ANCHOR);
    ck_assert_uint_eq(stop, FX_WSTOP_UNKNOWN);
    stack[13] = CALLSTUB + 8;
    struct fx_code_table *w = (struct fx_code_table *)mem;
    w->r[1].compile_id = 78; /* B's blob holds another compilation: stale */
    ck_assert_int_eq(anchor(t, 8, &n, &stop, out), FX_REC_ANCHOR);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(stop, FX_WSTOP_STALE);
    w->r[1].compile_id = 77; /* B's frame reaches past the stack's end */
    w->r[1].frame_words = 100;
    ck_assert_int_eq(anchor(t, 8, &n, &stop, out), FX_REC_ANCHOR);
    ck_assert_uint_eq(stop, FX_WSTOP_STACK);
}
END_TEST

/* compiled A (C2) <- interpreted <- compiled B (C1) <- the call stub */
static void types_stack(void)
{
    stack[11] = INTERP + 10;           /* A's return address: into the interpreter */
    stack[10] = (uintptr_t)&stack[20]; /* A's saved rbp: the interpreted frame's fp */
    stack[21] = B + 20;                /* the interpreted frame's return address */
    stack[20] = (uintptr_t)&stack[40]; /* its caller's rbp */
    stack[19] = (uintptr_t)&stack[24]; /* its sender sp: B's sp */
    stack[25] = CALLSTUB + 8;          /* B's return address */
}

START_TEST(test_types_walk)
{
    const struct fx_code_table *t = table();
    types_stack();
    uint64_t w[8];
    struct fx_regs top = {.pc = A + 100, .sp = (uintptr_t)&stack[10], .fp = 0};
    ck_assert_uint_eq(fx_recover_types(t, NULL, CID_OFF, &top, LO, HI, w, 8), 3);
    ck_assert_uint_eq(w[0], (uint64_t)(FX_TYPE_COMPILED | 4) << 56 | 0x1000);
    ck_assert_uint_eq(w[1], (uint64_t)FX_TYPE_INTERPRETED << 56);
    ck_assert_uint_eq(w[2], (uint64_t)(FX_TYPE_COMPILED | 1) << 56 | 0x2000);
    ck_assert_uint_eq(fx_recover_types(t, NULL, CID_OFF, &top, LO, HI, w, 2), 2); /* the cap */
    /* a method that may be inlined into itself is marked, not typed by the walk */
    ((struct fx_code_table *)mem)->r[1].flags = FX_RANGE_SELF_INLINE;
    ck_assert_uint_eq(fx_recover_types(t, NULL, CID_OFF, &top, LO, HI, w, 8), 3);
    ck_assert_uint_eq(w[2] >> 56, FX_TYPE_COMPILED | 1 | 8);
    /* the interpreted frame's fp outside the stack: the walk stops after it */
    stack[10] = HI + 8;
    ck_assert_uint_eq(fx_recover_types(t, NULL, CID_OFF, &top, LO, HI, w, 8), 2);
    /* an interpreted top frame */
    types_stack();
    struct fx_regs itop = {
            .pc = INTERP + 50, .sp = (uintptr_t)&stack[15], .fp = (uintptr_t)&stack[20]};
    ck_assert_uint_eq(fx_recover_types(t, NULL, CID_OFF, &itop, LO, HI, w, 8), 2);
    ck_assert_uint_eq(w[0], (uint64_t)FX_TYPE_INTERPRETED << 56);
}
END_TEST

/* issue 31: a frame in an nmethod the code heaps gave during the sample (the memo's kept ones: its
 * inlining not known in the handler) is marked FX_TYPE_FOUND and its nmethod kept in the memo,
 * its blob's offset from the code cache's low bound and its compile id, for the drain to type
 * it, once for the frames of one nmethod in a row; a table range flagged so is not; past
 * FX_FOUND_KEPT the mark is not given. */
START_TEST(test_types_found_in_the_heaps)
{
    struct fx_code_table *t = (struct fx_code_table *)mem;
    table();
    types_stack();
    struct fx_code_range b = t->r[1];
    b.flags = FX_RANGE_SELF_INLINE; /* as codeheap_sig.c builds it */
    t->r[1].end = B + 1;            /* B is in no range of the table */
    struct fx_codeheap_layout hl = {.lo = (uintptr_t)area - 4096,
                                    .hi = (uintptr_t)area + sizeof(area),
                                    .compile_id = CID_OFF};
    t->heap = &hl;
    struct fx_heap_memo m = {.lookups = 0};
    m.kept[0] = b; /* found in the heaps earlier in this sample */
    uint64_t w[8];
    struct fx_regs top = {.pc = A + 100, .sp = (uintptr_t)&stack[10], .fp = 0};
    ck_assert_uint_eq(fx_recover_types(t, &m, CID_OFF, &top, LO, HI, w, 8), 3);
    ck_assert_uint_eq(w[0] >> 56, FX_TYPE_COMPILED | 4); /* A: from the table, known */
    ck_assert_uint_eq(w[2], (uint64_t)(FX_TYPE_COMPILED | 1 | 8 | FX_TYPE_FOUND) << 56 | 0x2000);
    ck_assert_uint_eq(m.n_found, 1);
    ck_assert_uint_eq(m.found[0], (uint64_t)4096 | (uint64_t)77 << 32);
    /* met again right after (a recursion): the word before's nmethod, no second word */
    ck_assert_uint_eq(fx_recover_types(t, &m, CID_OFF, &top, LO, HI, w, 8), 3);
    ck_assert_uint_eq(w[2] >> 56, FX_TYPE_COMPILED | 1 | 8 | FX_TYPE_FOUND | FX_TYPE_AGAIN);
    ck_assert_uint_eq(m.n_found, 1);
    m.found[0] = 1; /* another nmethod before it: a word of its own */
    ck_assert_uint_eq(fx_recover_types(t, &m, CID_OFF, &top, LO, HI, w, 8), 3);
    ck_assert_uint_eq(w[2] >> 56, FX_TYPE_COMPILED | 1 | 8 | FX_TYPE_FOUND);
    ck_assert_uint_eq(m.n_found, 2);
    ck_assert_uint_eq(m.found[1], (uint64_t)4096 | (uint64_t)77 << 32);
    m.n_found = FX_FOUND_KEPT; /* no room: marked as before, not found */
    ck_assert_uint_eq(fx_recover_types(t, &m, CID_OFF, &top, LO, HI, w, 8), 3);
    ck_assert_uint_eq(w[2] >> 56, FX_TYPE_COMPILED | 1 | 8);
    m.n_found = 0; /* the table's own range flagged so: its facts are known, no mark */
    t->r[1] = b;
    m.kept[0].end = 0;
    ck_assert_uint_eq(fx_recover_types(t, &m, CID_OFF, &top, LO, HI, w, 8), 3);
    ck_assert_uint_eq(w[2] >> 56, FX_TYPE_COMPILED | 1 | 8);
    ck_assert_uint_eq(m.n_found, 0);
    t->heap = NULL;
}
END_TEST

/* issue 32: the segment walk ends at the call stub with its registers, walks past the types'
 * cap, and from a return address (a Java frame the native walk reached) skips the body check */
START_TEST(test_segment_ends_at_the_call_stub)
{
    const struct fx_code_table *t = table();
    types_stack();
    uint64_t w[8];
    uint8_t why;
    struct fx_regs end, top = {.pc = A + 100, .sp = (uintptr_t)&stack[10], .fp = 0};
    /* not flagged as the call stub: no end registers, stopped at another stub */
    ck_assert_uint_eq(
            fx_recover_segment(t, NULL, CID_OFF, &top, false, LO, HI, w, 8, 8, &end, &why), 3);
    ck_assert_uint_eq(end.pc, 0);
    ck_assert_uint_eq(why, FX_SEG_STUB);
    ck_assert_uint_eq(
            fx_recover_segment(t, NULL, CID_OFF, &top, false, LO, HI, w, 8, 2, &end, &why), 2);
    ck_assert_uint_eq(why, FX_SEG_MOST);
    ((struct fx_code_table *)mem)->r[3].flags = FX_RANGE_CALL_STUB;
    ck_assert_uint_eq(
            fx_recover_segment(t, NULL, CID_OFF, &top, false, LO, HI, w, 8, 8, &end, &why), 3);
    ck_assert_uint_eq(end.pc, CALLSTUB + 8);
    ck_assert_uint_eq(why, FX_SEG_CALL_STUB);
    ck_assert_uint_eq(end.sp, (uintptr_t)&stack[26]); /* B's sender: sp + 2 words */
    /* one type word kept, three frames walked, the end still found */
    ck_assert_uint_eq(
            fx_recover_segment(t, NULL, CID_OFF, &top, false, LO, HI, w, 1, 8, &end, NULL), 3);
    ck_assert_uint_eq(end.pc, CALLSTUB + 8);
    /* a top in A's prologue is refused as a leaf, walked as a return address */
    struct fx_regs pro = {.pc = A + 4, .sp = (uintptr_t)&stack[10], .fp = 0};
    ck_assert_uint_eq(
            fx_recover_segment(t, NULL, CID_OFF, &pro, false, LO, HI, w, 8, 8, &end, &why), 0);
    ck_assert_uint_eq(why, FX_SEG_TOP);
    ck_assert_uint_eq(fx_recover_segment(t, NULL, CID_OFF, &pro, true, LO, HI, w, 8, 8, &end, NULL),
                      3);
    ck_assert_uint_eq(end.pc, CALLSTUB + 8);
}
END_TEST

/* session 26: a top stub the VM or native code called (flush_icache_stub, unsafe_arraycopy,
 * jni_fast_GetIntField): frameless, the anchor holding a last Java frame; not so without the
 * anchor (a stub compiled Java called), nor for the interpreter, the call stub, an inline cache
 * stub, a stub with a frame size (a runtime stub between setting the anchor and its call), an
 * nmethod (a native method's wrapper) or a pc in no range */
START_TEST(test_vm_stub_top)
{
    struct fx_code_range s = {.begin = CALLSTUB, .end = CALLSTUB + 32, .kind = FX_BLOB_STUB};
    uintptr_t last_sp = (uintptr_t)&stack[40];
    ck_assert(fx_recover_vm_stub_top(&s, last_sp));
    ck_assert(!fx_recover_vm_stub_top(&s, 0));
    ck_assert(!fx_recover_vm_stub_top(NULL, last_sp));
    s.frame_words = 4;
    ck_assert(!fx_recover_vm_stub_top(&s, last_sp));
    s.frame_words = 0;
    static const uint8_t not_vm[] = {FX_RANGE_INTERPRETER, FX_RANGE_CALL_STUB, FX_RANGE_IC_BUFFER};
    for (size_t i = 0; i < sizeof(not_vm); i++) {
        s.flags = not_vm[i];
        ck_assert(!fx_recover_vm_stub_top(&s, last_sp));
    }
    s.flags = 0;
    s.kind = FX_BLOB_NMETHOD;
    ck_assert(!fx_recover_vm_stub_top(&s, last_sp));
    s.kind = FX_BLOB_ADAPTER;
    ck_assert(!fx_recover_vm_stub_top(&s, last_sp));
}
END_TEST

START_TEST(test_types_refuses_an_unproven_top)
{
    const struct fx_code_table *t = table();
    types_stack();
    uint64_t w[8];
    /* pc in A's prologue (before its frame is complete): nothing typed */
    struct fx_regs top = {.pc = A + 4, .sp = (uintptr_t)&stack[10], .fp = 0};
    ck_assert_uint_eq(fx_recover_types(t, NULL, CID_OFF, &top, LO, HI, w, 8), 0);
    top.pc = CALLSTUB + 4; /* in a stub */
    ck_assert_uint_eq(fx_recover_types(t, NULL, CID_OFF, &top, LO, HI, w, 8), 0);
    top.pc = 12345; /* unknown */
    ck_assert_uint_eq(fx_recover_types(t, NULL, CID_OFF, &top, LO, HI, w, 8), 0);
    top.pc = A + 100; /* A's compilation replaced */
    ((struct fx_code_table *)mem)->r[0].compile_id = 99;
    ck_assert_uint_eq(fx_recover_types(t, NULL, CID_OFF, &top, LO, HI, w, 8), 0);
}
END_TEST

/* Fakes of HotSpot's structures for one interpreted method (JDK 25's offsets): Method ->
 * ConstMethod (bytecodes after it) -> ConstantPool -> InstanceKlass -> jmethodID array. */
static _Alignas(16) unsigned char f_method[88], f_cm[56 + 32], f_cp[64], f_ik[344];
static uintptr_t f_ids[4], f_slot; /* the jmethodID: &f_slot, holding the Method* */
static const struct fx_interp_layout f_layout = {.method_slot = -3,
                                                 .bcp_slot = -8,
                                                 .method_size = 88,
                                                 .cm_size = 56,
                                                 .const_method = 8,
                                                 .access_flags = 44,
                                                 .constants = 8,
                                                 .idnum = 40,
                                                 .code_size = 34,
                                                 .pool_holder = 24,
                                                 .jmethod_ids = 336,
                                                 .wrapper_slot = -6,
                                                 .wrapper_anchor = 32,
                                                 .last_sp = 0,
                                                 .last_pc = 8,
                                                 .last_fp = 16};

static void put(unsigned char *b, int off, uintptr_t v, size_t w)
{
    memcpy(b + off, &v, w);
}

static struct fx_interp_layout fakes(void)
{
    put(f_method, 8, (uintptr_t)f_cm, 8);
    put(f_method, 44, 0x0001, 2); /* public, not native */
    put(f_cm, 8, (uintptr_t)f_cp, 8);
    put(f_cm, 40, 1, 2);  /* idnum 1 */
    put(f_cm, 34, 20, 2); /* 20 bytes of bytecode */
    put(f_cp, 24, (uintptr_t)f_ik, 8);
    put(f_ik, 336, (uintptr_t)f_ids, 8);
    f_ids[0] = 3;
    f_ids[1] = 0;
    f_ids[2] = (uintptr_t)&f_slot; /* idnum 1's jmethodID */
    f_ids[3] = 0;
    f_slot = (uintptr_t)f_method;
    struct fx_interp_layout l = f_layout;
    l.pid = (int32_t)getpid();
    return l;
}

/* issue 32: compiled A <- interpreted (named: jmethodID, bci) <- compiled B <- the call stub */
START_TEST(test_anchor_names_interpreted_frames)
{
    const struct fx_code_table *t = table();
    types_stack();
    struct fx_interp_layout l = fakes();
    stack[17] = (uintptr_t)f_method;  /* fp - 3 words: the Method* */
    stack[12] = (uintptr_t)f_cm + 61; /* fp - 8 words: the bcp, at bci 5 */
    fx_asgct_frame out[8];
    uint32_t n;
    uint8_t stop;
    layout = &l;
    ck_assert_int_eq(anchor(t, 8, &n, &stop, out), FX_REC_ANCHOR);
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(stop, FX_WSTOP_STUB);
    ck_assert_ptr_eq(out[0].method_id, (jmethodID)0x1000);
    ck_assert_ptr_eq(out[1].method_id, (jmethodID)&f_slot);
    ck_assert_int_eq(out[1].lineno, 5);
    ck_assert_int_eq(out[2].lineno, FX_LINE_NMETHOD);
    ck_assert_ptr_eq(out[2].method_id, (jmethodID)0x2000);
    ck_assert_int_eq(anchor(t, 2, &n, &stop, out), FX_REC_ANCHOR); /* the depth */
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(stop, FX_WSTOP_NONE);
    ck_assert_int_eq(anchor(t, 1, &n, &stop, out), FX_REC_ANCHOR); /* cut above it */
    ck_assert_uint_eq(stop, FX_WSTOP_NONE);
    /* the call stub below B (HotSpot's entry frame): its JavaCallWrapper (at its rbp - 6
     * words) saved no anchor: the thread's first Java frames, the walk is whole */
    struct fx_code_table *w = (struct fx_code_table *)mem;
    w->r[3].flags = FX_RANGE_CALL_STUB;
    stack[24] = (uintptr_t)&stack[50]; /* B's saved rbp: the call stub's */
    stack[44] = (uintptr_t)&stack[56]; /* the JavaCallWrapper*, its anchor at +32: stack[60] */
    ck_assert_int_eq(anchor(t, 8, &n, &stop, out), FX_REC_ANCHOR);
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(stop, FX_WSTOP_NONE);
    /* it saved one: the walk goes on from it (here: A, whose frame leaves the stack) */
    stack[60] = (uintptr_t)&stack[63];
    stack[61] = A + 100;
    ck_assert_int_eq(anchor(t, 8, &n, &stop, out), FX_REC_ANCHOR);
    ck_assert_uint_eq(n, 4);
    ck_assert_ptr_eq(out[3].method_id, (jmethodID)0x1000);
    ck_assert_uint_eq(stop, FX_WSTOP_STACK);
    stack[44] = HI + 64; /* the wrapper not on the stack: stopped at the call stub, named */
    ck_assert_int_eq(anchor(t, 8, &n, &stop, out), FX_REC_ANCHOR);
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(stop, FX_WSTOP_STUB);
    w->r[3].flags = 0;
    /* a native method: AsyncGetCallTrace's lineno -3 */
    put(f_method, 44, 0x0101, 2);
    ck_assert_int_eq(anchor(t, 8, &n, &stop, out), FX_REC_ANCHOR);
    ck_assert_int_eq(out[1].lineno, -3);
    put(f_method, 44, 0x0001, 2);
    /* not proven: each stops the walk at the interpreted frame, as without a layout */
    stack[12] = (uintptr_t)f_cm + 56 + 20; /* the bcp past the method's code */
    ck_assert_int_eq(anchor(t, 8, &n, &stop, out), FX_REC_ANCHOR);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(stop, FX_WSTOP_INTERPRETED);
    stack[12] = (uintptr_t)f_cm + 61;
    f_slot = (uintptr_t)f_cp; /* the jmethodID holds another Method* (redefined) */
    ck_assert_int_eq(anchor(t, 8, &n, &stop, out), FX_REC_ANCHOR);
    ck_assert_uint_eq(stop, FX_WSTOP_INTERPRETED);
    f_slot = (uintptr_t)f_method;
    f_ids[0] = 1; /* idnum 1 past the array: no jmethodID made */
    ck_assert_int_eq(anchor(t, 8, &n, &stop, out), FX_REC_ANCHOR);
    ck_assert_uint_eq(stop, FX_WSTOP_INTERPRETED);
    f_ids[0] = 3;
    stack[17] = 4096 * 7; /* a Method* on an unmapped page: the checked read fails */
    ck_assert_int_eq(anchor(t, 8, &n, &stop, out), FX_REC_ANCHOR);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(stop, FX_WSTOP_INTERPRETED);
    stack[17] = (uintptr_t)f_method;
    layout = NULL; /* no layout published */
    ck_assert_int_eq(anchor(t, 8, &n, &stop, out), FX_REC_ANCHOR);
    ck_assert_uint_eq(stop, FX_WSTOP_INTERPRETED);
    /* the anchor's own frame interpreted: walked from its _last_Java_fp */
    struct fx_regs last = {
            .pc = INTERP + 50, .sp = (uintptr_t)&stack[11], .fp = (uintptr_t)&stack[20]};
    fx_asgct_frame blob = {0};
    ck_assert_int_eq(
            fx_recover_anchor(t, NULL, CID_OFF, &last, &l, LO, HI, out, 8, &n, &blob, &stop, NULL),
            FX_REC_ANCHOR);
    ck_assert_uint_eq(n, 2);
    ck_assert_ptr_eq(out[0].method_id, (jmethodID)&f_slot);
    ck_assert_ptr_eq(out[1].method_id, (jmethodID)0x2000);
    last.fp = 0; /* unknown: named as the interpreter, not walked */
    ck_assert_int_eq(
            fx_recover_anchor(t, NULL, CID_OFF, &last, &l, LO, HI, out, 8, &n, &blob, &stop, NULL),
            FX_REC_STUB);
}
END_TEST

/* MANY methods, laid out as fakes(): method i's ConstMethod has idnum i and 20 bytes of code,
 * its class's ConstantPool m_cp[class_of(i)] (every class's jmethodID array is m_ids: method
 * i's jmethodID &m_slot[i]). A deep interpreted stack: frame i (10 words apart, each called by
 * the next) runs method pick(i) at bci 5 (frame bad: its bcp just past the code), returning
 * into the interpreter. */
#define MANY 150
static _Alignas(16) unsigned char m_method[MANY][88], m_cm[MANY][56 + 32], m_cp[MANY][64],
        m_ik[MANY][344];
static uintptr_t m_ids[MANY + 1], m_slot[MANY];
static _Alignas(16) uintptr_t deep[10 * MANY + 40];

static uint32_t deep_walk(uint32_t (*pick)(uint32_t), uint32_t (*class_of)(uint32_t), uint32_t bad,
                          fx_asgct_frame *out, uint8_t *stop)
{
    const struct fx_code_table *t = table();
    struct fx_interp_layout l = fakes();
    memset(deep, 0, sizeof(deep));
    m_ids[0] = MANY + 1;
    for (uint32_t i = 0; i < MANY; i++) {
        put(m_method[i], 8, (uintptr_t)m_cm[i], 8);
        put(m_method[i], 44, 0x0001, 2);
        put(m_cm[i], 8, (uintptr_t)m_cp[class_of(i)], 8);
        put(m_cm[i], 40, i, 2);
        put(m_cm[i], 34, 20, 2);
        put(m_cp[i], 24, (uintptr_t)m_ik[i], 8);
        put(m_ik[i], 336, (uintptr_t)m_ids, 8);
        m_ids[i + 1] = (uintptr_t)&m_slot[i];
        m_slot[i] = (uintptr_t)m_method[i];
        uintptr_t *fp = &deep[10 + 10 * i];
        fp[0] = (uintptr_t)&deep[10 + 10 * (i + 1)]; /* the caller's rbp */
        fp[1] = INTERP + 10;                         /* returns into the interpreter */
        fp[-1] = (uintptr_t)&fp[2];                  /* the sender's sp */
        fp[-3] = (uintptr_t)m_method[pick(i)];
        fp[-8] = (uintptr_t)m_cm[pick(i)] + (i == bad ? 56 + 20 : 61);
    }
    struct fx_regs last = {
            .pc = INTERP + 50, .sp = (uintptr_t)&deep[1], .fp = (uintptr_t)&deep[10]};
    fx_asgct_frame blob = {0};
    uint32_t n = 0;
    ck_assert_int_eq(fx_recover_anchor(t, NULL, CID_OFF, &last, &l, (uintptr_t)&deep[0],
                                       (uintptr_t)&deep[10 * MANY + 40], out, 2 * MANY, &n, &blob,
                                       stop, NULL),
                     FX_REC_ANCHOR);
    for (uint32_t i = 0; i < n; i++) {
        ck_assert_ptr_eq(out[i].method_id, (jmethodID)&m_slot[pick(i)]);
        ck_assert_int_eq(out[i].lineno, 5);
    }
    return n;
}

static uint32_t five(uint32_t i) /* a recursion over five methods */
{
    return (i * 7 + 3) % 5;
}
static uint32_t own(uint32_t i) /* each frame a method (or class) of its own */
{
    return i;
}
static uint32_t one(uint32_t i) /* one class */
{
    (void)i;
    return 0;
}

/* issue 32: each Method* the anchor walk proves costs ~7 system calls; a walk pays for at most
 * FX_INTERP_BUDGET proofs and names a Method* proven before for none (interp_frame.h, struct
 * fx_interp_memo). A stack of 150 interpreted frames over five methods is walked whole (to the
 * frame past it, whose zero Method* is not proven); 150 distinct methods of one class (the
 * class's jmethodID array read once) past FX_INTERP_BUDGET, not whole, the stop named; of a
 * class each, exactly FX_INTERP_BUDGET, as before the memo. A remembered method's frame whose
 * bcp lies outside its code still stops the walk there. */
START_TEST(test_anchor_interpreted_budget)
{
    static fx_asgct_frame out[2 * MANY];
    uint8_t stop;
    ck_assert_uint_eq(deep_walk(five, one, MANY, out, &stop), MANY);
    ck_assert_uint_eq(stop, FX_WSTOP_INTERPRETED);
    uint32_t n = deep_walk(own, one, MANY, out, &stop);
    ck_assert_uint_gt(n, FX_INTERP_BUDGET);
    ck_assert_uint_lt(n, MANY);
    ck_assert_uint_eq(stop, FX_WSTOP_BUDGET);
    ck_assert_uint_eq(deep_walk(own, own, MANY, out, &stop), FX_INTERP_BUDGET);
    ck_assert_uint_eq(stop, FX_WSTOP_BUDGET);
    ck_assert_uint_eq(deep_walk(five, one, 100, out, &stop), 100); /* frame 100: past its code */
    ck_assert_uint_eq(stop, FX_WSTOP_INTERPRETED);
}
END_TEST

/* A pc in the code cache but in no range of the table is looked up in the code heaps: past the
 * sample's budget of lookups (fx_heap_memo) the walks stop there, the anchor walk named for it
 * (not "unknown code"), and the refusal is counted. */
START_TEST(test_heap_lookup_budget)
{
    struct fx_code_table *t = (struct fx_code_table *)mem;
    table();
    struct fx_interp_layout il = fakes();
    uint64_t found = 0, lookups = 0, refused = 0;
    /* no heap: every lookup made fails */
    struct fx_codeheap_layout hl = {.pid = (int32_t)getpid(),
                                    .lo = (uintptr_t)area,
                                    .hi = (uintptr_t)area + sizeof(area),
                                    .compile_id = CID_OFF};
    t->heap = &hl;
    t->il = &il;
    t->found = &found;
    t->lookups = &lookups;
    t->refused = &refused;
    stack[11] = (uintptr_t)area + 3000; /* A's caller: in the cache, in no range */
    struct fx_regs last = {.pc = A + 100, .sp = (uintptr_t)&stack[10]};
    fx_asgct_frame out[8], blob = {0};
    uint32_t n;
    uint8_t want[2] = {FX_WSTOP_UNKNOWN, FX_WSTOP_HEAP_BUDGET}, stop;
    struct fx_heap_memo m = {.lookups = 0};
    for (int k = 0; k < 2; k++) { /* the first lookup fails; then the budget is spent */
        m.lookups = k == 0 ? 0 : FX_HEAP_BUDGET;
        ck_assert_int_eq(fx_recover_anchor(t, &m, CID_OFF, &last, &il, LO, HI, out, 8, &n, &blob,
                                           &stop, NULL),
                         FX_REC_ANCHOR);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(stop, want[k]);
        ck_assert_uint_eq(lookups, 1);
        ck_assert_uint_eq(refused, (uint64_t)k);
        ck_assert_uint_eq(m.refused, (uint32_t)k);
    }
    /* the types walk stops there too, and counts it */
    uint64_t w[8];
    struct fx_regs top = {.pc = A + 100, .sp = (uintptr_t)&stack[10]};
    ck_assert_uint_eq(fx_recover_types(t, &m, CID_OFF, &top, LO, HI, w, 8), 1);
    ck_assert_uint_eq(m.refused, 2);
    ck_assert_uint_eq(found, 0);
    t->heap = NULL;
    t->il = NULL;
}
END_TEST

int main(void)
{
    Suite *s = suite_create("recover_walk");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_anchor_stop_reasons);
    tcase_add_test(tc, test_anchor_names_interpreted_frames);
    tcase_add_test(tc, test_anchor_interpreted_budget);
    tcase_add_test(tc, test_types_walk);
    tcase_add_test(tc, test_types_found_in_the_heaps);
    tcase_add_test(tc, test_types_refuses_an_unproven_top);
    tcase_add_test(tc, test_segment_ends_at_the_call_stub);
    tcase_add_test(tc, test_vm_stub_top);
    tcase_add_test(tc, test_heap_lookup_budget);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
