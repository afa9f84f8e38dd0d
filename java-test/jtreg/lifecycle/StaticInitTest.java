/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test
 * @summary Oracle agrees inside static initializers: a <clinit> that triggers a second class's
 *          <clinit>, each checking; 200 fresh copies of both classes (one loader each), so every
 *          initializer runs, interpreted, right after its class was loaded and prepared.
 * @library /lib
 * @run main/othervm StaticInitTest
 */

import fxagent.Oracle;
import fxtest.IsolatingLoader;
import java.util.Set;

public class StaticInitTest {
    public static class Outer {
        public static final int VALUE;

        static {
            Oracle.check();
            VALUE = Inner.VALUE + 1;
        }
    }

    public static class Inner {
        public static final int VALUE;

        static {
            // Inner.<clinit> runs inside Outer.<clinit>: two initializer frames on the stack.
            Oracle.checkDepth(4);
            VALUE = 41;
        }
    }

    public static void main(String[] args) throws Exception {
        Set<String> own = Set.of("StaticInitTest$Outer", "StaticInitTest$Inner");
        for (int i = 0; i < 200; i++) {
            ClassLoader l = new IsolatingLoader(StaticInitTest.class.getClassLoader(), own);
            Class<?> c = Class.forName("StaticInitTest$Outer", true, l);
            if (c.getDeclaredField("VALUE").getInt(null) != 42 || c.getClassLoader() != l) {
                throw new AssertionError("wrong class initialized: " + c);
            }
        }
        // The application loader's own copy, initialized by first use.
        System.out.println(Outer.VALUE);
    }
}
