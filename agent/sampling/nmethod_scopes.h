/* SPDX-License-Identifier: Apache-2.0 */
/* The two facts the CompiledMethodLoad records gave, read from the nmethod itself (issue 31:
 * the event's posting costs ~3 % of javac's CPU, so the code heap lookup replaces it and the
 * inlining records go with it): whether the compiled method is inlined into itself
 * (FX_RANGE_SELF_INLINE, frame types) and how many distinct methods were inlined (the JIT
 * markers, fx_jit_info_inlined). The nmethod's PcDesc table and scopes data are read in bulk by
 * process_vm_readv on this process (an nmethod freed meanwhile fails a read, never this thread),
 * the layout from VMStructs (JDK 17: offsets from the nmethod; JDK 23+: its immutable data), and
 * each PcDesc's scope chain decoded (HotSpot's ScopeDesc over a CompressedReadStream: JDK 17's
 * encoding, or UNSIGNED5 from JDK 21). Off the signal path. Tests: unit.nmethod_scopes, and the
 * oracle against the CompiledMethodLoad records in it.validate_recovered (codeheap_check.py). */
#ifndef FX_NMETHOD_SCOPES_H
#define FX_NMETHOD_SCOPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jvmti.h>

#include "fx_recover.h"

struct fx_nmethod_scopes {
    bool self_inlined;       /* the root scope's method in a non-root scope of some PcDesc */
    int32_t inlined_methods; /* distinct methods other than the root's in any scope */
    uint32_t pcs;            /* PcDescs with a scope decoded */
};

/* Off the signal path (the drain thread, any JVMTI callback thread). false: not read (the reason
 * counted). An nmethod with no PcDesc with a scope is read: nothing inlined (out all 0). */
bool fx_nmethod_scopes_read(const struct fx_code_range *r, struct fx_nmethod_scopes *out);

/* inlined_methods stops there, as fx_jit_info_inlined does (3/4 of its 256-slot set). */
#define FX_NMETHOD_SCOPES_INLINED_MAX 192
#define FX_SCOPES_SET                 512 /* the decode's set of methods (power of two) */

/* Why a read gave nothing (each counted, meta.extra "Stack recovery"). */
enum fx_scopes_why {
    FX_SCOPES_OK = 0,
    FX_SCOPES_LAYOUT, /* VMStructs lack a field, or r is not an nmethod with its blob */
    FX_SCOPES_READ,   /* a read failed, or the blob is no longer r's compilation */
    FX_SCOPES_SIZE,   /* the tables' bounds do not check out, or exceed the caps */
    FX_SCOPES_STREAM, /* an int runs past the scopes data, or holds an excluded byte */
    FX_SCOPES_OFFSET, /* a decode offset outside the data, or a sender not before its scope */
    FX_SCOPES_INDEX,  /* a method index 0, past the metadata, or naming null */
    FX_SCOPES_EMPTY,  /* no PcDesc has a scope: nothing to tell (a native wrapper) */
    FX_SCOPES_NOMEM,
    FX_SCOPES_WHY_N
};

/* The nmethod's tables as read, for the decode alone (unit.nmethod_scopes builds them). */
struct fx_scopes_image {
    const uint8_t *pcs; /* n_pcs PcDescs of pc_size bytes, the scope offset (int) at pc_scope */
    size_t n_pcs;
    uint32_t pc_size, pc_scope;
    const uint8_t *data; /* the scopes data */
    size_t data_len;
    const uintptr_t *meta; /* the metadata table: index i names meta[i - 1] */
    size_t n_meta;
    uintptr_t root; /* the nmethod's Method* (nmethod::_method) */
    bool unsigned5; /* JDK 20+'s encoding (no 0 byte), else JDK 17's */
};
/* The facts from im into *out (zero unless OK); *aliases: methods met under a second index. */
enum fx_scopes_why fx_nmethod_scopes_decode(const struct fx_scopes_image *im,
                                            struct fx_nmethod_scopes *out, uint32_t *aliases);

/* The oracle, at a CompiledMethodLoad (codemap.c, its range r built): the decode of r against
 * the event's inline records (root: the event's method), for the first 16 loads and 1 in 1,024
 * after (every load with FXAGENT_TEST_NMETHOD_SCOPES=1); counted agree/differ/refused. */
void fx_nmethod_scopes_check(const struct fx_code_range *r, jmethodID root, const void *info);
struct fx_profile;
/* The counts into meta.extra group g (codemap.c's report). */
void fx_nmethod_scopes_report(struct fx_profile *p, const char *g);

#endif
