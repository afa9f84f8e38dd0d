/* SPDX-License-Identifier: Apache-2.0 */
/* The allocator indirection. Failure injection is one atomic countdown shared by all threads:
 * when it reaches zero exactly one allocation fails, then injection is off again. Usage is
 * counted here too (bytes as malloc_usable_size reports them, blocks, pages): the RSS of a JVM
 * moves by megabytes with its own work, so only this tells what the agent itself holds.
 * Blocks of LARGE bytes or more are mappings of their own, unmapped at free: glibc serves
 * them from an arena once its dynamic mmap threshold has risen (a freed mmapped block raises
 * it, up to 32 MiB), and a thread arena's free top is never given back, not even by
 * malloc_trim: it.cycle saw 8.6 MiB stay resident in the drain's arena over 1,000 cycles on
 * JDK 17 (the unwind tables' builders, MiBs each, freed after the build). */
#include "fx_alloc.h"

#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define LARGE     ((size_t)256 << 10)
#define LARGE_MAX 1024 /* live large blocks; past that, malloc serves them */

/* The large blocks live now: nothing is read below a block to tell whose it is (ASan and
 * valgrind would call that an overflow), the address is looked up here instead. */
static struct {
    pthread_mutex_t lock;
    uint32_t n;
    struct {
        void *p;
        size_t len;
    } b[LARGE_MAX];
} large = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* > 0: allocations left before the failing one; 0: injection off. */
static long fail_countdown;

static struct {
    size_t heap_bytes, blocks, pages_bytes;
} use;

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

/* The length of p's mapping if p is a large block, else 0; with take, p leaves the registry. */
static size_t large_len(const void *p, bool take)
{
    if (p == NULL || (uintptr_t)p % page_size() != 0) /* malloc's blocks are rarely aligned so */
        return 0;
    size_t len = 0;
    pthread_mutex_lock(&large.lock);
    for (uint32_t i = 0; i < large.n; i++) {
        if (large.b[i].p == p) {
            len = large.b[i].len;
            if (take)
                large.b[i] = large.b[--large.n];
            break;
        }
    }
    pthread_mutex_unlock(&large.lock);
    return len;
}

static size_t usable(const void *p)
{
    size_t len = large_len(p, false);
    return len != 0 ? len : malloc_usable_size((void *)p);
}

/* fx_alloc_huge_pages: large blocks and pages of HUGE_MIN bytes or more as transparent huge
 * pages (the system's setting "madvise"): a page fault zeroes 2 MiB, not 4 KiB. */
#define HUGE_MIN ((size_t)4 << 20)
static bool huge;

void fx_alloc_huge_pages(bool on)
{
    __atomic_store_n(&huge, on, __ATOMIC_RELAXED);
}

static void maybe_huge(void *p, size_t len)
{
    if (len >= HUGE_MIN && __atomic_load_n(&huge, __ATOMIC_RELAXED))
        madvise(p, len, MADV_HUGEPAGE); /* advice: refused, the pages stay small */
}

/* A mapping of its own (zero-filled, as calloc's), or malloc's block when the registry is full. */
static void *large_map(size_t size)
{
    size_t len, pg = page_size();
    if (__builtin_add_overflow(size, pg - 1, &len))
        return NULL;
    len -= len % pg;
    pthread_mutex_lock(&large.lock);
    void *m = NULL;
    if (large.n < LARGE_MAX) {
        m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            m = NULL;
        else
            large.b[large.n].p = m, large.b[large.n++].len = len, maybe_huge(m, len);
    } else {
        m = calloc(size, 1);
    }
    pthread_mutex_unlock(&large.lock);
    return m;
}

/* A large block grown or shrunk in place of a copy: its pages moved by the kernel (mremap), the
 * new ones zero as large_map's; NULL when p is not a large block or the kernel refuses (the caller
 * copies then). The writers' packed markers grow to hundreds of MiB by doubling: a copy of each
 * was 3 % of fxprof convert's CPU, and the pages faulted twice (docs/BENCHMARKS.md, session 19). */
static void *large_remap(void *p, size_t size)
{
    size_t len, pg = page_size();
    if (p == NULL || (uintptr_t)p % pg != 0 || __builtin_add_overflow(size, pg - 1, &len))
        return NULL;
    len -= len % pg;
    void *q = NULL;
    pthread_mutex_lock(&large.lock);
    for (uint32_t i = 0; i < large.n; i++) {
        if (large.b[i].p != p)
            continue;
        q = mremap(p, large.b[i].len, len, MREMAP_MAYMOVE);
        if (q == MAP_FAILED)
            q = NULL;
        else
            large.b[i].p = q, large.b[i].len = len, maybe_huge(q, len);
        break;
    }
    pthread_mutex_unlock(&large.lock);
    return q;
}

static void raw_free(void *p)
{
    size_t len = large_len(p, true);
    if (len != 0)
        munmap(p, len);
    else
        free(p);
}

/* This thread's tally (fx_alloc_tally_begin), or NULL. */
static __thread struct fx_alloc_tally *tally;

static void tally_add(size_t n)
{
    size_t now = tally->now + n; /* one writer: this thread */
    __atomic_store_n(&tally->now, now, __ATOMIC_RELAXED);
    if (now > tally->peak)
        __atomic_store_n(&tally->peak, now, __ATOMIC_RELAXED);
}

static void tally_sub(size_t n)
{
    __atomic_store_n(&tally->now, tally->now > n ? tally->now - n : 0, __ATOMIC_RELAXED);
}

