/* SPDX-License-Identifier: Apache-2.0 */
package fxtest;

import java.lang.management.ManagementFactory;
import javax.management.ObjectName;

/**
 * What the JIT did, read in-process from the diagnostic command Compiler.codelist, so a test can
 * assert that the code calling the oracle really was compiled (or deoptimized) rather than hope.
 */
public final class Jit {
    private static final long WARM_LIMIT_MS = 60_000;

    private Jit() {}

    /**
     * The highest tier (1-3 C1, 4 C2) of any in-use nmethod of the method, OSR versions included,
     * or 0 if it has none. {@code method} is "Class.method" as codelist prints it, e.g.
     * "C2Test.leaf" or "Outer$Inner.run".
     */
    public static int level(String method) {
        int best = 0;
        for (String line : codelist().split("\n")) {
            // "<compile id> <level> <state> Class.method(sig)ret [addresses]"; state 0 = in use.
            String[] f = line.trim().split(" ", 4);
            if (f.length == 4 && f[2].equals("0") && f[3].startsWith(method + "(")) {
                best = Math.max(best, Integer.parseInt(f[1]));
            }
        }
        return best;
    }

    /** Runs {@code warm} until {@code method} has in-use code of at least {@code minLevel}. */
    public static void warmUntil(String method, int minLevel, Runnable warm) {
        long end = System.currentTimeMillis() + WARM_LIMIT_MS;
        while (level(method) < minLevel) {
            for (int i = 0; i < 1000; i++) {
                warm.run();
            }
            if (System.currentTimeMillis() > end) {
                throw new AssertionError(method + " not compiled at level >= " + minLevel
                        + " after " + WARM_LIMIT_MS + " ms of warm-up (level " + level(method)
                        + ")");
            }
        }
    }

    /** Fails unless {@code method} has in-use code with a level in [min, max]. */
    public static void assertLevel(String method, int min, int max) {
        int l = level(method);
        if (l < min || l > max) {
            throw new AssertionError(method + ": compiled level " + l + ", expected " + min + ".."
                    + max);
        }
    }

    private static String codelist() {
        try {
            return (String) ManagementFactory.getPlatformMBeanServer().invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"), "compilerCodelist",
                    new Object[0], new String[0]);
        } catch (Exception e) {
            throw new AssertionError("Compiler.codelist failed", e);
        }
    }
}
