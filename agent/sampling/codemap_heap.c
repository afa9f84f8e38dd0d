/* SPDX-License-Identifier: Apache-2.0 */
/* The code map without CompiledMethodLoad (codemap=heap, the default, where the code heaps' layouts
 * are known; issue 31). HotSpot's posting of that event cost javac's Service
 * Thread 400-620 ms a run, ~3 % of it (docs/BENCHMARKS.md, sessions 22 and 23); async-profiler
 * does not enable it either where VMStructs give the code heap. Here, instead:
 *  - the handler finds a pc that is in no range in the code heaps (codeheap_sig.c, as it does
 *    for code newer than the table) and hands the nmethod to the drain (codeheap_found.c);
 *  - the drain (fx_codemap_refresh, before each publish) adds it to the log as a
 *    CompiledMethodLoad would have, with the same fields (the handler built them from the same
 *    VMStructs fields: codemap.c's oracle holds them equal field by field), so later samples
 *    find it in the table; FX_RANGE_SELF_INLINE comes from the nmethod's own scopes
 *    (nmethod_scopes.c), and stays set where they cannot be read (frames typed by jmethodID
 *    alone would be wrong for a method inlined into itself: such frames stay untyped, never
 *    mistyped);
 *  - without CompiledMethodUnload a range goes stale when its nmethod is freed: the handler's
 *    compile id check refuses it already (fx_recover_blob_current), newer code found where it
 *    lay replaces it at the fold (codemap.c), and now and then the drain reads every nmethod
 *    range's block and header again (one process_vm_readv per 64 ranges: a freed code heap
 *    range fails the read, not the drain) and drops those whose block is free, whose state is
 *    not a live one or whose compile id changed, counted. A sweep of javac's ~1,900 nmethods
 *    costs the drain ~1 ms (a page pinned and a cold header copied per range): once a second
 *    that was 15 % of its CPU on a long run (session 25), and it grows with the nmethods a
 *    server holds. So sweeps come at least a second apart and at least SWEEP_SHARE times their
 *    own CPU apart: at most 0.02 % of a core; stale ranges wait longer, harmless as above.
 * This file sits above codemap.c (it calls the table's log and live ranges; codemap.c calls
 * nothing here): the drain calls fx_codemap_refresh, which feeds the log, then publishes. */
#include "codemap_heap.h"
#include "internal.h"
#include "nmethod_scopes.h"

#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

#define TAKE_MAX    256 /* ranges taken from the hand-off per pass (its size) */
#define SWEEP_BATCH 64  /* ranges read per process_vm_readv */
#define SWEEP_NS    1000000000ll
#define SWEEP_SHARE 5000 /* a sweep's own CPU x this: the least time to the next one */

static struct {
    int64_t next_sweep_ns, sweep_cpu_ns;
    uint64_t added, scoped, gone_before, swept, sweeps, unreadable;
    struct fx_code_range take[TAKE_MAX];
    unsigned char buf[SWEEP_BATCH][64 + FX_CODEHEAP_HEADER_MAX];
} hm;

bool fx_codemap_heap_on(void)
{
    return fx_codeheap_offering(); /* set with the mode at each start, below */
}

bool fx_codemap_heap_start(void)
{
    fx_interp_publish();    /* both layouts: the handler's lookup needs them (threads_existing.c */
    fx_codeheap_publish();  /* publishes them again at the threads' scan: a no-op then) */
    fx_interp_publish_mh(); /* the method handle intrinsics' names (8.5l), for both modes */
    const char *test = getenv("FXAGENT_TEST_CODEHEAP_ONLY"); /* codemap.c: nothing in the table */
    const struct fx_codeheap_layout *l = &fx_sig.codeheap;
    bool on = fx_opt()->codemap == FX_CODEMAP_HEAP && (test == NULL || test[0] != '1') &&
              __atomic_load_n(&l->pid, __ATOMIC_ACQUIRE) != 0 &&
              __atomic_load_n(&fx_sig.interp.pid, __ATOMIC_ACQUIRE) != 0 && l->compile_id >= 0 &&
              l->state >= 0 && l->block_used >= 0;
    if (on && __atomic_load_n(&fx_sig.compile_id_off, __ATOMIC_RELAXED) < 0)
        __atomic_store_n(&fx_sig.compile_id_off, (long)l->compile_id, __ATOMIC_RELAXED);
    fx_codeheap_offer_enable(on);
    return on;
}

