/* SPDX-License-Identifier: Apache-2.0 */
/* A ring record's stack in the model: ASGCT's frames root first, a blob's frame on top of a
 * recovered stack, a failure as its label frame (with the blob it was in, when known), the
 * wall state above all; and the tallies of how stacks came out, reported in meta.extra
 * ("AsyncGetCallTrace outcomes", "Stack recovery": docs/VALIDATION.md section 8). Model owner
 * only. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

#include "fx_alloc.h"

static const char *const asgct_labels[FX_ASGCT_CODES] = {
        "[AGCT: no Java frames]",
        "[AGCT: no class load events]",
        "[AGCT: GC active]",
        "[AGCT: not in Java]",
        "[AGCT: not walkable (native)]",
        "[AGCT: unknown Java]",
        "[AGCT: not walkable (Java)]",
        "[AGCT: unknown thread state]",
        "[AGCT: thread exiting]",
        "[AGCT: deoptimization]",
        "[AGCT: safepoint]",
};

/* Wall mode (issue 18): the leaf frame of a thread that was not running, in the Idle category
 * with the state's subcategory, so the activity graph draws CPU only. A RUNNABLE thread (in
 * Java or in native code) that used CPU since its previous sample gets no state frame: its own
 * frames' categories (Java, Native, VM) say it ran. */
static const struct {
    const char *label;
    uint8_t sub;
} states[FX_WS_COUNT] = {
        [FX_WS_RUNNABLE] = {"[state: RUNNABLE, not on CPU]", FX_IDLE_RUNNABLE},
        [FX_WS_BLOCKED] = {"[state: BLOCKED]", FX_IDLE_BLOCKED},
        [FX_WS_WAITING] = {"[state: WAITING]", FX_IDLE_WAITING},
        [FX_WS_TIMED_WAITING] = {"[state: TIMED_WAITING]", FX_IDLE_WAITING},
        [FX_WS_SLEEPING] = {"[state: SLEEPING]", FX_IDLE_SLEEPING},
        [FX_WS_PARKED] = {"[state: PARKED]", FX_IDLE_PARKED},
        [FX_WS_IN_NATIVE] = {"[state: IN_NATIVE, not on CPU]", FX_IDLE_NATIVE},
        /* issue 22: a carrier blocked with a virtual thread mounted */
        [FX_WS_PINNED] = {"[state: pinned]", FX_IDLE_PINNED},
        /* issue 22: one in native code (a blocking read, a JNI call), not on CPU */
        [FX_WS_PINNED_NATIVE] = {"[state: pinned, in native, not on CPU]", FX_IDLE_PINNED},
};

/* The frames ASGCT left out between a remounted virtual thread's thawed top and enterSpecial
 * (docs/VALIDATION.md 4.1): how many and which is not known, so one named frame says so. */
#define FROZEN_LABEL "[virtual thread: callers still frozen, not walked by AGCT]"

/* Model owner only. */
static struct {
    uint64_t outcomes[FX_ASGCT_CODES], outcome_other, java_stacks;
    uint64_t recovered[FX_REC_CASES], rec_failed[FX_REC_FAILS], rec_named;
    uint64_t truncated, walk_stops[8], partial_cut;
    struct fx_frame_type *types; /* the types of the record in hand (frame_types.c) */
    int32_t types_cap;
} st;

/* The root frame of a recovered walk that ended before the depth (fx_sample_rec.walk_stop): its
 * callers are not known, and this says why, where "[truncated]" would claim the depth cut it. */
static const char *const walk_stop_labels[8] = {
        NULL,
        "[walk stopped: interpreted frame]",
        "[walk stopped: stub or call stub]",
        "[walk stopped: unknown code]",
        "[walk stopped: replaced compiled method]",
        "[walk stopped: stack word outside the stack]",
        "[walk stopped: interpreted frames past the handler's budget]",
        "[walk stopped: code heap lookups past the handler's budget]",
};

/* The pseudo-frames of a partial stack (FX_REC_STUB_PARTIAL, recover_partial.c, VALIDATION.md
 * 8.5d): between an intrinsic's stub and its caller's method, and the root when the callers of
 * that method were not proven. */
