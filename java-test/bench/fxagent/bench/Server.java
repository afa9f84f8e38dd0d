/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A server-like load: THREADS worker threads (default 16, meant for 2 cores) serve a fixed
 * number of "requests" taken from a shared counter. A request allocates, builds strings, fills
 * and probes a HashMap, and updates shared state under contended locks (a synchronized shard
 * chosen by the request, and one global ReentrantLock). Each request's latency (nanoTime around
 * it, so it includes being preempted) is recorded; the result line gives throughput and the
 * p50/p99/p999 latencies in microseconds.
 *
 * Usage: java -cp fxagent-bench.jar fxagent.bench.Server [threads=16] [requests=N] [scale=X]
 */
package fxagent.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

public final class Server {
    private static final int SHARDS = 4;

    /* Shared state behind the contended locks. */
    private static final class Shard {
        private final Map<Integer, Long> counts = new HashMap<>();
        private long total;

        synchronized void add(int key, long v) {
            total += v;
            counts.merge(key & 255, v, Long::sum);
        }

        synchronized long digest() {
            return total * 31 + counts.hashCode();
        }
    }

    private final Shard[] shards = new Shard[SHARDS];
    private final ReentrantLock statsLock = new ReentrantLock();
    private final int[] histogram = new int[64];

    private Server() {
        for (int i = 0; i < SHARDS; i++) {
            shards[i] = new Shard();
        }
    }

    /* Deterministic in `id`: the same request does the same work in every run. */
    long handle(int id) {
        long x = id * 0x9E3779B97F4A7C15L + 1;
        // Allocation: a small object graph.
        List<int[]> parts = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            int[] p = new int[32 + (int) ((x >>> (i * 4)) & 63)];
            for (int j = 0; j < p.length; j++) {
                p[j] = (int) (x >>> (j & 31)) + j;
            }
            parts.add(p);
        }
        // String building.
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 24; i++) {
            sb.append("field").append(i).append('=').append(x % (1000 + i)).append(';');
        }
        String body = sb.toString();
        // HashMap fill and probe.
        Map<String, Integer> map = new HashMap<>();
        for (int i = 0; i < 64; i++) {
            map.put("k" + (id & 7) + "-" + i, i * parts.get(i & 7).length);
        }
        long acc = body.hashCode();
        for (int i = 0; i < 128; i++) {
            Integer v = map.get("k" + (id & 7) + "-" + (i & 63));
            acc += v == null ? 0 : v;
        }
        acc = Kernels.mix(acc, 2_000);
        // Contended locks.
        shards[id % SHARDS].add(id, acc & 1023);
        statsLock.lock();
        try {
            histogram[(int) (acc & 63)]++;
        } finally {
            statsLock.unlock();
        }
        return acc;
    }

    /* Order-independent, so the checksum is the same in every run of the same requests. */
    long digest() {
        long d = Arrays.hashCode(histogram);
        for (Shard sh : shards) {
            d = d * 31 + sh.digest();
        }
        return d;
    }

    private static double percentileUs(long[] sorted, double q) {
        int i = (int) Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1);
        return sorted[Math.max(0, i)] / 1e3;
    }

    public static void main(String[] argv) throws InterruptedException {
        Bench b = new Bench("Server", argv);
        int threads = b.intArg("threads", 16);
        int requests = (int) Math.round(b.intArg("requests", 60_000) * b.doubleArg("scale", 1.0));
        b.checkArgs();
        if (threads < 1 || requests < threads) {
            Bench.usage("Server: need threads>=1 and requests>=threads");
        }
        Server s = new Server();
        AtomicInteger next = new AtomicInteger();
        long[] latency = new long[requests];
        long[] sums = new long[threads];
        Thread[] ts = new Thread[threads];
        b.start();
        for (int t = 0; t < threads; t++) {
            final int tid = t;
            ts[t] = new Thread(() -> {
                long acc = 0;
                for (int id = next.getAndIncrement(); id < requests; id = next.getAndIncrement()) {
                    long t0 = System.nanoTime();
                    acc += s.handle(id);
                    latency[id] = System.nanoTime() - t0;
                }
                sums[tid] = acc;
            }, "worker-" + t);
            ts[t].start();
        }
        long acc = 0;
        for (int t = 0; t < threads; t++) {
            ts[t].join();
            acc += sums[t];
        }
        double ms = b.elapsedMs();
        acc ^= s.digest();
        Arrays.sort(latency);
        b.put("threads", Integer.toString(threads));
        b.put("requests", Integer.toString(requests));
        b.put("throughput_rps", requests / (ms / 1e3));
        b.put("p50_us", percentileUs(latency, 0.50));
        b.put("p99_us", percentileUs(latency, 0.99));
        b.put("p999_us", percentileUs(latency, 0.999));
        b.finish(ms, acc);
    }
}
