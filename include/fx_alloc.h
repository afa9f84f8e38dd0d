/* SPDX-License-Identifier: Apache-2.0 */
/* The one allocator indirection: every allocation of fxagent goes through here, so tests can
 * make the Nth allocation fail and the signal path can be checked to call none of it. */
#ifndef FX_ALLOC_H
#define FX_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

void *fx_malloc(size_t size);
void *fx_calloc(size_t n, size_t size);
/* Like realloc, but n * size is checked for overflow (NULL, old block untouched). */
void *fx_reallocarray(void *p, size_t n, size_t size);
void fx_free(void *p);
/* Growth of an array: makes room for `need` more elements of `elem` bytes after `used` in the
 * array whose address is `arrayp` (a T ** passed as void *) and whose capacity, in elements, is
 * *cap, doubling from `first`. 0 on success; -1 (overflow or no memory) leaves both unchanged. */
int fx_grow(void *arrayp, size_t *cap, size_t used, size_t need, size_t elem, size_t first);
char *fx_strdup(const char *s);
/* Zeroed memory of its own pages (mmap), freed with the same size: for large buffers that must
 * go back to the system when freed, whichever thread frees them (malloc returns a block to the
 * arena of the thread that allocated it, and glibc's malloc_trim leaves a thread arena's top
 * resident: a stopped agent kept ~8 MiB of freed rings so). Counts for fx_alloc_fail_after. */
void *fx_pages_alloc(size_t size);
void fx_pages_free(void *p, size_t size);
char *fx_strndup(const char *s, size_t n);
/* From now on, blocks of 4 MiB or more (fx_malloc's own mappings, fx_pages_alloc's) are advised
 * as transparent huge pages (MADV_HUGEPAGE), fewer page faults for the same bytes; for a
 * process that fills GBs of new memory (fxprof convert of a JFR recording), not the agent. */
void fx_alloc_huge_pages(bool on);

/* What fxagent holds now through this file: heap bytes (malloc_usable_size of each live block),
 * live blocks, and pages of fx_pages_alloc. Memory that libraries allocate for us (libdw while
 * a table is built, libstdc++'s demangler) is not in it. */
struct fx_alloc_usage {
    size_t heap_bytes, blocks, pages_bytes;
};
void fx_alloc_usage(struct fx_alloc_usage *u);

/* One thread's own allocations, for a task that frees what it allocates (the push thread's
 * conversion: docs/FLEET.md "Memory"): between begin and end, every block this thread
 * allocates or frees through here moves `now`, and `peak` keeps its highest. Other threads
 * may read both (relaxed atomics); blocks freed by another thread are not seen. */
struct fx_alloc_tally {
    size_t now, peak;
};
void fx_alloc_tally_begin(struct fx_alloc_tally *t);
void fx_alloc_tally_end(void);

/* What glibc's malloc holds for the whole process (every arena, the JVM's and the libraries'
 * blocks too): bytes in use and bytes taken from the system (mallinfo2). With the JVM's own
 * count (NMT) and fx_alloc_usage, it tells malloc'd memory nobody counts (it.cycle's leak check).
 * False where the C library does not say (not glibc, or a sanitizer's allocator in front). */
bool fx_alloc_process_malloc(size_t *in_use, size_t *from_system);

/* Tests only: the nth allocation from now fails (1 = the next one); 0 turns injection off. */
void fx_alloc_fail_after(long n);

#endif