#define INLINE_GAP_LABEL "[inlined frames not known: no PcDesc at the call]"
#define CALLER_GAP_LABEL "[walk stopped: compiled caller's return not proven]"

/* Room for n frame types; false without memory (the frames then stay untyped). */
static bool types_room(int32_t n)
{
    if (n <= st.types_cap)
        return true;
    struct fx_frame_type *t = fx_reallocarray(st.types, (size_t)n, sizeof(*t));
    if (t == NULL)
        return false;
    st.types = t;
    st.types_cap = n;
    return true;
}

/* A leaf or root pseudo-frame that is not Java. */
static int label_frame(struct fx_profile *p, const char *label, uint8_t cat, uint8_t sub,
                       fx_frame_id *out)
{
    fx_str_id name;
    fx_func_id f;
    int rc = fx_profile_cstring(p, label, &name);
    if (rc != FX_OK)
        return rc;
    struct fx_func_key k = {.name = name,
                            .resource = FX_STR_NONE,
                            .source = FX_STR_NONE,
                            .line = -1,
                            .is_java = false};
    rc = fx_profile_func(p, &k, &f);
    if (rc != FX_OK)
        return rc;
    struct fx_frame_key fk = {.func = f, .line = -1, .category = cat, .subcategory = sub};
    return fx_profile_frame(p, &fk, out);
}

/* A label frame above `root` (FX_STACK_NONE: a root frame). */
static int label_under(struct fx_profile *p, fx_stack_id root, const char *label, uint8_t cat,
                       fx_stack_id *out)
{
    if (root.i == FX_NONE_ID)
        return fx_profile_label_stack(p, label, cat, out);
    fx_frame_id f;
    int rc = label_frame(p, label, cat, 0, &f);
    return rc == FX_OK ? fx_profile_stack(p, root, f, out) : rc;
}

static int outcome_stack(struct fx_profile *p, fx_stack_id root, int32_t code, fx_stack_id *out)
{
    if (code < -(FX_ASGCT_CODES - 1)) {
        st.outcome_other++;
        return label_under(p, root, "[AGCT: other error]", FX_CAT_OTHER, out);
    }
    st.outcomes[-code]++;
    uint8_t cat = code == FX_ASGCT_GC_ACTIVE ? FX_CAT_GC : FX_CAT_OTHER;
    return label_under(p, root, asgct_labels[-code], cat, out);
}

/* The frame of the blob a pc was in (a FX_LINE_STUB / FX_LINE_NMETHOD record frame): a stub by
 * HotSpot's name in the VM category, a compiled method as its Java method; on top of a
 * recovered stack in a "Recovered" subcategory (PROFILE-FORMAT.md §12.1). */
static int blob_frame(struct fx_methods *m, JNIEnv *jni, struct fx_profile *p,
                      const fx_asgct_frame *b, bool recovered, fx_frame_id *out)
{
    if (b->lineno == FX_LINE_NMETHOD)
        return fx_methods_blob_frame(m, jni, p, b->method_id, recovered, out);
    return fx_stub_frame(p, (uint64_t)(uintptr_t)b->method_id, recovered, out);
}

/* Root = the last ASGCT frame, leaf = frame 0; "[truncated]" above a stack cut at the depth;
 * FROZEN_LABEL under the callee of a virtual thread's enterSpecial when ASGCT jumped over its
 * frozen callers (fx_vt_route.frozen). After a recovery frame 0 is the blob's frame
 * (fx_sample_rec). */
