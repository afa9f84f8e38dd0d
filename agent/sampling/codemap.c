/* SPDX-License-Identifier: Apache-2.0 */
/* The code ranges stack recovery looks pcs up in (issue 20, docs/VALIDATION.md section 8),
 * built outside signal context from JVMTI: CompiledMethodLoad/Unload (each nmethod's code and
 * method, plus its layout from VMStructs) and DynamicCodeGenerated (stubs by name), replayed by
 * GenerateEvents for code that existed before the agent.
 *
 * Publication, in two levels (issue 31, coderecent.h): callbacks (compiler threads, the service
 * thread, any thread) append each change to a log under `lock` and to the recent table the
 * published base table carries, which the handler's lookup reads over the base at once (no lag);
 * the drain (fx_codemap_publish, at each of its passes, which no longer come every 10 ms for code)
 * folds the log into the set of live ranges and, if anything changed, publishes a new sorted base
 * table with a new, empty recent table, by a seq_cst store to fx_sig.code_table. A handler
 * increments fx_sig.code_readers (seq_cst) before it loads the pointer and decrements it after its
 * last read, so a replaced table and its recent table are freed, or kept as the spares a later
 * publish writes into, only once the drain has seen code_readers == 0 after the store: any handler
 * that loads later sees the new table. The recent table holds what the log holds since the last
 * publish, in its order (a change the log dropped is not in it): past half full (256 of 512) a
 * callback hurries the drain (fx_drain_hurry), and once it is full changes go to the log alone,
 * counted, at most one fast drain period (10 ms) behind as before: a pass after that stays fast.
 *
 * Unload: a range leaves at its CompiledMethodUnload, and a newer range that overlaps an older
 * one replaces it (the older code is gone: its memory was reused). Between the reuse and the
 * new load event a stale range could still match: for nmethods the handler checks the compile
 * id stored in the blob header against the range's (fx_recover.h), so a stale range is never
 * used; stubs (vtable/itable, the interpreter, StubRoutines, adapters) are never freed, and are
 * named as users read them: every I2C/C2I adapter one "I2C/C2I adapters" (fx_jvm_names_stub_len).
 * Calls down only: vmstructs.c, coderecent.c, codeheap_check.c and nmethod_scopes.c (the two
 * oracles at a load, and a method handle intrinsic's name), codeheap_found.c (codemap=heap's flag),
 * the allocator, fx_jvm_names; codemap_heap.c calls it, never the other way. */
#include "codemap_heap.h"
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jvmticmlr.h>

#include "fx_alloc.h"
#include "fx_jvm_names.h"
#include "fx_sort.h"
#include "nmethod_scopes.h"

#define MAX_RETIRED 64 /* replaced tables not yet freed; beyond this, publishing waits */
#define MAX_NAMES   4096

enum op {
    OP_ADD,
    OP_REMOVE
};

struct logrec {
    enum op op;
    uint64_t seq;
    struct fx_code_range r;
};

static struct {
    pthread_mutex_t lock;
    struct logrec *log; /* pending changes, in arrival order */
    size_t n_log, cap_log;
    uint64_t seq;
    const struct fx_code_range *live; /* the drain's: the last published table's ranges */
    size_t n_live, cap_live;          /* cap_live: that table's capacity in ranges */
    struct fx_code_table *retired[MAX_RETIRED];
    size_t cap_retired[MAX_RETIRED];
    size_t n_retired;
    struct fx_code_table *spare; /* a retired table no handler reads, written by the next fold */
    size_t cap_spare;
    /* coderecent.h: the table the callbacks append to (under lock; NULL: the log only), the one
     * the published table carries, and those of the retired tables */
    struct fx_code_recent *recent_w, *recent_cur, *recent_retired[MAX_RETIRED];
    bool recent_late;       /* since the last publish, a change went to the log only: stay fast */
    char *names[MAX_NAMES]; /* stub names, index = FX_LINE_STUB frame's method_id */
    size_t n_names;
    uint64_t loads, unloads, stubs, no_layout, osr, replaced, publishes, log_dropped, busy;
    uint64_t names_full;
    uint64_t heap_agree, heap_refused, heap_differ; /* codeheap_check's outcomes */
    bool heap_only; /* FXAGENT_TEST_CODEHEAP_ONLY=1: nmethods are not published */
} cm = {.lock = PTHREAD_MUTEX_INITIALIZER};