/* Which of rs[0..n) (nmethods) no longer hold their nmethod: the HeapBlock before the blob is
 * free, nmethod::_state is not live, or the compile id differs; a block that cannot be read is
 * gone too. Each range's block header and blob header in one iovec, n <= SWEEP_BATCH. */
static void stale_of(const struct fx_code_range *const *rs, size_t n, bool *stale)
{
    const struct fx_codeheap_layout *l = &fx_sig.codeheap;
    size_t bs = (size_t)l->block_size, len = bs + (size_t)l->reread;
    struct iovec local[SWEEP_BATCH], remote[SWEEP_BATCH];
    for (size_t i = 0; i < n; i++) {
        local[i] = (struct iovec){.iov_base = hm.buf[i], .iov_len = len};
        remote[i] = (struct iovec){.iov_base = (void *)(rs[i]->blob - bs), .iov_len = len};
    }
    size_t from = 0;
    while (from < n) { /* a failed iovec ends the call: it is gone, the next ones read again */
        ssize_t got = process_vm_readv(l->pid, local + from, n - from, remote + from, n - from, 0);
        size_t whole = got > 0 ? (size_t)got / len : 0;
        for (size_t i = from; i < from + whole; i++) {
            const unsigned char *b = hm.buf[i], *h = b + bs;
            int32_t id;
            memcpy(&id, h + l->compile_id, sizeof(id));
            int8_t st = (int8_t)h[l->state];
            stale[i] =
                    b[l->block_used] == 0 || st < 0 || st > l->live_max || id != rs[i]->compile_id;
        }
        from += whole;
        if (from < n) {
            stale[from++] = true;
            hm.unreadable++;
        }
    }
}

static bool is_nmethod(const struct fx_code_range *r)
{
    return r->kind == FX_BLOB_NMETHOD && r->blob != 0 && r->blob < r->begin &&
           r->blob >= (uintptr_t)fx_sig.codeheap.block_size + 4096;
}

/* The live table's nmethod ranges, read again: the stale ones leave (a remove as an Unload's). */
static void sweep(void)
{
    size_t n;
    const struct fx_code_range *live = fx_codemap_live(&n);
    const struct fx_code_range *batch[SWEEP_BATCH];
    bool stale[SWEEP_BATCH];
    size_t k = 0;
    hm.sweeps++;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && is_nmethod(&live[i]))
            batch[k++] = &live[i];
        if (k == 0 || (k < SWEEP_BATCH && i < n))
            continue;
        stale_of(batch, k, stale);
        for (size_t j = 0; j < k; j++) {
            if (stale[j]) {
                (void)fx_codemap_record(true, batch[j]);
                hm.swept++;
            }
        }
        k = 0;
    }
}

static bool fx_codemap_heap_pass(void)
{
    if (!fx_codemap_heap_on())
        return false;
    size_t n = fx_codeheap_take(hm.take, TAKE_MAX);
    for (size_t i = 0; i < n; i += SWEEP_BATCH) {
        const struct fx_code_range *batch[SWEEP_BATCH];
        bool stale[SWEEP_BATCH];
        size_t k = n - i < SWEEP_BATCH ? n - i : SWEEP_BATCH;
        for (size_t j = 0; j < k; j++)
            batch[j] = &hm.take[i + j];
        stale_of(batch, k, stale); /* freed between the sample and this pass: not added */
        for (size_t j = 0; j < k; j++) {
            if (stale[j] || !is_nmethod(batch[j])) {
                hm.gone_before++;
                continue;
            }
            /* the inlining flag from the nmethod's own scopes (nmethod_scopes.c), as the
             * CompiledMethodLoad records gave it; not read: it stays set, frames untyped */
            struct fx_nmethod_scopes sc;
            struct fx_code_range r = *batch[j];
            if (fx_nmethod_scopes_read(&r, &sc)) {
                r.flags = (uint8_t)(sc.self_inlined ? r.flags | FX_RANGE_SELF_INLINE
                                                    : r.flags & ~FX_RANGE_SELF_INLINE);
                hm.scoped++;
            }
            (void)fx_codemap_record(false, &r); /* published by this very pass */
            hm.added++;
        }
    }
    int64_t now = fx_now_ns();
    if (now >= hm.next_sweep_ns) {
        int64_t cpu = fx_clock_ns(CLOCK_THREAD_CPUTIME_ID);
        sweep();
        cpu = fx_clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
        hm.sweep_cpu_ns += cpu;
        hm.next_sweep_ns = now + (cpu * SWEEP_SHARE > SWEEP_NS ? cpu * SWEEP_SHARE : SWEEP_NS);
    }
    /* while samples meet new nmethods the drain waits at most FX_DRAIN_FOUND_NS: until the next
     * pass they cost a lookup each, and a deep stack of new ones could stop its walk at the
     * budget (session 23, at a budget of 8); a pass every 10 ms for them cost more (session 25) */
    return n > 0;
}

