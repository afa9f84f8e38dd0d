/* SPDX-License-Identifier: Apache-2.0 */
/* THE SIGNAL PATH, native half (issue 16, cstack=fp|dwarf): the walk of the interrupted
 * thread's native frames, by frame pointers or by the libraries' DWARF CFI, called from
 * signal_handler.c. Same rules and same allow-list (agent/signal_allowlist.txt,
 * unit.signal_path_allowlist checks this object too): no calls but the inline lookups of
 * include/fx_textmap.h, atomics, no allocation, no locks.
 *
 * The walk (x86-64, System V frame layout: [rbp] = the caller's rbp, [rbp+8] = the return
 * address): the interrupted pc is frame 0; each next frame comes from the frame pointer, which
 * must lie inside the thread's stack [stack_lo, stack_hi), above the stack pointer and above the
 * previous frame, 8-byte aligned, with both words below stack_hi; so every word read is on the
 * thread's own live stack. Every address must lie in an executable file mapping of the
 * published text map (native_maps.c); one in anonymous executable memory is HotSpot's code
 * cache (compiled methods, the interpreter, stubs: the ranges codemap.c knows all lie there),
 * where the Java frames AsyncGetCallTrace gave begin, so the walk stops. A return address is
 * checked one byte back: the call it returns from may be a function's last instruction. One
 * leaf in the code cache is stepped (session 26, 8.5h): a stub the VM called from C++
 * (flush_icache_stub, JDK 17's arraycopy under Unsafe_CopyMemory0), by native_below.c's proven
 * rule; its pc is the first frame and the walk goes on from its caller in libjvm.
 *
 * What it cannot see: a function built without frame pointers (Debian's zlib and glibc) keeps
 * rbp as a plain register, so the walk stops at the first such frame after the leaf (a bad
 * frame pointer, or an address outside the text) or, when rbp still holds an older frame,
 * skips the frames in between; a leaf interrupted in its prologue skips its caller. Each stop
 * is counted by reason (the sample's native_stop) and, in the profile, marked by a frame.
 *
 * cstack=dwarf: each frame's mapping carries its library's unwind table (fx_cfi.h, built by
 * native_unwind.c off the signal path and set on the text map's entries before publication),
 * so the row of pc is a binary search (remembered per address: the memos below) and the step
 * reads the return address at CFA-8 and rbp where the row says, each word inside [sp,
 * stack_hi) (rbp also in the interrupted frame's red zone, fx_cfi.h). A mapping with no table is
 * stepped by its frame pointer, as is an address no FDE covers; when that step fails (rbp outside
 * the stack, or the return address it gave in no mapping) the mapping is queued for the drain to
 * build its table (fx_native.want), and the walk stops there as FX_NSTOP_NO_TABLE ("[native: walk
 * stopped (unwind table not built yet)]"): the handler never builds, and never guesses past the
 * failed step. A step that did not fail is no proof (a frameless function leaves rbp its caller's,
 * and the step skips frames): every library stepped by rbp is queued too but libjvm, built with
 * frame pointers, whose table (megabytes) only a failed step asks for. A rule outside the subset (a
 * DWARF expression) stops the walk, counted.
 *
 * Stack bounds: a Java thread's are set before it is published (signal_handler.c); a thread that
 * is not one (vm_threads.c) gets its own once a scan has seen its stack pointer, and until then
 * its walk takes the read-write mapping holding its stack pointer from the stack table
 * (fx_native.stacks), which vm_threads.c published after the thread existed and before it armed
 * it: so that mapping is the thread's live stack (or a larger merged one, as /proc shows it).
 *
 * Invariants: fx_native.maps is only written by native_maps.c, fx_native.stacks only by
 * vm_threads.c, under the slot protocol of fx_textmap.h. */
#include <ucontext.h>

#include "native_walk.h"

struct fx_native_state fx_native;

