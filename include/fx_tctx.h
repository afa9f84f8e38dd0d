/* SPDX-License-Identifier: Apache-2.0 */
/* Trace context on samples (issue 33 item 4): the per-thread record fxagent.TraceContext writes
 * from Java through a direct ByteBuffer over it, and the copy the SIGPROF handler takes into a
 * sample. JVM-free, so the layout is one definition for the Java side's offsets (documented in
 * TraceContext.java), the handler and the drain.
 *
 * Invariant: only the owning thread writes its record, and only that thread's handler reads it
 * in signal context, so a handler can interrupt a write but a write never runs during a read.
 * The writer stores gen = 0 first (opaque, then a store-store fence), then the ids and labels,
 * then gen = its new generation (release): a handler that sees gen != 0 sees the complete
 * context of that generation, and one that interrupts a write sees 0 (no context), never a
 * mix of two contexts. A clear stores gen = 0. */
#ifndef FX_TCTX_H
#define FX_TCTX_H

#include <stdint.h>

#define FX_TCTX_LABELS 4 /* labels per context at most (TraceContext.MAX_LABELS) */

/* The record, byte offsets fixed (TraceContext.java writes them by number). */
struct fx_tctx_rec {
    uint64_t gen;                   /* 0: no context (or one being written); else its generation */
    uint64_t trace_hi;              /* the 128-bit trace id, high 64 bits (W3C: the first 16 hex) */
    uint64_t trace_lo;              /* its low 64 bits */
    uint64_t span;                  /* the 64-bit span id */
    uint32_t label[FX_TCTX_LABELS]; /* interned key/value pairs (trace_ctx.c), 0: none */
};
_Static_assert(sizeof(struct fx_tctx_rec) == 48, "TraceContext.java writes these offsets");

/* Signal-safe: copies the thread's current context into *out; 0 (no copy) when none is set or
 * one is being written. Relaxed loads and compiler fences only: the writer is this thread. */
static inline uint64_t fx_tctx_copy_sigsafe(const struct fx_tctx_rec *c, struct fx_tctx_rec *out)
{
    uint64_t gen = __atomic_load_n(&c->gen, __ATOMIC_RELAXED);
    if (gen == 0)
        return 0;
    __atomic_signal_fence(__ATOMIC_ACQUIRE);
    out->gen = gen;
    out->trace_hi = __atomic_load_n(&c->trace_hi, __ATOMIC_RELAXED);
    out->trace_lo = __atomic_load_n(&c->trace_lo, __ATOMIC_RELAXED);
    out->span = __atomic_load_n(&c->span, __ATOMIC_RELAXED);
    for (int i = 0; i < FX_TCTX_LABELS; i++)
        out->label[i] = __atomic_load_n(&c->label[i], __ATOMIC_RELAXED);
    return gen;
}

#endif
