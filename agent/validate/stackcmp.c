/* SPDX-License-Identifier: Apache-2.0 */
/* Stack comparison shared by the oracle (oracle.c) and validate mode (validate.c): both stacks
 * in ASGCT's encoding (lineno = bci, -3 native), compared frame by frame, and named for reports.
 * Invariant: a comparison never normalises anything but the native encoding. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

#include "fx_alloc.h"

#define JVMTI_NATIVE ((jlocation)-1)

void fx_stackcmp_from_jvmti(const jvmtiFrameInfo *info, jint n, fx_asgct_frame *out)
{
    for (jint i = 0; i < n; i++) {
        out[i].method_id = info[i].method;
        out[i].lineno =
                info[i].location == JVMTI_NATIVE ? FX_ASGCT_NATIVE_LINE : (jint)info[i].location;
    }
}

jvmtiError fx_stackcmp_take_jvmti(jvmtiEnv *jvmti, jthread thread, fx_asgct_frame *frames, int max,
                                  jint *count)
{
    *count = 0;
    jvmtiFrameInfo *info = fx_calloc((size_t)max, sizeof *info);
    if (info == NULL)
        return JVMTI_ERROR_OUT_OF_MEMORY;
    jvmtiError err = (*jvmti)->GetStackTrace(jvmti, thread, 0, max, info, count);
    if (err == JVMTI_ERROR_NONE)
        fx_stackcmp_from_jvmti(info, *count, frames);
    fx_free(info);
    return err;
}

bool fx_stackcmp_same_frame(const fx_asgct_frame *a, const fx_asgct_frame *b)
{
    return a->method_id == b->method_id && a->lineno == b->lineno;
}

struct fx_stack_verdict fx_stackcmp_compare(const struct fx_stack *asgct,
                                            const struct fx_stack *jvmti, int depth)
{
    struct fx_stack_verdict v = {
            .compared = 0, .truncated = jvmti->count > depth, .first_diff = -1, .carrier = 0};
    jint expect = v.truncated ? depth : jvmti->count;
    jint have = asgct->count > 0 ? asgct->count : 0;
    jint common = have < expect ? have : expect;
    for (jint i = 0; i < common; i++) {
        if (!fx_stackcmp_same_frame(&asgct->frames[i], &jvmti->frames[i])) {
            v.first_diff = i;
            return v;
        }
    }
    if (asgct->count != expect) {
        v.first_diff = common;
        return v;
    }
    v.compared = common;
    return v;
}

/* The anchor recovery's frames (FX_REC_ANCHOR): one per compiled frame, named by the nmethod's
 * root method, leaf first, root side cut. Each must be found in JVMTI's stack below the last
 * one's match: the frames JVMTI has between them are those the nmethods inlined (or, above the
 * first, the native or VM frames the thread is in), which the recovery cannot see. An
 * interpreted frame (issue 32: method and bci) must match JVMTI's frame exactly, method and
 * location alike, and inlines nothing: on top, or under another interpreted frame, it is
 * JVMTI's very next frame; under a compiled frame the frames between are that nmethod's
 * (the match above took the first frame of its method, a recursion it inlined has more). */
static enum fx_rv_verdict compare_anchor(const struct fx_stack *a, const struct fx_stack *g,
                                         int depth)
{
    jint j = 0;
    for (jint i = 0; i < a->count; i++) {
        if (a->frames[i].lineno != FX_LINE_NMETHOD) {
            bool under_compiled = i > 0 && a->frames[i - 1].lineno == FX_LINE_NMETHOD;
            while (under_compiled && j < g->count &&
                   !fx_stackcmp_same_frame(&a->frames[i], &g->frames[j]))
                j++;
            if (j == g->count)
                return g->count > depth ? FX_RV_DEEPER : FX_RV_DISAGREED;
            if (!fx_stackcmp_same_frame(&a->frames[i], &g->frames[j]))
                return FX_RV_DISAGREED;
            j++;
            continue;
        }
        while (j < g->count && g->frames[j].method_id != a->frames[i].method_id)
            j++;
        if (j == g->count)
            return g->count > depth ? FX_RV_DEEPER : FX_RV_DISAGREED;
        j++;
    }
    return FX_RV_AGREED;
}

