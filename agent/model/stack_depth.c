/* SPDX-License-Identifier: Apache-2.0 */
/* depth=N as the frames a sample's stack holds, of every kind (issue 32 item 7): Java,
 * native, kernel, the state and label frames. The signal handler asks AsyncGetCallTrace for N
 * Java frames, and the native and kernel frames come on top of those, so a deep stack held
 * N + native + kernel + labels (depth=50 kept 55). Here the finished stack is cut to N at its
 * root side: the leaf-most frames stay, under one "[truncated]" frame that counts as one of
 * the N (a virtual thread's root frame stays below it, counted too). "[truncated]" means this
 * cut only. depth=N/M (async-profiler's jstackdepth=N/M, its DepthTests): a stack over N frames
 * is cut to M, counted the same way, so a deep recursion's stacks fold into few short ones
 * under "[truncated]" while every stack of at most N frames stays whole (it.frame_types' xint
 * run). Owns the count of stacks cut here that the Java walk had not cut already. Model owner
 * only. */
#include "internal.h"

#include "fx_alloc.h"
#include "fx_profile.h"

#define TRUNCATED_LABEL "[truncated]"

static uint64_t cuts; /* model owner only */

/* Frames from s down to its root (0 for FX_STACK_NONE or a stack not in the table). */
static uint32_t frames_in(const struct fx_profile *p, fx_stack_id s)
{
    uint32_t n = 0;
    fx_frame_id f;
    while (s.i != FX_NONE_ID && fx_profile_stack_at(p, s, &s, &f) == FX_OK)
        n++;
    return n;
}

/* The "[truncated]" frame (interned with its one-frame stack, as a Java cut makes it). */
static int truncated_frame(struct fx_profile *p, fx_frame_id *f)
{
    fx_stack_id one, none;
    int rc = fx_profile_label_stack(p, TRUNCATED_LABEL, FX_CAT_OTHER, &one);
    return rc == FX_OK ? fx_profile_stack_at(p, one, &none, f) : rc;
}

int fx_stack_depth_cap(struct fx_profile *p, fx_stack_id base, uint32_t depth, uint32_t cut_to,
                       fx_stack_id *s)
{
    uint32_t len = frames_in(p, *s);
    if (depth == 0 || len <= depth)
        return FX_OK;
    cut_to = cut_to == 0 || cut_to > depth ? depth : cut_to;
    uint32_t base_len = frames_in(p, base);
    if (base_len + 2 > cut_to || base_len >= len) { /* no room for the base: cut it too */
        base = FX_STACK_NONE;
        base_len = 0;
    }
    uint32_t keep = cut_to - base_len - 1; /* leaf-most frames kept, under "[truncated]" */
    fx_frame_id trunc;
    int rc = truncated_frame(p, &trunc);
    if (rc != FX_OK)
        return rc;
    fx_frame_id *kept = keep > 0 ? fx_malloc(keep * sizeof(*kept)) : NULL;
    if (keep > 0 && kept == NULL)
        return FX_ENOMEM;
    fx_stack_id at = *s;
    for (uint32_t i = 0; i < keep && rc == FX_OK; i++)
        rc = fx_profile_stack_at(p, at, &at, &kept[i]);
    /* The frame above the base in the original: "[truncated]" when the Java walk cut it. */
    bool was_cut = false;
    for (uint32_t i = keep; i + base_len < len && rc == FX_OK; i++) {
        fx_frame_id f;
        rc = fx_profile_stack_at(p, at, &at, &f);
        was_cut = f.i == trunc.i;
    }
    fx_stack_id out = base;
    if (rc == FX_OK)
        rc = fx_profile_stack(p, out, trunc, &out);
    for (uint32_t i = keep; i > 0 && rc == FX_OK; i--)
        rc = fx_profile_stack(p, out, kept[i - 1], &out);
    fx_free(kept);
    if (rc != FX_OK)
        return rc;
    if (!was_cut)
        cuts++;
    *s = out;
    return FX_OK;
}

uint64_t fx_stack_depth_cuts(void)
{
    return cuts;
}

void fx_stack_depth_reset(void)
{
    cuts = 0;
}
