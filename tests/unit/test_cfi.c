/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of core/symbols/cfi.c (include/fx_cfi.h): the table of the system's libz (a known
 * function's rows), a real unwind through libz's frameless code from inside a zlib callback up
 * to the test function that called zlib, the step's rules and bounds on a synthetic stack,
 * lookups at a table's edges, bad input, (issue 32) the step of a leaf interrupted after its
 * epilogue's `leave` (rbp in the red zone), and (issue 32) a stripped library's .debug_frame read
 * from the debug file its .gnu_debuglink names, refused when the file's CRC is not the link's. */
#include <check.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <ucontext.h>
#include <unistd.h>
#include <zlib.h>

#include "fx_cfi.h"
#include "fx_err.h"
#include "fx_textmap.h"
#include "unit_tmpfile.h"

static struct fx_cfi *build_ok(const char *path, struct fx_cfi_stats *st)
{
    struct fx_cfi *c = NULL;
    struct fx_errbuf eb = {{0}};
    int rc = fx_cfi_build(path, &c, st, &eb);
    ck_assert_msg(rc == FX_OK && c != NULL, "fx_cfi_build(%s): %s", path, eb.msg);
    return c;
}

/* The file and ELF virtual address of a function of a loaded shared object. */
static void where(void *fn, char *path, size_t cap, uint64_t *vaddr)
{
    Dl_info di;
    ck_assert(dladdr(fn, &di) != 0 && di.dli_fname != NULL);
    snprintf(path, cap, "%s", di.dli_fname);
    *vaddr = (uint64_t)((uintptr_t)fn - (uintptr_t)di.dli_fbase);
}

START_TEST(test_cfi_libz_deflate_entry_is_rsp_plus_8_and_its_body_moves_the_cfa)
{
    char path[512];
    uint64_t va;
    where((void *)deflate, path, sizeof(path), &va);
    struct fx_cfi_stats st;
    struct fx_cfi *c = build_ok(path, &st);
    ck_assert_uint_gt(st.fdes, 10);
    ck_assert_uint_ge(st.rows, st.fdes);
    ck_assert_uint_eq(st.rows, c->count);
    /* .plt's CFA is GNU ld's lazy PLT expression (issue 32): its own kind, K 11 */
    size_t plt = 0;
    for (size_t i = 0; i < c->count; i++)
        if (c->rows[i].cfa == FX_CFI_CFA_PLT) {
            plt++;
            ck_assert_int_eq(c->rows[i].cfa_off, 11);
        }
    ck_assert_uint_ge(plt, 1);
    const struct fx_cfi_row *r = fx_cfi_lookup_sigsafe(c, va);
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(c->base + r->pc, va); /* a function's first row starts at its entry */
    ck_assert_int_eq(r->cfa, FX_CFI_CFA_RSP);
    ck_assert_int_eq(r->cfa_off, 8); /* only the return address is pushed */
    ck_assert_int_eq(r->rbp, FX_CFI_RBP_SAME);
    /* deflate saves registers (pushes) before its body: a later row has a larger CFA offset */
    bool moved = false;
    for (const struct fx_cfi_row *n = r + 1; n < c->rows + c->count && n->pc < r->pc + 256; n++)
        moved |= n->cfa == FX_CFI_CFA_RSP && n->cfa_off > 8;
    ck_assert_msg(moved, "no row of deflate moves the CFA within 256 bytes");
    /* the file offset of the entry maps back to the same virtual address */
    uint64_t back;
    ck_assert(fx_cfi_vaddr_sigsafe(c, va - c->segs[0].vaddr + c->segs[0].offset, &back));
    ck_assert_uint_eq(back, va);
    fx_cfi_free(c);
}
END_TEST

/* Every address of libz's deflate and inflate (their symbol's size) is named by the function's
 * start, the way a frame of a library without symbols gets one func per function; an address
 * below the text has none. */
