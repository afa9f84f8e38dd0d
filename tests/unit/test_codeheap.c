/* SPDX-License-Identifier: Apache-2.0 */
/* unit.codeheap: the handler's code heap lookup (agent/sampling/codeheap_sig.c, issue 32) on
 * fakes of HotSpot's structures in this process (read directly inside the committed ranges,
 * else by process_vm_readv on itself, as in a JVM): the CodeHeaps published -> CodeHeap
 * (memory, segment map) -> HeapBlock -> an "nmethod" blob -> its Method* -> jmethodID. A pc
 * anywhere in the code gives the range a CompiledMethodLoad would; each broken link (a free
 * segment, a free block, another blob kind, pc outside the code, no jmethodID, a heap that does not
 * hold pc) gives nothing. And the hand-off of what it found to the drain (codeheap_found.c,
 * codemap=heap). A method handle intrinsic's nmethod named by MethodHandle's declared
 * method (8.5l). */
#include <check.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "codeheap.h"
#include "fake_method.h"

#define SHIFT 6    /* 64-byte segments */
#define SEGS  1024 /* room for a block longer than one map byte's step */
#define BLOCK 2    /* the nmethod's block: segments 2..6 */
#define NSEG  5

static _Alignas(64) unsigned char mem[SEGS << SHIFT];
static unsigned char segmap[SEGS];
static _Alignas(8) unsigned char heap[40];
static const char nm_name[] = "nmethod", stub_name[] = "BufferBlob",
                  native_name[] = "native nmethod";

static unsigned char *blob(void)
{
    return mem + (BLOCK << SHIFT) + 16;
}

/* The fakes, and the layouts that describe them. */
static void fakes(struct fx_codeheap_layout *l, struct fx_interp_layout *il)
{
    memset(segmap, 0xFF, sizeof(segmap));
    for (int i = 0; i < NSEG; i++)
        segmap[BLOCK + i] = (unsigned char)(i == 0 ? 0 : (i > 2 ? 2 : i)); /* steps of 1-2 */
    uintptr_t low = (uintptr_t)mem, block = low + (BLOCK << SHIFT);
    put(heap, 0, low, 8);
    put(heap, 8, low + sizeof(mem), 8);
    put(heap, 16, (uintptr_t)segmap, 8);
    put(heap, 24, SHIFT, 4);
    put(heap, 32, (uintptr_t)segmap + sizeof(segmap), 8); /* the map committed: all of it */
    put(mem, BLOCK << SHIFT, NSEG, 8);                    /* HeapBlock: _length, _used */
    mem[(BLOCK << SHIFT) + 8] = 1;
    unsigned char *b = blob();
    uintptr_t code = (uintptr_t)b + 80, end = block + (NSEG << SHIFT) - 16;
    put(b, 0, (uintptr_t)nm_name, 8);
    put(b, 8, code, 8);           /* _code_begin */
    put(b, 16, end, 8);           /* _code_end */
    put(b, 24, 20, 4);            /* _frame_complete_offset */
    put(b, 28, 6, 4);             /* _frame_size */
    put(b, 32, code + 8, 8);      /* _verified_entry_point */
    put(b, 40, 77, 4);            /* _compile_id */
    put(b, 44, (uintptr_t)-1, 4); /* _entry_bci */
    put(b, 48, 4, 4);             /* _comp_level: C2 */
    put(b, 56, (uintptr_t)f_method, 8);
    put(b, 64, 0, 8);  /* _osr_entry_point: none */
    b[72] = 0;         /* _state: in_use */
    put(b, 76, 40, 4); /* _stub_offset */
    *l = (struct fx_codeheap_layout){.pid = (int32_t)getpid(),
                                     .lo = (uintptr_t)mem - 4096,
                                     .hi = (uintptr_t)mem + 8192,
                                     .heap = {(uintptr_t)heap},
                                     .n_heaps = 1,
                                     .mem_low = 0,
                                     .mem_high = 8,
                                     .seg_low = 16,
                                     .seg_high = 32,
                                     .log2_seg = 24,
                                     .block_size = 16,
                                     .block_len = 0,
                                     .len_width = 8,
                                     .block_used = 8,
                                     .name = 0,
                                     .code_begin = 8,
                                     .code_offset = -1,
                                     .code_end = 16,
                                     .data_offset = -1,
                                     .frame_complete = 24,
                                     .fc_width = 4,
                                     .frame_size = 28,
                                     .vep = 32,
                                     .vep_offset = -1,
                                     .compile_id = 40,
                                     .entry_bci = 44,
                                     .comp_level = 48,
                                     .level_width = 4,
                                     .method = 56,
                                     .osr_entry = 64,
                                     .state = 72,
                                     .live_max = 1,
                                     .stub_offset = 76,
                                     .header = 80,
                                     .reread = 73};
    *il = fake_method_chain();
}

