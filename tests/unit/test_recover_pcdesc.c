/* SPDX-License-Identifier: Apache-2.0 */
/* unit.recover_pcdesc: the PcDesc check of the intrinsics' stubs (agent/sampling/recover_pcdesc.c,
 * docs/VALIDATION.md 8.5d) on a fake nmethod in this process's memory, both layouts (JDK 17: the
 * table's offsets from the nmethod; JDK 23+: from its immutable data): a PcDesc exactly at the
 * return address is accepted; one byte before or after it, a return address past the table's
 * last PcDesc or outside the code, a table whose bounds are broken or too large are refused;
 * fx_recover_stub_called asks for it of an intrinsic's stub only, and refuses an OSR caller.
 * Real bytes and PcDescs (JVMTI's inline records of the nmethods, those within 40 bytes of the
 * call): Temurin 25.0.3's Adler32.update (mov r10, imm64; call r10) and CRC32.update (call rel32)
 * with the post-call nop after the call, the call's PcDesc 8 bytes on, accepted; refused with
 * the nop changed, a PcDesc inside the nop, none at its end, the nop past the code's end, a call
 * to another stub, an OSR caller; JDK 17.0.15's Stubs.checksum, exact PcDesc, accepted, and
 * refused without it. Each refusal's reason: the first PcDesc past the call's end or inside the
 * nop (FX_REC_NO_PCDESC), an OSR caller, no layout, none after the call or only HotSpot's
 * closing sentinel past the code (FX_REC_PCDESC_TABLE). And the frame rule of the partial stack
 * kept where the scope is not proven (recover_partial.c, fx_recover_compiled_sender): the
 * caller's pc, sp and rbp at the nmethod's frame size above its sp at the call, refused without a
 * frame size, for a stub, or with a word outside the stack. And the walk below's proof of an
 * intrinsic stub's return (fx_recover_stub_return): a call to that very stub right before it,
 * with or without PcDescs; one byte off, another target, or a target not in the call refused. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fx_recover.h"
#include "recover_pcdesc.h"
#include "recover_x86.h"

/* a blob: a 64-byte header, 64 bytes of code at 64, a PcDesc table (16-byte entries) at 128 */
static _Alignas(16) uint8_t blob[2048];
static _Alignas(16) uint8_t immutable[256];
enum {
    HDR_BEGIN = 8,
    HDR_END = 12,
    HDR_DATA = 16,
    HDR_SIZE = 24,
    CODE = 64,
    TABLE = 128
};
static const int32_t pcs[] = {-1, 5, 20, 33}; /* the sentinel first, as HotSpot writes it */

static void put_i32(uint8_t *at, int32_t v)
{
    memcpy(at, &v, sizeof(v));
}

/* the table of pcs at `table` in mem, and its bounds in the header */
static void fill(uint8_t *mem, int32_t table, int32_t from)
{
    for (size_t i = 0; i < sizeof(pcs) / sizeof(pcs[0]); i++)
        put_i32(mem + table + 16 * i, pcs[i]);
    put_i32(blob + HDR_BEGIN, from);
    put_i32(blob + HDR_END, from + 16 * (int32_t)(sizeof(pcs) / sizeof(pcs[0])));
}

static struct fx_code_range nm(void)
{
    return (struct fx_code_range){.begin = (uintptr_t)blob + CODE,
                                  .end = (uintptr_t)blob + TABLE,
                                  .blob = (uintptr_t)blob,
                                  .kind = FX_BLOB_NMETHOD};
}

static struct fx_pcdesc_layout jdk17(void)
{
    return (struct fx_pcdesc_layout){.pid = (int32_t)getpid(),
                                     .begin = HDR_BEGIN,
                                     .end = HDR_END,
                                     .data = -1,
                                     .data_size = -1,
                                     .size = 16,
                                     .pc = 0};
}