void fx_native_want_sigsafe(const struct fx_textmap_entry *e)
{
    for (int i = 0; i < FX_NATIVE_WANTS; i++) {
        uintptr_t cur = __atomic_load_n(&fx_native.want[i], __ATOMIC_RELAXED);
        if (cur == 0 && __atomic_compare_exchange_n(&fx_native.want[i], &cur, e->start, false,
                                                    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
            return;
        if (cur == e->start)
            return;
    }
    __atomic_add_fetch(&fx_native.want_full, 1, __ATOMIC_RELAXED);
}

#if defined(__x86_64__)
struct bounds {
    uintptr_t lo, hi; /* the thread's stack [lo, hi); lo 0: unknown */
};

/* Signal-safe: the stack bounds of t's walk (see the file comment): its own, else, for a thread
 * that is not a Java thread, the stack table's mapping holding sp; lo 0 if neither. */
static struct bounds bounds_sigsafe(const struct fx_thread *t, uintptr_t sp)
{
    struct bounds b = {.lo = __atomic_load_n(&t->stack_lo, __ATOMIC_ACQUIRE)};
    b.hi = b.lo != 0 ? __atomic_load_n(&t->stack_hi, __ATOMIC_RELAXED) : 0;
    if (b.lo != 0 || !t->native_only)
        return b;
    uint32_t ticket;
    const struct fx_textmap *st = fx_textmap_slot_enter_sigsafe(&fx_native.stacks, &ticket);
    const struct fx_textmap_entry *e = fx_textmap_lookup_sigsafe(st, sp);
    if (e != NULL) {
        b.lo = e->start;
        b.hi = e->end;
    }
    fx_textmap_slot_leave_sigsafe(&fx_native.stacks, ticket);
    __atomic_add_fetch(e != NULL ? &fx_native.stack_found : &fx_native.stack_not_found, 1,
                       __ATOMIC_RELAXED);
    return b;
}

/* Signal-safe: moves (pc, fp, sp) one frame up, reading two words of the thread's own stack;
 * FX_NSTOP_OFF when it did, else why it could not. */
static uint8_t step_sigsafe(const struct bounds *b, uintptr_t *pc, uintptr_t *fp, uintptr_t *sp)
{
    uintptr_t lo = b->lo, hi = b->hi, f = *fp;
    if (lo == 0 || hi <= lo + 16)
        return FX_NSTOP_NO_BOUNDS;
    if (f == 0)
        return FX_NSTOP_CHAIN_END;
    if (f < *sp || f < lo || f > hi - 16 || (f & 7) != 0)
        return FX_NSTOP_BAD_FP;
    const uintptr_t *w = (const uintptr_t *)f;
    *fp = w[0];
    *pc = w[1];
    *sp = f + 16; /* the next frame pointer must lie above this frame */
    return FX_NSTOP_OFF;
}

/* Signal-safe (issue 32): at lies in HotSpot's code cache, [CodeCache::_low_bound,
 * _high_bound) from VMStructs (codeheap.h, published once at VMInit; pid last). HotSpot reserves
 * that whole range for the code cache at start-up and commits it, executable, piece by piece as
 * its heaps grow (CodeHeap::expand_by): nothing else is mapped inside a reservation. So an
 * address there that the text map does not hold is code cache memory committed since the map was
 * read, which a current map shows as anonymous executable memory: the walk stops at Java code,
 * as it would with that map. Only a missing entry is so taken; every Java frame past the stop is
 * still proven where it is named (the code table or heaps: native_below.c, recover_vmcode.c). */
static bool in_code_cache_sigsafe(uintptr_t at)
{
    const struct fx_codeheap_layout *l = &fx_sig.codeheap;
    if (__atomic_load_n(&l->pid, __ATOMIC_ACQUIRE) == 0)
        return false;
    return at >= l->lo && at < l->hi;
}

#define CFI_FALLBACK FX_NSTOP_COUNT /* no row for pc: take the frame-pointer step */

/* Memos of the walk's two lookups, the text map's entry and the unwind table's row of an
 * address: binary searches over tables of hundreds of entries and millions of rows (libjvm's),
 * a cache miss per step, that were most of a walk (perf, JDK 17 and 25: fx_cfi_lookup_sigsafe
 * alone a half of an allocation sample's native walk, docs/BENCHMARKS.md "The allocation
 * callback, CompiledMethodLoad and the lock view"). Return addresses repeat (the
 * same call sites), so a direct-mapped slot per address remembers the index found last. A slot
 * is a hint, never trusted: its index is used only if the live table says it is the answer
 * (the entry holds the address; the row is the last one at or below it), so a slot torn by
 * two threads writing it, or left from a table since replaced, costs a search, never a wrong
 * frame. Any thread, signal-safe: relaxed atomics on words of static memory. */
#define MEMO_SLOTS 2048 /* a power of two */
struct memo {
    uintptr_t at;
    uint64_t idx;
};
static struct memo map_memo[MEMO_SLOTS], row_memo[MEMO_SLOTS];

static struct memo *memo_slot(struct memo *m, uintptr_t at)
{
    return &m[(uint64_t)(at * 0x9E3779B97F4A7C15ull) >> 53];
}

static const struct fx_textmap_entry *map_lookup_sigsafe(const struct fx_textmap *map, uintptr_t at)
{
    if (map == NULL)
        return NULL;
    struct memo *m = memo_slot(map_memo, at);
    if (__atomic_load_n(&m->at, __ATOMIC_RELAXED) == at) {
        uint64_t i = __atomic_load_n(&m->idx, __ATOMIC_RELAXED);
        if (i < map->count && map->entries[i].start <= at && at < map->entries[i].end)
            return &map->entries[i];
    }
    const struct fx_textmap_entry *e = fx_textmap_lookup_sigsafe(map, at);
    if (e != NULL) {
        __atomic_store_n(&m->at, at, __ATOMIC_RELAXED);
        __atomic_store_n(&m->idx, (uint64_t)(e - map->entries), __ATOMIC_RELAXED);
    }
    return e;
}

static const struct fx_cfi_row *row_lookup_sigsafe(const struct fx_cfi *c, uint64_t va,
                                                   uintptr_t at)
{
    if (c == NULL || c->count == 0 || va < c->base || va - c->base >= c->end)
        return NULL;
    uint32_t pc = (uint32_t)(va - c->base);
    struct memo *m = memo_slot(row_memo, at);
    if (__atomic_load_n(&m->at, __ATOMIC_RELAXED) == at) {
        uint64_t i = __atomic_load_n(&m->idx, __ATOMIC_RELAXED);
        if (i < c->count && c->rows[i].pc <= pc && (i + 1 == c->count || c->rows[i + 1].pc > pc))
            return &c->rows[i];
    }
    const struct fx_cfi_row *row = fx_cfi_lookup_sigsafe(c, va);
    if (row != NULL) {
        __atomic_store_n(&m->at, at, __ATOMIC_RELAXED);
        __atomic_store_n(&m->idx, (uint64_t)(row - c->rows), __ATOMIC_RELAXED);
    }
    return row;
}

/* Signal-safe (cstack=dwarf): moves r one frame up by the CFI row of `at` (pc, or a return
 * address one byte back) in mapping e; leaf: r is the interrupted context (its red zone
 * readable, fx_cfi.h); FX_NSTOP_OFF when it did, CFI_FALLBACK when no row covers it, else why
 * the walk stops. */
static uint8_t cfi_step_sigsafe(const struct bounds *b, const struct fx_textmap_entry *e,
                                uintptr_t at, struct fx_cfi_regs *r, bool leaf)
{
    const struct fx_cfi *c = e->cfi;
    if (c == NULL)
        return CFI_FALLBACK;
    uint64_t va;
    if (!fx_cfi_vaddr_sigsafe(c, at - e->start + e->offset, &va))
        return CFI_FALLBACK;
    const struct fx_cfi_row *row = row_lookup_sigsafe(c, va, at);
    if (row == NULL)
        return CFI_FALLBACK;
    uintptr_t lo = b->lo, hi = b->hi;
    if (lo == 0 || hi <= lo + 16)
        return FX_NSTOP_NO_BOUNDS;
    if (r->sp < lo || r->sp > hi)
        return FX_NSTOP_BAD_CFA;
    switch (fx_cfi_step_sigsafe(row, r, hi, leaf && fx_cfi_read_lo(r->sp, true) >= lo)) {
    case FX_CFI_STEP_OK:
        return r->pc == 0 ? FX_NSTOP_CHAIN_END : FX_NSTOP_OFF;
    case FX_CFI_STEP_NONE:
        return CFI_FALLBACK;
    case FX_CFI_STEP_UNSUPPORTED:
        return FX_NSTOP_CFI_RULE;
    case FX_CFI_STEP_END:
        return FX_NSTOP_CHAIN_END;
    default:
        return FX_NSTOP_BAD_CFA;
    }
}

/* Signal-safe: the walk over one table (see the file comment) from r, into pcs (cap entries):
 * r's pc is the leaf's (leaf) or a return address, looked up one byte back; interrupted: r is a
 * signal's context (its first frame's red zone and a PLT pc are stepped, fx_cfi.h); r is left at
 * the frame where the walk stopped (with FX_NSTOP_JAVA: the Java frame's return address, its sp and
 * rbp, where native_below.c continues). */
static uint32_t walk_sigsafe(const struct bounds *b, const struct fx_textmap *map,
                             struct fx_cfi_regs *r, bool leaf, bool interrupted, uint64_t *pcs,
                             uint32_t cap, uint8_t *stop)
{
    bool dwarf = __atomic_load_n(&fx_native.dwarf, __ATOMIC_RELAXED) != 0;
    const struct fx_textmap_entry *by_fp = NULL; /* a table-less mapping last stepped by rbp */
    uint32_t n = 0;
    for (;;) {
        uintptr_t at = n == 0 && leaf ? r->pc : r->pc - 1;
        const struct fx_textmap_entry *e = map_lookup_sigsafe(map, at);
        if (e == NULL && in_code_cache_sigsafe(at)) { /* committed since the map was read */
            __atomic_store_n(&fx_native.code_cache_last, at, __ATOMIC_RELAXED);
            __atomic_add_fetch(&fx_native.code_cache, 1, __ATOMIC_RELAXED);
            *stop = FX_NSTOP_JAVA;
            return n;
        }
        if (e == NULL) {
            __atomic_add_fetch(&fx_native.misses, 1, __ATOMIC_RELAXED);
            *stop = FX_NSTOP_NOT_TEXT;
            /* its rbp was no frame pointer; but a library built with them (libjvm) more
             * likely returned into one loaded since the map was read (a JNI library just
             * loaded): re-read, not blamed (its table is megabytes) */
            if (by_fp != NULL && !by_fp->frame_pointers) {
                fx_native_want_sigsafe(by_fp);
                *stop = FX_NSTOP_NO_TABLE;
            }
            return n;
        }
        if (e->kind == FX_TEXTMAP_ANON) {
            *stop = FX_NSTOP_JAVA;
            return n;
        }
        if (n == cap) {
            *stop = FX_NSTOP_DEPTH;
            return n;
        }
        pcs[n++] = r->pc;
        uint8_t why =
                dwarf ? cfi_step_sigsafe(b, e, at, r, n == 1 && leaf && interrupted) : CFI_FALLBACK;
        by_fp = NULL;
        if (why == CFI_FALLBACK) {
            why = step_sigsafe(b, &r->pc, &r->fp, &r->sp);
            by_fp = dwarf && e->cfi == NULL && e->kind == FX_TEXTMAP_FILE ? e : NULL;
            if (by_fp != NULL && why == FX_NSTOP_BAD_FP) {
                fx_native_want_sigsafe(by_fp);
                why = FX_NSTOP_NO_TABLE;
            } else if (by_fp != NULL && !e->frame_pointers) {
                /* issue 32: a frameless function leaves rbp its caller's, and the step then
                 * skips frames without failing (a .debug_frame-only library): its table is
                 * asked for, and later walks step it by CFI */
                fx_native_want_sigsafe(by_fp);
            }
        }
        if (why != FX_NSTOP_OFF) {
            *stop = why;
            return n;
        }
    }
}

/* Signal-safe (session 26, docs/VALIDATION.md 8.5h): an interrupted pc in the code cache that is
 * a stub the VM called, stepped to its caller by native_below.c's proven rule, which must lie
 * in a file mapping (libjvm): *r moved there, true. Else *r unchanged. */
static bool vm_stub_sigsafe(const struct fx_thread *t, const struct fx_textmap *map,
                            struct fx_cfi_regs *r)
{
    const struct fx_textmap_entry *e = map_lookup_sigsafe(map, r->pc);
    if (!(e == NULL ? in_code_cache_sigsafe(r->pc) : e->kind == FX_TEXTMAP_ANON))
        return false;
    struct fx_regs at = {.pc = r->pc, .sp = r->sp, .fp = r->fp, .gpr = NULL};
    if (!fx_native_vm_stub_sigsafe(t, &at))
        return false;
    e = map_lookup_sigsafe(map, at.pc - 1);
    if (e == NULL || e->kind != FX_TEXTMAP_FILE)
        return false;
    r->pc = at.pc, r->sp = at.sp, r->fp = at.fp;
    return true;
}

/* Signal-safe: the walk from the interrupted registers (fx_native_walk_sigsafe); over a stub
 * the VM called first (its pc the leaf frame, a code cache address the model names by its
 * stub) when interrupted; *vm true then. */
static uint32_t walk_leaf_sigsafe(const struct fx_thread *t, const struct fx_textmap *map,
                                  struct fx_cfi_regs *r, bool interrupted, uint64_t *pcs,
                                  uint8_t *stop, bool *vm)
{
    struct bounds b = bounds_sigsafe(t, r->sp);
    uintptr_t leaf = r->pc;
    *vm = interrupted && b.lo != 0 && vm_stub_sigsafe(t, map, r);
    if (!*vm)
        return walk_sigsafe(&b, map, r, true, interrupted, pcs, FX_NATIVE_MAX, stop);
    pcs[0] = leaf;
    return 1 + walk_sigsafe(&b, map, r, false, false, pcs + 1, FX_NATIVE_MAX - 1, stop);
}
#endif

uint32_t fx_native_walk_sigsafe(const struct fx_thread *t, const void *ucontext, bool interrupted,
                                uint64_t *pcs, uint8_t *stop)
{
    *stop = FX_NSTOP_OFF;
#if defined(__x86_64__)
    if (ucontext == NULL || !__atomic_load_n(&fx_native.enabled, __ATOMIC_RELAXED))
        return 0;
    uint32_t ticket;
    const struct fx_textmap *map = fx_textmap_slot_enter_sigsafe(&fx_native.maps, &ticket);
    uint32_t n = 0;
    if (map == NULL)
        *stop = FX_NSTOP_NO_MAP;
    else {
        const ucontext_t *uc = ucontext;
        struct fx_cfi_regs r = {.pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP],
                                .fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP],
                                .sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP]};
        bool vm;
        n = walk_leaf_sigsafe(t, map, &r, interrupted, pcs, stop, &vm);
    }
    fx_textmap_slot_leave_sigsafe(&fx_native.maps, ticket);
    return n;
