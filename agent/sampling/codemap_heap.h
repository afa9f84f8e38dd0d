/* SPDX-License-Identifier: Apache-2.0 */
/* Private to agent/sampling: the code map without CompiledMethodLoad (codemap=heap, issue 31),
 * between codemap.c (the table, its log and publication) and codemap_heap.c (what the handler
 * found in the code heaps, added by the drain; the ranges gone stale, dropped). Tests:
 * it.stack_shape, it.frame_types, it.validate_recovered (docs/VALIDATION.md 8). */
#ifndef FX_CODEMAP_HEAP_H
#define FX_CODEMAP_HEAP_H

#include "fx_recover.h"

struct fx_profile;

/* codemap.c: a change logged and appended to the recent table, as a JVMTI event's (any
 * thread; takes the lock); true: the drain should come soon. */
bool fx_codemap_record(bool remove, const struct fx_code_range *r);
/* codemap.c, the drain's: the ranges of the last published table, sorted (valid until the
 * drain publishes again). */
const struct fx_code_range *fx_codemap_live(size_t *n);

/* codeheap_check.c: the oracle of the handler's lookup at a CompiledMethodLoad: 1 agrees, -1
 * differs, 2 refused, 0 not checked (codemap.c's caller says when). */
int fx_codeheap_check(const struct fx_code_range *r);
/* codeheap_check.c, at a CompiledMethodLoad: a method handle intrinsic's range (frameless) named
 * as the handler's lookup names it, by its intrinsic id (8.5l): the event gives every such
 * nmethod MethodHandle's idnum-0 method. Not proven: the event's name stays, counted. */
void fx_codeheap_mh_name(struct fx_code_range *r);
void fx_codeheap_mh_counts(uint64_t *named, uint64_t *kept);

/* vmflags.c: DebugNonSafepoints's outcome for meta.extra. */
void fx_vmflags_report(struct fx_profile *p, const char *group);

#endif
