/* SPDX-License-Identifier: Apache-2.0 */
/* Test helper: what codemap.c needs from the rest of the agent, for a unit test that links it
 * alone: the handler's state, and VMStructs that know no blob (no layout, no frame size), so
 * no code heap either (codemap=jvmti).
 * Include it in exactly one file of a test binary (unit.codemap, unit.coderecent). */
#ifndef VMSTRUCTS_NONE_H
#define VMSTRUCTS_NONE_H

#include "internal.h"
#include "nmethod_scopes.h"

struct fx_sigstate fx_sig;

/* nmethod_scopes.c's oracle: without VMStructs it reads nothing (unit.nmethod_scopes tests it) */
void fx_nmethod_scopes_check(const struct fx_code_range *r, jmethodID root, const void *info)
{
    (void)r, (void)root, (void)info;
}

void fx_nmethod_scopes_report(struct fx_profile *p, const char *g)
{
    (void)p, (void)g;
}

bool fx_vmstructs_nmethod(uintptr_t code_addr, struct fx_nmethod_layout *out)
{
    (void)code_addr, (void)out;
    return false;
}

int32_t fx_vmstructs_stub_frame_words(uintptr_t code_addr, int32_t *complete)
{
    (void)code_addr;
    *complete = -1;
    return -1;
}

#endif
