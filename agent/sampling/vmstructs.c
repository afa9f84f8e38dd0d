/* SPDX-License-Identifier: Apache-2.0 */
/* HotSpot's exported type table (gHotSpotVMStructs and gHotSpotVMTypes, the Serviceability
 * Agent's map of field offsets and type sizes), read once for what fxagent needs:
 *  - Thread::_osthread and OSThread::_thread_id: the kernel tid of a thread fxagent did not see
 *    start; JavaThread::_stack_base/_stack_size: its stack;
 *  - the code heaps' segment maps and the CodeBlob/nmethod fields that give an nmethod's
 *    verified entry, frame-complete offset, compile id and OSR bci (stack recovery, issue 20);
 *  - JavaThread::_monitor_owner_id (JDK 24+): the java.lang.Thread id of the thread the carrier
 *    runs, its own or the mounted virtual thread's (issue 22: mount tracking without events);
 *  - any other field, static or type size by name (fx_vmstructs_field and fx_vmstructs_size:
 *    a walk of the table per call, for uses that look a few names up once, compile_task.c).
 * Nothing here is written. Every read is of a live JVM structure outside signal context; a
 * missing symbol or field only disables the one use that needs it. */
#include "internal.h"
#include "recover_pcdesc.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Field offsets (-1: absent) and, for fields whose width changed between JDKs, their size. */
static struct {
    long osthread, tid, stack_base, stack_size;
    long code_begin, code_offset;  /* CodeBlob: JDK 17 address / JDK 21+ int offset */
    long frame_complete, fc_size;  /* CodeBlob::_frame_complete_offset (int or int16_t) */
    long vep, vep_offset;          /* nmethod: JDK 17 address / JDK 21+ u2 offset */
    long compile_id, entry_bci;    /* nmethod */
    long heap_memory, heap_segmap; /* CodeHeap VirtualSpaces */
    long heap_log2_seg, vs_low, vs_high;
    long ga_len, ga_data;          /* GrowableArray */
    const void *heaps;             /* &CodeCache::_heaps */
    long heap_block_size;          /* sizeof(HeapBlock) */
    long thread_state;             /* JavaThread::_thread_state (issue 22: is a carrier blocked) */
    long anchor, last_sp, last_pc; /* JavaThread::_anchor, JavaFrameAnchor fields */
    long last_fp;                  /* JavaFrameAnchor::_last_Java_fp (x86: frame types) */
    long frame_size;               /* CodeBlob::_frame_size (int, in words) */
    long owner_id;                 /* JavaThread::_monitor_owner_id (int64_t, JDK 24+) */
    long java_thread_size;         /* sizeof(JavaThread), from the types table */
    long comp_level, level_size;   /* nmethod::_comp_level: int (JDK 17), CompLevel (s1) later */
    const char *level_type;        /* its type's name, sized from the types table */
    long osr_entry;                /* nmethod::_osr_entry_point (address) */
    long stub_offset;              /* nmethod::_stub_offset (int, from the blob) */
    long block_len_width;          /* HeapBlock::Header::_length: size_t (17), uint32_t (25) */
} vs = {-1, -1,   -1, -1, -1, -1, -1, 0,  -1, -1, -1, -1, -1, -1,   -1, -1, -1, -1,
        -1, NULL, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0,  NULL, -1, -1, 0};

static uint64_t sym_u64(const char *name, bool *ok)
{
    const uint64_t *p = dlsym(RTLD_DEFAULT, name);
    if (p == NULL)
        *ok = false;
    return p != NULL ? *p : 0;
}

static bool is(const char *a, const char *b)
{
    return strcmp(a, b) == 0;
}

/* width of a field from its type string: 2 for 16-bit types, 4 for int */
static long width(const char *type)
{
    if (type == NULL)
        return 0;
    if (is(type, "int16_t") || is(type, "u2") || is(type, "uint16_t") || is(type, "short"))
        return 2;
    if (is(type, "int") || is(type, "int32_t") || is(type, "jint"))
        return 4;
    return 0;
}

