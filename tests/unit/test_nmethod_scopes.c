/* SPDX-License-Identifier: Apache-2.0 */
/* unit.nmethod_scopes: the inlining facts from an nmethod's own debug information
 * (agent/sampling/nmethod_scopes.c, issue 31) on hand-built tables. The ints of both
 * CompressedReadStream encodings, written here from their grammar (HotSpot's
 * compressedStream.hpp, JDK 17; utilities/unsigned5.hpp, JDK 20+): known bytes, round trips up
 * to 2^32-1, JDK 20+'s excluded zero byte refused, the same bytes read differently by the two.
 * Scope chains: a method inlined into itself (self_inlined), chains with none, a shared caller
 * scope counted once, a method under two metadata indices counted once (an alias), the count
 * capped as fx_jit_info_inlined caps it; the wrong encoding never gives the right answer.
 * Bounds refused with their reason: a stream cut inside an int, a decode offset past the data
 * or negative, a sender not before its scope, a method index 0 or past the table or naming
 * null, no PcDesc with a scope, a PcDesc layout that does not fit. And the read itself on a
 * fake nmethod of this process with both VMStructs layouts (JDK 17: offsets from the nmethod;
 * JDK 25: immutable and mutable data), refused when its compile id is not the range's, a
 * table's bounds are broken, or its block was freed with the header in place (the HeapBlock's
 * _used 0, or nmethod::_state past the live ones). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "nmethod_scopes.h"

/* --- the writers, from the grammar: x = 0 (JDK 17) or 1 (JDK 20+, no zero byte) --- */
static size_t put(uint8_t *b, size_t at, uint32_t v, uint32_t x)
{
    const uint32_t low = 256 - 64 - x; /* low codes: 192 or 191 */
    for (int i = 0;; i++) {
        if (v < low || i == 4) {
            b[at++] = (uint8_t)(v + x);
            return at;
        }
        v -= low;
        b[at++] = (uint8_t)(x + low + v % 64);
        v >>= 6;
    }
}

struct scope {
    uint32_t sender, idx, bci;
};

/* The scopes data: a leading 0xFF (HotSpot's, so no offset is 0), padding up to `pad` so that
 * offsets need more than one byte, then each scope; off[i] its decode offset. */
static size_t build(uint8_t *b, const struct scope *s, size_t n, int32_t *off, uint32_t x,
                    size_t pad)
{
    size_t at = 0;
    b[at++] = 0xFF;
    while (at < pad)
        b[at++] = 0xFF;
    for (size_t i = 0; i < n; i++) {
        off[i] = (int32_t)at;
        uint32_t sender = s[i].sender == 0 ? 0 : (uint32_t)off[s[i].sender - 1];
        at = put(b, at, sender, x);
        at = put(b, at, s[i].idx, x);
        at = put(b, at, s[i].bci, x);
        at = put(b, at, 7, x); /* locals, expressions, monitors: not read */
        at = put(b, at, 0, x);
        at = put(b, at, 0, x);
    }
    return at;
}

#define ROOT ((uintptr_t)0x7000)
static const uintptr_t meta[] = {ROOT, 0x7100, 0x7200, 0x7100, 0};

struct image {
    uint8_t data[4096];
    uint8_t pcs[16 * 16];
    int32_t off[16];
    struct fx_scopes_image im;
};

/* PcDescs (16 bytes, scope offset at 4) naming scopes pc[i] (1-based into s; 0: none). */
static void image(struct image *g, const struct scope *s, size_t n, const int *pc, size_t npc,
                  bool u5, size_t pad)
{
    memset(g, 0, sizeof(*g));
    size_t len = build(g->data, s, n, g->off, u5 ? 1 : 0, pad);
    for (size_t i = 0; i < npc; i++) {
        int32_t d = pc[i] == 0 ? 0 : g->off[pc[i] - 1];
        int32_t pco = (int32_t)i * 8;
        memcpy(g->pcs + i * 16, &pco, 4);
        memcpy(g->pcs + i * 16 + 4, &d, 4);
    }
    g->im = (struct fx_scopes_image){.pcs = g->pcs,
                                     .n_pcs = npc,
                                     .pc_size = 16,
                                     .pc_scope = 4,
                                     .data = g->data,
                                     .data_len = len,
                                     .meta = meta,
                                     .n_meta = 5,
                                     .root = ROOT,
                                     .unsigned5 = u5};
}

