// SPDX-License-Identifier: Apache-2.0
// async-profiler's StackwalkerTests cases, our own workload (issue 32, docs/VALIDATION.md
// section 9): main calls each JNI method of libfxmixed.so's fxstackgen.c once, and each burns
// a quarter of the run's time in C under native frames of unusual sizes (a 320 KiB JNI frame;
// seven 128 KiB frames; a 64 KiB frame called in a loop). One call each, from main: the Java
// frames stay interpreted (`_[0]` under fxprof convert --annotate), as in its normalStackVM
// case. The JVM needs -Xss5m (deepFrame uses 1.1 MiB of stack). Then async-profiler's
// CstackTests case (its LongInitializer): a class whose static initializer reads /dev/urandom
// 16 bytes at a time for a fifth of the run (the thread's CPU time, as the C code burns: by the
// wall clock, at load 26 its share of the samples fell to 1.2 %, the test's bound 2 %), so that FileInputStream.readBytes's native frames
// sit above the initializer, and the VM's class initialization (InstanceKlass::initialize,
// JavaCalls::call_helper, the call stub) between it and main.
package fxagent.mixed;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

final class StackGen {
    private StackGen() {}

    static native long leafFrame(int millis);

    static native long largeFrame(int millis);

    static native long deepFrame(int millis);

    static native long largeInnerFrame(int millis);

    static String run(double seconds) {
        String lib = System.getProperty("fxagent.mixed.lib");
        if (lib == null) {
            throw new IllegalStateException("-Dfxagent.mixed.lib=/path/libfxmixed.so is not set");
        }
        System.load(lib);
        int fifth = (int) (seconds * 200);
        long mix = leafFrame(fifth) ^ largeFrame(fifth) ^ deepFrame(fifth) ^ largeInnerFrame(fifth);
        initNanos = fifth * 1_000_000L;
        mx = ManagementFactory.getThreadMXBean(); /* its classes loaded outside the initializer */
        try {
            Class.forName(StackGen.class.getName() + "$LongInit");
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(e);
        }
        return "stackgen: " + fifth + " ms each, mix=" + (mix & 0xff) + " reads=" + LongInit.reads;
    }

    static long initNanos;
    static ThreadMXBean mx;

    /** Reads /dev/urandom in its static initializer for initNanos of the thread's CPU time (read
     * every 64 reads: a clock read is a system call too), at most 10 x initNanos of wall time. */
    static final class LongInit {
        static final long reads;

        static {
            byte[] bytes = new byte[16];
            long n = 0;
            long until = mx.getCurrentThreadCpuTime() + initNanos;
            long cap = System.nanoTime() + 10 * initNanos;
            try (java.io.FileInputStream in = new java.io.FileInputStream("/dev/urandom")) {
                while (in.read(bytes) > 0 && (++n % 64 != 0
                        || (mx.getCurrentThreadCpuTime() < until && System.nanoTime() < cap))) {
                    /* reading */
                }
            } catch (java.io.IOException e) {
                throw new IllegalStateException(e);
            }
            reads = n;
        }
    }
}