int fx_codemap_setup(void)
{
    fx_sig.compile_id_off = -1;
    /* A test switch (it.validate_recovered): no nmethod enters the table, so every walk and
     * recovery finds its compiled methods in the code heaps (codeheap_sig.c), and validate mode
     * holds that path to GetStackTrace on every stack. */
    const char *heap_only = getenv("FXAGENT_TEST_CODEHEAP_ONLY");
    cm.heap_only = heap_only != NULL && heap_only[0] == '1';
    struct fx_nmethod_layout probe;
    (void)fx_vmstructs_nmethod(0, &probe); /* loads the offsets; code 0 is no blob */
    return FX_OK;
}

/* Under lock. */
static bool log_push(enum op op, const struct fx_code_range *r)
{
    if (cm.n_log == cm.cap_log) {
        size_t cap = cm.cap_log ? cm.cap_log * 2 : 256;
        struct logrec *n = fx_reallocarray(cm.log, cap, sizeof(*n));
        if (n == NULL) {
            cm.log_dropped++;
            return false;
        }
        cm.log = n;
        cm.cap_log = cap;
    }
    cm.log[cm.n_log++] = (struct logrec){.op = op, .seq = ++cm.seq, .r = *r};
    return true;
}

/* Under lock: a change logged for the next base table and, if it was logged (the recent table
 * holds only what the log does, in its order), appended to the recent table the handler reads
 * now. Whether the drain should come soon: the change is in the log only (no recent table yet, or
 * a full one: counted), or the recent table is past half full (its merge, issue 31). */
static bool record(enum op op, const struct fx_code_range *r)
{
    if (!log_push(op, r))
        return false;
    uint32_t n = fx_coderecent_add(cm.recent_w, r, op == OP_REMOVE);
    cm.recent_late = cm.recent_late || n == 0;
    return n == 0 || n >= FX_RECENT_MERGE;
}

/* Frame types (issue 32) match a compiled frame to its method by the jmethodID alone: right
 * unless the method was inlined into itself (recursion), where an inlined copy could be taken
 * for the root. True for such a method, and when there are no inlining records to tell. */
static bool self_inlined(jmethodID root, const void *compile_info)
{
    bool seen = false;
    for (const jvmtiCompiledMethodLoadRecordHeader *h = compile_info; h != NULL; h = h->next) {
        if (h->kind != JVMTI_CMLR_INLINE_INFO)
            continue;
        seen = true;
        const jvmtiCompiledMethodLoadInlineRecord *r = (const void *)h;
        for (jint i = 0; i < r->numpcs; i++)
            for (jint k = 0; k + 1 < r->pcinfo[i].numstackframes; k++)
                if (r->pcinfo[i].methods[k] == root)
                    return true;
    }
    return !seen;
}

