/* SPDX-License-Identifier: Apache-2.0 */
/* Validate mode's figures: the "validate" meta.extra group of each profile (a step before each
 * dump) and, at the end, the validate=REPORT.json file and one stderr line. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_json.h"
#include "fx_out_file.h"

static const char *const skip_keys[SKIP_COUNT] = {
        "no_thread_to_check", "probe_busy",      "suspend_failed", "thread_ended",
        "stack_trace_failed", "probe_no_answer", "probe_failed",   "virtual_thread_mounted",
        "thread_moved",
};

static const char *const pattern_keys[PATTERN_COUNT] = {NULL,
                                                        "top_compiled_frame",
                                                        "lost_recursive_frame",
                                                        "virtual_thread_frames_not_thawed",
                                                        "cut_at_vm_upcall",
                                                        "top_compiled_frame_scopes",
                                                        "cut_at_deoptimized_frame"};

static const char *const vt_skip_keys[VT_SKIP_COUNT] = {
        "suspend_failed", "unmounted_before_suspended", "stack_trace_failed", "probe_failed",
        "thread_moved"};

/* FX_REC_* cases (fx_recover.h) as report keys. */
static const char *const rec_keys[FX_REC_CASES] = {
        NULL,           "dispatch_stub", "prologue",        "epilogue",
        "ic_check",     "adapter",       "c1_post_barrier", "not_in_java_anchor",
        "stub_frame",   "leaf_native",   "interp_entry",    "frameless_stub",
        "stub_partial", "ic_stub",       "mh_intrinsic",    "deopt_anchor",
};

/* -FX_REC_* failures (fx_recover.h) as report keys. */
static const char *const rec_fail_keys[FX_REC_FAILS] = {
        NULL,
        "pc_in_no_known_range",
        "other_stub",
        "nmethod_body",
        "layout",
        "instruction_unknown",
        "stack",
        "asgct_failed_from_caller",
        "table_busy",
        "caller_at_bci0",
        "no_anchor",
        "stub_caller_not_compiled",
        "intrinsic_caller_no_pcdesc",
        "intrinsic_caller_osr",
        "intrinsic_caller_pcdescs_unknown",
};

static const char *const shadow_keys[SHADOW_BY_COUNT] = {"asgct_frames", "asgct_not_walkable",
                                                         "asgct_other"};

/* A consistent-enough copy of the counters (a dump reads them while the validator runs). */
struct summary {
    char *vm_version, *vm_vendor, *vm_name;
    uint64_t compared, exact, below_top, transitions, mismatches, known, skipped_code,
            skipped_other;
    uint64_t vt_compared, vt_exact, vt_transitions;
    uint64_t rec_agreed, rec_disagreed, rec_deeper; /* recovered stacks, all cases */
    uint64_t sh_agreed, sh_disagreed;               /* the anchor walk beside ASGCT */
    double exact_rate, agree_rate, known_rate;      /* of compared; -1 when nothing was compared */
};

static void summarize(struct summary *s)
{
    memset(s, 0, sizeof(*s));
    s->vm_version = fx_property("java.vm.version");
    s->vm_vendor = fx_property("java.vm.vendor");
    s->vm_name = fx_property("java.vm.name");
    s->compared = fx_va_get(&va.compared);
    s->exact = fx_va_get(&va.exact);
    s->below_top = fx_va_get(&va.below_top);
    s->transitions = fx_va_get(&va.transitions);
    s->mismatches = fx_va_get(&va.mismatches);
    s->vt_compared = fx_va_get(&va.vt.compared);
    s->vt_exact = fx_va_get(&va.vt.exact);
    s->vt_transitions = fx_va_get(&va.vt.transitions);
    s->known = s->mismatches - fx_va_get(&va.patterns[PATTERN_NONE]);
    s->skipped_code = fx_va_get(&va.code_other);
    for (int i = 0; i < FX_ASGCT_CODES; i++)
        s->skipped_code += fx_va_get(&va.code_skipped[i]);
    for (int i = SKIP_NO_THREAD + 1; i < SKIP_COUNT; i++) /* a step with no thread skips none */
        s->skipped_other += fx_va_get(&va.skipped[i]);
    for (int i = 0; i < VT_SKIP_COUNT; i++)
        s->skipped_other += fx_va_get(&va.vt.skipped[i]);
    for (int i = 1; i < FX_REC_CASES; i++) {
        s->rec_agreed += fx_va_get(&va.rec_agreed[i]);
        s->rec_disagreed += fx_va_get(&va.rec_disagreed[i]);
    }
    s->rec_deeper = fx_va_get(&va.rec_deeper);
    for (int i = 0; i < SHADOW_BY_COUNT; i++) {
        s->sh_agreed += fx_va_get(&va.shadow_agreed[i]);
        s->sh_disagreed += fx_va_get(&va.shadow_disagreed[i]);
    }
    s->exact_rate = s->compared ? (double)s->exact / (double)s->compared : -1;
    s->agree_rate = s->compared ? (double)(s->exact + s->below_top) / (double)s->compared : -1;
    uint64_t explained = s->exact + s->below_top + s->known + s->transitions;
    s->known_rate = s->compared ? (double)explained / (double)s->compared : -1;
}

