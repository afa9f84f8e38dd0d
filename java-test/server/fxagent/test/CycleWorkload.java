// SPDX-License-Identifier: Apache-2.0
package fxagent.test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The workload of the start/stop cycle test (tests/it/cycle_test.sh): a busy JVM whose
 * threads come and go, profiled again and again.
 *
 * <pre>
 *   --workers N      busy threads "cycle-worker-1".."N": each loop runs the hot method of the
 *                    current phase for 3 units of work and its cold one for 1 (75 % / 25 %);
 *                    a loop's unit length is drawn anew (0.5x to 1.5x, per-thread
 *                    pseudo-random), so the loop has no fixed period: a loop of a fixed ~1 ms
 *                    locked in phase with the 4 ms tick on which a thread's CPU timer fires
 *                    and gave evenHot 83-87 % of a 1 ms recording now and then
 *   --phase FILE     the phase (a number) the test asks for; polled every 2 ms. Even phases run
 *                    evenHot/evenCold, odd ones oddHot/oddCold, so a recording taken in one
 *                    phase must hold no frame of the other
 *   --ack FILE       written with the phase once every worker has left the previous one
 *   --ready FILE     created once the workers run
 *   --stop FILE      exit 0 when it appears
 *   --exit-now       at --stop, System.exit(0) at once, workers still running (the race test's
 *                    VM death while a command arrives)
 * </pre>
 * Besides the workers, a "churn" thread starts a short-lived thread ("cycle-churn-K") every
 * 20 ms that works about 5 ms and ends, so threads start and end all through the cycles.
 */
public final class CycleWorkload {
    static final AtomicLong SINK = new AtomicLong();
    static volatile long phase;
    static volatile boolean stopping;

    private CycleWorkload() {}

    static long unit(long x) {
        return unit(x, 200_000);
    }

    static long unit(long x, int turns) {
        for (int i = 0; i < turns; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
        }
        return x;
    }

    static long evenHot(long x, int turns) {
        return unit(unit(unit(x, turns), turns), turns);
    }

    static long evenCold(long x, int turns) {
        return unit(x, turns);
    }

    static long oddHot(long x, int turns) {
        return unit(unit(unit(x, turns), turns), turns);
    }

    static long oddCold(long x, int turns) {
        return unit(x, turns);
    }

    static long churnWork(long x) {
        long end = System.nanoTime() + 5_000_000L;
        while (System.nanoTime() < end) {
            x = unit(x);
        }
        return x;
    }

    static void worker(int index, AtomicLongArray seen) {
        long x = index;
        long r = 0x9E3779B97F4A7C15L * (index + 1);
        while (!stopping) {
            long p = phase;
            r ^= r << 13;
            r ^= r >>> 7;
            r ^= r << 17;
            int turns = 100_000 + (int) Long.remainderUnsigned(r, 200_001);
            if ((p & 1) == 0) {
                x = evenHot(x, turns);
                x = evenCold(x, turns);
            } else {
                x = oddHot(x, turns);
                x = oddCold(x, turns);
            }
            seen.set(index, p);
        }
        SINK.addAndGet(x);
    }

    static void churn() throws InterruptedException {
        long k = 0;
        while (!stopping) {
            Thread t = new Thread(() -> SINK.addAndGet(churnWork(System.nanoTime())),
                    "cycle-churn-" + (++k));
            t.start();
            Thread.sleep(20);
        }
    }

    public static void main(String[] args) throws Exception {
        int workers = 2;
        Path phaseFile = null, ack = null, ready = null, stop = null;
        boolean exitNow = false;
        for (int i = 0; i < args.length; i += 2) {
            switch (args[i]) {
                case "--workers": workers = Integer.parseInt(args[i + 1]); break;
                case "--phase": phaseFile = Paths.get(args[i + 1]); break;
                case "--ack": ack = Paths.get(args[i + 1]); break;
                case "--ready": ready = Paths.get(args[i + 1]); break;
                case "--stop": stop = Paths.get(args[i + 1]); break;
                case "--exit-now": exitNow = true; i--; break;
                default: throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        AtomicLongArray seen = new AtomicLongArray(workers);
        Thread[] ws = new Thread[workers];
        for (int i = 0; i < workers; i++) {
            final int index = i;
            ws[i] = new Thread(() -> worker(index, seen), "cycle-worker-" + (i + 1));
            ws[i].start();
        }
        Thread ch = new Thread(() -> {
            try {
                churn();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "cycle-churn");
        ch.start();
        Files.write(ready, new byte[0]);
        long acked = -1;
        while (!Files.exists(stop)) {
            long want = acked;
            try {
                want = Long.parseLong(new String(Files.readAllBytes(phaseFile),
                        StandardCharsets.US_ASCII).trim());
            } catch (java.io.IOException | NumberFormatException e) {
                // not written yet, or being replaced
            }
            if (want != acked) {
                phase = want;
                for (int i = 0; i < workers; i++) {
                    while (seen.get(i) != want) {
                        Thread.sleep(1);
                    }
                }
                Path tmp = Paths.get(ack + ".tmp");
                Files.write(tmp, Long.toString(want).getBytes(StandardCharsets.US_ASCII));
                Files.move(tmp, ack, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
                acked = want;
            }
            Thread.sleep(2);
        }
        if (exitNow) {
            System.exit(0);
        }
        stopping = true;
        for (Thread w : ws) {
            w.join();
        }
        ch.join();
        System.out.println("done sink=" + SINK.get());
    }
}
