/* SPDX-License-Identifier: Apache-2.0 */
/* Private to agent/sampling: an nmethod found in HotSpot's code heaps from a pc, in the handler
 * (issue 32: a method compiled since the code table was published, codemap.c, is not in it;
 * HotSpot's CodeHeap::find_blob finds it by the heap's segment map). The layout comes from
 * VMStructs outside signal context (vmstructs.c, fx_vmstructs_codeheap); codeheap_sig.c reads
 * with it (the heaps' committed memory directly, the rest by process_vm_readv on this process)
 * and builds the same code range a CompiledMethodLoad would have given (fx_recover.h), or
 * nothing. */
#ifndef FX_CODEHEAP_H
#define FX_CODEHEAP_H

#include "fx_recover.h"
#include "interp_frame.h"

#define FX_CODEHEAP_HEADER_MAX 512 /* a blob's header read, and a HeapBlock's (64) before it */
#define FX_CODEHEAP_HEAPS_MAX  8

/* Offsets in bytes; -1: not exported (then the field's use is off). pid 0: not published. */
struct fx_codeheap_layout {
    int32_t pid;      /* this process: the target of the checked reads */
    uintptr_t lo, hi; /* CodeCache::_low_bound, _high_bound: all heaps lie inside */
    /* The CodeHeaps (CodeCache::_heaps' elements at the publish, VMInit): HotSpot makes them
     * in CodeCache::initialize, before VMInit, adds none later and never frees one. */
    uintptr_t heap[FX_CODEHEAP_HEAPS_MAX];
    int32_t n_heaps;
    int32_t mem_low, mem_high; /* CodeHeap::_memory._low/_high: the committed code (8-aligned) */
    int32_t seg_low, seg_high; /* CodeHeap::_segmap._low/_high: the committed map (8-aligned) */
    int32_t log2_seg;          /* CodeHeap::_log2_segment_size (int) */
    int32_t block_size;        /* sizeof(HeapBlock): the blob follows the block header */
    int32_t block_len, len_width, block_used; /* HeapBlock::Header::_length (segments), _used */
    int32_t name;                    /* CodeBlob::_name: "nmethod" for a Java method's code */
    int32_t code_begin, code_offset; /* JDK 17: address; JDK 21+: int from the blob */
    int32_t code_end, data_offset;   /* JDK 17: address; later: code ends at the data */
    int32_t frame_complete, fc_width, frame_size;
    int32_t vep, vep_offset; /* JDK 17: address; later: u2 from code begin */
    int32_t osr_entry;       /* nmethod::_osr_entry_point (address) */
    int32_t compile_id, entry_bci, comp_level, level_width;
    int32_t method;      /* nmethod::_method (CompiledMethod:: on JDK 17) */
    int32_t state;       /* nmethod::_state (volatile signed char) */
    int32_t live_max;    /* the last live state: 0 in_use, then 1 not_used/not_entrant (JDK
                          * 25), 2 not_entrant (JDK 17, with CompiledMethod); -1 not installed,
                          * 3 zombie, 4 unloaded are refused */
    int32_t stub_offset; /* nmethod::_stub_offset (int, from the blob) */
    int32_t header;      /* bytes of the blob read at once (and again at the end): every field
                          * above, a multiple of 8 */
    int32_t reread;      /* bytes from the blob the drain's sweep reads (codemap_heap.c):
                          * _compile_id, _state */
};

/* Outside signal context, once the code cache exists (VMInit: threads_existing.c): the layout
 * from VMStructs into fx_sig.codeheap (pid last, release); nothing when a field is missing or
 * does not fit the bounded reads. */
void fx_codeheap_publish(void);

/* Signal-safe: the nmethod holding pc, from the code heaps (l) and named through its Method*
 * (il, the interpreted frames' chain to a jmethodID; a method handle intrinsic's by il->mh,
 * 8.5l): *out as codemap.c builds a
 * CompiledMethodLoad's range (begin = code begin, end = code end, layout, compile id, frame
 * size, tier; FX_RANGE_SELF_INLINE since the inlining records are not known here). False when
 * any step is not proven: a layout not published, a read failing, a free block, a blob that is
 * not an "nmethod", pc outside its code, a method not named. */
bool fx_codeheap_find_sigsafe(const struct fx_codeheap_layout *l, const struct fx_interp_layout *il,
                              uintptr_t pc, struct fx_code_range *out);

/* Signal-safe: the range of t holding pc, else the nmethod holding it in the code heaps (by
 * t's layouts, into one of m->kept, and one more in *t->found), else NULL. The sample's memo m:
 * a pc in a kept nmethod still current is not looked up again; past FX_HEAP_BUDGET none is made and
 * m->refused counts it (the walk names that stop); m NULL: the table alone. Each lookup and
 * refusal is counted in *t->lookups, *t->refused. For the walks that name or type compiled
 * frames (recover_anchor.c, native_below.c, signal_handler.c). */
const struct fx_code_range *fx_recover_find_any(const struct fx_code_table *t, uintptr_t pc,
                                                struct fx_heap_memo *m);

/* Signal-safe: the entry offsets of a range from its nmethod's verified entry, frame complete
 * offset, entry bci and OSR entry (shared with codemap.c): a normal compilation (entry bci -1)
 * gets verified and complete when both lie inside the code; an OSR one gets FX_RANGE_OSR and
 * its OSR entry's offset in verified when that lies inside (recover.c's OSR rule);
 * FX_OFF_UNKNOWN otherwise. */
void fx_codeheap_entry(struct fx_code_range *r, uintptr_t verified, long frame_complete,
                       int32_t entry_bci, uintptr_t osr_entry);

/* codeheap_found.c: the nmethods the handler found, handed to the drain (codemap=heap, issue
 * 31). Signal-safe: queues a copy of r unless offering is off, or r's begin is queued already;
 * no slot free: dropped, counted. The drain's: turns offering on or off (codemap=heap in force:
 * fx_codeheap_offering, read by codemap.c too); takes up to cap queued ranges into out (oldest
 * slot order, not arrival order) and returns how many; the counts. */
void fx_codeheap_offer_sigsafe(const struct fx_code_range *r);
void fx_codeheap_offer_enable(bool on);
bool fx_codeheap_offering(void);
size_t fx_codeheap_take(struct fx_code_range *out, size_t cap);
void fx_codeheap_offer_counts(uint64_t *offered, uint64_t *queued_already, uint64_t *full);

#endif
