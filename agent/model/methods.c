/* SPDX-License-Identifier: Apache-2.0 */
/* jmethodID -> func and line table, resolved once per id on the drain thread, in the cycle the
 * id first appears in a sample, i.e. while its class is very likely still loaded. A method
 * JVMTI cannot resolve (unloaded class, obsolete method) is cached as unknown and becomes the
 * "[unknown method]" frame; it is never touched again. Owned by the drain thread only. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_profile.h"
#include "fx_sort.h"

struct line_entry {
    int32_t bci;
    int32_t line;
};

struct method {
    jmethodID id; /* NULL: empty slot */
    bool known;
    bool native;
    fx_func_id func;
    uint32_t n_lines;
    struct line_entry *lines; /* sorted by bci */
};

struct fx_methods {
    struct method *slots;
    size_t cap, count; /* cap: power of two */
    uint64_t unknown;  /* samples with an unresolvable frame */
};

struct fx_methods *fx_methods_new(void)
{
    struct fx_methods *m = fx_calloc(1, sizeof(*m));
    if (m == NULL)
        return NULL;
    m->cap = 4096;
    m->slots = fx_calloc(m->cap, sizeof(*m->slots));
    if (m->slots == NULL) {
        fx_free(m);
        return NULL;
    }
    return m;
}

void fx_methods_free(struct fx_methods *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->cap; i++)
        fx_free(m->slots[i].lines);
    fx_free(m->slots);
    fx_free(m);
}

uint64_t fx_methods_unknown(const struct fx_methods *m)
{
    return m->unknown;
}

uint64_t fx_methods_count(const struct fx_methods *m)
{
    return m->count;
}

static size_t slot_of(const struct fx_methods *m, jmethodID id)
{
    uint64_t h = (uint64_t)(uintptr_t)id * 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(h >> 32) & (m->cap - 1);
    while (m->slots[i].id != NULL && m->slots[i].id != id)
        i = (i + 1) & (m->cap - 1);
    return i;
}

/* Doubles the table at half load; if that fails the old one stays (lookups keep working, the
 * caller reports the new id as unknown). */
static int grow(struct fx_methods *m)
{
    struct fx_methods bigger = {.cap = m->cap * 2};
    bigger.slots = fx_calloc(bigger.cap, sizeof(*bigger.slots));
    if (bigger.slots == NULL)
        return FX_ENOMEM;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->slots[i].id != NULL)
            bigger.slots[slot_of(&bigger, m->slots[i].id)] = m->slots[i];
    }
    fx_free(m->slots);
    m->slots = bigger.slots;
    m->cap = bigger.cap;
    return FX_OK;
}

static int cmp_line(const void *a, const void *b)
{
    const struct line_entry *x = a, *y = b; /* fx_sort is not stable: ties by line */
    if (x->bci != y->bci)
        return (x->bci > y->bci) - (x->bci < y->bci);
    return (x->line > y->line) - (x->line < y->line);
}

/* Copies JVMTI's line table (absent for native and some generated methods: then none). */
static void load_lines(jvmtiEnv *jvmti, struct method *me, int32_t *first_line)
{
    jint n = 0;
    jvmtiLineNumberEntry *tab = NULL;
    *first_line = -1;
    if ((*jvmti)->GetLineNumberTable(jvmti, me->id, &n, &tab) != JVMTI_ERROR_NONE)
        return;
    me->lines = n > 0 ? fx_calloc((size_t)n, sizeof(*me->lines)) : NULL;
    if (me->lines != NULL) {
        for (jint i = 0; i < n; i++) {
            me->lines[i].bci = (int32_t)tab[i].start_location;
            me->lines[i].line = tab[i].line_number;
            if (*first_line < 0 || tab[i].line_number < *first_line)
                *first_line = tab[i].line_number;
        }
        me->n_lines = (uint32_t)n;
        fx_sort(me->lines, me->n_lines, sizeof(*me->lines), cmp_line);
    }
    (*jvmti)->Deallocate(jvmti, (unsigned char *)tab);
}

/* "Lcom/example/App;" -> "com.example.App.method" and "com/example/App.java". */
static int names(struct fx_profile *p, const char *csig, const char *method, const char *srcfile,
                 fx_str_id *name, fx_str_id *source)
{
    size_t len = strlen(csig);
    const char *cls = csig;
    if (len >= 2 && csig[0] == 'L' && csig[len - 1] == ';') {
        cls++;
        len -= 2;
    }
    size_t cap = len + strlen(method) + (srcfile ? strlen(srcfile) : 0) + 2;
    char *buf = fx_malloc(cap);
    if (buf == NULL)
        return FX_ENOMEM;
    snprintf(buf, cap, "%.*s.%s", (int)len, cls, method);
    for (size_t i = 0; i < len; i++)
        buf[i] = buf[i] == '/' ? '.' : buf[i];
    int rc = fx_profile_cstring(p, buf, name);
    *source = FX_STR_NONE;
    if (rc == FX_OK && srcfile != NULL) {
        const char *slash = memrchr(cls, '/', len);
        int pkg = slash != NULL ? (int)(slash - cls + 1) : 0;
        snprintf(buf, cap, "%.*s%s", pkg, cls, srcfile);
        rc = fx_profile_cstring(p, buf, source);
    }
    fx_free(buf);
    return rc;
}

struct jvmti_strings {
    char *method, *csig, *src;
};

static void release_strings(jvmtiEnv *jvmti, struct jvmti_strings *s)
{
    (*jvmti)->Deallocate(jvmti, (unsigned char *)s->method);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)s->csig);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)s->src);
}