bool fx_codemap_compiled_load(jmethodID method, const void *code_addr, jint code_size,
                              const void *compile_info)
{
    if (code_addr == NULL || code_size <= 0)
        return false;
    struct fx_code_range r = {.begin = (uintptr_t)code_addr,
                              .end = (uintptr_t)code_addr + (uintptr_t)code_size,
                              .name = (uint64_t)(uintptr_t)method,
                              .verified = FX_OFF_UNKNOWN,
                              .complete = FX_OFF_UNKNOWN,
                              .kind = FX_BLOB_NMETHOD};
    struct fx_nmethod_layout l;
    bool layout = fx_vmstructs_nmethod(r.begin, &l);
    bool normal = layout && l.entry_bci == -1;
    if (layout) {
        fx_codeheap_entry(&r, l.verified, l.frame_complete, l.entry_bci, l.osr_entry);
        r.blob = l.blob;
        r.compile_id = l.compile_id;
        r.frame_words = l.frame_words;
        r.level = l.level >= 1 && l.level <= 4 ? (uint8_t)l.level : 0;
        r.stubs = l.stubs > r.begin && l.stubs <= r.end ? (uint32_t)(l.stubs - r.begin) : 0;
        /* a method handle intrinsic (8.5l): frame size 0 read, level 0 (no other nmethod) */
        r.flags |= normal && l.frame_words == 0 && l.level == 0 ? FX_RANGE_FRAMELESS : 0;
        fx_codeheap_mh_name(&r); /* and named by its intrinsic id, not the event's (8.5l) */
    }
    r.flags |= self_inlined(method, compile_info) ? FX_RANGE_SELF_INLINE : 0;
    fx_nmethod_scopes_check(&r, method, compile_info); /* issue 31: the nmethod's own facts */
    /* the oracle costs 3 lookups of ~16 system calls (~50 µs of the ServiceThread): every load
     * under the test switch, which is its test; otherwise the first 8 checked, then 1 load in
     * 1,024 (a short run's first 256 loads cost 16 ms of a 1.5 s run: docs/BENCHMARKS.md,
     * session 17) */
    uint64_t seen = __atomic_load_n(&cm.loads, __ATOMIC_RELAXED);
    uint64_t done = __atomic_load_n(&cm.heap_agree, __ATOMIC_RELAXED) +
                    __atomic_load_n(&cm.heap_refused, __ATOMIC_RELAXED) +
                    __atomic_load_n(&cm.heap_differ, __ATOMIC_RELAXED);
    bool due = cm.heap_only || done < 8 || seen % 1024 == 0;
    int check = layout && due ? fx_codeheap_check(&r) : 0;
    pthread_mutex_lock(&cm.lock);
    __atomic_store_n(&cm.heap_agree, cm.heap_agree + (check == 1), __ATOMIC_RELAXED);
    __atomic_store_n(&cm.heap_refused, cm.heap_refused + (check == 2), __ATOMIC_RELAXED);
    __atomic_store_n(&cm.heap_differ, cm.heap_differ + (check < 0), __ATOMIC_RELAXED);
    if (layout && fx_sig.compile_id_off < 0)
        __atomic_store_n(&fx_sig.compile_id_off, l.compile_id_offset, __ATOMIC_RELAXED);
    __atomic_store_n(&cm.loads, cm.loads + 1, __ATOMIC_RELAXED);
    cm.no_layout += !layout;
    cm.osr += layout && !normal;
    /* codemap=heap (codemap_heap.c): the handler's finds feed the table, not this event */
    bool hurry = !cm.heap_only && !fx_codeheap_offering() && record(OP_ADD, &r);
    pthread_mutex_unlock(&cm.lock);
    return hurry;
}

void fx_codemap_compiled_unload(jmethodID method, const void *code_addr)
{
    struct fx_code_range r = {.begin = (uintptr_t)code_addr,
                              .name = (uint64_t)(uintptr_t)method,
                              .kind = FX_BLOB_NMETHOD};
    pthread_mutex_lock(&cm.lock);
    cm.unloads++;
    if (!fx_codeheap_offering())     /* codemap=heap: the drain's sweep drops it (codemap_heap.c) */
        (void)record(OP_REMOVE, &r); /* the range leaves; the drain need not hurry for that */
    pthread_mutex_unlock(&cm.lock);
}

/* Under lock: the index of name in the list, added if new; MAX_NAMES if full. */
static size_t name_index(const char *name)
{
    for (size_t i = 0; i < cm.n_names; i++) {
        if (strcmp(cm.names[i], name) == 0)
            return i;
    }
    if (cm.n_names == MAX_NAMES || (cm.names[cm.n_names] = fx_strdup(name)) == NULL) {
        cm.names_full++;
        return MAX_NAMES;
    }
    return cm.n_names++;
}

/* StubRoutines' fill stubs: j<type>_fill and arrayof_j<type>_fill (generate_fill's callers) */
static bool fill_stub(const char *name)
{
    const char *t = name + (strncmp(name, "arrayof_", 8) == 0 ? 8 : 0);
    return !strcmp(t, "jbyte_fill") || !strcmp(t, "jshort_fill") || !strcmp(t, "jint_fill");
}

