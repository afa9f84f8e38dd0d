/* SPDX-License-Identifier: Apache-2.0 */
/* Frame types (issue 32): which code each Java frame of a sample ran in, interpreted, compiled by
 * C1 or C2, or inlined into its caller's compiled code, from the words the signal handler
 * recorded (sample.h FX_TYPE_*: one per physical frame, walked in the code table by
 * recover_anchor.c), matched here to AsyncGetCallTrace's frames; and the tallies of it, in
 * meta.extra ("Frame types"). Model owner only.
 *
 * The match, leaf first: an interpreted frame is exactly one ASGCT frame; a compiled frame is
 * the ASGCT frames down to and including the first of its own method (the nmethod's root): the
 * ones above it were inlined into it, at depth 1 for the direct callee. That first occurrence
 * is the root unless the method was inlined into itself, which the code table says
 * (FX_RANGE_SELF_INLINE, also set when HotSpot gave no inlining records): there, and wherever
 * the words end or a method is not found, the frames left stay untyped (subcategory Other),
 * never guessed. A frame of a native method is typed the same way, by its physical frame (the
 * interpreter's native entry, a native wrapper); unmatched, it keeps its own subcategory. */
#include "internal.h"

#include "fx_clock.h"

/* The offset past a counted part (a uint64_t count, at most max, then that many words) at `at`
 * when `present`; at itself when not; 0 when it is malformed or at is 0. */
static size_t skip_part(const struct fx_sample_rec *r, size_t len, size_t at, bool present,
                        uint64_t max)
{
    uint64_t n;
    if (at == 0 || !present)
        return at;
    if (at + sizeof(n) > len)
        return 0;
    memcpy(&n, (const uint8_t *)r + at, sizeof(n));
    return n <= max ? at + (1 + n) * sizeof(uint64_t) : 0;
}

/* Where the parts after the kernel part begin in a record of len bytes; 0 when the kernel part
 * is malformed. */
static size_t after_kernel(const struct fx_sample_rec *r, size_t len)
{
    return skip_part(r, len, fx_rec_kernel_at(r), r->kernel != FX_KREC_OFF, FX_KERNEL_MAX);
}

/* The frame types' count (a uint64_t) and words, after the kernel part, when `types` is set;
 * len: the record's length. 0 when the record holds no such part or it does not fit. */
static size_t fx_rec_types_at(const struct fx_sample_rec *r, size_t len)
{
    size_t at = after_kernel(r, len);
    return r->types && at != 0 && at + sizeof(uint64_t) <= len ? at : 0;
}

/* Where the found nmethods' part (right after the types) would begin; 0 when malformed. */
static size_t types_end(const struct fx_sample_rec *r, size_t len)
{
    return skip_part(r, len, after_kernel(r, len), r->types, FX_TYPES_MAX);
}

/* Where the parts after the types and their found nmethods begin; 0 when malformed. */
static size_t after_types(const struct fx_sample_rec *r, size_t len)
{
    return skip_part(r, len, types_end(r, len), r->found, FX_FOUND_KEPT);
}

/* The found part's count (a uint64_t) and words (fx_heap_memo.found), or 0. */
static size_t fx_rec_found_at(const struct fx_sample_rec *r, size_t len)
{
    size_t at = r->found ? types_end(r, len) : 0;
    return at != 0 && at + sizeof(uint64_t) <= len ? at : 0;
}

size_t fx_rec_below_at(const struct fx_sample_rec *r, size_t len)
{
    size_t at = r->below ? after_types(r, len) : 0;
    return at != 0 && at + sizeof(uint64_t) <= len ? at : 0;
}

size_t fx_rec_task_at(const struct fx_sample_rec *r, size_t len)
{
    size_t at = r->task ? after_types(r, len) : 0;
    at = skip_part(r, len, at, r->below, FX_BELOW_WORDS);
    return at != 0 && at + 2 * sizeof(uint64_t) <= len ? at : 0;
}

size_t fx_rec_receiver_at(const struct fx_sample_rec *r, size_t len)
{
    size_t at = r->receiver ? after_types(r, len) : 0;
    at = skip_part(r, len, at, r->below, FX_BELOW_WORDS);
    at = at != 0 && r->task ? at + 2 * sizeof(uint64_t) : at;
    return at != 0 && at + sizeof(uint64_t) <= len ? at : 0;
}
/* Model owner only. */
static struct {
    uint64_t typed[FX_JAVA_RECOVERED + 1], untyped, self_inline, mismatch, samples;
    uint64_t words, ns; /* type words read (8 bytes each in the ring, +8 per sample); time */
} ft;

static uint8_t compiled_sub(unsigned tier)
{
    if (tier >= 1 && tier <= 3)
        return FX_JAVA_C1;
    return tier == 4 ? FX_JAVA_C2 : FX_JAVA_OTHER; /* 0: the tier was not read */
}

