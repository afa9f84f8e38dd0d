/* SPDX-License-Identifier: Apache-2.0 */
/* Part of THE SIGNAL PATH (signal_handler.c's rules and allow-list): the nmethod holding a pc,
 * found in HotSpot's code heaps when the published code table (codemap.c) does not know it yet
 * or its range there holds newer code (codeheap.h, issue 32), and that check of a range's
 * compile id (fx_recover_blob_current).
 *
 * HotSpot's own lookup (CodeHeap::find_blob): the heap whose committed memory [_memory._low,
 * _memory._high) holds pc; its segment map has one byte per segment of 2^_log2_segment_size
 * bytes, 0 at a block's first segment, 0xFF for free ones, else how many segments back to step
 * towards the first; the block begins with a HeapBlock header (_length in segments, _used),
 * the CodeBlob follows it.
 *
 * Two kinds of read. The heaps' own memory is read directly, by whole aligned loads: the
 * CodeHeap objects (made before VMInit, never freed: their list is taken at the publish,
 * vmstructs.c), and what lies inside a committed range read from its CodeHeap in the same
 * lookup: the segment map below _segmap._high, the HeapBlock, the blob's header and the re-read
 * below _memory._high and inside the block's length. HotSpot (JDK 17 to 25, memory/heap.cpp)
 * only ever expands a CodeHeap's two VirtualSpaces (CodeHeap::expand_by: the code first, then
 * its map, each committed before its _high moves), never uncommits or unmaps them while the
 * JVM runs: an address proven below a _high read once stays readable. Every other word, where
 * a pointer read from the blob leads (its name, its Method* and the chain to its jmethodID in
 * metaspace, which class unloading can uncommit), is read by process_vm_readv on this process
 * (fx_interp_peek_sigsafe): a pointer gone wrong fails a read, never this thread.
 *
 * What proves the blob is the nmethod pc runs in: the block is used and holds the blob's header
 * (its length, bounded by the heap's committed end), nmethod::_state is live (in use or not
 * entrant: a freed block keeps its header in product builds, the state does not stay in_use),
 * its name is "nmethod", pc lies in [code begin, code end), its Method* has a jmethodID pointing
 * back at it (interp_frame_sig.c) or, for a method handle intrinsic's frameless native nmethod,
 * is named by its holder and intrinsic id (8.5l), and at the end the block's _used, its length, the
 * compile id and the state, read again, are unchanged (a block freed or reused in between would
 * change them). Cost: 8 system calls per lookup (the name 1, 2 for a native nmethod; the Method*'s
 * chain 7), 17 before session 25 read the heaps by process_vm_readv too; asked by every walk
 * (the recoveries after an AsyncGetCallTrace failure, and the frame types and native frames
 * below of every sample) at each frame whose pc lies in the code cache but in no range of the
 * table: so a sample reuses the nmethods it found (fx_heap_memo: the last FX_HEAP_KEPT) and
 * makes FX_HEAP_BUDGET lookups at most, its walk stopping, named, past them. */
#include "codeheap.h"

#include "recover_anchor.h"

#include <string.h>

#define SEG_FREE  0xFF
#define SEG_REACH 16384 /* segments a block start lies back at most: 2 MB at 128 bytes */

static bool peek(const struct fx_codeheap_layout *l, uintptr_t at, void *buf, size_t n,
                 size_t align)
{
    return fx_interp_peek_sigsafe(l->pid, at, buf, n, align);
}

static uint64_t field(const unsigned char *b, int32_t off, int32_t w)
{
    uint64_t v = 0;
    memcpy(&v, b + off, (size_t)w);
    return v;
}

static int64_t sfield(const unsigned char *b, int32_t off, int32_t w)
{
    if (w == 1)
        return (int8_t)b[off];
    if (w == 2) {
        int16_t v;
        memcpy(&v, b + off, 2);
        return v;
    }
    int32_t v;
    memcpy(&v, b + off, 4);
    return v;
}

