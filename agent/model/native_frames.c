/* SPDX-License-Identifier: Apache-2.0 */
/* Native frames of a sample in the model (issue 16, cstack=fp): the return addresses the signal
 * handler stored after the Java frames (native_walk.c) become Native frames above the Java part
 * (leaf side), each address named once (fx_elfsym: symbol, else "lib+0xOFFSET") and cached by
 * address for the model's generation; where the walk stopped short of Java code, a
 * "[native: ...]" frame marks the gap; each library named becomes one of the profile's libs
 * (fx_profile_lib: the UI shows it as the frames' library). Owns the symbolizer, the per-address
 * cache and the "Native stacks" figures of meta.extra. Model owner only. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_cache_dir.h"
#include "fx_cfi.h"
#include "fx_elfsym.h"
#include "fx_profile.h"

#define CACHE_MAX (1u << 20) /* addresses cached before the cache starts over */

struct slot {
    uint64_t addr; /* 0: empty (no code lives at address 0) */
    fx_frame_id frame;
    bool alloc_entry; /* alloc_entry(its name) */
};

static const char *const stop_labels[FX_NSTOP_COUNT] = {
        "walk not done (cstack=no)",
        "reached Java code (anonymous executable memory: the code cache)",
        "reached the thread's first frame (frame pointer 0)",
        "cut at 64 frames",
        "no text map yet",
        "an address in no executable mapping",
        "frame pointer outside the stack (code without frame pointers)",
        "thread stack bounds unknown",
        "a CFI rule outside the unwound subset (a DWARF expression)",
        "CFA or saved register outside the stack (CFI)",
        "unwind table not built yet (queued for the drain)",
        "below the Java frames: their walk did not reach the call stub",
        "below the Java frames: Java code right under the call stub",
        "below the Java frames: their walk ran out of code heap lookups",
};

/* Where the walk stopped, as the frame between the Java part and the native frames; NULL where
 * nothing is missing between them. */
static const char *const stop_frames[FX_NSTOP_COUNT] = {
        NULL,
        NULL,
        NULL,
        "[native: truncated at 64 frames]",
        "[native: no text map yet]",
        "[native: walk stopped (address in no executable mapping)]",
        "[native: walk stopped (frame pointer outside the stack)]",
        "[native: walk stopped (stack bounds unknown)]",
        "[native: walk stopped (CFI rule not unwound)]",
        "[native: walk stopped (CFA outside the stack)]",
        "[native: walk stopped (unwind table not built yet)]",
        "[native: walk stopped (Java frames not walked to the call stub)]",
        "[native: walk stopped (Java code under the call stub)]",
        "[native: walk stopped (code heap lookups past the handler's budget)]",
};

static struct {
    struct fx_elfsym *sym;
    bool sym_failed;
    struct slot *slots; /* open addressing, cap a power of two */
    size_t cap, used;
    uint32_t gen;
    uint64_t stops[FX_NSTOP_COUNT], leaf_java, with_frames, frames, bad_records;
    uint64_t resolved, by_source[4], unmapped, errors, cache_resets, lib_errors;
    uint64_t fde_named; /* addresses without a symbol named by their FDE's start */
    int64_t sym_ns;     /* the drain's CPU in fx_elfsym_resolve: each library's symbol tables
                           are read at its first address, so this is most of their start-up */
    /* issue 32, the frames below and between the Java frames: samples with such a walk,
     * segments between Java frames, frames, stops of the root segment, walks not placed */
    uint64_t below, below_mid, below_frames, below_stops[FX_NSTOP_COUNT], below_unplaced;
    uint64_t below_stubs; /* call stub frames shown (segments whose walk began in one) */
} nf;

static uint64_t hash(uint64_t a)
{
    a ^= a >> 33;
    a *= 0xff51afd7ed558ccdULL;
    return a ^ (a >> 33);
}