/* A blob recovery (FX_REC_DISPATCH..FX_REC_C1_BARRIER): frames[0] is the blob, the rest
 * ASGCT's from the caller's context, which must be JVMTI's bottom frames exactly; above them
 * JVMTI has the blob's own frames: none for a stub, the nmethod's method as the frame right
 * above (with its inlined callees over it) for an nmethod. */
static enum fx_rv_verdict compare_blob(const struct fx_stack *a, const struct fx_stack *g,
                                       int depth)
{
    if (g->count > depth)
        return FX_RV_DEEPER;
    jint up = a->count - 1, above = g->count - up;
    if (up < 1 || above < 0)
        return FX_RV_DISAGREED;
    for (jint k = 0; k < up; k++) {
        if (!fx_stackcmp_same_frame(&a->frames[1 + k], &g->frames[above + k]))
            return FX_RV_DISAGREED;
    }
    if (a->frames[0].lineno == FX_LINE_STUB)
        return above == 0 ? FX_RV_AGREED : FX_RV_DISAGREED;
    return above >= 1 && g->frames[above - 1].method_id == a->frames[0].method_id ? FX_RV_AGREED
                                                                                  : FX_RV_DISAGREED;
}

bool fx_stackcmp_anchor_bottom(const struct fx_stack *a, const struct fx_stack *g)
{
    if (a->count <= 0 || g->count <= 0)
        return false;
    const fx_asgct_frame *last = &a->frames[a->count - 1], *bottom = &g->frames[g->count - 1];
    return last->lineno == FX_LINE_NMETHOD ? last->method_id == bottom->method_id
                                           : fx_stackcmp_same_frame(last, bottom);
}

enum fx_rv_verdict fx_stackcmp_recovered(const struct fx_stack *asgct, const struct fx_stack *jvmti,
                                         uint8_t recovery, int depth)
{
    if (asgct->count <= 0)
        return FX_RV_DISAGREED;
    if (recovery == FX_REC_LEAF_NATIVE) { /* no blob frame: ASGCT's frames are JVMTI's, all */
        struct fx_stack_verdict v = fx_stackcmp_compare(asgct, jvmti, depth);
        return v.truncated ? FX_RV_DEEPER : v.first_diff < 0 ? FX_RV_AGREED : FX_RV_DISAGREED;
    }
    if (recovery == FX_REC_DEOPT) { /* 8.5m: the deoptimization blob's frame, then 8.9's walk */
        struct fx_stack walk = {.count = asgct->count - 1, .frames = asgct->frames + 1};
        return walk.count > 0 && asgct->frames[0].lineno == FX_LINE_STUB
                       ? compare_anchor(&walk, jvmti, depth)
                       : FX_RV_DISAGREED;
    }
    return recovery == FX_REC_ANCHOR ? compare_anchor(asgct, jvmti, depth)
                                     : compare_blob(asgct, jvmti, depth);
}

/* HotSpot's names (forte.cpp), which bug reports and the JDK sources use. */
const char *fx_stackcmp_status_name(jint code)
{
    static const char *const names[FX_ASGCT_CODES] = {
            "ticks_no_Java_frame",
            "ticks_no_class_load",
            "ticks_GC_active",
            "ticks_unknown_not_Java",
            "ticks_not_walkable_not_Java",
            "ticks_unknown_Java",
            "ticks_not_walkable_Java",
            "ticks_unknown_state",
            "ticks_thread_exit",
            "ticks_deopt",
            "ticks_safepoint",
    };
    if (code == FX_STACKCMP_ASGCT_MISSING)
        return "AsyncGetCallTrace not found in libjvm";
    if (code > 0)
        return "frames";
    return code > -FX_ASGCT_CODES ? names[-code] : "unknown status";
}

