/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test id=xcomp
 * @summary Oracle agrees when everything is compiled by C2 at first call (-Xcomp).
 * @library /lib
 * @run main/othervm -Xcomp -XX:-TieredCompilation C2Test
 */

/*
 * @test id=warm
 * @summary Oracle agrees in C2 code reached by warm-up without tiers, checked with
 *          Compiler.codelist.
 * @library /lib
 * @run main/othervm -XX:-TieredCompilation -Xbatch C2Test warm
 */

/*
 * @test id=tiered
 * @summary Oracle agrees in C2 code reached through the default tiers (level 4).
 * @library /lib
 * @run main/othervm -Xbatch C2Test warm
 */

import fxagent.Oracle;

public class C2Test {
    private static long sink;

    public static void main(String[] args) {
        if (args.length > 0) {
            fxtest.Jit.warmUntil("C2Test.outer", 4, () -> outer((int) (sink++ & 255)));
        }
        for (int i = 0; i < 200; i++) {
            outer(0);
        }
        if (args.length > 0) {
            fxtest.Jit.assertLevel("C2Test.outer", 4, 4);
        }
    }

    static void outer(int k) {
        long acc = 0;
        for (int i = 0; i < 4; i++) {
            acc += middle(k + i, i);
        }
        sink += acc;
    }

    static long middle(int k, int i) {
        return leaf(k, i) * 31 + i;
    }

    static long leaf(int k, int i) {
        if (k == 0 && i == 0) {
            Oracle.checkDepth(4);
        }
        return k ^ i;
    }
}