static enum fx_scopes_why decode(const struct image *g, struct fx_nmethod_scopes *o, uint32_t *al)
{
    return fx_nmethod_scopes_decode(&g->im, o, al);
}

/* A: root (index 1), B (index 2) inlined, A inlined again under B, C (index 3) under A. */
static const struct scope self_chain[] = {
        {0, 1, 0},  /* 1: the root scope, method A */
        {1, 2, 5},  /* 2: B called from A */
        {2, 1, 9},  /* 3: A called from B: self-inlined */
        {1, 3, 12}, /* 4: C called from A */
};

START_TEST(test_ints)
{
    uint8_t b[8];
    /* known bytes: 191 is one byte in JDK 17's, two in UNSIGNED5 (0xC0 0x01) */
    ck_assert_uint_eq(put(b, 0, 191, 0), 1);
    ck_assert_uint_eq(b[0], 191);
    ck_assert_uint_eq(put(b, 0, 191, 1), 2);
    ck_assert_uint_eq(b[0], 0xC0);
    ck_assert_uint_eq(b[1], 0x01);
    ck_assert_uint_eq(put(b, 0, 0xFFFFFFFFu, 1), 5);
    ck_assert_uint_eq(put(b, 0, 0, 0), 1);
    ck_assert_uint_eq(b[0], 0); /* JDK 17 writes 0 as a zero byte, UNSIGNED5 never does */
    ck_assert_uint_eq(put(b, 0, 0, 1), 1);
    ck_assert_uint_eq(b[0], 1);
    /* round trips through the decode: one scope whose bci is v, both encodings */
    const uint32_t vals[] = {0,     1,      190,    191,     192,       255,        256,
                             12345, 0x307E, 0x307F, 0xC207E, 0x308207F, 0x7FFFFFFF, 0xFFFFFFFFu};
    for (int u5 = 0; u5 < 2; u5++)
        for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
            struct image g;
            struct scope s = {0, vals[i] == 0 ? 1 : (vals[i] % 3) + 1, vals[i]};
            int pc = 1;
            image(&g, &s, 1, &pc, 1, u5, 1);
            struct fx_nmethod_scopes o;
            uint32_t al;
            ck_assert_int_eq(decode(&g, &o, &al), FX_SCOPES_OK);
        }
}
END_TEST

START_TEST(test_self_inlined)
{
    for (int u5 = 0; u5 < 2; u5++) {
        struct image g;
        const int pcs[] = {0, 3, 4, 2, 0}; /* sentinels without a scope at both ends */
        image(&g, self_chain, 4, pcs, 5, u5, 300);
        struct fx_nmethod_scopes o;
        uint32_t al;
        ck_assert_int_eq(decode(&g, &o, &al), FX_SCOPES_OK);
        ck_assert(o.self_inlined);
        ck_assert_int_eq(o.inlined_methods, 2); /* B and C; A is the root */
        ck_assert_uint_eq(o.pcs, 3);
        ck_assert_uint_eq(al, 0);
        /* the other encoding reads other ints: never this answer (refused or different) */
        g.im.unsigned5 = !u5;
        enum fx_scopes_why w = decode(&g, &o, &al);
        ck_assert(w != FX_SCOPES_OK || !o.self_inlined || o.inlined_methods != 2);
    }
}
END_TEST

START_TEST(test_none_inlined)
{
    for (int u5 = 0; u5 < 2; u5++) {
        struct image g;
        const int pcs[] = {2, 4, 1}; /* A's inner scopes name only B and C */
        image(&g, self_chain, 4, pcs, 3, u5, 1);
        struct fx_nmethod_scopes o;
        uint32_t al;
        ck_assert_int_eq(decode(&g, &o, &al), FX_SCOPES_OK);
        ck_assert(!o.self_inlined);
        ck_assert_int_eq(o.inlined_methods, 2);
        /* the root alone: nothing inlined, and the root's own scope is not "self-inlined" */
        const int root_only[] = {1, 1};
        image(&g, self_chain, 4, root_only, 2, u5, 1);
        ck_assert_int_eq(decode(&g, &o, &al), FX_SCOPES_OK);
        ck_assert(!o.self_inlined);
        ck_assert_int_eq(o.inlined_methods, 0);
        ck_assert_uint_eq(o.pcs, 2);
    }
}
END_TEST

