/* SPDX-License-Identifier: Apache-2.0 */
/* Validate mode's proofs of patterns the frame names cannot tell (docs/VALIDATION.md): 4.2 by each
 * nmethod's scopes (its root method and every method its inlining records name), kept from
 * CompiledMethodLoad by code begin while validate is on: the frames in which ASGCT and
 * GetStackTrace differ are all scopes of the nmethod the thread's top Java frame runs in (the
 * anchor walk's frame 0, signal_handler.c); 4.9 by the anchor walk's frame whose return address
 * was patched to its nmethod's deopt handler. Tests: it.validate*, validate_check.py. */
#include "proofs.h"
#include "internal.h"

#include <jvmticmlr.h>
#include <pthread.h>
#include <string.h>

#include "fx_alloc.h"

struct scopes {
    uintptr_t code;
    jmethodID root;
    uint32_t n;
    jmethodID *m; /* n distinct methods, root included */
    struct scopes *next;
};

#define BUCKETS 4096
static struct scopes *table[BUCKETS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static size_t bucket(uintptr_t code)
{
    return (size_t)((code >> 5) * 0x9E3779B97F4A7C15ull >> 52) & (BUCKETS - 1);
}

static bool has(const jmethodID *m, uint32_t n, jmethodID id)
{
    for (uint32_t i = 0; i < n; i++) {
        if (m[i] == id)
            return true;
    }
    return false;
}

static void drop_locked(uintptr_t code)
{
    for (struct scopes **p = &table[bucket(code)]; *p != NULL; p = &(*p)->next) {
        if ((*p)->code == code) {
            struct scopes *s = *p;
            *p = s->next;
            fx_free(s->m);
            fx_free(s);
            return;
        }
    }
}

void fx_validate_code_load(jmethodID root, const void *code, const void *compile_info)
{
    uint32_t cap = 1;
    const jvmtiCompiledMethodLoadRecordHeader *h;
    for (h = compile_info; h != NULL; h = h->next) {
        const jvmtiCompiledMethodLoadInlineRecord *r = (const void *)h;
        for (jint i = 0; h->kind == JVMTI_CMLR_INLINE_INFO && i < r->numpcs; i++)
            cap += (uint32_t)r->pcinfo[i].numstackframes;
    }
    struct scopes *s = fx_calloc(1, sizeof *s);
    jmethodID *m = fx_calloc(cap, sizeof *m);
    if (s == NULL || m == NULL) { /* no entry: the proof fails, the mismatch stays unexplained */
        fx_free(s);
        fx_free(m);
        return;
    }
    *s = (struct scopes){.code = (uintptr_t)code, .root = root, .n = 1, .m = m};
    m[0] = root;
    for (h = compile_info; h != NULL; h = h->next) {
        const jvmtiCompiledMethodLoadInlineRecord *r = (const void *)h;
        for (jint i = 0; h->kind == JVMTI_CMLR_INLINE_INFO && i < r->numpcs; i++) {
            for (jint f = 0; f < r->pcinfo[i].numstackframes; f++) {
                jmethodID id = r->pcinfo[i].methods[f];
                if (id != NULL && !has(m, s->n, id) && s->n < cap)
                    m[s->n++] = id;
            }
        }
    }
    pthread_mutex_lock(&lock);
    drop_locked(s->code);
    s->next = table[bucket(s->code)];
    table[bucket(s->code)] = s;
    pthread_mutex_unlock(&lock);
}

void fx_validate_code_unload(jmethodID root, const void *code)
{
    pthread_mutex_lock(&lock);
    for (struct scopes *s = table[bucket((uintptr_t)code)]; s != NULL; s = s->next) {
        if (s->code == (uintptr_t)code && s->root == root) {
            drop_locked((uintptr_t)code);
            break;
        }
    }
    pthread_mutex_unlock(&lock);
}

uint32_t fx_va_scopes_copy(uintptr_t code, jmethodID root, jmethodID *out, uint32_t cap)
{
    uint32_t n = 0;
    pthread_mutex_lock(&lock);
    for (struct scopes *s = table[bucket(code)]; code != 0 && s != NULL; s = s->next) {
        if (s->code == code && s->root == root) {
            n = s->n < cap ? s->n : 0; /* a set cut short would prove nothing */
            memcpy(out, s->m, (size_t)n * sizeof *out);
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    return n;
}

/* The differing parts: the frames above the longest common bottom part, on each side; each
 * side, from its top down to the first frame of the root at or below its differing part, must be
 * scopes of the nmethod (so all of it is the one compiled frame), and something must differ. */
static bool side_in_scopes(const struct fx_stack *s, jint differ, const jmethodID *m, uint32_t n)
{
    for (jint i = 0; i < s->count; i++) {
        if (!has(m, n, s->frames[i].method_id))
            return false;
        if (i >= differ - 1 && s->frames[i].method_id == m[0])
            return true;
    }
    return false;
}

bool fx_va_scopes_top_nmethod(const struct fx_stack *a, const struct fx_stack *g,
                              const jmethodID *m, uint32_t n)
{
    if (n == 0 || a->count <= 0)
        return false;
    jint i = a->count, k = g->count;
    while (i > 0 && k > 0 && fx_stackcmp_same_frame(&a->frames[i - 1], &g->frames[k - 1])) {
        i--;
        k--;
    }
    if (i == 0 && k == 0)
        return false;
    /* i, k: frames that differ on each side (frames[0..i) of a, [0..k) of g) */
    return side_in_scopes(a, i, m, n) && side_in_scopes(g, k, m, n);
}

bool fx_va_cut_at_deopt(const struct fx_stack *a, const struct fx_stack *g,
                        const struct fx_stack *sh, int32_t d)
{
    if (d < 1 || d >= sh->count || a->count < 1)
        return false;
    const fx_asgct_frame *callee = &sh->frames[d - 1], *last = &a->frames[a->count - 1];
    if (callee->lineno == FX_LINE_NMETHOD ? callee->method_id != last->method_id
                                          : !fx_stackcmp_same_frame(callee, last))
        return false;
    /* the cut: ASGCT's last frame is JVMTI's frame k; above it equal or 4.2 (by the names, as
     * 4.8 allows), below it the deoptimized frame's method */
    for (jint k = fx_stackcmp_cut_at(a, g, 0); k >= 0; k = fx_stackcmp_cut_at(a, g, k + 1)) {
        for (jint j = k + 1; j < g->count; j++) {
            if (g->frames[j].method_id == sh->frames[d].method_id)
                return true;
        }
    }
    return false;
}

jint fx_va_proof(enum pattern pattern, fx_asgct_frame *out, jint cap)
{
    jint n = 0;
    if (pattern == PATTERN_TOP_SCOPES) {
        for (; n < (jint)va.n_scopes && n < cap; n++)
            out[n] = (fx_asgct_frame){.lineno = 0, .method_id = va.scopes[n]};
    } else if (pattern == PATTERN_DEOPT_CUT && cap >= 2) {
        for (; n < 2; n++)
            out[n] = (fx_asgct_frame){
                    .lineno = 0, .method_id = va.shadow[va.facts.deopt_frame - 1 + n].method_id};
    }
    return n;
}