/* 8.5a: whether the first PcDesc at or after a return address holds a scope (AsyncGetCallTrace
 * decodes the caller's frame from it) or not (it names the nmethod's own method at bci 0, which a
 * bci-0 frame of that method then may be): scopes {-, 7, 0, 9} at the PcDescs {-1, 5, 20, 33}.
 * Fails with the scope word not read (any PcDesc taken as scoped) or the search off by one. */
START_TEST(test_scoped)
{
    memset(blob, 0, sizeof(blob));
    fill(blob, TABLE, TABLE);
    static const int32_t scopes[] = {0, 7, 0, 9};
    for (size_t i = 0; i < 4; i++)
        put_i32(blob + TABLE + 16 * i + 4, scopes[i]);
    struct fx_pcdesc_layout l = jdk17();
    l.scope = 4;
    struct fx_code_range n = nm();
    ck_assert(fx_recover_pcdesc_scoped(&l, &n, n.begin + 5));  /* at 5: scope 7 */
    ck_assert(fx_recover_pcdesc_scoped(&l, &n, n.begin + 1));  /* the first at or after: 5 */
    ck_assert(!fx_recover_pcdesc_scoped(&l, &n, n.begin + 6)); /* at 20: serialized_null */
    ck_assert(!fx_recover_pcdesc_scoped(&l, &n, n.begin + 20));
    ck_assert(fx_recover_pcdesc_scoped(&l, &n, n.begin + 21));  /* at 33: scope 9 */
    ck_assert(!fx_recover_pcdesc_scoped(&l, &n, n.begin + 34)); /* none after: the fallback */
    l.scope = -1; /* the field not exported: nothing proven */
    ck_assert(!fx_recover_pcdesc_scoped(&l, &n, n.begin + 5));
    l.scope = 14; /* past the PcDesc */
    ck_assert(!fx_recover_pcdesc_scoped(&l, &n, n.begin + 5));
    l.scope = 4;
    n.kind = FX_BLOB_STUB;
    ck_assert(!fx_recover_pcdesc_scoped(&l, &n, n.begin + 5));
}
END_TEST

START_TEST(test_exact_only)
{
    memset(blob, 0, sizeof(blob));
    fill(blob, TABLE, TABLE);
    struct fx_pcdesc_layout l = jdk17();
    struct fx_code_range n = nm();
    for (size_t i = 1; i < 4; i++) {
        uintptr_t ret = n.begin + (uintptr_t)pcs[i];
        ck_assert(fx_recover_pcdesc_at(&l, &n, ret, 0));      /* exactly there */
        ck_assert(!fx_recover_pcdesc_at(&l, &n, ret + 1, 0)); /* off by one either way */
        ck_assert(!fx_recover_pcdesc_at(&l, &n, ret - 1, 0));
    }
    ck_assert(fx_recover_pcdesc_at(&l, &n, n.begin + 12, 8));  /* the first after it at +8 */
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin + 11, 8)); /* at +9 */
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin + 5, 8));  /* one at ret itself */
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin + 12, 9)); /* no such skip */
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin + 40, 0)); /* past the last PcDesc */
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin, 0));      /* at the code's begin */
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.end + 5, 0));    /* outside the code */
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.end - 4, 8));    /* the nop past the code's end */
    /* where the first PcDesc lies, for the refusal's reason (session 20): past the call's end
     * (a stretched run), inside the nop, none in the code after it */
    ck_assert_int_eq(fx_recover_pcdesc_find(&l, &n, n.begin + 6, 0), FX_PCDESC_ELSEWHERE);
    ck_assert_int_eq(fx_recover_pcdesc_find(&l, &n, n.begin + 4, 8), FX_PCDESC_ELSEWHERE);
    ck_assert_int_eq(fx_recover_pcdesc_find(&l, &n, n.begin + 12, 8), FX_PCDESC_AT_END);
    ck_assert_int_eq(fx_recover_pcdesc_find(&l, &n, n.begin + 40, 0), FX_PCDESC_UNKNOWN);
    put_i32(blob + TABLE + 16 * 3, 0x7FFFFFFF); /* HotSpot's closing sentinel, past the code */
    ck_assert_int_eq(fx_recover_pcdesc_find(&l, &n, n.begin + 21, 0), FX_PCDESC_UNKNOWN);
    put_i32(blob + TABLE + 16 * 3, (int32_t)(n.end - n.begin) + 1); /* past the code's end */
    ck_assert_int_eq(fx_recover_pcdesc_find(&l, &n, n.begin + 21, 0), FX_PCDESC_UNKNOWN);
    put_i32(blob + TABLE + 16 * 3, (int32_t)(n.end - n.begin)); /* at its end: as before */
    ck_assert_int_eq(fx_recover_pcdesc_find(&l, &n, n.begin + 21, 0), FX_PCDESC_ELSEWHERE);
    put_i32(blob + TABLE + 16 * 3, pcs[3]);
    struct fx_code_range other = n;
    other.blob = 0; /* no nmethod header known (a method compiled since the table) */
    ck_assert(!fx_recover_pcdesc_at(&l, &other, n.begin + 5, 0));
    other = n;
    other.kind = FX_BLOB_STUB;
    ck_assert(!fx_recover_pcdesc_at(&l, &other, n.begin + 5, 0));
    ck_assert(!fx_recover_pcdesc_at(NULL, &n, n.begin + 5, 0));
    /* broken bounds: end before begin, a size not a multiple of PcDesc's, a huge table, a
     * table over the code */
    put_i32(blob + HDR_END, TABLE - 16);
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin + 5, 0));
    put_i32(blob + HDR_END, TABLE + 17);
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin + 5, 0));
    put_i32(blob + HDR_END, TABLE + 16 * (int32_t)(FX_PCDESC_MAX + 1));
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin + 5, 0));
    fill(blob, TABLE, CODE);
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin + 5, 0));
}
END_TEST

