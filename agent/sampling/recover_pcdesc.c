/* SPDX-License-Identifier: Apache-2.0 */
/* The PcDesc check of the intrinsics' stubs (recover_pcdesc.h, docs/VALIDATION.md 8.5d). The
 * rbp frame rule gives an intrinsic stub's return address as it does an arraycopy stub's, but
 * AsyncGetCallTrace names the caller by the first PcDesc at or after that address: where C2
 * recorded none at the end of the call's own instruction, that is a later instruction's, maybe of
 * an outer scope (JDK 17: updateBytesAdler32 right over Stubs.intrinsics, the inlined
 * Adler32.update missing). C2 (PhaseOutput::fill_buffer, NonSafepointEmitter) records a
 * non-safepoint PcDesc at the END offset of a run of instructions of one scope; so the return
 * address is kept only where the first PcDesc at or after it lies exactly where the call's node
 * ends: at the return address (JDK 17), or 8 bytes on where the post-call nop the call's node
 * emits follows it (0F 1F 84 00 + 4 bytes, JDK 21+: 0 PcDescs at the return address, the call's
 * scope 8 bytes on, measured). The call must go to this very stub, and the caller must be no OSR
 * compilation (there, updateBytesAdler32 came out right over Stubs.intrinsics even with an exact
 * PcDesc: 4 of 134 stacks, JDK 17). Tests: unit.recover_pcdesc. The table is sorted by pc offset
 * (HotSpot's PcDescContainer searches it so): a binary search, each word read by
 * process_vm_readv (fx_interp_peek_sigsafe: an nmethod freed meanwhile fails a read, never this
 * thread), the table's size bounded. A refusal names its cause: the first PcDesc elsewhere (a
 * run stretched past the call: unprovable, 8.5d), an OSR caller, or the table not read. Signal
 * path: compiled with the handler's flags, under its allow-list. */
#include "recover_pcdesc.h"

#include "interp_frame.h"
#include "recover_x86.h"

static struct fx_pcdesc_layout published;

static bool peek_i32(int32_t pid, uintptr_t at, int32_t *v)
{
    return fx_interp_peek_sigsafe(pid, at, v, sizeof(*v), 4);
}

/* The first PcDesc of n at or after ret (its address in *desc, its pc offset in *at), within
 * the code; FX_PCDESC_UNKNOWN if none or unreadable, else FX_PCDESC_AT_END when at ret + skip */
static enum fx_pcdesc_found first_at(const struct fx_pcdesc_layout *l,
                                     const struct fx_code_range *n, uintptr_t ret, uint32_t skip,
                                     uintptr_t *desc)
{
    if (l == NULL || l->pid == 0 || l->size <= 0 || l->pc < 0 || l->pc + 4 > l->size ||
        n->kind != FX_BLOB_NMETHOD || n->blob == 0 || ret <= n->begin || ret >= n->end ||
        skip > FX_POST_CALL_NOP || n->end - ret < skip || ret - n->begin > INT32_MAX - skip)
        return FX_PCDESC_UNKNOWN;
    int32_t b, e;
    if (!peek_i32(l->pid, n->blob + (uintptr_t)l->begin, &b) ||
        !peek_i32(l->pid, n->blob + (uintptr_t)l->end, &e) || b < 0 || e < b ||
        (e - b) % l->size != 0 || (uint32_t)((e - b) / l->size) > FX_PCDESC_MAX)
        return FX_PCDESC_UNKNOWN;
    uintptr_t base = n->blob;
    if (l->data >= 0) { /* JDK 23+: the table lies in the immutable data, within its size */
        int32_t size;
        if (!fx_interp_peek_sigsafe(l->pid, n->blob + (uintptr_t)l->data, &base, sizeof(base), 8) ||
            base == 0 || l->data_size < 0 ||
            !peek_i32(l->pid, n->blob + (uintptr_t)l->data_size, &size) || e > size)
            return FX_PCDESC_UNKNOWN;
    } else if (n->blob + (uintptr_t)e > n->begin && n->blob + (uintptr_t)b < n->end)
        return FX_PCDESC_UNKNOWN; /* JDK <= 22: the table lies after the code, never inside it */
    int32_t want = (int32_t)(ret - n->begin); /* the first PcDesc at or after it, and where */
    size_t lo = 0, hi = (size_t)(e - b) / (size_t)l->size, count = hi;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int32_t pc;
        if (!peek_i32(l->pid, base + (uintptr_t)b + mid * (size_t)l->size + (size_t)l->pc, &pc))
            return FX_PCDESC_UNKNOWN;
        if (pc < want)
            lo = mid + 1;
        else
            hi = mid;
    }
    int32_t at; /* past the code's end: HotSpot's closing sentinel PcDesc, no instruction's */
    if (lo >= count ||
        !peek_i32(l->pid, base + (uintptr_t)b + lo * (size_t)l->size + (size_t)l->pc, &at) ||
        at < want || (uintptr_t)at > n->end - n->begin)
        return FX_PCDESC_UNKNOWN;
    *desc = base + (uintptr_t)b + lo * (size_t)l->size;
    return at == want + (int32_t)skip ? FX_PCDESC_AT_END : FX_PCDESC_ELSEWHERE;
}

