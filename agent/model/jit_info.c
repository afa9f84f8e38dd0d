/* SPDX-License-Identifier: Apache-2.0 */
/* What a JIT marker says about a compiled method: how many distinct methods the compiler inlined
 * into it (from CompiledMethodLoad's inlining records, on the compiler thread, no allocation)
 * and its name, "pkg.Class.name(sig)", resolved by the model's owner once per jmethodID and
 * model. A jmethodID whose class is gone resolves to "[unknown method]" (JVMTI refuses it). */
#include "internal.h"

#include <jvmticmlr.h>
#include <stdio.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_profile.h"

#define INLINE_SET_SLOTS 256 /* distinct inlined methods counted exactly (power of two) */

struct jit_name {
    jmethodID id; /* NULL: empty slot */
    fx_str_id name;
};

/* The model owner's cache. */
static struct {
    struct fx_profile *p; /* the model the ids belong to */
    uint32_t gen;         /* and its generation (fx_profile_compact renumbers them) */
    struct jit_name *slots;
    size_t cap, count; /* cap: 0 or a power of two */
} nm;

/* Adds m to the open-addressed set; false once it is full. */
static bool set_add(jmethodID *set, jmethodID m, unsigned *n)
{
    uintptr_t h = ((uintptr_t)m * 0x9E3779B97F4A7C15ull) >> 40;
    for (unsigned i = 0; i < INLINE_SET_SLOTS; i++) {
        jmethodID *s = &set[(h + i) & (INLINE_SET_SLOTS - 1)];
        if (*s == m)
            return true;
        if (*s == NULL) {
            *s = m;
            (*n)++;
            return true;
        }
    }
    return false;
}

/* Distinct methods other than the compiled one in the inlining records; -1 without records.
 * Stops counting at 3/4 of the set (the count is then a lower bound). */
int32_t fx_jit_info_inlined(jmethodID root, const void *compile_info)
{
    jmethodID set[INLINE_SET_SLOTS] = {0};
    unsigned n = 0;
    bool seen = false;
    const jvmtiCompiledMethodLoadRecordHeader *h = compile_info;
    for (; h != NULL; h = h->next) {
        if (h->kind != JVMTI_CMLR_INLINE_INFO)
            continue;
        seen = true;
        const jvmtiCompiledMethodLoadInlineRecord *r = (const void *)h;
        for (jint i = 0; i < r->numpcs; i++) {
            const PCStackInfo *pc = &r->pcinfo[i];
            for (jint f = 0; f < pc->numstackframes; f++) {
                jmethodID m = pc->methods[f];
                if (m != root && m != NULL &&
                    (n >= INLINE_SET_SLOTS * 3 / 4 || !set_add(set, m, &n)))
                    return (int32_t)n;
            }
        }
    }
    return seen ? (int32_t)n : -1;
}

static size_t name_slot(jmethodID id)
{
    uint64_t h = (uint64_t)(uintptr_t)id * 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(h >> 32) & (nm.cap - 1);
    while (nm.slots[i].id != NULL && nm.slots[i].id != id)
        i = (i + 1) & (nm.cap - 1);
    return i;
}

static int names_grow(void)
{
    size_t old_cap = nm.cap;
    struct jit_name *old = nm.slots;
    struct jit_name *bigger = fx_calloc(old_cap ? old_cap * 2 : 4096, sizeof(*bigger));
    if (bigger == NULL)
        return FX_ENOMEM;
    nm.slots = bigger;
    nm.cap = old_cap ? old_cap * 2 : 4096;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i].id != NULL)
            nm.slots[name_slot(old[i].id)] = old[i];
    }
    fx_free(old);
    return FX_OK;
}

void fx_jit_info_idle(void)
{
    fx_free(nm.slots); /* 64 KiB at its first size: it.cycle, a stopped agent kept it */
    memset(&nm, 0, sizeof(nm));
}

/* "pkg.Class.name(I)J" for a jmethodID; "[unknown method]" once its class is gone. */
static int method_text(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p, jmethodID id,
                       fx_str_id *out)
{
    char *name = NULL, *sig = NULL, *csig = NULL;
    jclass cls = NULL;
    int rc;
    if ((*jvmti)->GetMethodName(jvmti, id, &name, &sig, NULL) != JVMTI_ERROR_NONE ||
        (*jvmti)->GetMethodDeclaringClass(jvmti, id, &cls) != JVMTI_ERROR_NONE ||
        (*jvmti)->GetClassSignature(jvmti, cls, &csig, NULL) != JVMTI_ERROR_NONE) {
        rc = fx_profile_cstring(p, "[unknown method]", out);
        goto out_release;
    }
    size_t len = strlen(csig);
    const char *k = csig;
    if (len >= 2 && k[0] == 'L' && k[len - 1] == ';') {
        k++;
        len -= 2;
    }
    size_t cap = len + strlen(name) + strlen(sig) + 2;
    char *buf = fx_malloc(cap);
    rc = FX_ENOMEM;
    if (buf != NULL) {
        int n = snprintf(buf, cap, "%.*s.%s%s", (int)len, k, name, sig);
        for (size_t i = 0; i < len; i++)
            buf[i] = buf[i] == '/' ? '.' : buf[i];
        rc = fx_profile_string(p, buf, (size_t)n, out);
        fx_free(buf);
    }
out_release:
    if (cls != NULL)
        (*jni)->DeleteLocalRef(jni, cls);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
    return rc;
}

int fx_jit_info_name(JNIEnv *jni, struct fx_profile *p, jmethodID id, fx_str_id *out)
{
    if (nm.p != p || nm.gen != fx_profile_generation(p)) { /* ids: one model, one generation */
        if (nm.slots != NULL)
            memset(nm.slots, 0, nm.cap * sizeof(*nm.slots));
        nm.count = 0;
        nm.p = p;
        nm.gen = fx_profile_generation(p);
    }
    if ((nm.count + 1) * 2 > nm.cap && names_grow() != FX_OK)
        return method_text(fx_jvmti(), jni, p, id, out); /* uncached, still right */
    size_t i = name_slot(id);
    if (nm.slots[i].id == id) {
        *out = nm.slots[i].name;
        return FX_OK;
    }
    int rc = method_text(fx_jvmti(), jni, p, id, out);
    if (rc == FX_OK) {
        nm.slots[i] = (struct jit_name){id, *out};
        nm.count++;
    }
    return rc;
}