START_TEST(test_finds_the_nmethod)
{
    struct fx_codeheap_layout l;
    struct fx_interp_layout il;
    fakes(&l, &il);
    uintptr_t code = (uintptr_t)blob() + 80, end = (uintptr_t)mem + ((BLOCK + NSEG) << SHIFT) - 16;
    uintptr_t pcs[] = {code, code + 8, code + 200, end - 1};
    for (size_t i = 0; i < sizeof(pcs) / sizeof(pcs[0]); i++) {
        struct fx_code_range r;
        ck_assert(fx_codeheap_find_sigsafe(&l, &il, pcs[i], &r));
        ck_assert_uint_eq(r.begin, code);
        ck_assert_uint_eq(r.end, end);
        ck_assert_uint_eq(r.blob, (uintptr_t)blob());
        ck_assert_uint_eq(r.name, (uintptr_t)&f_slot); /* the jmethodID */
        ck_assert_uint_eq(r.verified, 8);
        ck_assert_uint_eq(r.complete, 20);
        ck_assert_int_eq(r.compile_id, 77);
        ck_assert_int_eq(r.frame_words, 6);
        ck_assert_uint_eq(r.level, 4);
        ck_assert_uint_eq(r.kind, FX_BLOB_NMETHOD);
        ck_assert_uint_eq(r.flags, FX_RANGE_SELF_INLINE);
    }
    /* an OSR compilation: its OSR entry's offset, for recover.c's OSR rule */
    put(blob(), 44, 12, 4);
    put(blob(), 64, code + 24, 8);
    struct fx_code_range r;
    ck_assert(fx_codeheap_find_sigsafe(&l, &il, code + 30, &r));
    ck_assert_uint_eq(r.verified, 24);
    ck_assert_uint_eq(r.complete, FX_OFF_UNKNOWN);
    ck_assert_uint_eq(r.flags, FX_RANGE_SELF_INLINE | FX_RANGE_OSR);
    put(blob(), 64, 0, 8); /* no OSR entry inside the code: no rule */
    ck_assert(fx_codeheap_find_sigsafe(&l, &il, code + 30, &r));
    ck_assert_uint_eq(r.verified, FX_OFF_UNKNOWN);
    ck_assert_uint_eq(r.flags, FX_RANGE_SELF_INLINE);
    /* a method handle intrinsic (8.5l): a native nmethod, frame size 0, level 0, not OSR:
     * marked frameless, as codemap.c marks it at CompiledMethodLoad (codemap=heap's only range) */
    put(blob(), 44, (uintptr_t)-1, 4);
    put(blob(), 28, 0, 4);
    put(blob(), 48, 0, 4);
    ck_assert(fx_codeheap_find_sigsafe(&l, &il, code + 30, &r));
    ck_assert_uint_eq(r.flags, FX_RANGE_SELF_INLINE); /* an nmethod, not a native one */
    put(blob(), 0, (uintptr_t)native_name, 8);
    ck_assert(fx_codeheap_find_sigsafe(&l, &il, code + 30, &r));
    ck_assert_uint_eq(r.flags, FX_RANGE_SELF_INLINE | FX_RANGE_FRAMELESS);
    put(blob(), 48, 4, 4); /* a level read as 4: not so marked */
    ck_assert(fx_codeheap_find_sigsafe(&l, &il, code + 30, &r));
    ck_assert_uint_eq(r.flags, FX_RANGE_SELF_INLINE);
    put(blob(), 0, (uintptr_t)nm_name, 8);
    put(blob(), 28, 6, 4);
}
END_TEST

