/* SPDX-License-Identifier: Apache-2.0 */
/* A JFR recording's references resolved into the profile model (issue 35), for the samples
 * (jfr_profile.c) and the markers (jfr_markers.c) alike: the object a reference points to, a
 * symbol's text, a thread's track, a stack's frames (typed by JFR's frame type, with their
 * lines), each cached per chunk by its pool key. In a file of its own so that the two files that
 * use it do not call each other. */
#include "fxprof.h"

#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_jfr.h"
#include "fx_jtype.h"
#include "fx_profile.h"
#include "jfr_profile.h"

/* The fields of the object a reference points to, up to field `need` (FX_ENOTFOUND: none). */
int fx_jfr_profile_deref(struct conv *c, const struct fx_jfr_value *ref, struct fx_jfr_value *v,
                         int need, struct fx_errbuf *eb)
{
    struct fx_jfr_obj o;
    if (need < 0 || fx_jfr_deref(c->r, ref, &o) != FX_OK)
        return FX_ENOTFOUND;
    uint32_t n = fx_jfr_field_count(c->r, o.cls);
    if (n > 16 || (uint32_t)need >= n)
        return FX_ENOTFOUND;
    /* up to field need only: a stack trace's frames, its last field, are read by the caller */
    return fx_jfr_fields(c->r, &o, v, (uint32_t)need + 1, eb);
}

/* A string field reached through a reference: a Symbol's string, a Class's name. */
const char *fx_jfr_profile_symbol(struct conv *c, const struct fx_jfr_value *ref, char *buf,
                                  struct fx_errbuf *eb)
{
    struct fx_jfr_value v[16];
    buf[0] = '\0';
    if (fx_jfr_profile_deref(c, ref, v, c->l.s_string, eb) == FX_OK)
        fx_jfr_string(c->r, &v[c->l.s_string], buf, STR_CAP, NULL);
    return buf;
}

int fx_jfr_profile_thread(struct conv *c, const struct fx_jfr_value *ref, bool cpu,
                          fx_thread_id *out, struct fx_errbuf *eb)
{
    uint64_t v64;
    struct thread_memo *memo = &c->last_thread[cpu];
    if (memo->ok && memo->ref == ref->i) {
        *out = memo->th;
        return FX_OK;
    }
    if (fx_jfr_map_get(&c->cache, cpu ? C_CTHREAD : C_THREAD, (uint64_t)ref->i, &v64)) {
        out->i = (uint32_t)v64;
        *memo = (struct thread_memo){ref->i, *out, true};
        return FX_OK;
    }
    const struct layout *l = &c->l;
    struct fx_jfr_value v[16];
    int64_t java_id = -1, tid = 0;
    const char *name = NO_THREAD;
    int need = l->t_os_id;
    need = l->t_java_id > need ? l->t_java_id : need;
    need = l->t_java_name > need ? l->t_java_name : need;
    need = l->t_os_name > need ? l->t_os_name : need;
    if (l->t_os_id >= 0 && fx_jfr_profile_deref(c, ref, v, need, eb) == FX_OK) {
        tid = v[l->t_os_id].i;
        if (l->t_java_id >= 0 && v[l->t_java_id].kind == FX_JFR_INT)
            java_id = v[l->t_java_id].i;
        if (l->t_java_name >= 0 &&
            fx_jfr_string(c->r, &v[l->t_java_name], c->buf, STR_CAP, NULL) == FX_OK)
            name = c->buf;
        else if (l->t_os_name >= 0 &&
                 fx_jfr_string(c->r, &v[l->t_os_name], c->buf, STR_CAP, NULL) == FX_OK)
            name = c->buf;
    } else {
        c->no_thread++;
    }
    /* the same Java thread in every chunk is one track (an OS thread id when not Java) */
    uint64_t gkey = java_id > 0 ? (uint64_t)java_id : (uint64_t)tid | 1ull << 62;
    fx_thread_id idx;
    if (fx_jfr_map_get(&c->threads, cpu, gkey, &v64)) {
        idx.i = (uint32_t)v64;
    } else {
        if (cpu) { /* JDK 25's CPU-time samples: a track of their own beside the thread's */
            size_t len = strnlen(name, STR_CAP - 16);
            memmove(c->buf, name, len);
            snprintf(c->buf + len, STR_CAP - len, "%s", CPU_SUFFIX);
            name = c->buf;
        }
        int rc = fx_profile_thread_add(c->p, name, tid, fx_jfr_chunk(c->r)->start_ns, &idx);
        if (rc == FX_OK)
            rc = fx_jfr_map_put(&c->threads, cpu, gkey, idx.i);
        if (rc != FX_OK)
            return rc;
        if (!cpu && (!c->any_thread || (!c->main_set && !strcmp(name, "main"))))
            c->main_thread = idx; /* the track of events without a thread (GC) */
        c->any_thread = c->any_thread || !cpu;
        if (!cpu && !c->main_set && !strcmp(name, "main")) {
            fx_profile_set_main_thread(c->p, idx);
            c->main_set = true;
        }
    }
    *out = idx;
    *memo = (struct thread_memo){ref->i, idx, true};
    return fx_jfr_map_put(&c->cache, cpu ? C_CTHREAD : C_THREAD, (uint64_t)ref->i, idx.i);
}

