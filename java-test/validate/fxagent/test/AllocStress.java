/* SPDX-License-Identifier: Apache-2.0 */
package fxagent.test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongUnaryOperator;

/**
 * The workload of validate mode's stress test: several threads allocate for a given time while
 * calling through varied stacks (recursion of changing depth, interface calls with several
 * receivers, lambdas, string building, collections, exceptions, monitors), so that the
 * validator finds them in interpreted, C1 and C2 code, in allocation slow paths, at safepoint
 * polls and in the middle of garbage collections.
 *
 * <p>usage: {@code AllocStress SECONDS [THREADS [LINKERS]]} (default 8 threads, no linker).
 * LINKERS more threads run {@link UpcallRepro}'s rounds (call sites linked from C1 code,
 * docs/VALIDATION.md 4.8). Prints one line with a checksum, so that nothing is optimized away.
 */
public final class AllocStress {
    private AllocStress() {}

    interface Shape {
        long area(long seed);
    }

    static final class Square implements Shape {
        @Override
        public long area(long seed) {
            return seed * seed;
        }
    }

    static final class Strip implements Shape {
        @Override
        public long area(long seed) {
            long[] cells = new long[(int) (seed & 63) + 1];
            for (int i = 0; i < cells.length; i++) {
                cells[i] = seed + i;
            }
            return cells[cells.length - 1];
        }
    }

    static final class Word implements Shape {
        @Override
        public long area(long seed) {
            return ("w" + seed + ":" + (seed >>> 7)).hashCode();
        }
    }

    private static final Shape[] SHAPES = {new Square(), new Strip(), new Word()};
    private static final Object MONITOR = new Object();
    private static long shared;

    /* Next value of a thread's xorshift generator. */
    static long next(long x) {
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
        return x;
    }

    /* Recursion of a depth that changes with every call. */
    static long descend(int depth, long seed) {
        if (depth == 0) {
            return leaf(seed);
        }
        long[] frame = new long[2 + (depth & 7)];
        frame[0] = seed;
        return descend(depth - 1, next(seed)) + frame.length;
    }

    static long leaf(long seed) {
        switch ((int) (seed >>> 60) & 7) {
            case 0:
                return SHAPES[(int) ((seed >>> 8) % 3 + 3) % 3].area(seed);
            case 1:
                return collections(seed);
            case 2:
                return lambdas(seed);
            case 3:
                return exceptions(seed);
            case 4:
                return monitor(seed);
            default:
                return strings(seed);
        }
    }

    static long collections(long seed) {
        List<Long> list = new ArrayList<>();
        Map<Long, String> map = new HashMap<>();
        for (int i = 0; i < 32; i++) {
            seed = next(seed);
            list.add(seed);
            map.put(seed & 255, Long.toHexString(seed));
        }
        return list.size() + map.size() + list.get((int) (seed & 31));
    }

    static long lambdas(long seed) {
        LongUnaryOperator f = v -> v * 31 + 7;
        LongUnaryOperator g = f.andThen(v -> new long[] {v, v + 1}[1]);
        return g.applyAsLong(seed) ^ f.applyAsLong(seed >>> 3);
    }

    static long exceptions(long seed) {
        try {
            if ((seed & 3) == 0) {
                throw new IllegalStateException("seed " + seed);
            }
            return seed;
        } catch (IllegalStateException e) {
            return e.getMessage().length();
        }
    }

    static long monitor(long seed) {
        synchronized (MONITOR) {
            shared += seed;
            return shared;
        }
    }

    static long strings(long seed) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            sb.append(seed >>> i).append(',');
        }
        return sb.toString().length();
    }

    /* One thread's work: calls of changing depth until the deadline; returns a checksum. */
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

    public static void main(String[] args) throws InterruptedException {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 10;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        int linkers = args.length > 2 ? Integer.parseInt(args[2]) : 0;
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        long[] sums = new long[threads];
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int id = t;
            workers[t] = new Thread(() -> sums[id] = run(0x9E3779B97F4A7C15L * (id + 1), deadline),
                    "stress-" + t);
            workers[t].start();
        }
        // docs/VALIDATION.md 4.8: threads linking call sites from C1 code (UpcallRepro's rounds)
        long[][] linked = new long[linkers][1];
        Thread[] linking = new Thread[linkers];
        for (int t = 0; t < linkers; t++) {
            long[] out = linked[t];
            linking[t] = new Thread(() -> {
                try {
                    out[0] = UpcallRepro.link(deadline, 300, new long[1]);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, "linker-" + t);
            linking[t].start();
        }
        long total = 0;
        for (int t = 0; t < threads; t++) {
            workers[t].join();
            total += sums[t];
        }
        for (int t = 0; t < linkers; t++) {
            linking[t].join();
            total += linked[t][0];
        }
        System.out.println("AllocStress: " + threads + " threads, " + seconds + " s, checksum "
                + Long.toHexString(total));
    }
}
