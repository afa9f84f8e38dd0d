/* SPDX-License-Identifier: Apache-2.0 */
/* Private to agent/sampling: the native half of a sample (issue 16, cstack=fp|dwarf).
 * native_walk.c is on the signal path (in the allow-listed object with signal_handler.c);
 * native_maps.c, outside signal context, publishes the text map the walk checks every address
 * against and switches the walk on and off; native_unwind.c builds the CFI tables it carries. */
#ifndef FX_NATIVE_WALK_H
#define FX_NATIVE_WALK_H

#include "fx_cfi.h"
#include "fx_textmap.h"
#include "internal.h"

#define FX_NATIVE_WANTS 8

struct fx_native_state {
    struct fx_textmap_slot maps; /* the process's executable mappings (native_maps.c writes) */
    int enabled;                 /* atomic: walk at all (cstack=fp|dwarf, every mode) */
    int dwarf;                   /* atomic: cstack=dwarf: unwind by the mappings' CFI tables */
    uint64_t misses;             /* atomic: addresses found in no mapping: the map is re-read */
    uint64_t code_cache;         /* atomic: others in the code cache's reservation: Java code */
    uintptr_t code_cache_last;   /* atomic: the last of those, for native_maps.c's check */
    /* atomic: start addresses of file mappings a dwarf walk met without a table, for the drain
     * to build (native_unwind.c); 0 is a free slot */
    uintptr_t want[FX_NATIVE_WANTS];
    uint64_t want_full; /* atomic: a mapping not queued, every slot taken */
    /* The private read-write mappings (vm_threads.c writes, read only after it registered a
     * thread): where a thread that is not a Java thread finds its stack by its stack pointer
     * while its own bounds are unset, i.e. at its first samples. */
    struct fx_textmap_slot stacks;
    uint64_t stack_found, stack_not_found; /* atomic: those lookups, by outcome */
    /* atomic (native_below.c): walks below whose top was a C1 OSR frame at a pc before its OSR
     * entry (docs/VALIDATION.md 8.1, session 22), by where they ended: the thread's first frame
     * (every frame under the claimed one proven, the claim's oracle) or not */
    uint64_t osr_pre_root, osr_pre_cut;
    /* atomic (native_below.c): walks below whose top was a C2 frame at a pc after a byte
     * 0x50-0x57 (docs/VALIDATION.md 8.1, session 23): by where they ended, as above, and those
     * whose top recover.c refused (a push decoded there, or not decoded; or the pc in a
     * prologue, an epilogue, the stub section) */
    uint64_t c2_lone_root, c2_lone_cut, c2_lone_refused;
    /* atomic (native_below.c, session 24): walks below rooted at "Java frames not walked to the
     * call stub", by where their Java walk stopped (enum fx_seg_stop, recover_anchor.h) */
    uint64_t no_entry[12];
    /* atomic (native_below.c): walks below stepped over a method handle intrinsic on top (8.5l,
     * session 24), by where they ended, as above */
    uint64_t mh_root, mh_cut;
};

extern struct fx_native_state fx_native;

/* Signal-safe. From the interrupted registers, the native return addresses of thread t, leaf
 * first, into pcs (FX_NATIVE_MAX entries) up to the first address in Java code; returns how
 * many and sets *stop (enum fx_native_stop) to why the walk ended. interrupted: ucontext is a
 * signal's (its first frame's red zone is intact and a pc in a PLT exact, include/fx_cfi.h),
 * not registers taken at a call (alloc_walk.c). */
uint32_t fx_native_walk_sigsafe(const struct fx_thread *t, const void *ucontext, bool interrupted,
                                uint64_t *pcs, uint8_t *stop);

/* Signal-safe: at lies in an executable mapping of a file (or the vDSO), not in anonymous
 * memory such as the JIT's code cache. False when no map is published. */
bool fx_native_in_mapped_file_sigsafe(uintptr_t at);

/* Signal-safe (session 26, native_vmstub.c): the interrupted registers *at moved to the native
 * caller of a stub the VM called (docs/VALIDATION.md 8.5h: flush_icache_stub, JDK 17's
 * arraycopy stubs under Unsafe_CopyMemory0), each step proven; false when none applies. */
bool fx_native_vm_stub_sigsafe(const struct fx_thread *t, struct fx_regs *at);

/* Signal-safe (native_below.c): the leaf walk over such a stub, not recorded: true, with *at the
 * Java frame's return address, sp and rbp, when the stub was stepped and the native walk from
 * its caller stopped at Java code. */
bool fx_native_walk_vm_stub_sigsafe(const struct fx_thread *t, const void *ucontext,
                                    struct fx_regs *at);