static void summary_free(struct summary *s)
{
    fx_free(s->vm_version);
    fx_free(s->vm_vendor);
    fx_free(s->vm_name);
}

static void json_rate(struct fx_json *j, const char *key, double rate)
{
    fx_json_key(j, key);
    if (rate < 0)
        fx_json_null(j);
    else
        fx_json_double(j, rate, 6);
}

static void json_u64(struct fx_json *j, const char *key, uint64_t v)
{
    fx_json_key(j, key);
    fx_json_u64(j, v);
}

static void json_names(struct fx_json *j, const char *key, char **names, uint32_t n)
{
    fx_json_key(j, key);
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < n; i++)
        fx_json_str(j, names[i]);
    fx_json_arr_end(j);
}

static void json_list(struct fx_json *j, const char *key, const struct mismatch *list, uint32_t n)
{
    fx_json_key(j, key);
    fx_json_arr_begin(j);
    for (uint32_t i = 0; i < n; i++) {
        const struct mismatch *m = &list[i];
        fx_json_obj_begin(j);
        fx_json_key(j, "thread");
        fx_json_str(j, m->thread);
        fx_json_key(j, "first_difference");
        fx_json_i64(j, m->first_diff);
        fx_json_key(j, "asgct_num_frames");
        fx_json_i64(j, m->asgct_count);
        fx_json_key(j, "jvmti_frames");
        fx_json_i64(j, m->jvmti_count);
        fx_json_key(j, "known_pattern");
        fx_json_str(j, pattern_keys[m->pattern]);
        json_names(j, "asgct", m->asgct, m->n_asgct);
        json_names(j, "jvmti", m->jvmti, m->n_jvmti);
        if (m->n_scopes > 0 && m->pattern == PATTERN_TOP_SCOPES) { /* 4.2: the top nmethod */
            char code[32];
            snprintf(code, sizeof code, "0x%llx", (unsigned long long)m->top_code);
            fx_json_key(j, "top_nmethod");
            fx_json_str(j, code);
            json_names(j, "top_nmethod_scopes", m->scopes, m->n_scopes);
        } else if (m->n_scopes > 0) { /* 4.9: the callee's root, the deoptimized frame's */
            json_names(j, "deopt_return", m->scopes, m->n_scopes);
        }
        fx_json_obj_end(j);
    }
    fx_json_arr_end(j);
}

static void json_reasons(struct fx_json *j, const char *key, const uint64_t *by_reason)
{
    fx_json_key(j, key);
    fx_json_obj_begin(j);
    for (int i = 1; i < FX_REC_FAILS; i++)
        json_u64(j, rec_fail_keys[i], by_reason[i]);
    fx_json_obj_end(j);
}

/* A class of stacks compared by the recovery's rules (stackcmp.c), by case or by what ASGCT said
 * (keys[first..n-1], each with its agreed and disagreed counts). */
struct rv_class {
    const char *key, *cases_key, *reasons_key;
    const char *const *keys;
    int first, n;
    const uint64_t *agreed, *disagreed, *reasons;
    uint64_t deeper, transitions;
    const struct mismatch *list;
    uint32_t n_listed;
};

