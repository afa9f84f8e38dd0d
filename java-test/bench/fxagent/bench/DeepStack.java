/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPU work at the bottom of a deep Java stack, for the per-sample cost of walking it.
 * Each "descent" recurses DEPTH levels and then runs LEAF iterations of integer mixing; DESCENTS
 * descents per thread. The leaf work is much longer than the descent, so nearly every sample
 * sees the full depth (DEPTH frames of DeepStack.level plus a few below).
 *
 * variety=1: every descent takes the same path (one stack, the cost of depth alone).
 * variety=4: each level calls one of four distinct methods, chosen from a per-descent seed, so
 *            practically every sample has a stack never seen before (the profile's stack table
 *            grows with the samples: the worst case for memory and file size).
 *
 * Usage: java -cp fxagent-bench.jar fxagent.bench.DeepStack [depth=200] [descents=N] [leaf=N]
 *        [variety=1|4] [threads=1] [scale=X]
 * Runs in threads of 64 MB stacks, so depth=1000 (and deeper) is safe.
 */
package fxagent.bench;

public final class DeepStack {
    private final int leaf;
    private final int variety;

    private DeepStack(int leaf, int variety) {
        this.leaf = leaf;
        this.variety = variety;
    }

    /* splitmix64's finaliser: every (seed, level) pair gets independent bits, so paths differ. */
    private static int choice(long seed, int d) {
        long x = seed + d * 0x9E3779B97F4A7C15L;
        x = (x ^ (x >>> 30)) * 0xBF58476D1CE4E5B9L;
        x = (x ^ (x >>> 27)) * 0x94D049BB133111EBL;
        return (int) (x ^ (x >>> 31)) & 3;
    }

    long level(int d, long seed) {
        if (d == 0) {
            return Kernels.mix(seed, leaf);
        }
        if (variety == 1) {
            return level(d - 1, seed) + 1;
        }
        switch (choice(seed, d)) {
            case 0:
                return a(d - 1, seed) + 1;
            case 1:
                return b(d - 1, seed) + 2;
            case 2:
                return c(d - 1, seed) + 3;
            default:
                return level(d - 1, seed) + 4;
        }
    }

    long a(int d, long seed) {
        return level(d, seed) ^ 1;
    }

    long b(int d, long seed) {
        return level(d, seed) ^ 2;
    }

    long c(int d, long seed) {
        return level(d, seed) ^ 3;
    }

    public static void main(String[] argv) throws InterruptedException {
        Bench bench = new Bench("DeepStack", argv);
        int depth = bench.intArg("depth", 200);
        int leaf = bench.intArg("leaf", 100_000);
        int variety = bench.intArg("variety", 1);
        int threads = bench.intArg("threads", 1);
        double scale = bench.doubleArg("scale", 1.0);
        int descents = (int) Math.round(bench.intArg("descents", 8_000) * scale);
        bench.checkArgs();
        if (depth < 1 || leaf < 1 || (variety != 1 && variety != 4) || threads < 1) {
            Bench.usage("DeepStack: need depth>=1, leaf>=1, variety 1 or 4, threads>=1");
        }
        DeepStack ds = new DeepStack(leaf, variety);
        long[] sums = new long[threads];
        Thread[] ts = new Thread[threads];
        bench.start();
        for (int t = 0; t < threads; t++) {
            final int id = t;
            ts[t] = new Thread(null, () -> {
                long acc = id;
                for (int i = 0; i < descents; i++) {
                    acc += ds.level(depth, acc * 31 + i);
                }
                sums[id] = acc;
            }, "deep-" + t, 64L << 20);
            ts[t].start();
        }
        long acc = 0;
        for (int t = 0; t < threads; t++) {
            ts[t].join();
            acc = acc * 31 + sums[t];
        }
        double ms = bench.elapsedMs();
        bench.put("depth", Integer.toString(depth));
        bench.put("variety", Integer.toString(variety));
        bench.put("threads", Integer.toString(threads));
        bench.put("descents", Integer.toString(descents));
        bench.finish(ms, acc);
    }
}