START_TEST(test_alias_and_cap)
{
    struct image g;
    /* B under index 2 and again under index 4 (the same Method*): one method, one alias */
    const struct scope s[] = {{0, 1, 0}, {1, 2, 1}, {1, 4, 2}};
    const int pcs[] = {2, 3};
    image(&g, s, 3, pcs, 2, true, 1);
    struct fx_nmethod_scopes o;
    uint32_t al;
    ck_assert_int_eq(decode(&g, &o, &al), FX_SCOPES_OK);
    ck_assert_int_eq(o.inlined_methods, 1);
    ck_assert_uint_eq(al, 1);
    /* 250 distinct methods inlined: counted up to FX_NMETHOD_SCOPES_INLINED_MAX */
    static uintptr_t many[251];
    static uint8_t data[8192], pcsb[251 * 16];
    size_t at = 0;
    data[at++] = 0xFF;
    int32_t root_off = (int32_t)at;
    at = put(data, at, 0, 1), at = put(data, at, 1, 1), at = put(data, at, 0, 1);
    many[0] = ROOT;
    for (uint32_t i = 1; i <= 250; i++) {
        many[i] = ROOT + 0x100 * i;
        int32_t d = (int32_t)at;
        at = put(data, at, (uint32_t)root_off, 1), at = put(data, at, i + 1, 1);
        at = put(data, at, 3, 1);
        memcpy(pcsb + (i - 1) * 16 + 4, &d, 4);
    }
    struct fx_scopes_image im = {.pcs = pcsb,
                                 .n_pcs = 250,
                                 .pc_size = 16,
                                 .pc_scope = 4,
                                 .data = data,
                                 .data_len = at,
                                 .meta = many,
                                 .n_meta = 251,
                                 .root = ROOT,
                                 .unsigned5 = true};
    ck_assert_int_eq(fx_nmethod_scopes_decode(&im, &o, &al), FX_SCOPES_OK);
    ck_assert_int_eq(o.inlined_methods, FX_NMETHOD_SCOPES_INLINED_MAX);
    ck_assert_uint_eq(o.pcs, 250);
}
END_TEST

START_TEST(test_bounds)
{
    struct image g;
    struct fx_nmethod_scopes o;
    uint32_t al;
    const int pcs[] = {3};
    for (int u5 = 0; u5 < 2; u5++) {
        image(&g, self_chain, 4, pcs, 1, u5, 300);
        ck_assert_int_eq(decode(&g, &o, &al), FX_SCOPES_OK);
        size_t len = g.im.data_len;
        /* cut inside the first int of scope 3 (its sender, 2 bytes past offset 300) */
        g.im.data_len = (size_t)g.off[2] + 1;
        ck_assert_int_eq(decode(&g, &o, &al), FX_SCOPES_STREAM);
        ck_assert(!o.self_inlined && o.inlined_methods == 0 && o.pcs == 0);
        g.im.data_len = len;
        /* a decode offset past the data, and a negative one */
        int32_t bad = (int32_t)len;
        memcpy(g.pcs + 4, &bad, 4);
        ck_assert_int_eq(decode(&g, &o, &al), FX_SCOPES_OFFSET);
        bad = -5;
        memcpy(g.pcs + 4, &bad, 4);
        ck_assert_int_eq(decode(&g, &o, &al), FX_SCOPES_OFFSET);
        /* no PcDesc with a scope */
        bad = 0;
        memcpy(g.pcs + 4, &bad, 4);
        ck_assert_int_eq(decode(&g, &o, &al), FX_SCOPES_EMPTY);
        /* a PcDesc layout whose scope offset does not fit */
        image(&g, self_chain, 4, pcs, 1, u5, 300);
        g.im.pc_scope = 13;
        ck_assert_int_eq(decode(&g, &o, &al), FX_SCOPES_SIZE);
    }
    /* a sender not before its scope: at offset 1, a scope naming itself its sender (a loop) */
    const int p1[] = {1};
    const struct scope root[] = {{0, 1, 0}};
    image(&g, root, 1, p1, 1, true, 1);
    g.data[1] = 0x02; /* UNSIGNED5's 1 */
    ck_assert_int_eq(decode(&g, &o, &al), FX_SCOPES_OFFSET);
    /* method index 0, past the table, naming null */
    const uint32_t idx[] = {0, 6, 5};
    for (int i = 0; i < 3; i++) {
        const struct scope s[] = {{0, idx[i], 0}};
        image(&g, s, 1, p1, 1, true, 1);
        ck_assert_int_eq(decode(&g, &o, &al), FX_SCOPES_INDEX);
    }
    /* JDK 20+ never writes a zero byte: one is refused, where JDK 17 reads a 0 */
    image(&g, root, 1, p1, 1, false, 1);
    ck_assert_uint_eq(g.data[g.off[0]], 0);
    ck_assert_int_eq(decode(&g, &o, &al), FX_SCOPES_OK);
    g.im.unsigned5 = true;
    ck_assert_int_eq(decode(&g, &o, &al), FX_SCOPES_STREAM);
}
END_TEST