START_TEST(test_cfi_func_start_of_every_address_of_a_function_is_its_entry)
{
    void *fns[2] = {(void *)deflate, (void *)inflate};
    for (int i = 0; i < 2; i++) {
        char path[512];
        uint64_t va, start;
        where(fns[i], path, sizeof(path), &va);
        Dl_info di;
        const ElfW(Sym) *sym = NULL;
        ck_assert(dladdr1(fns[i], &di, (void **)&sym, RTLD_DL_SYMENT) != 0 && sym != NULL);
        ck_assert_uint_gt(sym->st_size, 16);
        struct fx_cfi *c = build_ok(path, NULL);
        ck_assert_uint_gt(c->nfuncs, 10);
        for (uint64_t k = 0; k < sym->st_size; k++) {
            ck_assert_msg(fx_cfi_func_start(c, va + k, &start), "%s+%lu: no FDE", path,
                          (unsigned long)k);
            ck_assert_uint_eq(start, va);
        }
        ck_assert(!fx_cfi_func_start(c, c->base - 1, &start));
        ck_assert(!fx_cfi_func_start(NULL, va, &start));
        fx_cfi_free(c);
    }
}
END_TEST

/* --- a real unwind: zlib calls our allocator from deflateInit2_ (Debian's libz has no frame
 * pointers); from inside it, while those frames are live, the tables must lead back through
 * libz into the function that called zlib. */
struct lib_table {
    const struct fx_textmap_entry *e;
    struct fx_cfi *c;
};

static struct {
    const struct fx_textmap *map;
    struct lib_table libs[2]; /* the test executable's and libz's */
    uintptr_t hi;             /* the stack's top */
    int done;
    int frames;    /* stepped */
    char why[200]; /* "" once the unwind reached call_zlib through libz */
} uw;

__attribute__((noinline)) static uintptr_t call_zlib(void);

static void unwind_here(void)
{
    ucontext_t uc;
    getcontext(&uc);
    struct fx_cfi_regs r = {.pc = (uintptr_t)uc.uc_mcontext.gregs[REG_RIP],
                            .sp = (uintptr_t)uc.uc_mcontext.gregs[REG_RSP],
                            .fp = (uintptr_t)uc.uc_mcontext.gregs[REG_RBP]};
    bool through_libz = false;
    snprintf(uw.why, sizeof(uw.why), "no frame in call_zlib within 8");
    for (int depth = 0; depth < 8; depth++) {
        uintptr_t at = depth == 0 ? r.pc : r.pc - 1;
        const struct fx_textmap_entry *e = fx_textmap_lookup_sigsafe(uw.map, at);
        const struct lib_table *l = NULL;
        for (int i = 0; i < 2; i++)
            if (e != NULL && uw.libs[i].e == e)
                l = &uw.libs[i];
        if (l == NULL) {
            snprintf(uw.why, sizeof(uw.why), "frame %d: pc %#lx outside the test and libz", depth,
                     (unsigned long)at);
            return;
        }
        through_libz |= l == &uw.libs[1];
        uint64_t va;
        const struct fx_cfi_row *row = fx_cfi_vaddr_sigsafe(l->c, at - e->start + e->offset, &va)
                                               ? fx_cfi_lookup_sigsafe(l->c, va)
                                               : NULL;
        int step = row != NULL ? (int)fx_cfi_step_sigsafe(row, &r, uw.hi, false) : -1;
        if (step != FX_CFI_STEP_OK) {
            snprintf(uw.why, sizeof(uw.why), "frame %d in %s: no row or step %d", depth, e->path,
                     step);
            return;
        }
        uw.frames++;
        if (r.pc > (uintptr_t)call_zlib && r.pc < (uintptr_t)call_zlib + 512) {
            if (through_libz)
                uw.why[0] = '\0';
            else
                snprintf(uw.why, sizeof(uw.why), "reached call_zlib without a libz frame");
            return;
        }
    }
}

static void *capture_alloc(void *opaque, unsigned items, unsigned size)
{
    (void)opaque;
    if (!uw.done) {
        uw.done = 1;
        unwind_here();
    }
    return calloc(items, size);
}

static void capture_free(void *opaque, void *p)
{
    (void)opaque;
    free(p);
}

__attribute__((noinline)) static uintptr_t call_zlib(void)
{
    z_stream s = {.zalloc = capture_alloc, .zfree = capture_free};
    int rc = deflateInit2_(&s, 9, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                           (int)sizeof(s));
    ck_assert_int_eq(rc, Z_OK);
    deflateEnd(&s);
    return (uintptr_t)__builtin_frame_address(0); /* no tail call: call_zlib stays on the stack */
}