START_TEST(test_immutable_data)
{
    memset(blob, 0, sizeof(blob));
    memset(immutable, 0, sizeof(immutable));
    fill(immutable, 32, 32);
    uintptr_t data = (uintptr_t)immutable;
    memcpy(blob + HDR_DATA, &data, sizeof(data));
    put_i32(blob + HDR_SIZE, (int32_t)sizeof(immutable));
    struct fx_pcdesc_layout l = jdk17();
    l.data = HDR_DATA;
    l.data_size = HDR_SIZE;
    struct fx_code_range n = nm();
    ck_assert(fx_recover_pcdesc_at(&l, &n, n.begin + 20, 0));
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin + 21, 0));
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin + 19, 0));
    ck_assert(fx_recover_pcdesc_at(&l, &n, n.begin + 25, 8));
    put_i32(blob + HDR_SIZE, 64); /* the table ends past the immutable data */
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin + 20, 0));
    put_i32(blob + HDR_SIZE, (int32_t)sizeof(immutable));
    data = 0; /* no immutable data */
    memcpy(blob + HDR_DATA, &data, sizeof(data));
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin + 20, 0));
}
END_TEST

/* the call test first; the PcDesc for an intrinsic's stub only, refused before the layout */
START_TEST(test_stub_called)
{
    memset(blob, 0, sizeof(blob));
    fill(blob, TABLE, TABLE);
    struct fx_code_range n = nm(), stub = {.kind = FX_BLOB_STUB, .arraycopy = FX_STUB_INTRINSIC};
    stub.begin = n.begin; /* rel32 0: each call below goes to its return address, in "the stub" */
    stub.end = n.end;
    blob[CODE + 15] = 0xE8; /* call rel32 returning to code + 20, where a PcDesc lies */
    blob[CODE + 28] = 0xE8; /* returning to code + 33: a PcDesc too */
    blob[CODE + 40] = 0xE8; /* returning to code + 45: none there */
    ck_assert(!fx_recover_stub_called(&stub, &n, n.begin + 20)); /* no layout published yet */
    ck_assert_int_eq(fx_recover_stub_refused(&stub, &n, n.begin + 20), FX_REC_PCDESC_TABLE);
    struct fx_pcdesc_layout l = jdk17();
    fx_recover_pcdesc_publish(&l);
    ck_assert(fx_recover_stub_called(&stub, &n, n.begin + 20));
    ck_assert(fx_recover_stub_called(&stub, &n, n.begin + 33));
    /* none after it (past the table's last), then one 8 bytes on (a run stretched on) */
    ck_assert_int_eq(fx_recover_stub_refused(&stub, &n, n.begin + 45), FX_REC_PCDESC_TABLE);
    blob[CODE + 7] = 0xE8; /* returning to code + 12, the first PcDesc after it at 20 */
    ck_assert_int_eq(fx_recover_stub_refused(&stub, &n, n.begin + 12), FX_REC_NO_PCDESC);
    /* a PcDesc, no call before it */
    ck_assert_int_eq(fx_recover_stub_refused(&stub, &n, n.begin + 5), FX_REC_NOT_CALLED);
    n.flags = FX_RANGE_OSR; /* an OSR caller: refused, the PcDesc exact or not */
    ck_assert_int_eq(fx_recover_stub_refused(&stub, &n, n.begin + 20), FX_REC_PCDESC_OSR);
    n.flags = 0;
    stub.end = n.begin + 20; /* a call to another stub */
    ck_assert_int_eq(fx_recover_stub_refused(&stub, &n, n.begin + 20), FX_REC_NOT_CALLED);
    stub.end = n.end;
    /* a fill stub (its call has no JVM state): a partial stack even with a PcDesc where the
     * call ends; the call to it and the OSR refusal as for an intrinsic's */
    stub.arraycopy = FX_STUB_FILL;
    ck_assert_int_eq(fx_recover_stub_refused(&stub, &n, n.begin + 20), FX_REC_NO_PCDESC);
    ck_assert_int_eq(fx_recover_stub_refused(&stub, &n, n.begin + 5), FX_REC_NOT_CALLED);
    n.flags = FX_RANGE_OSR;
    ck_assert_int_eq(fx_recover_stub_refused(&stub, &n, n.begin + 20), FX_REC_PCDESC_OSR);
    n.flags = 0;
    stub.end = n.begin + 20;
    ck_assert_int_eq(fx_recover_stub_refused(&stub, &n, n.begin + 20), FX_REC_NOT_CALLED);
    stub.end = n.end;
    stub.arraycopy = FX_STUB_ARRAYCOPY; /* the call test alone */
    ck_assert(fx_recover_stub_called(&stub, &n, n.begin + 45));
    ck_assert(!fx_recover_stub_called(&stub, &n, n.begin + 5));
}
END_TEST