/* The fields of the not-in-Java recovery (issue 26, recover_anchor.c). */
static void match_anchor(const char *type, const char *field, const char *ftype, long o)
{
    if (is(type, "JavaThread") && is(field, "_anchor"))
        vs.anchor = o;
    else if (is(type, "JavaFrameAnchor") && is(field, "_last_Java_sp"))
        vs.last_sp = o;
    else if (is(type, "JavaFrameAnchor") && is(field, "_last_Java_pc"))
        vs.last_pc = o;
    else if (is(type, "JavaFrameAnchor") && is(field, "_last_Java_fp"))
        vs.last_fp = o;
    else if (is(type, "CodeBlob") && is(field, "_frame_size") && width(ftype) == 4)
        vs.frame_size = o;
    else if (is(type, "JavaThread") && is(field, "_monitor_owner_id") &&
             (is(ftype, "int64_t") || is(ftype, "jlong")))
        vs.owner_id = o;
}

static void match(const char *type, const char *field, const char *ftype, uint64_t off)
{
    long o = (long)off;
    if (is(field, "_osthread") && (is(type, "Thread") || is(type, "JavaThread")))
        vs.osthread = o;
    else if (is(type, "OSThread") && is(field, "_thread_id"))
        vs.tid = o;
    else if ((is(type, "Thread") || is(type, "JavaThread")) && is(field, "_stack_base"))
        vs.stack_base = o;
    else if ((is(type, "Thread") || is(type, "JavaThread")) && is(field, "_stack_size"))
        vs.stack_size = o;
    else if (is(type, "CodeBlob") && is(field, "_code_begin"))
        vs.code_begin = o;
    else if (is(type, "CodeBlob") && is(field, "_code_offset") && width(ftype) == 4)
        vs.code_offset = o;
    else if (is(type, "CodeBlob") && is(field, "_frame_complete_offset") && width(ftype) > 0)
        vs.frame_complete = o, vs.fc_size = width(ftype);
    else if (is(type, "nmethod") && is(field, "_verified_entry_point"))
        vs.vep = o;
    else if (is(type, "nmethod") && is(field, "_verified_entry_offset") && width(ftype) == 2)
        vs.vep_offset = o;
    else if (is(type, "nmethod") && is(field, "_compile_id") && width(ftype) == 4)
        vs.compile_id = o;
    else if (is(type, "nmethod") && is(field, "_entry_bci") && width(ftype) == 4)
        vs.entry_bci = o;
    else if (is(type, "nmethod") && is(field, "_osr_entry_point"))
        vs.osr_entry = o;
    else if (is(type, "nmethod") && is(field, "_stub_offset") && width(ftype) == 4)
        vs.stub_offset = o;
    else if (is(type, "HeapBlock::Header") && is(field, "_length")) /* its type, exported */
        vs.block_len_width = ftype == NULL           ? 0
                             : is(ftype, "size_t")   ? 8
                             : is(ftype, "uint32_t") ? 4
                                                     : 0;
    else if (is(type, "CodeHeap") && is(field, "_memory"))
        vs.heap_memory = o;
    else if (is(type, "CodeHeap") && is(field, "_segmap"))
        vs.heap_segmap = o;
    else if (is(type, "CodeHeap") && is(field, "_log2_segment_size") && width(ftype) == 4)
        vs.heap_log2_seg = o;
    else if (is(type, "VirtualSpace") && is(field, "_low"))
        vs.vs_low = o;
    else if (is(type, "VirtualSpace") && is(field, "_high"))
        vs.vs_high = o;
    else if (is(type, "GrowableArrayBase") && is(field, "_len") && width(ftype) == 4)
        vs.ga_len = o;
    else if (is(type, "GrowableArray<int>") && is(field, "_data"))
        vs.ga_data = o;
    else if (is(type, "JavaThread") && is(field, "_thread_state") && width(ftype) != 2)
        vs.thread_state = o;
    else if (is(type, "nmethod") && is(field, "_comp_level") && ftype != NULL) {
        vs.comp_level = o; /* its width comes from the types table (load_types) */
        vs.level_type = ftype;
    } else
        match_anchor(type, field, ftype, o);
}

