/* SPDX-License-Identifier: Apache-2.0 */
/* Part of THE SIGNAL PATH (signal_handler.c's rules and allow-list): the class of the object a
 * vtable or itable stub dispatches on (issue 32, item 3), read when the sample's pc is in such a
 * stub (receiver.h says why j_rarg0 holds it there). receiver.c published the layout.
 *
 * Why the read is safe: the register's value is checked before any memory is touched: not NULL,
 * 8-byte aligned, inside the Java heap's reserved range. The klass word is then read with
 * process_vm_readv on this process (a raw system call through syscall(), allow-listed): a page of
 * the reserved range that is not committed, or anything else unreadable, makes the call fail
 * (counted), never this thread. With compact object headers the word read is the mark word: its
 * lock bits say whether it holds the klass bits (unlocked or fast-locked) or a monitor's or a
 * forwarding pointer (not decoded, counted). The Klass* is decoded (base + narrowKlass << shift)
 * and kept only when aligned and not NULL; nothing is read through it here: the drain names it by
 * checked reads (compile_task.c). Cost: one system call per sample in a dispatch stub only. */
#include "internal.h"

#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

uint64_t fx_receiver_read_sigsafe(const void *ucontext)
{
#if defined(__x86_64__)
    int mode = __atomic_load_n(&fx_sig.recv_mode, __ATOMIC_ACQUIRE); /* published last */
    if (mode != FX_RECV_MODE_NARROW && mode != FX_RECV_MODE_WIDE && mode != FX_RECV_MODE_COMPACT)
        return FX_RECV_NO_LAYOUT;
    if (ucontext == NULL)
        return FX_RECV_NO_REGS;
    const ucontext_t *uc = ucontext;
    uintptr_t obj = (uintptr_t)uc->uc_mcontext.gregs[REG_RSI]; /* j_rarg0 */
    if (obj == 0)
        return FX_RECV_NULL;
    uintptr_t at = obj + (uintptr_t)fx_sig.recv_klass_off;
    if ((obj & 7) != 0 || obj < fx_sig.recv_heap_lo || at < obj ||
        at + sizeof(uint64_t) > fx_sig.recv_heap_hi)
        return FX_RECV_OUTSIDE;
    uint64_t k = 0; /* little-endian: a 4-byte narrowKlass lands in the low half */
    size_t n = mode == FX_RECV_MODE_NARROW ? sizeof(uint32_t) : sizeof(uint64_t);
    struct iovec local = {.iov_base = &k, .iov_len = n};
    struct iovec remote = {.iov_base = (void *)at, .iov_len = n};
    if (syscall(SYS_process_vm_readv, (pid_t)fx_sig.recv_pid, &local, 1UL, &remote, 1UL, 0UL) !=
        (long)n)
        return FX_RECV_UNREADABLE;
    if (mode == FX_RECV_MODE_COMPACT) { /* lock bits 10: a monitor's; 11: forwarded (GC) */
        if ((k & 3) >= 2)
            return FX_RECV_DISPLACED;
        k >>= fx_sig.recv_mark_shift;
    }
    if (mode != FX_RECV_MODE_WIDE && k != 0)
        k = fx_sig.recv_base + (k << fx_sig.recv_shift);
    if (k < FX_RECV_KLASS_MIN || (k & 7) != 0)
        return FX_RECV_BAD_KLASS;
    return k;
#else
    (void)ucontext;
    return FX_RECV_NO_REGS;
#endif
}