/* Real code: the bytes around a call at `call` (len 3: mov r10, imm64 before it; 5: rel32) of
 * an nmethod code_size long, patched to call `target`, and its PcDescs' offsets. */
struct real {
    int32_t size, call, len;
    const char *hex; /* call - 16 .. ret + 16 */
    int32_t pcs[8];  /* the sentinel -1 first; 0 ends the list */
};

/* Temurin 25.0.3, Adler32.update (C2): call updateBytesAdler32 at 90, PcDescs 8 bytes on */
static const struct real adler25 = {296,
                                    90,
                                    3,
                                    "8b7b0c418bd049baa0119c97287f000041ffd20f1f840000000000"
                                    "89430c4883c4405d",
                                    {-1, 69, 74, 77, 101, 104, 0}};
/* Temurin 25.0.3, CRC32.update (C2): call rel32 to updateBytesCRC32 at 471 */
static const struct real crc25 = {1024,
                                  471,
                                  5,
                                  "542460488d740a108b7c245c8b542468e8248c50070f1f840000000000"
                                  "488b74247089460c",
                                  {-1, 484, 492, 511, 0}};
/* JDK 17.0.15, Stubs.checksum with Adler32.update inlined (C2): no post-call nop, exact PcDesc */
static const struct real checksum17 = {312,
                                       63,
                                       3,
                                       "0175678b7b0c49bae09a9388167f000041ffd289430ceb1f8b7b0c85"
                                       "d276088beaffcd",
                                       {-1, 50, 53, 66, 69, 71, 74, 0}};