/* The slot of addr: its entry, or the empty slot where it goes. */
static struct slot *find(uint64_t addr)
{
    for (size_t i = hash(addr) & (nf.cap - 1);; i = (i + 1) & (nf.cap - 1)) {
        if (nf.slots[i].addr == addr || nf.slots[i].addr == 0)
            return &nf.slots[i];
    }
}

/* Room for one more entry (at most half full); false when memory runs out. */
static bool cache_room(struct fx_profile *p)
{
    if (nf.slots != NULL && nf.gen != fx_profile_generation(p)) {
        memset(nf.slots, 0, nf.cap * sizeof(*nf.slots)); /* frame ids of an older model */
        nf.used = 0;
    }
    nf.gen = fx_profile_generation(p);
    if (nf.slots != NULL && nf.used < nf.cap / 2)
        return true;
    if (nf.cap >= CACHE_MAX) {
        memset(nf.slots, 0, nf.cap * sizeof(*nf.slots));
        nf.used = 0;
        nf.cache_resets++;
        return true;
    }
    size_t cap = nf.cap ? nf.cap * 2 : 4096;
    struct slot *n = fx_calloc(cap, sizeof(*n)), *old = nf.slots;
    if (n == NULL)
        return false;
    size_t old_cap = nf.cap;
    nf.slots = n;
    nf.cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i].addr != 0)
            *find(old[i].addr) = old[i];
    }
    fx_free(old);
    return true;
}

static uint8_t subcategory(const char *lib, const char *name)
{
    if (strncmp(name, "Java_", 5) == 0)
        return FX_NATIVE_JNI;
    if (strncmp(lib, "libjvm.", 7) == 0)
        return FX_NATIVE_LIBJVM;
    if (strncmp(lib, "libc.", 5) == 0 || strncmp(lib, "ld-linux", 8) == 0 ||
        strcmp(lib, "[vdso]") == 0 || strncmp(lib, "libpthread.", 11) == 0 ||
        strncmp(lib, "libm.", 5) == 0)
        return FX_NATIVE_LIBC;
    return FX_NATIVE_OTHER;
}

/* The category of this record's native frames: Native with subcategories by library, or the
 * thread's own (a GC, JIT or VM thread: vm_threads.c), set by fx_native_frames_push. */
static uint8_t frame_cat, frame_sub;

/* A non-Java frame named `name`, of library `lib` (NULL: none), in category cat, sub. */
static int named_frame(struct fx_profile *p, const char *name, const char *lib, uint8_t cat,
                       uint8_t sub, fx_frame_id *out)
{
    fx_str_id n, res = FX_STR_NONE;
    fx_func_id f;
    int rc = fx_profile_cstring(p, name, &n);
    if (rc == FX_OK && lib != NULL && lib[0] != '\0')
        rc = fx_profile_cstring(p, lib, &res);
    struct fx_func_key k = {
            .name = n, .resource = res, .source = FX_STR_NONE, .line = -1, .is_java = false};
    if (rc == FX_OK)
        rc = fx_profile_func(p, &k, &f);
    if (rc != FX_OK)
        return rc;
    struct fx_frame_key fk = {.func = f, .line = -1, .category = cat, .subcategory = sub};
    return fx_profile_frame(p, &fk, out);
}

/* A native frame: the record's category (frame_cat) or Native's subcategory sub. */
static int native_frame(struct fx_profile *p, const char *name, const char *lib, uint8_t sub,
                        fx_frame_id *out)
{
    return named_frame(p, name, lib, frame_cat != 0 ? frame_cat : FX_CAT_NATIVE,
                       frame_cat != 0 ? frame_sub : sub, out);
}

/* Issue 32 item 6: HotSpot's entries into its allocation path (async-profiler's choice too),
 * called from Java code (the interpreter's, C1's and C2's runtime calls), from a native method
 * (MemAllocator::allocate, under jni_NewObject or JVM_Clone), or by the VM itself: an
 * allocation sample's native frames above the rootmost of them are the sampling's machinery
 * (the heap sampler, JVMTI's posting, the agent's callback), not the program's. */
