/* SPDX-License-Identifier: Apache-2.0 */
/* The inlining facts of an nmethod from its own debug information (nmethod_scopes.h, issue 31).
 * HotSpot's DebugInformationRecorder writes, for each PcDesc with a scope, a chain of ScopeDescs
 * in the scopes data: at a scope's decode offset three ints, the sender's decode offset (0: the
 * outermost scope, the compiled method's), the method's index in the nmethod's metadata table
 * (1-based, 0 is null) and the bci (+1), then the locals/expressions/monitors offsets this file
 * does not need. JVMTI's CompiledMethodLoad record (jvmtiExport.cpp, create_inline_record) walks
 * the same chains, every PcDesc whose scope offset is not 0, innermost scope first, naming each
 * scope's Method* by its jmethodID: so distinct Method*s here are distinct jmethodIDs there.
 * The metadata index is NOT compared: the Method* it names is (a Method* recorded under two
 * indices would count twice; the oracle counts such aliases to show whether HotSpot's recorder
 * dedups them). A caller's scope is written before its callee's (a sender offset is below the
 * scope's own), which bounds every walk; a scope met again is skipped with its chain.
 * Ints are a CompressedReadStream's: bytes below 192 end an int, up to 5 bytes of 6-bit digits
 * (Pack200's UNSIGNED5). JDK <= 19 writes the digits as they are; JDK 20+ (JDK-8292758,
 * utilities/unsigned5.hpp) adds 1 to every byte so that none is 0 (one low code fewer: 0..190).
 * Reads: the nmethod's header, then its metadata, PcDescs, scopes data, compile id again and
 * (with the code heap layout) the block's _used and nmethod::_state in one process_vm_readv (a
 * freed table fails the call, never this thread): two system calls of ~3 µs each here, the
 * nmethod the range's compilation before and after, its block not freed (session 26). */
#include "nmethod_scopes.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <jvmticmlr.h>

#include "fx_alloc.h"
#include "internal.h"

#define HEADER_MAX 512
#define PCS_MAX    (4u << 20) /* bytes: larger tables are refused, not read */
#define DATA_MAX   (16u << 20)
#define META_MAX   (1u << 20)

/* Offsets in the nmethod (-1: not exported). JDK <= 22: the PcDescs lie at the nmethod +
 * _scopes_pcs_offset up to + _dependencies_offset, the scopes data from the address
 * CompiledMethod::_scopes_data_begin up to the PcDescs, the metadata from + _metadata_offset up
 * to the scopes data. JDK 23+ (immutable data): PcDescs at _immutable_data + _scopes_pcs_offset
 * up to + _scopes_data_offset, the scopes data from there to the end of the immutable data
 * (_immutable_data_size: speculations and a reference count follow it, past any chain), the
 * metadata at CodeBlob::_mutable_data + _relocation_size up to + _mutable_data_size. */
static struct {
    pthread_once_t once;
    bool ok, unsigned5;
    int32_t method, compile_id, pcs, pcs_end, data_begin, meta, data, data_size, mut_size, reloc;
    int32_t pc_size, pc_scope, header;
    uint64_t why[FX_SCOPES_WHY_N], read_ns, reads, aliases;
    uint64_t loads, agree, differ, refused;
    bool every; /* FXAGENT_TEST_NMETHOD_SCOPES=1: every load checked */
} ns = {.once = PTHREAD_ONCE_INIT};

static const char *const why_name[FX_SCOPES_WHY_N] = {
        [FX_SCOPES_LAYOUT] = "no layout (VMStructs)",
        [FX_SCOPES_READ] = "a read failed or the nmethod changed",
        [FX_SCOPES_SIZE] = "tables out of bounds",
        [FX_SCOPES_STREAM] = "an int past the scopes data",
        [FX_SCOPES_OFFSET] = "a decode offset out of range",
        [FX_SCOPES_INDEX] = "a method index out of range or null",
        [FX_SCOPES_EMPTY] = "no PcDesc with a scope",
        [FX_SCOPES_NOMEM] = "no memory",
};

