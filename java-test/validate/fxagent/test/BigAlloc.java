/* SPDX-License-Identifier: Apache-2.0 */
package fxagent.test;

/**
 * The workload of validate mode's recovered-stack test (docs/VALIDATION.md 5.1): threads that
 * allocate large arrays from compiled code, so that much of their time is spent in the JVM's
 * allocation slow path zeroing the array (thread state "in VM", entered from a C1 or C2 runtime
 * stub that leaves the frame anchor's pc unset). A thread suspended there keeps running until it
 * leaves the VM, AsyncGetCallTrace answers "not in Java" (-3) and the probe recovers its
 * compiled frames from the anchor, which validate mode then compares with GetStackTrace.
 *
 * <p>usage: {@code BigAlloc SECONDS [THREADS]} (default 2 threads). Prints one line with a
 * checksum, so that nothing is optimized away.
 */
public final class BigAlloc {
    private BigAlloc() {}

    static long fill(int n, long seed) {
        long[] a = new long[n]; /* 8 * n bytes, zeroed in the VM outside any TLAB */
        a[(int) (seed % n)] = seed;
        return a[(int) ((seed * 7) % n)] + a.length;
    }

    static long outer(int n, long seed) {
        return fill(n, seed) + fill(n / 2, seed + 1);
    }

    public static void main(String[] args) throws InterruptedException {
        long seconds = Long.parseLong(args[0]);
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        long[] sums = new long[threads];
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int me = t;
            ts[t] = new Thread(() -> {
                long s = 0;
                for (long i = 0; System.nanoTime() < end; i++) {
                    s += outer(1 << 21, i + me);
                }
                sums[me] = s;
            }, "bigalloc-" + t);
            ts[t].start();
        }
        long sum = 0;
        for (int t = 0; t < threads; t++) {
            ts[t].join();
            sum += sums[t];
        }
        System.out.println("BigAlloc: " + threads + " threads, checksum " + sum);
    }
}
