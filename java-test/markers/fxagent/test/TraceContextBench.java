/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cost of fxagent.TraceContext.set and clear (issue 33 item 4: at most 50 ns a call), timed
 * with System.nanoTime over millions of calls per round on one thread (bench/run_trace_context.sh,
 * docs/BENCHMARKS.md "Trace context"). Each round times N calls of: set with two labels, clear,
 * and an empty loop of the same shape (the loop's own cost, subtracted); prints one line per
 * round and the minimum and median of the rounds in ns per call.
 * Usage: java [-agentpath:...] -cp fxagent-markers.jar fxagent.test.TraceContextBench
 *        [MILLIONS [ROUNDS]]
 */
package fxagent.test;

import fxagent.TraceContext;
import java.util.Arrays;

public final class TraceContextBench {
    private static volatile long sink;

    private TraceContextBench() {}

    private static double setLoop(int n, int l1, int l2) {
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            TraceContext.set(0x0af7651916cd43ddL, 0x8448eb211c80319cL, i | 1, l1, l2);
        }
        return (System.nanoTime() - t0) / (double) n;
    }

    private static double clearLoop(int n) {
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            TraceContext.clear();
        }
        return (System.nanoTime() - t0) / (double) n;
    }

    private static double emptyLoop(int n) {
        long t0 = System.nanoTime();
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += i | 1;
        }
        sink = s;
        return (System.nanoTime() - t0) / (double) n;
    }

    private static String stats(double[] v) {
        double[] c = v.clone();
        Arrays.sort(c);
        return String.format("min %.2f median %.2f", c[0], c[c.length / 2]);
    }

    public static void main(String[] args) {
        int n = (int) (Double.parseDouble(args.length > 0 ? args[0] : "20") * 1_000_000);
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 7;
        int l1 = TraceContext.label("tenant", "acme"), l2 = TraceContext.label("route", "/x");
        System.out.println("enabled " + TraceContext.enabled());
        double[] set = new double[rounds], clear = new double[rounds], empty = new double[rounds];
        setLoop(n, l1, l2); // warm-up: compiled before the timed rounds
        clearLoop(n);
        emptyLoop(n);
        for (int r = 0; r < rounds; r++) {
            set[r] = setLoop(n, l1, l2);
            clear[r] = clearLoop(n);
            empty[r] = emptyLoop(n);
            System.out.printf("round %d: set %.2f clear %.2f empty loop %.2f ns/call%n", r, set[r],
                    clear[r], empty[r]);
        }
        System.out.println("set ns/call: " + stats(set));
        System.out.println("clear ns/call: " + stats(clear));
        System.out.println("empty loop ns/iteration: " + stats(empty));
    }
}