/* "pkg.Class.method" from a class signature and a method name. */
static void dotted_name(const char *sig, const char *name, char *out, size_t cap)
{
    size_t n = strlen(sig);
    const char *cls = sig[0] == 'L' && n > 2 ? sig + 1 : sig;
    int cls_len = (int)(cls == sig ? n : n - 2);
    snprintf(out, cap, "%.*s.%s", cls_len, cls, name);
    for (char *c = out; *c != '\0'; c++)
        *c = *c == '/' ? '.' : *c;
}

/* Never fails: an unloaded class's jmethodID is named by its address. */
void fx_stackcmp_frame_name(jvmtiEnv *jvmti, JNIEnv *env, const fx_asgct_frame *f, char *out,
                            size_t cap)
{
    char *name = NULL, *sig = NULL;
    jclass holder = NULL;
    if (f->method_id == NULL ||
        (*jvmti)->GetMethodDeclaringClass(jvmti, f->method_id, &holder) != JVMTI_ERROR_NONE ||
        (*jvmti)->GetClassSignature(jvmti, holder, &sig, NULL) != JVMTI_ERROR_NONE ||
        (*jvmti)->GetMethodName(jvmti, f->method_id, &name, NULL, NULL) != JVMTI_ERROR_NONE)
        snprintf(out, cap, "<jmethodID %p>", (void *)f->method_id);
    else
        dotted_name(sig, name, out, cap);
    size_t used = strlen(out);
    if (f->lineno == FX_ASGCT_NATIVE_LINE)
        snprintf(out + used, cap - used, "@native");
    else
        snprintf(out + used, cap - used, "@%d", (int)f->lineno);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
    if (holder != NULL)
        (*env)->DeleteLocalRef(env, holder);
}

/* Found by name (its signature differs between JDKs). Boot classes never unload, so the id is
 * cached; "none" is cached too, as a JDK without the class never gets it. */
jmethodID fx_stackcmp_enter_special(JNIEnv *env, jvmtiEnv *jvmti)
{
    static jmethodID cached;
    static int looked; /* atomic */
    if (__atomic_load_n(&looked, __ATOMIC_ACQUIRE))
        return __atomic_load_n(&cached, __ATOMIC_RELAXED);
    (void)jvmti;
    jmethodID id = fx_jvm_method(env, "jdk/internal/vm/Continuation", "enterSpecial", NULL);
    __atomic_store_n(&cached, id, __ATOMIC_RELAXED);
    __atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
    return id;
}

/* docs/VALIDATION.md 4.8: Java methods HotSpot calls from the C1 runtime stubs' VM calls: to link
 * a call site or resolve a method type or constant (MethodHandleNatives, from SystemDictionary
 * and LinkResolver), and to load a class (SystemDictionary's loadClass(String) call). */
static const struct {
    const char *cls, *name, *sig;
} vm_upcalls[FX_VM_UPCALLS] = {
        {"java/lang/invoke/MethodHandleNatives", "linkCallSite", NULL},
        {"java/lang/invoke/MethodHandleNatives", "findMethodHandleType", NULL},
        {"java/lang/invoke/MethodHandleNatives", "linkMethod", NULL},
        {"java/lang/invoke/MethodHandleNatives", "linkMethodHandleConstant", NULL},
        {"java/lang/invoke/MethodHandleNatives", "linkDynamicConstant", NULL},
        {"java/lang/ClassLoader", "loadClass", "(Ljava/lang/String;)Ljava/lang/Class;"},
};

int fx_stackcmp_vm_upcalls(JNIEnv *env, jmethodID *ids)
{
    int n = 0;
    for (int i = 0; i < FX_VM_UPCALLS; i++) {
        jmethodID id = fx_jvm_method(env, vm_upcalls[i].cls, vm_upcalls[i].name, vm_upcalls[i].sig);
        if (id != NULL)
            ids[n++] = id;
    }
    return n;
}

/* docs/VALIDATION.md 4.3: ASGCT has every JVMTI frame but one, and that one is a frame of a
 * recursion (the frame above it is the same method at the same bci). */