/* A frame's category and subcategory (cat << 8 | sub) from its JFR frame type, K_LIB when it is a
 * native library's: async-profiler's Native, C++ and Kernel frames, whose method's class is the
 * library ("libjvm.so", "" for the kernel). The JDK's Native frames are Java native methods; its
 * "JIT compiled" does not say which compiler (Java's Other), async-profiler's is C2 beside its
 * "C1 compiled". */
#define K_LIB (1u << 16)
uint32_t fx_jfr_profile_frame_kind(struct conv *c, const struct fx_jfr_value *ref,
                                   struct fx_errbuf *eb)
{
    uint64_t v64;
    if (fx_jfr_map_get(&c->cache, C_FTYPE, (uint64_t)ref->i, &v64))
        return (uint32_t)v64;
    struct fx_jfr_value v[16];
    uint32_t k = FX_CAT_JAVA << 8 | FX_JAVA_OTHER;
    if (fx_jfr_profile_deref(c, ref, v, c->l.ft_desc, eb) == FX_OK &&
        fx_jfr_string(c->r, &v[c->l.ft_desc], c->buf2, STR_CAP, NULL) == FX_OK) {
        const char *d = c->buf2;
        if (!strcmp(d, "Interpreted"))
            k = FX_CAT_JAVA << 8 | FX_JAVA_INTERPRETED;
        else if (!strcmp(d, "Inlined"))
            k = FX_CAT_JAVA << 8 | FX_JAVA_INLINED;
        else if (!strcmp(d, "C1 compiled"))
            k = FX_CAT_JAVA << 8 | FX_JAVA_C1;
        else if (!strcmp(d, "JIT compiled") && c->l.async_profiler)
            k = FX_CAT_JAVA << 8 | FX_JAVA_C2;
        else if (!strcmp(d, "Native"))
            k = c->l.async_profiler ? K_LIB | FX_CAT_NATIVE << 8 | FX_NATIVE_OTHER
                                    : FX_CAT_JAVA << 8 | FX_JAVA_NATIVE_METHOD;
        else if (!strcmp(d, "C++"))
            k = K_LIB | FX_CAT_NATIVE << 8 | FX_NATIVE_LIBJVM;
        else if (!strcmp(d, "Kernel"))
            k = K_LIB | FX_CAT_KERNEL << 8;
    }
    fx_jfr_map_put(&c->cache, C_FTYPE, (uint64_t)ref->i, k);
    return k;
}