bool fx_codemap_dynamic_code(const char *name, const void *address, jint length)
{
    if (name == NULL || address == NULL || length <= 0)
        return false;
    /* HotSpot posts each dispatch stub under exactly these names (vtableStubs.cpp), and each
     * AdapterBlob as "I2C/C2I adapters" followed by its fingerprint at creation
     * (AdapterHandlerLibrary), without it when GenerateEvents replays the code cache. */
    bool dispatch = strcmp(name, "vtable stub") == 0 || strcmp(name, "itable stub") == 0;
    bool adapter = strncmp(name, "I2C/C2I adapters", 16) == 0;
    bool c1_barrier = strcmp(name, "g1_post_barrier_slow") == 0; /* Runtime1's name for it */
    struct fx_code_range r = {.begin = (uintptr_t)address,
                              .end = (uintptr_t)address + (uintptr_t)length,
                              .verified = FX_OFF_UNKNOWN,
                              .complete = FX_OFF_UNKNOWN,
                              .kind = dispatch     ? FX_BLOB_DISPATCH
                                      : adapter    ? FX_BLOB_ADAPTER
                                      : c1_barrier ? FX_BLOB_C1_BARRIER
                                                   : FX_BLOB_STUB};
    /* The template interpreter is posted as one blob of this name (TemplateInterpreter): a pc
     * in it is an interpreted frame's (frame types, recover_anchor.c). */
    r.flags = strcmp(name, "Interpreter") == 0 ? FX_RANGE_INTERPRETER : 0;
    /* issue 32: below the call stub's frame, the native frames of the Java call go on */
    if (strcmp(name, "call_stub") == 0)
        r.flags |= FX_RANGE_CALL_STUB;
    /* issue 32: recover_stub.c's rules for the arraycopy, intrinsics' (CRC32/Adler32, MD5/SHA,
     * Base64) and fill stubs: a PcDesc where the call ends, else a partial stack (8.5d) */
    if (r.kind == FX_BLOB_STUB && strstr(name, "arraycopy") != NULL)
        r.arraycopy = FX_STUB_ARRAYCOPY;
    else if (r.kind == FX_BLOB_STUB &&
             (strstr(name, "updateBytes") != NULL || strstr(name, "implCompress") != NULL ||
              strstr(name, "base64") != NULL || strcmp(name, "implEncode") == 0 || /* JDK 17 */
              strcmp(name, "implDecode") == 0))
        r.arraycopy = FX_STUB_INTRINSIC;
    else if (r.kind == FX_BLOB_STUB && fill_stub(name))
        r.arraycopy = FX_STUB_FILL;
    /* C1's slow_subtype_check: frameless, its depth decoded (recover_subtype.c, 8.5g) */
    if (r.kind == FX_BLOB_STUB && strstr(name, "slow_subtype_check") != NULL)
        r.flags |= FX_RANGE_FRAMELESS;
    /* issue 32: the deoptimization blobs, whose unpack_frames fills in interpreter frames
     * under their anchor: not walked from it while the thread is in Java (recover_vmcode.c) */
    if (r.kind == FX_BLOB_STUB &&
        (strstr(name, "Deoptimization") != NULL || strstr(name, "deopt") != NULL ||
         strstr(name, "UncommonTrap") != NULL || strstr(name, "uncommon_trap") != NULL))
        r.flags |= FX_RANGE_DEOPT;
    /* issue 32: the nmethod entry barrier's stub, whose leaf call recover_entrybar.c crosses */
    if (r.kind == FX_BLOB_STUB && strstr(name, "method_entry_barrier") != NULL)
        r.flags |= FX_RANGE_ENTRY_BARRIER;
    /* issue 32: JDK 17's inline cache transition stubs, frameless (recover_icstub.c) */
    if (r.kind == FX_BLOB_STUB && strcmp(name, "InlineCacheBuffer") == 0)
        r.flags |= FX_RANGE_IC_BUFFER;
    /* A RuntimeStub's frame size (Runtime1's stubs): the not-in-Java walk crosses its frame; where
     * it is complete (session 17, native_below.c); flush_icache_stub's proven ret (8.5h) */
    if (r.kind == FX_BLOB_STUB) {
        r.stubs = fx_recover_vmstub_ret(name, address, (size_t)length);
        int32_t complete;
        r.frame_words = fx_vmstructs_stub_frame_words(r.begin, &complete);
        if (complete >= 0 && complete < length)
            r.complete = (uint32_t)complete;
    }
    char shown[256];
    size_t len = fx_jvm_names_stub_len(name);
    if (len < strlen(name) && len < sizeof(shown)) {
        memcpy(shown, name, len);
        shown[len] = '\0';
        name = shown;
    }
    bool hurry = false;
    pthread_mutex_lock(&cm.lock);
    size_t idx = name_index(name);
    if (idx < MAX_NAMES) {
        r.name = idx;
        cm.stubs++;
        hurry = record(OP_ADD, &r);
    }
    pthread_mutex_unlock(&cm.lock);
    return hurry;
}

bool fx_codemap_record(bool remove, const struct fx_code_range *r)
{
    pthread_mutex_lock(&cm.lock);
    bool hurry = record(remove ? OP_REMOVE : OP_ADD, r);
    pthread_mutex_unlock(&cm.lock);
    return hurry;
}

