/* SPDX-License-Identifier: Apache-2.0 */
/* Part of THE SIGNAL PATH (signal_handler.c's rules and allow-list): an interpreted frame named
 * by its Method* and bcp (interp_frame.h), for the anchor walk's interpreted callers (issue 32).
 *
 * The chain, as HotSpot's own Method::jmethod_id() follows it: Method::_constMethod ->
 * ConstMethod::_constants -> ConstantPool::_pool_holder -> InstanceKlass::_methods_jmethod_ids,
 * an array whose word 0 is its length and word idnum + 1 the method's jmethodID (NULL until one
 * is made: fxagent makes them for each prepared class). A jmethodID on JDK 17-25 points at a
 * slot holding its Method*: that slot must hold the frame's Method*, or the frame is not
 * named (a redefined method's old version, a wrong word). Why process_vm_readv: the Method*
 * is a stack word, anything may sit there if the walk were wrong; a read of an unmapped page
 * fails the call, never this thread. Cost: seven system calls per Method* proven; within one
 * anchor walk a Method* proven once names its later frames with none, and a class's jmethodID
 * array found once serves its other methods (struct fx_interp_memo, why below). */
#include "interp_frame.h"

#include "recover_x86.h"

#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define ACC_NATIVE  0x0100 /* JVM_ACC_NATIVE, in the low bits of Method::_access_flags */
#define NATIVE_LINE (-3)   /* AsyncGetCallTrace's lineno of a native method's frame */

bool fx_interp_peek_sigsafe(int32_t pid, uintptr_t at, void *buf, size_t n, size_t align)
{
    if (at < 4096 || (at & (align - 1)) != 0 || at + n < at)
        return false;
    struct iovec local = {.iov_base = buf, .iov_len = n};
    struct iovec remote = {.iov_base = (void *)at, .iov_len = n};
    return syscall(SYS_process_vm_readv, (pid_t)pid, &local, 1UL, &remote, 1UL, 0UL) == (long)n;
}

/* Signal-safe: an aligned word or structure (every read of the chain is of one). */
static bool peek(int32_t pid, uintptr_t at, void *buf, size_t n)
{
    return fx_interp_peek_sigsafe(pid, at, buf, n, 8);
}

static uintptr_t field(const unsigned char *b, int32_t off, size_t w)
{
    uintptr_t v = 0;
    memcpy(&v, b + off, w);
    return v;
}

/* Signal-safe: peek, one more system call in memo's count (none: NULL). */
static bool peek_m(int32_t pid, struct fx_interp_memo *memo, uintptr_t at, void *buf, size_t n)
{
    if (memo != NULL)
        memo->calls++;
    return peek(pid, at, buf, n);
}

/* Signal-safe: the jmethodID array (and its length, word 0) of the class whose ConstantPool is
 * at cp: ConstantPool::_pool_holder -> InstanceKlass::_methods_jmethod_ids, or memo's copy of
 * what this walk read there for an earlier method of that class. The array is replaced only
 * when a redefinition adds methods, its jmethodIDs copied into the new one (they never move):
 * an id read from the array met earlier names the same method, and the proof still ends in
 * that jmethodID's slot holding this Method*. */
static bool holder_ids(const struct fx_interp_layout *l, struct fx_interp_memo *memo, uintptr_t cp,
                       uintptr_t *ids, uintptr_t *count)
{
    uintptr_t ik;
    for (uint32_t i = 0; memo != NULL && i < memo->holders && i < FX_INTERP_HOLDERS; i++) {
        if (memo->cp[i] == cp) {
            *ids = memo->ids[i];
            *count = memo->count[i];
            return true;
        }
    }
    if (!peek_m(l->pid, memo, cp + (uintptr_t)l->pool_holder, &ik, 8) ||
        !peek_m(l->pid, memo, ik + (uintptr_t)l->jmethod_ids, ids, 8) ||
        !peek_m(l->pid, memo, *ids, count, 8))
        return false;
    if (memo != NULL) {
        uint32_t at = memo->next_holder++ % FX_INTERP_HOLDERS;
        memo->cp[at] = cp;
        memo->ids[at] = *ids;
        memo->count[at] = *count;
        memo->holders += memo->holders < FX_INTERP_HOLDERS;
    }
    return true;
}

/* Signal-safe: the Method* at method into m, its ConstMethod into cm, and its jmethodID by the
 * chain above, proven by the jmethodID pointing back at method; memo (or NULL) counts the
 * system calls and keeps the class's array. */
static bool method_read(const struct fx_interp_layout *l, struct fx_interp_memo *memo,
                        uintptr_t method, unsigned char *m, unsigned char *cm, uintptr_t *id)
{
    uintptr_t ids, count, back;
    if (!peek_m(l->pid, memo, method, m, (size_t)l->method_size))
        return false;
    uintptr_t cmp = field(m, l->const_method, 8);
    if (!peek_m(l->pid, memo, cmp, cm, (size_t)l->cm_size))
        return false;
    uintptr_t cp = field(cm, l->constants, 8), idnum = field(cm, l->idnum, 2);
    return holder_ids(l, memo, cp, &ids, &count) && idnum < count &&
           peek_m(l->pid, memo, ids + (idnum + 1) * 8, id, 8) &&
           peek_m(l->pid, memo, *id, &back, 8) && back == method;
}