START_TEST(test_refuses_what_is_not_proven)
{
    struct fx_codeheap_layout l;
    struct fx_interp_layout il;
    struct fx_code_range r;
    uintptr_t code = (uintptr_t)blob() + 80;
    fakes(&l, &il);
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, (uintptr_t)mem + 10, &r));   /* free segment */
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, (uintptr_t)mem - 64, &r));   /* not in a heap */
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, (uintptr_t)mem + 8192, &r)); /* not in the cache */
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, (uintptr_t)blob() + 8, &r)); /* the header */
    struct fx_interp_layout none = il;
    none.pid = 0;
    ck_assert(!fx_codeheap_find_sigsafe(&l, &none, code, &r)); /* no Method* chain */
    mem[(BLOCK << SHIFT) + 8] = 0;
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, code, &r)); /* a free block */
    fakes(&l, &il);
    put(blob(), 0, (uintptr_t)stub_name, 8);
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, code, &r)); /* another kind of blob */
    fakes(&l, &il);
    f_slot = (uintptr_t)f_cp;
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, code, &r)); /* jmethodID of another Method* */
    fakes(&l, &il);
    put(blob(), 56, 8, 8);
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, code, &r)); /* an unreadable Method* */
    fakes(&l, &il);
    segmap[BLOCK + 1] = 0xFF;
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, code + 150, &r)); /* a free segment on the way */
    fakes(&l, &il);
    l.n_heaps = 0;
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, code, &r)); /* no heap published */
    fakes(&l, &il);
    put(heap, 32, (uintptr_t)segmap + BLOCK + 2, 8); /* the map committed up to segment 3 */
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, code + 150, &r)); /* segment 5: past it */
    ck_assert(fx_codeheap_find_sigsafe(&l, &il, code + 8, &r));    /* segment 3 */
    put(heap, 32, (uintptr_t)segmap, 8);
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, code, &r)); /* no map committed */
    fakes(&l, &il);
    /* nmethod::_state: live only in use or not entrant (JDK 25: 0, 1; JDK 17: 0-2); a freed
     * block keeps its header in product builds, so the state says what the header cannot */
    blob()[72] = 1; /* JDK 25's not_entrant: its frames still run */
    ck_assert(fx_codeheap_find_sigsafe(&l, &il, code, &r));
    blob()[72] = 2; /* JDK 17's not_entrant, past JDK 25's states */
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, code, &r));
    l.live_max = 2;
    ck_assert(fx_codeheap_find_sigsafe(&l, &il, code, &r));
    blob()[72] = 3; /* JDK 17's zombie */
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, code, &r));
    blob()[72] = 4; /* unloaded */
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, code, &r));
    blob()[72] = 0xFF; /* -1: not installed yet */
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, code, &r));
    fakes(&l, &il);
    ck_assert(fx_codeheap_find_sigsafe(&l, &il, code, &r));
}
END_TEST

/* The heap's memory is read directly where a committed range read in the lookup holds it
 * (session 25): a page past the committed map or code, unreadable here, is never touched: a
 * pc whose map byte lies past _segmap._high, a block at the code's committed end too short for
 * the blob's header it would be read with. Either read, made, would end this test's process. */