static void json_class(struct fx_json *j, const struct rv_class *c)
{
    uint64_t agreed = 0, disagreed = 0;
    for (int i = c->first; i < c->n; i++) {
        agreed += c->agreed[i];
        disagreed += c->disagreed[i];
    }
    fx_json_key(j, c->key);
    fx_json_obj_begin(j);
    json_u64(j, "compared", agreed + disagreed);
    json_u64(j, "agreed", agreed);
    json_u64(j, "disagreed", disagreed);
    json_u64(j, "deeper_than_depth_not_placed", c->deeper);
    json_u64(j, "mount_transitions", c->transitions);
    fx_json_key(j, c->cases_key);
    fx_json_obj_begin(j);
    for (int i = c->first; i < c->n; i++) {
        fx_json_key(j, c->keys[i]);
        fx_json_obj_begin(j);
        json_u64(j, "agreed", c->agreed[i]);
        json_u64(j, "disagreed", c->disagreed[i]);
        fx_json_obj_end(j);
    }
    fx_json_obj_end(j);
    json_reasons(j, c->reasons_key, c->reasons);
    json_list(j, "disagreement_list", c->list, c->n_listed);
    fx_json_obj_end(j);
}

/* The recovered stacks (ASGCT failed, the probe recovered: fx_recover.h) by FX_REC_* case, and
 * the anchor walk (recover_anchor.c) done beside ASGCT on each stopped thread, by what ASGCT
 * said there; each in the order of struct rv_class's fields. */
static void json_recovered(struct fx_json *j)
{
    const struct rv_class classes[] = {
            {"recovered", "by_case", "not_recovered_by_reason", rec_keys, 1, FX_REC_CASES,
             va.rec_agreed, va.rec_disagreed, va.rec_not, va.rec_deeper, va.rec_transitions,
             va.rec_listed, va.n_rec_listed},
            {"anchor_walk_beside_asgct", "by_asgct_answer", "not_walked_by_reason", shadow_keys, 0,
             SHADOW_BY_COUNT, va.shadow_agreed, va.shadow_disagreed, va.shadow_not,
             va.shadow_deeper, va.shadow_transitions, va.shadow_listed, va.n_shadow_listed}};
    for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
        json_class(j, &classes[i]);
    json_u64(j, "anchor_walks_with_interpreted_frames", fx_va_get(&va.anchor_interp_walks));
    json_u64(j, "anchor_interpreted_frames", fx_va_get(&va.anchor_interp_frames));
    json_u64(j, "anchor_walks_whole_checked", fx_va_get(&va.anchor_whole));
}

static void json_mismatches(struct fx_json *j)
{
    json_list(j, "mismatch_list", va.listed, va.n_listed);
    json_u64(j, "mismatches_not_listed", va.mismatches - va.n_listed);
    json_list(j, "below_top_examples", va.top_listed, va.n_top_listed);
}

static void json_skips(struct fx_json *j)
{
    fx_json_key(j, "skipped_by_code_detail");
    fx_json_obj_begin(j);
    for (int i = 0; i < FX_ASGCT_CODES; i++)
        json_u64(j, fx_stackcmp_status_name(-i), va.code_skipped[i]);
    json_u64(j, "other_codes", va.code_other);
    fx_json_obj_end(j);
    json_u64(j, "skipped_by_code_without_jvmti_frames", va.code_no_java);
    fx_json_key(j, "skipped_other");
    fx_json_obj_begin(j);
    for (int i = 0; i < SKIP_COUNT; i++)
        json_u64(j, skip_keys[i], va.skipped[i]);
    fx_json_obj_end(j);
}

static void json_jvm(struct fx_json *j, const struct summary *s)
{
    fx_json_key(j, "jvm");
    fx_json_obj_begin(j);
    fx_json_key(j, "java.vm.name");
    fx_json_str(j, s->vm_name);
    fx_json_key(j, "java.vm.version");
    fx_json_str(j, s->vm_version);
    fx_json_key(j, "java.vm.vendor");
    fx_json_str(j, s->vm_vendor);
    fx_json_obj_end(j);
}

