/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Many threads, most of them idle: THREADS threads, of which BUSY share a fixed number of
 * CPU rounds (the CpuSingle kernels) and the others wake every WAKE_MS ms, do a few
 * microseconds of work and park again, until the busy ones are done. Elapsed time is the busy
 * threads' time. With CPU-time sampling, idle threads cost almost nothing; with wall-clock
 * sampling, every thread is visited every interval, so this is where the two modes differ.
 *
 * Usage: java -cp fxagent-bench.jar fxagent.bench.ManyThreads [threads=500] [busy=4]
 *        [rounds=N] [wake_ms=20] [scale=X]
 */
package fxagent.bench;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

public final class ManyThreads {
    private static volatile boolean done;

    private ManyThreads() {
    }

    static long idleLoop(int id, long wakeNs) {
        long acc = id;
        while (!done) {
            LockSupport.parkNanos(wakeNs);
            acc = Kernels.mix(acc, 200);
        }
        return acc;
    }

    static long busyLoop(AtomicInteger next, int rounds) {
        long acc = 0; /* a sum of per-round results: the same whichever thread ran which round */
        for (int r = next.getAndIncrement(); r < rounds; r = next.getAndIncrement()) {
            acc += CpuSingle.round(r, r + 1);
        }
        return acc;
    }

    public static void main(String[] argv) throws InterruptedException {
        Bench b = new Bench("ManyThreads", argv);
        int threads = b.intArg("threads", 500);
        int busy = Math.min(b.intArg("busy", 4), threads);
        double scale = b.doubleArg("scale", 1.0);
        int rounds = (int) Math.round(b.intArg("rounds", 200) * scale);
        long wakeNs = TimeUnit.MILLISECONDS.toNanos(b.intArg("wake_ms", 20));
        b.checkArgs();
        if (threads < 1 || busy < 1) {
            Bench.usage("ManyThreads: need threads>=1 and busy>=1");
        }
        long[] sums = new long[threads];
        Thread[] ts = new Thread[threads];
        CountDownLatch started = new CountDownLatch(threads - busy);
        for (int t = busy; t < threads; t++) {
            final int id = t;
            ts[t] = new Thread(() -> {
                started.countDown();
                sums[id] = idleLoop(id, wakeNs);
            }, "idle-" + t);
            ts[t].start();
        }
        started.await();
        AtomicInteger next = new AtomicInteger();
        b.start();
        for (int t = 0; t < busy; t++) {
            final int id = t;
            ts[t] = new Thread(() -> sums[id] = busyLoop(next, rounds), "busy-" + t);
            ts[t].start();
        }
        for (int t = 0; t < busy; t++) {
            ts[t].join();
        }
        double ms = b.elapsedMs();
        done = true;
        long acc = 0;
        for (int t = 0; t < threads; t++) {
            ts[t].join();
            acc += t < busy ? sums[t] : 0; /* idle sums vary with wake-ups */
        }
        b.put("threads", Integer.toString(threads));
        b.put("busy", Integer.toString(busy));
        b.put("rounds", Integer.toString(rounds));
        b.finish(ms, acc);
    }
}
