/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How long a workload of this jar runs (Numbers, Suppliers, Stubs; Mega has its own CPU budget):
 * SECONDS of wall time, and past them while the running thread has used under half of them in
 * CPU time, at most 5 x SECONDS in all (it.stub_stacks took 71 s at load 23; its timeout 480).
 * The tests' shares count the JVM's start-up, the JIT and the workload's own warm-up beside its
 * loop, a fixed cost: at load 37 Numbers' main thread got ~75 ms of CPU in 3 s and main;loop
 * fell to 50 % of the samples (bound 70 %); at load 64 Stubs' thread got 4 ms (2 samples at
 * 2 ms); with a floor of a sixth (500 ms) delete's warm-up was still 13 % of its samples (bound
 * 10 %). figures() says the thread's CPU and the wall time spent, so that a failure says whether
 * the workload ran. Made and read by one thread.
 * What the budget itself costs stays off the workload's thread, whose samples the tests count:
 * prepare() sets up the MXBean (class loading, lambdas: ~30 samples at 2 ms on the thread that
 * first touched it, it.stub_stacks' "stubs"), and past SECONDS more() reads the thread's CPU time
 * at most every 10 ms of wall time (it read it every round: up to 22 samples of delete's ~700 at
 * load 15-20, in getCurrentThreadCpuTime's syscall), and figures() appends (no string
 * concatenation's bootstrap on that thread). These fixed costs grew the share outside the
 * workload as the thread got less CPU before the cap: delete's 90 % under StringBuilder.delete
 * came to 90.0 % twice at load 14-17 (it.stub_stacks.jdk25, session 20; docs/VALIDATION.md 8.5d).
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
    private static final long READ_EVERY_NS = 10_000_000;
    private long nextRead;
    private boolean cpuShort = true;

    Budget(double seconds) {
        long ns = (long) (seconds * 1e9);
        until = begin + ns;
        cap = begin + 5 * ns;
        cpuFloorNs = ns / 2;
    }

    /** The MXBean set up and its CPU-time call bound, by the thread that calls this (main),
     * not by the workload's thread. */
    static void prepare() {
        MX.getCurrentThreadCpuTime();
    }

    /** Whether the workload goes on (its thread's CPU time read only past SECONDS, at most
     * every 10 ms of wall time). */
    boolean more() {
        long now = System.nanoTime();
        if (now < until) {
            return true;
        }
        if (now >= cap) {
            return false;
        }
        if (now >= nextRead) {
            cpuShort = MX.getCurrentThreadCpuTime() < cpuFloorNs;
            nextRead = now + READ_EVERY_NS;
        }
        return cpuShort;
    }

    /** "cpu_ms C wall_ms W": the calling thread's CPU time and the wall time since the start. */
    String figures() {
        // appended, not +: javac's + bootstraps StringConcatFactory (class spinning, ~10
        // samples at 2 ms) on the workload's thread at its end
        return new StringBuilder("cpu_ms ").append(MX.getCurrentThreadCpuTime() / 1000000)
            .append(" wall_ms ").append((System.nanoTime() - begin) / 1000000).toString();
    }
}
