/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test
 * @summary Oracle agrees inside lambda bodies (non-capturing, capturing, method reference,
 *          nested) and inside a stream pipeline's lambdas, interpreted and then compiled.
 * @run main/othervm LambdaTest
 */

import fxagent.Oracle;
import java.util.function.IntUnaryOperator;
import java.util.function.Supplier;
import java.util.stream.IntStream;

public class LambdaTest {
    private static long sink;

    public static void main(String[] args) {
        Runnable plain = () -> Oracle.checkDepth(3);
        int base = args.length + 5;
        IntUnaryOperator capturing = x -> {
            Oracle.check();
            return x + base;
        };
        Supplier<Integer> ref = LambdaTest::target;
        Supplier<Runnable> nested = () -> () -> Oracle.check();
        for (int i = 0; i < 2000; i++) {
            boolean checkNow = i % 10 == 0;
            if (checkNow) {
                plain.run();
                sink += capturing.applyAsInt(i);
                sink += ref.get();
                nested.get().run();
            }
            sink += IntStream.range(0, 4).map(x -> {
                if (checkNow && x == 2) {
                    Oracle.check();
                }
                return x * 2;
            }).sum();
        }
        System.out.println(sink);
    }

    static Integer target() {
        Oracle.check();
        return 1;
    }
}
