/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test
 * @summary Oracle agrees in classes of a custom loader, and keeps agreeing after such loaders
 *          are dropped and their classes unloaded (the unloaded count must grow).
 * @library /lib
 * @run main/othervm ClassUnloadTest
 */

import fxagent.Oracle;
import fxtest.IsolatingLoader;
import java.lang.management.ManagementFactory;
import java.lang.ref.WeakReference;
import java.util.Set;
import java.util.function.IntUnaryOperator;

public class ClassUnloadTest {
    public static class Victim implements IntUnaryOperator {
        @Override
        public int applyAsInt(int k) {
            Oracle.checkDepth(3);
            return k * 2;
        }
    }

    private static long sink;

    public static void main(String[] args) throws Exception {
        long unloadedBefore = ManagementFactory.getClassLoadingMXBean().getUnloadedClassCount();
        for (int round = 0; round < 20; round++) {
            WeakReference<ClassLoader> ref = useAndDrop();
            for (int i = 0; i < 20 && ref.get() != null; i++) {
                System.gc();
            }
            if (ref.get() != null) {
                throw new AssertionError("loader of round " + round + " not collected");
            }
            Oracle.check();
        }
        long unloaded = ManagementFactory.getClassLoadingMXBean().getUnloadedClassCount()
                - unloadedBefore;
        if (unloaded < 1) {
            throw new AssertionError("no class was unloaded");
        }
        System.out.println(sink + ", classes unloaded: " + unloaded);
    }

    private static WeakReference<ClassLoader> useAndDrop() throws Exception {
        ClassLoader l = new IsolatingLoader(ClassUnloadTest.class.getClassLoader(),
                Set.of("ClassUnloadTest$Victim"));
        Class<?> c = Class.forName("ClassUnloadTest$Victim", true, l);
        IntUnaryOperator op = (IntUnaryOperator) c.getDeclaredConstructor().newInstance();
        for (int i = 0; i < 10; i++) {
            sink += op.applyAsInt(i);
        }
        return new WeakReference<>(l);
    }
}
