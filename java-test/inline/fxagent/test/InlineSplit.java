/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The inlined-method attribution reproducer (docs/VALIDATION.md section 4.5): one thread,
 * "inline-worker", serves "requests" in a loop; each request calls InlineSplit.sibling (string
 * and map work, like ServerWorkload.parseRequest) once, then InlineSplit.hot (a checksum of a
 * byte array, like ServerWorkload.hotChecksum) in a loop. C2 inlines both into request().
 *
 * The split is enforced by the thread CPU clock (ThreadMXBean.getCurrentThreadCpuTime), never
 * by iteration counts: the hot loop of a request runs until it has used HOT_PER_SIBLING (3)
 * times the CPU time that request's sibling call used, so hot is about 75 % and sibling 25 % of
 * the CPU spent in the two, whatever the JIT and the machine. The CPU clock reads themselves are
 * calls to a native method (their own frames in a profile); the hot loop reads the clock every
 * 4 calls of hot (about 20 us), so they cost about 2 % of the worker's CPU.
 *
 * Why it reproduces docs/VALIDATION.md section 4.5: sibling boxes an int (Integer.valueOf, which
 * C2 inlines late, after parsing) and concatenates a string (invokedynamic, also inlined late).
 * When non-safepoint debug information is recorded (an agent enables CompiledMethodLoad, or
 * -XX:+DebugNonSafepoints), the debug records that cover most of hot's unrolled loop carry the
 * JVM state of a late-inlined call in sibling, and AsyncGetCallTrace names sibling for samples
 * in hot. Run it with
 * -XX:CompileCommand=inline,fxagent.test.InlineSplit::sibling (and ::hot): without it, whether C2
 * inlines sibling depends on whether sibling's own compiled code is already big by then.
 *
 * Usage: java -cp CLASSES fxagent.test.InlineSplit [SECONDS]   (default 4; CPU seconds of the
 * worker; a wall-clock cap of 4 x SECONDS + 30 s ends the run on a starved machine). At the end it
 * prints one line:
 *   inline-split: worker cpu N ms: hot H% sibling S% clock C% requests R checksum X
 * where H and S are the shares of hot and sibling in the CPU time measured around them, and C
 * is the share of the worker's CPU spent outside those measurements.
 */
package fxagent.test;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

public final class InlineSplit {
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    private static final int HOT_PER_SIBLING = 3;

    private final byte[] buffer = new byte[4096];
    private final Map<String, Integer> map = new HashMap<>();
    private long hotNs, siblingNs, workerNs, requests, sum;

    private InlineSplit() {
        for (int i = 0; i < buffer.length; i++)
            buffer[i] = (byte) (i * 31 + 7);
    }

    private static long cpuNanos() {
        return MX.getCurrentThreadCpuTime();
    }

    /* Strings built and looked up in a small map: a quarter of the CPU. */
    private long sibling(long id) {
        long h = 0;
        for (int r = 0; r < 16; r++) {
            String key = "k" + ((id + r) % 512);
            map.merge(key, 1, Integer::sum);
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < 8; i++)
                sb.append(key).append('=').append(map.get(key)).append(';');
            h = h * 31 + sb.toString().hashCode();
        }
        return h;
    }

    /* The hot method: a checksum of the buffer, seeded by the running hash. */
    static long hot(byte[] b, long seed) {
        long h = seed;
        for (int i = 0; i < b.length; i++)
            h = (h ^ b[i]) * 0x100000001b3L;
        return h;
    }

    /* One request: sibling once, then hot until it has used 3 times sibling's CPU time. */
    private long request(long id) {
        long t0 = cpuNanos();
        long h = sibling(id);
        long t1 = cpuNanos();
        long end = t1 + HOT_PER_SIBLING * (t1 - t0);
        long t2;
        do {
            for (int k = 0; k < 4; k++)
                h = h * 31 + hot(buffer, h);
            t2 = cpuNanos();
        } while (t2 < end);
        siblingNs += t1 - t0;
        hotNs += t2 - t1;
        return h;
    }

    private void work(long budgetNs, long wallDeadline) {
        long start = cpuNanos();
        long id = 0;
        while (cpuNanos() - start < budgetNs && System.nanoTime() - wallDeadline < 0) {
            sum += request(id++);
        }
        requests = id;
        workerNs = cpuNanos() - start;
    }

    private static double pct(long part, long whole) {
        return whole == 0 ? 0 : 100.0 * part / whole;
    }

    public static void main(String[] args) throws InterruptedException {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 4.0;
        if (!(seconds > 0 && seconds <= 3600) || !MX.isCurrentThreadCpuTimeSupported()) {
            System.err.println("inline-split: SECONDS in (0, 3600] and a thread CPU clock needed");
            System.exit(2);
        }
        MX.setThreadCpuTimeEnabled(true);
        InlineSplit s = new InlineSplit();
        long budget = (long) (seconds * 1e9);
        long wallDeadline = System.nanoTime() + 4 * budget + 30_000_000_000L;
        Thread w = new Thread(() -> s.work(budget, wallDeadline), "inline-worker");
        w.start();
        w.join();
        long other = s.workerNs - s.hotNs - s.siblingNs;
        System.out.printf(Locale.ROOT,
                "inline-split: worker cpu %d ms: hot %.1f%% sibling %.1f%% clock %.1f%% requests %d"
                        + " checksum %016x%n",
                s.workerNs / 1_000_000, pct(s.hotNs, s.hotNs + s.siblingNs),
                pct(s.siblingNs, s.hotNs + s.siblingNs), pct(other, s.workerNs), s.requests, s.sum);
    }
}
