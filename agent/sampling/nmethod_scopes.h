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

#include "fx_recover.h"

struct fx_nmethod_scopes {
    bool self_inlined;       /* the root scope's method in a non-root scope of some PcDesc */
    int32_t inlined_methods; /* distinct methods other than the root's in any scope */
    uint32_t pcs;            /* PcDescs with a scope decoded */
};

/* Off the signal path (the drain thread, any JVMTI callback thread). false: not read (the reason
 * counted). */
bool fx_nmethod_scopes_read(const struct fx_code_range *r, struct fx_nmethod_scopes *out);

#endif
