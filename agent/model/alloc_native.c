/* SPDX-License-Identifier: Apache-2.0 */
/* An allocation sample's native frames in the model (issue 32 item 6), from the walk its
 * callback took (sampling/alloc_walk.c): the stack under the allocated class, root first:
 *  - with Java frames: the native frames below the bottom Java frame and between Java frames
 *    (a JNI call-back), placed as a cpu sample's are (the FX_BELOW segments by their physical
 *    Java frame counts: fx_frame_types_of's ends, fx_native_below_read and _push), then the
 *    Java frames (GetStackTrace's, untyped as before), then the native frames leafward of the
 *    top Java frame that are the program's: a JNI method's C code down to jni_NewObject, say;
 *  - without: the native frames of the VM's own allocation down to the thread's first frame
 *    (JNI_CreateJavaVM's, JavaMain's class loading, a thread's start).
 * The leaf walk starts in the agent's callback: its frames, JVMTI's posting and HotSpot's heap
 * sampler are the sampling's machinery and are left out, from the leaf down to the rootmost
 * entry into the allocation path (fx_native_alloc_push). A walk that stopped short is a
 * "[native: ...]" frame at the root of what it gave. The counts: meta.extra "Allocations".
 * Model owner only. */
#include "internal.h"

#include "alloc_walk.h"

#include <string.h>

/* Model owner only. */
static struct {
    uint64_t with_frames, kept, dropped, no_entry, no_java, stopped, below, java_unseen;
} an;

/* A ring record's layout (sample.h) around GetStackTrace's n frames and the walk's parts, so
 * the cpu samples' placement reads it; NULL when the walk has no parts or they do not fit. */
static const struct fx_sample_rec *as_record(const jvmtiFrameInfo *frames, int32_t n,
                                             const uint64_t *parts, uint32_t nparts, uint64_t *buf,
                                             size_t cap, uint32_t *len)
{
    uint64_t nt, nb;
    if (nparts < 2 || (nt = parts[0]) > FX_TYPES_MAX || nt + 2 > nparts ||
        (nb = parts[1 + nt]) > FX_BELOW_WORDS || nt + 2 + nb > nparts)
        return NULL;
    size_t bytes = sizeof(struct fx_sample_rec) + (size_t)n * sizeof(fx_asgct_frame) +
                   (nt > 0 ? (1 + nt) * 8 : 0) + (1 + nb) * 8;
    if (bytes > cap * sizeof(uint64_t) || nb == 0)
        return NULL;
    struct fx_sample_rec *r = (struct fx_sample_rec *)buf;
    memset(r, 0, sizeof(*r));
    r->num_frames = n;
    r->native_at = (uint16_t)n;
    r->types = nt > 0;
    r->below = 1;
    for (int32_t i = 0; i < n; i++) /* a native method's location is -1, ASGCT's lineno -3 */
        r->frames[i] =
                (fx_asgct_frame){.lineno = frames[i].location < 0 ? -3 : (jint)frames[i].location,
                                 .method_id = frames[i].method};
    uint8_t *at = (uint8_t *)(r->frames + n);
    if (nt > 0) {
        memcpy(at, parts, (1 + nt) * 8);
        at += (1 + nt) * 8;
    }
    memcpy(at, parts + 1 + nt, (1 + nb) * 8);
    *len = (uint32_t)bytes;
    return r;
}