bool fx_codemap_refresh(bool *found)
{
    *found = fx_codemap_heap_pass(); /* the handler's finds, the ranges gone stale */
    return fx_codemap_publish();
}

/* The drain's, model owner: the facts of nmethods samples found in the code heaps and the
 * code map lacked then (FX_TYPE_FOUND, issue 31). The reads' outcomes by the word (blob offset,
 * compile id: one compilation, whose scopes never change); key 0: empty. */
#define FOUND_CACHE 256
enum {
    FOUND_NOT_SELF,
    FOUND_SELF,    /* inlined into itself, or its facts could not be read */
    FOUND_UNKNOWN, /* not that compilation any more (freed), or no code heap layout */
};
static struct {
    uint64_t key[FOUND_CACHE];
    uint8_t what[FOUND_CACHE];
    uint64_t map, read, self, unknown; /* frames typed from the map, from a read; not typed */
} fd;

/* The live table's nmethod of that blob and compile id, or NULL: the first range beginning
 * after the blob (its header lies before its code, in no other range). */
static const struct fx_code_range *live_of(uintptr_t blob, int32_t cid)
{
    size_t n;
    const struct fx_code_range *live = fx_codemap_live(&n);
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (live[mid].begin <= blob)
            lo = mid + 1;
        else
            hi = mid;
    }
    const struct fx_code_range *r = lo < n ? &live[lo] : NULL;
    return r != NULL && r->kind == FX_BLOB_NMETHOD && r->blob == blob && r->compile_id == cid
                   ? r
                   : NULL;
}

/* The facts of the nmethod of blob and compile id cid (not in the map): read now unless the
 * cache has them. nmethod_scopes.c checks the compile id at the blob before and after its read,
 * and the block's _used and nmethod::_state after it (a freed nmethod keeps its compile id in
 * place), so an nmethod freed since the sample gives FOUND_UNKNOWN. */
static int read_found(uint64_t word, uintptr_t blob, int32_t cid)
{
    size_t h = (size_t)((word * 0x9E3779B97F4A7C15ull) >> 40) % FOUND_CACHE;
    if (fd.key[h] == word)
        return fd.what[h];
    struct fx_code_range q = {.kind = FX_BLOB_NMETHOD, .blob = blob, .compile_id = cid};
    struct fx_nmethod_scopes sc;
    int what = fx_nmethod_scopes_read(&q, &sc) ? (sc.self_inlined ? FOUND_SELF : FOUND_NOT_SELF)
                                               : FOUND_UNKNOWN;
    fd.key[h] = word;
    fd.what[h] = (uint8_t)what;
    return what;
}

