// SPDX-License-Identifier: Apache-2.0
// JNI workload: Java calls libfxmixed.so's burn(), whose C function fxmixed_burn_cpu spins on
// the CPU (issue 16: the native frame must appear under this Java caller). The library's path
// comes from -Dfxagent.mixed.lib (tests/it/mixed_workloads_test.sh passes the built one).
package fxagent.mixed;

final class JniBurn {
    private JniBurn() {}

    static native long burn(int millis);

    static native long calls();

    /** Calls back javaBurn(1) `times` times from C through JNI (issue 32: the C frames between
     * Java). */
    static native long upcall(int times);

    /** Spins in Java, rounds * 4096 steps; called from C by upcall. */
    static long javaBurn(int rounds) {
        long x = 88172645463325252L;
        for (int i = 0; i < rounds * 4096; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    /** Calls fxdf_level1 -> 2 -> 3 of libfxdebugframe.so, whose only unwind information is
     * .debug_frame (issue 32); the library lies next to libfxmixed.so. */
    static native long debugFrame(int rounds);

    static String runDebugFrame(long untilNanos) {
        String lib = System.getProperty("fxagent.mixed.lib");
        if (lib == null) {
            throw new IllegalStateException("-Dfxagent.mixed.lib=/path/libfxmixed.so is not set");
        }
        System.load(new java.io.File(new java.io.File(lib).getParentFile(), "libfxdebugframe.so")
                .getAbsolutePath());
        long mix = 0;
        long calls = 0;
        while (MixedWorkload.more(untilNanos)) {
            mix ^= debugFrame(64);
            calls++;
        }
        return "debugframe: calls=" + calls + " mix=" + (mix & 0xff);
    }

    /** Java -> C -> Java until untilNanos. */
    static String runUpcall(long untilNanos) {
        load();
        long mix = 0;
        while (MixedWorkload.more(untilNanos)) {
            mix ^= upcall(1000);
        }
        return "upcall: native_calls=" + calls() + " mix=" + (mix & 0xff);
    }

    private static void load() {
        String lib = System.getProperty("fxagent.mixed.lib");
        if (lib == null) {
            throw new IllegalStateException("-Dfxagent.mixed.lib=/path/libfxmixed.so is not set");
        }
        System.load(lib);
    }

    /** The same burn at the bottom of a recursion `levels` deep (issue 32: depth= counts the
     * native frames above the Java ones too). */
    static String runDeep(long untilNanos, int levels) {
        return levels <= 0 ? run(untilNanos) : runDeep(untilNanos, levels - 1);
    }

    static String run(long untilNanos) {
        load();
        long javaCalls = 0;
        long mix = 0;
        while (MixedWorkload.more(untilNanos)) {
            mix ^= burn(20);
            javaCalls++;
        }
        return "jni: java_calls=" + javaCalls + " native_calls=" + calls() + " mix=" + (mix & 0xff);
    }
}