/* A Method reference's class and name (Java's class with '/'), "" when the pools lack them. */
static void method_parts(struct conv *c, const struct fx_jfr_value *ref, char *cls, char *meth,
                         struct fx_errbuf *eb)
{
    const struct layout *l = &c->l;
    struct fx_jfr_value m[16], k[16];
    cls[0] = meth[0] = '\0';
    /* a chunk whose metadata lacks a field reads as without it (-1: no index; fuzz.jfr_convert) */
    int need = l->m_type > l->m_name ? l->m_type : l->m_name;
    if (need < 0 || fx_jfr_profile_deref(c, ref, m, need, eb) != FX_OK)
        return;
    if (l->m_type >= 0 && l->c_name >= 0 &&
        fx_jfr_profile_deref(c, &m[l->m_type], k, l->c_name, eb) == FX_OK)
        fx_jfr_profile_symbol(c, &k[l->c_name], cls, eb);
    if (l->m_name >= 0)
        fx_jfr_profile_symbol(c, &m[l->m_name], meth, eb);
}

/* A native library's function (K_LIB): named as its symbol, the library as its resource; *sub
 * (category Native) told by the library or the symbol as fxagent's own native frames are. */
static int lib_func(struct conv *c, const struct fx_jfr_value *ref, uint8_t *sub, fx_func_id *out,
                    struct fx_errbuf *eb)
{
    uint64_t v64;
    if (fx_jfr_map_get(&c->cache, C_LMETHOD, (uint64_t)ref->i, &v64)) {
        *out = (fx_func_id){(uint32_t)v64};
        if (*sub == FX_NATIVE_OTHER || *sub == FX_NATIVE_LIBJVM)
            *sub = (uint8_t)(v64 >> 32);
        return FX_OK;
    }
    char lib[STR_CAP], sym[STR_CAP];
    method_parts(c, ref, lib, sym, eb);
    uint8_t s = *sub;
    if (!strncmp(lib, "libjvm", 6))
        s = FX_NATIVE_LIBJVM;
    else if (!strncmp(lib, "libc.", 5) || !strncmp(lib, "libc-", 5) || !strncmp(lib, "ld-", 3) ||
             !strcmp(lib, "vdso") || !strncmp(lib, "libpthread", 10))
        s = FX_NATIVE_LIBC;
    else if (!strncmp(sym, "Java_", 5))
        s = FX_NATIVE_JNI;
    else if (lib[0])
        s = FX_NATIVE_OTHER;
    struct fx_func_key fk = {
            .name = FX_STR_NONE, .resource = FX_STR_NONE, .source = FX_STR_NONE, .line = -1};
    int rc = fx_profile_cstring(c->p, sym[0] ? sym : "[unknown symbol]", &fk.name);
    if (rc == FX_OK && lib[0])
        rc = fx_profile_cstring(c->p, lib, &fk.resource);
    if (rc == FX_OK)
        rc = fx_profile_func(c->p, &fk, out);
    if (rc == FX_OK)
        rc = fx_jfr_map_put(&c->cache, C_LMETHOD, (uint64_t)ref->i, out->i | (uint64_t)s << 32);
    if (*sub == FX_NATIVE_OTHER || *sub == FX_NATIVE_LIBJVM)
        *sub = s;
    return rc;
}

const char *fx_jfr_profile_method(struct conv *c, const struct fx_jfr_value *ref,
                                  struct fx_errbuf *eb)
{
    char cls[STR_CAP], meth[STR_CAP];
    method_parts(c, ref, cls, meth, eb);
    if (!cls[0])
        snprintf(cls, sizeof cls, "[unknown class]");
    if (!meth[0])
        snprintf(meth, sizeof meth, "[unknown method]");
    for (char *s = cls; *s; s++)
        if (*s == '/')
            *s = '.';
    size_t lc = strnlen(cls, STR_CAP - 2), lm = strnlen(meth, STR_CAP - 2 - lc);
    memcpy(c->buf, cls, lc);
    c->buf[lc] = '.';
    memcpy(c->buf + lc + 1, meth, lm);
    c->buf[lc + 1 + lm] = '\0';
    return c->buf;
}