START_TEST(test_cfi_unwinds_from_a_zlib_callback_through_libz_to_its_caller)
{
    struct fx_textmap *map = NULL;
    struct fx_errbuf eb = {{0}};
    ck_assert_msg(fx_textmap_read("/proc/self/maps", &map, &eb) == FX_OK, "%s", eb.msg);
    void *fns[2] = {(void *)call_zlib, (void *)deflate};
    for (int i = 0; i < 2; i++) {
        const struct fx_textmap_entry *e = fx_textmap_lookup_sigsafe(map, (uintptr_t)fns[i]);
        ck_assert_ptr_nonnull(e);
        uw.libs[i] = (struct lib_table){e, build_ok(e->path, NULL)};
    }
    pthread_attr_t a;
    void *lo;
    size_t size;
    ck_assert_int_eq(pthread_getattr_np(pthread_self(), &a), 0);
    ck_assert_int_eq(pthread_attr_getstack(&a, &lo, &size), 0);
    pthread_attr_destroy(&a);
    uw.hi = (uintptr_t)lo + size;
    uw.map = map;
    call_zlib();
    ck_assert_int_eq(uw.done, 1);
    ck_assert_msg(uw.why[0] == '\0', "unwind from zlib's allocator call: %s", uw.why);
    ck_assert_int_ge(uw.frames, 3); /* unwind_here, capture_alloc, deflateInit2_ */
    for (int i = 0; i < 2; i++)
        fx_cfi_free(uw.libs[i].c);
    fx_textmap_free(map);
}
END_TEST

/* --- the step on a synthetic stack */
START_TEST(test_cfi_step_reads_the_return_address_and_saved_rbp_inside_the_stack)
{
    uintptr_t stack[8] = {0, 0, 0, 0x1111 /* saved rbp at CFA-16 */, 0x4242 /* RA at CFA-8 */,
                          0, 0, 0};
    uintptr_t sp = (uintptr_t)&stack[1], hi = (uintptr_t)&stack[8];
    struct fx_cfi_row row = {
            .cfa = FX_CFI_CFA_RSP, .cfa_off = 32, .rbp = FX_CFI_RBP_SAVED, .rbp_off = -16};
    struct fx_cfi_regs r = {.pc = 1, .sp = sp, .fp = 7};
    ck_assert_int_eq(fx_cfi_step_sigsafe(&row, &r, hi, false), FX_CFI_STEP_OK);
    ck_assert_uint_eq(r.pc, 0x4242);
    ck_assert_uint_eq(r.fp, 0x1111);
    ck_assert_uint_eq(r.sp, (uintptr_t)&stack[5]);
    /* rbp-based CFA, rbp unchanged */
    struct fx_cfi_row byfp = {.cfa = FX_CFI_CFA_RBP, .cfa_off = 16, .rbp = FX_CFI_RBP_SAME};
    r = (struct fx_cfi_regs){.pc = 1, .sp = sp, .fp = (uintptr_t)&stack[3]};
    ck_assert_int_eq(fx_cfi_step_sigsafe(&byfp, &r, hi, false), FX_CFI_STEP_OK);
    ck_assert_uint_eq(r.pc, 0x4242);
    ck_assert_uint_eq(r.fp, (uintptr_t)&stack[3]);
    /* a CFA above the stack's top, below sp, or misaligned: nothing read, nothing changed */
    struct fx_cfi_regs before = {.pc = 1, .sp = sp, .fp = 7};
    int32_t bad[] = {64, 0, -8, 13};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct fx_cfi_row b = row;
        b.cfa_off = bad[i];
        r = before;
        ck_assert_int_eq(fx_cfi_step_sigsafe(&b, &r, hi, false), FX_CFI_STEP_BAD_CFA);
        ck_assert_mem_eq(&r, &before, sizeof(r));
    }
    struct fx_cfi_row rbp_out = row;
    rbp_out.rbp_off = 8; /* rbp "saved" at CFA+8: above the top */
    r = before;
    ck_assert_int_eq(fx_cfi_step_sigsafe(&rbp_out, &r, (uintptr_t)&stack[5], false),
                     FX_CFI_STEP_BAD_CFA);
    ck_assert_mem_eq(&r, &before, sizeof(r));
    /* issue 32: a lazy PLT entry, in the interrupted frame: rsp+8 before its `push $index`
     * (offset 11 of the 16-byte entry), rsp+16 after; in a caller's frame not stepped */
    struct fx_cfi_row plt = {.cfa = FX_CFI_CFA_PLT, .cfa_off = 11};
    stack[1] = 0x4242, stack[2] = 0x5353;
    uintptr_t entry = 0x7f0000001030; /* a 16-byte aligned PLT entry */
    uintptr_t pcs[] = {entry, entry + 6, entry + 11};
    for (size_t i = 0; i < 3; i++) {
        r = (struct fx_cfi_regs){.pc = pcs[i], .sp = sp, .fp = 7};
        ck_assert_int_eq(fx_cfi_step_sigsafe(&plt, &r, hi, true), FX_CFI_STEP_OK);
        ck_assert_uint_eq(r.pc, i < 2 ? 0x4242 : 0x5353);
        ck_assert_uint_eq(r.sp, sp + (i < 2 ? 8 : 16));
        ck_assert_uint_eq(r.fp, 7);
        r = (struct fx_cfi_regs){.pc = pcs[i], .sp = sp, .fp = 7};
        ck_assert_int_eq(fx_cfi_step_sigsafe(&plt, &r, hi, false), FX_CFI_STEP_UNSUPPORTED);
    }
    stack[1] = 0, stack[2] = 0;
    /* rows outside the subset are named, never stepped */
    uint8_t kinds[] = {FX_CFI_CFA_NONE, FX_CFI_CFA_UNSUPPORTED, FX_CFI_CFA_END};
    enum fx_cfi_step want[] = {FX_CFI_STEP_NONE, FX_CFI_STEP_UNSUPPORTED, FX_CFI_STEP_END};
    for (size_t i = 0; i < 3; i++) {
        struct fx_cfi_row k = {.cfa = kinds[i]};
        r = before;
        ck_assert_int_eq(fx_cfi_step_sigsafe(&k, &r, hi, false), want[i]);
        ck_assert_mem_eq(&r, &before, sizeof(r));
    }
}
END_TEST