START_TEST(test_reads_stay_committed)
{
    struct fx_codeheap_layout l;
    struct fx_interp_layout il;
    struct fx_code_range r;
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char *code =
            mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned char *map =
            mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert(code != MAP_FAILED && map != MAP_FAILED);
    ck_assert_int_eq(mprotect(code + pg, pg, PROT_NONE), 0);
    ck_assert_int_eq(mprotect(map + pg, pg, PROT_NONE), 0);
    fakes(&l, &il);
    static _Alignas(8) unsigned char h[40];
    size_t segs = pg >> SHIFT;
    put(h, 0, (uintptr_t)code, 8);
    put(h, 8, (uintptr_t)code + pg, 8); /* the code committed: one page */
    put(h, 16, (uintptr_t)map + pg - segs / 2, 8);
    put(h, 24, SHIFT, 4);
    put(h, 32, (uintptr_t)map + pg, 8); /* the map committed: half the page's segments */
    l.heap[0] = (uintptr_t)h;
    l.lo = (uintptr_t)code;
    l.hi = (uintptr_t)code + 2 * pg;
    memset(map + pg - segs / 2, 0, segs / 2); /* every committed segment a block's first */
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, (uintptr_t)code + pg - 8, &r));
    put(h, 16, (uintptr_t)map + pg - segs, 8); /* the whole map committed */
    memset(map + pg - segs, 0, segs);
    uintptr_t last = (uintptr_t)code + pg - (1u << SHIFT); /* a used block of one segment */
    put(code, pg - (1u << SHIFT), 1, 8);
    code[pg - (1u << SHIFT) + 8] = 1;
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, last + 40, &r));
    munmap(code, 2 * pg);
    munmap(map, 2 * pg);
}
END_TEST

/* 8.5l under codemap=heap: a method handle intrinsic's nmethod (a native one, frame size 0,
 * level 0) whose Method* is HotSpot's own (idnum 0: the jmethodID there names another Method*)
 * is named by MethodHandle's declared method of its intrinsic id (interp_frame.h's table), and
 * marked frameless; without the table, or when its holder, its native flag, its intrinsic id or
 * the shape does not match, it is refused as before. */
static _Alignas(16) unsigned char mh_method[88], mh_cm[56];
#define IID_OFF 48 /* Method::_intrinsic_id in the fakes (u2) */
#define IID     50

START_TEST(test_names_mh_intrinsic)
{
    struct fx_codeheap_layout l;
    struct fx_interp_layout il;
    struct fx_code_range r;
    fakes(&l, &il);
    uintptr_t code = (uintptr_t)blob() + 80, declared = (uintptr_t)&f_slot;
    put(mh_method, 8, (uintptr_t)mh_cm, 8);
    put(mh_method, 44, 0x0100 | 0x1000 | 0x0010, 2); /* native, synthetic, final */
    put(mh_method, IID_OFF, IID, 2);
    put(mh_cm, 8, (uintptr_t)f_cp, 8); /* its constant pool's holder: MethodHandle's */
    put(mh_cm, 40, 0, 2);              /* idnum 0 */
    f_ids[1] = declared;               /* idnum 0's jmethodID: the declared method's */
    put(blob(), 0, (uintptr_t)native_name, 8);
    put(blob(), 28, 0, 4); /* frame size 0 */
    put(blob(), 48, 0, 4); /* level 0 */
    put(blob(), 56, (uintptr_t)mh_method, 8);
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, code + 30, &r)); /* no table: refused */
    il.mh = (struct fx_mh_names){.ready = 1,
                                 .intrinsic_id = IID_OFF,
                                 .holder = (uintptr_t)f_ik,
                                 .n = 2,
                                 .iid = {IID + 1, IID},
                                 .id = {0x1234, declared}};
    ck_assert(fx_codeheap_find_sigsafe(&l, &il, code + 30, &r));
    ck_assert_uint_eq(r.name, declared);
    ck_assert_uint_eq(r.flags, FX_RANGE_SELF_INLINE | FX_RANGE_FRAMELESS);
    ck_assert_int_eq(r.compile_id, 77);
    ck_assert_int_eq(r.frame_words, 0);
    ck_assert_uint_eq(r.level, 0);
    struct fx_interp_layout off = il;
    off.mh.ready = 0;
    ck_assert(!fx_codeheap_find_sigsafe(&l, &off, code + 30, &r)); /* not published */
    off = il;
    off.mh.holder = (uintptr_t)f_cp;
    ck_assert(!fx_codeheap_find_sigsafe(&l, &off, code + 30, &r)); /* another holder */
    off = il;
    off.mh.iid[1] = IID + 2;
    ck_assert(!fx_codeheap_find_sigsafe(&l, &off, code + 30, &r)); /* an id not in the table */
    off = il;
    off.mh.id[1] = 8;
    ck_assert(!fx_codeheap_find_sigsafe(&l, &off, code + 30, &r)); /* an unreadable jmethodID */
    put(mh_method, IID_OFF, 0, 2);
    off = il;
    off.mh.iid[1] = 0;
    ck_assert(!fx_codeheap_find_sigsafe(&l, &off, code + 30, &r)); /* no intrinsic id */
    put(mh_method, IID_OFF, IID, 2);
    put(mh_method, 44, 0x1000 | 0x0010, 2);
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, code + 30, &r)); /* not native */
    put(mh_method, 44, 0x0100 | 0x1000 | 0x0010, 2);
    put(blob(), 28, 6, 4);
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, code + 30, &r)); /* a frame: not the shape */
    put(blob(), 28, 0, 4);
    put(blob(), 48, 1, 4);
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, code + 30, &r)); /* a tier: not the shape */
    put(blob(), 48, 0, 4);
    put(blob(), 44, 12, 4);
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, code + 30, &r)); /* OSR: not the shape */
    put(blob(), 44, (uintptr_t)-1, 4);
    put(blob(), 0, (uintptr_t)nm_name, 8);
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, code + 30, &r)); /* not a native nmethod */
    put(blob(), 0, (uintptr_t)native_name, 8);
    ck_assert(fx_codeheap_find_sigsafe(&l, &il, code + 30, &r)); /* all put back */
    /* a declared Method* keeps its own jmethodID, whatever the table says */
    put(blob(), 56, (uintptr_t)f_method, 8);
    ck_assert(fx_codeheap_find_sigsafe(&l, &il, code + 30, &r));
    ck_assert_uint_eq(r.name, declared);
    f_ids[1] = 0;
}
END_TEST

