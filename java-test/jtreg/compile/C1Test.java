/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test
 * @summary Oracle agrees when the caller chain is C1-compiled (TieredStopAtLevel=1), after a
 *          warm-up that is checked with Compiler.codelist.
 * @library /lib
 * @run main/othervm -XX:TieredStopAtLevel=1 -Xbatch C1Test
 */

import fxagent.Oracle;
import fxtest.Jit;

public class C1Test {
    private static int sink;

    public static void main(String[] args) {
        // Every 64th call checks during warm-up too, so the call is in the compiled code.
        Jit.warmUntil("C1Test.outer", 1, () -> outer(sink++ & 63));
        for (int i = 0; i < 200; i++) {
            outer(0);
        }
        Jit.assertLevel("C1Test.outer", 1, 1);
    }

    static void outer(int k) {
        sink += inner(k) * 3;
    }

    static int inner(int k) {
        if (k == 0) {
            Oracle.checkDepth(3);
        }
        return k + 1;
    }
}