static void layout_init(void)
{
    long method = fx_vmstructs_field("nmethod", "_method");
    if (method < 0)
        method = fx_vmstructs_field("CompiledMethod", "_method");
    long data = fx_vmstructs_field("nmethod", "_immutable_data");
    long f[] = {method,
                fx_vmstructs_field("nmethod", "_compile_id"),
                fx_vmstructs_field("nmethod", "_scopes_pcs_offset"),
                data >= 0 ? fx_vmstructs_field("nmethod", "_scopes_data_offset")
                          : fx_vmstructs_field("nmethod", "_dependencies_offset"),
                data >= 0 ? 0 : fx_vmstructs_field("CompiledMethod", "_scopes_data_begin"),
                data >= 0 ? fx_vmstructs_field("CodeBlob", "_mutable_data")
                          : fx_vmstructs_field("nmethod", "_metadata_offset"),
                data >= 0 ? data : 0,
                data >= 0 ? fx_vmstructs_field("nmethod", "_immutable_data_size") : 0,
                data >= 0 ? fx_vmstructs_field("CodeBlob", "_mutable_data_size") : 0,
                data >= 0 ? fx_vmstructs_field("CodeBlob", "_relocation_size") : 0};
    long header = 0;
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
        if (f[i] < 0)
            return;
        header = f[i] + 8 > header ? f[i] + 8 : header;
    }
    const int *major = fx_vmstructs_static("Abstract_VM_Version", "_vm_major_version");
    long size = fx_vmstructs_size("PcDesc"),
         scope = fx_vmstructs_field("PcDesc", "_scope_decode_offset");
    if (header > HEADER_MAX || major == NULL || *major < 8 || size < 8 || scope < 0 ||
        scope + 4 > size)
        return;
    ns.method = (int32_t)f[0], ns.compile_id = (int32_t)f[1], ns.pcs = (int32_t)f[2];
    ns.pcs_end = (int32_t)f[3], ns.data_begin = data >= 0 ? -1 : (int32_t)f[4];
    ns.meta = (int32_t)f[5], ns.data = data >= 0 ? (int32_t)data : -1;
    ns.data_size = (int32_t)f[7], ns.mut_size = (int32_t)f[8], ns.reloc = (int32_t)f[9];
    ns.pc_size = (int32_t)size, ns.pc_scope = (int32_t)scope, ns.header = (int32_t)header;
    ns.unsigned5 = *major >= 20;
    const char *every = getenv("FXAGENT_TEST_NMETHOD_SCOPES");
    ns.every = every != NULL && strcmp(every, "1") == 0;
    ns.ok = true;
}

/* One int of a CompressedReadStream at *pos, below len; x: the excluded byte count (JDK 20+:
 * 1, the byte 0 never written; before: 0). False past len or at an excluded byte. */
static bool read_int(const uint8_t *b, size_t len, size_t *pos, uint32_t x, uint32_t *v)
{
    const uint32_t low = 192; /* bytes below end an int, in both encodings */
    uint32_t sum = 0;
    for (uint32_t i = 0, shift = 0; i < 5; i++, shift += 6) {
        if (*pos + i >= len || b[*pos + i] < x)
            return false;
        sum += (uint32_t)(b[*pos + i] - x) << shift;
        if (b[*pos + i] < low || i == 4) {
            *pos += i + 1;
            *v = sum;
            return true;
        }
    }
    return false;
}

struct method_set {
    uintptr_t m[FX_SCOPES_SET];
    uint32_t index[FX_SCOPES_SET];
    uint32_t n;
};

/* Adds m (other than the root) under metadata index idx: counts it if new (up to the cap), an
 * alias if known under another index. */
