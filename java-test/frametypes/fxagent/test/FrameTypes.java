/* SPDX-License-Identifier: Apache-2.0 */
package fxagent.test;

/**
 * Known answers for frame types (issue 32, tests/it/frame_types_test.sh). The thread
 * "types-worker" calls {@link #caller} in a loop; caller calls {@link #tiny}, a small hot callee
 * that C1 and C2 inline into it, and {@link #notInlined}, which the test excludes from inlining
 * (-XX:CompileCommand=dontinline). The test keeps caller out of line too: work runs once, its
 * compiled code is OSR code, whose samples stay untyped, so tiny must not be inlined into it.
 * Under -Xint every frame is interpreted, under -XX:TieredStopAtLevel=1 every compiled frame is
 * C1's. At the end it prints the VM's DebugNonSafepoints (HotSpotDiagnosticMXBean), which the
 * agent turns on when it is at its default.
 * usage: FrameTypes SECONDS
 */
public final class FrameTypes {
    static volatile long sink;

    private FrameTypes() {}

    /** Not final: the divisions below stay divisions (no multiply by a constant's inverse). */
    static int divisor = 1000003;

    /**
     * Small and hot (a few bytecodes, two int divisions, which both compilers emit inline; a long
     * division is a runtime call in C1): inlined into caller by both compilers.
     */
    static long tiny(long x) {
        int v = (int) x;
        return x + v / divisor + v % (divisor - 17);
    }

    /** Kept out of line by the test's CompileCommand; the loop is most of the CPU. */
    static long notInlined(long x) {
        long s = x;
        for (int i = 0; i < 100; i++) {
            s = s * 31 + i;
        }
        return s;
    }

    static long caller(long x) {
        long s = x;
        for (int i = 0; i < 100; i++) {
            s += tiny(s + i) + tiny(s - i);
            s ^= notInlined(s);
        }
        return s;
    }

    static void work(long endNs) {
        while (System.nanoTime() < endNs) {
            sink += caller(sink);
        }
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        Thread t = new Thread(() -> work(end), "types-worker");
        t.start();
        t.join();
        System.out.println("FrameTypes done " + sink);
        // issue 31: fxagent sets DebugNonSafepoints through VMStructs unless the user gave it
        // (frame_types_test.sh checks this line: true by default, false under -XX:-...)
        System.out.println("DebugNonSafepoints=" + java.lang.management.ManagementFactory
                .getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class)
                .getVMOption("DebugNonSafepoints").getValue());
    }
}