enum fx_pcdesc_found fx_recover_pcdesc_find(const struct fx_pcdesc_layout *l,
                                            const struct fx_code_range *n, uintptr_t ret,
                                            uint32_t skip)
{
    uintptr_t desc;
    return first_at(l, n, ret, skip, &desc);
}

bool fx_recover_pcdesc_scoped(const struct fx_pcdesc_layout *l, const struct fx_code_range *n,
                              uintptr_t ret)
{
    struct fx_pcdesc_layout c;
    if (l == NULL) {
        if (__atomic_load_n(&published.pid, __ATOMIC_ACQUIRE) == 0)
            return false;
        c = published;
        l = &c;
    }
    uintptr_t desc;
    int32_t scope;
    return l->scope >= 0 && l->scope + 4 <= l->size &&
           first_at(l, n, ret, 0, &desc) != FX_PCDESC_UNKNOWN &&
           peek_i32(l->pid, desc + (uintptr_t)l->scope, &scope) && scope != 0;
}

uint32_t fx_recover_post_call_nop(const struct fx_code_range *n, uintptr_t ret)
{
    if (!fx_recover_in(n, ret, FX_POST_CALL_NOP))
        return 0;
    const uint8_t *b = fx_recover_code(ret);
    return b[0] == 0x0F && b[1] == 0x1F && b[2] == 0x84 && b[3] == 0x00 ? FX_POST_CALL_NOP : 0;
}

int fx_recover_stub_refused(const struct fx_code_range *stub, const struct fx_code_range *n,
                            uintptr_t ret)
{
    if (!fx_recover_after_call(n, ret))
        return FX_REC_NOT_CALLED;
    if (stub->arraycopy != FX_STUB_INTRINSIC && stub->arraycopy != FX_STUB_FILL)
        return 0;
    if (!fx_recover_stub_return(stub, n, ret)) /* a call to this very stub */
        return FX_REC_NOT_CALLED;
    if (n->flags & FX_RANGE_OSR) /* exact PcDescs of an outer scope seen there (8.5d) */
        return FX_REC_PCDESC_OSR;
    /* A fill stub's call (PhaseIdealLoop::intrinsify_fill: a CallLeafNoFP made in loop
     * optimization, no JVMState, no node notes) is skipped by the non-safepoint emitter, so the
     * PcDesc after it is never its own, where it lies: its scope is not known, the caller is */
    if (stub->arraycopy == FX_STUB_FILL)
        return FX_REC_NO_PCDESC;
    if (__atomic_load_n(&published.pid, __ATOMIC_ACQUIRE) == 0)
        return FX_REC_PCDESC_TABLE;
    struct fx_pcdesc_layout l = published;
    /* Elsewhere: C2 records no PcDesc at a leaf call (CallLeafNode::guaranteed_safepoint is
     * false, so fill_buffer makes no safepoint of it), only the non-safepoint run that holds
     * it, at the run's end; a PcDesc past the call's end is that run's only if no node of
     * another JVM state ended where the run did (the emitter then drops the run's state):
     * nothing in the code or the table shows which, so it is refused (8.5d, session 20). */
    switch (fx_recover_pcdesc_find(&l, n, ret, fx_recover_post_call_nop(n, ret))) {
    case FX_PCDESC_AT_END:
        return 0;
    case FX_PCDESC_ELSEWHERE:
        return FX_REC_NO_PCDESC;
    default:
        return FX_REC_PCDESC_TABLE;
    }
}

void fx_recover_pcdesc_publish(const struct fx_pcdesc_layout *l)
{
    if (__atomic_load_n(&published.pid, __ATOMIC_ACQUIRE) != 0)
        return;
    struct fx_pcdesc_layout c = *l;
    c.pid = 0;
    published = c;
    __atomic_store_n(&published.pid, l->pid, __ATOMIC_RELEASE);
}