static int java_stack(struct fx_methods *m, JNIEnv *jni, struct fx_profile *p,
                      const struct fx_sample_rec *r, uint32_t len, const struct fx_vt_route *under,
                      fx_stack_id *out)
{
    fx_stack_id s = under->root;
    int rc = FX_OK;
    /* A virtual thread's stack begins above its carrier's frames (fx_vt_route.keep). */
    int32_t n = under->keep >= 0 && under->keep < r->num_frames ? under->keep : r->num_frames;
    bool recovered = r->recovery > 0 && r->recovery < FX_REC_CASES;
    st.java_stacks++;
    if (recovered)
        st.recovered[r->recovery]++;
    if (r->truncated && n == r->num_frames) {
        st.truncated++;
        rc = label_under(p, s, "[truncated]", FX_CAT_OTHER, &s);
    } else if (recovered && r->walk_stop != FX_WSTOP_NONE && n == r->num_frames &&
               walk_stop_labels[r->walk_stop] != NULL) {
        st.walk_stops[r->walk_stop]++;
        rc = label_under(p, s, walk_stop_labels[r->walk_stop], FX_CAT_OTHER, &s);
    }
    bool typed = !recovered && types_room(r->num_frames);
    int32_t ends[FX_TYPES_MAX + 1];
    if (typed)
        fx_frame_types_of(r, len, r->num_frames, st.types, ends);
    /* issue 32: the native frames below the Java ones (a virtual thread's are its carrier's);
     * none under a recovered walk that stopped short of the call stub (its mark is the root:
     * the frames the native walk found would sit under frames the stack lacks) */
    struct fx_below below = {.ns = 0};
    if (r->below && n == r->num_frames && !r->truncated && r->walk_stop == FX_WSTOP_NONE &&
        r->vthread != FX_VT_ID && (n == 0 || r->frames[n - 1].lineno != FX_LINE_CALLER_GAP))
        fx_native_below_read(r, len, n, typed ? ends : NULL, &below);
    if (below.ns > 0 && rc == FX_OK)
        rc = fx_native_below_push(p, &below, n, n, &s);
    for (int32_t i = n - 1; i >= 0 && rc == FX_OK; i--) {
        fx_frame_id f;
        if (i == under->frozen - 1 &&
            (rc = label_under(p, s, FROZEN_LABEL, FX_CAT_OTHER, &s)) != FX_OK)
            break;
        /* frame 0 of a recovery is its blob; an anchor walk's frames are nmethods or
         * interpreted frames (jmethodID and bci, issue 32), all of them recovered; a leaf native
         * recovery's frame 0 is its Java caller */
        int32_t line = r->frames[i].lineno;
        if (line == FX_LINE_INLINE_GAP || line == FX_LINE_CALLER_GAP) {
            st.partial_cut += line == FX_LINE_CALLER_GAP;
            rc = label_frame(p, line == FX_LINE_INLINE_GAP ? INLINE_GAP_LABEL : CALLER_GAP_LABEL,
                             FX_CAT_OTHER, 0, &f);
        } else if ((i == 0 && recovered && r->recovery != FX_REC_ANCHOR &&
                    r->recovery != FX_REC_LEAF_NATIVE) ||
                   r->frames[i].lineno == FX_LINE_NMETHOD)
            rc = blob_frame(m, jni, p, &r->frames[i], true, &f);
        else if (r->recovery == FX_REC_ANCHOR || r->recovery == FX_REC_DEOPT) /* its walk's */
            rc = fx_methods_frame_typed(m, jni, p, r->frames[i].method_id, r->frames[i].lineno,
                                        FX_JAVA_RECOVERED, 0, &f);
        else if (typed)
            rc = fx_methods_frame_typed(m, jni, p, r->frames[i].method_id, r->frames[i].lineno,
                                        st.types[i].sub, st.types[i].inline_depth, &f);
        else
            rc = fx_methods_frame(m, jni, p, r->frames[i].method_id, r->frames[i].lineno, &f);
        if (rc == FX_OK)
            rc = fx_profile_stack(p, s, f, &s);
        if (rc == FX_OK && below.ns > 1) /* the native frames a call into Java came from */
            rc = fx_native_below_push(p, &below, n, i, &s);
    }
    if (rc == FX_OK && r->recovery == FX_REC_DISPATCH) /* issue 32 item 3: under the stub */
        rc = fx_receivers_push(p, r, len, &s);
    *out = s;
    return rc;
}

/* An ASGCT failure: its label frame, and above it the blob the pc was in when one is known
 * (the failure stays the root: nothing is claimed about the callers). */
static int failure_stack(struct fx_methods *m, JNIEnv *jni, struct fx_profile *p,
                         const struct fx_sample_rec *r, uint32_t len, fx_stack_id root,
                         fx_stack_id *out)
{
    int rc = outcome_stack(p, root, r->num_frames, out);
    if (r->recovery == 0 || rc != FX_OK)
        return rc;
    int reason = r->recovery & 0x3F;
    if (reason < FX_REC_FAILS)
        st.rec_failed[reason]++;
    if (!(r->recovery & FX_REC_NAMED) ||
        len < sizeof(struct fx_sample_rec) + sizeof(fx_asgct_frame))
        return FX_OK;
    st.rec_named++;
    fx_frame_id f;
    rc = blob_frame(m, jni, p, &r->frames[0], false, &f);
    return rc == FX_OK ? fx_profile_stack(p, *out, f, out) : rc;
}

