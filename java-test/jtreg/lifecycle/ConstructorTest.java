/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test
 * @summary Oracle agrees inside constructors: a three-level super() chain, this(...) delegation,
 *          an instance initializer block and a field initializer, interpreted and compiled.
 * @run main/othervm ConstructorTest
 */

import fxagent.Oracle;

public class ConstructorTest {
    static class Base {
        final int a;

        Base(int a) {
            Oracle.check();
            this.a = a;
        }
    }

    static class Middle extends Base {
        final int b = field();

        Middle(int a) {
            super(a + 1);
            Oracle.check();
        }

        static int field() {
            Oracle.check();
            return 2;
        }
    }

    static class Leaf extends Middle {
        int c;

        {
            Oracle.check();
            c = 3;
        }

        Leaf(int a) {
            this(a, 0);
        }

        Leaf(int a, int unused) {
            super(a);
            // Leaf(a, 0) <- Leaf(a) <- main: two constructor frames of one class.
            Oracle.checkDepth(4);
        }
    }

    private static long sink;

    public static void main(String[] args) {
        for (int i = 0; i < 2000; i++) {
            Leaf l = new Leaf(i);
            sink += l.a + l.b + l.c;
        }
        System.out.println(sink);
    }
}