void fx_frame_types_of(const struct fx_sample_rec *r, uint32_t len, int32_t n,
                       struct fx_frame_type *out, int32_t *ends)
{
    for (int32_t i = 0; i < n; i++)
        out[i] = (struct fx_frame_type){FX_JAVA_OTHER, 0};
    for (int k = 0; k <= FX_TYPES_MAX; k++)
        ends[k] = k == 0 ? 0 : -1;
    size_t at = fx_rec_types_at(r, len);
    uint64_t nw = 0;
    if (at != 0)
        memcpy(&nw, (const uint8_t *)r + at, sizeof(nw));
    if (nw > FX_TYPES_MAX || at + (1 + nw) * sizeof(uint64_t) > len)
        nw = 0;
    const uint8_t *words = (const uint8_t *)r + at + sizeof(uint64_t);
    size_t fat = fx_rec_found_at(r, len);
    uint64_t nf = 0, jf = 0; /* the found part's words; how many FX_TYPE_FOUND named so far */
    if (fat != 0)
        memcpy(&nf, (const uint8_t *)r + fat, sizeof(nf));
    if (nf > FX_FOUND_KEPT || fat + (1 + nf) * sizeof(uint64_t) > len)
        nf = 0;
    int32_t i = 0;
    int64_t t0 = fx_clock_ns(CLOCK_MONOTONIC);
    ft.samples += nw > 0;
    ft.words += nw;
    for (uint64_t k = 0; k < nw && i < n; k++) {
        uint64_t w;
        memcpy(&w, words + k * sizeof(w), sizeof(w));
        unsigned tag = (unsigned)(w >> 56);
        if (tag == FX_TYPE_INTERPRETED) {
            out[i++].sub = FX_JAVA_INTERPRETED;
            ends[k + 1] = i;
            continue;
        }
        jmethodID root = (jmethodID)(uintptr_t)(w & ((UINT64_C(1) << 56) - 1));
        /* found in the code heaps during the sample: its facts from the drain's code map or
         * the nmethod itself, now (issue 31); typed only where it is known not to be inlined
         * into itself, as its CompiledMethodLoad would have said */
        bool known = false;
        bool found = (tag & FX_TYPE_COMPILED) && (tag & 8) && (tag & FX_TYPE_FOUND);
        jf += found && !(tag & FX_TYPE_AGAIN); /* the next word, or the one before again */
        if (found && jf >= 1 && jf <= nf) {
            uint64_t fw;
            memcpy(&fw, (const uint8_t *)r + fat + jf * sizeof(uint64_t), sizeof(fw));
            known = fx_codemap_found_not_self(fw, (uint64_t)(uintptr_t)root, tag & 7);
        }
        if (!(tag & FX_TYPE_COMPILED) || ((tag & 8) && !known)) {
            ft.self_inline += (tag & 8) != 0;
            break;
        }
        int32_t j = i;
        while (j < n && r->frames[j].method_id != root)
            j++;
        if (j == n) { /* unless its root was cut off at the depth */
            ft.mismatch += !r->truncated;
            break;
        }
        out[j].sub = compiled_sub(tag & 7);
        for (int32_t x = i; x < j; x++)
            out[x] = (struct fx_frame_type){FX_JAVA_INLINED, (uint8_t)(j - x < 255 ? j - x : 255)};
        i = j + 1;
        ends[k + 1] = i;
    }
    for (int32_t x = 0; x < n; x++) {
        /* a native method: typed by the code its frame runs in where its physical frame was
         * matched (the interpreter's native entry: interpreted; a native wrapper nmethod by
         * the tier the code map read, which HotSpot leaves at CompLevel_none, 0, "not read":
         * such a frame stays untyped), else its own subcategory as before */
        if (r->frames[x].lineno == -3 && out[x].sub != FX_JAVA_INTERPRETED &&
            out[x].sub != FX_JAVA_C1 && out[x].sub != FX_JAVA_C2)
            out[x] = (struct fx_frame_type){FX_JAVA_NATIVE_METHOD, 0};
        if (out[x].sub == FX_JAVA_OTHER)
            ft.untyped++;
        else
            ft.typed[out[x].sub]++;
    }
    int64_t t1 = fx_clock_ns(CLOCK_MONOTONIC);
    ft.ns += t0 > 0 && t1 > t0 ? (uint64_t)(t1 - t0) : 0;
}

void fx_frame_types_ends(const struct fx_sample_rec *r, uint32_t len, int32_t n,
                         struct fx_frame_type *out, int32_t *ends)
{
    __typeof__(ft) kept = ft; /* the samples' figures stay theirs */
    fx_frame_types_of(r, len, n, out, ends);
    ft = kept;
}

void fx_frame_types_report(struct fx_profile *p)
{
    const char *g = "Frame types";
    fx_profile_extra_int(p, g, "samples with types", (int64_t)ft.samples);
    fx_profile_extra_int(p, g, "frames interpreted", (int64_t)ft.typed[FX_JAVA_INTERPRETED]);
    fx_profile_extra_int(p, g, "frames compiled by C1", (int64_t)ft.typed[FX_JAVA_C1]);
    fx_profile_extra_int(p, g, "frames compiled by C2", (int64_t)ft.typed[FX_JAVA_C2]);
    fx_profile_extra_int(p, g, "frames inlined", (int64_t)ft.typed[FX_JAVA_INLINED]);
    fx_profile_extra_detail(p, g, "frames of native methods not typed by their code",
                            (int64_t)ft.typed[FX_JAVA_NATIVE_METHOD]);
    fx_profile_extra_int(p, g, "frames untyped", (int64_t)ft.untyped);
    fx_profile_extra_detail(p, g, "walks stopped: a method maybe inlined into itself",
                            (int64_t)ft.self_inline);
    fx_profile_extra_detail(p, g, "walks stopped: compiled method not among the frames",
                            (int64_t)ft.mismatch);
    /* the price (docs/BENCHMARKS.md "Frame types"): ring bytes and the drain's matching time */
    fx_profile_extra_detail(p, g, "ring bytes of type words (8 per frame, 8 per sample)",
                            (int64_t)(8 * (ft.words + ft.samples)));
    fx_profile_extra_detail(p, g, "drain time matching types (us)", (int64_t)(ft.ns / 1000));
}

void fx_frame_types_reset(void)
{
    memset(&ft, 0, sizeof(ft));
}
