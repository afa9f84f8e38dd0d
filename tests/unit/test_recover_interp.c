/* SPDX-License-Identifier: Apache-2.0 */
/* agent/sampling/recover_interp.c without a JVM: the interpreter's method entry rule on the real
 * normal and native entries of JDK 17 and 25 (recover_interp_jdk17.h, _jdk25.h), at every point
 * of their executions with the stack and registers each point has, and its refusals: a pc on no
 * point of the entry, rbx overwritten on a path, an unknown instruction, no end of the frame's
 * build, the return address slot overwritten, a sender sp below sp, a stack outside the bounds; and
 * the handler's entry to it (fx_recover_caller_sigsafe): the entry read from the Method* in rbx,
 * proven by its jmethodID on fakes of HotSpot's structures in this process. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx_recover.h"
#include "interp_frame.h"
#include "sample.h"
#include <unistd.h>

struct point {
    int32_t pc, ssp, rsp, rbp, rax, r13, rbx, waddr, wval;
};
enum {
    J,
    R,
    F,
    M
};
#define A(x) (0x100000 + (x))
#define P(pc, ssp, rsp, bp, ax, r13, bx, wa, wv) \
    {                                            \
        pc, ssp, rsp, bp, ax, r13, bx, wa, wv    \
    }

#include "fake_method.h"
#include "recover_interp_jdk17.h"
#include "recover_interp_jdk25.h"

static _Alignas(16) uintptr_t stack[1024];
#define LO  ((uintptr_t)&stack[0])
#define HI  ((uintptr_t)&stack[1024])
#define E   ((uintptr_t)&stack[768]) /* the return address slot at the entry */
#define RET ((uintptr_t)0x7F0000123456)
#define FP  (E + 0x400) /* the caller's rbp */

static uintptr_t value(int32_t v)
{
    switch (v) {
    case J:
        return 0x5A5A5A5A5A5A5A5Aull;
    case R:
        return RET;
    case F:
        return FP;
    case M:
        return 0x800000ull;
    default:
        return E + (uintptr_t)(intptr_t)(v - A(0));
    }
}

static struct fx_code_range interp(const uint8_t *code, size_t len)
{
    return (struct fx_code_range){.begin = (uintptr_t)code,
                                  .end = (uintptr_t)code + len,
                                  .kind = FX_BLOB_STUB,
                                  .flags = FX_RANGE_INTERPRETER};
}

/* The registers and stack of point p (the stack kept from the previous point: one word changes). */
static void enter_point(const struct point *p, uintptr_t *gpr, struct fx_regs *in,
                        const uint8_t *code)
{
    if (p->pc == 0) {
        for (size_t i = 0; i < 1024; i++)
            stack[i] = value(J);
        stack[768] = RET;
    }
    if (p->waddr != 1)
        *(uintptr_t *)(E + (uintptr_t)(intptr_t)p->waddr) = value(p->wval);
    for (unsigned k = 0; k < 16; k++)
        gpr[k] = value(J) + k;
    gpr[4] = E + (uintptr_t)(intptr_t)p->rsp;
    gpr[5] = value(p->rbp);
    gpr[0] = value(p->rax);
    gpr[13] = value(p->r13);
    gpr[3] = value(p->rbx);
    *in = (struct fx_regs){(uintptr_t)code + (uintptr_t)p->pc, gpr[4], gpr[5], gpr};
}

static void every_point(const uint8_t *code, size_t len, const struct point *pts, size_t n)
{
    struct fx_code_range r = interp(code, len);
    uintptr_t gpr[16];
    for (size_t i = 0; i < n; i++) {
        struct fx_regs in, out = {0, 0, 0, NULL};
        enter_point(&pts[i], gpr, &in, code);
        int rc = fx_recover_interp_entry(&r, (uintptr_t)code, &in, LO, HI, &out);
        ck_assert_msg(rc == FX_REC_INTERP_ENTRY, "point %zu (pc +%d): %d", i, pts[i].pc, rc);
        ck_assert_msg(out.pc == RET && out.fp == FP, "point %zu (pc +%d)", i, pts[i].pc);
        ck_assert_msg(out.sp == E + (uintptr_t)pts[i].ssp, "point %zu (pc +%d)", i, pts[i].pc);
    }
}

START_TEST(test_every_point_jdk17)
{
    every_point(normal17, sizeof(normal17), normal17_points,
                sizeof(normal17_points) / sizeof(normal17_points[0]));
    every_point(native17, sizeof(native17), native17_points,
                sizeof(native17_points) / sizeof(native17_points[0]));
}
END_TEST