/* HotSpot's marking of a used block's segments (CodeHeap::mark_segmap_as_used, no join): 0 at
 * its first, then 1, 2, ... 254 and again 1, 2, ...: each step back lands on a 0 or a 254. */
static void mark(size_t beg, size_t end)
{
    segmap[beg] = 0;
    for (size_t i = beg + 1; i < end; i++)
        segmap[i] = (unsigned char)(1 + (i - beg - 1) % 254);
}

/* A block longer than 255 segments, two free blocks joined into it (the second's first segment
 * a hop onto the first's chain), and a free segment in the chain's middle (refused). */
START_TEST(test_segment_map_encodings)
{
    struct fx_codeheap_layout l;
    struct fx_interp_layout il;
    struct fx_code_range r;
    const size_t n = 600, join = 300;
    fakes(&l, &il);
    l.hi = (uintptr_t)mem + sizeof(mem);
    uintptr_t block = (uintptr_t)mem + (BLOCK << SHIFT), code = (uintptr_t)blob() + 80;
    mark(BLOCK, BLOCK + n);
    put(mem, BLOCK << SHIFT, n, 8);
    put(blob(), 16, block + (n << SHIFT) - 16, 8); /* _code_end */
    const size_t at[] = {1, 253, 254, 255, 256, 509, 510, 599};
    for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
        ck_assert(fx_codeheap_find_sigsafe(&l, &il, block + (at[i] << SHIFT) + 40, &r));
        ck_assert_uint_eq(r.begin, code);
    }
    mark(BLOCK + join, BLOCK + n); /* the second free block, joined: its 0 becomes a hop */
    unsigned char before = segmap[BLOCK + join - 1];
    segmap[BLOCK + join] = (unsigned char)(before < 254 ? before + 1 : 1);
    for (size_t s = join - 1; s < n; s += 50) {
        ck_assert(fx_codeheap_find_sigsafe(&l, &il, block + (s << SHIFT), &r));
        ck_assert_uint_eq(r.begin, code);
    }
    segmap[BLOCK + 254] = 0xFF; /* free, in the chain of every segment past it */
    ck_assert(!fx_codeheap_find_sigsafe(&l, &il, block + (400 << SHIFT), &r));
    ck_assert(fx_codeheap_find_sigsafe(&l, &il, block + (200 << SHIFT), &r)); /* before it */
}
END_TEST

/* The walks' lookup: the table first, then the code heaps where the table has the layouts; a
 * sample's memo reuses the nmethods it found and refuses lookups past FX_HEAP_BUDGET. */
