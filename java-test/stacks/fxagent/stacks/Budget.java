/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How long a workload of this jar runs (Numbers, Suppliers, Stubs; Mega has its own CPU budget):
 * SECONDS of wall time, and past them while the running thread has used under half of them in
 * CPU time, at most 5 x SECONDS in all (it.stub_stacks took 71 s at load 23; its timeout 240).
 * The tests' shares count the JVM's start-up, the JIT and the workload's own warm-up beside its
 * loop, a fixed cost: at load 37 Numbers' main thread got ~75 ms of CPU in 3 s and main;loop
 * fell to 50 % of the samples (bound 70 %); at load 64 Stubs' thread got 4 ms (2 samples at
 * 2 ms); with a floor of a sixth (500 ms) delete's warm-up was still 13 % of its samples (bound
 * 10 %). figures() says the thread's CPU and the wall time spent, so that a failure says whether
 * the workload ran. Made and read by one thread.
 */
package fxagent.stacks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

final class Budget {
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    private final long begin = System.nanoTime();
    private final long until;
    private final long cap;
    private final long cpuFloorNs;

    Budget(double seconds) {
        long ns = (long) (seconds * 1e9);
        until = begin + ns;
        cap = begin + 5 * ns;
        cpuFloorNs = ns / 2;
    }

    /** Whether the workload goes on (its thread's CPU time read only past SECONDS). */
    boolean more() {
        long now = System.nanoTime();
        return now < until || (now < cap && MX.getCurrentThreadCpuTime() < cpuFloorNs);
    }

    /** "cpu_ms C wall_ms W": the calling thread's CPU time and the wall time since the start. */
    String figures() {
        return "cpu_ms " + MX.getCurrentThreadCpuTime() / 1000000 + " wall_ms "
            + (System.nanoTime() - begin) / 1000000;
    }
}
