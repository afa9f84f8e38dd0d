/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test
 * @summary Oracle agrees inside methods of hidden classes (Lookup.defineHiddenClass): one
 *          strong hidden class called hot, and 200 weak ones, each called then dropped, with a
 *          check after the GC that may unload them.
 * @library /lib
 * @build HiddenTarget
 * @run main/othervm HiddenClassTest
 */

import fxagent.Oracle;
import fxtest.IsolatingLoader;
import java.lang.invoke.MethodHandles;
import java.lang.ref.WeakReference;
import java.util.function.IntUnaryOperator;

public class HiddenClassTest {
    private static long sink;

    public static void main(String[] args) throws Throwable {
        byte[] bytes = IsolatingLoader.bytesOf(HiddenClassTest.class.getClassLoader(),
                "HiddenTarget");
        MethodHandles.Lookup lookup = MethodHandles.lookup();

        Class<?> strong = lookup.defineHiddenClass(bytes, true,
                MethodHandles.Lookup.ClassOption.STRONG).lookupClass();
        if (!strong.isHidden()) {
            throw new AssertionError(strong + " is not hidden");
        }
        IntUnaryOperator op = (IntUnaryOperator) strong.getDeclaredConstructor().newInstance();
        for (int i = 0; i < 500; i++) {
            sink += op.applyAsInt(i);
        }

        WeakReference<Class<?>> last = null;
        for (int i = 0; i < 200; i++) {
            Class<?> weak = lookup.defineHiddenClass(bytes, true).lookupClass();
            sink += ((IntUnaryOperator) weak.getDeclaredConstructor().newInstance()).applyAsInt(i);
            last = new WeakReference<>(weak);
        }
        for (int i = 0; i < 20 && last.get() != null; i++) {
            System.gc();
        }
        Oracle.check();
        sink += op.applyAsInt(1);
        System.out.println(sink + " last hidden class collected: " + (last.get() == null));
    }
}