/* Signal-safe: n bytes (a multiple of 8) of committed heap memory at the 8-aligned at, a word
 * at a time: each word whole as HotSpot wrote it (a length being changed is old or new, never
 * torn), and loaded now, not earlier or again (the re-read at the end must read). */
static void load(unsigned char *to, uintptr_t at, size_t n)
{
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = __atomic_load_n((const uint64_t *)(at + i), __ATOMIC_ACQUIRE);
        memcpy(to + i, &w, 8);
    }
}

static uintptr_t word(uintptr_t at)
{
    return (uintptr_t)__atomic_load_n((const uint64_t *)at, __ATOMIC_ACQUIRE);
}

/* Signal-safe: the first segment of the block holding segment idx, by the map at seg (HotSpot's
 * walk); false on a free segment, a step past the map's start or past SEG_REACH. */
static bool block_start(uintptr_t seg, size_t *idx)
{
    size_t i = *idx;
    for (;;) {
        unsigned char b = __atomic_load_n((const unsigned char *)(seg + i), __ATOMIC_ACQUIRE);
        if (b == 0) {
            *idx = i;
            return true;
        }
        if (b == SEG_FREE || b > i || *idx - (i - b) > SEG_REACH)
            return false;
        i -= b;
    }
}

/* The block holding a pc: its start, and what bounds its length (the heap's end, the shift). */
struct block {
    uintptr_t at, high;
    int64_t shift;
};

/* Signal-safe: the block holding pc by the heap's segment map (its header not read yet), the
 * heap's committed ranges read once, here. */
static bool block_of(const struct fx_codeheap_layout *l, uintptr_t pc, struct block *o)
{
    for (int32_t k = 0; k < l->n_heaps && k < FX_CODEHEAP_HEAPS_MAX; k++) {
        uintptr_t h = l->heap[k];
        uintptr_t low = word(h + (uintptr_t)l->mem_low);
        o->high = word(h + (uintptr_t)l->mem_high);
        if (pc < low || pc >= o->high)
            continue;
        uintptr_t seg = word(h + (uintptr_t)l->seg_low),
                  seg_high = word(h + (uintptr_t)l->seg_high);
        o->shift = __atomic_load_n((const int32_t *)(h + (uintptr_t)l->log2_seg), __ATOMIC_ACQUIRE);
        if (seg == 0 || seg_high <= seg || o->shift < 4 || o->shift > 20 || (low & 7) != 0)
            return false;
        size_t idx = (pc - low) >> o->shift;
        if (idx >= seg_high - seg || !block_start(seg, &idx)) /* the map not committed so far */
            return false;
        o->at = low + ((uintptr_t)idx << o->shift);
        return true;
    }
    return false;
}

/* Signal-safe: the block's HeapBlock header (b) says it is used and its length fits the heap
 * and holds the blob's header (hdr bytes after the HeapBlock); *end: where the block ends. */
static bool block_used(const struct fx_codeheap_layout *l, const unsigned char *b,
                       const struct block *k, size_t hdr, uintptr_t *end)
{
    uint64_t segs = field(b, l->block_len, l->len_width);
    if (b[l->block_used] == 0 || segs == 0 || segs > ((k->high - k->at) >> k->shift) ||
        ((uintptr_t)segs << k->shift) < hdr)
        return false;
    *end = k->at + ((uintptr_t)segs << k->shift);
    return true;
}

/* Signal-safe: nmethod::_state is a live one (in use, or not entrant: its frames still run). */
static bool live(const struct fx_codeheap_layout *l, const unsigned char *h)
{
    int8_t st = (int8_t)h[l->state];
    return st >= 0 && st <= l->live_max;
}

/* Signal-safe: the blob's name says it is a Java method's code: "nmethod", or "native nmethod"
 * (a native method's wrapper, which CompiledMethodLoad reports too). Read in two steps: a read
 * past the end of the shorter name could cross into an unmapped page. */
