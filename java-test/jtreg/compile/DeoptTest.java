/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test id=c2
 * @summary Oracle agrees around deoptimization: (1) a class-hierarchy change (a second subclass
 *          loaded after a monomorphic call site was compiled) deoptimizes the compiled caller,
 *          checked inside the new class's static initializer while the compiled frame below is
 *          marked for deoptimization, and again inside the deoptimized method after return;
 *          (2) an uncommon trap (a branch never taken while warming) taken from C2 code.
 * @library /lib
 * @run main/othervm -Xbatch -XX:-TieredCompilation -XX:CompileCommand=quiet
 *      -XX:CompileCommand=dontinline,DeoptTest::callSite
 *      -XX:CompileCommand=dontinline,DeoptTest::trap
 *      DeoptTest
 */

/*
 * @test id=tiered
 * @summary The same with the default tiers.
 * @library /lib
 * @run main/othervm -Xbatch -XX:CompileCommand=quiet
 *      -XX:CompileCommand=dontinline,DeoptTest::callSite
 *      -XX:CompileCommand=dontinline,DeoptTest::trap
 *      DeoptTest
 */

import fxagent.Oracle;
import fxtest.Jit;

public class DeoptTest {
    abstract static class Shape {
        abstract int area(int k);
    }

    static final class Square0 extends Shape {
        @Override
        int area(int k) {
            if (k == LOAD_SECOND) {
                Oracle.check();
                loadSecondShape();
                // This frame was inlined into compiled code; it now runs deoptimized.
                Oracle.check();
            } else if (k == 0) {
                Oracle.check();
            }
            return k * k;
        }
    }

    static final class Square1 extends Shape {
        static {
            // Class loading marked the compiled callers (CHA dependents) for deoptimization;
            // they are still on this stack, below.
            Oracle.checkDepth(4);
        }

        @Override
        int area(int k) {
            return k;
        }
    }

    static final int LOAD_SECOND = -1;
    private static long sink;

    public static void main(String[] args) throws Exception {
        Shape s = new Square0();
        Jit.warmUntil("DeoptTest.callSite", 4, () -> callSite(s, (int) (sink++ & 63)));
        callSite(s, LOAD_SECOND);
        Jit.assertLevel("DeoptTest.callSite", 0, 0);
        for (int i = 0; i < 200; i++) {
            callSite(s, 0);
        }
        uncommonTrap();
    }

    /* Compiled on its own (dontinline: the warm-up lambda must not absorb it), with
     * Square0.area inlined: the only loaded subclass of Shape (CHA). */
    static void callSite(Shape s, int k) {
        sink += s.area(k);
    }

    static void loadSecondShape() {
        try {
            Class.forName("DeoptTest$Square1", true, DeoptTest.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new AssertionError(e);
        }
    }

    private static boolean rare;

    static void uncommonTrap() {
        Jit.warmUntil("DeoptTest.trap", 4, () -> trap((int) (sink++ & 63)));
        rare = true;
        for (int i = 0; i < 200; i++) {
            trap(i);
        }
    }

    static void trap(int k) {
        if (rare) {
            // Never taken while warming: C2 compiled an uncommon trap here.
            Oracle.check();
        }
        sink += k;
    }
}
