/* SPDX-License-Identifier: Apache-2.0 */
/* The C half of libfxtest_symlib.so, the shared library unit.elfsym names addresses in: an
 * exported function, a local one only .symtab knows (its address leaks through a getter), and
 * the getter. Built by tests/unit/symlib/CMakeLists.txt, with a stripped copy. */
#include <stdint.h>

int fxtest_c_work(int n);
void *fxtest_local_addr(void);

__attribute__((noinline)) static int fxtest_local_helper(int n)
{
    volatile int acc = 0;
    for (int i = 0; i < n; i++)
        acc += i ^ (acc << 1);
    return acc;
}

int fxtest_c_work(int n)
{
    volatile int acc = 0;
    for (int i = 0; i < n; i++)
        acc += fxtest_local_helper(i & 7) * 3;
    return acc;
}

void *fxtest_local_addr(void)
{
    return (void *)(uintptr_t)&fxtest_local_helper;
}
