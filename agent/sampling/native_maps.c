/* SPDX-License-Identifier: Apache-2.0 */
/* The text map the native walk checks every address against (issue 16, native_walk.c), outside
 * signal context: read from /proc/self/maps when sampling starts and again whenever walks met
 * addresses in no mapping (a library loaded; the code cache grown, to check native_walk.c's rule
 * that such an address is Java code), at most every
 * REREAD_NS, on the drain thread; published through the slot protocol of fx_textmap.h, whose
 * writer side is held under `lock` (a start on the control thread and the drain may both
 * refresh). Readers outside the handler (the model's symbolizer) use the same protocol.
 * cstack=dwarf: each refresh first builds the unwind tables walks asked for (native_unwind.c)
 * and, if any, re-reads and publishes at once, the tables set on the new map's entries; a wall
 * mode start asks for the C library's table at once (want_libc_locked).
 * Leaf module: calls the text map, native_unwind.c, base's clock and options only. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "native_walk.h"
#include "recover_anchor.h"

#define REREAD_NS 100000000 /* 100 ms */

static struct {
    pthread_mutex_t lock;
    int64_t last_read_ns;
    uint64_t seen_misses; /* fx_native.misses at the last read */
    uint64_t pass_misses; /* at the last fx_native_maps_refresh */
    uint64_t reads, read_errors, publish_busy;
    /* the oracle of native_walk.c's code cache rule: its last address, looked up in the map
     * re-read for it (anonymous executable memory: agreeing), at most every REREAD_NS */
    uint64_t seen_code_cache, cc_agree, cc_differ;
    char error[200]; /* the last read's error, "" if none */
} nm = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Under lock: reads the maps and publishes them; a failed read keeps the current table. With
 * cc (not 0), an address the walk took as code committed since the map was read: the new map
 * must show it in anonymous executable memory (the code cache), counted either way. */
static void reread_locked(uintptr_t cc)
{
    struct fx_errbuf eb = {{0}};
    struct fx_textmap *t = NULL;
    nm.last_read_ns = fx_now_ns();
    nm.seen_misses = __atomic_load_n(&fx_native.misses, __ATOMIC_RELAXED);
    nm.seen_code_cache = __atomic_load_n(&fx_native.code_cache, __ATOMIC_RELAXED);
    if (fx_textmap_read("/proc/self/maps", &t, &eb) != FX_OK) {
        nm.read_errors++;
        snprintf(nm.error, sizeof(nm.error), "%s", eb.msg);
        return;
    }
    nm.reads++;
    if (cc != 0) {
        const struct fx_textmap_entry *e = fx_textmap_lookup_sigsafe(t, cc);
        if (e != NULL && e->kind == FX_TEXTMAP_ANON)
            nm.cc_agree++;
        else
            nm.cc_differ++;
    }
    fx_native_unwind_attach(t);
    if (fx_textmap_slot_publish(&fx_native.maps, t) != FX_OK) {
        nm.publish_busy++; /* the previous table still has readers: next time */
        fx_textmap_free(t);
    }
}

/* Wall mode, cstack=dwarf: nearly every sample's leaf is a system call wrapper of the C library
 * (futex, poll, read), which keeps no frame pointer; its rbp is usually the caller's caller's
 * frame, so the frame-pointer step does not fail, asks for no table and hides libjvm's waiting
 * frames (Parker::park under Unsafe.park). So the library holding read(2) gets its table at the
 * first drain (~20 ms once per process, docs/BENCHMARKS.md "Wall mode with native frames"). */
static void want_libc_locked(void)
{
    uint32_t ticket;
    const struct fx_textmap *cur = fx_textmap_slot_enter_sigsafe(&fx_native.maps, &ticket);
    const struct fx_textmap_entry *e =
            cur != NULL ? fx_textmap_lookup_sigsafe(cur, (uintptr_t)&read) : NULL;
    if (e != NULL && e->kind == FX_TEXTMAP_FILE && e->cfi == NULL)
        fx_native_want_sigsafe(e);
    fx_textmap_slot_leave_sigsafe(&fx_native.maps, ticket);
}

