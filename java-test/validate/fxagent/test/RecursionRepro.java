/* SPDX-License-Identifier: Apache-2.0 */
package fxagent.test;

/**
 * Reproducer of docs/VALIDATION.md section 4.3 (seen on JDK 17.0.21, not on JDK 25.0.3): for a
 * thread stopped at the recursive call of a C2-compiled recursion, AsyncGetCallTrace sometimes
 * returns one frame of the recursion less than GetStackTrace: the one right above the frame of
 * run(), into whose compiled code the first level of the recursion is inlined. Under validate
 * mode about 1 % of this thread's checks show it on JDK 17.
 *
 * <p>usage: {@code RecursionRepro SECONDS}
 */
public final class RecursionRepro {
    private RecursionRepro() {}

    static long next(long x) {
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
        return x;
    }

    static long descend(int depth, long seed) {
        if (depth == 0) {
            return Long.toHexString(seed).length();
        }
        long[] frame = new long[2 + (depth & 7)];
        frame[0] = seed;
        return descend(depth - 1, next(seed)) + frame.length;
    }

    static long run(long seed, long deadline) {
        long sum = 0;
        long x = seed;
        while (System.nanoTime() < deadline) {
            for (int i = 0; i < 200; i++) {
                x = next(x);
                sum += descend((int) (x & 31), x);
            }
        }
        return sum;
    }

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 5;
        long sum = run(42, System.nanoTime() + (long) (seconds * 1e9));
        System.out.println("RecursionRepro: checksum " + sum);
    }
}
