/* SPDX-License-Identifier: Apache-2.0 */
/* The layout the handler names interpreted frames by (interp_frame.h, issue 32), read from
 * HotSpot's VMStructs outside signal context: every field must be exported and fit the bounded
 * buffers of interp_frame_sig.c, else nothing is published and the anchor walk keeps stopping
 * at interpreted frames ("[walk stopped: interpreted frame]"): never a guessed offset.
 * The frame slots: x86-64's frame_x86.hpp, the same on JDK 17 and 25: the Method* one word
 * below interpreter_frame_last_sp_offset (exported, -2), the bcp six below it (-8). Also the
 * entry frame's (the call stub's) JavaCallWrapper slot and the anchor it saved: where the
 * anchor walk goes on below a call stub (recover_anchor.c). And the names of the method handle
 * intrinsics' Method*s (interp_frame.h, struct fx_mh_names: docs/VALIDATION.md 8.5l) from
 * MethodHandle's declared methods, which need JVMTI and a JNIEnv: published after the rest. */
#include "internal.h"

#include "interp_frame.h"

#include <string.h>
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

/* The intrinsic id and holder of the Method* a jmethodID names, read as the handler reads them
 * (checked reads: a wrong word fails, never this thread). */
static bool declared(const struct fx_interp_layout *l, long iid_off, jmethodID mid, uint16_t *iid,
                     uintptr_t *holder)
{
    unsigned char m[FX_INTERP_MAX_STRUCT], cm[FX_INTERP_MAX_STRUCT];
    uintptr_t method, cmp, cp;
    if (!fx_interp_peek_sigsafe(l->pid, (uintptr_t)mid, &method, 8, 8) ||
        !fx_interp_peek_sigsafe(l->pid, method, m, (size_t)l->method_size, 8))
        return false;
    memcpy(&cmp, m + l->const_method, 8);
    if (!fx_interp_peek_sigsafe(l->pid, cmp, cm, (size_t)l->cm_size, 8))
        return false;
    memcpy(&cp, cm + l->constants, 8);
    memcpy(iid, m + iid_off, 2);
    return fx_interp_peek_sigsafe(l->pid, cp + (uintptr_t)l->pool_holder, holder, 8, 8);
}

/* The table of interp_frame.h's struct fx_mh_names from MethodHandle's declared methods: each
 * native one with an intrinsic id (invokeBasic, linkTo*, invoke, invokeExact), an id declared
 * twice left out (it would not name one method). Any read failing: nothing (false). */
static bool mh_table(jvmtiEnv *jvmti, jclass c, const struct fx_interp_layout *l, long iid_off,
                     struct fx_mh_names *t)
{
    jint n = 0;
    jmethodID *ms = NULL;
    if ((*jvmti)->GetClassMethods(jvmti, c, &n, &ms) != JVMTI_ERROR_NONE)
        return false;
    bool ok = true, twice[FX_MH_NAMES] = {false};
    for (jint i = 0; ok && i < n; i++) {
        jint mods = 0;
        uint16_t iid = 0;
        uintptr_t holder = 0;
        if ((*jvmti)->GetMethodModifiers(jvmti, ms[i], &mods) != JVMTI_ERROR_NONE ||
            !(mods & 0x0100)) /* JVM_ACC_NATIVE: the signature-polymorphic methods are */
            continue;
        ok = declared(l, iid_off, ms[i], &iid, &holder) && (t->holder == 0 || holder == t->holder);
        t->holder = holder;
        uint32_t k = 0;
        while (k < t->n && t->iid[k] != iid)
            k++;
        if (!ok || iid == 0 || (k == t->n && k == FX_MH_NAMES))
            continue;
        twice[k] = k < t->n;
        t->iid[k] = iid;
        t->id[k] = (uint64_t)(uintptr_t)ms[i];
        t->n += k == t->n;
    }
    (*jvmti)->Deallocate(jvmti, (unsigned char *)ms);
    uint32_t kept = 0;
    for (uint32_t k = 0; k < t->n; k++) {
        if (!twice[k]) {
            t->iid[kept] = t->iid[k];
            t->id[kept++] = t->id[k];
        }
    }
    t->n = kept;
    return ok && t->holder != 0 && kept > 0;
}

void fx_interp_publish_mh(void)
{
    struct fx_interp_layout *l = &fx_sig.interp;
    long iid_off = fx_vmstructs_field("Method", "_intrinsic_id");
    jvmtiEnv *jvmti = fx_jvmti();
    JavaVM *vm = fx_jvm();
    JNIEnv *jni = NULL;
    if (jvmti == NULL || vm == NULL ||
        (*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK || jni == NULL ||
        __atomic_load_n(&l->pid, __ATOMIC_ACQUIRE) == 0 ||
        __atomic_load_n(&l->mh.ready, __ATOMIC_ACQUIRE) != 0 || !fits(iid_off, 2, l->method_size))
        return; /* published at an earlier start: MethodHandle is never unloaded */
    jclass c = (*jni)->FindClass(jni, "java/lang/invoke/MethodHandle");
    if (c == NULL) {
        (*jni)->ExceptionClear(jni);
        return;
    }
    struct fx_mh_names t = {.intrinsic_id = (int32_t)iid_off};
    if (mh_table(jvmti, c, l, iid_off, &t)) {
        l->mh = t;
        __atomic_store_n(&l->mh.ready, 1, __ATOMIC_RELEASE);
    }
    (*jni)->DeleteLocalRef(jni, c);
}
