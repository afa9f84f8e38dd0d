/* SPDX-License-Identifier: Apache-2.0 */
package fxagent.test;

import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Array;
import java.lang.reflect.Method;

/**
 * Reproducer of docs/VALIDATION.md section 4.8: Java code that the VM calls while C1-compiled
 * code links a call site (MethodHandleNatives.linkCallSite). C1 compiles an invokedynamic whose
 * call site is not linked yet with a patching stub; the first execution calls the C1 runtime stub
 * load_appendix_patching, which links the site by calling Java. Stopped there, AsyncGetCallTrace's
 * stack ends at linkCallSite (its walk refuses the Runtime1 stub's frame); GetStackTrace goes on
 * through the C1 frame and its callers.
 *
 * <p>Each round defines {@link UpcallTemplate} anew as a hidden class (its own constant pool, so
 * its 24 string concatenations and 24 method references are 48 call sites never linked), calls
 * its method WARM_CALLS times with {@code link == false} (the sites compiled, not run), then
 * once with {@code link == true}: every site is linked. Run with
 * {@code -XX:CompileCommand=BackgroundCompilation,fxagent.test.UpcallTemplate*::work,false}
 * and 300 warm calls, the method is compiled by C1 before that call (tier 3 after 200 calls, the
 * calling thread waiting for it), so the sites are linked from C1 code; without it, background
 * compilation has rarely finished by then.
 *
 * <p>usage: {@code UpcallRepro SECONDS [WARM_CALLS]} (default 3000)
 */
public final class UpcallRepro {
    private UpcallRepro() {}

    static byte[] templateBytes() throws Exception {
        try (InputStream in = UpcallRepro.class.getResourceAsStream("UpcallTemplate.class")) {
            return in.readAllBytes();
        }
    }

    /**
     * Rounds until {@code deadline} (System.nanoTime): the template defined anew, its method called
     * {@code warm} times unlinked, then once linking its 48 sites. Returns a checksum; the round
     * count is added to {@code rounds[0]}.
     */
    public static long link(long deadline, int warm, long[] rounds) throws Exception {
        byte[] bytes = templateBytes();
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        // Lookup.defineHiddenClass is JDK 15's; the workloads are compiled for release 11
        Class<?> option = Class.forName("java.lang.invoke.MethodHandles$Lookup$ClassOption");
        Object noOptions = Array.newInstance(option, 0);
        Method define = MethodHandles.Lookup.class.getMethod("defineHiddenClass", byte[].class,
                boolean.class, noOptions.getClass());
        long sum = 0;
        while (System.nanoTime() < deadline) {
            Class<?> c = ((MethodHandles.Lookup) define.invoke(lookup, bytes, true, noOptions))
                    .lookupClass();
            Method m = c.getDeclaredMethod("work", boolean.class, int.class, long.class,
                    String.class, double.class);
            for (int i = 0; i < warm; i++) {
                sum += (int) m.invoke(null, false, i, 7L, "s", 0.5);
            }
            sum += (int) m.invoke(null, true, (int) rounds[0], 7L, "s", 0.5);
            rounds[0]++;
        }
        return sum;
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 5;
        int warm = args.length > 1 ? Integer.parseInt(args[1]) : 3000;
        long[] rounds = {0};
        long sum = link(System.nanoTime() + (long) (seconds * 1e9), warm, rounds);
        System.out.println("UpcallRepro: " + rounds[0] + " rounds, checksum " + sum);
    }
}

/** Defined again each round as a hidden class: 48 invokedynamic call sites never linked. */
final class UpcallTemplate {
    private UpcallTemplate() {}

    private static int apply(java.util.function.IntUnaryOperator f, int x) {
        return f.applyAsInt(x);
    }

    public static int work(boolean link, int a, long b, String c, double d) {
        if (!link) {
            return a & 1;
        }
        int n = 0;
        n += ("" + d + a + a + "d0" + a).length();
        n += apply(Integer::reverse, a + 1);
        n += ("" + a + a).length();
        n += apply(Integer::reverseBytes, a + 3);
        n += ("" + b + "f4" + a).length();
        n += apply(Integer::bitCount, a + 5);
        n += ("g6" + d + "h6" + b + b + "j6" + c).length();
        n += apply(Integer::highestOneBit, a + 7);
        n += ("i8" + a + c + "k8" + c + d + "m8" + a).length();
        n += apply(Integer::lowestOneBit, a + 9);
        n += ("k10" + d + "l10" + a + "m10" + b + b).length();
        n += apply(Integer::numberOfLeadingZeros, a + 11);
        n += ("" + c + c + d).length();
        n += apply(Integer::numberOfTrailingZeros, a + 13);
        n += ("o14" + b + "p14" + c + c + a).length();
        n += apply(Integer::signum, a + 15);
        n += ("q16" + a + "r16" + b + c).length();
        n += apply(Math::abs, a + 17);
        n += ("" + c + "t18" + a + d + "v18" + c).length();
        n += apply(Math::negateExact, a + 19);
        n += ("" + b + c + "w20" + a).length();
        n += apply(Math::incrementExact, a + 21);
        n += ("" + b + d + b + "z22" + d).length();
        n += apply(Math::decrementExact, a + 23);
        n += ("y24" + a + "z24" + b + "a24" + d + a).length();
        n += apply(Integer::reverse, a + 25);
        n += ("" + c + "b26" + d + "c26" + a + b + a).length();
        n += apply(Integer::reverseBytes, a + 27);
        n += ("c28" + b + "d28" + a + b + "f28" + b).length();
        n += apply(Integer::bitCount, a + 29);
        n += ("" + b + "f30" + c + d + b).length();
        n += apply(Integer::highestOneBit, a + 31);
        n += ("g32" + a + c + d).length();
        n += apply(Integer::lowestOneBit, a + 33);
        n += ("" + d + a).length();
        n += apply(Integer::numberOfLeadingZeros, a + 35);
        n += ("" + b + "l36" + d + "m36" + a).length();
        n += apply(Integer::numberOfTrailingZeros, a + 37);
        n += ("m38" + b + b + a + "p38" + d).length();
        n += apply(Integer::signum, a + 39);
        n += ("o40" + c + "p40" + c + "q40" + d + "r40" + a).length();
        n += apply(Math::abs, a + 41);
        n += ("" + b + "r42" + b).length();
        n += apply(Math::negateExact, a + 43);
        n += ("" + a + a + b + "v44" + a).length();
        n += apply(Math::incrementExact, a + 45);
        n += ("u46" + b + c + b + "x46" + b).length();
        n += apply(Math::decrementExact, a + 47);
        return n;
    }
}
