/* SPDX-License-Identifier: Apache-2.0 */
/* An in-place sort with qsort's signature. glibc's qsort sorts a large array by merge sort into
 * a malloc'ed copy of it (up to the array's size), which grew a thread arena of the agent by
 * 3.8 MiB that glibc then kept resident; this one allocates nothing (introsort: quicksort,
 * insertion sort for short runs, heapsort past a depth bound, so O(n log n) at worst). Not
 * stable: comparators that need an order for equal keys must break the tie themselves. */
#ifndef FX_SORT_H
#define FX_SORT_H

#include <stddef.h>

void fx_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