static void set_add(struct method_set *s, uintptr_t m, uint32_t idx, uint32_t *aliases)
{
    size_t i = (size_t)((m >> 3) * 0x9E3779B97F4A7C15ull >> 40) & (FX_SCOPES_SET - 1);
    while (s->m[i] != 0 && s->m[i] != m)
        i = (i + 1) & (FX_SCOPES_SET - 1);
    if (s->m[i] == m) {
        *aliases += s->index[i] != idx;
        return;
    }
    if (s->n >= FX_NMETHOD_SCOPES_INLINED_MAX)
        return;
    s->m[i] = m, s->index[i] = idx, s->n++;
}

enum fx_scopes_why fx_nmethod_scopes_decode(const struct fx_scopes_image *im,
                                            struct fx_nmethod_scopes *out, uint32_t *aliases)
{
    *out = (struct fx_nmethod_scopes){0};
    *aliases = 0;
    if (im->pc_size < 8 || im->pc_scope + 4 > im->pc_size || im->n_pcs > PCS_MAX / 8 ||
        im->data_len > DATA_MAX || im->data_len >= INT32_MAX)
        return FX_SCOPES_SIZE;
    struct method_set set_, *set = &set_;
    memset(set, 0, sizeof(*set));
    uint8_t *seen = fx_calloc(im->data_len / 8 + 1, 1);
    enum fx_scopes_why why = seen == NULL ? FX_SCOPES_NOMEM : FX_SCOPES_OK;
    const uint32_t x = im->unsigned5 ? 1 : 0;
    for (size_t p = 0; p < im->n_pcs && why == FX_SCOPES_OK; p++) {
        int32_t d;
        memcpy(&d, im->pcs + p * im->pc_size + im->pc_scope, sizeof(d));
        if (d == 0) /* serialized_null: the sentinels, the PcDescs without a scope */
            continue;
        out->pcs++;
        while (d != 0 && why == FX_SCOPES_OK) {
            if (d < 0 || (size_t)d >= im->data_len) {
                why = FX_SCOPES_OFFSET;
                break;
            }
            if (seen[d / 8] & (1u << (d % 8))) /* this scope and its callers: counted */
                break;
            seen[d / 8] |= (uint8_t)(1u << (d % 8));
            size_t pos = (size_t)d;
            uint32_t sender, idx, bci;
            if (!read_int(im->data, im->data_len, &pos, x, &sender) ||
                !read_int(im->data, im->data_len, &pos, x, &idx) ||
                !read_int(im->data, im->data_len, &pos, x, &bci))
                why = FX_SCOPES_STREAM;
            else if (sender >= (uint32_t)d) /* a caller is written first: the walk ends */
                why = FX_SCOPES_OFFSET;
            else if (idx == 0 || idx > im->n_meta || im->meta[idx - 1] == 0)
                why = FX_SCOPES_INDEX;
            else {
                uintptr_t m = im->meta[idx - 1];
                if (m != im->root)
                    set_add(set, m, idx, aliases);
                else if (sender != 0) /* the compiled method in an inner scope */
                    out->self_inlined = true;
                d = (int32_t)sender;
            }
        }
    }
    if (why == FX_SCOPES_OK && out->pcs == 0)
        why = FX_SCOPES_EMPTY;
    out->inlined_methods = (int32_t)set->n;
    fx_free(seen);
    if (why != FX_SCOPES_OK)
        *out = (struct fx_nmethod_scopes){0};
    return why;
}

static bool peek(uintptr_t at, void *buf, size_t n)
{
    return fx_interp_peek_sigsafe((int32_t)getpid(), at, buf, n, 8);
}

static uintptr_t word(const uint8_t *h, int32_t off)
{
    uintptr_t v;
    memcpy(&v, h + off, sizeof(v));
    return v;
}

static int32_t int_at(const uint8_t *h, int32_t off)
{
    int32_t v;
    memcpy(&v, h + off, sizeof(v));
    return v;
}

