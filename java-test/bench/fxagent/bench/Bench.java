/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared plumbing of the fxagent benchmark workloads: key=value arguments, the result line and
 * a checksum sink. Every workload does a FIXED amount of work (never "run for N seconds"), times
 * it with System.nanoTime, and prints one line the harness (bench/overhead.py) parses:
 *
 *   fxbench workload=NAME elapsed_ms=... checksum=... [key=value ...] end_epoch_ms=...
 *
 * The checksum depends on every result, so the JIT cannot drop the work; end_epoch_ms is the
 * wall clock when the work ended, which lets the harness measure how long the JVM then needs to
 * exit (the profiler's dump happens there).
 */
package fxagent.bench;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

final class Bench {
    private final String name;
    private final Map<String, String> args = new HashMap<>();
    private final StringBuilder extra = new StringBuilder();
    private long startNs;

    Bench(String name, String[] argv) {
        this.name = name;
        for (String a : argv) {
            int eq = a.indexOf('=');
            if (eq <= 0) {
                usage("argument '" + a + "' is not key=value");
            }
            args.put(a.substring(0, eq), a.substring(eq + 1));
        }
    }

    static void usage(String msg) {
        System.err.println("fxbench: " + msg);
        System.exit(2);
    }

    int intArg(String key, int dflt) {
        String v = args.remove(key);
        try {
            return v == null ? dflt : Integer.parseInt(v);
        } catch (NumberFormatException e) {
            usage(key + "=" + v + " is not an integer");
            return dflt;
        }
    }

    double doubleArg(String key, double dflt) {
        String v = args.remove(key);
        try {
            return v == null ? dflt : Double.parseDouble(v);
        } catch (NumberFormatException e) {
            usage(key + "=" + v + " is not a number");
            return dflt;
        }
    }

    /* Call after reading every argument: a typo must not silently run the default. */
    void checkArgs() {
        if (!args.isEmpty()) {
            usage(name + ": unknown arguments " + args.keySet());
        }
    }

    void start() {
        startNs = System.nanoTime();
    }

    double elapsedMs() {
        return (System.nanoTime() - startNs) / 1e6;
    }

    void put(String key, String value) {
        extra.append(' ').append(key).append('=').append(value);
    }

    void put(String key, double value) {
        put(key, String.format(Locale.ROOT, "%.3f", value));
    }

    void finish(double elapsedMs, long checksum) {
        System.out.printf(Locale.ROOT, "fxbench workload=%s elapsed_ms=%.3f checksum=%016x%s end_epoch_ms=%d%n",
                name, elapsedMs, checksum, extra, System.currentTimeMillis());
        System.out.flush();
    }
}
