/* SPDX-License-Identifier: Apache-2.0 */
/* The JVM's own things under the names users read (issue 30 item 11), core/symbols/jvm_names.c,
 * JVM-free: the full name of a JVM thread that JVMTI does not name (GC, JIT, VM threads) from the
 * 15 characters the kernel keeps of it (/proc/.../comm), and a stub's name without HotSpot's
 * internal fingerprint. */
#ifndef FX_JVM_NAMES_H
#define FX_JVM_NAMES_H

#include <stddef.h>

#define FX_COMM_MAX 15 /* what the kernel keeps of a thread's name (TASK_COMM_LEN - 1) */

enum fx_thread_name_kind {
    FX_THREAD_NAME_WHOLE,    /* shorter than FX_COMM_MAX, or a known name of exactly that length */
    FX_THREAD_NAME_FULL,     /* cut, and HotSpot's full name is known: written out */
    FX_THREAD_NAME_CUT,      /* perhaps cut, the rest unknown: the comm followed by "…" */
    FX_THREAD_NAME_NUMBERED, /* a numbered family's prefix ("C2 CompilerThre"): see below */
};

/* Writes into out (cap bytes, NUL-terminated) the name to show for a thread whose comm is
 * `comm`, and returns its kind. `same_comm` is how many live threads other than Java threads
 * have this comm: a numbered family's thread ("C2 CompilerThread%d") is named with number 0
 * only when it is the only one (HotSpot keeps compiler thread 0 and removes only the last:
 * CompileBroker::can_remove), otherwise it is FX_THREAD_NAME_CUT. */
enum fx_thread_name_kind fx_jvm_names_thread(const char *comm, unsigned same_comm, char *out,
                                             size_t cap);

/* The comm is a numbered family's prefix (same_comm matters). */
int fx_jvm_names_numbered(const char *comm);

/* The length of a DynamicCodeGenerated name without the fingerprint HotSpot appends to an
 * adapter's ("I2C/C2I adapters(0xbbbbbbbaab)" -> "I2C/C2I adapters"): the length before a last
 * "(0x" + hex digits + ")", or the whole length. */
size_t fx_jvm_names_stub_len(const char *name);

#endif
