/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test
 * @summary Oracle agrees inside default, static and private interface methods and inside an
 *          abstract interface method implemented by a class and called from a default method.
 * @run main/othervm InterfaceMethodsTest
 */

import fxagent.Oracle;

public class InterfaceMethodsTest {
    interface Shape {
        int size();

        default int doubled() {
            Oracle.check();
            return helper() * 2;
        }

        private int helper() {
            Oracle.check();
            return size();
        }

        static int unit() {
            Oracle.check();
            return 1;
        }
    }

    static final class Box implements Shape {
        @Override
        public int size() {
            Oracle.check();
            return 4;
        }
    }

    private static long sink;

    public static void main(String[] args) {
        Shape s = new Box();
        for (int i = 0; i < 300; i++) {
            sink += s.doubled() + Shape.unit();
        }
        System.out.println(sink);
    }
}