/* "pkg.Class.method" of a Method reference. */
static int func_of(struct conv *c, const struct fx_jfr_value *ref, fx_func_id *out,
                   struct fx_errbuf *eb)
{
    uint64_t v64;
    if (fx_jfr_map_get(&c->cache, C_METHOD, (uint64_t)ref->i, &v64)) {
        *out = (fx_func_id){(uint32_t)v64};
        return FX_OK;
    }
    fx_str_id name;
    int rc = fx_profile_cstring(c->p, fx_jfr_profile_method(c, ref, eb), &name);
    if (rc != FX_OK)
        return rc;
    struct fx_func_key fk = {.name = name,
                             .resource = FX_STR_NONE,
                             .source = FX_STR_NONE,
                             .line = -1,
                             .is_java = true};
    rc = fx_profile_func(c->p, &fk, out);
    if (rc == FX_OK)
        rc = fx_jfr_map_put(&c->cache, C_METHOD, (uint64_t)ref->i, out->i);
    return rc;
}

int fx_jfr_profile_label_frame(struct fx_profile *p, const char *label, uint8_t cat, uint8_t sub,
                               fx_frame_id *out)
{
    fx_str_id name;
    fx_func_id f;
    int rc = fx_profile_cstring(p, label, &name);
    if (rc != FX_OK)
        return rc;
    struct fx_func_key k = {
            .name = name, .resource = FX_STR_NONE, .source = FX_STR_NONE, .line = -1};
    if ((rc = fx_profile_func(p, &k, &f)) != FX_OK)
        return rc;
    struct fx_frame_key fk = {.func = f, .line = -1, .category = cat, .subcategory = sub};
    return fx_profile_frame(p, &fk, out);
}

