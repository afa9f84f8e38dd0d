/* SPDX-License-Identifier: Apache-2.0 */
/* What the handler needs to read a dispatch stub's receiver class (issue 32, item 3;
 * receiver.h, receiver_sig.c), found outside signal context and published once the heap exists:
 * the Java heap's reserved range (Universe::_collectedHeap -> CollectedHeap::_reserved, a
 * MemRegion), the klass word's offset in an object (oopDesc::_metadata), and how it is encoded:
 * UseCompressedClassPointers from the JVM's flag table (JVMFlag::flags), the narrow klass base
 * and shift (CompressedKlassPointers: `_narrow_klass._base` on JDK 17, `_base` on later ones).
 * Every one of them must be exported and sane, else nothing is published and the handler counts
 * its samples "layout unknown": a klass word is never read at a guessed place. With compact
 * object headers (UseCompactObjectHeaders, JDK 24+) the klass is in the mark word, above
 * markWord::klass_shift (gHotSpotVMLongConstants). */
#include "internal.h"

#include <string.h>
#include <unistd.h>

/* The value of a bool flag of the JVM's flag table; -1 when the table or the flag is absent. */
static int bool_flag(const char *name)
{
    const void *const *flags = fx_vmstructs_static("JVMFlag", "flags");
    const size_t *count = fx_vmstructs_static("JVMFlag", "numFlags");
    long size = fx_vmstructs_size("JVMFlag");
    long name_off = fx_vmstructs_field("JVMFlag", "_name");
    long addr_off = fx_vmstructs_field("JVMFlag", "_addr");
    if (flags == NULL || *flags == NULL || count == NULL || size <= 0 || name_off < 0 ||
        addr_off < 0)
        return -1;
    const char *base = *flags;
    for (size_t i = 0; i < *count && i < 100000; i++) {
        const char *f = base + i * (size_t)size;
        const char *fname = *(const char *const *)(f + name_off);
        const bool *addr = *(const bool *const *)(f + addr_off);
        if (fname != NULL && addr != NULL && strcmp(fname, name) == 0)
            return *addr ? 1 : 0;
    }
    return -1;
}

static const void *static_of(const char *type, const char *field, const char *older)
{
    const void *p = fx_vmstructs_static(type, field);
    return p != NULL ? p : fx_vmstructs_static(type, older);
}

void fx_receiver_publish(void)
{
    if (__atomic_load_n(&fx_sig.recv_mode, __ATOMIC_ACQUIRE) != FX_RECV_MODE_NONE)
        return; /* published at an earlier start: the heap's range does not move */
    const void *const *heap = fx_vmstructs_static("Universe", "_collectedHeap");
    long reserved = fx_vmstructs_field("CollectedHeap", "_reserved");
    long start = fx_vmstructs_field("MemRegion", "_start");
    long words = fx_vmstructs_field("MemRegion", "_word_size");
    long klass = fx_vmstructs_field("oopDesc", "_metadata._compressed_klass");
    const char *const *base = static_of("CompressedKlassPointers", "_base", "_narrow_klass._base");
    const int *shift = static_of("CompressedKlassPointers", "_shift", "_narrow_klass._shift");
    int compressed = bool_flag("UseCompressedClassPointers");
    bool compact = bool_flag("UseCompactObjectHeaders") == 1;
    int64_t mark_shift = -1;
    if (compact && (!fx_vmstructs_long_constant("markWord::klass_shift", &mark_shift) ||
                    mark_shift < 32 || mark_shift > 62 || compressed != 1))
        return;
    if (heap == NULL || *heap == NULL || reserved < 0 || start < 0 || words < 0 ||
        (klass <= 0 && !compact) || compressed < 0)
        return;
    if (compressed && (base == NULL || shift == NULL || *shift < 0 || *shift > 16))
        return;
    const char *region = (const char *)*heap + reserved;
    uintptr_t lo = *(const uintptr_t *)(region + start);
    size_t n = *(const size_t *)(region + words);
    if (lo == 0 || n == 0 || n > (SIZE_MAX - lo) / sizeof(uintptr_t))
        return;
    fx_sig.recv_heap_lo = lo;
    fx_sig.recv_heap_hi = lo + n * sizeof(uintptr_t);
    fx_sig.recv_klass_off = compact ? 0 : klass; /* compact: the mark word, at 0 */
    fx_sig.recv_mark_shift = compact ? (int)mark_shift : 0;
    fx_sig.recv_base = compressed ? (uintptr_t)*base : 0;
    fx_sig.recv_shift = compressed ? *shift : 0;
    fx_sig.recv_pid = (int)getpid();
    int mode = compact      ? FX_RECV_MODE_COMPACT
               : compressed ? FX_RECV_MODE_NARROW
                            : FX_RECV_MODE_WIDE;
    __atomic_store_n(&fx_sig.recv_mode, mode, __ATOMIC_RELEASE);
}
