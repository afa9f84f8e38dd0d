/* SPDX-License-Identifier: Apache-2.0 */
/* The native walk's own cost (issue 16, agent/sampling/native_walk.c), outside a JVM: the
 * handler's frame-pointer walk from a real ucontext of this thread (main <- libc's start
 * code), against a text map read from /proc/self/maps, N times; prints thread CPU ns per walk
 * and frames per walk. With "dwarf" as second argument, the cstack=dwarf walk: the unwind
 * tables (fx_cfi) of every file mapping are built first, timed, and set on the map's entries.
 * Built and run by bench/run_native_walk_cost.sh. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

#include "fx_clock.h"
#include "native_walk.h"

__attribute__((noinline)) static uint32_t walk_once(const struct fx_thread *t, uint64_t *pcs,
                                                    uint8_t *stop)
{
    ucontext_t uc;
    getcontext(&uc);
    return fx_native_walk_sigsafe(t, &uc, pcs, stop);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    struct fx_errbuf eb = {{0}};
    struct fx_textmap *map;
    if (fx_textmap_read("/proc/self/maps", &map, &eb) != FX_OK) {
        fprintf(stderr, "maps: %s\n", eb.msg);
        return 1;
    }
    if (argc > 2 && strcmp(argv[2], "dwarf") == 0) {
        for (size_t i = 0; i < map->count; i++) {
            struct fx_textmap_entry *e = &map->entries[i];
            struct fx_cfi *c = NULL;
            struct fx_cfi_stats st = {0};
            int64_t t0 = fx_clock_ns(CLOCK_MONOTONIC);
            if (e->kind != FX_TEXTMAP_FILE || fx_cfi_build(e->path, &c, &st, &eb) != FX_OK)
                continue;
            printf("table %s: %lu rows, %lu bytes, %.2f ms\n", e->path, (unsigned long)st.rows,
                   (unsigned long)st.bytes, (double)(fx_clock_ns(CLOCK_MONOTONIC) - t0) / 1e6);
            e->cfi = c; /* kept until exit: the walks read it */
        }
        fx_native.dwarf = 1;
    }
    fx_textmap_slot_publish(&fx_native.maps, map);
    fx_native.enabled = 1;
    struct fx_thread t = {0};
    pthread_attr_t a;
    void *lo;
    size_t size;
    pthread_getattr_np(pthread_self(), &a);
    pthread_attr_getstack(&a, &lo, &size);
    t.stack_lo = (uintptr_t)lo;
    t.stack_hi = (uintptr_t)lo + size;
    uint64_t pcs[FX_NATIVE_MAX];
    uint8_t stop = 0;
    uint64_t frames = 0;
    int64_t c0 = fx_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (long i = 0; i < n; i++)
        frames += walk_once(&t, pcs, &stop);
    int64_t c1 = fx_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    /* getcontext alone, to subtract */
    for (long i = 0; i < n; i++) {
        ucontext_t uc;
        getcontext(&uc);
        __asm__ volatile("" : : "r"(&uc) : "memory");
    }
    int64_t c2 = fx_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    printf("walks=%ld mappings=%zu frames_per_walk=%.1f stop=%u ns_per_walk=%.1f "
           "ns_getcontext=%.1f\n",
           n, map->count, (double)frames / (double)n, stop,
           (double)((c1 - c0) - (c2 - c1)) / (double)n, (double)(c2 - c1) / (double)n);
    return 0;
}