void fx_native_maps_start(void)
{
    const struct fx_options *o = fx_opt();
    bool on = o->cstack != FX_CSTACK_NO; /* every mode, wall included (issue 16) */
    bool dwarf = on && o->cstack == FX_CSTACK_DWARF;
    __atomic_store_n(&fx_native.dwarf, dwarf, __ATOMIC_RELEASE);
    pthread_mutex_lock(&nm.lock);
    if (on)
        reread_locked(0);
    if (dwarf && o->mode == FX_MODE_WALL)
        want_libc_locked();
    pthread_mutex_unlock(&nm.lock);
    __atomic_store_n(&fx_native.enabled, on, __ATOMIC_RELEASE);
}

bool fx_native_maps_refresh(void)
{
    if (!__atomic_load_n(&fx_native.enabled, __ATOMIC_ACQUIRE))
        return false;
    pthread_mutex_lock(&nm.lock);
    fx_textmap_slot_reclaim(&fx_native.maps);
    uint64_t misses = __atomic_load_n(&fx_native.misses, __ATOMIC_RELAXED);
    uint32_t ticket;
    const struct fx_textmap *cur = fx_textmap_slot_enter_sigsafe(&fx_native.maps, &ticket);
    bool built = cur != NULL && fx_native_unwind_take_wants(cur);
    fx_textmap_slot_leave_sigsafe(&fx_native.maps, ticket);
    bool due = fx_now_ns() - nm.last_read_ns >= REREAD_NS;
    bool cc = due && __atomic_load_n(&fx_native.code_cache, __ATOMIC_RELAXED) != nm.seen_code_cache;
    if (built || cc || (misses != nm.seen_misses && due))
        reread_locked(cc ? __atomic_load_n(&fx_native.code_cache_last, __ATOMIC_RELAXED) : 0);
    bool waits = built || misses != nm.pass_misses;
    nm.pass_misses = misses;
    pthread_mutex_unlock(&nm.lock);
    return waits;
}

const struct fx_textmap *fx_native_maps_enter(uint32_t *ticket)
{
    return fx_textmap_slot_enter_sigsafe(&fx_native.maps, ticket);
}

void fx_native_maps_leave(uint32_t ticket)
{
    fx_textmap_slot_leave_sigsafe(&fx_native.maps, ticket);
}

bool fx_native_maps_enabled(void)
{
    return __atomic_load_n(&fx_native.enabled, __ATOMIC_RELAXED) != 0;
}

/* The oracle of a rule claiming the top frame of the walk below (native_below.c): its walks by
 * where they ended, the thread's first frame (every frame under the claimed one proven) or not */
static void walks_from(struct fx_profile *p, const char *g, const char *top, const uint64_t *root,
                       const uint64_t *cut)
{
    char label[160];
    snprintf(label, sizeof(label), "walks below from %s: to the thread's first frame", top);
    fx_profile_extra_detail(p, g, label, (int64_t)__atomic_load_n(root, __ATOMIC_RELAXED));
    snprintf(label, sizeof(label), "walks below from %s: stopped", top);
    fx_profile_extra_detail(p, g, label, (int64_t)__atomic_load_n(cut, __ATOMIC_RELAXED));
}

