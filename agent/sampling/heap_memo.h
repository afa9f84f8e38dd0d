/* SPDX-License-Identifier: Apache-2.0 */
/* Private to agent/sampling: one sample's code heap lookups (fx_heap_memo, its budget), what
 * fx_recover_find_any (codeheap_sig.c) keeps between the walks of one sample. Included by
 * fx_recover.h, after the code range, so that sample.h's struct fx_thread can hold the
 * handler's own (off the signal handler's 2 KiB frame). Tests: unit.codeheap, unit.recover_walk. */
#ifndef FX_HEAP_MEMO_H
#define FX_HEAP_MEMO_H

/* The most code heap lookups one sample makes (fx_recover_find_any): each costs ~8 system
 * calls, asked for a pc in neither the table nor the nmethods the sample found already. */
#define FX_HEAP_BUDGET 24
/* Words a record's found part holds (FX_TYPE_FOUND): one per run of frames in one found nmethod
 * (a mutual recursion alternates between them), not per lookup: sized apart from the budget. */
#define FX_FOUND_KEPT 24
#define FX_HEAP_KEPT  8 /* the nmethods found that a sample keeps, searched before a lookup */

/* kept: the last FX_HEAP_KEPT nmethods found in the code heaps (slot `next` is replaced next),
 * searched before a lookup: a deep stack through methods compiled since the table, alternating
 * between them (a mutual recursion: scalac's typed -> typed1 -> typedApply -> typed), costs a
 * lookup per distinct nmethod, not one per frame (session 26: one kept, scalac 17's main-thread
 * walks stopped past the budget, 16-19 a run). The lookups made, and those refused past
 * FX_HEAP_BUDGET. Zeroed per sample. found: a word per FX_TYPE_FOUND type word but
 * FX_TYPE_AGAIN's, in their order (fx_recover_segment), for the drain to read that nmethod's
 * inlining facts (issue 31): its blob's offset from the code cache's low bound (bits 0-31), its
 * compile id (bits 32-63). */
struct fx_heap_memo {
    struct fx_code_range kept[FX_HEAP_KEPT]; /* end 0: none */
    uint32_t lookups, refused, n_found, next;
    uint64_t found[FX_FOUND_KEPT];
};

/* r is one of the sample's found nmethods (m->kept): its inlining is not known here. */
static inline bool fx_heap_memo_holds(const struct fx_heap_memo *m, const struct fx_code_range *r)
{
    for (int i = 0; m != NULL && i < FX_HEAP_KEPT; i++)
        if (r == &m->kept[i])
            return true;
    return false;
}

#endif