/* --- issue 32: a leaf interrupted after its epilogue's `leave`. GCC's CFI there (as for
 * os::javaTimeMillis in libjvm: `leave; imul; sar; sar; sub; lea; ret`) redefines the CFA as
 * rsp+8 but keeps "rbp saved at CFA-16", the word `leave` read, now below sp. This function is
 * written as GCC emits it, and its own table (the test executable's) is stepped. */
__asm__(".text\n"
        ".type fxt_epilogue_fn, @function\n"
        "fxt_epilogue_fn:\n"
        ".cfi_startproc\n"
        "push %rbp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbp, -16\n"
        "mov %rsp, %rbp\n"
        ".cfi_def_cfa_register %rbp\n"
        "sub $16, %rsp\n"
        "leave\n"
        ".cfi_def_cfa %rsp, 8\n"
        "fxt_after_leave:\n"
        "xor %eax, %eax\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size fxt_epilogue_fn, .-fxt_epilogue_fn\n");
extern char fxt_after_leave[];

START_TEST(test_cfi_step_after_leave_reads_rbp_in_the_interrupted_frames_red_zone)
{
    char path[512];
    ssize_t len = readlink("/proc/self/exe", path, sizeof(path) - 1);
    ck_assert_int_gt(len, 0);
    path[len] = '\0';
    Dl_info di;
    ck_assert(dladdr((void *)fxt_after_leave, &di) != 0);
    uint64_t va = (uint64_t)((uintptr_t)fxt_after_leave - (uintptr_t)di.dli_fbase);
    struct fx_cfi *c = build_ok(path, NULL);
    const struct fx_cfi_row *row = fx_cfi_lookup_sigsafe(c, va);
    ck_assert_ptr_nonnull(row);
    ck_assert_int_eq(row->cfa, FX_CFI_CFA_RSP);
    ck_assert_int_eq(row->cfa_off, 8);
    ck_assert_int_eq(row->rbp, FX_CFI_RBP_SAVED); /* at CFA-16 = sp-8: below sp */
    ck_assert_int_eq(row->rbp_off, -16);
    /* two pages of stack; sp well inside the second, [sp] the return address, [sp-8] rbp */
    static uintptr_t stack[1024] __attribute__((aligned(FX_CFI_PAGE)));
    uintptr_t hi = (uintptr_t)&stack[1024];
    size_t at[] = {600, 513, 512}; /* sp 704 bytes into its page, 8 bytes, at its first word */
    for (size_t k = 0; k < 3; k++) {
        size_t i = at[k];
        stack[i] = 0x4242;
        stack[i - 1] = 0x1111;
        struct fx_cfi_regs before = {.pc = (uintptr_t)fxt_after_leave,
                                     .sp = (uintptr_t)&stack[i],
                                     .fp = 0x1111}; /* leave restored it already */
        struct fx_cfi_regs r = before;
        /* a caller's frame (stopped at a call): below its sp lies its callee's frame */
        ck_assert_int_eq(fx_cfi_step_sigsafe(row, &r, hi, false), FX_CFI_STEP_BAD_CFA);
        ck_assert_mem_eq(&r, &before, sizeof(r));
        if (k == 2) { /* sp at its page's first word: the word below is another page, unread */
            ck_assert_int_eq(fx_cfi_step_sigsafe(row, &r, hi, true), FX_CFI_STEP_BAD_CFA);
            ck_assert_mem_eq(&r, &before, sizeof(r));
            continue;
        }
        ck_assert_int_eq(fx_cfi_step_sigsafe(row, &r, hi, true), FX_CFI_STEP_OK);
        ck_assert_uint_eq(r.pc, 0x4242);
        ck_assert_uint_eq(r.fp, 0x1111);
        ck_assert_uint_eq(r.sp, (uintptr_t)&stack[i + 1]);
    }
    ck_assert_uint_eq(fx_cfi_read_lo(0x10000 + 704, true), 0x10000 + 704 - FX_CFI_RED_ZONE);
    ck_assert_uint_eq(fx_cfi_read_lo(0x10000 + 8, true), 0x10000);
    ck_assert_uint_eq(fx_cfi_read_lo(0x10000 + 8, false), 0x10000 + 8);
    fx_cfi_free(c);
}
END_TEST