static void json_settings(struct fx_json *j)
{
    fx_json_key(j, "settings");
    fx_json_obj_begin(j);
    json_u64(j, "period_ms", PERIOD_NS / 1000000);
    json_u64(j, "probe_wait_ms", PROBE_WAIT_NS / 1000000);
    json_u64(j, "depth", va.depth);
    fx_json_obj_end(j);
}

static void json_costs(struct fx_json *j)
{
    struct fx_probe_stats ps;
    struct fx_signal_counts sig;
    fx_probe_stats(&ps);
    fx_sampling_counts(&sig);
    json_u64(j, "resume_failed", va.resume_failed);
    json_u64(j, "probe_signals_late", sig.probe_late);
    json_u64(j, "probes_retired", ps.retired);
    fx_json_key(j, "suspended_ms_total");
    fx_json_double(j, (double)va.suspended_ns / 1e6, 3);
    fx_json_key(j, "suspended_ms_max");
    fx_json_double(j, (double)va.suspended_max_ns / 1e6, 3);
}

static void json_patterns(struct fx_json *j, const uint64_t *patterns)
{
    fx_json_key(j, "mismatches_by_pattern");
    fx_json_obj_begin(j);
    for (int i = 1; i < PATTERN_COUNT; i++)
        json_u64(j, pattern_keys[i], patterns[i]);
    json_u64(j, "unexplained", patterns[PATTERN_NONE]);
    fx_json_obj_end(j);
}

/* compared, then how each comparison ended: exact, below_top, mount_transitions, mismatches. */
static void json_classes(struct fx_json *j, const uint64_t counts[5])
{
    static const char *const keys[] = {"compared", "exact", "below_top", "mount_transitions",
                                       "mismatches"};
    for (int i = 0; i < 5; i++)
        json_u64(j, keys[i], counts[i]);
}

static void json_slot(struct fx_json *j, const struct va_vt *v)
{
    fx_json_key(j, "mount_events_slot");
    fx_json_obj_begin(j);
    fx_json_key(j, "mount_events_on");
    fx_json_bool(j, fx_vthreads_on());
    json_u64(j, "same_virtual_thread", v->slot_same);
    json_u64(j, "other_virtual_thread", v->slot_other);
    json_u64(j, "none", v->slot_none);
    json_u64(j, "skipped_mount_transition", v->slot_transition);
    fx_json_obj_end(j);
}

/* Comparisons on carriers that carried a virtual thread (vthread.c), also in the totals. */
static void json_vthreads(struct fx_json *j)
{
    const struct va_vt *v = &va.vt;
    fx_json_key(j, "virtual_threads");
    fx_json_obj_begin(j);
    fx_json_key(j, "route");
    if (v->route)
        fx_json_str(j, "Thread.cont -> Continuation.target -> val$vthread");
    else
        fx_json_null(j);
    fx_json_key(j, "route_missing");
    if (v->why_not != NULL)
        fx_json_str(j, v->why_not);
    else
        fx_json_null(j);
    json_u64(j, "carriers_found_carrying", v->found);
    const uint64_t classes[] = {v->compared, v->exact, v->below_top, v->transitions, v->mismatches};
    json_classes(j, classes);
    json_patterns(j, v->patterns);
    json_rate(j, "exact_rate", v->compared ? (double)v->exact / (double)v->compared : -1);
    /* Every frame ASGCT gave is right; those still frozen in the heap are JVMTI's only (4.1). */
    uint64_t right = v->exact + v->patterns[PATTERN_NOT_THAWED];
    json_u64(j, "asgct_frames_all_right", right);
    json_rate(j, "asgct_frames_all_right_rate",
              v->compared ? (double)right / (double)v->compared : -1);
    uint64_t outside = v->compared - v->transitions;
    json_rate(j, "exact_rate_outside_transitions",
              outside ? (double)v->exact / (double)outside : -1);
    fx_json_key(j, "skipped");
    fx_json_obj_begin(j);
    for (int i = 0; i < VT_SKIP_COUNT; i++)
        json_u64(j, vt_skip_keys[i], v->skipped[i]);
    fx_json_obj_end(j);
    json_u64(j, "skipped_by_asgct_code", v->by_code);
    json_slot(j, v);
    fx_json_obj_end(j);
}