bool fx_codemap_found_not_self(uint64_t word, uint64_t method, unsigned level)
{
    uintptr_t lo =
            __atomic_load_n(&fx_sig.codeheap.pid, __ATOMIC_ACQUIRE) != 0 ? fx_sig.codeheap.lo : 0;
    uintptr_t blob = lo + (uintptr_t)(word & UINT32_MAX);
    int32_t cid = (int32_t)(uint32_t)(word >> 32);
    const struct fx_code_range *r = lo != 0 ? live_of(blob, cid) : NULL;
    int what = lo == 0                                  ? FOUND_UNKNOWN
               : r == NULL                              ? read_found(word, blob, cid)
               : r->name != method || r->level != level ? FOUND_UNKNOWN
               /* as its CompiledMethodLoad or its scopes (at the drain's add) said */
               : r->flags & FX_RANGE_SELF_INLINE ? FOUND_SELF
                                                 : FOUND_NOT_SELF;
    fd.map += r != NULL && what == FOUND_NOT_SELF;
    fd.read += r == NULL && what == FOUND_NOT_SELF;
    fd.self += what == FOUND_SELF;
    fd.unknown += what == FOUND_UNKNOWN;
    return what == FOUND_NOT_SELF;
}

void fx_codemap_heap_report(struct fx_profile *p, const char *g)
{
    bool on = fx_codemap_heap_on();
    fx_profile_extra_str(p, g, "compiled code found by",
                         on ? "the code heaps (codemap=heap: no CompiledMethodLoad)"
                            : "CompiledMethodLoad (JVMTI)");
    fx_vmflags_report(p, g);
    fx_profile_extra_detail(p, g,
                            "frames in nmethods found during their sample: typed from the code map",
                            (int64_t)fd.map);
    fx_profile_extra_detail(p, g, "... typed from their nmethod read at the drain",
                            (int64_t)fd.read);
    fx_profile_extra_detail(p, g, "... not typed: inlined into itself, or facts not read",
                            (int64_t)fd.self);
    fx_profile_extra_detail(p, g, "... not typed: nmethod gone or not that compilation",
                            (int64_t)fd.unknown);
    uint64_t mh_named, mh_kept;
    fx_codeheap_mh_counts(&mh_named, &mh_kept);
    fx_profile_extra_detail(p, g, "method handle intrinsics loaded: named by their intrinsic id",
                            (int64_t)mh_named);
    fx_profile_extra_detail(p, g, "... left with the event's jmethodID (lookup not proven)",
                            (int64_t)mh_kept);
    if (!on)
        return;
    uint64_t offered, queued, full;
    fx_codeheap_offer_counts(&offered, &queued, &full);
    fx_profile_extra_detail(p, g, "nmethods the handler found, handed to the drain",
                            (int64_t)offered);
    fx_profile_extra_detail(p, g, "nmethods found again before the drain took them",
                            (int64_t)queued);
    fx_profile_extra_detail(p, g, "nmethods not handed over: hand-off full (found again later)",
                            (int64_t)full);
    fx_profile_extra_int(p, g, "nmethods added to the code map from the code heaps",
                         (int64_t)hm.added);
    fx_profile_extra_detail(p, g, "of them with their inlining read (nmethod_scopes.c)",
                            (int64_t)hm.scoped);
    fx_profile_extra_detail(p, g, "nmethods freed before the drain added them",
                            (int64_t)hm.gone_before);
    fx_profile_extra_detail(p, g, "ranges dropped: their block no longer holds the nmethod",
                            (int64_t)hm.swept);
    fx_profile_extra_detail(p, g, "ranges whose block could not be read (dropped)",
                            (int64_t)hm.unreadable);
    fx_profile_extra_detail(p, g, "stale range sweeps", (int64_t)hm.sweeps);
    fx_profile_extra_detail(p, g, "stale range sweeps: drain CPU (µs)", hm.sweep_cpu_ns / 1000);
}

/* The drain's lookup of a code cache address the leaf's native walk recorded (a stub the VM
 * called, native_walk.c, docs/VALIDATION.md 8.5h) in the published table, under the readers'
 * count as a handler's: the stub's name index for the model's frame. */
bool fx_codemap_stub_at(uint64_t pc, uint64_t *index)
{
    __atomic_add_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    const struct fx_code_table *tab = __atomic_load_n(&fx_sig.code_table, __ATOMIC_SEQ_CST);
    const struct fx_code_range *r = tab != NULL ? fx_recover_find(tab, (uintptr_t)pc) : NULL;
    bool stub = r != NULL && r->kind == FX_BLOB_STUB;
    *index = stub ? r->name : 0;
    __atomic_sub_fetch(&fx_sig.code_readers, 1, __ATOMIC_SEQ_CST);
    return stub;
}