/* The frames of a StackTrace, root first into c->frames; *n their count. */
static int stack_frames(struct conv *c, const struct fx_jfr_value *ref, size_t *n,
                        struct fx_errbuf *eb)
{
    const struct layout *l = &c->l;
    struct fx_jfr_value st[16];
    *n = 0;
    int need = l->st_frames > l->st_truncated ? l->st_frames : l->st_truncated;
    int rc = fx_jfr_profile_deref(c, ref, st, need, eb);
    if (rc != FX_OK || l->st_frames < 0 || st[l->st_frames].kind != FX_JFR_ARRAY)
        return FX_ENOTFOUND;
    const struct fx_jfr_value *arr = &st[l->st_frames];
    size_t total = (size_t)arr->i + 1;
    if (fx_grow(&c->frames, &c->cap_frames, 0, total, sizeof *c->frames, 64))
        return FX_ENOMEM;
    if (l->st_truncated >= 0 && st[l->st_truncated].i) {
        c->truncated++;
        if ((rc = fx_jfr_profile_label_frame(c->p, TRUNCATED_ROOT, FX_CAT_OTHER, 0,
                                             &c->frames[0])) != FX_OK)
            return rc;
        *n = 1;
    }
    /* JFR lists the leaf first: fill from the end so the root comes first */
    size_t at = *n + (size_t)arr->i;
    const uint8_t *cur = NULL;
    uint32_t idx;
    struct fx_jfr_value fr[16] = {{0}}; /* fields an element's class lacks read as none */
    int nf = l->f_method > l->f_line ? l->f_method : l->f_line;
    nf = (l->f_type > nf ? l->f_type : nf) + 1;
    if (l->f_method < 0 || nf > 16)
        return FX_EINVAL;
    /* each frame decoded in one pass over its bytes, only the fields used */
    while ((rc = fx_jfr_array_fields(c->r, arr, &cur, &idx, fr, (uint32_t)nf, eb)) == 1) {
        /* a frame is its method, type and line: the chunk's same three are the same frame,
         * found by one lookup (the namespace's top bit, the type's key and the line) */
        int64_t ty = l->f_type < 0 ? 255 : fr[l->f_type].kind == FX_JFR_REF ? fr[l->f_type].i : -1;
        int64_t ln = l->f_line >= 0 && fr[l->f_line].i > 0 ? fr[l->f_line].i : 0;
        /* (all ones is the map's empty slot: a line of 2^23 - 1 goes the long way) */
        bool cacheable =
                fr[l->f_method].kind == FX_JFR_REF && ty >= 0 && ty <= 255 && ln < (1 << 23) - 1;
        uint32_t fkey = 1u << 31 | (uint32_t)ty << 23 | (uint32_t)ln;
        uint64_t v64;
        if (cacheable && fx_jfr_map_get(&c->cache, fkey, (uint64_t)fr[l->f_method].i, &v64)) {
            c->frames[--at] = (fx_frame_id){(uint32_t)v64};
            continue;
        }
        uint32_t k = l->f_type >= 0 ? fx_jfr_profile_frame_kind(c, &fr[l->f_type], eb)
                                    : FX_CAT_JAVA << 8;
        struct fx_frame_key fk = {
                .line = -1, .category = (uint8_t)(k >> 8), .subcategory = (uint8_t)k};
        rc = k & K_LIB ? lib_func(c, &fr[l->f_method], &fk.subcategory, &fk.func, eb)
                       : func_of(c, &fr[l->f_method], &fk.func, eb);
        if (rc != FX_OK)
            return rc;
        if (!(k & K_LIB) && l->f_line >= 0 && fr[l->f_line].i > 0)
            fk.line = (int32_t)fr[l->f_line].i;
        if ((rc = fx_profile_frame(c->p, &fk, &c->frames[--at])) != FX_OK)
            return rc;
        if (cacheable && (rc = fx_jfr_map_put(&c->cache, fkey, (uint64_t)fr[l->f_method].i,
                                              c->frames[at].i)) != FX_OK)
            return rc;
    }
    if (rc < 0) /* a frame the pools lack: corrupt, as before */
        return rc == FX_ENOTFOUND ? FX_EINVAL : rc;
    *n += (size_t)arr->i;
    return FX_OK;
}

/* The model's node of frame under prefix, through the nodes' memo. */
static int node(struct conv *c, fx_stack_id prefix, fx_frame_id frame, fx_stack_id *out)
{
    uint64_t h = ((uint64_t)prefix.i << 32 | frame.i) * 0x9E3779B97F4A7C15ull;
    struct node_memo *m = c->nmemo ? &c->nmemo[h >> (64 - NMEMO_BITS)] : NULL;
    if (m && m->node1 && m->prefix == prefix.i && m->frame == frame.i) {
        *out = (fx_stack_id){m->node1 - 1};
        return FX_OK;
    }
    int rc = fx_profile_stack(c->p, prefix, frame, out);
    if (rc == FX_OK && m && out->i != UINT32_MAX)
        *m = (struct node_memo){prefix.i, frame.i, out->i + 1};
    return rc;
}

static struct stack_memo *memo_slot(struct conv *c, int64_t ref)
{
    return c->smemo ? &c->smemo[(uint64_t)ref * 0x9E3779B97F4A7C15ull >> (64 - SMEMO_BITS)] : NULL;
}

bool fx_jfr_profile_stack_known(struct conv *c, const struct fx_jfr_value *ref, fx_stack_id *out)
{
    if (ref->kind != FX_JFR_REF)
        return false;
    struct stack_memo *m = memo_slot(c, ref->i);
    if (m && m->gen == c->gen && m->ref == ref->i) {
        *out = (fx_stack_id){m->id};
        return true;
    }
    uint64_t v64;
    if (!fx_jfr_map_get(&c->cache, C_STACK, (uint64_t)ref->i, &v64))
        return false;
    *out = (fx_stack_id){(uint32_t)v64};
    if (m)
        *m = (struct stack_memo){ref->i, out->i, c->gen};
    return true;
}

