/* SPDX-License-Identifier: Apache-2.0 */
/* agent/validate: validate mode (validate.c, validate_report.c), a thread that compares the
 * stacks of suspended threads taken by AsyncGetCallTrace (through a probe) and by JVMTI, and
 * the oracle natives the jtreg suite calls (oracle.c); stackcmp.c is what both compare with.
 * Its interface for control/; it calls sampling/ and base/ only.
 * Tests: it.validate, it.validate_recovered, it.validate_stress. */
#ifndef FX_VALIDATE_H
#define FX_VALIDATE_H

#include "sampling.h"

/* Agent_OnLoad: FX_EUNSUPPORTED with one line in eb if the JVM cannot suspend threads. */
int fx_validate_check(struct fx_errbuf *eb);
int fx_validate_start(JNIEnv *jni);
/* Stops the validator thread and waits for it (every thread it suspended is resumed). */
void fx_validate_stop(void);
/* Before each dump: the "validate" meta.extra group (nothing without validate). */
extern const struct fx_source fx_validate_step;
/* CompiledMethodLoad / Unload with validate on: the nmethod's scopes, for 4.2's proof. */
void fx_validate_code_load(jmethodID root, const void *code, const void *compile_info);
void fx_validate_code_unload(jmethodID root, const void *code);
/* After fx_validate_stop: the validate=REPORT.json file and one stderr line (unless quiet). */
void fx_validate_report(void);

#endif
