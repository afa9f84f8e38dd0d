/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Receivers under an itable stub (issue 32 items 3 and 4), the case of async-profiler's
 * RecoveryTests.suppliers and VtableTests.itableStubs: Suppliers.loop calls Supplier.get() through
 * one invokeinterface call site on four lambdas (hidden classes), so C2 compiles it as a call
 * through an itable stub, where much of the time goes. A sample there must show
 * `Suppliers.loop;itable stub;fxagent.stacks.Suppliers$$Lambda...` (the lambda's class, the
 * receiver). tests/it/stack_shape_test.sh checks async-profiler's bounds: loop on >= 50 % of the
 * samples, unknown frames <= 0.5 %, the itable stub >= 1 %.
 *
 * Usage: java -cp fxagent-stacks.jar fxagent.stacks.Suppliers [SECONDS]   (default 3: Budget.java)
 * Prints "suppliers: rounds N cpu_ms C wall_ms W" at the end.
 */
package fxagent.stacks;

import java.util.function.Supplier;

public final class Suppliers {
    private static volatile Object sink;

    private Suppliers() {}

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        @SuppressWarnings({"unchecked", "rawtypes"})
        Supplier<Object>[] suppliers = new Supplier[] {() -> 0, () -> 1.0, () -> "abc", () -> true};
        Budget budget = new Budget(seconds);
        long rounds = 0;
        while (budget.more()) {
            loop(suppliers);
            rounds++;
        }
        System.out.println("suppliers: rounds " + rounds + " " + budget.figures());
    }

    private static void loop(Supplier<Object>[] suppliers) {
        Object last = null;
        for (int i = 0; i < 1_000_000; i++)
            last = suppliers[i % suppliers.length].get();
        sink = last;
    }
}