/* sizeof(want) by gHotSpotVMTypes, or -1. */
static long type_size(const char *want)
{
    bool ok = true;
    const char *const *base = dlsym(RTLD_DEFAULT, "gHotSpotVMTypes");
    uint64_t name_off = sym_u64("gHotSpotVMTypeEntryTypeNameOffset", &ok);
    uint64_t size_off = sym_u64("gHotSpotVMTypeEntrySizeOffset", &ok);
    uint64_t stride = sym_u64("gHotSpotVMTypeEntryArrayStride", &ok);
    if (!ok || want == NULL || base == NULL || *base == NULL || stride == 0)
        return -1;
    for (const char *e = *base;; e += stride) {
        const char *t = *(const char *const *)(e + name_off);
        if (t == NULL)
            return -1;
        if (is(t, want))
            return (long)*(const uint64_t *)(e + size_off);
    }
}

static void load_types(void)
{
    vs.heap_block_size = type_size("HeapBlock");
    vs.java_thread_size = type_size("JavaThread");
    if (vs.level_type != NULL)
        vs.level_size = type_size(vs.level_type);
}

/* Where each entry of gHotSpotVMStructs keeps what, as the JVM exports it. */
struct layout {
    const char *first; /* the first entry */
    uint64_t type, field, ftype, is_static, offset, addr, stride;
};

static bool layout(struct layout *l)
{
    bool ok = true;
    const char *const *base = dlsym(RTLD_DEFAULT, "gHotSpotVMStructs");
    l->type = sym_u64("gHotSpotVMStructEntryTypeNameOffset", &ok);
    l->field = sym_u64("gHotSpotVMStructEntryFieldNameOffset", &ok);
    l->ftype = sym_u64("gHotSpotVMStructEntryTypeStringOffset", &ok);
    l->is_static = sym_u64("gHotSpotVMStructEntryIsStaticOffset", &ok);
    l->offset = sym_u64("gHotSpotVMStructEntryOffsetOffset", &ok);
    l->addr = sym_u64("gHotSpotVMStructEntryAddressOffset", &ok);
    l->stride = sym_u64("gHotSpotVMStructEntryArrayStride", &ok);
    l->first = base != NULL ? *base : NULL;
    return ok && l->first != NULL && l->stride != 0;
}

static const char *str_at(const char *e, uint64_t off)
{
    return *(const char *const *)(e + off);
}

static void pcdesc_publish(void);

static void load(void)
{
    struct layout l;
    if (!layout(&l))
        return;
    for (const char *e = l.first; str_at(e, l.type) != NULL; e += l.stride) {
        const char *type = str_at(e, l.type), *field = str_at(e, l.field);
        if (field == NULL)
            continue;
        if (*(const int32_t *)(e + l.is_static) != 0) {
            if (is(type, "CodeCache") && is(field, "_heaps"))
                vs.heaps = *(const void *const *)(e + l.addr);
            continue;
        }
        match(type, field, str_at(e, l.ftype), *(const uint64_t *)(e + l.offset));
    }
    load_types();
    pcdesc_publish();
}

bool fx_vmstructs_available(void)
{
    pthread_once(&once, load);
    return vs.osthread >= 0 && vs.tid >= 0;
}

pid_t fx_vmstructs_tid_of(const void *java_thread)
{
    if (java_thread == NULL || !fx_vmstructs_available())
        return -1;
    const char *os = *(const char *const *)((const char *)java_thread + vs.osthread);
    if (os == NULL)
        return -1;
    return *(const pid_t *)(os + vs.tid);
}

long fx_vmstructs_thread_state_offset(void)
{
    pthread_once(&once, load);
    return vs.thread_state;
}

bool fx_vmstructs_stack_of(const void *java_thread, uintptr_t *lo, uintptr_t *hi)
{
    pthread_once(&once, load);
    if (java_thread == NULL || vs.stack_base < 0 || vs.stack_size < 0)
        return false;
    uintptr_t top = *(const uintptr_t *)((const char *)java_thread + vs.stack_base);
    uintptr_t size = *(const uintptr_t *)((const char *)java_thread + vs.stack_size);
    if (top == 0 || size == 0 || size > top)
        return false;
    *lo = top - size;
    *hi = top;
    return true;
}

static long read_width(const char *p, long w)
{
    if (w == 2)
        return *(const int16_t *)p;
    return *(const int32_t *)p;
}

static uintptr_t code_begin_of(const char *blob)
{
    if (vs.code_begin >= 0)
        return *(const uintptr_t *)(blob + vs.code_begin);
    return (uintptr_t)blob + (uintptr_t)(intptr_t) * (const int32_t *)(blob + vs.code_offset);
}

