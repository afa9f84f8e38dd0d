// SPDX-License-Identifier: Apache-2.0
package fxagent.stress;

/** The class the unload storm defines in a fresh loader each round (StressWorkload.unload). */
public final class StressHot {
    private StressHot() {}

    /** Busy for about MILLIS ms, so samples land in this class before it is dropped. */
    public static long run(long millis) {
        long end = System.nanoTime() + millis * 1_000_000L;
        long x = 1;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 10_000; i++) {
                x = x * 31 + i;
            }
        }
        return x;
    }
}
