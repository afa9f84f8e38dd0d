/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Receivers under a vtable stub (issue 32 item 3), the case async-profiler's own test suite
 * checks: Numbers.avg sums an array of boxed numbers through Number.doubleValue(), an
 * invokevirtual of an abstract class's method with four receiver classes (java.lang.Integer,
 * Long, Double, Float): C2 compiles it as a call through a vtable stub, where a good share of
 * the time goes. A sample there must show `Numbers.avg;vtable stub;java.lang.Integer` (or the
 * class of the receiver at that moment). Nothing is allocated in the loop. main -> loop -> avg, as in
 * async-profiler's RecoveryTests.numbers, whose bounds (loop on >= 80 % of the samples, avg on
 * >= 50 %, unknown frames <= 0.5 %, the vtable stub >= 1 %) tests/it/stack_shape_test.sh checks.
 *
 * Usage: java -cp fxagent-stacks.jar fxagent.stacks.Numbers [SECONDS]   (default 3: Budget.java)
 * Prints "numbers: rounds N sum X cpu_ms C wall_ms W" at the end.
 */
package fxagent.stacks;

public final class Numbers {
    private static volatile double sink;

    private Numbers() {}

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        Number[] numbers = {123, 45.67, 890L, 33.3f, 999, 787878L, 10.11f, 777L, 0};
        Budget budget = new Budget(seconds);
        long rounds = loop(numbers, budget);
        System.out.println("numbers: rounds " + rounds + " sum " + sink + " " + budget.figures());
    }

    private static long loop(Number[] numbers, Budget budget) {
        long rounds = 0;
        while (budget.more()) {
            for (int i = 0; i < 1000; i++)
                sink = avg(numbers);
            rounds++;
        }
        return rounds;
    }

    private static double avg(Number[] numbers) {
        double sum = 0;
        for (Number n : numbers)
            sum += n.doubleValue();
        return sum / numbers.length;
    }
}