static bool alloc_entry(const char *name)
{
    static const char *const entries[] = {"MemAllocator::allocate", "InterpreterRuntime::",
                                          "OptoRuntime::", "Runtime1::", "SharedRuntime::"};
    for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
        if (strncmp(name, entries[i], strlen(entries[i])) == 0)
            return true;
    return false;
}

/* Names addr (a leaf pc, or a return address less one) in the current text map; *entry:
 * whether it is an allocation entry (alloc_entry). */
/* The symbolizer, made at the first address: libraries' tables kept in FXAGENT_CACHE/elfsym
 * (include/fx_elfsym_cache.h), so a JVM after the first maps libjvm's instead of reading it. */
static void make_symbolizer(void)
{
    char dir[1024];
    if ((nf.sym = fx_elfsym_new()) == NULL) {
        nf.sym_failed = true;
        return;
    }
    if (fx_cache_dir(getenv("FXAGENT_CACHE"), getenv("XDG_CACHE_HOME"), getenv("HOME"), "elfsym",
                     dir, sizeof(dir)))
        fx_elfsym_set_cache_dir(nf.sym, dir); /* no memory: read every library, as before */
}

static int resolve(struct fx_profile *p, uint64_t addr, fx_frame_id *out, bool *entry)
{
    *entry = false;
    uint64_t stub; /* session 26: a stub the VM called, the leaf walk's first frame (8.5h) */
    if (fx_codemap_stub_at(addr, &stub))
        return fx_stub_frame(p, stub, false, out);
    if (nf.sym == NULL && !nf.sym_failed)
        make_symbolizer();
    uint32_t ticket;
    const struct fx_textmap *map = fx_native_maps_enter(&ticket);
    const struct fx_textmap_entry *e = fx_textmap_lookup_sigsafe(map, (uintptr_t)addr);
    struct fx_elfsym_frame f;
    int64_t c0 = fx_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    int rc = e != NULL && nf.sym != NULL ? fx_elfsym_resolve(nf.sym, e, (uintptr_t)addr, &f)
                                         : FX_EINVAL;
    nf.sym_ns += fx_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
    uint64_t vaddr, start;
    /* No symbol: the start of the FDE covering addr names its function, so that one function
     * is one func ("libz.so.1+0x4a00"), not one per address. */
    if (rc == FX_OK && f.name == NULL && e->cfi != NULL &&
        fx_cfi_vaddr_sigsafe(e->cfi, e->offset + ((uintptr_t)addr - e->start), &vaddr) &&
        vaddr == f.lib_off && fx_cfi_func_start(e->cfi, vaddr, &start)) {
        f.lib_off = start;
        nf.fde_named++;
    }
    fx_native_maps_leave(ticket);
    if (rc != FX_OK) {
        nf.unmapped += e == NULL;
        nf.errors += e != NULL;
        return native_frame(p,
                            e == NULL ? "[native: address no longer mapped]"
                                      : "[native: address not resolved]",
                            NULL, FX_NATIVE_OTHER, out);
    }
    char name[512];
    fx_elfsym_frame_name(&f, name, sizeof(name));
    char *version = f.name != NULL ? strchr(name, '@') : NULL;
    if (version != NULL && version != name)
        *version = '\0'; /* "clock_gettime@@GLIBC_2.17": the version is not the function */
    nf.resolved++;
    nf.by_source[f.source < 4 ? f.source : 0]++;
    /* The resource of the frame is the library's file name: the writer makes it a lib. */
    if (f.lib != NULL && f.lib[0] != '\0' && strncmp(f.lib, "[anon", 5) != 0) {
        struct fx_lib_desc lib = {.name = f.lib,
                                  .path = f.path != NULL && f.path[0] != '\0' ? f.path : f.lib,
                                  .build_id = f.build_id};
        if (fx_profile_lib(p, &lib) != FX_OK)
            nf.lib_errors++;
    }
    *entry = alloc_entry(name);
    int nrc = native_frame(p, name, f.lib, subcategory(f.lib, name), out);
    if (nrc == FX_OK) /* issue 32: a compiler's entry, under which its compile goes */
        fx_compile_tasks_note(p, name, *out);
    return nrc;
}