bool fx_stackcmp_lost_recursive(const struct fx_stack *a, const struct fx_stack *g)
{
    if (a->count != g->count - 1)
        return false;
    jint k = 0;
    while (k < a->count && fx_stackcmp_same_frame(&a->frames[k], &g->frames[k]))
        k++;
    for (jint i = k; i < a->count; i++) {
        if (!fx_stackcmp_same_frame(&a->frames[i], &g->frames[i + 1]))
            return false;
    }
    return k > 0 && fx_stackcmp_same_frame(&g->frames[k - 1], &g->frames[k]);
}

/* docs/VALIDATION.md 4.2: below some frame the stacks agree to the bottom, and the frames just
 * above that point show the same method in both, at another bci or under other inlined
 * callees: the top compiled frame, decoded by ASGCT at another debug-info point of its code. */
bool fx_stackcmp_top_compiled(const struct fx_stack *a, const struct fx_stack *g)
{
    jint i = a->count - 1, k = g->count - 1;
    while (i >= 0 && k >= 0 && fx_stackcmp_same_frame(&a->frames[i], &g->frames[k])) {
        i--;
        k--;
    }
    return i >= 0 && k >= 0 && a->frames[i].method_id == g->frames[k].method_id;
}

/* The first k >= from at which ASGCT's stack a is cut from g's: a's last frame is g's frame k
 * exactly, g goes on below it, and above it the two are equal or differ as 4.2 says (by the
 * names); -1 if none. 4.8 and 4.9 cut so (validate/proofs.c). */
jint fx_stackcmp_cut_at(const struct fx_stack *a, const struct fx_stack *g, jint from)
{
    if (a->count < 1)
        return -1;
    const fx_asgct_frame *last = &a->frames[a->count - 1];
    for (jint k = from < 0 ? 0 : from; k + 1 < g->count; k++) {
        if (!fx_stackcmp_same_frame(&g->frames[k], last))
            continue;
        struct fx_stack top = {.count = k + 1, .frames = g->frames};
        bool same = a->count == k + 1;
        for (jint i = 0; same && i < a->count; i++)
            same = fx_stackcmp_same_frame(&a->frames[i], &g->frames[i]);
        if (same || fx_stackcmp_top_compiled(a, &top))
            return k;
    }
    return -1;
}

/* docs/VALIDATION.md 4.8: ASGCT's stack ends at a method the VM calls (its walk stops at the C1
 * runtime stub under the call stub's entry frame), that frame is JVMTI's frame k exactly, JVMTI
 * goes on below it, and above it the stacks are equal or differ as 4.2 says (the top compiled
 * frame decoded at another point). Below the cut ASGCT gave nothing, so nothing there differs. */
bool fx_stackcmp_cut_at_vm_upcall(const struct fx_stack *a, const struct fx_stack *g,
                                  const jmethodID *ids, int n)
{
    if (a->count < 1)
        return false;
    const fx_asgct_frame *last = &a->frames[a->count - 1];
    bool upcall = false;
    for (int i = 0; i < n; i++)
        upcall |= ids[i] != NULL && ids[i] == last->method_id;
    return upcall && fx_stackcmp_cut_at(a, g, 0) >= 0;
}

/* The carrier's JVMTI stack leaves enterSpecial out on JDK 21-25; a JDK whose carrier stack
 * starts with it gets no second copy. */
jint fx_stackcmp_join_carrier(struct fx_stack *vt, jmethodID entry, const fx_asgct_frame *carrier,
                              jint n, int max)
{
    jint before = vt->count;
    if (entry != NULL && !(n > 0 && carrier[0].method_id == entry) && vt->count < max)
        vt->frames[vt->count++] =
                (fx_asgct_frame){.lineno = FX_ASGCT_NATIVE_LINE, .method_id = entry};
    for (jint i = 0; i < n && vt->count < max; i++)
        vt->frames[vt->count++] = carrier[i];
    return vt->count - before;
}