START_TEST(test_every_point_jdk25)
{
    every_point(normal25, sizeof(normal25), normal25_points,
                sizeof(normal25_points) / sizeof(normal25_points[0]));
    every_point(native25, sizeof(native25), native25_points,
                sizeof(native25_points) / sizeof(native25_points[0]));
}
END_TEST

/* The rule at point i of pts on code (a changed copy of the entry), with bounds [lo, hi). */
static int at_point(const uint8_t *code, size_t len, const struct point *pts, size_t i,
                    intptr_t pc_delta, uintptr_t lo, uintptr_t hi)
{
    struct fx_code_range r = interp(code, len);
    uintptr_t gpr[16];
    struct fx_regs in, out;
    for (size_t k = 0; k <= i; k++) /* the stack as the execution left it */
        enter_point(&pts[k], gpr, &in, code);
    in.pc += (uintptr_t)pc_delta;
    return fx_recover_interp_entry(&r, (uintptr_t)code, &in, lo, hi, &out);
}

/* The index of the first point at pc offset `pc` in pts. */
static size_t point_at(const struct point *pts, size_t n, int32_t pc)
{
    for (size_t i = 0; i < n; i++)
        if (pts[i].pc == pc)
            return i;
    ck_abort_msg("no point at +%d", pc);
    return 0;
}

START_TEST(test_refusals)
{
    static uint8_t c[sizeof(normal17)];
    const struct point *pts = normal17_points;
    size_t n = sizeof(normal17_points) / sizeof(normal17_points[0]);
    size_t after_pop = point_at(pts, n, 0x40), framed = point_at(pts, n, 0x62);
    memcpy(c, normal17, sizeof(c));
    ck_assert_int_eq(at_point(c, sizeof(c), pts, framed, 0, LO, HI), FX_REC_INTERP_ENTRY);
    /* a pc inside an instruction (push r13 is 41 55): no point of the entry */
    ck_assert_int_eq(at_point(c, sizeof(c), pts, point_at(pts, n, 0x5b), 1, LO, HI), FX_REC_STUB);
    /* rbx overwritten on the large-frame path (mov rax, rdx -> mov rbx, rdx at +0x1a): lost at
     * the join, refused after it, still known before */
    c[0x1c] = 0xDA;
    ck_assert_int_eq(at_point(c, sizeof(c), pts, point_at(pts, n, 0x14), 0, LO, HI),
                     FX_REC_INTERP_ENTRY);
    ck_assert_int_eq(at_point(c, sizeof(c), pts, after_pop, 0, LO, HI), FX_REC_DECODE);
    memcpy(c, normal17, sizeof(c));
    /* an instruction not known (dec edx -> int3; nop) */
    c[0x52] = 0xCC;
    c[0x53] = 0x90;
    ck_assert_int_eq(at_point(c, sizeof(c), pts, after_pop, 0, LO, HI), FX_REC_DECODE);
    memcpy(c, normal17, sizeof(c));
    /* a jump (dec edx -> je) to code past the frame build's end (+0xb6), or into the middle
     * of push r13 (+0x5c): a join the sweep never lands on, its state missing: refused */
    c[0x52] = 0x74;
    c[0x53] = 0x62;
    ck_assert_int_eq(at_point(c, sizeof(c), pts, after_pop, 0, LO, HI), FX_REC_DECODE);
    c[0x53] = 0x08;
    ck_assert_int_eq(at_point(c, sizeof(c), pts, after_pop, 0, LO, HI), FX_REC_DECODE);
    memcpy(c, normal17, sizeof(c));
    /* pop rsp where pop rax pops the return address (+0x3f): rsp loaded, not followed */
    c[0x3f] = 0x5C;
    ck_assert_int_eq(at_point(c, sizeof(c), pts, after_pop, 0, LO, HI), FX_REC_DECODE);
    memcpy(c, normal17, sizeof(c));
    /* no end of the frame's build inside the range */
    ck_assert_int_eq(at_point(c, sizeof(c) - 8, pts, framed, 0, LO, HI), FX_REC_DECODE);
    /* the return address slot overwritten before the pop (mov rdx, [rbx + 8] -> mov [rsp], rdx) */
    c[1] = 0x89;
    c[2] = 0x14;
    c[3] = 0x24;
    ck_assert_int_eq(at_point(c, sizeof(c), pts, point_at(pts, n, 4), 0, LO, HI), FX_REC_STACK);
    ck_assert_int_eq(at_point(c, sizeof(c), pts, after_pop, 0, LO, HI), FX_REC_STACK);
    memcpy(c, normal17, sizeof(c));
    /* the stack's bounds exclude the saved words; a sender sp below rsp */
    ck_assert_int_eq(at_point(c, sizeof(c), pts, framed, 0, LO, E - 64), FX_REC_STACK);
    struct fx_code_range r = interp(c, sizeof(c));
    uintptr_t gpr[16];
    struct fx_regs in, out;
    for (size_t k = 0; k <= 2; k++)
        enter_point(&pts[k], gpr, &in, c);
    gpr[13] = E - 64;
    ck_assert_int_eq(fx_recover_interp_entry(&r, (uintptr_t)c, &in, LO, HI, &out), FX_REC_STACK);
    /* a c2i-like sender sp far above the slot (past 255 argument words) */
    gpr[13] = E + 4096;
    ck_assert_int_eq(fx_recover_interp_entry(&r, (uintptr_t)c, &in, LO, HI, &out), FX_REC_STACK);
    /* no registers: nothing */
    in.gpr = NULL;
    ck_assert_int_eq(fx_recover_interp_entry(&r, (uintptr_t)c, &in, LO, HI, &out), FX_REC_DECODE);
}
END_TEST