/* Where the three tables lie, from the nmethod's header h, or false. */
static bool tables(const uint8_t *h, uintptr_t blob, struct iovec t[4])
{
    int32_t pb = int_at(h, ns.pcs), pe = int_at(h, ns.pcs_end);
    uintptr_t pcs, data, data_end, meta, meta_end;
    if (pb < 0 || pe < pb || (pe - pb) % ns.pc_size != 0)
        return false;
    if (ns.data >= 0) {
        uintptr_t imm = word(h, ns.data), mut = word(h, ns.meta);
        int32_t size = int_at(h, ns.data_size), reloc = int_at(h, ns.reloc);
        int32_t mut_size = int_at(h, ns.mut_size);
        if (imm == 0 || size < pe || reloc < 0 || mut_size < reloc || (mut == 0 && mut_size > 0))
            return false;
        pcs = imm + (uintptr_t)pb, data = imm + (uintptr_t)pe, data_end = imm + (uintptr_t)size;
        meta = mut + (uintptr_t)reloc, meta_end = mut + (uintptr_t)mut_size;
    } else {
        int32_t mo = int_at(h, ns.meta);
        data = word(h, ns.data_begin), pcs = blob + (uintptr_t)pb, data_end = pcs;
        meta = blob + (uintptr_t)mo, meta_end = data;
        if (mo < 0 || data < meta || data_end < data)
            return false;
    }
    t[0] = (struct iovec){(void *)pcs, (size_t)(pe - pb)};
    t[1] = (struct iovec){(void *)data, data_end - data};
    t[2] = (struct iovec){(void *)meta, meta_end - meta};
    return t[0].iov_len <= PCS_MAX && t[1].iov_len <= DATA_MAX && t[2].iov_len <= META_MAX &&
           t[2].iov_len % sizeof(uintptr_t) == 0 && meta % sizeof(uintptr_t) == 0;
}

static enum fx_scopes_why read_decode(const struct fx_code_range *r, struct fx_nmethod_scopes *out,
                                      uint32_t *aliases)
{
    pthread_once(&ns.once, layout_init);
    uint8_t h[HEADER_MAX];
    struct iovec t[4];
    int32_t id;
    if (!ns.ok || r->kind != FX_BLOB_NMETHOD || r->blob == 0)
        return FX_SCOPES_LAYOUT;
    if (!peek(r->blob, h, (size_t)ns.header) || int_at(h, ns.compile_id) != r->compile_id)
        return FX_SCOPES_READ;
    if (!tables(h, r->blob, t))
        return FX_SCOPES_SIZE;
    /* the metadata first (the buffer's alignment is the words'), the compile id, the block's
     * _used and nmethod::_state last: the kernel reads the remote ranges in order, so a compile
     * id still r's after the tables means the block was not reused from its start (compile ids
     * are never reused), and a block still used with a live state that it was not freed: a freed
     * nmethod keeps its header, compile id included, in product builds while CodeHeap hands out
     * the free block's tail to newer code (session 25, codeheap_sig.c's blob_live), whose bytes
     * the tables' reads would take for the scopes. Without the heap layout: the compile id. */
    const struct fx_codeheap_layout *l = &fx_sig.codeheap;
    bool live = __atomic_load_n(&l->pid, __ATOMIC_ACQUIRE) != 0 && l->block_size > 0 &&
                l->block_used >= 0 && l->state >= 0 && r->blob > (uintptr_t)l->block_size;
    struct iovec order[6] = {t[2], t[0], t[1], {(void *)(r->blob + (uintptr_t)ns.compile_id), 4}};
    order[4] = (struct iovec){
            (void *)(r->blob - (uintptr_t)l->block_size + (uintptr_t)l->block_used), 1};
    order[5] = (struct iovec){(void *)(r->blob + (uintptr_t)l->state), 1};
    size_t total = t[0].iov_len + t[1].iov_len + t[2].iov_len, tail = sizeof(id) + (live ? 2 : 0);
    uint8_t *buf = fx_malloc(total + tail);
    if (buf == NULL)
        return FX_SCOPES_NOMEM;
    struct iovec local = {buf, total + tail};
    enum fx_scopes_why why = FX_SCOPES_READ;
    if (syscall(SYS_process_vm_readv, getpid(), &local, 1UL, order, live ? 6UL : 4UL, 0UL) ==
                (long)(total + tail) &&
        (memcpy(&id, buf + total, sizeof(id)), id == r->compile_id) &&
        (!live || (buf[total + 4] != 0 && (int8_t)buf[total + 5] >= 0 &&
                   (int8_t)buf[total + 5] <= l->live_max))) {
        struct fx_scopes_image im = {
                .meta = (const uintptr_t *)(void *)buf,
                .n_meta = t[2].iov_len / sizeof(uintptr_t),
                .pcs = buf + t[2].iov_len,
                .n_pcs = t[0].iov_len / (size_t)ns.pc_size,
                .pc_size = (uint32_t)ns.pc_size,
                .pc_scope = (uint32_t)ns.pc_scope,
                .data = buf + t[2].iov_len + t[0].iov_len,
                .data_len = t[1].iov_len,
                .root = word(h, ns.method),
                .unsigned5 = ns.unsigned5,
        };
        why = fx_nmethod_scopes_decode(&im, out, aliases);
    }
    fx_free(buf);
    return why;
}

