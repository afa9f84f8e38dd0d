/* SPDX-License-Identifier: Apache-2.0 */
/* unit.recover_pcdesc: the PcDesc check of the intrinsics' stubs (agent/sampling/recover_pcdesc.c,
 * docs/VALIDATION.md 8.5d) on a fake nmethod in this process's memory, both layouts (JDK 17: the
 * table's offsets from the nmethod; JDK 23+: from its immutable data): a PcDesc exactly at the
 * return address is accepted; one byte before or after it, a return address past the table's
 * last PcDesc or outside the code, a table whose bounds are broken or too large are refused;
 * fx_recover_stub_called asks for it of an intrinsic's stub only, and refuses an OSR caller. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fx_recover.h"
#include "recover_pcdesc.h"

/* a blob: a 64-byte header, 64 bytes of code at 64, a PcDesc table (16-byte entries) at 128 */
static _Alignas(16) uint8_t blob[512];
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

START_TEST(test_exact_only)
{
    memset(blob, 0, sizeof(blob));
    fill(blob, TABLE, TABLE);
    struct fx_pcdesc_layout l = jdk17();
    struct fx_code_range n = nm();
    for (size_t i = 1; i < 4; i++) {
        uintptr_t ret = n.begin + (uintptr_t)pcs[i];
        ck_assert(fx_recover_pcdesc_at(&l, &n, ret));      /* exactly there */
        ck_assert(!fx_recover_pcdesc_at(&l, &n, ret + 1)); /* off by one either way */
        ck_assert(!fx_recover_pcdesc_at(&l, &n, ret - 1));
    }
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin + 40)); /* past the last PcDesc */
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin));      /* at the code's begin */
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.end + 5));    /* outside the code */
    struct fx_code_range other = n;
    other.blob = 0; /* no nmethod header known (a method compiled since the table) */
    ck_assert(!fx_recover_pcdesc_at(&l, &other, n.begin + 5));
    other = n;
    other.kind = FX_BLOB_STUB;
    ck_assert(!fx_recover_pcdesc_at(&l, &other, n.begin + 5));
    ck_assert(!fx_recover_pcdesc_at(NULL, &n, n.begin + 5));
    /* broken bounds: end before begin, a size not a multiple of PcDesc's, a huge table, a
     * table over the code */
    put_i32(blob + HDR_END, TABLE - 16);
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin + 5));
    put_i32(blob + HDR_END, TABLE + 17);
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin + 5));
    put_i32(blob + HDR_END, TABLE + 16 * (int32_t)(FX_PCDESC_MAX + 1));
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin + 5));
    fill(blob, TABLE, CODE);
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin + 5));
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
    ck_assert(fx_recover_pcdesc_at(&l, &n, n.begin + 20));
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin + 21));
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin + 19));
    put_i32(blob + HDR_SIZE, 64); /* the table ends past the immutable data */
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin + 20));
    put_i32(blob + HDR_SIZE, (int32_t)sizeof(immutable));
    data = 0; /* no immutable data */
    memcpy(blob + HDR_DATA, &data, sizeof(data));
    ck_assert(!fx_recover_pcdesc_at(&l, &n, n.begin + 20));
}
END_TEST

/* the call test first; the PcDesc for an intrinsic's stub only, refused before the layout */
START_TEST(test_stub_called)
{
    memset(blob, 0, sizeof(blob));
    fill(blob, TABLE, TABLE);
    struct fx_code_range n = nm(), stub = {.kind = FX_BLOB_STUB, .arraycopy = FX_STUB_INTRINSIC};
    blob[CODE + 15] = 0xE8; /* call rel32 returning to code + 20, where a PcDesc lies */
    blob[CODE + 28] = 0xE8; /* returning to code + 33: a PcDesc too */
    blob[CODE + 40] = 0xE8; /* returning to code + 45: none there */
    ck_assert(!fx_recover_stub_called(&stub, &n, n.begin + 20)); /* no layout published yet */
    struct fx_pcdesc_layout l = jdk17();
    fx_recover_pcdesc_publish(&l);
    ck_assert(fx_recover_stub_called(&stub, &n, n.begin + 20));
    ck_assert(fx_recover_stub_called(&stub, &n, n.begin + 33));
    ck_assert(!fx_recover_stub_called(&stub, &n, n.begin + 45));
    ck_assert(!fx_recover_stub_called(&stub, &n, n.begin + 5)); /* a PcDesc, no call before it */
    n.flags = FX_RANGE_OSR; /* an OSR caller: refused, the PcDesc exact or not */
    ck_assert(!fx_recover_stub_called(&stub, &n, n.begin + 20));
    n.flags = 0;
    stub.arraycopy = FX_STUB_ARRAYCOPY; /* the call test alone */
    ck_assert(fx_recover_stub_called(&stub, &n, n.begin + 45));
    ck_assert(!fx_recover_stub_called(&stub, &n, n.begin + 5));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("recover_pcdesc");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_exact_only);
    tcase_add_test(tc, test_immutable_data);
    tcase_add_test(tc, test_stub_called);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* the published layout is the test's order */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
