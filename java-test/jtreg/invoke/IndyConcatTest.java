/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test
 * @summary Oracle agrees inside toString() called by an invokedynamic string concatenation
 *          (javac's default since JDK 9), cold and after the concat call site is linked and hot.
 * @run main/othervm IndyConcatTest
 */

import fxagent.Oracle;

public class IndyConcatTest {
    private static long sink;
    private final int id;

    IndyConcatTest(int id) {
        this.id = id;
    }

    @Override
    public String toString() {
        if (id % 10 == 0) {
            Oracle.check();
        }
        return "T" + id;
    }

    public static void main(String[] args) {
        for (int i = 0; i < 2000; i++) {
            IndyConcatTest t = new IndyConcatTest(i);
            String s = "a" + t + ":" + i + t;
            sink += s.length();
        }
        System.out.println(sink);
    }
}