START_TEST(test_cfi_lookup_finds_the_last_row_at_or_below_and_nothing_outside)
{
    struct fx_cfi *c = calloc(1, sizeof(*c) + 3 * sizeof(struct fx_cfi_row));
    ck_assert_ptr_nonnull(c);
    c->base = 0x1000;
    c->end = 0x300;
    c->count = 3;
    c->rows[0] = (struct fx_cfi_row){.pc = 0x10, .cfa = FX_CFI_CFA_RSP, .cfa_off = 8};
    c->rows[1] = (struct fx_cfi_row){.pc = 0x20, .cfa = FX_CFI_CFA_RSP, .cfa_off = 16};
    c->rows[2] = (struct fx_cfi_row){.pc = 0x200, .cfa = FX_CFI_CFA_NONE};
    ck_assert_ptr_null(fx_cfi_lookup_sigsafe(c, 0xfff));
    ck_assert_ptr_null(fx_cfi_lookup_sigsafe(c, 0x100f)); /* before the first row */
    ck_assert_ptr_eq(fx_cfi_lookup_sigsafe(c, 0x1010), &c->rows[0]);
    ck_assert_ptr_eq(fx_cfi_lookup_sigsafe(c, 0x101f), &c->rows[0]);
    ck_assert_ptr_eq(fx_cfi_lookup_sigsafe(c, 0x1020), &c->rows[1]);
    ck_assert_ptr_eq(fx_cfi_lookup_sigsafe(c, 0x11ff), &c->rows[1]);
    ck_assert_ptr_eq(fx_cfi_lookup_sigsafe(c, 0x12ff), &c->rows[2]);
    ck_assert_ptr_null(fx_cfi_lookup_sigsafe(c, 0x1300)); /* at the end */
    ck_assert_ptr_null(fx_cfi_lookup_sigsafe(NULL, 0x1010));
    c->segs[0] = (struct fx_cfi_seg){.offset = 0x800, .vaddr = 0x1000, .filesz = 0x300};
    c->nsegs = 1;
    uint64_t va;
    ck_assert(fx_cfi_vaddr_sigsafe(c, 0x810, &va));
    ck_assert_uint_eq(va, 0x1010);
    ck_assert(!fx_cfi_vaddr_sigsafe(c, 0x7ff, &va));
    ck_assert(!fx_cfi_vaddr_sigsafe(c, 0xb00, &va));
    fx_cfi_free(c);
}
END_TEST

/* Copies file `from` to `to`; with flip, its last byte changed (the CRC then differs). */
static void copy_file(const char *from, const char *to, bool flip)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    ck_assert(in != NULL && out != NULL);
    char buf[8192];
    size_t n, total = 0;
    long last = -1;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
        ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
        total += n;
    }
    if (flip && total > 0) {
        last = (long)total - 1;
        ck_assert(fseek(in, last, SEEK_SET) == 0);
        int b = fgetc(in);
        ck_assert(fseek(out, last, SEEK_SET) == 0 && fputc(b ^ 0xff, out) != EOF);
    }
    fclose(in);
    ck_assert(fclose(out) == 0);
}

