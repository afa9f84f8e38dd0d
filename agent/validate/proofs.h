/* SPDX-License-Identifier: Apache-2.0 */
/* Private to agent/validate: the proofs (proofs.c) validate.c asks for the patterns the frame
 * names cannot tell apart: 4.2 by the top nmethod's scopes, 4.9 by a deopt return. Include after
 * internal.h. Tests: it.validate, it.validate_stress (tests/it/validate_check.py re-derives). */
#ifndef FX_VALIDATE_PROOFS_H
#define FX_VALIDATE_PROOFS_H

#include "internal.h"

/* The scopes of the nmethod at code (its root method root, current) into out, root first;
 * 0 when not known or more than cap. */
uint32_t fx_va_scopes_copy(uintptr_t code, jmethodID root, jmethodID *out, uint32_t cap);
/* Every frame in which a and g differ (above their common bottom part), and each side down to
 * the root's frame, is one of m[0..n) (m[0] the root). */
bool fx_va_scopes_top_nmethod(const struct fx_stack *a, const struct fx_stack *g,
                              const jmethodID *m, uint32_t n);
/* 4.9: the anchor walk's frame d (sh) returns to its nmethod's deopt handler; ASGCT's last frame
 * is the root of frame d - 1 (its callee) and JVMTI's frame k exactly, above it the two are equal
 * or differ as 4.2 says, and frame d's method is among JVMTI's frames below k. */
bool fx_va_cut_at_deopt(const struct fx_stack *a, const struct fx_stack *g,
                        const struct fx_stack *sh, int32_t d);
/* The last check's proof for a listed mismatch of `pattern`, as frames to name (lineno 0): 4.2's
 * scopes, root first; 4.9's callee and deoptimized frames; else none. Returns how many. */
jint fx_va_proof(enum pattern pattern, fx_asgct_frame *out, jint cap);

#endif
