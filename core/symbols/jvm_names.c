/* SPDX-License-Identifier: Apache-2.0 */
/* The JVM's own things under the names users read (include/fx_jvm_names.h).
 *
 * Threads: the kernel keeps 15 bytes
 * of a thread's name, so HotSpot's "C2 CompilerThread0" reads "C2 CompilerThre" and "VM Periodic
 * Task Thread" "VM Periodic Tas". A comm is written out in full only when exactly one name
 * HotSpot gives (JDK 17 to 25) starts with it; anything else keeps its 15 bytes and says it may be
 * cut ("…"), never a guessed tail. */
#include "fx_jvm_names.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* HotSpot's names longer than the comm keeps (thread.hpp, watcherThread, monitorDeflationThread,
 * g1YoungRemSetSamplingThread (JDK 17), jfrThreadSampler, shenandoahControlThread; the Java
 * threads the JDK starts, should one show up without its ThreadStart), and the one of exactly 15
 * bytes. A "%d" ends a numbered family (compileBroker.cpp: "C2 CompilerThread%d"). */
static const char *const known[] = {
        "VM Periodic Task Thread",
        "Monitor Deflation Thread",
        "G1 Young RemSet Sampling",
        "JFR Thread Sampler",
        "Shenandoah Control Thread",
        "Notification Thread",
        "Signal Dispatcher",
        "Reference Handler",
        "Attach Listener",
        "C1 CompilerThread%d",
        "C2 CompilerThread%d",
        "JVMCI CompilerThread%d",
        "JVMCI-native CompilerThread%d",
};
#define N_KNOWN (sizeof(known) / sizeof(known[0]))

static int numbered(const char *k)
{
    size_t n = strlen(k);
    return n > 2 && strcmp(k + n - 2, "%d") == 0;
}

/* The one known name the comm is the first 15 bytes of; NULL if none or several. */
static const char *match(const char *comm)
{
    const char *hit = NULL;
    for (size_t i = 0; i < N_KNOWN; i++) {
        if (strncmp(known[i], comm, FX_COMM_MAX) != 0)
            continue;
        if (hit != NULL)
            return NULL;
        hit = known[i];
    }
    return hit;
}

int fx_jvm_names_numbered(const char *comm)
{
    const char *k = strlen(comm) == FX_COMM_MAX ? match(comm) : NULL;
    return k != NULL && numbered(k);
}

enum fx_thread_name_kind fx_jvm_names_thread(const char *comm, unsigned same_comm, char *out,
                                             size_t cap)
{
    size_t n = strlen(comm);
    const char *k = n == FX_COMM_MAX ? match(comm) : NULL;
    enum fx_thread_name_kind kind = n < FX_COMM_MAX            ? FX_THREAD_NAME_WHOLE
                                    : k == NULL                ? FX_THREAD_NAME_CUT
                                    : strlen(k) == FX_COMM_MAX ? FX_THREAD_NAME_WHOLE
                                    : !numbered(k)             ? FX_THREAD_NAME_FULL
                                    : same_comm == 1           ? FX_THREAD_NAME_NUMBERED
                                                               : FX_THREAD_NAME_CUT;
    int w;
    if (kind == FX_THREAD_NAME_FULL)
        w = snprintf(out, cap, "%s", k);
    else if (kind == FX_THREAD_NAME_NUMBERED)
        w = snprintf(out, cap, "%.*s0", (int)(strlen(k) - 2), k);
    else if (kind == FX_THREAD_NAME_CUT)
        w = snprintf(out, cap, "%s\xe2\x80\xa6", comm);
    else
        w = snprintf(out, cap, "%s", comm);
    /* Too small a buffer: the comm as read, cut to fit, is still not a wrong name. */
    if (w < 0 || (size_t)w >= cap) {
        snprintf(out, cap, "%s", comm);
        return FX_THREAD_NAME_WHOLE;
    }
    return kind;
}

/* Stubs: HotSpot names each AdapterBlob "I2C/C2I adapters" followed by its fingerprint, the
 * argument shape it was made for, in hex ("(0xbbbbbbbaab)"; without it when GenerateEvents
 * replays the code cache). The shape means nothing to a reader and splits one kind of frame
 * into hundreds of functions in the call tree. */
size_t fx_jvm_names_stub_len(const char *name)
{
    size_t n = strlen(name);
    if (n < 5 || name[n - 1] != ')')
        return n;
    size_t i = n - 1;
    while (i > 0 && isxdigit((unsigned char)name[i - 1]))
        i--;
    if (i == n - 1 || i < 3 || strncmp(name + i - 3, "(0x", 3) != 0)
        return n;
    i -= 3;
    while (i > 0 && name[i - 1] == ' ')
        i--;
    return i > 0 ? i : n;
}
