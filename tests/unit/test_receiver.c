/* SPDX-License-Identifier: Apache-2.0 */
/* agent/sampling/receiver_sig.c without a JVM (issue 32, item 3): a fake heap holding an object
 * whose klass word encodes a fake Klass, j_rarg0 (rsi) set in a ucontext; the Klass* comes back
 * decoded (narrow, wide, and from a compact header's mark word), and each reason of enum
 * fx_recv_read where its case is built: no layout published, no context, NULL, misaligned or
 * outside the heap, a klass word that decodes to NULL, and a page of the heap's range that is not
 * readable (the checked read fails; the test process does not crash). */
#include <check.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "internal.h"

struct fx_sigstate fx_sig; /* signal_handler.c's, not linked here */

static _Alignas(64) uint8_t heap[256];
static _Alignas(64) uint8_t klass[64];
static ucontext_t uc;

/* An object at heap + 64 whose narrow klass word says `klass`, base below it, shift 3. */
static void setup(void)
{
    memset(heap, 0, sizeof(heap));
    memset(&uc, 0, sizeof(uc));
    fx_sig.recv_heap_lo = (uintptr_t)heap;
    fx_sig.recv_heap_hi = (uintptr_t)heap + sizeof(heap);
    fx_sig.recv_klass_off = 8;
    fx_sig.recv_base = ((uintptr_t)klass - 4096) & ~(uintptr_t)7;
    fx_sig.recv_shift = 3;
    fx_sig.recv_pid = (int)getpid();
    uint32_t n = (uint32_t)(((uintptr_t)klass - fx_sig.recv_base) >> 3);
    memcpy(heap + 64 + 8, &n, sizeof(n));
    memset(heap + 64 + 12, 0xAB, 4); /* what follows the narrow klass must not be read into it */
    fx_sig.recv_mode = FX_RECV_MODE_NARROW;
#if defined(__x86_64__)
    uc.uc_mcontext.gregs[REG_RSI] = (greg_t)(uintptr_t)(heap + 64);
#endif
}

static void set_rsi(uintptr_t v)
{
#if defined(__x86_64__)
    uc.uc_mcontext.gregs[REG_RSI] = (greg_t)v;
#else
    (void)v;
#endif
}

START_TEST(reads_narrow_and_wide)
{
#if defined(__x86_64__)
    setup();
    ck_assert_uint_eq(fx_receiver_read_sigsafe(&uc), (uintptr_t)klass);
    uintptr_t k = (uintptr_t)klass;
    memcpy(heap + 64 + 8, &k, sizeof(k));
    fx_sig.recv_mode = FX_RECV_MODE_WIDE;
    ck_assert_uint_eq(fx_receiver_read_sigsafe(&uc), (uintptr_t)klass);
#endif
}
END_TEST

/* Compact object headers: the narrowKlass above bit 42 of the mark word; lock bits 00 (fast
 * locked) and 01 (unlocked) keep it, 10 (a monitor's pointer) and 11 (forwarded) do not. */
START_TEST(reads_compact_mark_word)
{
#if defined(__x86_64__)
    setup();
    uint64_t n = ((uintptr_t)klass - fx_sig.recv_base) >> 3;
    fx_sig.recv_mode = FX_RECV_MODE_COMPACT;
    fx_sig.recv_klass_off = 0;
    fx_sig.recv_mark_shift = 42;
    for (uint64_t lock = 0; lock < 4; lock++) {
        uint64_t mark = n << 42 | (uint64_t)0x5A << 8 | lock; /* age, hash bits below it */
        memcpy(heap + 64, &mark, sizeof(mark));
        ck_assert_uint_eq(fx_receiver_read_sigsafe(&uc),
                          lock < 2 ? (uintptr_t)klass : (uint64_t)FX_RECV_DISPLACED);
    }
#endif
}
END_TEST

START_TEST(each_reason)
{
#if defined(__x86_64__)
    setup();
    fx_sig.recv_mode = FX_RECV_MODE_NONE;
    ck_assert_uint_eq(fx_receiver_read_sigsafe(&uc), FX_RECV_NO_LAYOUT);
    setup();
    ck_assert_uint_eq(fx_receiver_read_sigsafe(NULL), FX_RECV_NO_REGS);
    setup();
    set_rsi(0);
    ck_assert_uint_eq(fx_receiver_read_sigsafe(&uc), FX_RECV_NULL);
    setup();
    set_rsi((uintptr_t)heap + 65); /* misaligned */
    ck_assert_uint_eq(fx_receiver_read_sigsafe(&uc), FX_RECV_OUTSIDE);
    setup();
    set_rsi((uintptr_t)klass); /* outside the heap */
    ck_assert_uint_eq(fx_receiver_read_sigsafe(&uc), FX_RECV_OUTSIDE);
    setup();
    set_rsi((uintptr_t)heap + sizeof(heap) - 8); /* its klass word would end past the heap */
    ck_assert_uint_eq(fx_receiver_read_sigsafe(&uc), FX_RECV_OUTSIDE);
    setup();
    memset(heap + 64 + 8, 0, 4); /* narrowKlass 0 */
    ck_assert_uint_eq(fx_receiver_read_sigsafe(&uc), FX_RECV_BAD_KLASS);
    setup();
    fx_sig.recv_mode = FX_RECV_MODE_WIDE; /* a misaligned Klass* */
    uintptr_t bad = (uintptr_t)klass + 1;
    memcpy(heap + 64 + 8, &bad, sizeof(bad));
    ck_assert_uint_eq(fx_receiver_read_sigsafe(&uc), FX_RECV_BAD_KLASS);
    /* a reserved page of the heap that cannot be read: the checked read fails, no fault */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void *none = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(none, MAP_FAILED);
    setup();
    fx_sig.recv_heap_lo = (uintptr_t)none;
    fx_sig.recv_heap_hi = (uintptr_t)none + page;
    set_rsi((uintptr_t)none + 64);
    ck_assert_uint_eq(fx_receiver_read_sigsafe(&uc), FX_RECV_UNREADABLE);
    munmap(none, page);
#endif
}
END_TEST

int main(void)
{
    Suite *s = suite_create("receiver");
    TCase *tc = tcase_create("read");
    tcase_add_test(tc, reads_narrow_and_wide);
    tcase_add_test(tc, reads_compact_mark_word);
    tcase_add_test(tc, each_reason);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
