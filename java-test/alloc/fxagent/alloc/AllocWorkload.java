// SPDX-License-Identifier: Apache-2.0
// The allocation workloads of issue 17 (tests/it/alloc_test.sh, bench/run_alloc_overhead.sh).
//   split SECONDS TRUTH: one thread allocates byte arrays of three sizes from three methods in a
//     fixed byte split (30/30/40 by design), measuring the bytes each method really allocated
//     with com.sun.management.ThreadMXBean around each chunk; TRUTH gets one line per method
//     ("smallSite BYTES") and the thread's whole allocation ("total BYTES").
//   live SECONDS [AGENT DUMP]: heldSite and droppedSite allocate the same bytes; heldSite's
//     arrays stay reachable to the end, droppedSite's until right before two System.gc() and
//     the exit at once (issue 30: the frees of those collections, which the JVM posts late,
//     are half the sampled bytes), so the profile's retained memory is heldSite's only. With AGENT (libfxagent.so's path) and DUMP, the JVM itself asks
//     the agent for a dump to DUMP right after the collections (the DiagnosticCommand MBean's
//     JVMTI.agent_load, in this thread: no attach delay), before it exits; between the
//     allocations and the collections it makes a file DUMP.ready and waits up to 10 s for a file
//     DUMP.go (the test's sign that it is ready).
//   bench SECONDS: allocation-heavy loop (mixed sizes, short-lived) for SECONDS.
//   rounds N: the same loop, N rounds (fixed work: bench/run_alloc_overhead.sh compares CPU).
package fxagent.alloc;

import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

public final class AllocWorkload {
    private static final Object[] SINK = new Object[64];
    private static final List<byte[]> HELD = new ArrayList<>();
    private static final List<byte[]> DROPPED = new ArrayList<>();
    private static int next;

    private static void keep(Object o) {
        SINK[next++ & 63] = o; // escapes: the JIT cannot remove the allocation
    }

    static void smallSite(long bytes) {
        for (long done = 0; done < bytes; done += 24) {
            keep(new byte[8]);
        }
    }

    static void mediumSite(long bytes) {
        for (long done = 0; done < bytes; done += 2016) {
            keep(new byte[2000]);
        }
    }

    static void largeSite(long bytes) {
        for (long done = 0; done < bytes; done += 200016) {
            keep(new byte[200000]);
        }
    }

    static void heldSite() {
        HELD.add(new byte[65536]);
    }

    static void droppedSite() {
        DROPPED.add(new byte[65536]);
    }

    private static com.sun.management.ThreadMXBean mx() {
        return (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    }

    private static void split(long seconds, String truth) throws Exception {
        com.sun.management.ThreadMXBean mx = mx();
        long id = Thread.currentThread().getId();
        long chunk = 4L << 20;
        long[] site = new long[3];
        long start = mx.getThreadAllocatedBytes(id);
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        while (System.nanoTime() < end) {
            long a = mx.getThreadAllocatedBytes(id);
            smallSite(chunk * 3 / 10);
            long b = mx.getThreadAllocatedBytes(id);
            mediumSite(chunk * 3 / 10);
            long c = mx.getThreadAllocatedBytes(id);
            largeSite(chunk * 4 / 10);
            long d = mx.getThreadAllocatedBytes(id);
            site[0] += b - a;
            site[1] += c - b;
            site[2] += d - c;
        }
        long total = mx.getThreadAllocatedBytes(id) - start;
        try (PrintWriter w = new PrintWriter(truth, "UTF-8")) {
            w.println("smallSite " + site[0]);
            w.println("mediumSite " + site[1]);
            w.println("largeSite " + site[2]);
            w.println("total " + total);
        }
    }

    private static void live(long seconds, String agent, String dump) throws Exception {
        if (agent != null) {
            agentCommand(agent, "status"); // loads the MBean's classes before the collections
        }
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 16; i++) {
                heldSite();
                droppedSite();
            }
            if (HELD.size() >= 2048) {
                break; // 128 MiB held and 128 MiB dropped at most
            }
            Thread.sleep(1);
        }
        DROPPED.clear();
        if (agent != null) {
            new java.io.File(dump + ".ready").createNewFile();
            java.io.File go = new java.io.File(dump + ".go");
            for (int i = 0; i < 1000 && !go.exists(); i++) {
                Thread.sleep(10);
            }
        }
        System.gc();
        System.gc();
        if (agent != null) {
            System.out.println("dump: " + agentCommand(agent, "dump,file=" + dump));
        }
        System.out.println("held " + HELD.size() + " arrays");
    }

    /** fxagent's COMMAND as `jcmd PID JVMTI.agent_load AGENT COMMAND` would send it. */
    private static String agentCommand(String agent, String command) throws Exception {
        javax.management.ObjectName dcmd =
                new javax.management.ObjectName("com.sun.management:type=DiagnosticCommand");
        Object out = ManagementFactory.getPlatformMBeanServer().invoke(dcmd, "jvmtiAgentLoad",
                new Object[] {new String[] {agent, "\"" + command + "\""}}, // quoted: it has a =
                new String[] {String[].class.getName()});
        return String.valueOf(out).trim();
    }

    private static void bench(long seconds, long rounds) {
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        long n = 0;
        while (rounds > 0 ? n < rounds : System.nanoTime() < end) {
            smallSite(1 << 16);
            mediumSite(1 << 16);
            largeSite(1 << 18);
            n++;
        }
        // The process's CPU time as the JVM sees it (the benchmark's figure: getrusage of a
        // child misreports it in some sandboxes).
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        System.out.println("rounds " + n + " cpu_ns " + os.getProcessCpuTime());
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "bench";
        long seconds = args.length > 1 ? Long.parseLong(args[1]) : 3;
        switch (mode) {
            case "split":
                split(seconds, args[2]);
                break;
            case "live":
                live(seconds, args.length > 3 ? args[2] : null, args.length > 3 ? args[3] : null);
                break;
            case "rounds":
                bench(0, seconds);
                break;
            default:
                bench(seconds, 0);
        }
    }
}