static bool read_why(const struct fx_code_range *r, struct fx_nmethod_scopes *out,
                     enum fx_scopes_why *whyp)
{
    struct timespec a, b;
    uint32_t aliases = 0;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    *out = (struct fx_nmethod_scopes){0};
    enum fx_scopes_why why = read_decode(r, out, &aliases);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    uint64_t dt = (uint64_t)((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec));
    __atomic_add_fetch(&ns.read_ns, dt, __ATOMIC_RELAXED);
    __atomic_add_fetch(&ns.reads, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&ns.why[why], 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&ns.aliases, aliases, __ATOMIC_RELAXED);
    *whyp = why;
    return why == FX_SCOPES_OK;
}

bool fx_nmethod_scopes_read(const struct fx_code_range *r, struct fx_nmethod_scopes *out)
{
    enum fx_scopes_why why;
    /* no PcDesc with a scope (a native wrapper, a method handle intrinsic): read whole, nothing
     * inlined, as CompiledMethodLoad's empty inline record says for it (session 24) */
    return read_why(r, out, &why) || why == FX_SCOPES_EMPTY;
}

static int cmp_id(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return (x > y) - (x < y);
}

/* The two facts from CompiledMethodLoad's inline records, as codemap.c (self_inlined) and
 * jit_info.c (fx_jit_info_inlined) take them: the root jmethodID in a frame but the last
 * (outermost) of some pc; the distinct other jmethodIDs, capped as there. False: no record. */
static bool cml_facts(jmethodID root, const void *info, struct fx_nmethod_scopes *c)
{
    size_t n = 0, cap = 0;
    uintptr_t *ids = NULL;
    bool seen = false;
    *c = (struct fx_nmethod_scopes){0};
    for (const jvmtiCompiledMethodLoadRecordHeader *h = info; h != NULL; h = h->next) {
        if (h->kind != JVMTI_CMLR_INLINE_INFO)
            continue;
        seen = true;
        const jvmtiCompiledMethodLoadInlineRecord *r = (const void *)h;
        for (jint i = 0; i < r->numpcs; i++) {
            const PCStackInfo *pc = &r->pcinfo[i];
            c->pcs++;
            for (jint k = 0; k < pc->numstackframes; k++) {
                jmethodID m = pc->methods[k];
                c->self_inlined |= m == root && k + 1 < pc->numstackframes;
                if (m == root || m == NULL || fx_grow(&ids, &cap, n, 1, sizeof(*ids), 64) != FX_OK)
                    continue;
                ids[n++] = (uintptr_t)m;
            }
        }
    }
    if (n > 1)
        qsort(ids, n, sizeof(*ids), cmp_id);
    for (size_t i = 0; i < n; i++)
        c->inlined_methods += i == 0 || ids[i] != ids[i - 1];
    if (c->inlined_methods > FX_NMETHOD_SCOPES_INLINED_MAX)
        c->inlined_methods = FX_NMETHOD_SCOPES_INLINED_MAX;
    fx_free(ids);
    return seen;
}

