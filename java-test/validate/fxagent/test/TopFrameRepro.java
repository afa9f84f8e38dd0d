/* SPDX-License-Identifier: Apache-2.0 */
package fxagent.test;

import java.util.HashMap;
import java.util.Map;

/**
 * Reproducer of docs/VALIDATION.md section 4.2: for a thread stopped inside C2-compiled code,
 * AsyncGetCallTrace can decode the top compiled frame at another debug-information point of
 * the same compiled method than the one the thread is stopped at, which GetStackTrace reports.
 * One thread looks up string keys in a HashMap in a loop that C2 compiles with HashMap.get,
 * getNode and the string concatenation inlined. Under validate mode about 5 % of the checks of
 * this thread are such mismatches on JDK 17 and 25; every frame below the top compiled frame's
 * inlined scopes agrees.
 *
 * <p>usage: {@code TopFrameRepro SECONDS}
 */
public final class TopFrameRepro {
    private TopFrameRepro() {}

    static long lookups(Map<String, Integer> map, int round) {
        long acc = 0;
        for (int i = 0; i < 1024; i++) {
            Integer v = map.get("k" + (i ^ round));
            if (v != null) {
                acc += v;
            }
        }
        return acc;
    }

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 5;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        Map<String, Integer> map = new HashMap<>();
        for (int i = 0; i < 4096; i++) {
            map.put("k" + i, i);
        }
        long acc = 0;
        for (int r = 0; System.nanoTime() < end; r++) {
            acc += lookups(map, r);
        }
        System.out.println("TopFrameRepro: checksum " + acc);
    }
}