/* The entered method (fake_method.h), its _i2i_entry the entry given. */
static struct fx_interp_layout fake_method(uintptr_t entry)
{
    struct fx_interp_layout l = fake_method_chain();
    put(f_method, 16, entry, 8);
    l.i2i_entry = 16;
    return l;
}

START_TEST(test_handler_entry)
{
    static uint8_t c[sizeof(normal25) + 64]; /* the entry, then more interpreter code */
    memcpy(c, normal25, sizeof(normal25));
    const struct point *pts = normal25_points;
    size_t n = sizeof(normal25_points) / sizeof(normal25_points[0]), at = point_at(pts, n, 0x65);
    struct fx_code_range r = interp(c, sizeof(c));
    struct fx_interp_layout l = fake_method((uintptr_t)c);
    uintptr_t gpr[16];
    struct fx_regs in, out;
    fx_asgct_frame top = {.lineno = 0, .method_id = NULL};
    for (size_t k = 0; k <= at; k++)
        enter_point(&pts[k], gpr, &in, c);
    gpr[3] = (uintptr_t)f_method;
    ck_assert_int_eq(fx_recover_caller_sigsafe(&r, &l, &in, LO, HI, true, &out, &top),
                     FX_REC_INTERP_ENTRY);
    ck_assert_uint_eq(out.pc, RET);
    ck_assert_int_eq(top.lineno, FX_LINE_NMETHOD);
    ck_assert_ptr_eq((void *)top.method_id, (void *)&f_slot); /* the jmethodID */
    /* a pc elsewhere in the interpreter, another method's entry, rbx no Method*, no layout */
    top.lineno = 0;
    in.pc = (uintptr_t)c + sizeof(normal25) + 8;
    ck_assert_int_eq(fx_recover_caller_sigsafe(&r, &l, &in, LO, HI, true, &out, &top),
                     FX_REC_STUB); /* past the frame's build */
    in.pc = (uintptr_t)c + (uintptr_t)pts[at].pc;
    l = fake_method((uintptr_t)c + 32); /* an "entry" whose code is no entry's */
    ck_assert_int_eq(fx_recover_caller_sigsafe(&r, &l, &in, LO, HI, true, &out, &top),
                     FX_REC_DECODE);
    l = fake_method((uintptr_t)c + 0x70); /* an entry after pc */
    ck_assert_int_eq(fx_recover_caller_sigsafe(&r, &l, &in, LO, HI, true, &out, &top), FX_REC_STUB);
    l = fake_method((uintptr_t)c);
    f_slot = 0; /* the jmethodID no longer points back at it */
    ck_assert_int_eq(fx_recover_caller_sigsafe(&r, &l, &in, LO, HI, true, &out, &top), FX_REC_STUB);
    l = fake_method((uintptr_t)c);
    l.pid = 0;
    ck_assert_int_eq(fx_recover_caller_sigsafe(&r, &l, &in, LO, HI, true, &out, &top), FX_REC_STUB);
    ck_assert_int_eq(top.lineno, 0);
    /* another stub: fx_recover_caller's rules (no rule: named) */
    l = fake_method((uintptr_t)c);
    r.flags = 0;
    ck_assert_int_eq(fx_recover_caller_sigsafe(&r, &l, &in, LO, HI, true, &out, &top), FX_REC_STUB);
}
END_TEST

static Suite *recover_interp_suite(void)
{
    Suite *s = suite_create("recover_interp");
    TCase *tc = tcase_create("entry");
    tcase_add_test(tc, test_every_point_jdk17);
    tcase_add_test(tc, test_every_point_jdk25);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_handler_entry);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(recover_interp_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
