/* SPDX-License-Identifier: Apache-2.0 */
/* fx_sort (fx_sort.h): introsort in place. Quicksort with a median of three, the smaller side
 * recursed and the larger looped on (so the stack stays O(log n)); runs of at most INSERTION
 * elements by insertion sort; past 2 log2(n) levels a range is heapsorted. Elements are swapped
 * in chunks through a small buffer on the stack, whatever their size. fx_sort_by_u64: a stable
 * LSD radix sort through a copy, every byte's counts taken in one pass over the keys. */
#include "fx_sort.h"

#include <stdint.h>
#include <string.h>

#include "fx_alloc.h"

#define INSERTION 12
#define CHUNK     64

typedef int (*cmp_fn)(const void *, const void *);

static void swap(char *a, char *b, size_t size)
{
    if (a == b)
        return;
    char tmp[CHUNK];
    while (size > 0) {
        size_t k = size < CHUNK ? size : CHUNK;
        memcpy(tmp, a, k);
        memcpy(a, b, k);
        memcpy(b, tmp, k);
        a += k, b += k, size -= k;
    }
}

static void insertion(char *base, size_t n, size_t size, cmp_fn cmp)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && cmp(base + (j - 1) * size, base + j * size) > 0; j--)
            swap(base + (j - 1) * size, base + j * size, size);
}

static void sift_down(char *base, size_t root, size_t n, size_t size, cmp_fn cmp)
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n)
            return;
        if (child + 1 < n && cmp(base + child * size, base + (child + 1) * size) < 0)
            child++;
        if (cmp(base + root * size, base + child * size) >= 0)
            return;
        swap(base + root * size, base + child * size, size);
        root = child;
    }
}

static void heapsort(char *base, size_t n, size_t size, cmp_fn cmp)
{
    for (size_t i = n / 2; i-- > 0;)
        sift_down(base, i, n, size, cmp);
    for (size_t end = n; end-- > 1;) {
        swap(base, base + end * size, size);
        sift_down(base, 0, end, size, cmp);
    }
}

/* Puts the median of the first, middle and last elements first: the pivot. */
static void median_first(char *base, size_t n, size_t size, cmp_fn cmp)
{
    char *lo = base + size, *mid = base + (n / 2) * size, *hi = base + (n - 1) * size;
    if (cmp(mid, lo) < 0)
        swap(mid, lo, size);
    if (cmp(hi, mid) < 0) {
        swap(hi, mid, size);
        if (cmp(mid, lo) < 0)
            swap(mid, lo, size);
    }
    swap(base, mid, size); /* lo <= pivot <= hi: both stop the scans below */
}

/* Hoare's partition around base[0]; returns the pivot's final index. Equal keys stop both
 * scans, so many equal keys still split the range in halves. */
static size_t partition(char *base, size_t n, size_t size, cmp_fn cmp)
{
    size_t i = 0, j = n;
    for (;;) {
        do
            i++;
        while (i < n && cmp(base + i * size, base) < 0);
        do
            j--;
        while (cmp(base + j * size, base) > 0);
        if (i >= j)
            break;
        swap(base + i * size, base + j * size, size);
    }
    swap(base, base + j * size, size);
    return j;
}

static void introsort(char *base, size_t n, size_t size, cmp_fn cmp, unsigned depth)
{
    while (n > INSERTION) {
        if (depth-- == 0) {
            heapsort(base, n, size, cmp);
            return;
        }
        median_first(base, n, size, cmp);
        size_t p = partition(base, n, size, cmp);
        char *right = base + (p + 1) * size;
        size_t nr = n - p - 1;
        if (p < nr) {
            introsort(base, p, size, cmp, depth);
            base = right, n = nr;
        } else {
            introsort(right, nr, size, cmp, depth);
            n = p;
        }
    }
    insertion(base, n, size, cmp);
}

void fx_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (base == NULL || n < 2 || size == 0)
        return;
    unsigned depth = 0;
    for (size_t k = n; k > 1; k >>= 1)
        depth += 2;
    introsort(base, n, size, cmp, depth);
}

static uint64_t key_at(const char *e, size_t key_off)
{
    uint64_t k;
    memcpy(&k, e + key_off, sizeof(k));
    return k;
}

bool fx_sort_by_u64(void *base, size_t n, size_t size, size_t key_off)
{
    if (n < 2)
        return true;
    char *tmp = fx_pages_alloc(n * size);
    if (tmp == NULL)
        return false;
    char *src = base, *dst = tmp;
    /* every byte's counts in one pass over the keys (a pass does not change which keys there
     * are, only their order): 8 tables of 16 KiB in all, instead of a pass over them a byte */
    size_t hist[8][256] = {{0}};
    uint64_t first = key_at(src, key_off), differ = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = key_at(src + i * size, key_off);
        differ |= k ^ first;
        for (int b = 0; b < 8; b++)
            hist[b][(k >> (8 * b)) & 0xff]++;
    }
    for (int shift = 0; shift < 64; shift += 8) {
        if (((differ >> shift) & 0xff) == 0)
            continue; /* every key has this byte: the pass would not move anything */
        size_t *at = hist[shift / 8];
        for (size_t b = 0, sum = 0; b < 256; b++) {
            size_t c = at[b];
            at[b] = sum;
            sum += c;
        }
        if (size == 16) /* the markers' (time, offset) pairs: a copy of constant size, inline */
            for (size_t i = 0; i < n; i++)
                memcpy(dst + at[(key_at(src + i * 16, key_off) >> shift) & 0xff]++ * 16,
                       src + i * 16, 16);
        else
            for (size_t i = 0; i < n; i++)
                memcpy(dst + at[(key_at(src + i * size, key_off) >> shift) & 0xff]++ * size,
                       src + i * size, size);
        char *t = src;
        src = dst, dst = t;
    }
    if (src != base)
        memcpy(base, src, n * size);
    fx_pages_free(tmp, n * size);
    return true;
}
