// SPDX-License-Identifier: Apache-2.0
// A C thread the JVM never sees (issue 16: every thread of the process is sampled): libfxmixed's
// CThread.start creates a pthread named "fxmixed-burner", not attached to the JVM, that spins in
// fxmixed_cthread_spin under fxmixed_cthread_main until join. The Java thread only sleeps, so the
// CPU of the run is the C thread's.
package fxagent.mixed;

final class CThread {
    private CThread() {}

    static native boolean start();

    static native long join();

    static String run(long untilNanos) throws InterruptedException {
        String lib = System.getProperty("fxagent.mixed.lib");
        if (lib == null) {
            throw new IllegalStateException("-Dfxagent.mixed.lib=/path/libfxmixed.so is not set");
        }
        System.load(lib);
        if (!start()) {
            throw new IllegalStateException("pthread_create failed");
        }
        while (System.nanoTime() < untilNanos) {
            Thread.sleep(20);
        }
        return "cthread: rounds=" + join();
    }
}
