/* SPDX-License-Identifier: Apache-2.0 */
/* Virtual threads in the model (issue 22): where a sample of a carrier goes. A sample taken while a
 * virtual thread was mounted (fx_sample_rec.vthread, sampling/vthreads.c) goes to that virtual
 * thread: its own track while fewer than vtracks= (default 32) have one, else the carrier's track
 * under a root frame "[virtual thread] NAME*" (one per name's prefix, issue 30), the virtual thread
 * named in an interval marker on that track. Either way its stack starts above
 * Continuation.enterSpecial: the carrier's frames below the continuation are not the virtual
 * thread's. A sample whose stack holds enterSpecial while the slot named no virtual thread is one
 * of two known patterns, labelled and counted: the carrier was mounted before the agent attached
 * (no mount seen yet), or a mount or unmount was in progress (the events bracket the switch a few
 * frames early or late). The continuation's entry frames (Continuation.enter .. VirtualThread.run,
 * Thread.runWith; VThreadContinuation$1.run, under a sample in the JVMTI start or end
 * notification), in a whole ASGCT stack above enterSpecial and in a JVMTI-taken one (a wall-mode
 * state sample) at its root, are cut too, so a virtual thread's whole stacks start at its task.
 * ASGCT jumps from a remounted virtual thread's thawed top to
 * enterSpecial over the frames still frozen in its heap stack chunk (docs/VALIDATION.md 4.1): a
 * frame above enterSpecial that is not Continuation.enter, its only callee in a whole stack, is
 * that jump, and the route asks stacks.c to mark it (fx_vt_route.frozen). Platform threads' samples
 * never hold enterSpecial (only virtual threads run continuations) and are never given one. Names
 * come from the sampling side's queue into a bounded direct-mapped table; an id whose name is
 * unknown or was overwritten shows as "virtual thread #ID". Model owner only. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

#define NAMES 2048 /* power of two */

struct vt_name {
    uint64_t id;
    char name[64];
};

/* A carrier's current run of samples of one virtual thread past the cap (mounted_marker). */
struct vt_run {
    fx_thread_id index; /* the carrier's track */
    uint64_t id;
    int64_t first_ns, last_ns;
};

#define RUNS 256 /* carriers followed at once; more: counted, not marked */

struct vt_track {
    uint64_t id;
    fx_thread_id index;
    int64_t last_ns; /* its last sample, for the "[idle]" gaps (drain.c) */
    bool named;      /* made with its name; else named once the name is read */
};

static struct {
    jmethodID run;   /* Continuation.enterSpecial (JDK 21+), where a continuation's frames begin */
    jmethodID enter; /* Continuation.enter: enterSpecial's callee in a whole stack */
    /* VirtualThread.run(Runnable), Thread.runWith: just below the task; VThreadContinuation$1.run
     * (JDK 23+): below notifyJvmtiStart/End, which run outside VirtualThread.run */
    jmethodID entry[3];
    bool looked_up;
    struct vt_name names[NAMES];
    struct vt_track tracks[FX_VTRACKS_MAX]; /* the first vtracks= of them used */
    uint32_t n_tracks;
    uint64_t own, labelled, before_attach, in_transition, names_overwritten, idle;
    uint64_t frozen; /* samples shown with the frozen-callers frame (drain.c counts them) */
    struct vt_run runs[RUNS];
    uint32_t n_runs;
    uint64_t run_markers, runs_unmarked;
} mv;

/* Continuation and Thread are initialized by the JVM's start; VirtualThread only once the
 * application makes a virtual thread (its name reaching the queue says one exists): looking it
 * up earlier would run its static initializer in every JVM (see fx_jvm_method). */
static void look_up_run(JNIEnv *jni)
{
    mv.looked_up = true;
    mv.run = fx_jvm_method(jni, "jdk/internal/vm/Continuation", "enterSpecial", NULL);
    mv.enter = fx_jvm_method(jni, "jdk/internal/vm/Continuation", "enter", NULL);
    mv.entry[1] = fx_jvm_method(jni, "java/lang/Thread", "runWith",
                                "(Ljava/lang/Object;Ljava/lang/Runnable;)V");
}

static struct vt_name *name_slot(uint64_t id)
{
    return &mv.names[(id * 0x9E3779B97F4A7C15ull) >> 53];
}

