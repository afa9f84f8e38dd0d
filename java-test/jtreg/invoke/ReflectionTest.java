/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test
 * @summary Oracle agrees inside methods and constructors reached by reflection: Method.invoke
 *          (static and virtual) and Constructor.newInstance, past the point where the JDK
 *          switches from its native accessor to generated code or method handles.
 * @run main/othervm ReflectionTest
 */

import fxagent.Oracle;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;

public class ReflectionTest {
    private static long sink;
    private final int value;

    public ReflectionTest(int value) {
        Oracle.check();
        this.value = value;
    }

    public static int stat(int k) {
        Oracle.check();
        return k + 1;
    }

    public int virt(int k) {
        Oracle.check();
        return k + value;
    }

    public static void main(String[] args) throws Exception {
        Method stat = ReflectionTest.class.getMethod("stat", int.class);
        Method virt = ReflectionTest.class.getMethod("virt", int.class);
        Constructor<ReflectionTest> ctor = ReflectionTest.class.getConstructor(int.class);
        for (int i = 0; i < 300; i++) {
            sink += (Integer) stat.invoke(null, i);
            ReflectionTest t = ctor.newInstance(i);
            sink += (Integer) virt.invoke(t, i);
        }
        System.out.println(sink);
    }
}