static bool same(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) /* not memcmp: a library call, off the allow-list */
        if (a[i] != b[i])
            return false;
    return true;
}

/* 1: an nmethod, 2: a native one (a JNI wrapper or a method handle intrinsic), 0: neither */
static int nmethod_kind(const struct fx_codeheap_layout *l, uintptr_t name)
{
    char n[16];
    if (!peek(l, name, n, 8, 1))
        return 0;
    if (same(n, "nmethod", 8))
        return 1;
    if (!same(n, "native n", 8) || !peek(l, name + 8, n + 8, 8, 1))
        return 0;
    return same(n, "native nmethod", 15) ? 2 : 0;
}

void fx_codeheap_entry(struct fx_code_range *r, uintptr_t verified, long frame_complete,
                       int32_t entry_bci, uintptr_t osr_entry)
{
    r->verified = FX_OFF_UNKNOWN;
    r->complete = FX_OFF_UNKNOWN;
    if (entry_bci != -1 && osr_entry >= r->begin && osr_entry < r->end) {
        r->verified = (uint32_t)(osr_entry - r->begin);
        r->flags |= FX_RANGE_OSR;
        return;
    }
    /* An OSR compilation is entered from the interpreter through its own entry, not at the
     * verified entry with a return address on top: no prologue rule for it. */
    if (entry_bci == -1 && verified >= r->begin && verified < r->end && frame_complete > 0 &&
        (uintptr_t)frame_complete < r->end - r->begin &&
        r->begin + (uintptr_t)frame_complete > verified) {
        r->verified = (uint32_t)(verified - r->begin);
        r->complete = (uint32_t)frame_complete;
    }
}

