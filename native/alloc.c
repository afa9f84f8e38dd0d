/* SPDX-License-Identifier: Apache-2.0 */
/* The allocator indirection. Failure injection is one atomic countdown shared by all threads:
 * when it reaches zero exactly one allocation fails, then injection is off again. Usage is
 * counted here too (bytes as malloc_usable_size reports them, blocks, pages): the RSS of a JVM
 * moves by megabytes with its own work, so only this tells what the agent itself holds. */
#include "fx_alloc.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* > 0: allocations left before the failing one; 0: injection off. */
static long fail_countdown;

static struct {
    size_t heap_bytes, blocks, pages_bytes;
} use;

static void *counted(void *p)
{
    if (p != NULL) {
        __atomic_add_fetch(&use.heap_bytes, malloc_usable_size(p), __ATOMIC_RELAXED);
        __atomic_add_fetch(&use.blocks, 1, __ATOMIC_RELAXED);
    }
    return p;
}

static void uncounted(void *p)
{
    if (p != NULL) {
        __atomic_sub_fetch(&use.heap_bytes, malloc_usable_size(p), __ATOMIC_RELAXED);
        __atomic_sub_fetch(&use.blocks, 1, __ATOMIC_RELAXED);
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
    return counted(malloc(size ? size : 1));
}

void *fx_calloc(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total))
        return NULL;
    if (injected_failure())
        return NULL;
    return counted(calloc(total ? total : 1, 1));
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
    size_t old = p != NULL ? malloc_usable_size(p) : 0;
    void *q = realloc(p, total ? total : 1);
    if (q == NULL)
        return NULL;
    __atomic_sub_fetch(&use.heap_bytes, old, __ATOMIC_RELAXED);
    if (p != NULL)
        __atomic_sub_fetch(&use.blocks, 1, __ATOMIC_RELAXED);
    return counted(q);
}

void fx_free(void *p)
{
    uncounted(p);
    free(p);
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
    __atomic_add_fetch(&use.pages_bytes, size, __ATOMIC_RELAXED);
    return p;
}

void fx_pages_free(void *p, size_t size)
{
    if (p != NULL && munmap(p, size) == 0)
        __atomic_sub_fetch(&use.pages_bytes, size, __ATOMIC_RELAXED);
}