int fx_alloc_native_stack(struct fx_methods *m, JNIEnv *jni, struct fx_profile *p,
                          const jvmtiFrameInfo *frames, int32_t n, const uint64_t *walk,
                          uint32_t nwords, fx_stack_id *s)
{
    uint32_t nn = (uint32_t)(walk[0] & 0xFF), rest;
    uint8_t stop = (uint8_t)((walk[0] >> 8) & 0xFF);
    if (nwords < 1 + nn || n > FX_ALLOC_FRAMES_MAX)
        nn = 0, stop = FX_NSTOP_OFF; /* malformed: no native frame claimed */
    rest = nwords - 1 - nn;
    /* the Java part, with the native frames below and between its frames */
    uint64_t buf[(sizeof(struct fx_sample_rec) + FX_ALLOC_FRAMES_MAX * sizeof(fx_asgct_frame)) / 8 +
                 2 + FX_TYPES_MAX + FX_BELOW_WORDS];
    uint32_t len = 0;
    const struct fx_sample_rec *r =
            n > 0 && (walk[0] & FX_ALLOC_WALK_PARTS)
                    ? as_record(frames, n, walk + 1 + nn, rest, buf, sizeof(buf) / 8, &len)
                    : NULL;
    struct fx_below below = {.ns = 0};
    if (r != NULL) {
        struct fx_frame_type types[FX_ALLOC_FRAMES_MAX];
        int32_t ends[FX_TYPES_MAX + 1];
        fx_frame_types_ends(r, len, n, types, ends);
        fx_native_below_read(r, len, n, ends, &below);
    }
    int rc = FX_OK;
    if (below.ns > 0) {
        an.below++;
        rc = fx_native_alloc_below_push(p, &below, n, n, s);
        for (int k = 0; k < below.ns; k++)
            an.kept += below.head[k] & 0xFF;
    }
    for (int32_t i = n - 1; i >= 0 && rc == FX_OK; i--) {
        fx_frame_id f;
        rc = fx_methods_frame(m, jni, p, frames[i].method, (jint)frames[i].location, &f);
        if (rc == FX_OK)
            rc = fx_profile_stack(p, *s, f, s);
        if (rc == FX_OK && below.ns > 1) /* the native frames a call into Java came from */
            rc = fx_native_alloc_below_push(p, &below, n, i, s);
    }
    /* the leaf part: what called into the allocation path, the machinery left out */
    uint32_t dropped = 0;
    bool found = false;
    const char *label = NULL;
    bool no_thread = nn == 0 && stop == FX_NSTOP_NO_BOUNDS; /* fx_alloc_native_walk's mark */
    if (n == 0 && stop == FX_NSTOP_JAVA) { /* Java code GetStackTrace did not give */
        an.java_unseen++;
        label = "[native: Java frames not given (GetStackTrace)]";
    } else if (no_thread) {
        label = "[native: not walked (thread not registered)]";
    }
    if (rc == FX_OK && label != NULL) {
        fx_frame_id f;
        rc = fx_profile_label_frame(p, label, FX_CAT_OTHER, 0, &f);
        if (rc == FX_OK)
            rc = fx_profile_stack(p, *s, f, s);
    }
    if (rc == FX_OK && !no_thread && (nn > 0 || stop != FX_NSTOP_OFF)) /* a stop's mark too */
        rc = fx_native_alloc_push(p, walk + 1, nn, stop, s, &dropped, &found);
    an.with_frames += nn > dropped || below.ns > 0;
    an.kept += nn - dropped;
    an.dropped += dropped;
    an.no_entry += nn > 0 && !found && (stop == FX_NSTOP_JAVA || stop == FX_NSTOP_CHAIN_END);
    an.no_java += n == 0 && nn > 0 && stop != FX_NSTOP_JAVA;
    an.stopped += !no_thread && stop != FX_NSTOP_OFF && stop != FX_NSTOP_JAVA &&
                  stop != FX_NSTOP_CHAIN_END;
    return rc;
}

void fx_alloc_native_report(struct fx_profile *p, const char *g)
{
    struct fx_alloc_walk_counts c;
    fx_alloc_native_counts(&c);
    if (c.walks == 0)
        return;
    fx_profile_extra_int(p, g, "native walks in the callback (issue 32: cstack=)",
                         (int64_t)c.walks);
    fx_profile_extra_int(p, g, "native walk in the callback: mean thread CPU ns (1 in 16 timed)",
                         c.timed > 0 ? (int64_t)(c.timed_ns / c.timed) : 0);
    fx_profile_extra_detail(p, g, "native walk in the callback: max thread CPU ns",
                            (int64_t)c.timed_max_ns);
    fx_profile_extra_int(p, g, "samples with native frames", (int64_t)an.with_frames);
    fx_profile_extra_int(p, g, "native frames kept", (int64_t)an.kept);
    fx_profile_extra_detail(
            p, g, "native frames left out (the callback, JVMTI, the heap sampler: the sampling)",
            (int64_t)an.dropped);
    fx_profile_extra_detail(p, g, "samples without Java frames (the VM's own allocations)",
                            (int64_t)an.no_java);
    fx_profile_extra_detail(p, g, "samples with native frames below or between Java frames",
                            (int64_t)an.below);
    fx_profile_extra_loss(p, g, "native walks ended without the allocation entry (marked)",
                          (int64_t)an.no_entry);
    fx_profile_extra_loss(p, g, "native walks stopped short ([native: ...] frame)",
                          (int64_t)an.stopped);
    fx_profile_extra_loss(p, g, "native walks into Java code without Java frames (GetStackTrace)",
                          (int64_t)an.java_unseen);
    fx_profile_extra_loss(p, g, "native walks not taken (thread not registered)",
                          (int64_t)c.no_thread);
    fx_profile_extra_count(p, g, "native walks on a virtual thread (none below its Java frames)",
                           (int64_t)c.virtual, FX_EXTRA_NONZERO);
}

void fx_alloc_native_new_recording(void)
{
    memset(&an, 0, sizeof(an));
    fx_alloc_native_reset();
}