void fx_native_maps_report(struct fx_profile *p, const char *g)
{
    pthread_mutex_lock(&nm.lock);
    fx_profile_extra_int(p, g, "text map reads (/proc/self/maps)", (int64_t)nm.reads);
    fx_profile_extra_loss(p, g, "text map read failures", (int64_t)nm.read_errors);
    if (nm.error[0] != '\0')
        fx_profile_extra_str(p, g, "text map last read error", nm.error);
    fx_profile_extra_detail(p, g, "text map publishes deferred (readers of the old one)",
                            (int64_t)nm.publish_busy);
    fx_profile_extra_detail(p, g, "addresses in no mapping (re-read the map)",
                            (int64_t)__atomic_load_n(&fx_native.misses, __ATOMIC_RELAXED));
    fx_profile_extra_detail(p, g,
                            "addresses in no mapping but in the code cache (committed since the "
                            "map was read): Java code",
                            (int64_t)__atomic_load_n(&fx_native.code_cache, __ATOMIC_RELAXED));
    fx_profile_extra_detail(p, g,
                            "of those, checked in the map re-read for them: anonymous executable "
                            "memory (the code cache)",
                            (int64_t)nm.cc_agree);
    fx_profile_extra_loss(p, g, "of those, checked in the map re-read for them: elsewhere",
                          (int64_t)nm.cc_differ);
    walks_from(p, g, "a C1 OSR frame before its OSR entry", &fx_native.osr_pre_root,
               &fx_native.osr_pre_cut);
    walks_from(p, g, "a C2 frame after a byte 0x50-0x57, decoded as no push",
               &fx_native.c2_lone_root, &fx_native.c2_lone_cut);
    fx_profile_extra_detail(p, g,
                            "walks below from a C2 frame after a byte 0x50-0x57: its frame refused",
                            (int64_t)__atomic_load_n(&fx_native.c2_lone_refused, __ATOMIC_RELAXED));
    /* enum fx_seg_stop's order (recover_anchor.h), FX_SEG_CALL_STUB (0) never such a root */
    static const char *const seg_stop[] = {NULL,
                                           "a pc in no code range",
                                           "an nmethod replaced (compile id) or unnamed",
                                           "the top frame's pc not in a method body (refused)",
                                           "a frame size or stack word not usable",
                                           "a stub other than the call stub",
                                           "the most frames walked",
                                           "the sender's sp not above the frame's",
                                           "the top in a stub the VM or native code called "
                                           "(the frames up to the last Java frame not walked)"};
    _Static_assert(sizeof(seg_stop) / sizeof(seg_stop[0]) == FX_SEG_STOPS, "a label for each");
    for (size_t i = 1; i < sizeof(seg_stop) / sizeof(seg_stop[0]); i++) {
        char label[224];
        snprintf(label, sizeof(label),
                 "walks below rooted at \"Java frames not walked to the call stub\": %s",
                 seg_stop[i]);
        fx_profile_extra_detail(p, g, label,
                                (int64_t)__atomic_load_n(&fx_native.no_entry[i], __ATOMIC_RELAXED));
    }
    walks_from(p, g, "a method handle intrinsic (frameless nmethod), its caller's call proven",
               &fx_native.mh_root, &fx_native.mh_cut);
    fx_native_unwind_report(p, g);
    pthread_mutex_unlock(&nm.lock);
}

/* The map's reads and failures of this recording; the map itself, its last error and the
 * misses (seen_misses compares against them) stay. */
void fx_native_maps_new_recording(void)
{
    pthread_mutex_lock(&nm.lock);
    nm.reads = nm.read_errors = nm.publish_busy = nm.cc_agree = nm.cc_differ = 0;
    __atomic_store_n(&fx_native.osr_pre_root, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&fx_native.osr_pre_cut, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&fx_native.c2_lone_root, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&fx_native.c2_lone_cut, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&fx_native.c2_lone_refused, 0, __ATOMIC_RELAXED);
    for (size_t i = 0; i < sizeof(fx_native.no_entry) / sizeof(fx_native.no_entry[0]); i++)
        __atomic_store_n(&fx_native.no_entry[i], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&fx_native.mh_root, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&fx_native.mh_cut, 0, __ATOMIC_RELAXED);
    fx_native_unwind_new_recording();
    pthread_mutex_unlock(&nm.lock);
}
