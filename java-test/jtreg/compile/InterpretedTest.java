/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test
 * @summary Oracle agrees in interpreted code only: nested calls, loops, a switch, a static and an
 *          instance frame, all walked from interpreter frames.
 * @run main/othervm -Xint InterpretedTest
 */

import fxagent.Oracle;

public class InterpretedTest {
    private int field;

    public static void main(String[] args) {
        InterpretedTest t = new InterpretedTest();
        for (int i = 0; i < 200; i++) {
            t.field = i;
            t.a(i % 4);
        }
        // main + a + b + c + d, plus the oracle's own frames.
        Oracle.checkDepth(5);
    }

    private void a(int k) {
        switch (k) {
            case 0:
                b(k);
                break;
            case 1:
                c(k);
                break;
            default:
                d(k);
        }
    }

    private void b(int k) {
        c(k + 1);
    }

    private void c(int k) {
        d(k + 1);
    }

    private static void d(int k) {
        int n = 0;
        for (int i = 0; i <= k; i++) {
            n += i;
        }
        if (n >= 0) {
            Oracle.check();
        }
    }
}