/* A thread that is not a Java thread (vm_threads.c): its native frames alone, in the thread's
 * category; a label in it when the walk gave none (cstack=no, or the leaf in no mapping). */
static int native_thread_stack(struct fx_profile *p, const struct fx_thread *t,
                               const struct fx_sample_rec *r, uint32_t len, fx_stack_id *out)
{
    *out = FX_STACK_NONE;
    int rc = fx_native_frames_push(p, r, len, t->category, t->subcategory, out);
    if (rc == FX_OK) /* and the kernel's above those */
        rc = fx_kernel_frames_push(p, r, len, t->category, t->subcategory, out);
    if (rc != FX_OK || out->i != FX_NONE_ID)
        return rc;
    return fx_profile_label_stack(p, "[not a Java thread: no native frame]",
                                  t->category != 0 ? t->category : FX_CAT_NATIVE, out);
}

int fx_stacks_of_record(struct fx_methods *m, JNIEnv *jni, struct fx_profile *p,
                        const struct fx_thread *t, const struct fx_sample_rec *r, uint32_t len,
                        bool on_cpu, const struct fx_vt_route *under, fx_stack_id *out)
{
    if (r->num_frames == FX_NOT_JAVA_THREAD)
        return native_thread_stack(p, t, r, len, out);
    int rc = r->num_frames > 0 ? java_stack(m, jni, p, r, len, under, out)
                               : failure_stack(m, jni, p, r, len, under->root, out);
    if (rc == FX_OK)
        rc = fx_native_frames_push(p, r, len, 0, 0, out); /* issue 16: above the Java part */
    if (rc == FX_OK)
        rc = fx_kernel_frames_push(p, r, len, 0, 0, out); /* and the kernel's above those */
    if (rc != FX_OK || r->state >= FX_WS_COUNT || states[r->state].label == NULL)
        return rc;
    bool running = r->state == FX_WS_RUNNABLE || r->state == FX_WS_IN_NATIVE ||
                   r->state == FX_WS_PINNED_NATIVE;
    if (running && on_cpu)
        return FX_OK;
    fx_frame_id f;
    rc = label_frame(p, states[r->state].label, FX_CAT_IDLE, states[r->state].sub, &f);
    return rc == FX_OK ? fx_profile_stack(p, *out, f, out) : rc;
}

static void report_outcomes(struct fx_profile *p)
{
    const char *g = "AsyncGetCallTrace outcomes";
    fx_profile_extra_int(p, g, "Java stack", (int64_t)st.java_stacks);
    for (int i = 0; i < FX_ASGCT_CODES; i++) {
        char label[80];
        snprintf(label, sizeof(label), "%d %s", -i, asgct_labels[i]);
        fx_profile_extra_detail(p, g, label, (int64_t)st.outcomes[i]);
    }
    if (st.outcome_other)
        fx_profile_extra_int(p, g, "other codes", (int64_t)st.outcome_other);
}