static int frame_entry_of(struct fx_profile *p, uint64_t addr, fx_frame_id *out, bool *entry)
{
    *entry = false;
    if (addr == 0 || !cache_room(p))
        return addr == 0 ? native_frame(p, "[native: address 0]", NULL, FX_NATIVE_OTHER, out)
                         : resolve(p, addr, out, entry);
    /* User-space addresses stay below 2^47: the category takes the key's top 16 bits. */
    uint64_t key = addr | (uint64_t)frame_cat << 56 | (uint64_t)frame_sub << 48;
    struct slot *s = find(key);
    if (s->addr == key) {
        *out = s->frame;
        *entry = s->alloc_entry;
        return FX_OK;
    }
    int rc = resolve(p, addr, out, entry);
    if (rc == FX_OK) {
        *s = (struct slot){.addr = key, .frame = *out, .alloc_entry = *entry};
        nf.used++;
    }
    return rc;
}

static int frame_of(struct fx_profile *p, uint64_t addr, fx_frame_id *out)
{
    bool entry;
    return frame_entry_of(p, addr, out, &entry);
}

int fx_native_frames_push(struct fx_profile *p, const struct fx_sample_rec *r, uint32_t len,
                          uint8_t cat, uint8_t sub, fx_stack_id *stack)
{
    frame_cat = cat < FX_CAT_COUNT ? cat : 0;
    frame_sub = sub;
    if (r->native_stop == FX_NSTOP_OFF && r->native_frames == 0) {
        fx_compile_tasks_count(r, len, false); /* a compiler thread's read, cstack=no */
        return FX_OK;
    }
    uint32_t n = r->native_frames;
    size_t need = sizeof(*r) + (size_t)r->native_at * sizeof(fx_asgct_frame) + n * sizeof(uint64_t);
    if (need > len || r->native_stop >= FX_NSTOP_COUNT || n > FX_NATIVE_MAX) {
        nf.bad_records++;
        fx_compile_tasks_count(r, len, false);
        return FX_OK;
    }
    nf.stops[r->native_stop]++;
    if (n == 0) { /* a walk that stopped at the leaf (no text map yet, a library mapped since
                     the last map): the stop is the leaf, not a silent Java leaf */
        nf.leaf_java += r->native_stop == FX_NSTOP_JAVA;
        fx_compile_tasks_count(r, len, false);
        const char *stop = stop_frames[r->native_stop];
        fx_frame_id f;
        int rc = stop == NULL ? FX_OK : native_frame(p, stop, NULL, FX_NATIVE_OTHER, &f);
        return stop == NULL || rc != FX_OK ? rc : fx_profile_stack(p, *stack, f, stack);
    }
    nf.with_frames++;
    nf.frames += n;
    uint64_t pcs[FX_NATIVE_MAX];
    memcpy(pcs, (const uint8_t *)(r->frames + r->native_at), n * sizeof(uint64_t));
    int rc = FX_OK;
    fx_frame_id f;
    const char *gap = stop_frames[r->native_stop];
    if (gap != NULL) {
        rc = native_frame(p, gap, NULL, FX_NATIVE_OTHER, &f);
        if (rc == FX_OK)
            rc = fx_profile_stack(p, *stack, f, stack);
    }
    /* Root side first; a return address is named one byte back, inside its call. */
    bool placed = false; /* issue 32: a compile task under its compiler's entry */
    for (uint32_t i = n; i-- > 0 && rc == FX_OK;) {
        rc = frame_of(p, i == 0 ? pcs[0] : pcs[i] - 1, &f);
        if (rc == FX_OK)
            rc = fx_profile_stack(p, *stack, f, stack);
        if (rc == FX_OK)
            rc = fx_compile_tasks_after(p, r, len, f, frame_cat, frame_sub, stack, &placed);
    }
    fx_compile_tasks_count(r, len, placed);
    return rc;
}