START_TEST(test_find_any)
{
    struct fx_codeheap_layout l;
    struct fx_interp_layout il;
    fakes(&l, &il);
    static _Alignas(struct fx_code_table) unsigned char
            tm[sizeof(struct fx_code_table) + sizeof(struct fx_code_range)];
    struct fx_code_table *t = (struct fx_code_table *)tm;
    uint64_t found = 0, lookups = 0, refused = 0;
    uintptr_t code = (uintptr_t)blob() + 80;
    t->n = 1;
    t->r[0] = (struct fx_code_range){
            .begin = (uintptr_t)mem, .end = (uintptr_t)mem + 64, .kind = FX_BLOB_STUB};
    struct fx_heap_memo m = {.lookups = 0};
    ck_assert_ptr_null(fx_recover_find_any(t, code, &m)); /* no layouts in the table */
    t->heap = &l;
    t->il = &il;
    ck_assert_ptr_null(fx_recover_find_any(t, code, NULL)); /* no memo: the table alone */
    t->found = &found;
    t->lookups = &lookups;
    t->refused = &refused;
    ck_assert_ptr_eq(fx_recover_find_any(t, (uintptr_t)mem + 8, &m), &t->r[0]);
    ck_assert_uint_eq(found, 0);
    ck_assert_uint_eq(m.lookups, 0);
    ck_assert_ptr_eq(fx_recover_find_any(t, code + 4, &m), &m.kept[0]);
    ck_assert_uint_eq(m.kept[0].begin, code);
    ck_assert_uint_eq(found, 1);
    ck_assert_uint_eq(m.lookups, 1);
    ck_assert_ptr_null(fx_recover_find_any(t, (uintptr_t)mem + 9000, &m)); /* outside the cache */
    ck_assert_uint_eq(m.lookups, 1);                                       /* not charged */
    /* a recursion: every frame's pc in the nmethod found last, looked up once per sample */
    for (int i = 0; i < 100; i++)
        ck_assert_ptr_eq(fx_recover_find_any(t, code + 8 + (uintptr_t)i, &m), &m.kept[0]);
    ck_assert_uint_eq(m.lookups, 1);
    ck_assert_uint_eq(lookups, 1);
    /* pcs in no nmethod: each a lookup, until the budget; then refused, counted */
    for (uint32_t i = 1; i < FX_HEAP_BUDGET; i++)
        ck_assert_ptr_null(fx_recover_find_any(t, (uintptr_t)mem + 640 + i, &m));
    ck_assert_uint_eq(m.lookups, FX_HEAP_BUDGET);
    ck_assert_ptr_null(fx_recover_find_any(t, (uintptr_t)mem + 100, &m));
    ck_assert_uint_eq(m.refused, 1);
    ck_assert_uint_eq(refused, 1);
    ck_assert_uint_eq(lookups, FX_HEAP_BUDGET);
    ck_assert_ptr_eq(fx_recover_find_any(t, code, &m), &m.kept[0]); /* the memo is no lookup */
    struct fx_heap_memo fresh = {.lookups = 0};                     /* the next sample's */
    m.kept[0].end = 0;
    ck_assert_ptr_null(fx_recover_find_any(t, code, &m));
    ck_assert_ptr_eq(fx_recover_find_any(t, code, &fresh), &fresh.kept[0]);
    /* session 17: a table range whose memory holds another compilation now (the compile id at
     * its blob differs: freed and reused before the drain published the Unload) gives way to
     * the code heaps' nmethod; a current one is the table's, no lookup; where no lookup can be
     * made the table's stays (its caller's compile id check refuses it, as before) */
    t->r[0] = (struct fx_code_range){.begin = code,
                                     .end = code + 64,
                                     .blob = (uintptr_t)blob(),
                                     .compile_id = 76,
                                     .kind = FX_BLOB_NMETHOD};
    struct fx_heap_memo a = {.lookups = 0}, b = {.lookups = 0};
    ck_assert_ptr_eq(fx_recover_find_any(t, code + 4, &a), &a.kept[0]);
    ck_assert_int_eq(a.kept[0].compile_id, 77);
    ck_assert_uint_eq(a.lookups, 1);
    ck_assert_ptr_eq(fx_recover_find_any(t, code + 4, NULL), &t->r[0]);
    b.lookups = FX_HEAP_BUDGET;
    ck_assert_ptr_eq(fx_recover_find_any(t, code + 4, &b), &t->r[0]);
    ck_assert_uint_eq(b.refused, 1);
    t->r[0].compile_id = 77;
    b = (struct fx_heap_memo){.lookups = 0};
    ck_assert_ptr_eq(fx_recover_find_any(t, code + 4, &b), &t->r[0]);
    ck_assert_uint_eq(b.lookups, 0);
    /* session 25: the nmethod freed, its header (compile id 77) left in place: the table's
     * range is never returned, with or without a lookup; the code heaps refuse the free block */
    unsigned char *used = blob() - 16 + 8, was = *used;
    ck_assert_uint_ne(was, 0);
    *used = 0;
    b = (struct fx_heap_memo){.lookups = 0};
    ck_assert_ptr_null(fx_recover_find_any(t, code + 4, &b));
    ck_assert_uint_eq(b.lookups, 1);
    ck_assert_ptr_null(fx_recover_find_any(t, code + 4, NULL));
    *used = was;
    blob()[72] = 2; /* a state past the live ones (zombie, unloaded) */
    b = (struct fx_heap_memo){.lookups = 0};
    ck_assert_ptr_null(fx_recover_find_any(t, code + 4, &b));
    ck_assert_ptr_null(fx_recover_find_any(t, code + 4, NULL));
    blob()[72] = 0;
    b = (struct fx_heap_memo){.lookups = 0};
    ck_assert_ptr_eq(fx_recover_find_any(t, code + 4, &b), &t->r[0]); /* live again */
    ck_assert_uint_eq(b.lookups, 0);
}
END_TEST

