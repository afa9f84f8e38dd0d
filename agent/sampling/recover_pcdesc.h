/* SPDX-License-Identifier: Apache-2.0 */
/* The PcDesc check of the intrinsics' stubs (issue 32 item 4, docs/VALIDATION.md 8.5d): a
 * compiled caller's return address is accepted under an intrinsic StubRoutines stub only where
 * the caller's nmethod (not an OSR compilation) has a PcDesc whose pc offset is exactly return
 * address - code begin, the scope AsyncGetCallTrace names from there (the call's own). The layout
 * of the nmethod's PcDesc table comes from VMStructs (vmstructs.c, published by codemap.c); the
 * check runs in the signal handler and reads by process_vm_readv (recover_pcdesc.c). */
#ifndef FX_RECOVER_PCDESC_H
#define FX_RECOVER_PCDESC_H

#include <stdbool.h>
#include <stdint.h>

#include "fx_recover.h"

/* The most PcDescs a table may hold here: a larger one is refused, not searched. */
#define FX_PCDESC_MAX (1u << 20)

/* Where an nmethod's PcDesc table lies, by VMStructs. JDK <= 22: scopes_pcs_begin/end =
 * the nmethod + _scopes_pcs_offset / + _dependencies_offset (data = -1); JDK 23+: the
 * _immutable_data pointer + _scopes_pcs_offset / + _scopes_data_offset, both within
 * _immutable_data_size. All int fields; pid: this process (0: not published). */
struct fx_pcdesc_layout {
    int32_t pid;
    int32_t begin;     /* offset in the nmethod of the int "table begins at" */
    int32_t end;       /* offset in the nmethod of the int "table ends at" */
    int32_t data;      /* offset of the _immutable_data pointer, -1: offsets from the nmethod */
    int32_t data_size; /* offset of the int _immutable_data_size, -1: none */
    int32_t size;      /* sizeof(PcDesc) */
    int32_t pc;        /* PcDesc::_pc_offset, an int */
};

/* Signal-safe: nmethod n (blob and begin = code begin known) has a PcDesc at exactly ret. */
bool fx_recover_pcdesc_at(const struct fx_pcdesc_layout *l, const struct fx_code_range *n,
                          uintptr_t ret);
/* Publishes l for fx_recover_stub_called (codemap.c, once VMStructs are read; pid last). */
void fx_recover_pcdesc_publish(const struct fx_pcdesc_layout *l);

#endif