START_TEST(test_cfi_debug_frame_from_the_debuglink_file_and_not_from_a_wrong_one)
{
    void *h = dlopen(FXTEST_DFLIB, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(h != NULL, "%s", dlerror());
    void *fn = dlsym(h, "fxtest_df_work");
    ck_assert_ptr_nonnull(fn);
    char path[512];
    uint64_t va, start;
    where(fn, path, sizeof(path), &va);
    /* the debug file next to the library: its FDE covers the function, found at its entry */
    struct fx_cfi *c = build_ok(FXTEST_DFLIB, NULL);
    ck_assert_msg(fx_cfi_func_start(c, va + 4, &start), "no row for fxtest_df_work");
    ck_assert_uint_eq(start, va);
    fx_cfi_free(c);
    /* a copy beside a debug file of the same name whose CRC is not the link's: not read */
    char dir[] = "/tmp/fxtest_dflib_XXXXXX", lib[600], dbg[600];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(lib, sizeof(lib), "%s/libfxtest_dflib.so", dir);
    snprintf(dbg, sizeof(dbg), "%s/libfxtest_dflib.so.debug", dir);
    char real_dbg[600];
    snprintf(real_dbg, sizeof(real_dbg), "%s.debug", FXTEST_DFLIB);
    copy_file(FXTEST_DFLIB, lib, false);
    copy_file(real_dbg, dbg, true);
    struct fx_cfi *w = NULL;
    struct fx_errbuf eb = {{0}};
    if (fx_cfi_build(lib, &w, NULL, &eb) == FX_OK) /* its .eh_frame (the C runtime's) alone */
        ck_assert(!fx_cfi_func_start(w, va + 4, &start));
    fx_cfi_free(w);
    /* the right debug file in .debug/ is found */
    char sub[600], dbg2[700];
    snprintf(sub, sizeof(sub), "%s/.debug", dir);
    ck_assert(unlink(dbg) == 0 && mkdir(sub, 0700) == 0);
    snprintf(dbg2, sizeof(dbg2), "%s/libfxtest_dflib.so.debug", sub);
    copy_file(real_dbg, dbg2, false);
    c = build_ok(lib, NULL);
    ck_assert(fx_cfi_func_start(c, va + 4, &start) && start == va);
    fx_cfi_free(c);
    ck_assert(unlink(dbg2) == 0 && rmdir(sub) == 0 && unlink(lib) == 0 && rmdir(dir) == 0);
    dlclose(h);
}
END_TEST

START_TEST(test_cfi_bad_input_fails_with_one_line)
{
    struct fx_cfi *c = (struct fx_cfi *)&c;
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_cfi_build("/nonexistent/libx.so", &c, NULL, &eb), FX_EIO);
    ck_assert_ptr_null(c);
    ck_assert_msg(strstr(eb.msg, "/nonexistent/libx.so") != NULL && !strchr(eb.msg, '\n'), "%s",
                  eb.msg);
    char path[64];
    unit_tmpfile_str(path, "not an ELF file\n");
    ck_assert_int_eq(fx_cfi_build(path, &c, NULL, &eb), FX_EIO);
    unlink(path);
    ck_assert_ptr_null(c);
    ck_assert_msg(strstr(eb.msg, "not an ELF file") != NULL, "%s", eb.msg);
    fx_cfi_free(NULL);
}
END_TEST

static Suite *cfi_suite(void)
{
    Suite *s = suite_create("cfi");
    TCase *tc = tcase_create("real");
    tcase_add_test(tc, test_cfi_libz_deflate_entry_is_rsp_plus_8_and_its_body_moves_the_cfa);
    tcase_add_test(tc, test_cfi_func_start_of_every_address_of_a_function_is_its_entry);
    tcase_add_test(tc, test_cfi_unwinds_from_a_zlib_callback_through_libz_to_its_caller);
    tcase_add_test(tc, test_cfi_debug_frame_from_the_debuglink_file_and_not_from_a_wrong_one);
    suite_add_tcase(s, tc);
    tc = tcase_create("synthetic");
    tcase_add_test(tc, test_cfi_step_reads_the_return_address_and_saved_rbp_inside_the_stack);
    tcase_add_test(tc, test_cfi_step_after_leave_reads_rbp_in_the_interrupted_frames_red_zone);
    tcase_add_test(tc, test_cfi_lookup_finds_the_last_row_at_or_below_and_nothing_outside);
    tcase_add_test(tc, test_cfi_bad_input_fails_with_one_line);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(cfi_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
