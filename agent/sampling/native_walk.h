/* SPDX-License-Identifier: Apache-2.0 */
/* Private to agent/sampling: the native half of a sample (issue 16, cstack=fp). native_walk.c is
 * on the signal path (in the allow-listed object with signal_handler.c); native_maps.c, outside
 * signal context, publishes the text map the walk checks every address against and switches
 * the walk on and off. */
#ifndef FX_NATIVE_WALK_H
#define FX_NATIVE_WALK_H

#include "fx_textmap.h"
#include "internal.h"

struct fx_native_state {
    struct fx_textmap_slot maps; /* the process's executable mappings (native_maps.c writes) */
    int enabled;                 /* atomic: walk at all (cstack=fp, a CPU-time mode) */
    uint64_t misses;             /* atomic: addresses found in no mapping: the map is re-read */
};

extern struct fx_native_state fx_native;

/* Signal-safe. From the interrupted registers, the native return addresses of thread t, leaf
 * first, into pcs (FX_NATIVE_MAX entries) up to the first address in Java code; returns how
 * many and sets *stop (enum fx_native_stop) to why the walk ended. */
uint32_t fx_native_walk_sigsafe(const struct fx_thread *t, const void *ucontext, uint64_t *pcs,
                                uint8_t *stop);

#endif
