/* SPDX-License-Identifier: Apache-2.0 */
/* A fake interpreted method for unit tests of code that reads HotSpot's structures with
 * process_vm_readv on this process (unit.codeheap, unit.recover_interp): Method -> ConstMethod
 * -> ConstantPool -> InstanceKlass -> jmethodID array -> the slot holding the Method*, at JDK
 * 25's offsets, idnum 1; fake_method_chain() writes the links and returns the layout that names
 * them (interp_frame.h). One copy, so the tests agree on what a proven Method* is. */
#ifndef FX_TEST_FAKE_METHOD_H
#define FX_TEST_FAKE_METHOD_H

#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "interp_frame.h"

static _Alignas(16) unsigned char f_method[88], f_cm[56], f_cp[64], f_ik[344];
static uintptr_t f_ids[3], f_slot; /* the jmethodID: &f_slot */

/* The low w bytes of v at b + off. */
static inline void put(unsigned char *b, size_t off, uintptr_t v, size_t w)
{
    memcpy(b + off, &v, w);
}

static inline struct fx_interp_layout fake_method_chain(void)
{
    put(f_method, 8, (uintptr_t)f_cm, 8);
    put(f_cm, 8, (uintptr_t)f_cp, 8);
    put(f_cm, 40, 1, 2); /* idnum 1 */
    put(f_cp, 24, (uintptr_t)f_ik, 8);
    put(f_ik, 336, (uintptr_t)f_ids, 8);
    f_ids[0] = 2;
    f_ids[2] = (uintptr_t)&f_slot;
    f_slot = (uintptr_t)f_method;
    return (struct fx_interp_layout){.pid = (int32_t)getpid(),
                                     .method_size = 88,
                                     .cm_size = 56,
                                     .const_method = 8,
                                     .access_flags = 44,
                                     .constants = 8,
                                     .idnum = 40,
                                     .code_size = 34,
                                     .pool_holder = 24,
                                     .jmethod_ids = 336};
}

#endif
