/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Single-threaded CPU work: ROUNDS rounds of four kernels (integer mixing, a sieve, a matrix
 * product, a sort). One busy thread, so any profiler cost lands on the critical path.
 *
 * Usage: java -cp fxagent-bench.jar fxagent.bench.CpuSingle [rounds=N] [scale=X]
 */
package fxagent.bench;

public final class CpuSingle {
    private CpuSingle() {
    }

    static long round(int r, long acc) {
        acc = Kernels.mix(acc + r, 2_000_000);
        acc += Kernels.sieve(300_000);
        acc ^= Kernels.matmul(72, r);
        acc += Kernels.sort(120_000, acc);
        return acc;
    }

    public static void main(String[] argv) {
        Bench b = new Bench("CpuSingle", argv);
        int rounds = (int) Math.round(b.intArg("rounds", 120) * b.doubleArg("scale", 1.0));
        b.checkArgs();
        b.start();
        long acc = 1;
        for (int r = 0; r < rounds; r++) {
            acc = round(r, acc);
        }
        double ms = b.elapsedMs();
        b.put("rounds", Integer.toString(rounds));
        b.finish(ms, acc);
    }
}