/* After fx_validate_stop: the validator's fields are no longer written. */
static void json_body(struct fx_json *j, const struct summary *s)
{
    fx_json_obj_begin(j);
    json_u64(j, "fxagent_validate_report", 1);
    json_jvm(j, s);
    json_settings(j);
    json_u64(j, "steps", va.steps);
    const uint64_t classes[] = {s->compared, s->exact, s->below_top, s->transitions, s->mismatches};
    json_classes(j, classes);
    json_u64(j, "mismatches_known_pattern", s->known);
    json_patterns(j, va.patterns);
    json_rate(j, "exact_rate", s->exact_rate);
    json_rate(j, "agreement_below_top_rate", s->agree_rate);
    json_rate(j, "agreement_with_known_pattern_rate", s->known_rate);
    json_u64(j, "skipped_by_code", s->skipped_code);
    json_u64(j, "skipped_other_total", s->skipped_other);
    json_skips(j);
    json_recovered(j);
    json_costs(j);
    json_mismatches(j);
    json_vthreads(j);
    fx_json_obj_end(j);
}

/* Written like a profile: a temporary file renamed into place, or the fallback folder. */
static int write_report(const char *path, const struct summary *s, char *written, size_t cap)
{
    struct fx_out_file f;
    struct fx_errbuf eb = {{0}};
    memset(&f, 0, sizeof(f));
    struct fx_json *j = fx_malloc(sizeof(*j));
    int rc = j == NULL ? FX_ENOMEM : fx_out_file_open(&f, path, 0644, &eb);
    if (rc == FX_OK) {
        fx_json_init(j, fx_out_file_sink(&f));
        json_body(j, s);
        rc = fx_json_finish(j);
        snprintf(written, cap, "%s", f.target ? f.target : path);
        if (rc == FX_OK)
            rc = fx_out_file_commit(&f, &eb);
    }
    if (rc != FX_OK)
        fx_log("validate: could not write the report %s: %s", path,
               eb.msg[0] ? eb.msg : fx_strerror(rc));
    else if (f.fell_back) /* the words of a profile's fallback (dump.c) */
        fx_log("validate: could not write %s (%s); wrote %s instead", path, f.reason, written);
    fx_out_file_abort(&f);
    fx_free(j);
    return rc;
}

static void rate_text(double rate, char *out, size_t cap)
{
    if (rate < 0)
        snprintf(out, cap, "n/a");
    else
        snprintf(out, cap, "%.2f %%", rate * 100);
}

static void validate_extra(JNIEnv *jni, struct fx_profile *p, const struct fx_span *span)
{
    (void)jni, (void)span;
    if (!fx_opt()->validate || p == NULL)
        return;
    const char *g = "validate";
    struct summary s;
    summarize(&s);
    char buf[512];
    snprintf(buf, sizeof(buf), "%s %s (%s)", s.vm_name ? s.vm_name : "?",
             s.vm_version ? s.vm_version : "?", s.vm_vendor ? s.vm_vendor : "?");
    fx_profile_extra_str(p, g, "JVM", buf);
    fx_profile_extra_int(p, g, "stacks compared", (int64_t)s.compared);
    fx_profile_extra_int(p, g, "exact", (int64_t)s.exact);
    fx_profile_extra_int(p, g, "agreeing below the top frame", (int64_t)s.below_top);
    fx_profile_extra_int(p, g, "mismatches", (int64_t)s.mismatches);
    fx_profile_extra_int(p, g, "mismatches of known HotSpot patterns", (int64_t)s.known);
    fx_profile_extra_int(p, g, "stopped in a virtual thread's mount or unmount",
                         (int64_t)s.transitions);
    fx_profile_extra_int(p, g, "compared on carriers carrying a virtual thread",
                         (int64_t)s.vt_compared);
    fx_profile_extra_int(p, g, "of which exact", (int64_t)s.vt_exact);
    rate_text(s.exact_rate, buf, sizeof(buf));
    fx_profile_extra_str(p, g, "exact rate", buf);
    rate_text(s.agree_rate, buf, sizeof(buf));
    fx_profile_extra_str(p, g, "agreement below the top frame", buf);
    fx_profile_extra_int(p, g, "skipped by ASGCT code", (int64_t)s.skipped_code);
    fx_profile_extra_int(p, g, "skipped for other reasons", (int64_t)s.skipped_other);
    fx_profile_extra_int(p, g, "recovered stacks compared (ASGCT failed, recovery's rules)",
                         (int64_t)(s.rec_agreed + s.rec_disagreed));
    fx_profile_extra_int(p, g, "recovered stacks agreeing", (int64_t)s.rec_agreed);
    fx_profile_extra_int(p, g, "recovered stacks disagreeing", (int64_t)s.rec_disagreed);
    fx_profile_extra_int(p, g, "recovered stacks deeper than depth (not placed)",
                         (int64_t)s.rec_deeper);
    fx_profile_extra_int(p, g, "anchor walks beside ASGCT agreeing", (int64_t)s.sh_agreed);
    fx_profile_extra_int(p, g, "anchor walks beside ASGCT disagreeing", (int64_t)s.sh_disagreed);
    summary_free(&s);
}