const struct fx_code_range *fx_codemap_live(size_t *n)
{
    *n = cm.n_live;
    return cm.live;
}

const char *fx_codemap_stub_name(uint64_t index)
{
    pthread_mutex_lock(&cm.lock);
    const char *s = index < cm.n_names ? cm.names[index] : NULL;
    pthread_mutex_unlock(&cm.lock);
    return s; /* names are never freed or changed while the agent is loaded */
}

static int by_begin_then_seq(const void *a, const void *b)
{
    const struct logrec *x = a, *y = b;
    if (x->r.begin != y->r.begin)
        return x->r.begin < y->r.begin ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The changes in (begin, seq) order: `live` replayed as adds older than every log record (seq
 * 0), merged with the sorted log. `live` is sorted already and its records precede any log
 * record of the same begin, so a merge gives the order without a copy of either. */
struct change {
    enum op op;
    uint64_t seq;
    const struct fx_code_range *r;
};

struct merge {
    const struct logrec *log;
    size_t n_log, a, b;
};

static bool next_change(struct merge *m, struct change *c)
{
    if (m->b == m->n_log && m->a == cm.n_live)
        return false;
    if (m->b == m->n_log || (m->a < cm.n_live && cm.live[m->a].begin <= m->log[m->b].r.begin)) {
        *c = (struct change){.op = OP_ADD, .seq = 0, .r = &cm.live[m->a++]};
    } else {
        const struct logrec *l = &m->log[m->b++];
        *c = (struct change){.op = l->op, .seq = l->seq, .r = &l->r};
    }
    return true;
}

/* The table the fold writes, for n ranges: the spare when it is large enough (a fresh block per
 * publish cost javac's drain a page fault per 4 KiB of ~450 KiB, ~100 times a second, and its
 * unmapping: 45 % of the drain thread's CPU, issue 31), else a new one with room to grow. */
static struct fx_code_table *table_for(size_t n, size_t *cap)
{
    if (cm.spare != NULL && cm.cap_spare >= n) {
        struct fx_code_table *t = cm.spare;
        *cap = cm.cap_spare;
        cm.spare = NULL;
        cm.cap_spare = 0;
        return t;
    }
    *cap = n + n / 4 + 64;
    return fx_malloc(sizeof(struct fx_code_table) + *cap * sizeof(struct fx_code_range));
}

/* The live ranges from m->a on that come before the next log record's begin and so are kept
 * as they are (live ranges never overlap each other), copied at once: most of a publish is
 * these runs, a few log records among thousands of ranges. The first of the run may still
 * overlap the range kept last (a newer log range below it): then it goes through the rule. */
static size_t copy_run(struct merge *m, struct fx_code_range *out, size_t k)
{
    size_t a = m->a, hi = cm.n_live;
    if (a == hi || (k > 0 && out[k - 1].end > cm.live[a].begin))
        return k;
    if (m->b < m->n_log) { /* the first live range at or past the log record's begin */
        uintptr_t lb = m->log[m->b].r.begin;
        size_t lo = a;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cm.live[mid].begin < lb)
                lo = mid + 1;
            else
                hi = mid;
        }
    }
    memcpy(out + k, cm.live + a, (hi - a) * sizeof(*out));
    m->a = hi;
    return k + (hi - a);
}

/* Folds the log into `live`: per begin, in (begin, seq) order (next_change), the newest add
 * wins unless a newer remove of the same method follows it; then, walking up, a range
 * overlapping the previous kept one keeps whichever is newer. Only the log is sorted: sorting
 * both at every publish cost javac's drain ~1 s of CPU (issue 31: 10,000 ranges, ~100
 * publishes a second). The result is written straight into the table to publish, which is
 * `live` from then on. Returns NULL (nothing changed) on allocation failure. */