void fx_native_below_read(const struct fx_sample_rec *r, uint32_t len, int32_t n,
                          const int32_t *ends, struct fx_below *b)
{
    b->ns = 0;
    b->placed = true;
    b->leaf = r->native_frames > 0;
    size_t at = fx_rec_below_at(r, len);
    uint64_t nw;
    if (at == 0)
        return;
    memcpy(&nw, (const uint8_t *)r + at, sizeof(nw));
    const uint8_t *w = (const uint8_t *)r + at + sizeof(uint64_t);
    bool bad = nw > FX_BELOW_WORDS || at + (1 + nw) * sizeof(uint64_t) > len;
    for (uint64_t i = 0; !bad && i < nw; b->ns++) {
        int k = b->ns;
        bad = k > FX_BELOW_SEGS;
        if (bad)
            break;
        memcpy(&b->head[k], w + i * sizeof(uint64_t), sizeof(uint64_t));
        uint64_t m = b->head[k] & 0xFF, phys = (b->head[k] >> 24) & 0xFFFF;
        bad = i + 1 + m > nw || ((b->head[k] >> 8) & 0xFF) >= FX_NSTOP_COUNT;
        b->pcs[k] = w + (i + 1) * sizeof(uint64_t);
        i += 1 + m;
        /* between Java frames: under the ASGCT frame after the physical frames above it */
        b->at[k] = !(b->head[k] & FX_BELOW_MORE)          ? n
                   : phys <= FX_TYPES_MAX && ends != NULL ? ends[phys]
                                                          : -1;
        if (b->at[k] <= 0 || b->at[k] >= n)
            b->placed = b->placed && !(b->head[k] & FX_BELOW_MORE);
    }
    if (bad) {
        nf.bad_records++;
        b->ns = 0;
    }
}

/* The frame of a stub by its name index (codemap.c): the VM category, subcategory Stub, or
 * Recovered stub on top of a recovered stack; stacks.c names blob frames with it too. */
int fx_stub_frame(struct fx_profile *p, uint64_t index, bool recovered, fx_frame_id *out)
{
    const char *name = fx_codemap_stub_name(index);
    return named_frame(p, name != NULL ? name : "[unknown stub]", NULL, FX_CAT_VM,
                       recovered ? FX_VM_RECOVERED_STUB : FX_VM_STUB, out);
}

/* tally: a cpu/wall sample's walk, added to "Native stacks"; an allocation's has its own. */
static int below_push(struct fx_profile *p, struct fx_below *b, int32_t n, int32_t at,
                      fx_stack_id *stack, bool tally)
{
    frame_cat = frame_sub = 0;
    fx_frame_id f;
    int rc = FX_OK;
    for (int k = 0; k < b->ns && rc == FX_OK; k++) {
        if (b->at[k] != at || (at != n && !b->placed))
            continue;
        uint32_t m = (uint32_t)(b->head[k] & 0xFF);
        uint8_t stop = (uint8_t)((b->head[k] >> 8) & 0xFF);
        if (at == n && tally) { /* the root segment, the last: the tallies of the whole walk */
            nf.below++;
            nf.below_mid += (uint64_t)k;
            nf.below_stops[stop]++;
            nf.below_unplaced += !b->placed;
            uint64_t frames = 0;
            for (int i = 0; i <= k; i++)
                frames += b->head[i] & 0xFF;
            nf.below_frames += frames;
            nf.with_frames += !b->leaf && frames > 0; /* "samples with native frames": any */
        }
        if (at == n) {
            const char *mark = !b->placed ? "[native: frames between Java frames not placed]"
                                          : stop_frames[stop];
            if (mark != NULL)
                rc = native_frame(p, mark, NULL, FX_NATIVE_OTHER, &f);
            if (mark != NULL && rc == FX_OK)
                rc = fx_profile_stack(p, *stack, f, stack);
        }
        /* Root side first; every address is a return address, named one byte back. */
        for (uint32_t i = m; i-- > 0 && rc == FX_OK;) {
            uint64_t pc;
            memcpy(&pc, b->pcs[k] + i * sizeof(uint64_t), sizeof(pc));
            rc = frame_of(p, pc - 1, &f);
            if (rc == FX_OK)
                rc = fx_profile_stack(p, *stack, f, stack);
        }
        /* the call stub the segment's walk began in, leaf side: under the Java frame it
         * called (issue 32; the sampling proved the return address in its range) */
        if (rc == FX_OK && (b->head[k] & FX_BELOW_CALL_STUB)) {
            nf.below_stubs += tally;
            rc = fx_stub_frame(p, (b->head[k] >> FX_BELOW_STUB_NAME_SHIFT) & 0xFFFF, false, &f);
            if (rc == FX_OK)
                rc = fx_profile_stack(p, *stack, f, stack);
        }
    }
    return rc;
}

