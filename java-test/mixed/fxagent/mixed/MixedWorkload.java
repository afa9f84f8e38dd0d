// SPDX-License-Identifier: Apache-2.0
// The mixed-mode workloads of issue 16, one per run:
//   java [-Dfxagent.mixed.lib=LIB] -jar fxagent-mixed.jar jni|jnialloc|upcall|debugframe|deepjni|stackgen|deflate|devnull|gc|jit|cthread|wait SECONDS
// Prints one line saying what ran (the smoke test and, later, the profile tests read it).
package fxagent.mixed;

public final class MixedWorkload {
    private static final java.lang.management.ThreadMXBean MX =
        java.lang.management.ManagementFactory.getThreadMXBean();
    private static long capNanos;
    private static long cpuFloorNanos;

    private MixedWorkload() {}

    /**
     * Whether a loop of jni, deepjni, upcall, debugframe, deflate or jnialloc goes on: before
     * untilNanos, or past it while the looping thread has used under half of SECONDS in CPU time
     * (read only then), at most 5 x SECONDS in all. it.mixed_stacks' checks need enough samples
     * of each: at load 19 upcall's main thread made 8 upcalls in 3 s, 8 javaBurn samples
     * (the check wants 10).
     */
    static boolean more(long untilNanos) {
        long now = System.nanoTime();
        return now < untilNanos || (now < capNanos && MX.getCurrentThreadCpuTime() < cpuFloorNanos);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: MixedWorkload jni|jnialloc|upcall|debugframe|deepjni|stackgen|deflate|devnull|gc|jit|cthread|wait SECONDS");
            System.exit(2);
        }
        long seconds = (long) (Double.parseDouble(args[1]) * 1e9);
        long until = System.nanoTime() + seconds;
        capNanos = until + 4 * seconds;
        cpuFloorNanos = seconds / 2;
        String line;
        switch (args[0]) {
            case "jni":
                line = JniBurn.run(until);
                break;
            case "debugframe": // C code with .debug_frame only (issue 32)
                line = JniBurn.runDebugFrame(until);
                break;
            case "jnialloc": // Java objects allocated by C code (issue 32 item 6)
                line = JniAlloc.run(until);
                break;
            case "upcall": // Java -> C -> Java (issue 32)
                line = JniBurn.runUpcall(until);
                break;
            case "deepjni": // the JNI burn under a recursion 200 deep
                line = JniBurn.runDeep(until, 200);
                break;
            case "stackgen": // async-profiler's StackwalkerTests cases (issue 32), main thread
                line = StackGen.run(Double.parseDouble(args[1]));
                break;
            case "deflate":
                line = DeflateWork.run(until);
                break;
            case "devnull":
                line = DevNullWriter.run(until);
                break;
            case "gc":
                line = GcWork.run(until);
                break;
            case "jit":
                line = JitWork.run(until);
                break;
            case "cthread":
                line = CThread.run(until);
                break;
            case "wait":
                line = Waiters.run(until);
                break;
            default:
                System.err.println("MixedWorkload: unknown workload '" + args[0]
                        + "' (use jni, jnialloc, upcall, debugframe, deepjni, stackgen, deflate, devnull, gc, jit, cthread or wait)");
                System.exit(2);
                return;
        }
        System.out.println(line);
    }
}