static _Alignas(16) uint8_t stubcode[64];

/* Lays `r` out at CODE in blob, its table after the code (JDK 17's layout), calling stubcode;
 * returns the return address. */
static uintptr_t real_nmethod(const struct real *r, struct fx_code_range *n)
{
    memset(blob, 0, sizeof(blob));
    int32_t table = CODE + ((r->size + 15) & ~15), k = 0;
    ck_assert_int_le(table + 16 * 8, (int)sizeof(blob));
    uint8_t *at = blob + CODE + r->call - 16;
    for (const char *h = r->hex; h[0] && h[1]; h += 2)
        *at++ = (uint8_t)strtoul((char[3]){h[0], h[1], 0}, NULL, 16);
    uintptr_t ret = (uintptr_t)blob + CODE + (uintptr_t)(r->call + r->len);
    uintptr_t target = (uintptr_t)stubcode;
    if (r->len == 5) {
        int32_t rel = (int32_t)((intptr_t)target - (intptr_t)ret);
        memcpy(blob + CODE + r->call + 1, &rel, sizeof(rel));
    } else
        memcpy(blob + CODE + r->call - 8, &target, sizeof(target));
    for (; k < 8 && (k == 0 || r->pcs[k] != 0); k++)
        put_i32(blob + table + 16 * k, r->pcs[k]);
    put_i32(blob + HDR_BEGIN, table);
    put_i32(blob + HDR_END, table + 16 * k);
    *n = (struct fx_code_range){.begin = (uintptr_t)blob + CODE,
                                .end = (uintptr_t)blob + CODE + (uintptr_t)r->size,
                                .blob = (uintptr_t)blob,
                                .kind = FX_BLOB_NMETHOD};
    return ret;
}

START_TEST(test_real_post_call_nop)
{
    struct fx_pcdesc_layout l = jdk17();
    fx_recover_pcdesc_publish(&l); /* (a no-op where test_stub_called published it) */
    struct fx_code_range stub = {.begin = (uintptr_t)stubcode,
                                 .end = (uintptr_t)stubcode + sizeof(stubcode),
                                 .kind = FX_BLOB_STUB,
                                 .arraycopy = FX_STUB_INTRINSIC},
                         n;
    const struct real *with_nop[] = {&adler25, &crc25};
    for (size_t i = 0; i < 2; i++) {
        uintptr_t ret = real_nmethod(with_nop[i], &n);
        ck_assert_uint_eq(fx_recover_post_call_nop(&n, ret), FX_POST_CALL_NOP);
        ck_assert(fx_recover_stub_called(&stub, &n, ret));
        ck_assert(!fx_recover_pcdesc_at(&l, &n, ret, 0)); /* nothing at ret itself */
        struct fx_code_range other = stub;
        other.begin += 16; /* the call goes to another stub */
        ck_assert_int_eq(fx_recover_stub_refused(&other, &n, ret), FX_REC_NOT_CALLED);
        n.flags = FX_RANGE_OSR;
        ck_assert_int_eq(fx_recover_stub_refused(&stub, &n, ret), FX_REC_PCDESC_OSR);
        n.flags = 0;
        struct fx_code_range shorter = n;
        shorter.end = ret + 7; /* the nop past the code's end */
        ck_assert(!fx_recover_stub_called(&stub, &shorter, ret));
        uint8_t *nop = (uint8_t *)ret;
        nop[2] = 0x80; /* 0F 1F 80: a 7-byte nop, not the post-call one: no PcDesc at ret */
        ck_assert_uint_eq(fx_recover_post_call_nop(&n, ret), 0);
        ck_assert(!fx_recover_stub_called(&stub, &n, ret));
        nop[2] = 0x84;
        ck_assert(fx_recover_stub_called(&stub, &n, ret));
        /* the table's entry at ret + 8 moved into the nop, then past its end (the run of the
         * call's scope stretched over later instructions: JDK 25's sha1_implCompressMB) */
        int32_t table, at = (int32_t)(ret - n.begin) + 8, k = 0, pc;
        memcpy(&table, blob + HDR_BEGIN, sizeof(table));
        do
            memcpy(&pc, blob + table + 16 * ++k, sizeof(pc));
        while (pc != at);
        put_i32(blob + table + 16 * k, at - 4);
        ck_assert_int_eq(fx_recover_stub_refused(&stub, &n, ret), FX_REC_NO_PCDESC);
        put_i32(blob + table + 16 * k, at + 1);
        ck_assert_int_eq(fx_recover_stub_refused(&stub, &n, ret), FX_REC_NO_PCDESC);
        put_i32(blob + table + 16 * k, at);
        ck_assert(fx_recover_stub_called(&stub, &n, ret));
        blob[CODE + with_nop[i]->call] = 0x90; /* no call before ret */
        ck_assert_int_eq(fx_recover_stub_refused(&stub, &n, ret), FX_REC_NOT_CALLED);
    }
    uintptr_t ret = real_nmethod(&checksum17, &n); /* JDK 17: exact */
    ck_assert_uint_eq(fx_recover_post_call_nop(&n, ret), 0);
    ck_assert(fx_recover_stub_called(&stub, &n, ret));
    int32_t table;
    memcpy(&table, blob + HDR_BEGIN, sizeof(table));
    put_i32(blob + table + 16 * 3, 65); /* the exact PcDesc (66) one byte early */
    ck_assert(!fx_recover_stub_called(&stub, &n, ret));
}
END_TEST

