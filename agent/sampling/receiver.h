/* SPDX-License-Identifier: Apache-2.0 */
/* agent/sampling, public: the receiver part of the ring record (issue 32, item 3). When a sample's
 * pc is in a vtable or itable stub (stack recovery's FX_REC_DISPATCH), the object the call
 * dispatches on is in j_rarg0 (rsi on x86-64) for the whole stub: HotSpot's VtableStubs::
 * create_vtable_stub / create_itable_stub read its klass from it and never write that register.
 * The handler reads that klass (receiver_sig.c) and the record (sample.h, bit `receiver`) then
 * holds one uint64_t after its task part, before any trace context: the Klass* when it was read,
 * else an enum fx_recv_read below 4096 saying why not. The drain names the Klass* by checked
 * reads (compile_task.h, fx_compile_task_class_name) and places the class as a frame leafward of
 * the stub (model/receivers.c). */
#ifndef FX_RECEIVER_H
#define FX_RECEIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Why the handler holds no Klass* (the record's word when it is below FX_RECV_KLASS_MIN). */
enum fx_recv_read {
    FX_RECV_NO_LAYOUT = 1, /* heap bounds or the object header's layout unknown (VMStructs,
                              flags) */
    FX_RECV_NO_REGS,       /* no ucontext, or not x86-64 */
    FX_RECV_NULL,          /* j_rarg0 is NULL: the call will throw NullPointerException */
    FX_RECV_OUTSIDE,       /* j_rarg0 outside the Java heap's reserved range, or misaligned */
    FX_RECV_UNREADABLE,    /* the checked read of the object's klass word failed */
    FX_RECV_BAD_KLASS,     /* the klass word decodes to NULL or a misaligned pointer */
    FX_RECV_DISPLACED,     /* compact headers: the mark word holds a monitor or a forwarding
                              pointer instead of the klass bits */
    FX_RECV_COUNT
};
#define FX_RECV_KLASS_MIN 4096 /* a record word at least this is a Klass* */

/* How the object header holds the klass (fx_sig.recv_mode, receiver.c publishes it last). */
enum fx_recv_mode {
    FX_RECV_MODE_NONE = 0, /* not published (yet), or a layout this reader does not know */
    FX_RECV_MODE_NARROW, /* UseCompressedClassPointers: a 32-bit narrowKlass, base + (n << shift) */
    FX_RECV_MODE_WIDE,   /* -XX:-UseCompressedClassPointers: the Klass* itself */
    FX_RECV_MODE_COMPACT, /* UseCompactObjectHeaders (JDK 24+): the narrowKlass in the mark word,
                             above markWord::klass_shift */
};

/* Outside signal context: reads the heap's reserved range and the header layout from VMStructs
 * and the JVM's flags, and publishes them for the handler (once the heap exists: at a start). */
void fx_receiver_publish(void);

#endif