static struct fx_code_table *fold(struct logrec *log, size_t n_log, size_t *cap)
{
    struct fx_code_table *t = table_for(cm.n_live + n_log, cap);
    if (t == NULL)
        return NULL;
    struct fx_code_range *out = t->r;
    fx_sort(log, n_log, sizeof(*log), by_begin_then_seq);
    struct merge m = {.log = log, .n_log = n_log};
    size_t k = copy_run(&m, out, 0);
    uint64_t kept_seq = 0;
    struct change c;
    bool more = next_change(&m, &c);
    while (more) {
        uintptr_t begin = c.r->begin;
        struct change win = {.r = NULL};
        for (; more && c.r->begin == begin; more = next_change(&m, &c)) {
            if (c.op == OP_ADD)
                win = c;
            else if (win.r != NULL && win.r->name == c.r->name)
                win.r = NULL;
        }
        if (win.r != NULL && k > 0 && out[k - 1].end > win.r->begin) {
            cm.replaced++;
            if (win.seq < kept_seq)
                win.r = NULL;
            else
                k--;
        }
        if (win.r != NULL) {
            out[k++] = *win.r;
            kept_seq = win.seq;
        }
        if (more && c.seq == 0) { /* c is live[m.a - 1] (log records count from 1) */
            m.a--;
            size_t run_end = copy_run(&m, out, k);
            kept_seq = run_end > k ? 0 : kept_seq;
            k = run_end;
            more = next_change(&m, &c); /* c again when nothing was copied */
        }
    }
    t->n = k;
    t->recent = NULL; /* publish sets the one its callbacks' changes go to */
    /* issue 32: a pc in none of its ranges is looked up in the code heaps, once both layouts
     * are published (codeheap.h) */
    bool heap = __atomic_load_n(&fx_sig.codeheap.pid, __ATOMIC_ACQUIRE) != 0 &&
                __atomic_load_n(&fx_sig.interp.pid, __ATOMIC_ACQUIRE) != 0;
    t->heap = heap ? &fx_sig.codeheap : NULL;
    t->il = heap ? &fx_sig.interp : NULL;
    t->found = &fx_sig.codeheap_found;
    t->lookups = &fx_sig.codeheap_lookups;
    t->refused = &fx_sig.codeheap_refused;
    return t;
}

static void free_retired(void)
{
    if (cm.n_retired == 0 || __atomic_load_n(&fx_sig.code_readers, __ATOMIC_SEQ_CST) != 0) {
        cm.busy += cm.n_retired > 0;
        return;
    }
    for (size_t i = 0; i < cm.n_retired; i++) {
        fx_coderecent_recycle(cm.recent_retired[i]);
        if (cm.cap_retired[i] <= cm.cap_spare) {
            fx_free(cm.retired[i]);
            continue;
        }
        fx_free(cm.spare); /* the largest is kept: the set of ranges only grows for long */
        cm.spare = cm.retired[i];
        cm.cap_spare = cm.cap_retired[i];
    }
    cm.n_retired = 0;
}

/* Stopped (issue 23: what a stopped agent keeps): no handler reads any more, so the tables
 * replaced go, and the spare with them (a start's first publish makes a table again): each
 * is a copy of the code map, ~100 KiB on a JDK 17 program (docs/PRODUCTION.md). */
void fx_codemap_idle(void)
{
    /* A handler still in flight (a signal delivered late, on a loaded machine) would keep the
     * tables (~70-120 KiB) until the next start: wait for it, a few microseconds of work, for up
     * to 100 ms. (it.cycle's failures at load 15-20 were the model's thread slots, not this.) */
    for (int i = 0; i < 100 && __atomic_load_n(&fx_sig.code_readers, __ATOMIC_SEQ_CST) != 0; i++)
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    free_retired();
    if (cm.n_retired == 0) {
        fx_free(cm.spare);
        cm.spare = NULL;
        cm.cap_spare = 0;
        fx_coderecent_idle();
    }
}

