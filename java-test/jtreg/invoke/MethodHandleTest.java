/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test
 * @summary Oracle agrees inside targets reached through method handles: invokeExact of static,
 *          virtual and bound handles, asSpreader, a filtered and a folded handle, an invoker,
 *          and MethodHandleProxies; LambdaForm frames included, interpreted and compiled.
 * @run main/othervm MethodHandleTest
 * @run main/othervm -Xcomp -XX:-TieredCompilation MethodHandleTest
 */

import fxagent.Oracle;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandleProxies;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

public class MethodHandleTest {
    private static long sink;
    private final int salt = 3;

    public static void main(String[] args) throws Throwable {
        MethodHandles.Lookup l = MethodHandles.lookup();
        MethodType ii = MethodType.methodType(int.class, int.class);
        MethodHandle stat = l.findStatic(MethodHandleTest.class, "stat", ii);
        MethodHandle virt = l.findVirtual(MethodHandleTest.class, "virt", ii);
        MethodHandleTest self = new MethodHandleTest();
        MethodHandle bound = virt.bindTo(self);
        MethodHandle sum = l.findStatic(MethodHandleTest.class, "sum",
                MethodType.methodType(int.class, int.class, int.class, int.class));
        MethodHandle spread = sum.asSpreader(int[].class, 3);
        MethodHandle filtered = MethodHandles.filterReturnValue(stat, stat);
        MethodHandle folded = MethodHandles.foldArguments(sum,
                l.findStatic(MethodHandleTest.class, "combiner",
                        MethodType.methodType(int.class, int.class, int.class)));
        MethodHandle invoker = MethodHandles.exactInvoker(ii);
        IntOp proxy = MethodHandleProxies.asInterfaceInstance(IntOp.class, stat);
        for (int i = 0; i < 2000; i++) {
            int k = i % 10 == 0 ? 0 : 1;
            sink += (int) stat.invokeExact(k);
            sink += (int) virt.invokeExact(self, k);
            sink += (int) bound.invokeExact(k);
            sink += (int) spread.invokeExact(new int[] {k, 1, 2});
            sink += (int) filtered.invokeExact(k);
            sink += (int) folded.invokeExact(k, 7);
            sink += (int) invoker.invokeExact(stat, k);
            sink += proxy.apply(k);
        }
        System.out.println(sink);
    }

    public interface IntOp {
        int apply(int x);
    }

    static int stat(int k) {
        if (k == 0) {
            Oracle.check();
        }
        return k + 1;
    }

    int virt(int k) {
        if (k == 0) {
            Oracle.check();
        }
        return k + salt;
    }

    static int sum(int a, int b, int c) {
        if (a == 0) {
            Oracle.check();
        }
        return a + b + c;
    }

    static int combiner(int a, int b) {
        if (a == 0) {
            Oracle.check();
        }
        return a - b;
    }
}