bool fx_codeheap_find_sigsafe(const struct fx_codeheap_layout *l, const struct fx_interp_layout *il,
                              uintptr_t pc, struct fx_code_range *out)
{
    /* the HeapBlock header and the blob's header after it, read at once */
    unsigned char buf[64 + FX_CODEHEAP_HEADER_MAX];
    struct block k;
    uintptr_t end_of_block = 0;
    int kind = 0;
    if (l == NULL || l->pid == 0 || il == NULL || il->pid == 0 || pc < l->lo || pc >= l->hi)
        return false; /* no system call for a pc outside the code cache */
    size_t bs = (size_t)l->block_size, all = bs + (size_t)l->header;
    const unsigned char *b = buf + bs;
    if ((bs & 7) != 0 || (all & 7) != 0 || all > sizeof(buf) || !block_of(l, pc, &k) ||
        k.at + all > k.high) /* a block this short holds no nmethod (block_used says so too) */
        return false;
    load(buf, k.at, all);
    if (!block_used(l, buf, &k, all, &end_of_block) || !live(l, b) ||
        (kind = nmethod_kind(l, (uintptr_t)field(b, l->name, 8))) == 0)
        return false;
    uintptr_t blob = k.at + bs;
    uintptr_t begin = l->code_begin >= 0 ? (uintptr_t)field(b, l->code_begin, 8)
                                         : blob + (uintptr_t)(intptr_t)sfield(b, l->code_offset, 4);
    uintptr_t end = l->code_end >= 0 ? (uintptr_t)field(b, l->code_end, 8)
                                     : blob + (uintptr_t)(intptr_t)sfield(b, l->data_offset, 4);
    if (begin <= blob || begin > end || end > end_of_block || pc < begin || pc >= end)
        return false;
    int64_t level = l->comp_level >= 0 ? sfield(b, l->comp_level, l->level_width) : 0;
    int32_t entry_bci = (int32_t)sfield(b, l->entry_bci, 4);
    /* a method handle intrinsic (8.5l): a native nmethod, frame size 0, level 0 */
    bool mh = kind == 2 && entry_bci == -1 && sfield(b, l->frame_size, 4) == 0 && level == 0;
    uint64_t id = 0;
    uintptr_t method = (uintptr_t)field(b, l->method, 8);
    /* its Method* has no jmethodID (HotSpot's own, in no method array): named by MethodHandle's
     * declared method of its intrinsic id (interp_frame.h) */
    if ((!fx_interp_method_id_sigsafe(il, method, &id) &&
         !(mh && fx_interp_mh_id_sigsafe(il, method, &id))) ||
        id == 0)
        return false;
    uintptr_t vep = l->vep >= 0 ? (uintptr_t)field(b, l->vep, 8)
                                : begin + (uintptr_t)field(b, l->vep_offset, 2);
    *out = (struct fx_code_range){.begin = begin,
                                  .end = end,
                                  .blob = blob,
                                  .name = id,
                                  .compile_id = (int32_t)sfield(b, l->compile_id, 4),
                                  .frame_words = (int32_t)sfield(b, l->frame_size, 4),
                                  .kind = FX_BLOB_NMETHOD,
                                  .level = level >= 1 && level <= 4 ? (uint8_t)level : 0,
                                  .flags = FX_RANGE_SELF_INLINE};
    uintptr_t stubs = blob + (uintptr_t)(intptr_t)sfield(b, l->stub_offset, 4);
    out->stubs = stubs > begin && stubs <= end ? (uint32_t)(stubs - begin) : 0;
    fx_codeheap_entry(out, vep, (long)sfield(b, l->frame_complete, l->fc_width), entry_bci,
                      l->osr_entry >= 0 ? (uintptr_t)field(b, l->osr_entry, 8) : 0);
    /* marked as codemap.c marks it at CompiledMethodLoad: with codemap=heap (the default)
     * this is the map's only range of it */
    if (mh)
        out->flags |= FX_RANGE_FRAMELESS;
    /* a block freed (its header stays in product builds) or reused since the first read: the
     * block's _used, the compile id and the state read again (inside the block proven above) */
    uintptr_t again_end;
    int32_t id_again = 0;
    load(buf, k.at, all);
    if (!block_used(l, buf, &k, all, &again_end) || again_end != end_of_block || !live(l, b))
        return false;
    memcpy(&id_again, b + l->compile_id, 4);
    return id_again == out->compile_id;
}

bool fx_recover_blob_current(const struct fx_code_range *r, long cid_off)
{
    if (r->kind != FX_BLOB_NMETHOD || r->blob == 0 || cid_off < 0 || r->blob >= r->begin ||
        r->begin - r->blob > (1u << 20))
        return false;
    int32_t id;
    memcpy(&id, (const void *)(r->blob + (uintptr_t)cid_off), sizeof(id));
    return id == r->compile_id;
}

/* Signal-safe: a table range's nmethod still holds its block: the HeapBlock before the blob
 * used and nmethod::_state live. Read directly: the blob lies in a code heap's committed memory,
 * which HotSpot never uncommits (as the compile id read above). A freed nmethod keeps its header
 * in product builds, compile id included: when HotSpot reuses a freed block from its tail
 * (CodeHeap::search_freelist splits the free block and hands out its end), the old header stays
 * while newer code covers the old range, and its compile id still matches (session 25: scalac's
 * replaced C1 level-3 nmethods, their stale frame sizes sending the walk below to garbage). */
static bool blob_live(const struct fx_codeheap_layout *l, const struct fx_code_range *r)
{
    if (l->block_size <= 0 || l->block_used < 0 || l->state < 0 ||
        r->blob < l->lo + (uintptr_t)l->block_size || r->blob >= l->hi)
        return true; /* no layout for it: the compile id alone, as before */
    const unsigned char *block = (const unsigned char *)(r->blob - (uintptr_t)l->block_size);
    int8_t st =
            (int8_t)__atomic_load_n((const unsigned char *)r->blob + l->state, __ATOMIC_RELAXED);
    return __atomic_load_n(block + l->block_used, __ATOMIC_RELAXED) != 0 && st >= 0 &&
           st <= l->live_max;
}