/* --- the read, on a fake nmethod, VMStructs stubbed (agent/sampling/internal.h) --- */
static int jdk = 25;
static int major;

long fx_vmstructs_field(const char *type, const char *field)
{
    static const struct {
        int jdk;
        const char *type, *field;
        long off;
    } f[] = {
            {25, "nmethod", "_method", 80},
            {25, "nmethod", "_compile_id", 212},
            {25, "nmethod", "_scopes_pcs_offset", 196},
            {25, "nmethod", "_scopes_data_offset", 200},
            {25, "nmethod", "_immutable_data", 96},
            {25, "nmethod", "_immutable_data_size", 160},
            {25, "CodeBlob", "_mutable_data", 16},
            {25, "CodeBlob", "_mutable_data_size", 48},
            {25, "CodeBlob", "_relocation_size", 28},
            {17, "CompiledMethod", "_method", 112},
            {17, "CompiledMethod", "_scopes_data_begin", 120},
            {17, "nmethod", "_compile_id", 304},
            {17, "nmethod", "_metadata_offset", 260},
            {17, "nmethod", "_scopes_pcs_offset", 268},
            {17, "nmethod", "_dependencies_offset", 272},
            {0, "PcDesc", "_scope_decode_offset", 4},
    };
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
        if ((f[i].jdk == jdk || f[i].jdk == 0) && strcmp(f[i].type, type) == 0 &&
            strcmp(f[i].field, field) == 0)
            return f[i].off;
    return -1;
}

long fx_vmstructs_size(const char *type)
{
    return strcmp(type, "PcDesc") == 0 ? 16 : -1;
}

const void *fx_vmstructs_static(const char *type, const char *field)
{
    return strcmp(type, "Abstract_VM_Version") == 0 && strcmp(field, "_vm_major_version") == 0
                   ? &major
                   : NULL;
}

void fx_log(const char *fmt, ...)
{
    (void)fmt;
}

static void put_int(uint8_t *at, int32_t v)
{
    memcpy(at, &v, 4);
}

static void put_ptr(uint8_t *at, const void *p)
{
    memcpy(at, &p, sizeof(p));
}

/* A fake nmethod of `jdk`'s layout holding g's tables, after a HeapBlock header (16 bytes, _used
 * at 8) as the code heap lays it out; its code range in *r. */
static _Alignas(64) uint8_t block[64 + 8192];
static uint8_t *const blob = block + 64;
#define USED  (block + 64 - 16 + 8)
#define STATE 320          /* nmethod::_state, clear of both layouts' fields */
struct fx_sigstate fx_sig; /* signal_handler.c's, not linked here: the code heap layout */
static _Alignas(8) uint8_t imm[8192], mut[512];
static void fake(const struct image *g, struct fx_code_range *r)
{
    memset(block, 0, sizeof(block));
    *USED = 1; /* used, state 0: in use */
    size_t pcs_len = g->im.n_pcs * 16, data_len = g->im.data_len, meta_len = 5 * 8;
    *r = (struct fx_code_range){.blob = (uintptr_t)blob, .kind = FX_BLOB_NMETHOD, .compile_id = 42};
    uintptr_t root = ROOT;
    if (jdk == 25) {
        put_ptr(blob + 80, (void *)root);
        put_int(blob + 212, 42);
        memcpy(imm + 64, g->pcs, pcs_len);
        memcpy(imm + 64 + pcs_len, g->data, data_len);
        put_int(blob + 196, 64);
        put_int(blob + 200, (int32_t)(64 + pcs_len));
        put_ptr(blob + 96, imm);
        put_int(blob + 160, (int32_t)(64 + pcs_len + data_len));
        memcpy(mut + 24, meta, meta_len); /* after 24 bytes of relocations */
        put_ptr(blob + 16, mut);
        put_int(blob + 28, 24);
        put_int(blob + 48, (int32_t)(24 + meta_len));
    } else {
        put_ptr(blob + 112, (void *)root);
        put_int(blob + 304, 42);
        memcpy(blob + 1024, meta, meta_len);
        memcpy(blob + 1024 + meta_len, g->data, data_len);
        memcpy(blob + 1024 + meta_len + data_len, g->pcs, pcs_len);
        put_int(blob + 260, 1024);
        put_ptr(blob + 120, blob + 1024 + meta_len);
        put_int(blob + 268, (int32_t)(1024 + meta_len + data_len));
        put_int(blob + 272, (int32_t)(1024 + meta_len + data_len + pcs_len));
    }
}

