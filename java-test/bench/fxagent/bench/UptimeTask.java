/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The task of Uptime (issue 33 item 5): loaded once per task by a class loader of its own, so its
 * methods and its lambdas (hidden classes of that loader) are new each time and unloadable once
 * the task is done. CPU work (mix), lambdas and streams, allocation (a few arrays kept per task).
 * It names only java.* classes, so its loader defines it and nothing else.
 */
package fxagent.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.IntUnaryOperator;
import java.util.function.LongBinaryOperator;
import java.util.function.Supplier;
import java.util.stream.IntStream;

/** Loaded once per task by its own loader: its methods and its lambdas are new each time. */
public final class UptimeTask implements Supplier<Long> {
    private final List<Object> kept = new ArrayList<>();

    @Override
    public Long get() {
        long acc = 0;
        for (int r = 0; r < 2; r++) {
            acc += mix(acc + r);
            acc ^= lambdas(r);
            acc += allocate(r);
        }
        return acc;
    }

    private static long mix(long x) {
        for (int i = 0; i < 20_000; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= x >>> 29;
        }
        return x;
    }

    private long lambdas(int r) {
        IntUnaryOperator sq = v -> v * v + r;
        IntUnaryOperator odd = v -> (v & 1) == 0 ? v / 2 : 3 * v + 1;
        LongBinaryOperator add = (a, b) -> a + b;
        Function<Integer, String> str = v -> "t" + v;
        Function<String, Integer> len = String::length;
        Supplier<int[]> arr = () -> new int[64];
        long s = IntStream.range(0, 2_000).map(sq).map(odd).filter(v -> v % 3 != 0)
                .asLongStream().reduce(0, add);
        for (int i = 0; i < 200; i++) {
            s += len.apply(str.apply(i));
            s += arr.get().length;
        }
        return s;
    }

    private long allocate(int r) {
        long s = 0;
        for (int i = 0; i < 1_000; i++) {
            byte[] b = new byte[256 + (i & 255)];
            b[r] = (byte) i;
            s += b.length;
            if ((i & 63) == 0) {
                kept.add(b);
            }
        }
        return s + kept.size();
    }
}