/* The nmethod found earlier in this sample (m->kept) that holds pc, else NULL. Each was proven
 * at its find (codeheap.h: a used block, a live state, an "nmethod", pc in its code, a Method*
 * whose jmethodID points back), but other threads run on while this one is sampled: a sweep or
 * an unloading may free it and reuse the block between two of the sample's frames. So a kept
 * range is held to the checks a table range gets at every use (fx_recover_find_any): the compile
 * id at its blob, and blob_live (two direct loads, no system call); what fails them is dropped
 * from the memo and looked up again. What passes is the compilation found: reusing it within one
 * sample proves no less than the table's ranges, kept across many, do. */
static const struct fx_code_range *kept_sigsafe(const struct fx_codeheap_layout *l,
                                                struct fx_heap_memo *m, uintptr_t pc)
{
    for (int i = 0; i < FX_HEAP_KEPT; i++) {
        struct fx_code_range *k = &m->kept[i];
        if (k->end == 0 || pc < k->begin || pc >= k->end)
            continue;
        if (fx_recover_blob_current(k, l->compile_id) && blob_live(l, k))
            return k; /* a recursion meets it at every frame: one lookup per sample */
        k->end = 0;
    }
    return NULL;
}

const struct fx_code_range *fx_recover_find_any(const struct fx_code_table *t, uintptr_t pc,
                                                struct fx_heap_memo *m)
{
    const struct fx_code_range *r = fx_recover_find(t, pc);
    /* A table range whose memory holds newer code (issue 32, session 17): its nmethod was freed
     * and the block reused before the drain published the Unload, so the compile id at its blob
     * differs (fx_recover_blob_current). The code heaps know the nmethod there now; where they
     * do not, r stays, and the caller's own compile id check refuses it as before. */
    bool replaced = r != NULL && r->kind == FX_BLOB_NMETHOD && r->blob != 0 && t->heap != NULL &&
                    !fx_recover_blob_current(r, t->heap->compile_id);
    /* its block freed, the compile id left in place: the range is wrong, never returned */
    if (r != NULL && !replaced && r->kind == FX_BLOB_NMETHOD && r->blob != 0 && t->heap != NULL &&
        !blob_live(t->heap, r)) {
        replaced = true;
        r = NULL;
    }
    if ((r != NULL && !replaced) || t == NULL || t->heap == NULL || m == NULL || pc < t->heap->lo ||
        pc >= t->heap->hi)
        return r; /* no lookup for a pc outside the code cache: not charged */
    const struct fx_code_range *k = kept_sigsafe(t->heap, m, pc);
    if (k != NULL)
        return k;
    if (m->lookups >= FX_HEAP_BUDGET) {
        m->refused++;
        if (t->refused != NULL)
            __atomic_add_fetch(t->refused, 1, __ATOMIC_RELAXED);
        return r;
    }
    m->lookups++;
    if (t->lookups != NULL)
        __atomic_add_fetch(t->lookups, 1, __ATOMIC_RELAXED);
    struct fx_code_range found;
    if (!fx_codeheap_find_sigsafe(t->heap, t->il, pc, &found))
        return r;
    if (t->found != NULL)
        __atomic_add_fetch(t->found, 1, __ATOMIC_RELAXED);
    uint32_t slot = m->next;
    for (uint32_t i = 0; i < FX_HEAP_KEPT; i++)
        if (m->kept[i].end == 0) {
            slot = i; /* a free slot first; else the oldest found, in turn */
            break;
        }
    if (slot == m->next)
        m->next = (m->next + 1) % FX_HEAP_KEPT;
    m->kept[slot] = found;
    fx_codeheap_offer_sigsafe(&found); /* for the table: later samples find it there */
    return &m->kept[slot];
}
