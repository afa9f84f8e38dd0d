/* SPDX-License-Identifier: Apache-2.0 */
/* A ring record's stack in the model: ASGCT's frames root first, a blob's frame on top of a
 * recovered stack, a failure as its label frame (with the blob it was in, when known), the
 * wall state above all; and the tallies of how stacks came out, reported in meta.extra
 * ("AsyncGetCallTrace outcomes", "Stack recovery": docs/VALIDATION.md section 8). Model owner
 * only. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

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

static const char *const state_labels[FX_WS_COUNT] = {
        NULL, NULL, "[state: BLOCKED]", "[state: WAITING]", "[state: TIMED_WAITING]",
};

/* Model owner only. */
static struct {
    uint64_t outcomes[FX_ASGCT_CODES], outcome_other, java_stacks;
    uint64_t recovered[FX_REC_CASES], rec_failed[FX_REC_FAILS], rec_named;
    uint64_t truncated;
} st;

/* A leaf or root pseudo-frame that is not Java. */
static int label_frame(struct fx_profile *p, const char *label, uint8_t cat, fx_frame_id *out)
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
    struct fx_frame_key fk = {.func = f, .line = -1, .category = cat};
    return fx_profile_frame(p, &fk, out);
}

static int outcome_stack(struct fx_profile *p, int32_t code, fx_stack_id *out)
{
    if (code < -(FX_ASGCT_CODES - 1)) {
        st.outcome_other++;
        return fx_profile_label_stack(p, "[AGCT: other error]", FX_CAT_OTHER, out);
    }
    st.outcomes[-code]++;
    uint8_t cat = code == FX_ASGCT_GC_ACTIVE ? FX_CAT_GC : FX_CAT_OTHER;
    return fx_profile_label_stack(p, asgct_labels[-code], cat, out);
}

/* The frame of the blob a pc was in (a FX_LINE_STUB / FX_LINE_NMETHOD record frame): a stub by
 * HotSpot's name in the VM category, a compiled method as its Java method; on top of a
 * recovered stack in a "Recovered" subcategory (PROFILE-FORMAT.md §12.1). */
static int blob_frame(struct fx_methods *m, JNIEnv *jni, struct fx_profile *p,
                      const fx_asgct_frame *b, bool recovered, fx_frame_id *out)
{
    if (b->lineno == FX_LINE_NMETHOD)
        return fx_methods_blob_frame(m, jni, p, b->method_id, recovered, out);
    const char *name = fx_codemap_stub_name((uint64_t)(uintptr_t)b->method_id);
    fx_str_id s;
    fx_func_id f;
    int rc = fx_profile_cstring(p, name != NULL ? name : "[unknown stub]", &s);
    struct fx_func_key k = {.name = s,
                            .resource = FX_STR_NONE,
                            .source = FX_STR_NONE,
                            .line = -1,
                            .is_java = false};
    if (rc == FX_OK)
        rc = fx_profile_func(p, &k, &f);
    if (rc != FX_OK)
        return rc;
    struct fx_frame_key fk = {.func = f,
                              .line = -1,
                              .category = FX_CAT_VM,
                              .subcategory = recovered ? FX_VM_RECOVERED_STUB : FX_VM_STUB};
    return fx_profile_frame(p, &fk, out);
}

/* Root = the last ASGCT frame, leaf = frame 0; "[truncated]" above a stack cut at the depth.
 * After a recovery frame 0 is the blob's frame (fx_sample_rec). */
static int java_stack(struct fx_methods *m, JNIEnv *jni, struct fx_profile *p,
                      const struct fx_sample_rec *r, fx_stack_id *out)
{
    fx_stack_id s = FX_STACK_NONE;
    int rc = FX_OK;
    bool recovered = r->recovery > 0 && r->recovery < FX_REC_CASES;
    st.java_stacks++;
    if (recovered)
        st.recovered[r->recovery]++;
    if (r->truncated) {
        st.truncated++;
        rc = fx_profile_label_stack(p, "[truncated]", FX_CAT_OTHER, &s);
    }
    for (int32_t i = r->num_frames - 1; i >= 0 && rc == FX_OK; i--) {
        fx_frame_id f;
        if (i == 0 && recovered)
            rc = blob_frame(m, jni, p, &r->frames[0], true, &f);
        else
            rc = fx_methods_frame(m, jni, p, r->frames[i].method_id, r->frames[i].lineno, &f);
        if (rc == FX_OK)
            rc = fx_profile_stack(p, s, f, &s);
    }
    *out = s;
    return rc;
}

/* An ASGCT failure: its label frame, and above it the blob the pc was in when one is known
 * (the failure stays the root: nothing is claimed about the callers). */
static int failure_stack(struct fx_methods *m, JNIEnv *jni, struct fx_profile *p,
                         const struct fx_sample_rec *r, uint32_t len, fx_stack_id *out)
{
    int rc = outcome_stack(p, r->num_frames, out);
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

int fx_stacks_of_record(struct fx_methods *m, JNIEnv *jni, struct fx_profile *p,
                        const struct fx_sample_rec *r, uint32_t len, fx_stack_id *out)
{
    int rc = r->num_frames > 0 ? java_stack(m, jni, p, r, out)
                               : failure_stack(m, jni, p, r, len, out);
    if (rc == FX_OK)
        rc = fx_native_frames_push(p, r, len, out); /* issue 16: above the Java part */
    if (rc != FX_OK || r->state >= FX_WS_COUNT || state_labels[r->state] == NULL)
        return rc;
    fx_frame_id f;
    rc = label_frame(p, state_labels[r->state], FX_CAT_IDLE, &f);
    return rc == FX_OK ? fx_profile_stack(p, *out, f, out) : rc;
}

static void report_outcomes(struct fx_profile *p)
{
    const char *g = "AsyncGetCallTrace outcomes";
    fx_profile_extra_int(p, g, "Java stack", (int64_t)st.java_stacks);
    for (int i = 0; i < FX_ASGCT_CODES; i++) {
        char label[80];
        snprintf(label, sizeof(label), "%d %s", -i, asgct_labels[i]);
        fx_profile_extra_int(p, g, label, (int64_t)st.outcomes[i]);
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
        fx_profile_extra_int(p, g, rec_case_labels[i], (int64_t)st.recovered[i]);
    }
    fx_profile_extra_int(p, g, "recovered stacks", (int64_t)total);
    for (int i = 1; i < FX_REC_FAILS; i++)
        fx_profile_extra_int(p, g, rec_fail_labels[i], (int64_t)st.rec_failed[i]);
    fx_profile_extra_int(p, g, "failures named by their blob", (int64_t)st.rec_named);
    for (int i = 1; i < FX_REC_CASES; i++)
        tried += c->recovered[i];
    for (int i = 1; i < FX_REC_FAILS; i++)
        tried += c->failed[i];
    fx_profile_extra_int(p, g, "handler: attempts (ASGCT -5/-6)", (int64_t)tried);
    uint64_t ok = 0;
    for (int i = 1; i < FX_REC_CASES; i++)
        ok += c->recovered[i];
    fx_profile_extra_int(p, g, "handler: stacks recovered (incl. samples later lost)", (int64_t)ok);
    fx_codemap_report(p, g);
}

uint64_t fx_stacks_truncated(void)
{
    return st.truncated;
}

void fx_stacks_report(struct fx_profile *p, const struct fx_recovery_counts *handlers)
{
    report_outcomes(p);
    report_recovery(p, handlers);
}

void fx_stacks_reset(void)
{
    memset(&st, 0, sizeof(st));
}