/* In a child process of its own (the layout is looked up once per process, and Check may run
 * without forking, CK_FORK=no under valgrind): which steps failed, as bits of the exit code. */
static int read_fake(int which)
{
    jdk = which, major = which;
    struct image g;
    const int pcs[] = {0, 3, 4, 0};
    image(&g, self_chain, 4, pcs, 4, which >= 20, 300);
    struct fx_code_range r;
    fake(&g, &r);
    struct fx_nmethod_scopes o;
    int bad = 0;
    bad |= !fx_nmethod_scopes_read(&r, &o) << 0;
    bad |= !(o.self_inlined && o.inlined_methods == 2 && o.pcs == 2) << 1;
    r.compile_id = 43; /* another compilation at that address: not read */
    bad |= fx_nmethod_scopes_read(&r, &o) << 2;
    r.compile_id = 42;
    struct image e; /* no PcDesc with a scope (a native wrapper): read, nothing inlined */
    const int none[] = {0, 0, 0, 0};
    image(&e, self_chain, 4, none, 4, which >= 20, 300);
    struct fx_code_range er;
    fake(&e, &er);
    bad |= !(fx_nmethod_scopes_read(&er, &o) && !o.self_inlined && o.inlined_methods == 0) << 5;
    fake(&g, &r);
    put_int(blob + (which == 25 ? 200 : 272), 10); /* the PcDescs' end before their begin */
    bad |= fx_nmethod_scopes_read(&r, &o) << 3;
    r.blob = 0;
    bad |= fx_nmethod_scopes_read(&r, &o) << 4;
    /* session 25/26: its block freed with the header, compile id included, in place (CodeHeap
     * hands out a free block's tail): not read; nor with its state past the live ones (2: JDK
     * 17's zombie/unloaded side, live_max 1); read again once both say live */
    fake(&g, &r);
    fx_sig.codeheap = (struct fx_codeheap_layout){
            .block_size = 16, .block_used = 8, .state = STATE, .live_max = 1};
    __atomic_store_n(&fx_sig.codeheap.pid, getpid(), __ATOMIC_RELEASE);
    bad |= !fx_nmethod_scopes_read(&r, &o) << 6;
    *USED = 0;
    bad |= fx_nmethod_scopes_read(&r, &o) << 7;
    *USED = 1;
    blob[STATE] = 2;
    bad |= fx_nmethod_scopes_read(&r, &o) << 7; /* an exit status has 8 bits */
    blob[STATE] = 1;                            /* not entrant: its frames still run */
    bad |= !fx_nmethod_scopes_read(&r, &o) << 6;
    return bad;
}

static void read_in_child(int which)
{
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        _exit(read_fake(which));
    int st = 0;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 0);
}

START_TEST(test_read_jdk25)
{
    read_in_child(25);
}
END_TEST

START_TEST(test_read_jdk17)
{
    read_in_child(17);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("nmethod_scopes");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_ints);
    tcase_add_test(tc, test_self_inlined);
    tcase_add_test(tc, test_none_inlined);
    tcase_add_test(tc, test_alias_and_cap);
    tcase_add_test(tc, test_bounds);
    tcase_add_test(tc, test_read_jdk25);
    tcase_add_test(tc, test_read_jdk17);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