/* The CodeBlob whose block holds addr, by the code heap's segment map (HotSpot
 * CodeHeap::find_blob's walk: each map byte says how many segments back the block starts,
 * 0 at its start, 0xFF for free segments). */
static const char *blob_at(uintptr_t addr)
{
    const char *arr = *(const char *const *)vs.heaps;
    if (arr == NULL)
        return NULL;
    int n = *(const int32_t *)(arr + vs.ga_len);
    const char *const *data = *(const char *const *const *)(arr + vs.ga_data);
    for (int i = 0; i < n && data != NULL; i++) {
        const char *h = data[i];
        if (h == NULL)
            continue;
        uintptr_t low = *(const uintptr_t *)(h + vs.heap_memory + vs.vs_low);
        uintptr_t high = *(const uintptr_t *)(h + vs.heap_memory + vs.vs_high);
        if (addr < low || addr >= high)
            continue;
        const uint8_t *seg = *(const uint8_t *const *)(h + vs.heap_segmap + vs.vs_low);
        int shift = *(const int32_t *)(h + vs.heap_log2_seg);
        if (seg == NULL || shift <= 0 || shift > 20)
            return NULL;
        size_t idx = (addr - low) >> shift;
        for (unsigned hops = 0; seg[idx] != 0; hops++) {
            if (seg[idx] == 0xFF || seg[idx] > idx || hops > 1000000)
                return NULL;
            idx -= seg[idx];
        }
        return (const char *)(low + (idx << shift)) + vs.heap_block_size;
    }
    return NULL;
}

/* The code heaps and a blob's code begin can be found (blob_at, code_begin_of). */
static bool heaps_known(void)
{
    return vs.heaps != NULL && vs.ga_len >= 0 && vs.ga_data >= 0 && vs.heap_memory >= 0 &&
           vs.heap_segmap >= 0 && vs.heap_log2_seg >= 0 && vs.vs_low >= 0 && vs.vs_high >= 0 &&
           vs.heap_block_size > 0 && (vs.code_begin >= 0 || vs.code_offset >= 0);
}

bool fx_vmstructs_nmethod(uintptr_t code_addr, struct fx_nmethod_layout *out)
{
    pthread_once(&once, load);
    if (!heaps_known() || vs.frame_complete < 0 || (vs.vep < 0 && vs.vep_offset < 0) ||
        vs.compile_id < 0 || vs.entry_bci < 0)
        return false;
    const char *blob = blob_at(code_addr);
    if (blob == NULL || code_begin_of(blob) != code_addr)
        return false; /* not the blob JVMTI described: nothing read from it is trusted */
    uintptr_t vep = vs.vep >= 0 ? *(const uintptr_t *)(blob + vs.vep)
                                : code_addr + *(const uint16_t *)(blob + vs.vep_offset);
    out->blob = (uintptr_t)blob;
    out->verified = vep;
    out->frame_complete = read_width(blob + vs.frame_complete, vs.fc_size);
    out->compile_id = *(const int32_t *)(blob + vs.compile_id);
    out->entry_bci = *(const int32_t *)(blob + vs.entry_bci);
    out->osr_entry = vs.osr_entry >= 0 ? *(const uintptr_t *)(blob + vs.osr_entry) : 0;
    out->compile_id_offset = vs.compile_id;
    out->frame_words = vs.frame_size >= 0 ? *(const int32_t *)(blob + vs.frame_size) : -1;
    out->stubs =
            vs.stub_offset >= 0 ? (uintptr_t)blob + *(const int32_t *)(blob + vs.stub_offset) : 0;
    out->level = -1;
    if (vs.comp_level >= 0 && vs.level_size == 1)
        out->level = *(const int8_t *)(blob + vs.comp_level);
    else if (vs.comp_level >= 0 && (vs.level_size == 2 || vs.level_size == 4))
        out->level = (int32_t)read_width(blob + vs.comp_level, vs.level_size);
    return true;
}

