/* SPDX-License-Identifier: Apache-2.0 */
/* The native half of an allocation sample (issue 32 item 6), walked by the allocating thread
 * itself inside its JVMTI SampledObjectAlloc callback (model/allocs.c), with the signal path's
 * own walkers: no signal here, so the registers are this function's caller's, taken from its
 * own frame (the callback's, after one frame-pointer step: [rbp] its rbp, [rbp+8] the return
 * address into it). From there, as for a sample's interrupted registers: the native frames
 * leafward of the first Java frame (native_walk.c: the callback, JVMTI's posting, the VM's
 * allocation path, and what called it: JNI code, a VM runtime entry, or, with no Java frame
 * at all, the VM's own code down to the thread's start), then, with Java frames, their types
 * and the native frames below and between them from the thread's frame anchor (native_below.c;
 * the thread is in native for the callback, so HotSpot set the anchor at its last Java frame).
 * Which leaf frames are the allocation's machinery is the drain's to say, by their names
 * (model/alloc_native.c). Owns: the callback's walk counts and its timing. */
#include <ucontext.h>

#include "alloc_walk.h"
#include "native_walk.h"

/* Written by the allocating threads (atomics), read by the drain. */
static struct {
    uint64_t walks, no_thread, virtual, timed, timed_ns, timed_max_ns;
} aw;

#if defined(__x86_64__)
/* Not inlined: its frame is the one the registers are read from (rbp-framed: it takes its own
 * frame address). */
__attribute__((noinline)) static uint32_t walk_from_caller(const struct fx_thread *t, bool java,
                                                           uint64_t *out, uint32_t cap)
{
    const uintptr_t *fp = __builtin_frame_address(0);
    ucontext_t uc;
    uc.uc_mcontext.gregs[REG_RIP] = (greg_t)fp[1];
    uc.uc_mcontext.gregs[REG_RBP] = (greg_t)fp[0];
    uc.uc_mcontext.gregs[REG_RSP] = (greg_t)(fp + 2);
    uint8_t stop;
    uint32_t n = fx_native_walk_sigsafe(t, &uc, false, out + 1, &stop);
    uint32_t w = 1 + n;
    uint64_t meta = n | (uint64_t)stop << 8;
    if (java && cap >= w + 2 + FX_TYPES_MAX + FX_BELOW_WORDS) {
        uint64_t *types = out + w + 1;
        uint32_t nb = 0;
        struct fx_heap_memo memo = {.lookups = 0}; /* this walk's code heap lookups */
        uint32_t nt = fx_native_below_sigsafe(t, &uc, types, types + FX_TYPES_MAX + 1,
                                              FX_NATIVE_MAX, &nb, &memo);
        /* the same parts, in the same order, as a ring record's (sample.h) */
        if (nt > 0 || nb > 0) {
            out[w] = nt;
            if (nb > 0)
                memmove(types + nt + 1, types + FX_TYPES_MAX + 1, nb * sizeof(uint64_t));
            types[nt] = nb;
            w += 1 + nt + 1 + nb;
            meta |= FX_ALLOC_WALK_PARTS;
        }
    }
    out[0] = meta;
    return w;
}
#endif

uint32_t fx_alloc_native_walk(int32_t tid, bool java, uint64_t *out, uint32_t cap)
{
#if defined(__x86_64__)
    if (cap < 1 + FX_NATIVE_MAX || !__atomic_load_n(&fx_native.enabled, __ATOMIC_RELAXED))
        return 0;
    uint64_t k = __atomic_fetch_add(&aw.walks, 1, __ATOMIC_RELAXED);
    const struct fx_thread *t = fx_signal_handler_lookup_sigsafe(tid);
    if (t == NULL || t->native_only || t->stack_lo == 0) {
        __atomic_add_fetch(&aw.no_thread, 1, __ATOMIC_RELAXED);
        out[0] = (uint64_t)FX_NSTOP_NO_BOUNDS << 8;
        return 1;
    }
    /* A mounted virtual thread's Java frames (GetStackTrace's) end at VirtualThread.run; the
     * physical stack below them is its carrier's, which the cpu samples leave out too
     * (stacks.c): no walk below, so the carrier's root is never joined to the virtual thread. */
    uint64_t vt_id;
    if (java && fx_signal_handler_vthread_sigsafe(t, &vt_id) == FX_VT_ID) {
        java = false;
        __atomic_add_fetch(&aw.virtual, 1, __ATOMIC_RELAXED);
    }
    bool timed = (k & (FX_TIMED_ONE_IN - 1)) == 0;
    int64_t t0 = timed ? fx_clock_ns(CLOCK_THREAD_CPUTIME_ID) : 0;
    uint32_t w = walk_from_caller(t, java, out, cap);
    if (timed && t0 > 0) {
        int64_t d = fx_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
        uint64_t ns = d > 0 ? (uint64_t)d : 0;
        __atomic_add_fetch(&aw.timed, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&aw.timed_ns, ns, __ATOMIC_RELAXED);
        uint64_t max = __atomic_load_n(&aw.timed_max_ns, __ATOMIC_RELAXED);
        while (ns > max && !__atomic_compare_exchange_n(&aw.timed_max_ns, &max, ns, true,
                                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
        }
    }
    return w;
#else
    (void)tid, (void)java, (void)out, (void)cap;
    return 0;
#endif
}

void fx_alloc_native_counts(struct fx_alloc_walk_counts *c)
{
    c->walks = __atomic_load_n(&aw.walks, __ATOMIC_RELAXED);
    c->no_thread = __atomic_load_n(&aw.no_thread, __ATOMIC_RELAXED);
    c->virtual = __atomic_load_n(&aw.virtual, __ATOMIC_RELAXED);
    c->timed = __atomic_load_n(&aw.timed, __ATOMIC_RELAXED);
    c->timed_ns = __atomic_load_n(&aw.timed_ns, __ATOMIC_RELAXED);
    c->timed_max_ns = __atomic_load_n(&aw.timed_max_ns, __ATOMIC_RELAXED);
}

void fx_alloc_native_reset(void)
{
    __atomic_store_n(&aw.walks, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&aw.no_thread, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&aw.virtual, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&aw.timed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&aw.timed_ns, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&aw.timed_max_ns, 0, __ATOMIC_RELAXED);
}
