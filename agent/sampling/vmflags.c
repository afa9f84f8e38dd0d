/* SPDX-License-Identifier: Apache-2.0 */
/* HotSpot's DebugNonSafepoints, turned on through VMStructs' flag table (JVMFlag::flags,
 * numFlags, each entry's _name, _addr, _flags, _type) when it is at its default, at load and
 * at attach (issue 31). Why: C1 and C2 record debug information (the PcDescs AsyncGetCallTrace
 * names a compiled frame's method and line by) at non-safepoint pcs only when it is on; else a
 * sample in compiled code is attributed to the nearest safepoint's scope, often a caller or the
 * wrong line (docs/VALIDATION.md 4.5). HotSpot turns it on by itself only while
 * CompiledMethodLoad is enabled and the flag is at its default (debugInfoRec.cpp,
 * compute_recording_non_safepoints); codemap=heap no longer enables that event. The flag is read
 * when a compilation starts (each DebugInformationRecorder), so setting it after start is safe
 * and reaches every later compilation; code compiled before an attach keeps its safepoint-only
 * debug information, as it did with CompiledMethodLoad enabled at attach. The user's
 * -XX:[+-]DebugNonSafepoints (any origin but the default) wins: the flag is not touched.
 * Tests: it.frame_types (the workload prints the flag through HotSpotDiagnosticMXBean). */
#include "codemap_heap.h"
#include "internal.h"

#include <string.h>

#define ORIGIN_MASK 0xF /* JVMFlag::VALUE_ORIGIN_MASK; origin DEFAULT is 0 (JDK 8 to 25) */

enum outcome {
    NOT_FOUND = 0, /* no flag table in VMStructs, or no such bool flag */
    SET,           /* at its default, off: set on */
    ON_ALREADY,    /* at its default, on (a debug build) */
    USER,          /* given by the user (command line, environment, file, management) */
};

static enum outcome done;
static int user_value;

/* The entry of the bool flag named name in the table, or NULL. */
static const char *find(const char *want, long *flags_off)
{
    const void *const *table = fx_vmstructs_static("JVMFlag", "flags");
    const size_t *count = fx_vmstructs_static("JVMFlag", "numFlags");
    long name = fx_vmstructs_field("JVMFlag", "_name");
    long addr = fx_vmstructs_field("JVMFlag", "_addr");
    long type = fx_vmstructs_field("JVMFlag", "_type"); /* an int since JDK 16: bool is 0 */
    long size = fx_vmstructs_size("JVMFlag");
    *flags_off = fx_vmstructs_field("JVMFlag", "_flags");
    if (table == NULL || *table == NULL || count == NULL || name < 0 || addr < 0 ||
        *flags_off < 0 || size <= 0 || *count > 10000)
        return NULL;
    for (size_t i = 0; i < *count; i++) {
        const char *e = (const char *)*table + i * (size_t)size;
        const char *n = *(const char *const *)(e + name);
        if (n == NULL || strcmp(n, want) != 0)
            continue;
        int32_t t = 0;
        if (type >= 0)
            memcpy(&t, e + type, sizeof(t));
        return t == 0 && *(void *const *)(e + addr) != NULL ? e : NULL;
    }
    return NULL;
}

void fx_vmflags_debug_non_safepoints(void)
{
    long flags_off;
    const char *e = find("DebugNonSafepoints", &flags_off);
    if (e == NULL) {
        done = NOT_FOUND;
        return;
    }
    bool *value = *(bool *const *)(e + fx_vmstructs_field("JVMFlag", "_addr"));
    int32_t flags;
    memcpy(&flags, e + flags_off, sizeof(flags));
    if ((flags & ORIGIN_MASK) != 0) {
        done = USER;
        user_value = *value;
        return;
    }
    done = *value ? ON_ALREADY : SET;
    __atomic_store_n(value, true, __ATOMIC_RELAXED); /* a plain bool: each compilation reads it */
}

void fx_vmflags_report(struct fx_profile *p, const char *g)
{
    const char *says = done == SET          ? "on (set by fxagent: it was off at its default)"
                       : done == ON_ALREADY ? "on (its default in this JVM)"
                       : done == USER       ? (user_value ? "on (the user's)" : "off (the user's)")
                                            : "unknown (no flag table in VMStructs)";
    fx_profile_extra_str(p, g, "DebugNonSafepoints", says);
}