void fx_vmstructs_publish_anchor(intptr_t env_offset)
{
    pthread_once(&once, load);
    if (env_offset <= 0 || vs.anchor < 0 || vs.last_sp < 0 || vs.last_pc < 0)
        return;
    __atomic_store_n(&fx_sig.anchor_pc_off, vs.anchor + vs.last_pc - (long)env_offset,
                     __ATOMIC_RELAXED);
    __atomic_store_n(&fx_sig.anchor_sp_off, vs.anchor + vs.last_sp - (long)env_offset,
                     __ATOMIC_RELAXED);
    if (vs.last_fp >= 0)
        __atomic_store_n(&fx_sig.anchor_fp_off, vs.anchor + vs.last_fp - (long)env_offset,
                         __ATOMIC_RELAXED);
}

int32_t fx_vmstructs_stub_frame_words(uintptr_t code_addr, int32_t *complete)
{
    pthread_once(&once, load);
    *complete = -1;
    if (!heaps_known() || vs.frame_size < 0)
        return -1;
    const char *blob = blob_at(code_addr);
    if (blob == NULL || code_begin_of(blob) != code_addr)
        return -1;
    if (vs.frame_complete >= 0) /* CodeOffsets::frame_never_safe (-1) stays -1 */
        *complete = (int32_t)read_width(blob + vs.frame_complete, vs.fc_size);
    return *(const int32_t *)(blob + vs.frame_size);
}

/* The larger of a and b + width. */
static long reach(long a, long b, long width)
{
    return b + width > a ? b + width : a;
}

/* The code heap layout the handler reads (codeheap.h): every field exported, every read
 * bounded by the buffers of codeheap_sig.c, else false. */