#else
    (void)t, (void)ucontext, (void)interrupted, (void)pcs;
    return 0;
#endif
}

bool fx_native_walk_to_java_sigsafe(const struct fx_thread *t, const void *ucontext,
                                    struct fx_regs *at)
{
#if defined(__x86_64__)
    if (ucontext == NULL || !__atomic_load_n(&fx_native.enabled, __ATOMIC_RELAXED))
        return false;
    const ucontext_t *uc = ucontext;
    struct fx_cfi_regs r = {.pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP],
                            .fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP],
                            .sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP]};
    struct bounds b = bounds_sigsafe(t, r.sp);
    uint64_t pcs[FX_NATIVE_MAX]; /* the walk's own record, not kept: the leaf walk has them */
    uint8_t stop = FX_NSTOP_OFF;
    uint32_t ticket;
    const struct fx_textmap *map = fx_textmap_slot_enter_sigsafe(&fx_native.maps, &ticket);
    /* a signal's context: alloc_walk.c's synthetic one reaches native_below.c's call only
     * with no last Java frame in the anchor, never so in a JVMTI callback */
    uint32_t n = map != NULL ? walk_sigsafe(&b, map, &r, true, true, pcs, FX_NATIVE_MAX, &stop) : 0;
    fx_textmap_slot_leave_sigsafe(&fx_native.maps, ticket);
    if (n == 0 || stop != FX_NSTOP_JAVA)
        return false;
    *at = (struct fx_regs){.pc = r.pc, .sp = r.sp, .fp = r.fp, .gpr = NULL};
    return true;