/* Both layouts on the real JDK 25 table: the immutable data's (JDK 23+) */
START_TEST(test_real_immutable)
{
    struct fx_code_range n;
    uintptr_t ret = real_nmethod(&adler25, &n);
    int32_t table;
    memcpy(&table, blob + HDR_BEGIN, sizeof(table));
    memset(immutable, 0, sizeof(immutable));
    memcpy(immutable + 32, blob + table, 16 * 6);
    memset(blob + table, 0, 16 * 6);
    uintptr_t data = (uintptr_t)immutable;
    memcpy(blob + HDR_DATA, &data, sizeof(data));
    put_i32(blob + HDR_SIZE, (int32_t)sizeof(immutable));
    put_i32(blob + HDR_BEGIN, 32);
    put_i32(blob + HDR_END, 32 + 16 * 6);
    struct fx_pcdesc_layout l = jdk17();
    l.data = HDR_DATA;
    l.data_size = HDR_SIZE;
    ck_assert(fx_recover_pcdesc_at(&l, &n, ret, fx_recover_post_call_nop(&n, ret)));
    ck_assert(!fx_recover_pcdesc_at(&l, &n, ret, 0));
    put_i32(blob + HDR_SIZE, 64); /* the table past the immutable data's end */
    ck_assert(!fx_recover_pcdesc_at(&l, &n, ret, FX_POST_CALL_NOP));
}
END_TEST

/* N's sp at its call to the stub: the return address N's caller's call pushed at sp + 8 (fw - 1),
 * the rbp N saved below it (frame::sender_for_compiled_frame) */
