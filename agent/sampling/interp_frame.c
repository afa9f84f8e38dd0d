/* SPDX-License-Identifier: Apache-2.0 */
/* The layout the handler names interpreted frames by (interp_frame.h, issue 32), read from
 * HotSpot's VMStructs outside signal context: every field must be exported and fit the bounded
 * buffers of interp_frame_sig.c, else nothing is published and the anchor walk keeps stopping
 * at interpreted frames ("[walk stopped: interpreted frame]"): never a guessed offset.
 * The frame slots: x86-64's frame_x86.hpp, the same on JDK 17 and 25: the Method* one word
 * below interpreter_frame_last_sp_offset (exported, -2), the bcp six below it (-8). Also the
 * entry frame's (the call stub's) JavaCallWrapper slot and the anchor it saved: where the
 * anchor walk goes on below a call stub (recover_anchor.c). */
#include "internal.h"

#include "interp_frame.h"

#include <unistd.h>

static bool fits(long off, long width, long size)
{
    return off >= 0 && width > 0 && size > 0 && off + width <= size;
}

static bool layout_read(struct fx_interp_layout *out)
{
    int64_t last_sp = 0;
    long msize = fx_vmstructs_size("Method"), cmsize = fx_vmstructs_size("ConstMethod");
    long const_method = fx_vmstructs_field("Method", "_constMethod");
    long access = fx_vmstructs_field("Method", "_access_flags");
    long constants = fx_vmstructs_field("ConstMethod", "_constants");
    long idnum = fx_vmstructs_field("ConstMethod", "_method_idnum");
    long code_size = fx_vmstructs_field("ConstMethod", "_code_size");
    long holder = fx_vmstructs_field("ConstantPool", "_pool_holder");
    long ids = fx_vmstructs_field("InstanceKlass", "_methods_jmethod_ids");
    long i2i = fx_vmstructs_field("Method", "_i2i_entry");
    out->pid = 0;
    if (!fx_vmstructs_int_constant("frame::interpreter_frame_last_sp_offset", &last_sp) ||
        last_sp != -2 || msize > FX_INTERP_MAX_STRUCT || cmsize > FX_INTERP_MAX_STRUCT ||
        !fits(const_method, 8, msize) || !fits(access, 2, msize) || !fits(constants, 8, cmsize) ||
        !fits(idnum, 2, cmsize) || !fits(code_size, 2, cmsize) || holder < 0 || ids < 0)
        return false;
    *out = (struct fx_interp_layout){.pid = (int32_t)getpid(),
                                     .method_slot = (int32_t)last_sp - 1,
                                     .bcp_slot = (int32_t)last_sp - 6,
                                     .method_size = (int32_t)msize,
                                     .cm_size = (int32_t)cmsize,
                                     .const_method = (int32_t)const_method,
                                     .access_flags = (int32_t)access,
                                     .constants = (int32_t)constants,
                                     .idnum = (int32_t)idnum,
                                     .code_size = (int32_t)code_size,
                                     .pool_holder = (int32_t)holder,
                                     .jmethod_ids = (int32_t)ids,
                                     /* the method entry rule's (recover_interp.c), or none */
                                     .i2i_entry = fits(i2i, 8, msize) ? (int32_t)i2i : 0};
    /* the entry frame's fields: all or none (the anchor walk then stops at the call stub) */
    int64_t wrapper_slot = 0;
    long anchor = fx_vmstructs_field("JavaCallWrapper", "_anchor");
    long sp = fx_vmstructs_field("JavaFrameAnchor", "_last_Java_sp");
    long pc = fx_vmstructs_field("JavaFrameAnchor", "_last_Java_pc");
    long fp = fx_vmstructs_field("JavaFrameAnchor", "_last_Java_fp");
    if (fx_vmstructs_int_constant("frame::entry_frame_call_wrapper_offset", &wrapper_slot) &&
        wrapper_slot < 0 && wrapper_slot > -32 && anchor >= 0 && sp >= 0 && pc >= 0 && fp >= 0 &&
        anchor < 4096 && sp < 64 && pc < 64 && fp < 64) {
        out->wrapper_slot = (int32_t)wrapper_slot;
        out->wrapper_anchor = (int32_t)anchor;
        out->last_sp = (int32_t)sp;
        out->last_pc = (int32_t)pc;
        out->last_fp = (int32_t)fp;
    }
    return true;
}

void fx_interp_publish(void)
{
    struct fx_interp_layout l;
    if (__atomic_load_n(&fx_sig.interp.pid, __ATOMIC_ACQUIRE) != 0 || !layout_read(&l))
        return; /* published at an earlier start: the layout does not change */
    int32_t pid = l.pid;
    l.pid = 0;
    fx_sig.interp = l;
    __atomic_store_n(&fx_sig.interp.pid, pid, __ATOMIC_RELEASE);
}