#else
    (void)t, (void)ucontext, (void)at;
    return false;
#endif
}

bool fx_native_walk_vm_stub_sigsafe(const struct fx_thread *t, const void *ucontext,
                                    struct fx_regs *at)
{
#if defined(__x86_64__)
    if (ucontext == NULL || !__atomic_load_n(&fx_native.enabled, __ATOMIC_RELAXED))
        return false;
    const ucontext_t *uc = ucontext;
    struct fx_cfi_regs r = {.pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP],
                            .fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP],
                            .sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP]};
    uint64_t pcs[FX_NATIVE_MAX]; /* the walk's own record, not kept: the leaf walk has them */
    uint8_t stop = FX_NSTOP_OFF;
    bool vm = false;
    uint32_t ticket;
    const struct fx_textmap *map = fx_textmap_slot_enter_sigsafe(&fx_native.maps, &ticket);
    if (map != NULL)
        walk_leaf_sigsafe(t, map, &r, true, pcs, &stop, &vm);
    fx_textmap_slot_leave_sigsafe(&fx_native.maps, ticket);
    if (!vm || stop != FX_NSTOP_JAVA)
        return false;
    *at = (struct fx_regs){.pc = r.pc, .sp = r.sp, .fp = r.fp, .gpr = NULL};
    return true;