void fx_model_vthreads_pass(JNIEnv *jni)
{
    if (!mv.looked_up && fx_vthreads_on())
        look_up_run(jni);
    struct fx_vthread_name batch[64];
    size_t n;
    while ((n = fx_vthreads_take_names(batch, 64)) > 0) {
        if (mv.entry[0] == NULL) {
            mv.entry[0] =
                    fx_jvm_method(jni, "java/lang/VirtualThread", "run", "(Ljava/lang/Runnable;)V");
            mv.entry[2] = fx_jvm_method(jni, "java/lang/VirtualThread$VThreadContinuation$1", "run",
                                        "()V");
        }
        for (size_t i = 0; i < n; i++) {
            struct vt_name *s = name_slot(batch[i].id);
            if (s->id != 0 && s->id != batch[i].id)
                mv.names_overwritten++;
            s->id = batch[i].id;
            memcpy(s->name, batch[i].name, sizeof(s->name));
            s->name[sizeof(s->name) - 1] = '\0';
        }
    }
}

static const char *name_of(uint64_t id)
{
    const struct vt_name *s = name_slot(id);
    return s->id == id && s->name[0] != '\0' ? s->name : NULL;
}

size_t fx_model_vthreads_label(uint64_t id, char *buf, size_t cap)
{
    const char *name = name_of(id);
    int n = name != NULL ? snprintf(buf, cap, "%s #%llu", name, (unsigned long long)id)
                         : snprintf(buf, cap, "virtual thread #%llu", (unsigned long long)id);
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

/* The index of Continuation.enterSpecial in the record's frames (leaf 0), or -1. Above it:
 * Continuation.enter and the other entry frames in a whole stack, else the thawed bottom frame
 * (frozen_at). */
static int32_t run_frame(const struct fx_sample_rec *r)
{
    if (mv.run == NULL)
        return -1;
    for (int32_t i = r->num_frames - 1; i >= 0; i--)
        if (r->frames[i].method_id == mv.run)
            return i;
    return -1;
}

/* How many leaf-side frames of a virtual thread's `keep` (-1: all) are its own: below the
 * leaf-most entry frame found among the root-most ENTRY_DEPTH. */
#define ENTRY_DEPTH 8
static bool is_entry(jmethodID m)
{
    for (size_t e = 0; m != NULL && e < sizeof(mv.entry) / sizeof(mv.entry[0]); e++)
        if (m == mv.entry[e])
            return true;
    return false;
}

static int32_t cut_entry(const struct fx_sample_rec *r, int32_t keep)
{
    int32_t n = keep >= 0 && keep < r->num_frames ? keep : r->num_frames;
    for (int32_t i = n - 1; i >= 0 && i >= n - ENTRY_DEPTH; i--)
        if (is_entry(r->frames[i].method_id))
            keep = i;
    return keep;
}

/* k (enterSpecial's index) when the frame above it, kept (keep), is a Java method other than
 * Continuation.enter: the callers between were not walked (file comment); else -1. A stub there
 * (a recovered top, e.g. enterSpecial's own call into the thaw stub) proves nothing. Without
 * enter's id (an unknown JDK) nothing is claimed. */
static int32_t frozen_at(const struct fx_sample_rec *r, int32_t k, int32_t keep)
{
    if (mv.enter == NULL || k < 1 || (keep >= 0 && keep < k))
        return -1;
    const fx_asgct_frame *callee = &r->frames[k - 1];
    bool stub = callee->lineno == FX_LINE_STUB ||
                (k == 1 && r->recovery > 0 && r->recovery < FX_REC_CASES &&
                 r->recovery != FX_REC_LEAF_NATIVE && r->recovery != FX_REC_ANCHOR &&
                 callee->lineno != FX_LINE_NMETHOD);
    return stub || callee->method_id == NULL || callee->method_id == mv.enter ? -1 : k;
}

void fx_model_vthreads_frozen_shown(void)
{
    mv.frozen++;
}

static int label_root(struct fx_profile *p, const char *label, fx_stack_id *root)
{
    return fx_profile_label_stack(p, label, FX_CAT_JAVA, root);
}

static void track_label(uint64_t id, const char *name, char *label, size_t cap)
{
    if (name != NULL)
        snprintf(label, cap, "%s (virtual #%llu)", name, (unsigned long long)id);
    else
        snprintf(label, cap, "virtual thread #%llu", (unsigned long long)id);
}

static int track_of(struct fx_profile *p, uint64_t id, int64_t t_ns, struct vt_track **out)
{
    char label[96];
    for (uint32_t i = 0; i < mv.n_tracks; i++) {
        struct vt_track *tr = &mv.tracks[i];
        if (tr->id != id)
            continue;
        /* made by a wait or sample that came before the name (the names' queue is read once
         * a pass, its waits may come first): named now, the track's name for the whole file */
        const char *name = tr->named ? NULL : name_of(id);
        if (name != NULL) {
            track_label(id, name, label, sizeof(label));
            tr->named = fx_profile_thread_set_name(p, tr->index, label) == FX_OK;
        }
        *out = tr;
        return FX_OK;
    }
    if (mv.n_tracks >= fx_opt()->vtracks) /* a recording's own vtracks=; tracks made stay */
        return FX_EFULL;
    const char *name = name_of(id);
    track_label(id, name, label, sizeof(label));
    struct vt_track *tr = &mv.tracks[mv.n_tracks];
    if (fx_profile_thread_add(p, label, (int64_t)id, t_ns, &tr->index) != FX_OK)
        return FX_ENOMEM;
    tr->id = id;
    tr->named = name != NULL;
    tr->last_ns = -1;
    mv.n_tracks++;
    *out = tr;
    return FX_OK;
}

int fx_model_vthreads_track(struct fx_profile *p, uint64_t id, int64_t t_ns, fx_thread_id *index)
{
    struct vt_track *tr = NULL;
    int rc = track_of(p, id, t_ns, &tr);
    if (rc == FX_OK)
        *index = tr->index;
    return rc;
}

/* "[idle]" before a virtual thread's sample when it ran nowhere for more than two intervals
 * (see drain.c's file comment). In every mode, wall too: only its carriers are sampled, so an
 * unmounted virtual thread has no sample, and without one its last sample would stretch over
 * the gap as running time. Weight 0, as the drain's: it ends a duration, it is no sample taken,
 * so the call tree's counts and the shares stay the sampler's. */
static void idle_gap(struct fx_profile *p, struct vt_track *tr, int64_t t_ns)
{
    int64_t iv = (int64_t)fx_opt()->interval_ns;
    if (tr->last_ns >= 0 && t_ns - tr->last_ns > 3 * iv) {
        fx_stack_id idle;
        if (fx_profile_label_stack(p, "[idle]", FX_CAT_IDLE, &idle) == FX_OK &&
            fx_profile_sample(p, tr->index, tr->last_ns + iv, idle, 0, 0) == FX_OK)
            mv.idle++;
    }
    tr->last_ns = t_ns;
}

/* The marker of a carrier's run of samples of one virtual thread past the cap: from its first
 * sample to one interval after its last, naming it. */
static void run_flush(struct fx_profile *p, struct vt_run *run)
{
    if (run->id == 0)
        return;
    char label[96];
    size_t n = fx_model_vthreads_label(run->id, label, sizeof(label));
    if (fx_jvm_markers_vtmounted(p, run->index, run->first_ns,
                                 run->last_ns + (int64_t)fx_opt()->interval_ns, label, n) == FX_OK)
        mv.run_markers++;
    else
        mv.runs_unmarked++;
    run->id = 0;
}

/* Identity past the cap (issue 30 item 11): the samples of one carrier that follow each other
 * within three intervals with the same virtual thread are one "Virtual thread" marker, written
 * when another virtual thread's sample comes or at the recording's report. */
static void mounted_marker(struct fx_profile *p, fx_thread_id carrier, uint64_t id, int64_t t_ns)
{
    struct vt_run *run = NULL;
    for (uint32_t i = 0; i < mv.n_runs && run == NULL; i++)
        if (mv.runs[i].index.i == carrier.i)
            run = &mv.runs[i];
    if (run == NULL && mv.n_runs < RUNS) {
        run = &mv.runs[mv.n_runs++];
        *run = (struct vt_run){.index = carrier};
    }
    if (run == NULL) {
        mv.runs_unmarked++;
        return;
    }
    if (run->id == id && t_ns - run->last_ns <= 3 * (int64_t)fx_opt()->interval_ns) {
        run->last_ns = t_ns;
        return;
    }
    run_flush(p, run);
    run->id = id;
    run->first_ns = run->last_ns = t_ns;
}

/* The root past the track cap (issue 30 item 11): one per kind of virtual thread, not one per
 * virtual thread, so that a carrier's call tree stays readable with thousands of them (Tomcat's
 * "http-nio-8080-virt-0", "-1", ... share "[virtual thread] http-nio-8080-virt-*"): a name's
 * trailing digits become '*'; unnamed ones share "[virtual thread]". Which virtual thread ran is
 * in the track's "Virtual thread" markers (mounted_marker). */
static void group_label(const char *name, char *buf, size_t cap)
{
    if (name == NULL || name[0] == '\0') {
        snprintf(buf, cap, "[virtual thread]");
        return;
    }
    size_t n = strlen(name), k = n;
    while (k > 0 && name[k - 1] >= '0' && name[k - 1] <= '9')
        k--;
    snprintf(buf, cap, "[virtual thread] %.*s%s", (int)k, name, k < n ? "*" : "");
}

int fx_model_vthreads_route(struct fx_profile *p, const struct fx_sample_rec *r, uint32_t len,
                            struct fx_vt_route *out)
{
    out->root = FX_STACK_NONE;
    out->keep = -1;
    out->own_track = false;
    out->frozen = -1;
    int32_t k = run_frame(r);
    uint32_t at = (uint32_t)fx_rec_vt_at(r);
    char label[128];
    if (r->vthread == FX_VT_ID && len >= at + sizeof(uint64_t)) {
        uint64_t id;
        memcpy(&id, (const char *)r + at, sizeof(id));
        out->keep = cut_entry(r, k >= 0 ? k : -1);
        out->frozen = frozen_at(r, k, out->keep);
        mv.own++;
        struct vt_track *tr = NULL;
        int rc = track_of(p, id, r->time_ns, &tr);
        if (rc == FX_OK) {
            idle_gap(p, tr, r->time_ns);
            out->index = tr->index;
            out->own_track = true;
            return FX_OK;
        }
        if (rc != FX_EFULL)
            return rc;
        mv.labelled++;
        mounted_marker(p, out->index, id, r->time_ns);
        group_label(name_of(id), label, sizeof(label));
        return label_root(p, label, &out->root);
    }
    if (k < 0)
        return FX_OK; /* a platform thread, or a carrier's own code */
    out->keep = cut_entry(r, k);
    out->frozen = frozen_at(r, k, out->keep);
    if (r->vthread == FX_VT_UNSEEN) {
        mv.before_attach++;
        return label_root(p, "[virtual thread] (mounted before attach)", &out->root);
    }
    mv.in_transition++;
    return label_root(p, "[virtual thread] (mount or unmount in progress)", &out->root);
}

void fx_model_vthreads_report(struct fx_profile *p)
{
    if (!fx_vthreads_on())
        return;
    for (uint32_t i = 0; i < mv.n_runs; i++)
        run_flush(p, &mv.runs[i]);
    struct fx_vthreads_counts c;
    fx_vthreads_counts(&c);
    const struct fx_extra_row rows[] = {
            {"mounts", c.mounts, FX_EXTRA_ALWAYS},
            {"unmounts", c.unmounts, FX_EXTRA_ALWAYS},
            {"mounts on carriers not sampled", c.no_carrier, FX_EXTRA_NONZERO},
            {"samples given to their virtual thread", mv.own, FX_EXTRA_ALWAYS},
            {"of which under a root frame (past the track cap)", mv.labelled, FX_EXTRA_NONZERO},
            {"'Virtual thread' markers on carriers (past the cap)", mv.run_markers,
             FX_EXTRA_NONZERO},
            {"runs past the cap not marked", mv.runs_unmarked, FX_EXTRA_LOSS},
            {"virtual threads with a track (this JVM)", mv.n_tracks, FX_EXTRA_ALWAYS},
            {"track cap (vtracks=)", fx_opt()->vtracks, FX_EXTRA_ALWAYS},
            {"samples of a virtual thread mounted before attach", mv.before_attach,
             FX_EXTRA_NONZERO},
            {"samples during a mount or unmount", mv.in_transition, FX_EXTRA_NONZERO},
            {"idle samples inserted on virtual thread tracks", mv.idle, FX_EXTRA_NONZERO},
            {"samples whose callers were still frozen (not walked by AGCT)", mv.frozen,
             FX_EXTRA_ALWAYS},
            {"names read", c.names_read, FX_EXTRA_ALWAYS},
            {"names lost (queue full)", c.names_lost, FX_EXTRA_LOSS},
            {"names overwritten in the name table (2048 slots)", mv.names_overwritten,
             FX_EXTRA_NONZERO},
    };
    fx_profile_extra_str(p, "Virtual threads", "mounts tracked by", c.route);
    if (c.why != NULL)
        fx_profile_extra_str(p, "Virtual threads", "not by the JavaThread field because", c.why);
    if (c.transitions != NULL)
        fx_profile_extra_str(p, "Virtual threads", "HotSpot's JVMTI mount transitions",
                             c.transitions);
    fx_profile_extra_rows(p, "Virtual threads", rows, sizeof(rows) / sizeof(rows[0]));
}

/* The tracks are the profile's threads and stay, with their cap; so do the names. */
void fx_model_vthreads_new_recording(void)
{
    mv.own = mv.labelled = mv.before_attach = mv.in_transition = mv.names_overwritten = 0;
    mv.idle = mv.frozen = 0;
    mv.run_markers = mv.runs_unmarked = 0;
    for (uint32_t i = 0; i < mv.n_runs; i++) /* the report flushed them; a run stays in its own */
        mv.runs[i].id = 0;
}
