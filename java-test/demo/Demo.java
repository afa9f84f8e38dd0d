/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fxagent's demo workload: named threads whose CPU time is split between known methods in known
 * proportions, so a profile of it can be checked against the truth.
 *
 * The split is enforced by the thread CPU clock (ThreadMXBean.getCurrentThreadCpuTime), never by
 * iteration counts, so it does not depend on JIT or machine speed. Truth table (share of the
 * thread's CPU time, hence of its samples in cpu/itimer mode):
 *
 *   thread     method              share
 *   worker-1   Demo.alpha          50 %
 *   worker-1   Demo.beta           30 %
 *   worker-1   Demo.gamma          20 %
 *   worker-2   Demo.hashing       100 %   (HashMap/String work, callees included)
 *   main       Thread.join         waits (almost no CPU; visible only in wall mode)
 *
 * worker-1 repeats {alpha 5u, beta 3u, gamma 2u} where the unit u is drawn per cycle from
 * [5, 15] ms (fixed seed). Each call thus spans several 10 ms sampling intervals: a sampler that
 * fires every 10 ms of thread CPU puts into each call its expected number of samples give or take
 * one, so the shares vary much less than independent draws would: with 300 samples they came
 * within 1.2 percentage points of the truth in six runs, where independent draws have a standard
 * deviation of 2.9. A cycle near the interval does the opposite (consecutive samples fall at
 * nearly the same phase of the cycle): with u in [0.5, 1.5] ms alpha's share ranged from 44 to
 * 57 %. The random lengths keep the calls from locking in phase with the interval.
 *
 * The methods need no -XX:CompileCommand=dontinline: when the JIT inlines them into worker1(),
 * AsyncGetCallTrace still reports them as frames of their own, from the compiled code's debug
 * info (the agent enables CompiledMethodLoad events, which makes HotSpot keep that info at every
 * PC, as -XX:+DebugNonSafepoints does). The integration tests measure the shares without it.
 *
 * Usage: java -cp fxagent-demo.jar fxagent.demo.Demo [SECONDS]   (default 5)
 * Each worker burns SECONDS of its own CPU time, so with two free cores the run takes about SECONDS
 * of wall time; on a busy machine it takes longer but yields the same number of cpu-mode samples.
 * A wall-clock cap (4 x SECONDS + 30 s) ends the run on a starved machine.
 * At the end it prints the CPU time measured in each method and a checksum of all the work, so
 * the JIT cannot discard any of it.
 */
package fxagent.demo;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

public final class Demo {
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    /* Work between two reads of the CPU clock: small against 2 ms, large against the ~1 us clock. */
    private static final int CHUNK = 16384;

    private final long budgetNs;
    private final long wallDeadlineNs;
    private volatile boolean capped;

    /* CPU nanoseconds measured in each method; written by the worker, read after join. */
    private long alphaNs, betaNs, gammaNs, hashingNs, worker1Ns, worker2Ns;
    private long sum1, sum2;

    private Demo(double seconds) {
        budgetNs = (long) (seconds * 1e9);
        wallDeadlineNs = System.nanoTime() + 4 * budgetNs + 30_000_000_000L;
    }

    private static long cpuNanos() {
        return MX.getCurrentThreadCpuTime();
    }

    private boolean overWallCap() {
        if (System.nanoTime() - wallDeadlineNs > 0) {
            capped = true;
        }
        return capped;
    }

    /* 50 % of worker-1: integer mixing (an LCG step and xor-shifts). */
    static long alpha(long budget, long x) {
        long end = cpuNanos() + budget;
        do {
            for (int i = 0; i < CHUNK; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
                x ^= x >>> 29;
            }
        } while (cpuNanos() < end);
        return x;
    }

    /* 30 % of worker-1: floating point (square roots of a running sum). */
    static long beta(long budget, long x) {
        long end = cpuNanos() + budget;
        double d = (x & 0xffff) + 1.0;
        do {
            for (int i = 0; i < CHUNK; i++) {
                d = Math.sqrt(d * d + i) + 0.5;
            }
        } while (cpuNanos() < end);
        return x ^ Double.doubleToLongBits(d);
    }

    /* 20 % of worker-1: a rolling checksum over an int array (length a power of two). */
    static long gamma(long budget, long x, int[] data) {
        long end = cpuNanos() + budget;
        int h = (int) x;
        do {
            for (int i = 0; i < CHUNK; i++) {
                int j = i & (data.length - 1);
                h = 31 * h + data[j];
                data[j] = h >>> 3;
            }
        } while (cpuNanos() < end);
        return x + h;
    }

    /* 100 % of worker-2: strings built, hashed and looked up in a HashMap. */
    static long hashing(long budget, Demo demo) {
        long end = cpuNanos() + budget;
        long acc = 0;
        int round = 0;
        do {
            Map<String, Integer> map = new HashMap<>();
            for (int i = 0; i < 512; i++) {
                map.put("key-" + round + "-" + i, i);
            }
            for (int i = 0; i < 1024; i++) {
                Integer v = map.get("key-" + round + "-" + (i & 511));
                acc += v == null ? 1 : v;
            }
            acc = acc * 31 + map.size();
            round++;
        } while (cpuNanos() < end && !demo.overWallCap());
        return acc;
    }

    private void worker1() {
        Random rnd = new Random(42);
        int[] data = new int[1024];
        for (int i = 0; i < data.length; i++) {
            data[i] = rnd.nextInt();
        }
        long x = 1;
        long start = cpuNanos();
        while (cpuNanos() - start < budgetNs && !overWallCap()) {
            long unit = 5_000_000 + rnd.nextInt(10_000_001); // 5 .. 15 ms
            long t0 = cpuNanos();
            x = alpha(5 * unit, x);
            long t1 = cpuNanos();
            x = beta(3 * unit, x);
            long t2 = cpuNanos();
            x = gamma(2 * unit, x, data);
            long t3 = cpuNanos();
            alphaNs += t1 - t0;
            betaNs += t2 - t1;
            gammaNs += t3 - t2;
        }
        worker1Ns = cpuNanos() - start;
        sum1 = x;
    }

    private void worker2() {
        long start = cpuNanos();
        sum2 = hashing(budgetNs, this);
        hashingNs = cpuNanos() - start;
        worker2Ns = hashingNs;
    }

    private static double pct(long part, long whole) {
        return whole == 0 ? 0 : 100.0 * part / whole;
    }

    public static void main(String[] args) throws InterruptedException {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 5.0;
        if (!(seconds > 0 && seconds <= 3600)) {
            System.err.println("fxagent demo: SECONDS must be in (0, 3600], got " + args[0]);
            System.exit(2);
        }
        if (!MX.isCurrentThreadCpuTimeSupported()) {
            System.err.println("fxagent demo: this JVM cannot measure thread CPU time");
            System.exit(2);
        }
        MX.setThreadCpuTimeEnabled(true);
        Thread.currentThread().setName("main");
        long wall0 = System.nanoTime();
        Demo demo = new Demo(seconds);
        Thread w1 = new Thread(demo::worker1, "worker-1");
        Thread w2 = new Thread(demo::worker2, "worker-2");
        w1.start();
        w2.start();
        w1.join(); // main waits here: idle in wall mode, absent in cpu mode
        w2.join();
        long elapsedMs = (System.nanoTime() - wall0) / 1_000_000;
        long w1ms = demo.worker1Ns / 1_000_000;
        System.out.printf(Locale.ROOT,
                "fxagent demo: worker-1 cpu %d ms: alpha %.1f%% beta %.1f%% gamma %.1f%%%n", w1ms,
                pct(demo.alphaNs, demo.worker1Ns), pct(demo.betaNs, demo.worker1Ns),
                pct(demo.gammaNs, demo.worker1Ns));
        System.out.printf(Locale.ROOT, "fxagent demo: worker-2 cpu %d ms: hashing %.1f%%%n",
                demo.worker2Ns / 1_000_000, pct(demo.hashingNs, demo.worker2Ns));
        System.out.printf(Locale.ROOT, "fxagent demo: elapsed %d ms%s, checksum %016x%n", elapsedMs,
                demo.capped ? " (wall-clock cap reached)" : "", demo.sum1 ^ demo.sum2);
    }
}