bool fx_interp_method_id_sigsafe(const struct fx_interp_layout *l, uintptr_t method, uint64_t *id)
{
    unsigned char m[FX_INTERP_MAX_STRUCT], cm[FX_INTERP_MAX_STRUCT];
    uintptr_t v;
    if (l == NULL || l->pid == 0 || !method_read(l, NULL, method, m, cm, &v))
        return false;
    *id = (uint64_t)v;
    return true;
}

bool fx_interp_mh_id_sigsafe(const struct fx_interp_layout *l, uintptr_t method, uint64_t *id)
{
    unsigned char m[FX_INTERP_MAX_STRUCT], cm[FX_INTERP_MAX_STRUCT];
    uintptr_t holder, back;
    if (l == NULL || l->pid == 0 || __atomic_load_n(&l->mh.ready, __ATOMIC_ACQUIRE) == 0 ||
        !peek(l->pid, method, m, (size_t)l->method_size) ||
        !(field(m, l->access_flags, 2) & ACC_NATIVE) ||
        !peek(l->pid, field(m, l->const_method, 8), cm, (size_t)l->cm_size) ||
        !peek(l->pid, field(cm, l->constants, 8) + (uintptr_t)l->pool_holder, &holder, 8) ||
        holder != l->mh.holder)
        return false;
    uintptr_t iid = field(m, l->mh.intrinsic_id, 2);
    for (uint32_t i = 0; i < l->mh.n && i < FX_MH_NAMES; i++) {
        if (iid == 0 || l->mh.iid[i] != iid)
            continue;
        /* the declared method's jmethodID still names a Method* (its class not unloaded) */
        if (!peek(l->pid, (uintptr_t)l->mh.id[i], &back, 8) || back == 0)
            return false;
        *id = l->mh.id[i];
        return true;
    }
    return false;
}

bool fx_interp_entry_sigsafe(const struct fx_interp_layout *l, uintptr_t method, uint64_t *id,
                             uintptr_t *entry)
{
    unsigned char m[FX_INTERP_MAX_STRUCT], cm[FX_INTERP_MAX_STRUCT];
    uintptr_t v;
    if (l == NULL || l->pid == 0 || l->i2i_entry <= 0 || !method_read(l, NULL, method, m, cm, &v))
        return false;
    *id = (uint64_t)v;
    *entry = field(m, l->i2i_entry, 8);
    return true;
}

/* Signal-safe: the facts of the Method* at method that naming a frame needs, from memo or
 * proven (then kept, FIFO). Why a Method* proven earlier in this walk may name a later frame:
 * the stack walked is this thread's own, stopped in the handler, and HotSpot frees no Method*
 * a frame on a stack runs; its ConstMethod (the code, its size) and its native flag are fixed
 * once the method is linked; its jmethodID, read a moment ago in this same walk, is what the
 * proof would read again (a redefinition between the two reads is no more likely than between
 * two reads of one proof: the walk lasts at most its budget of system calls). Each frame's own
 * fact, its bcp inside that code, is still checked per frame. */
static bool method_facts(const struct fx_interp_layout *l, struct fx_interp_memo *memo,
                         uintptr_t method, uint32_t *at)
{
    unsigned char m[FX_INTERP_MAX_STRUCT], cm[FX_INTERP_MAX_STRUCT];
    uintptr_t id;
    for (uint32_t k = 0; k < memo->n && k < FX_INTERP_MEMO; k++) {
        *at = (memo->next + FX_INTERP_MEMO - 1 - k) % FX_INTERP_MEMO; /* the newest first */
        if (memo->method[*at] == method)
            return true;
    }
    if (memo->calls + FX_INTERP_PROOF_CALLS > FX_INTERP_BUDGET * FX_INTERP_PROOF_CALLS) {
        memo->spent = true;
        return false;
    }
    if (!method_read(l, memo, method, m, cm, &id))
        return false;
    *at = memo->next++ % FX_INTERP_MEMO;
    memo->n += memo->n < FX_INTERP_MEMO;
    memo->method[*at] = method;
    memo->id[*at] = id;
    memo->codes[*at] = field(m, l->const_method, 8) + (uintptr_t)l->cm_size;
    memo->code_size[*at] = (uint16_t)field(cm, l->code_size, 2);
    memo->native &= ~(1u << *at);
    memo->native |= (field(m, l->access_flags, 2) & ACC_NATIVE) ? 1u << *at : 0;
    return true;
}

bool fx_interp_frame_sigsafe(const struct fx_interp_layout *l, struct fx_interp_memo *memo,
                             uintptr_t fp, uintptr_t sp, uintptr_t lo, uintptr_t hi,
                             fx_asgct_frame *out)
{
    uintptr_t method, bcp;
    uint32_t at = 0;
    if (l == NULL || memo == NULL || l->pid == 0 || (fp & 7) != 0 || fp >= hi ||
        fp + (uintptr_t)(intptr_t)l->bcp_slot * 8 < sp ||
        !fx_recover_stack_word(lo, hi, fp + (uintptr_t)(intptr_t)l->method_slot * 8, &method) ||
        !fx_recover_stack_word(lo, hi, fp + (uintptr_t)(intptr_t)l->bcp_slot * 8, &bcp) ||
        !method_facts(l, memo, method, &at))
        return false;
    uintptr_t codes = memo->codes[at];
    if (memo->native & (1u << at))
        out->lineno = NATIVE_LINE;
    else if (bcp >= codes && bcp - codes < memo->code_size[at])
        out->lineno = (jint)(bcp - codes);
    else
        return false;
    out->method_id = (jmethodID)memo->id[at];
    return true;
}
