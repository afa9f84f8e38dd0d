/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPU kernels shared by the workloads: deterministic, allocation-free except where noted, each
 * returning a value folded into the checksum. Separate methods so profiles show several frames.
 */
package fxagent.bench;

import java.util.Arrays;

final class Kernels {
    private Kernels() {
    }

    /* Integer mixing: an LCG step and an xor-shift per iteration. */
    static long mix(long x, int n) {
        for (int i = 0; i < n; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= x >>> 29;
        }
        return x;
    }

    /* Sieve of Eratosthenes: the number of primes below n (allocates one boolean[n]). */
    static int sieve(int n) {
        boolean[] composite = new boolean[n];
        int count = 0;
        for (int i = 2; i < n; i++) {
            if (!composite[i]) {
                count++;
                for (long j = (long) i * i; j < n; j += i) {
                    composite[(int) j] = true;
                }
            }
        }
        return count;
    }

    /* n x n matrix product of deterministic doubles; returns a hash of the result. */
    static long matmul(int n, long seed) {
        double[] a = new double[n * n];
        double[] b = new double[n * n];
        double[] c = new double[n * n];
        for (int i = 0; i < n * n; i++) {
            a[i] = ((seed + i) % 97) / 97.0;
            b[i] = ((seed * 31 + i) % 89) / 89.0;
        }
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < n; k++) {
                double aik = a[i * n + k];
                for (int j = 0; j < n; j++) {
                    c[i * n + j] += aik * b[k * n + j];
                }
            }
        }
        long h = 0;
        for (double d : c) {
            h = h * 31 + Double.doubleToLongBits(d);
        }
        return h;
    }

    /* Sorts n pseudo-random ints with Arrays.sort (JDK code in the profile). */
    static long sort(int n, long seed) {
        int[] v = new int[n];
        long x = seed;
        for (int i = 0; i < n; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            v[i] = (int) (x >>> 33);
        }
        Arrays.sort(v);
        return v[0] + 31L * v[n / 2] + 961L * v[n - 1];
    }
}