bool fx_codemap_publish(void)
{
    free_retired();
    if (cm.n_retired == MAX_RETIRED)
        return true; /* handlers keep reading: publish at a later cycle */
    /* the recent table the callbacks write from now on, carried by the table published here */
    struct fx_code_recent *next = fx_coderecent_take();
    pthread_mutex_lock(&cm.lock);
    struct logrec *log = cm.log;
    size_t n_log = cm.n_log;
    /* the code heaps' layouts came after the table: a table that has them, even unchanged */
    const struct fx_code_table *cur = __atomic_load_n(&fx_sig.code_table, __ATOMIC_RELAXED);
    bool heap = __atomic_load_n(&fx_sig.codeheap.pid, __ATOMIC_ACQUIRE) != 0 &&
                __atomic_load_n(&fx_sig.interp.pid, __ATOMIC_ACQUIRE) != 0;
    if (n_log == 0 && (!heap || (cur != NULL && cur->heap != NULL))) {
        pthread_mutex_unlock(&cm.lock);
        fx_coderecent_recycle(next); /* no handler has seen it */
        return false;
    }
    cm.log = NULL;
    cm.n_log = cm.cap_log = 0;
    cm.recent_w = next; /* its changes are newer than the log's, on top of the table below */
    bool late = cm.recent_late;
    cm.recent_late = next == NULL;
    pthread_mutex_unlock(&cm.lock);
    size_t cap;
    struct fx_code_table *t = fold(log, n_log, &cap);
    if (t == NULL) { /* give the changes back, oldest first, for the next cycle */
        pthread_mutex_lock(&cm.lock);
        struct logrec *newer = cm.log; /* changes since: in `next` too, which no table carries */
        size_t n_newer = cm.n_log;
        cm.log = NULL;
        cm.n_log = cm.cap_log = 0;
        for (size_t i = 0; i < n_log; i++)
            log_push(log[i].op, &log[i].r);
        for (size_t i = 0; i < n_newer; i++)
            log_push(newer[i].op, &newer[i].r);
        cm.recent_w = NULL; /* the published table's stays as it was: the log only until then */
        cm.recent_late = true;
        pthread_mutex_unlock(&cm.lock);
        fx_free(newer);
        fx_free(log);
        fx_coderecent_recycle(next);
        return true;
    }
    fx_free(log);
    t->recent = next;
    size_t old_cap = cm.cap_live;
    cm.live = t->r; /* the old table's ranges are not read again: it can be retired */
    cm.n_live = t->n;
    cm.cap_live = cap;
    struct fx_code_table *old = __atomic_exchange_n(&fx_sig.code_table, t, __ATOMIC_SEQ_CST);
    cm.publishes++;
    if (old != NULL) {
        cm.cap_retired[cm.n_retired] = old_cap;
        cm.recent_retired[cm.n_retired] = cm.recent_cur;
        cm.retired[cm.n_retired++] = old;
    } else {
        fx_coderecent_recycle(cm.recent_cur); /* NULL: no table carried one */
    }
    cm.recent_cur = next;
    free_retired();
    return late;
}

void fx_codemap_report(struct fx_profile *p, const char *g)
{
    pthread_mutex_lock(&cm.lock);
    fx_profile_extra_int(p, g, "code ranges known", (int64_t)cm.n_live);
    fx_profile_extra_int(p, g, "compiled method loads", (int64_t)cm.loads);
    fx_profile_extra_detail(p, g, "compiled method unloads", (int64_t)cm.unloads);
    fx_profile_extra_detail(p, g, "compiled methods without a layout (VMStructs)",
                            (int64_t)cm.no_layout);
    fx_profile_extra_detail(p, g, "OSR compilations (their own entry rule)", (int64_t)cm.osr);
    fx_profile_extra_int(p, g, "stubs (DynamicCodeGenerated)", (int64_t)cm.stubs);
    fx_profile_extra_detail(p, g, "ranges replaced by overlapping newer code",
                            (int64_t)cm.replaced);
    fx_profile_extra_int(p, g, "tables published", (int64_t)cm.publishes);
    fx_coderecent_report(p, g);
    fx_nmethod_scopes_report(p, g);
    fx_profile_extra_detail(p, g, "code heap lookups agreeing with CompiledMethodLoad",
                            (int64_t)cm.heap_agree);
    fx_profile_extra_detail(p, g, "code heap lookups refused (not proven) at CompiledMethodLoad",
                            (int64_t)cm.heap_refused);
    fx_profile_extra_detail(p, g, "code heap lookups differing from CompiledMethodLoad",
                            (int64_t)cm.heap_differ);
    fx_profile_extra_detail(p, g, "pcs found in the code heaps (compiled since the table)",
                            (int64_t)__atomic_load_n(&fx_sig.codeheap_found, __ATOMIC_RELAXED));
    fx_profile_extra_detail(p, g, "code heap lookups by the handler's walks (~8 system calls each)",
                            (int64_t)__atomic_load_n(&fx_sig.codeheap_lookups, __ATOMIC_RELAXED));
    fx_profile_extra_detail(p, g, "code heap lookups refused past a sample's budget (24)",
                            (int64_t)__atomic_load_n(&fx_sig.codeheap_refused, __ATOMIC_RELAXED));
    fx_profile_extra_detail(p, g, "cycles a replaced table waited for readers", (int64_t)cm.busy);
    fx_profile_extra_loss(p, g, "code events lost (no memory, name list full)",
                          (int64_t)(cm.log_dropped + cm.names_full));
    pthread_mutex_unlock(&cm.lock);
}