void fx_alloc_tally_begin(struct fx_alloc_tally *t)
{
    __atomic_store_n(&t->now, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&t->peak, 0, __ATOMIC_RELAXED);
    tally = t;
}

void fx_alloc_tally_end(void)
{
    tally = NULL;
}

static void *counted(void *p)
{
    if (p != NULL) {
        size_t n = usable(p);
        __atomic_add_fetch(&use.heap_bytes, n, __ATOMIC_RELAXED);
        __atomic_add_fetch(&use.blocks, 1, __ATOMIC_RELAXED);
        if (tally != NULL)
            tally_add(n);
    }
    return p;
}

static void uncounted(void *p)
{
    if (p != NULL) {
        size_t n = usable(p);
        __atomic_sub_fetch(&use.heap_bytes, n, __ATOMIC_RELAXED);
        __atomic_sub_fetch(&use.blocks, 1, __ATOMIC_RELAXED);
        if (tally != NULL)
            tally_sub(n);
    }
}

void fx_alloc_usage(struct fx_alloc_usage *u)
{
    u->heap_bytes = __atomic_load_n(&use.heap_bytes, __ATOMIC_RELAXED);
    u->blocks = __atomic_load_n(&use.blocks, __ATOMIC_RELAXED);
    u->pages_bytes = __atomic_load_n(&use.pages_bytes, __ATOMIC_RELAXED);
}

bool fx_alloc_process_malloc(size_t *in_use, size_t *from_system)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    struct mallinfo2 mi = mallinfo2(); /* sums every arena, under each arena's lock */
    *in_use = mi.uordblks + mi.hblkhd;
    *from_system = mi.arena + mi.hblkhd;
    return mi.arena != 0; /* 0: another allocator (ASan's) serves malloc, glibc's is unused */
#else
    *in_use = *from_system = 0;
    return false;
#endif
}

void fx_alloc_fail_after(long n)
{
    __atomic_store_n(&fail_countdown, n > 0 ? n : 0, __ATOMIC_SEQ_CST);
}

/* True when this allocation is the injected failure. The CAS loop keeps concurrent callers from
 * both consuming the last tick (or driving the counter negative). */
static int injected_failure(void)
{
    long cur = __atomic_load_n(&fail_countdown, __ATOMIC_RELAXED);
    while (cur > 0) {
        if (__atomic_compare_exchange_n(&fail_countdown, &cur, cur - 1, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_RELAXED))
            return cur == 1;
    }
    return 0;
}

void *fx_malloc(size_t size)
{
    if (injected_failure())
        return NULL;
    return counted(size >= LARGE ? large_map(size) : malloc(size ? size : 1));
}

void *fx_calloc(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total))
        return NULL;
    if (injected_failure())
        return NULL;
    return counted(total >= LARGE ? large_map(total) : calloc(total ? total : 1, 1));
}

void *fx_reallocarray(void *p, size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total))
        return NULL;
    if (injected_failure())
        return NULL;
    /* realloc(p, 0) may free p and return NULL, which callers would read as failure with p
     * still live; asking for one byte keeps the contract "NULL means p untouched". */
    size_t old = p != NULL ? usable(p) : 0;
    void *q;
    if (total >= LARGE && (q = large_remap(p, total)) != NULL) {
        /* moved by the kernel, no bytes copied */
    } else if (p != NULL && large_len(p, false) == 0 && total < LARGE) {
        q = realloc(p, total ? total : 1);
    } else { /* into or out of a mapping of its own: a new block, the old one's bytes copied */
        q = total >= LARGE ? large_map(total) : malloc(total ? total : 1);
        if (q != NULL && p != NULL) {
            memcpy(q, p, old < total ? old : total);
            raw_free(p);
        }
    }
    if (q == NULL)
        return NULL;
    __atomic_sub_fetch(&use.heap_bytes, old, __ATOMIC_RELAXED);
    if (p != NULL)
        __atomic_sub_fetch(&use.blocks, 1, __ATOMIC_RELAXED);
    if (tally != NULL)
        tally_sub(old);
    return counted(q);
}

void fx_free(void *p)
{
    uncounted(p);
    raw_free(p);
}

int fx_grow(void *arrayp, size_t *cap, size_t used, size_t need, size_t elem, size_t first)
{
    size_t want;
    if (__builtin_add_overflow(used, need, &want))
        return -1;
    if (want <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : first;
    while (ncap < want) {
        if (__builtin_mul_overflow(ncap, 2, &ncap))
            return -1;
    }
    void *p;
    memcpy(&p, arrayp, sizeof(p));
    p = fx_reallocarray(p, ncap, elem);
    if (!p)
        return -1;
    memcpy(arrayp, &p, sizeof(p));
    *cap = ncap;
    return 0;
}

char *fx_strdup(const char *s)
{
    return fx_strndup(s, strlen(s));
}

char *fx_strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    if (len == SIZE_MAX)
        return NULL;
    char *d = fx_malloc(len + 1);
    if (!d)
        return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

void *fx_pages_alloc(size_t size)
{
    if (size == 0 || injected_failure())
        return NULL;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    maybe_huge(p, size);
    __atomic_add_fetch(&use.pages_bytes, size, __ATOMIC_RELAXED);
    return p;
}

void fx_pages_free(void *p, size_t size)
{
    if (p != NULL && munmap(p, size) == 0)
        __atomic_sub_fetch(&use.pages_bytes, size, __ATOMIC_RELAXED);
}