void fx_nmethod_scopes_check(const struct fx_code_range *r, jmethodID root, const void *info)
{
    pthread_once(&ns.once, layout_init);
    uint64_t seen = __atomic_fetch_add(&ns.loads, 1, __ATOMIC_RELAXED);
    /* every load under the test switch, which is its test; else the first 16, then 1 in 1,024:
     * a read costs ~20-40 µs of the ServiceThread's CPU (docs/BENCHMARKS.md, session 23) */
    if (!ns.every && seen >= 16 && seen % 1024 != 0)
        return;
    struct fx_nmethod_scopes c, mine;
    if (!cml_facts(root, info, &c))
        return;
    enum fx_scopes_why why = FX_SCOPES_OK;
    if (!read_why(r, &mine, &why) && (why != FX_SCOPES_EMPTY || c.pcs == 0)) {
        __atomic_add_fetch(&ns.refused, 1, __ATOMIC_RELAXED);
        return; /* an empty table where the event has pcs differs: a decode finding nothing */
    }
    bool same = why == FX_SCOPES_OK && mine.self_inlined == c.self_inlined &&
                mine.inlined_methods == c.inlined_methods;
    uint64_t differ = same ? 0 : __atomic_add_fetch(&ns.differ, 1, __ATOMIC_RELAXED);
    if (same)
        __atomic_add_fetch(&ns.agree, 1, __ATOMIC_RELAXED);
    else if (differ <= 4)
        fx_log("nmethod scopes differ from CompiledMethodLoad (compile id %d): self-inlined "
               "%d/%d, inlined methods %d/%d, pcs %u/%u",
               r->compile_id, mine.self_inlined, c.self_inlined, mine.inlined_methods,
               c.inlined_methods, mine.pcs, c.pcs);
}

void fx_nmethod_scopes_report(struct fx_profile *p, const char *g)
{
    uint64_t reads = __atomic_load_n(&ns.reads, __ATOMIC_RELAXED);
    fx_profile_extra_detail(p, g, "nmethod scopes agreeing with CompiledMethodLoad",
                            (int64_t)__atomic_load_n(&ns.agree, __ATOMIC_RELAXED));
    fx_profile_extra_detail(p, g, "nmethod scopes refused (not read) at CompiledMethodLoad",
                            (int64_t)__atomic_load_n(&ns.refused, __ATOMIC_RELAXED));
    fx_profile_extra_detail(p, g, "nmethod scopes differing from CompiledMethodLoad",
                            (int64_t)__atomic_load_n(&ns.differ, __ATOMIC_RELAXED));
    fx_profile_extra_detail(p, g, "nmethod scopes read", (int64_t)reads);
    fx_profile_extra_detail(p, g, "nmethod scopes read and decoded (µs of CPU, all reads)",
                            (int64_t)(__atomic_load_n(&ns.read_ns, __ATOMIC_RELAXED) / 1000));
    fx_profile_extra_detail(p, g, "nmethod scopes: a method under a second metadata index",
                            (int64_t)__atomic_load_n(&ns.aliases, __ATOMIC_RELAXED));
    char label[96];
    for (int w = 1; w < FX_SCOPES_WHY_N; w++) {
        snprintf(label, sizeof(label), "nmethod scopes not read: %s", why_name[w]);
        fx_profile_extra_detail(p, g, label,
                                (int64_t)__atomic_load_n(&ns.why[w], __ATOMIC_RELAXED));
    }
}