#else
    (void)t, (void)ucontext, (void)at;
    return false;
#endif
}

bool fx_native_in_mapped_file_sigsafe(uintptr_t at)
{
    uint32_t ticket;
    const struct fx_textmap *map = fx_textmap_slot_enter_sigsafe(&fx_native.maps, &ticket);
    const struct fx_textmap_entry *e = map != NULL ? fx_textmap_lookup_sigsafe(map, at) : NULL;
    bool file = e != NULL && e->kind != FX_TEXTMAP_ANON;
    fx_textmap_slot_leave_sigsafe(&fx_native.maps, ticket);
    return file;
}

uint32_t fx_native_walk_entry_sigsafe(const struct fx_thread *t, struct fx_regs *at, uint64_t *pcs,
                                      uint32_t cap, uint8_t *stop)
{
    *stop = FX_NSTOP_OFF;
#if defined(__x86_64__)
    if (!__atomic_load_n(&fx_native.enabled, __ATOMIC_RELAXED))
        return 0;
    uint32_t ticket;
    const struct fx_textmap *map = fx_textmap_slot_enter_sigsafe(&fx_native.maps, &ticket);
    struct fx_cfi_regs r = {.pc = at->pc, .fp = at->fp, .sp = at->sp};
    struct bounds b = {.lo = t->stack_lo, .hi = t->stack_lo != 0 ? t->stack_hi : 0};
    uint32_t n = 0;
    if (map == NULL)
        *stop = FX_NSTOP_NO_MAP;
    else if ((*stop = step_sigsafe(&b, &r.pc, &r.fp, &r.sp)) == FX_NSTOP_OFF) /* the stub */
        n = walk_sigsafe(&b, map, &r, false, false, pcs, cap, stop);
    fx_textmap_slot_leave_sigsafe(&fx_native.maps, ticket);
    at->pc = r.pc, at->fp = r.fp, at->sp = r.sp;
    return n;
#else
    (void)t, (void)at, (void)pcs, (void)cap;
    return 0;
#endif
}