/* Signal-safe (issue 32, native_below.c): the same walk from the interrupted registers, not
 * recorded, for a thread in Java whose pc is in native code compiled Java called as a leaf
 * (os::javaTimeMillis and the vDSO under System.currentTimeMillis): true, with *at the first
 * Java frame's return address, sp and rbp, when at least one native frame was stepped (by CFI
 * or frame pointer, as every native frame) and the walk stopped at Java code. */
bool fx_native_walk_to_java_sigsafe(const struct fx_thread *t, const void *ucontext,
                                    struct fx_regs *at);

/* Signal-safe (issue 32, native_below.c): AsyncGetCallTrace failed in Java (-5 or -6:
 * recover_vmcode.c calls it where the native frames do not return into C1's barrier stub) with
 * the pc in no code blob: native code that compiled Java called as a leaf, no frame anchor set
 * (os::javaTimeMillis and the vDSO under System.currentTimeMillis's intrinsic). Its native
 * frames are stepped as above to the first address in Java code, which must lie right after a
 * call to native code of a mapped file (rel32 or mov r10, imm64; call r10: not into the code
 * cache, else an rbp step skipped a Java frame) in a current nmethod of the code table; ASGCT
 * then walks from that caller's context (pc
 * = return address - 1, docs/VALIDATION.md 8.5a) into trace (depth frames), a caller at bci 0
 * refused (8.5a). FX_REC_LEAF_NATIVE, no frame of its own (the leaf's native walk puts the
 * native frames above), or why not (< 0); without native walks FX_REC_NOT_FOUND. */
int fx_recover_leaf_native_sigsafe(struct fx_thread *t, void *ucontext, fx_asgct_trace *trace,
                                   uint32_t depth, struct fx_heap_memo *m);

/* Signal-safe (issue 32, native_below.c): is the pc in no code blob with no last Java frame in
 * the anchor (native code compiled Java called as a leaf)? There AsyncGetCallTrace, when it
 * answers at all, found its first Java frame by stepping the native frames through rbp, which at
 * a leaf's first instruction, its epilogue or in the vDSO is still the compiled caller's own: the
 * compiled frame and its callers up to the next frame pointer are skipped (seen: os::javaTimeMillis
 * right over an interpreted caller of an OSR-compiled loop). So its answer is not taken there:
 * fx_recover_leaf_native_sigsafe's proven walk replaces it, or the sample fails, named. */
bool fx_leaf_unanchored_sigsafe(const struct fx_thread *t, const void *ucontext,
                                struct fx_heap_memo *m);

/* Signal-safe (issue 32, native_below.c): the native frames below a Java frame, from `at`, the
 * registers at a return address into HotSpot's call stub (its rbp the stub's frame pointer, as
 * the Java frame above it saved it): the stub is stepped by its frame pointer (not recorded),
 * then the walk goes on as fx_native_walk_sigsafe's into pcs (cap entries) until Java code
 * (FX_NSTOP_JAVA: `at` is left at that Java frame's return address, sp and rbp), the thread's
 * first frame or a failure (*stop says which). */
uint32_t fx_native_walk_entry_sigsafe(const struct fx_thread *t, struct fx_regs *at, uint64_t *pcs,
                                      uint32_t cap, uint8_t *stop);

/* Signal-safe (native_below.c): the whole stack's walk from the interrupted context: the
 * physical Java frames' type words into types (FX_TYPES_MAX; NULL: none, for a recovered
 * sample, whose frames do not line up with them), returning how many, and, with
 * native walks on, the native frames below and between them into below (the segments of
 * sample.h's FX_BELOW part, cap return addresses and FX_BELOW_SEGS + 1 headers at most; NULL:
 * none), *n_below words of it; m: the sample's code heap lookups (fx_recover_find_any). */
uint32_t fx_native_below_sigsafe(const struct fx_thread *t, const void *ucontext, uint64_t *types,
                                 uint64_t *below, uint32_t cap, uint32_t *n_below,
                                 struct fx_heap_memo *m);

/* Signal-safe: queues mapping e for the drain to build its unwind table (native_unwind.c); a
 * full queue is counted and the mapping asked for again by a later walk. */
void fx_native_want_sigsafe(const struct fx_textmap_entry *e);

/* native_unwind.c, under native_maps.c's lock, off the signal path (cstack=dwarf). Builds the
 * tables of the mappings walks queued (map: the current table); true when a table should be
 * published on a new map. */
bool fx_native_unwind_take_wants(const struct fx_textmap *map);
/* Sets each file entry's cfi to its library's table, if built, before map is published. */
void fx_native_unwind_attach(struct fx_textmap *map);
void fx_native_unwind_report(struct fx_profile *p, const char *g);
/* A new recording (under native_maps.c's lock): the requests from zero, the tables kept. */
void fx_native_unwind_new_recording(void);

#endif