/* Issue 32 item 6 (alloc_native.c): see frames.h. The machinery is found by name, each address
 * named once (the cache keeps whether it is an entry). */
int fx_native_alloc_push(struct fx_profile *p, const uint64_t *pcs, uint32_t n, uint8_t stop,
                         fx_stack_id *stack, uint32_t *dropped, bool *found)
{
    frame_cat = frame_sub = 0;
    *dropped = 0;
    *found = false;
    if (n > FX_NATIVE_MAX || stop >= FX_NSTOP_COUNT) {
        nf.bad_records++;
        return FX_OK;
    }
    fx_frame_id f[FX_NATIVE_MAX];
    uint32_t cut = 0; /* frames [0, cut): the callback down to the rootmost entry */
    int rc = FX_OK;
    for (uint32_t i = 0; i < n && rc == FX_OK; i++) {
        bool entry;
        rc = frame_entry_of(p, pcs[i] - 1, &f[i], &entry); /* every one a return address */
        cut = entry ? i + 1 : cut;
    }
    /* HotSpot's heap sampler runs only under MemAllocator::allocate: a walk without any entry
     * gave the machinery alone (it stopped before one: its mark says what is not known below)
     * or is wrong (it ended, at Java code or a first frame, without one: frames skipped) */
    *found = cut > 0;
    if (!*found)
        cut = n;
    *dropped = cut;
    const char *gap = stop_frames[stop];
    if (!*found && n > 0 && gap == NULL)
        gap = "[native: walk ended without the allocation entry]";
    if (rc == FX_OK && gap != NULL) {
        fx_frame_id g;
        rc = native_frame(p, gap, NULL, FX_NATIVE_OTHER, &g);
        if (rc == FX_OK)
            rc = fx_profile_stack(p, *stack, g, stack);
    }
    for (uint32_t i = n; i-- > cut && rc == FX_OK;)
        rc = fx_profile_stack(p, *stack, f[i], stack);
    return rc;
}

int fx_native_below_push(struct fx_profile *p, struct fx_below *b, int32_t n, int32_t at,
                         fx_stack_id *stack)
{
    return below_push(p, b, n, at, stack, true);
}

/* The cpu/wall samples' tallies ("Native stacks") stay theirs: an allocation's are its own. */
int fx_native_alloc_below_push(struct fx_profile *p, struct fx_below *b, int32_t n, int32_t at,
                               fx_stack_id *stack)
{
    return below_push(p, b, n, at, stack, false);
}