/* The fakes, and an empty code table over them that counts into found, lookups, refused. */
static struct fx_code_table *heap_table(struct fx_codeheap_layout *l, struct fx_interp_layout *il,
                                        uint64_t *found, uint64_t *lookups, uint64_t *refused)
{
    fakes(l, il);
    static _Alignas(struct fx_code_table) unsigned char tm[sizeof(struct fx_code_table)];
    struct fx_code_table *t = (struct fx_code_table *)tm;
    *t = (struct fx_code_table){
            .heap = l, .il = il, .found = found, .lookups = lookups, .refused = refused};
    return t;
}

/* A copy of the fake nmethod in the block at segment `at` (its header's addresses moved with
 * it, its own compile id): its code's begin. */
static uintptr_t clone_nmethod(size_t at, int32_t cid)
{
    uintptr_t delta = (at - BLOCK) << SHIFT;
    memcpy(mem + (at << SHIFT), mem + (BLOCK << SHIFT), NSEG << SHIFT);
    memcpy(segmap + at, segmap + BLOCK, NSEG);
    unsigned char *b = blob() + delta;
    static const size_t moved[] = {8, 16, 32}; /* _code_begin, _code_end, the verified entry */
    for (size_t i = 0; i < 3; i++) {
        uintptr_t v;
        memcpy(&v, b + moved[i], 8);
        put(b, moved[i], v + delta, 8);
    }
    put(b, 40, (uintptr_t)cid, 4);
    return (uintptr_t)b + 80;
}

/* Session 26 (scalac 17's main thread: a deep mutual recursion through methods compiled since
 * the table, typed -> typed1 -> typedApply -> typed): a walk alternating between several found
 * nmethods over many frames makes one lookup per distinct nmethod, not one per frame (the memo
 * kept only the last: the budget ran out, the walk stopped). A kept nmethod is checked again at
 * each reuse: replaced (another compile id at its blob) or freed, it is looked up anew. */