static bool codeheap_layout(struct fx_codeheap_layout *o)
{
    long hb_header = fx_vmstructs_field("HeapBlock", "_header");
    long len = fx_vmstructs_field("HeapBlock::Header", "_length");
    long used = fx_vmstructs_field("HeapBlock::Header", "_used");
    long name = fx_vmstructs_field("CodeBlob", "_name");
    long code_end = fx_vmstructs_field("CodeBlob", "_code_end");
    long data_off = fx_vmstructs_field("CodeBlob", "_data_offset");
    long method = fx_vmstructs_field("nmethod", "_method");
    long state = fx_vmstructs_field("nmethod", "_state");
    long stub = vs.stub_offset;
    bool jdk17 = fx_vmstructs_size("CompiledMethod") > 0; /* its states: 2 is not_entrant */
    const uintptr_t *lo = fx_vmstructs_static("CodeCache", "_low_bound");
    const uintptr_t *hi = fx_vmstructs_static("CodeCache", "_high_bound");
    if (method < 0)
        method = fx_vmstructs_field("CompiledMethod", "_method"); /* JDK 17 */
    if (lo == NULL || hi == NULL || *lo == 0 || *hi <= *lo || !heaps_known() || hb_header != 0 ||
        len != 0 || vs.block_len_width == 0 || used < vs.block_len_width ||
        used >= vs.heap_block_size || vs.heap_block_size > 64 || name < 0 || method < 0 ||
        (code_end < 0 && data_off < 0) || vs.frame_complete < 0 || vs.fc_size <= 0 ||
        vs.frame_size < 0 || (vs.vep < 0 && vs.vep_offset < 0) || vs.compile_id < 0 ||
        vs.entry_bci < 0 || state < 0 || stub < 0)
        return false;
    long level_width =
            vs.level_size == 1 || vs.level_size == 2 || vs.level_size == 4 ? vs.level_size : 0;
    long hdr = reach(0, name, 8);
    hdr = reach(hdr, vs.code_begin >= 0 ? vs.code_begin : vs.code_offset, 8);
    hdr = reach(hdr, code_end >= 0 ? code_end : data_off, 8);
    hdr = reach(reach(hdr, vs.frame_complete, vs.fc_size), vs.frame_size, 4);
    hdr = reach(hdr, vs.vep >= 0 ? vs.vep : vs.vep_offset, 8);
    hdr = reach(reach(hdr, vs.compile_id, 4), vs.entry_bci, 4);
    hdr = reach(hdr, vs.osr_entry, 8);
    hdr = reach(reach(hdr, vs.comp_level, level_width), method, 8);
    hdr = reach(reach(hdr, state, 1), stub, 4);
    /* the handler loads these words whole (codeheap_sig.c): 8-aligned in the CodeHeap */
    if (hdr > FX_CODEHEAP_HEADER_MAX || ((vs.heap_memory | vs.heap_segmap | vs.vs_low) & 7) ||
        (vs.vs_high & 7) || (vs.heap_log2_seg & 3))
        return false;
    *o = (struct fx_codeheap_layout){.pid = (int32_t)getpid(),
                                     .lo = *lo,
                                     .hi = *hi,
                                     .mem_low = (int32_t)(vs.heap_memory + vs.vs_low),
                                     .mem_high = (int32_t)(vs.heap_memory + vs.vs_high),
                                     .seg_low = (int32_t)(vs.heap_segmap + vs.vs_low),
                                     .seg_high = (int32_t)(vs.heap_segmap + vs.vs_high),
                                     .log2_seg = (int32_t)vs.heap_log2_seg,
                                     .block_size = (int32_t)vs.heap_block_size,
                                     .block_len = (int32_t)len,
                                     .len_width = (int32_t)vs.block_len_width,
                                     .block_used = (int32_t)used,
                                     .name = (int32_t)name,
                                     .code_begin = (int32_t)vs.code_begin,
                                     .code_offset = (int32_t)vs.code_offset,
                                     .code_end = (int32_t)code_end,
                                     .data_offset = (int32_t)data_off,
                                     .frame_complete = (int32_t)vs.frame_complete,
                                     .fc_width = (int32_t)vs.fc_size,
                                     .frame_size = (int32_t)vs.frame_size,
                                     .vep = (int32_t)vs.vep,
                                     .vep_offset = (int32_t)vs.vep_offset,
                                     .compile_id = (int32_t)vs.compile_id,
                                     .entry_bci = (int32_t)vs.entry_bci,
                                     .osr_entry = (int32_t)vs.osr_entry,
                                     .comp_level = level_width > 0 ? (int32_t)vs.comp_level : -1,
                                     .level_width = (int32_t)level_width,
                                     .method = (int32_t)method,
                                     .state = (int32_t)state,
                                     .live_max = jdk17 ? 2 : 1,
                                     .stub_offset = (int32_t)stub,
                                     .header = (int32_t)((hdr + 7) & ~7L),
                                     .reread =
                                             (int32_t)reach(reach(0, vs.compile_id, 4), state, 1)};
    /* the heaps, fixed since CodeCache::initialize (CodeCache::add_heap's only caller) */
    const char *arr = *(const char *const *)vs.heaps;
    int n = arr != NULL ? *(const int32_t *)(arr + vs.ga_len) : 0;
    const uintptr_t *data = arr != NULL ? *(const uintptr_t *const *)(arr + vs.ga_data) : NULL;
    for (int i = 0; i < n && i < FX_CODEHEAP_HEAPS_MAX && data != NULL; i++)
        if (data[i] != 0 && (data[i] & 7) == 0)
            o->heap[o->n_heaps++] = data[i];
    return o->n_heaps > 0 && o->n_heaps == n;
}

void fx_codeheap_publish(void)
{
    pthread_once(&once, load);
    struct fx_codeheap_layout l;
    if (__atomic_load_n(&fx_sig.codeheap.pid, __ATOMIC_ACQUIRE) != 0 || !codeheap_layout(&l))
        return; /* published at an earlier start: the layout does not change */
    int32_t pid = l.pid;
    l.pid = 0;
    fx_sig.codeheap = l;
    __atomic_store_n(&fx_sig.codeheap.pid, pid, __ATOMIC_RELEASE);
}

/* Checked here, not in the handler: the field lies inside the JavaThread the types table sizes,
 * 8-byte aligned (one load, never torn); the handler reads it at this offset from its own
 * JNIEnv, in its own live JavaThread. */
long fx_vmstructs_owner_id_env_offset(long env)
{
    pthread_once(&once, load);
    if (env <= 0 || vs.owner_id <= 0 || vs.owner_id % 8 != 0 || vs.java_thread_size <= 0 ||
        vs.owner_id + 8 > vs.java_thread_size || env >= vs.java_thread_size)
        return 0;
    return vs.owner_id - env;
}

long fx_vmstructs_owner_id_offset(void)
{
    pthread_once(&once, load);
    return vs.owner_id;
}