static const char *const rec_case_labels[FX_REC_CASES] = {
        NULL,
        "recovered: pc in a vtable/itable stub",
        "recovered: pc in a compiled method's prologue (frame not built)",
        "recovered: pc in a compiled method's epilogue (frame released)",
        "recovered: pc in a compiled method's inline cache check (before its verified entry)",
        "recovered: pc in an I2C/C2I adapter",
        "recovered: pc in g1_post_barrier_slow (caller at its barrier's branch)",
        "recovered: not in Java, Java frames walked from the frame anchor",
        "recovered: pc in an arraycopy or intrinsic stub (rbp-framed), compiled caller",
        "recovered: pc in native code compiled code called as a leaf (its caller walked)",
        "recovered: pc in the interpreter's method entry (frame being built)",
        "recovered: pc in C1's slow_subtype_check (frameless, decoded), C1 caller",
        "recovered (partial): pc in an intrinsic stub, its caller's method, inlined frames not "
        "known (no PcDesc at the call)",
        "recovered: pc in an inline cache stub (InlineCacheBuffer, frameless), compiled caller",
        "recovered: pc in a method handle intrinsic (frameless nmethod), compiled caller",
        "recovered: deoptimization (-9) before its frames are replaced, walked from the blob's "
        "anchor",
};
static const char *const rec_fail_labels[FX_REC_FAILS] = {
        NULL,
        "not recovered: pc in no known code range",
        "not recovered: pc in another stub (named)",
        "not recovered: pc in a compiled method's body (named)",
        "not recovered: compiled method layout unknown or stale",
        "not recovered: prologue/epilogue/inline cache check instruction not known",
        "not recovered: stack word outside the thread's stack (or bounds unknown)",
        "not recovered: AsyncGetCallTrace failed from the caller's context",
        "not recovered: code table busy",
        "not recovered: caller at bci 0 (a deoptimized caller looks so)",
        "not recovered: not in Java, no last Java frame (or anchor offsets unknown)",
        "not recovered: a stub's return address is not in compiled code after a call",
        "not recovered: an intrinsic stub's caller has no PcDesc where its call ends",
        "not recovered: an intrinsic stub's caller is an OSR compilation",
        "not recovered: an intrinsic stub's caller's PcDescs unknown (none after the call)",
};

/* Stack recovery (issue 20, docs/VALIDATION.md section 8): the stacks in this profile per case
 * ("recovered stacks" is their sum, the contract with tests/it/stack_shape_check.py), the
 * failures that stayed failures, and the handlers' own counts of attempts. */
static void report_recovery(struct fx_profile *p, const struct fx_recovery_counts *c)
{
    const char *g = "Stack recovery";
    uint64_t total = 0, tried = 0;
    for (int i = 1; i < FX_REC_CASES; i++) {
        total += st.recovered[i];
        fx_profile_extra_detail(p, g, rec_case_labels[i], (int64_t)st.recovered[i]);
    }
    fx_profile_extra_int(p, g, "recovered stacks", (int64_t)total);
    for (int i = 1; i < FX_REC_FAILS; i++)
        fx_profile_extra_detail(p, g, rec_fail_labels[i], (int64_t)st.rec_failed[i]);
    fx_profile_extra_detail(p, g, "failures named by their blob", (int64_t)st.rec_named);
    fx_profile_extra_detail(p, g, "partial stacks whose compiled caller's return is not proven",
                            (int64_t)st.partial_cut);
    for (int i = 1; i < 8; i++)
        if (walk_stop_labels[i] != NULL)
            fx_profile_extra_detail(p, g, walk_stop_labels[i], (int64_t)st.walk_stops[i]);
    for (int i = 1; i < FX_REC_CASES; i++)
        tried += c->recovered[i];
    for (int i = 1; i < FX_REC_FAILS; i++)
        tried += c->failed[i];
    fx_profile_extra_detail(p, g, "handler: attempts (ASGCT -3/-4/-5/-6)", (int64_t)tried);
    uint64_t ok = 0;
    for (int i = 1; i < FX_REC_CASES; i++)
        ok += c->recovered[i];
    fx_profile_extra_detail(p, g, "handler: stacks recovered (incl. samples later lost)",
                            (int64_t)ok);
    fx_profile_extra_detail(p, g, "handler: recovered in a method found in the code heaps",
                            (int64_t)c->codeheap);
    fx_codemap_report(p, g);
    fx_codemap_heap_report(p, g);
}

uint64_t fx_stacks_truncated(void)
{
    return st.truncated;
}

void fx_stacks_report(struct fx_profile *p, const struct fx_recovery_counts *handlers)
{
    report_outcomes(p);
    report_recovery(p, handlers);
    fx_frame_types_report(p);
    fx_receivers_report(p);
}

void fx_stacks_reset(void)
{
    struct fx_frame_type *types = st.types; /* the buffer outlives recordings */
    int32_t cap = st.types_cap;
    memset(&st, 0, sizeof(st));
    st.types = types;
    st.types_cap = cap;
    fx_frame_types_reset();
    fx_receivers_reset();
}