static void free_list(struct mismatch *list, uint32_t *n)
{
    for (uint32_t i = 0; i < *n; i++) {
        struct mismatch *m = &list[i];
        for (uint32_t k = 0; k < m->n_asgct; k++)
            fx_free(m->asgct[k]);
        for (uint32_t k = 0; k < m->n_jvmti; k++)
            fx_free(m->jvmti[k]);
        for (uint32_t k = 0; k < m->n_scopes; k++)
            fx_free(m->scopes[k]);
        fx_free(m->scopes);
        fx_free(m->asgct);
        fx_free(m->jvmti);
        fx_free(m->thread);
    }
    *n = 0;
}

static void say(const struct summary *s, const char *written)
{
    char exact[32], agree[32];
    rate_text(s->exact_rate, exact, sizeof(exact));
    rate_text(s->agree_rate, agree, sizeof(agree));
    fx_log("validate: %llu stacks compared on %s: %llu exact (%s), %llu agreeing below the "
           "top frame (agreement %s), %llu in a virtual thread's mount or unmount, %llu "
           "mismatches (%llu of known HotSpot patterns); %llu on carriers carrying a virtual "
           "thread (%llu exact); %llu skipped by ASGCT code, %llu for other reasons; recovered "
           "stacks: %llu agreeing, %llu disagreeing; anchor walks beside ASGCT: %llu agreeing, "
           "%llu disagreeing%s%s",
           (unsigned long long)s->compared, s->vm_version ? s->vm_version : "?",
           (unsigned long long)s->exact, exact, (unsigned long long)s->below_top, agree,
           (unsigned long long)s->transitions, (unsigned long long)s->mismatches,
           (unsigned long long)s->known, (unsigned long long)s->vt_compared,
           (unsigned long long)s->vt_exact, (unsigned long long)s->skipped_code,
           (unsigned long long)s->skipped_other, (unsigned long long)s->rec_agreed,
           (unsigned long long)s->rec_disagreed, (unsigned long long)s->sh_agreed,
           (unsigned long long)s->sh_disagreed, written[0] ? "; report " : "", written);
}

void fx_validate_report(void)
{
    if (!fx_opt()->validate)
        return;
    struct summary s;
    summarize(&s);
    char written[4096] = "";
    if (fx_opt()->validate_report != NULL &&
        write_report(fx_opt()->validate_report, &s, written, sizeof(written)) != FX_OK)
        written[0] = '\0';
    if (!fx_opt()->quiet)
        say(&s, written);
    free_list(va.listed, &va.n_listed);
    free_list(va.top_listed, &va.n_top_listed);
    free_list(va.rec_listed, &va.n_rec_listed);
    free_list(va.shadow_listed, &va.n_shadow_listed);
    summary_free(&s);
}

const struct fx_source fx_validate_step = {.name = "validate", .before_dump = validate_extra};