/* One walk of the table for type::field: its offset, or for a static field its address. */
static bool find_entry(const char *type, const char *field, bool want_static, uint64_t *out)
{
    struct layout l;
    if (!layout(&l))
        return false;
    for (const char *e = l.first; str_at(e, l.type) != NULL; e += l.stride) {
        const char *f = str_at(e, l.field);
        if (f == NULL || !is(str_at(e, l.type), type) || !is(f, field) ||
            (*(const int32_t *)(e + l.is_static) != 0) != want_static)
            continue;
        *out = want_static ? (uint64_t)(uintptr_t) * (const void *const *)(e + l.addr)
                           : *(const uint64_t *)(e + l.offset);
        return true;
    }
    return false;
}

long fx_vmstructs_field(const char *type, const char *field)
{
    uint64_t off;
    return find_entry(type, field, false, &off) && off < (1u << 20) ? (long)off : -1;
}

const void *fx_vmstructs_static(const char *type, const char *field)
{
    uint64_t addr;
    return find_entry(type, field, true, &addr) ? (const void *)(uintptr_t)addr : NULL;
}

long fx_vmstructs_size(const char *type)
{
    return type_size(type);
}

/* One walk of gHotSpotVM{Int,Long}Constants (kind "Int" or "Long") for name's value. */
static bool find_constant(const char *kind, const char *name, int64_t *out)
{
    bool ok = true;
    char sym[64];
    snprintf(sym, sizeof(sym), "gHotSpotVM%sConstants", kind);
    const char *const *base = dlsym(RTLD_DEFAULT, sym);
    snprintf(sym, sizeof(sym), "gHotSpotVM%sConstantEntryNameOffset", kind);
    uint64_t name_off = sym_u64(sym, &ok);
    snprintf(sym, sizeof(sym), "gHotSpotVM%sConstantEntryValueOffset", kind);
    uint64_t value_off = sym_u64(sym, &ok);
    snprintf(sym, sizeof(sym), "gHotSpotVM%sConstantEntryArrayStride", kind);
    uint64_t stride = sym_u64(sym, &ok);
    if (!ok || base == NULL || *base == NULL || stride == 0)
        return false;
    bool wide = kind[0] == 'L';
    for (const char *e = *base;; e += stride) {
        const char *n = *(const char *const *)(e + name_off);
        if (n == NULL)
            return false;
        if (is(n, name)) {
            int32_t v32;
            if (wide) {
                memcpy(out, e + value_off, sizeof(*out));
            } else {
                memcpy(&v32, e + value_off, sizeof(v32));
                *out = v32;
            }
            return true;
        }
    }
}

bool fx_vmstructs_long_constant(const char *name, int64_t *out)
{
    return find_constant("Long", name, out);
}

bool fx_vmstructs_int_constant(const char *name, int64_t *out)
{
    return find_constant("Int", name, out);
}

/* issue 32: the PcDesc table's layout for the intrinsics' stubs (recover_pcdesc.h): JDK 17's
 * offsets from the nmethod, JDK 23+'s from its immutable data. A field not exported leaves
 * the layout unpublished, and those stubs' samples stay named failures. */
static void pcdesc_publish(void) /* at load (fx_vmstructs_field needs no once) */
{
    long data = fx_vmstructs_field("nmethod", "_immutable_data");
    long begin = fx_vmstructs_field("nmethod", "_scopes_pcs_offset");
    long end = fx_vmstructs_field("nmethod",
                                  data >= 0 ? "_scopes_data_offset" : "_dependencies_offset");
    long size = fx_vmstructs_field("nmethod", "_immutable_data_size");
    long pc = fx_vmstructs_field("PcDesc", "_pc_offset"), desc = fx_vmstructs_size("PcDesc");
    if (begin < 0 || end < 0 || pc < 0 || desc <= 0 || (data >= 0 && size < 0))
        return;
    struct fx_pcdesc_layout l = {
            .pid = (int32_t)getpid(),
            .begin = (int32_t)begin,
            .end = (int32_t)end,
            .data = (int32_t)data,
            .data_size = (int32_t)size,
            .size = (int32_t)desc,
            .pc = (int32_t)pc,
            .scope = (int32_t)fx_vmstructs_field("PcDesc", "_scope_decode_offset")};
    fx_recover_pcdesc_publish(&l);
}