/* Fills me->func etc.; leaves me->known false if JVMTI refuses the id. */
static int resolve(jvmtiEnv *jvmti, JNIEnv *jni, struct fx_profile *p, struct method *me)
{
    struct jvmti_strings s = {NULL, NULL, NULL};
    jclass cls = NULL;
    jint mods = 0;
    int rc = FX_OK;
    if ((*jvmti)->GetMethodName(jvmti, me->id, &s.method, NULL, NULL) != JVMTI_ERROR_NONE ||
        (*jvmti)->GetMethodDeclaringClass(jvmti, me->id, &cls) != JVMTI_ERROR_NONE ||
        (*jvmti)->GetClassSignature(jvmti, cls, &s.csig, NULL) != JVMTI_ERROR_NONE)
        goto out_release;
    if ((*jvmti)->GetSourceFileName(jvmti, cls, &s.src) != JVMTI_ERROR_NONE)
        s.src = NULL;
    if ((*jvmti)->GetMethodModifiers(jvmti, me->id, &mods) == JVMTI_ERROR_NONE)
        me->native = (mods & 0x0100) != 0; /* ACC_NATIVE */
    struct fx_func_key k = {.resource = FX_STR_NONE, .is_java = true};
    load_lines(jvmti, me, &k.line);
    rc = names(p, s.csig, s.method, s.src, &k.name, &k.source);
    if (rc == FX_OK)
        rc = fx_profile_func(p, &k, &me->func);
    me->known = rc == FX_OK;
out_release:
    if (cls != NULL)
        (*jni)->DeleteLocalRef(jni, cls);
    release_strings(jvmti, &s);
    return rc;
}

static int32_t line_of(const struct method *me, jint bci)
{
    if (bci < 0 || me->n_lines == 0)
        return -1;
    uint32_t lo = 0, hi = me->n_lines; /* last entry with entry.bci <= bci */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (me->lines[mid].bci <= bci)
            lo = mid;
        else
            hi = mid;
    }
    return me->lines[lo].bci <= bci ? me->lines[lo].line : -1;
}

static int unknown_frame(struct fx_methods *m, struct fx_profile *p, fx_frame_id *out)
{
    m->unknown++;
    fx_str_id name;
    int rc = fx_profile_cstring(p, "[unknown method]", &name);
    struct fx_func_key k = {.name = name,
                            .resource = FX_STR_NONE,
                            .source = FX_STR_NONE,
                            .line = -1,
                            .is_java = false};
    fx_func_id f;
    if (rc == FX_OK)
        rc = fx_profile_func(p, &k, &f);
    struct fx_frame_key fk = {.func = f, .line = -1, .category = FX_CAT_OTHER};
    return rc == FX_OK ? fx_profile_frame(p, &fk, out) : rc;
}

static struct method *lookup_or_add(struct fx_methods *m, jvmtiEnv *jvmti, JNIEnv *jni,
                                    struct fx_profile *p, jmethodID id)
{
    size_t i = slot_of(m, id);
    if (m->slots[i].id == id)
        return &m->slots[i];
    if ((m->count + 1) * 2 > m->cap) {
        if (grow(m) != FX_OK)
            return NULL;
        i = slot_of(m, id);
    }
    struct method *me = &m->slots[i];
    memset(me, 0, sizeof(*me));
    me->id = id;
    m->count++;
    resolve(jvmti, jni, p, me);
    return me;
}

int fx_methods_frame(struct fx_methods *m, JNIEnv *jni, struct fx_profile *p, jmethodID id,
                     jint bci, fx_frame_id *frame)
{
    return fx_methods_frame_typed(m, jni, p, id, bci, FX_JAVA_OTHER, 0, frame);
}

int fx_methods_frame_typed(struct fx_methods *m, JNIEnv *jni, struct fx_profile *p, jmethodID id,
                           jint bci, uint8_t sub, uint8_t inline_depth, fx_frame_id *frame)
{
    struct method *me = id != NULL ? lookup_or_add(m, fx_jvmti(), jni, p, id) : NULL;
    if (me == NULL || !me->known)
        return unknown_frame(m, p, frame);
    bool native = me->native || bci == -3;
    /* a native method's frame typed by the code it ran in (frame_types.c), else its own */
    bool by_code = sub == FX_JAVA_INTERPRETED || sub == FX_JAVA_C1 || sub == FX_JAVA_C2;
    struct fx_frame_key k = {
            .func = me->func,
            .line = native ? -1 : line_of(me, bci),
            .category = FX_CAT_JAVA,
            .subcategory = native && !by_code ? FX_JAVA_NATIVE_METHOD : sub,
            .inline_depth = native ? 0 : inline_depth,
    };
    return fx_profile_frame(p, &k, frame);
}

int fx_methods_blob_frame(struct fx_methods *m, JNIEnv *jni, struct fx_profile *p, jmethodID id,
                          bool recovered, fx_frame_id *frame)
{
    struct method *me = id != NULL ? lookup_or_add(m, fx_jvmti(), jni, p, id) : NULL;
    if (me == NULL || !me->known)
        return unknown_frame(m, p, frame);
    struct fx_frame_key k = {
            .func = me->func,
            .line = -1, /* no bci: the pc is before or after the method's body */
            .category = FX_CAT_JAVA,
            .subcategory = recovered ? FX_JAVA_RECOVERED : FX_JAVA_OTHER,
    };
    return fx_profile_frame(p, &k, frame);
}
