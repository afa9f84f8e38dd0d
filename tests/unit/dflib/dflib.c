/* SPDX-License-Identifier: Apache-2.0 */
/* libfxtest_dflib.so for unit.cfi (issue 32): code whose only CFI is .debug_frame (built with -g
 * and without unwind tables), which the build then moves to a separate debug file named by the
 * stripped library's .gnu_debuglink, as a distribution's debug package does. */
#include <stdint.h>

__attribute__((noinline, visibility("default"))) uint64_t fxtest_df_work(uint64_t x, int n);
__attribute__((visibility("default"))) uint64_t fxtest_df_outer(uint64_t x);

__attribute__((noinline, visibility("default"))) uint64_t fxtest_df_work(uint64_t x, int n)
{
    for (int i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

__attribute__((visibility("default"))) uint64_t fxtest_df_outer(uint64_t x)
{
    return fxtest_df_work(x, 64) + 1;
}
