/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A long-running, server-like workload for fxagent's production tests (attach, dumps, loop) and
 * the dump benchmark: N worker threads ("request-worker-K") serve requests on a fixed schedule,
 * each request spending most of its CPU in one known hot method, ServerWorkload.hotChecksum
 * (about 3/4 of a request's CPU), the rest in ServerWorkload.parseRequest (string and map work).
 *
 * Attribution note: when C2 inlines hotChecksum into the request loop and non-safepoint debug
 * information is recorded (as it is once a JVMTI agent enables CompiledMethodLoad), HotSpot maps
 * the loop's PCs to parseRequest: ~90 % of the samples land there (JDK 17, 25). With
 * -XX:-DebugNonSafepoints, or hotChecksum kept out of line, they land in hotChecksum (~95 %).
 * The production tests keep it out of line (-XX:CompileCommand=dontinline); the workload itself
 * stays as is, a reproducer of that HotSpot behaviour.
 *
 * Latency is measured open-loop: worker K's request i is due at start + i * period, and its
 * latency is end - due, so a stall (a GC, a dump that hurts) also counts the requests that could
 * not start on time (no coordinated omission). At the end it prints one line:
 *   requests=N late=L p50_us=.. p99_us=.. p999_us=.. max_us=.. checksum=..
 * where late counts requests that started more than one period after they were due.
 *
 * It runs until --stop-file appears (checked every 50 ms) or --seconds have passed, then exits 0.
 * --ready-file is created once every worker has served its first request (tests wait for it
 * instead of sleeping).
 *
 * --idle-threads K adds K threads ("idle-K") that only park: they cost no CPU, but a wall-clock
 * sampler samples them all the same (the benchmark's way to fill a recording quickly).
 *
 * Usage: java -cp fxagent-server.jar fxagent.test.ServerWorkload [--threads N] [--seconds S]
 *        [--rate PER_THREAD_PER_SECOND] [--work-us US] [--idle-threads K] [--stop-file PATH]
 *        [--ready-file PATH]
 * Defaults: 4 threads, 60 s, 100 requests/s per thread, 200 us of work per request (about 8 %
 * of one core in all: the tests share small machines).
 */
package fxagent.test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

public final class ServerWorkload {
    /* Latency histogram: 64 linear sub-buckets per power of two of microseconds (< 1.6 % error). */
    private static final int SUB = 64;
    private static final int BUCKETS = 40 * SUB;

    private static int threads = 4, idleThreads = 0;
    private static double seconds = 60;
    private static double rate = 100;
    private static long workUs = 200;
    private static Path stopFile, readyFile;

    private static volatile boolean stop;

    private static final class Worker extends Thread {
        final long[] histogram = new long[BUCKETS];
        final CountDownLatch firstDone;
        long requests, late, maxUs, sum;
        final byte[] buffer = new byte[4096];
        final Map<String, Integer> map = new HashMap<>();

        Worker(int k, CountDownLatch firstDone) {
            super("request-worker-" + k);
            this.firstDone = firstDone;
            for (int i = 0; i < buffer.length; i++)
                buffer[i] = (byte) (i * 31 + k);
        }

        @Override
        public void run() {
            long period = (long) (1e9 / rate);
            long due = System.nanoTime();
            while (!stop) {
                long now = System.nanoTime();
                if (now < due)
                    LockSupport.parkNanos(due - now);
                long start = System.nanoTime();
                if (start - due > period)
                    late++;
                sum += handleRequest(requests);
                long us = (System.nanoTime() - due) / 1000;
                record(us);
                if (requests++ == 0)
                    firstDone.countDown();
                due += period;
            }
        }

        private void record(long us) {
            histogram[bucket(us)]++;
            if (us > maxUs)
                maxUs = us;
        }

        private long handleRequest(long id) {
            long deadline = System.nanoTime() + workUs * 1000;
            long h = parseRequest(id);
            do {
                h = h * 31 + hotChecksum(buffer, h);
            } while (System.nanoTime() < deadline);
            return h;
        }

        /* About a quarter of a request's CPU: building and looking up a small map. */
        private long parseRequest(long id) {
            String key = "k" + (id % 512);
            map.merge(key, 1, Integer::sum);
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < 8; i++)
                sb.append(key).append('=').append(map.get(key)).append(';');
            return sb.toString().hashCode();
        }
    }

    /* The hot method: the checksum of the request buffer, seeded by the running hash. */
    static long hotChecksum(byte[] b, long seed) {
        long h = seed;
        for (int i = 0; i < b.length; i++)
            h = (h ^ b[i]) * 0x100000001b3L;
        return h;
    }

    static int bucket(long us) {
        if (us < SUB)
            return (int) Math.max(us, 0);
        int shift = 63 - Long.numberOfLeadingZeros(us) - 5; /* us >> shift is in [32, 64) */
        int b = SUB + (shift - 1) * (SUB / 2) + (int) (us >> shift) - SUB / 2;
        return Math.min(b, BUCKETS - 1);
    }

    static long bucketValue(int b) {
        if (b < SUB)
            return b;
        int shift = (b - SUB) / (SUB / 2) + 1;
        long mantissa = (b - SUB) % (SUB / 2) + SUB / 2;
        return mantissa << shift;
    }

    static long percentile(long[] h, long total, double q) {
        long want = (long) Math.ceil(total * q), seen = 0;
        for (int b = 0; b < h.length; b++) {
            seen += h[b];
            if (seen >= want && h[b] > 0)
                return bucketValue(b);
        }
        return 0;
    }

    private static void parse(String[] args) {
        for (int i = 0; i < args.length; i += 2) {
            if (i + 1 >= args.length)
                throw new IllegalArgumentException("option " + args[i] + " needs a value");
            String v = args[i + 1];
            switch (args[i]) {
            case "--threads": threads = Integer.parseInt(v); break;
            case "--seconds": seconds = Double.parseDouble(v); break;
            case "--rate": rate = Double.parseDouble(v); break;
            case "--work-us": workUs = Long.parseLong(v); break;
            case "--idle-threads": idleThreads = Integer.parseInt(v); break;
            case "--stop-file": stopFile = Paths.get(v); break;
            case "--ready-file": readyFile = Paths.get(v); break;
            default: throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
    }

    public static void main(String[] args) throws InterruptedException, IOException {
        parse(args);
        for (int k = 0; k < idleThreads; k++) {
            Thread idle = new Thread(() -> {
                while (!stop)
                    LockSupport.park();
            }, "idle-" + (k + 1));
            idle.setDaemon(true);
            idle.start();
        }
        CountDownLatch firstDone = new CountDownLatch(threads);
        Worker[] workers = new Worker[threads];
        for (int k = 0; k < threads; k++) {
            workers[k] = new Worker(k + 1, firstDone);
            workers[k].start();
        }
        firstDone.await();
        if (readyFile != null)
            Files.write(readyFile, ("ready " + ProcessHandle.current().pid() + "\n").getBytes());
        long end = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() < end && (stopFile == null || !Files.exists(stopFile)))
            TimeUnit.MILLISECONDS.sleep(50);
        stop = true;
        long[] all = new long[BUCKETS];
        long requests = 0, late = 0, max = 0, checksum = 0;
        for (Worker w : workers) {
            w.join();
            for (int b = 0; b < BUCKETS; b++)
                all[b] += w.histogram[b];
            requests += w.requests;
            late += w.late;
            max = Math.max(max, w.maxUs);
            checksum ^= w.sum;
        }
        System.out.printf(Locale.ROOT,
                "requests=%d late=%d p50_us=%d p99_us=%d p999_us=%d max_us=%d checksum=%d%n",
                requests, late, percentile(all, requests, 0.50), percentile(all, requests, 0.99),
                percentile(all, requests, 0.999), max, checksum);
    }
}