START_TEST(test_compiled_sender)
{
    static uintptr_t stack[16];
    uintptr_t lo = (uintptr_t)stack, hi = (uintptr_t)(stack + 16), sp = (uintptr_t)(stack + 2);
    struct fx_code_range n = nm();
    struct fx_regs out = {0, 0, 0, NULL};
    stack[4] = 0xBBBB; /* rbp */
    stack[5] = 0xAAAA; /* return address */
    n.frame_words = 4;
    ck_assert_int_eq(fx_recover_compiled_sender(&n, sp, lo, hi, &out), FX_REC_STUB_PARTIAL);
    ck_assert_uint_eq(out.pc, 0xAAAA);
    ck_assert_uint_eq(out.fp, 0xBBBB);
    ck_assert_uint_eq(out.sp, (uintptr_t)(stack + 6));
    n.frame_words = 14; /* the frame reaches the stack's end: its last words still inside */
    stack[15] = 0xCCCC;
    ck_assert_int_eq(fx_recover_compiled_sender(&n, sp, lo, hi, &out), FX_REC_STUB_PARTIAL);
    ck_assert_uint_eq(out.pc, 0xCCCC);
    n.frame_words = 15; /* past it */
    ck_assert_int_eq(fx_recover_compiled_sender(&n, sp, lo, hi, &out), FX_REC_STACK);
    n.frame_words = 4;
    ck_assert_int_eq(fx_recover_compiled_sender(&n, lo - 8, lo, hi, &out), FX_REC_STACK);
    ck_assert_int_eq(fx_recover_compiled_sender(&n, hi, lo, hi, &out), FX_REC_STACK);
    ck_assert_int_eq(fx_recover_compiled_sender(&n, sp, 0, 0, &out), FX_REC_STACK);
    n.frame_words = 1; /* no room for a saved rbp: not a compiled frame's size */
    ck_assert_int_eq(fx_recover_compiled_sender(&n, sp, lo, hi, &out), FX_REC_LAYOUT);
    n.frame_words = -1; /* unknown */
    ck_assert_int_eq(fx_recover_compiled_sender(&n, sp, lo, hi, &out), FX_REC_LAYOUT);
    n.frame_words = 4;
    n.kind = FX_BLOB_STUB;
    ck_assert_int_eq(fx_recover_compiled_sender(&n, sp, lo, hi, &out), FX_REC_LAYOUT);
}
END_TEST

/* The walk below's proof of an intrinsic stub's return (fx_recover_stub_return, native_below.c):
 * on the real calls (mov r10, imm64; call r10 and call rel32), the return address right after a
 * call to the stub is accepted whatever the PcDescs say; one byte off either way, a call to code
 * past the stub's end, or a call through a register whose target is not in the instruction is
 * refused. */
START_TEST(test_stub_return)
{
    struct fx_code_range n, stub = {.kind = FX_BLOB_STUB, .arraycopy = FX_STUB_INTRINSIC};
    stub.begin = (uintptr_t)stubcode;
    stub.end = (uintptr_t)stubcode + sizeof(stubcode);
    const struct real *calls[] = {&adler25, &crc25, &checksum17};
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
        uintptr_t ret = real_nmethod(calls[i], &n);
        ck_assert(fx_recover_stub_return(&stub, &n, ret));
        ck_assert(!fx_recover_stub_return(&stub, &n, ret - 1));
        ck_assert(!fx_recover_stub_return(&stub, &n, ret + 1));
        stub.end = stub.begin; /* the call goes past the stub's end */
        ck_assert(!fx_recover_stub_return(&stub, &n, ret));
        stub.end = (uintptr_t)stubcode + sizeof(stubcode);
        put_i32(blob + HDR_END, 0); /* no PcDesc table: the scope's proof is not asked */
        ck_assert(fx_recover_stub_return(&stub, &n, ret));
    }
    uintptr_t ret = real_nmethod(&crc25, &n);
    uint8_t *call = (uint8_t *)ret - 5;
    call[3] = 0xFF; /* call rbx: after a call, its target not in the instruction */
    call[4] = 0xD3;
    call[0] = 0x90;
    ck_assert(fx_recover_after_call(&n, ret));
    ck_assert(!fx_recover_stub_return(&stub, &n, ret));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("recover_pcdesc");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_exact_only);
    tcase_add_test(tc, test_scoped);
    tcase_add_test(tc, test_immutable_data);
    tcase_add_test(tc, test_stub_called);
    tcase_add_test(tc, test_real_post_call_nop);
    tcase_add_test(tc, test_real_immutable);
    tcase_add_test(tc, test_compiled_sender);
    tcase_add_test(tc, test_stub_return);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* the published layout is the test's order */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
