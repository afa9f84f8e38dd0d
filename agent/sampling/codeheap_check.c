/* SPDX-License-Identifier: Apache-2.0 */
/* The oracle of the handler's code heap lookup (codeheap_sig.c, issue 32), run by codemap.c at a
 * CompiledMethodLoad where the event is still enabled (codemap=jvmti, validate mode, the test
 * switch), on the thread that posts it, not in a signal handler: the range the lookup finds for
 * the new method's first byte, last byte and middle must be the one the event describes, field
 * by field but the inlining flag, which the lookup cannot know (codemap=heap takes it from the
 * nmethod's scopes: nmethod_scopes.c, its own oracle). And the name that lookup gives a method
 * handle intrinsic, put on the event's range (8.5l: the event's own is wrong for linkTo*), so
 * both modes name it alike. Its own file: codemap.c calls it and codemap_heap.c, above
 * codemap.c, need not be called back. Tests: it.validate_recovered (codeheap_check.py). */
#include "codemap_heap.h"
#include "internal.h"

int fx_codeheap_check(const struct fx_code_range *r)
{
    struct fx_code_range h;
    if (__atomic_load_n(&fx_sig.codeheap.pid, __ATOMIC_ACQUIRE) == 0 ||
        __atomic_load_n(&fx_sig.interp.pid, __ATOMIC_ACQUIRE) == 0)
        return 0;
    /* the first byte, the last and one between: the segment map's walk back from each; every
     * field but the inlining flag, which the lookup cannot know */
    const uintptr_t pcs[3] = {r->begin, r->end - 1, r->begin + (r->end - r->begin) / 2};
    for (int i = 0; i < 3; i++) {
        if (!fx_codeheap_find_sigsafe(&fx_sig.codeheap, &fx_sig.interp, pcs[i], &h))
            return 2; /* e.g. a method not proven by its jmethodID (a redefined one's old code) */
        if (h.begin != r->begin || h.end != r->end || h.blob != r->blob || h.name != r->name ||
            h.verified != r->verified || h.complete != r->complete ||
            h.compile_id != r->compile_id || h.frame_words != r->frame_words ||
            h.level != r->level || h.kind != r->kind || h.stubs != r->stubs)
            return -1;
    }
    return 1;
}

static uint64_t mh_named, mh_kept; /* atomic: loads of intrinsics renamed, left as posted */

void fx_codeheap_mh_name(struct fx_code_range *r)
{
    if (r->kind != FX_BLOB_NMETHOD || !(r->flags & FX_RANGE_FRAMELESS))
        return;
    /* HotSpot posts Method::jmethod_id() of the intrinsic's Method*, whose idnum is 0 (made by
     * Method::make_method_handle_intrinsic, in no method array): the jmethodID of MethodHandle's
     * method 0, invokeBasic on JDK 17 and 25, for every linkTo* intrinsic too (session 25) */
    struct fx_code_range h;
    bool named = __atomic_load_n(&fx_sig.codeheap.pid, __ATOMIC_ACQUIRE) != 0 &&
                 __atomic_load_n(&fx_sig.interp.pid, __ATOMIC_ACQUIRE) != 0 &&
                 fx_codeheap_find_sigsafe(&fx_sig.codeheap, &fx_sig.interp, r->begin, &h) &&
                 h.begin == r->begin && h.blob == r->blob && h.compile_id == r->compile_id &&
                 (h.flags & FX_RANGE_FRAMELESS);
    if (named)
        r->name = h.name;
    __atomic_add_fetch(named ? &mh_named : &mh_kept, 1, __ATOMIC_RELAXED);
}

void fx_codeheap_mh_counts(uint64_t *named, uint64_t *kept)
{
    *named = __atomic_load_n(&mh_named, __ATOMIC_RELAXED);
    *kept = __atomic_load_n(&mh_kept, __ATOMIC_RELAXED);
}