void fx_native_frames_report(struct fx_profile *p)
{
    const char *g = "Native stacks";
    if (!fx_native_maps_enabled() && nf.frames == 0)
        return;
    fx_profile_extra_int(p, g, "samples with native frames", (int64_t)nf.with_frames);
    fx_profile_extra_int(p, g, "native frames", (int64_t)nf.frames);
    fx_profile_extra_detail(p, g, "samples whose leaf was Java code", (int64_t)nf.leaf_java);
    for (int i = 1; i < FX_NSTOP_COUNT; i++) {
        char label[120];
        snprintf(label, sizeof(label), "walk stopped: %s", stop_labels[i]);
        fx_profile_extra_detail(p, g, label, (int64_t)nf.stops[i]);
    }
    fx_profile_extra_detail(p, g, "addresses named: symbol table", (int64_t)nf.by_source[1]);
    fx_profile_extra_detail(p, g, "addresses named: separate debug file", (int64_t)nf.by_source[2]);
    fx_profile_extra_detail(p, g, "addresses named: dynamic symbols", (int64_t)nf.by_source[3]);
    fx_profile_extra_detail(p, g, "addresses named lib+offset (no symbol)",
                            (int64_t)nf.by_source[0]);
    fx_profile_extra_detail(p, g, "addresses no longer mapped", (int64_t)nf.unmapped);
    fx_profile_extra_loss(p, g, "addresses not resolved (no memory)", (int64_t)nf.errors);
    fx_profile_extra_detail(p, g, "address cache restarts (full)", (int64_t)nf.cache_resets);
    fx_profile_extra_int(p, g, "libraries named", (int64_t)fx_profile_lib_count(p));
    char ms[32];
    snprintf(ms, sizeof(ms), "%.3f ms", (double)nf.sym_ns / 1e6);
    fx_profile_extra_str(p, g, "symbol tables and naming: drain thread CPU time", ms);
    const struct fx_elfsym_cache_stats *cs = nf.sym != NULL ? fx_elfsym_cache_stats(nf.sym) : NULL;
    if (cs != NULL) {
        fx_profile_extra_detail(p, g, "symbol tables mapped from the cache (FXAGENT_CACHE)",
                                (int64_t)cs->loaded);
        fx_profile_extra_detail(p, g, "symbol tables written to the cache", (int64_t)cs->stored);
        if (cs->errors > 0)
            fx_profile_extra_str(p, g, "symbol table cache not used", cs->error);
    }
    fx_profile_extra_loss(p, g, "libraries not recorded (no memory)", (int64_t)nf.lib_errors);
    fx_profile_extra_detail(p, g, "addresses without a symbol named by their CFI function start",
                            (int64_t)nf.fde_named);
    fx_profile_extra_loss(p, g, "malformed records", (int64_t)nf.bad_records);
    fx_profile_extra_int(p, g, "samples walked below the Java frames", (int64_t)nf.below);
    fx_profile_extra_int(p, g, "native frames below or between Java frames",
                         (int64_t)nf.below_frames);
    fx_profile_extra_detail(p, g, "native segments between Java frames (JNI call-backs)",
                            (int64_t)nf.below_mid);
    fx_profile_extra_detail(p, g, "call stub frames (a segment's walk began in the call stub)",
                            (int64_t)nf.below_stubs);
    for (int i = 1; i < FX_NSTOP_COUNT; i++) {
        if (i == FX_NSTOP_JAVA)
            continue;
        char label[160];
        snprintf(label, sizeof(label), "walk below the Java frames stopped: %s",
                 i == FX_NSTOP_CHAIN_END ? "reached the thread's first frame (its start)"
                                         : stop_labels[i]);
        fx_profile_extra_detail(p, g, label, (int64_t)nf.below_stops[i]);
    }
    fx_profile_extra_loss(p, g, "walks whose frames between Java frames were not placed",
                          (int64_t)nf.below_unplaced);
    fx_native_maps_report(p, g);
}

void fx_native_frames_reset(void)
{
    memset(nf.stops, 0, sizeof(nf.stops));
    nf.leaf_java = nf.with_frames = nf.frames = nf.bad_records = 0;
    nf.resolved = nf.unmapped = nf.errors = nf.cache_resets = nf.lib_errors = 0;
    nf.below = nf.below_mid = nf.below_frames = nf.below_unplaced = 0;
    nf.sym_ns = 0;
    memset(nf.below_stops, 0, sizeof(nf.below_stops));
    memset(nf.by_source, 0, sizeof(nf.by_source));
}

void fx_native_frames_idle(void)
{
    fx_elfsym_free(nf.sym);
    nf.sym = NULL;
    nf.sym_failed = false;
    fx_free(nf.slots);
    nf.slots = NULL;
    nf.cap = nf.used = 0;
}