int fx_jfr_profile_stack(struct conv *c, const struct fx_jfr_value *ref, bool native,
                         fx_stack_id *out, struct fx_errbuf *eb)
{
    uint64_t v64;
    uint32_t ns = native ? C_NSTACK : C_STACK;
    if (!native && fx_jfr_profile_stack_known(c, ref, out))
        return FX_OK;
    if (native && ref->kind == FX_JFR_REF &&
        fx_jfr_map_get(&c->cache, ns, (uint64_t)ref->i, &v64)) {
        *out = (fx_stack_id){(uint32_t)v64};
        return FX_OK;
    }
    bool trunc;
    int rc;
    struct stack_memo *m = native ? NULL : memo_slot(c, ref->i);
    if (!native && ref->kind == FX_JFR_REF && fx_jfr_rawstack_get(c, ref, out, &trunc)) {
        c->truncated += trunc; /* counted at each chunk's stack, as when resolved */
        rc = fx_jfr_map_put(&c->cache, ns, (uint64_t)ref->i, out->i);
        if (rc == FX_OK && m)
            *m = (struct stack_memo){ref->i, out->i, c->gen};
        return rc;
    }
    size_t n = 0;
    uint64_t truncated_before = c->truncated;
    rc = ref->kind == FX_JFR_REF ? stack_frames(c, ref, &n, eb) : FX_ENOTFOUND;
    bool none = rc == FX_ENOTFOUND || (rc == FX_OK && n == 0);
    if (none) {
        c->no_stack++;
        rc = fx_profile_label_stack(c->p, NO_STACK, FX_CAT_OTHER, out);
        n = 0;
    } else if (rc != FX_OK) {
        return rc;
    } else {
        /* the root frames it shares with the stack resolved before (its thread's previous
         * event, often) are that stack's nodes: no lookup for them */
        size_t k = 0;
        while (k < n && k < c->n_path && c->path[k].frame == c->frames[k].i)
            k++;
        fx_stack_id s = k ? (fx_stack_id){c->path[k - 1].node} : FX_STACK_NONE;
        if (fx_grow(&c->path, &c->cap_path, 0, n, sizeof *c->path, 64))
            return FX_ENOMEM;
        c->n_path = 0; /* until the path is whole */
        for (size_t i = k; i < n && rc == FX_OK; i++) {
            rc = node(c, s, c->frames[i], &s);
            c->path[i] = (struct path_node){c->frames[i].i, s.i};
        }
        c->n_path = rc == FX_OK ? n : 0;
        *out = s;
        if (rc == FX_OK && !native)
            rc = fx_jfr_rawstack_put(c, ref, s, c->truncated != truncated_before);
    }
    if (rc == FX_OK && native) {
        fx_frame_id leaf;
        rc = fx_jfr_profile_label_frame(c->p, NATIVE_LEAF, FX_CAT_IDLE, FX_IDLE_NATIVE, &leaf);
        if (rc == FX_OK)
            rc = fx_profile_stack(c->p, *out, leaf, out);
    }
    /* not a stack without frames: each of its events is counted in no_stack, and a marker
     * reads that count to leave its cause empty */
    if (rc == FX_OK && ref->kind == FX_JFR_REF && !none)
        rc = fx_jfr_map_put(&c->cache, ns, (uint64_t)ref->i, out->i);
    if (rc == FX_OK && m && ref->kind == FX_JFR_REF && !none)
        *m = (struct stack_memo){ref->i, out->i, c->gen};
    return rc;
}

void fx_jfr_resolve_chunk(struct conv *c)
{
    static const struct fx_jfr_names names = {fx_jfr_profile_method, fx_jfr_profile_frame_kind};
    fx_jfr_rawstack_chunk(c, &names);
}

void fx_jfr_resolve_free(struct conv *c)
{
    fx_jfr_rawstack_free(c);
}