START_TEST(test_memo_keeps_several)
{
    struct fx_codeheap_layout l;
    struct fx_interp_layout il;
    uint64_t found = 0, lookups = 0, refused = 0;
    struct fx_code_table *t = heap_table(&l, &il, &found, &lookups, &refused);
    uintptr_t code[4] = {(uintptr_t)blob() + 80};
    for (int j = 1; j < 4; j++)
        code[j] = clone_nmethod(BLOCK + 8 * (size_t)j, 77 + j);
    struct fx_heap_memo m = {.lookups = 0};
    for (int f = 0; f < 200; f++) { /* frames: 0 1 2 3 0 1 2 3 ..., each at its own call */
        const struct fx_code_range *r = fx_recover_find_any(t, code[f % 4] + 8 + (f % 50), &m);
        ck_assert_ptr_nonnull(r);
        ck_assert_uint_eq(r->begin, code[f % 4]);
        ck_assert_int_eq(r->compile_id, 77 + f % 4);
    }
    ck_assert_uint_eq(m.lookups, 4);
    ck_assert_uint_eq(m.refused, 0);
    ck_assert_uint_eq(lookups, 4);
    ck_assert_uint_eq(found, 4);
    /* nmethod 2 replaced in between (its block reused: another compile id), then freed */
    put(blob() + (16 << SHIFT), 40, 90, 4);
    const struct fx_code_range *r = fx_recover_find_any(t, code[2] + 8, &m);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->compile_id, 90);
    ck_assert_uint_eq(m.lookups, 5);
    mem[((BLOCK + 16) << SHIFT) + 8] = 0; /* HeapBlock::_used */
    ck_assert_ptr_null(fx_recover_find_any(t, code[2] + 8, &m));
    ck_assert_uint_eq(m.lookups, 6);
    ck_assert_ptr_nonnull(fx_recover_find_any(t, code[3] + 8, &m)); /* the others stay */
    ck_assert_uint_eq(m.lookups, 6);
}
END_TEST

/* issue 31 (codemap=heap): a found nmethod is handed to the drain once however many samples
 * meet it before the drain's pass, exactly as found; nothing while offering is off; past the
 * slots, offers are dropped and counted, each offer either queued or counted. */
START_TEST(test_found_handoff)
{
    struct fx_codeheap_layout l;
    struct fx_interp_layout il;
    uint64_t found = 0, lookups = 0, refused = 0;
    struct fx_code_table *t = heap_table(&l, &il, &found, &lookups, &refused);
    uintptr_t code = (uintptr_t)blob() + 80;
    struct fx_code_range got[300];
    uint64_t offered, queued, full;
    struct fx_heap_memo m = {.lookups = 0};
    ck_assert_ptr_eq(fx_recover_find_any(t, code, &m), &m.kept[0]);
    ck_assert_uint_eq(fx_codeheap_take(got, 300), 0); /* offering off (codemap=jvmti) */
    fx_codeheap_offer_enable(true);
    for (int i = 0; i < 3; i++) { /* three samples meet the nmethod */
        struct fx_heap_memo s = {.lookups = 0};
        ck_assert_ptr_eq(fx_recover_find_any(t, code + 4, &s), &s.kept[0]);
    }
    fx_codeheap_offer_counts(&offered, &queued, &full);
    ck_assert_uint_eq(offered, 1);
    ck_assert_uint_eq(queued, 2);
    ck_assert_uint_eq(fx_codeheap_take(got, 300), 1);
    ck_assert_mem_eq(&got[0], &m.kept[0], sizeof(got[0]));
    ck_assert_uint_eq(fx_codeheap_take(got, 300), 0);
    for (uintptr_t i = 0; i < 300; i++) {
        struct fx_code_range r = m.kept[0];
        r.begin = 0x100000 + i * 64;
        fx_codeheap_offer_sigsafe(&r);
    }
    fx_codeheap_offer_counts(&offered, &queued, &full);
    size_t taken = fx_codeheap_take(got, 300);
    ck_assert_uint_gt(full, 0);
    ck_assert_uint_eq(taken + full, 300);
    ck_assert_uint_eq(offered, 1 + taken);
    fx_codeheap_offer_enable(false);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("codeheap");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_finds_the_nmethod);
    tcase_add_test(tc, test_refuses_what_is_not_proven);
    tcase_add_test(tc, test_names_mh_intrinsic);
    tcase_add_test(tc, test_find_any);
    tcase_add_test(tc, test_memo_keeps_several);
    tcase_add_test(tc, test_segment_map_encodings);
    tcase_add_test(tc, test_reads_stay_committed);
    tcase_add_test(tc, test_found_handoff);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
