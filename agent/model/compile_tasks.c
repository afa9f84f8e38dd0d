/* SPDX-License-Identifier: Apache-2.0 */
/* The method a compiler thread was compiling, as a frame of its sample (issue 32, item 5): the
 * Method* and compile id its handler read (compile_task_sig.c) become a frame right under the
 * compiler's entry (the first frame from the root named "...::compile_method", with or without
 * its demangled parameters:
 * C2Compiler::compile_method, Compiler::compile_method for C1), as async-profiler places it.
 * The Method is named by checked reads (compile_task.c), once per compile id and Method* in the
 * model's generation. A read the handler could not finish, or a name that does not check out,
 * is a "[compiling: ...]" frame in the same place; a compile found in a sample whose native
 * walk holds no such frame is counted and not placed (there is no frame to put it under).
 * Owns the "Compile tasks" figures of meta.extra. Model owner only. */
#include "internal.h"

#include <string.h>

#include "compile_task.h"
#include "fx_profile.h"

#define ENTRY          "::compile_method" /* a compiler's entry, after its class name */
#define CACHE          512 /* compiles named per generation (direct-mapped, by compile id) */
#define COMPILE_FRAMES 8   /* distinct compile_method frames remembered per generation */

static const char *const read_frames[FX_TASK_COUNT] = {
        NULL,
        NULL, /* idle: not compiling, no frame */
        "[compiling: not read (the thread's stack bounds unknown yet)]",
        "[compiling: not read (ciEnv outside the thread's stack)]",
        "[compiling: no task (the compiler's own start-up)]",
        "[compiling: a task without a method]",
        "[compiling: task not proven (the ciEnv's task is not the thread's)]",
        "[compiling: not read (the ciEnv or its task unreadable)]",
};
static const char *const read_labels[FX_TASK_COUNT] = {
        "compiling: method read",
        "not compiling (waiting for a task)",
        "not read: stack bounds unknown yet",
        "not read: ciEnv outside the thread's stack",
        "no task (the compiler's own start-up)",
        "a task without a method",
        "task not proven: the ciEnv's task is not the thread's (a ciEnv being built)",
        "not read: the ciEnv or its task unreadable",
};

static struct {
    uint32_t gen;
    fx_frame_id compile[COMPILE_FRAMES];
    unsigned n_compile;
    struct {
        uint64_t method;
        uint32_t id, gen; /* gen 0: empty (generations start at 1) */
        fx_frame_id frame;
    } cache[CACHE];
    uint64_t reads[FX_TASK_COUNT], placed, not_placed, unnamed, bad_records, named;
} ct;

static void same_generation(struct fx_profile *p)
{
    uint32_t g = fx_profile_generation(p) + 1;
    if (ct.gen != g) {
        ct.gen = g;
        ct.n_compile = 0;
    }
}

void fx_compile_tasks_note(struct fx_profile *p, const char *name, fx_frame_id f)
{
    const char *at = strstr(name, ENTRY); /* then "(ciEnv*, ...)" when demangled */
    size_t n = sizeof(ENTRY) - 1;
    if (at == NULL || at == name || (at[n] != '\0' && at[n] != '('))
        return;
    same_generation(p);
    for (unsigned i = 0; i < ct.n_compile; i++)
        if (ct.compile[i].i == f.i)
            return;
    if (ct.n_compile < COMPILE_FRAMES)
        ct.compile[ct.n_compile++] = f;
}

/* The record's task words (sample.h: after the kernel, type and below parts), false if none fit. */
static bool words_of(const struct fx_sample_rec *r, uint32_t len, uint64_t w[2])
{
    size_t at = fx_rec_task_at(r, len);
    if (at == 0)
        return false;
    memcpy(w, (const uint8_t *)r + at, 2 * sizeof(uint64_t));
    return (w[1] >> 32) < FX_TASK_COUNT;
}

/* The frame of a compile that was read: named once per compile id and Method*. */
static int method_frame(struct fx_profile *p, const uint64_t w[2], uint8_t cat, uint8_t sub,
                        fx_frame_id *out)
{
    uint32_t id = (uint32_t)w[1];
    size_t i = (id * 2654435761u) % CACHE;
    if (ct.cache[i].gen == ct.gen && ct.cache[i].id == id && ct.cache[i].method == w[0]) {
        *out = ct.cache[i].frame;
        return FX_OK;
    }
    char name[640];
    bool ok = fx_compile_task_method_name(w[0], name, sizeof(name));
    ct.named += ok;
    ct.unnamed += !ok;
    int rc = fx_profile_label_frame(
            p, ok ? name : "[compiling: method not named (its Method did not read back)]", cat, sub,
            out);
    if (rc == FX_OK && ok) {
        ct.cache[i].method = w[0];
        ct.cache[i].id = id;
        ct.cache[i].gen = ct.gen;
        ct.cache[i].frame = *out;
    }
    return rc;
}

int fx_compile_tasks_after(struct fx_profile *p, const struct fx_sample_rec *r, uint32_t len,
                           fx_frame_id f, uint8_t cat, uint8_t sub, fx_stack_id *stack,
                           bool *placed)
{
    if (!r->task || *placed)
        return FX_OK;
    same_generation(p);
    bool entry = false;
    for (unsigned i = 0; i < ct.n_compile && !entry; i++)
        entry = ct.compile[i].i == f.i;
    uint64_t w[2];
    if (!entry || !words_of(r, len, w))
        return FX_OK;
    *placed = true;
    cat = cat != 0 ? cat : FX_CAT_NATIVE;
    unsigned why = (unsigned)(w[1] >> 32);
    if (why == FX_TASK_IDLE)
        return FX_OK;
    fx_frame_id t;
    int rc = why == FX_TASK_READ ? method_frame(p, w, cat, sub, &t)
                                 : fx_profile_label_frame(p, read_frames[why], cat, sub, &t);
    if (rc == FX_OK)
        ct.placed++;
    return rc == FX_OK ? fx_profile_stack(p, *stack, t, stack) : rc;
}

void fx_compile_tasks_count(const struct fx_sample_rec *r, uint32_t len, bool placed)
{
    uint64_t w[2];
    if (!r->task)
        return;
    if (!words_of(r, len, w)) {
        ct.bad_records++;
        return;
    }
    ct.reads[w[1] >> 32]++;
    ct.not_placed += !placed && (w[1] >> 32) != FX_TASK_IDLE;
}

void fx_compile_tasks_report(struct fx_profile *p)
{
    const char *g = "Compile tasks";
    uint64_t any = ct.bad_records;
    for (int i = 0; i < FX_TASK_COUNT; i++)
        any += ct.reads[i];
    if (any == 0)
        return;
    for (int i = 0; i < FX_TASK_COUNT; i++)
        fx_profile_extra_int(p, g, read_labels[i], (int64_t)ct.reads[i]);
    fx_profile_extra_int(p, g, "frames placed under the compiler's compile_method",
                         (int64_t)ct.placed);
    fx_profile_extra_loss(p, g, "compiles not placed (no compile_method frame in the walk)",
                          (int64_t)ct.not_placed);
    fx_profile_extra_detail(p, g, "compiles named (checked reads)", (int64_t)ct.named);
    fx_profile_extra_loss(p, g, "compiles whose method did not read back", (int64_t)ct.unnamed);
    fx_profile_extra_loss(p, g, "malformed records", (int64_t)ct.bad_records);
}

void fx_compile_tasks_reset(void)
{
    memset(ct.reads, 0, sizeof(ct.reads));
    ct.placed = ct.not_placed = ct.unnamed = ct.bad_records = ct.named = 0;
}
