/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Code that spends its time in HotSpot's StubRoutines (issue 32 item 4), one case per run, on a
 * thread named "stubs":
 *   delete      StringBuilder.delete on a 1,000,000-char builder: the time is System.arraycopy's
 *               arraycopy stub, called from compiled code (AbstractStringBuilder.shift)
 *   intrinsics  CRC32, Adler32, MD5, SHA-1, SHA-256 and Base64 over arrays of 0..1 KiB: their
 *               intrinsic stubs (updateBytesCRC32, updateBytesAdler32, md5_implCompress, ...)
 *   millis      System.currentTimeMillis in a loop (os::javaTimeMillis through the vDSO)
 *   subtype     instanceof against interfaces of a class with many, in turn, so that the
 *               secondary super cache misses at each: under C1 (-XX:TieredStopAtLevel=1) the
 *               time is C1's slow_subtype_check stub, called from Stubs.subtypes
 *   barrier     new objects stored into a humongous (old) array: under C1 with G1 each store
 *               crosses regions, and Stubs.stores calls C1's g1_post_barrier_slow stub
 *   clinit      the case's time in a class's static initializer, which a compiled method's
 *               first call to the class runs: under C1 (-XX:TieredStopAtLevel=1 -Xbatch, no OSR,
 *               Stubs.make compiled before the class is initialized) through SharedRuntime's
 *               resolve_static_call blob, the VM calling Java back under the blob's frame
 *   throws      a preallocated exception thrown by Stubs.thrower, caught by its caller
 *               Stubs.catcher (neither inlined: -XX:CompileCommand=dontinline): the time is
 *               HotSpot's exception dispatch (rethrow_C, handle_exception_C), VM code the
 *               compiled code's stubs call with the frame anchor set, the thread still in Java
 * Usage: java -cp fxagent-stacks.jar fxagent.stacks.Stubs delete|intrinsics|millis|subtype|barrier|clinit|throws [SECONDS]
 * Each case runs as Budget.java says, on thread "stubs". Prints "stubs: CASE rounds N checksum
 * X cpu_ms C wall_ms W" at the end (the thread's own CPU time and the case's wall time).
 */
package fxagent.stacks;

import java.security.MessageDigest;
import java.util.Base64;
import java.util.Random;
import java.util.zip.Adler32;
import java.util.zip.CRC32;
import java.util.zip.Checksum;

public final class Stubs {
    private static volatile long sink;

    private Stubs() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 1 || args.length > 2) {
            System.err.println("usage: Stubs delete|intrinsics|millis|subtype|barrier|clinit|throws [SECONDS]");
            System.exit(2);
        }
        String what = args[0];
        double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 3;
        long[] out = new long[2];
        String[] figures = {""};
        Thread t = new Thread(() -> {
            try {
                Budget budget = new Budget(seconds);
                out[0] = run(what, budget, out);
                figures[0] = budget.figures();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, "stubs");
        t.start();
        t.join();
        System.out.println("stubs: " + what + " rounds " + out[1] + " checksum " + out[0] + " "
            + figures[0]);
    }

    static long run(String what, Budget until, long[] out) throws Exception {
        switch (what) {
            case "delete":
                return delete(until, out);
            case "intrinsics":
                return intrinsics(until, out);
            case "millis":
                return millis(until, out);
            case "subtype":
                return subtype(until, out);
            case "barrier":
                return barrier(until, out);
            case "clinit":
                return clinit(until, out);
            case "throws":
                return throwing(until, out);
            default:
                System.err.println("Stubs: unknown case '" + what + "' (delete, intrinsics, millis, subtype, barrier, clinit or throws)");
                System.exit(2);
                return 0;
        }
    }

    static long delete(Budget until, long[] out) {
        StringBuilder sb = new StringBuilder();
        sb.append(new char[1_000_000]);
        long n = 0;
        while (until.more()) {
            for (int i = 0; i < 100; i++) {
                sb.append(12345);
                sb.delete(0, 5);
            }
            n++;
        }
        out[1] = n;
        return sb.length();
    }

    static long intrinsics(Budget until, long[] out) throws Exception {
        byte[][] arrays = new byte[1025][];
        Random random = new Random(123);
        for (int i = 0; i < arrays.length; i++) {
            arrays[i] = new byte[i];
            random.nextBytes(arrays[i]);
        }
        MessageDigest[] digests = {MessageDigest.getInstance("MD5"), MessageDigest.getInstance("SHA-1"),
            MessageDigest.getInstance("SHA-256")};
        long n = 0, sum = 0;
        while (until.more()) {
            byte[] input = arrays[(int) (n % arrays.length)];
            for (int k = 0; k < 20; k++) {
                sum += checksum(input, new CRC32()) + checksum(input, new Adler32());
                for (MessageDigest md : digests) {
                    sum += md.digest(input)[0];
                }
                sum += Base64.getEncoder().encode(input).length;
            }
            n++;
        }
        out[1] = n;
        sink = sum;
        return sum;
    }

    static long checksum(byte[] input, Checksum c) {
        c.update(input, 0, input.length);
        return c.getValue();
    }

    static long millis(Budget until, long[] out) {
        long n = 0, sum = 0;
        while (until.more()) {
            for (int i = 0; i < 1000; i++) {
                sum += System.currentTimeMillis();
            }
            n++;
        }
        out[1] = n;
        sink = sum;
        return sum;
    }

    interface I0 {}
    interface I1 {}
    interface I2 {}
    interface I3 {}
    interface I4 {}
    interface I5 {}
    interface I6 {}
    interface I7 {}

    static final class Many implements I0, I1, I2, I3, I4, I5, I6, I7 {}

    static final class Few implements I1, I4, I6 {}

    static long subtype(Budget until, long[] out) {
        Object[] objs = {new Many(), new Few(), new Many(), "x"};
        long n = 0, sum = 0;
        while (until.more()) {
            for (int i = 0; i < 1000; i++) {
                sum += subtypes(objs[i & 3]);
            }
            n++;
        }
        out[1] = n;
        sink = sum;
        return sum;
    }

    /** Each test replaces the class's one-entry secondary super cache: the next one misses. */
    static int subtypes(Object o) {
        int k = 0;
        if (o instanceof I1) {
            k += 1;
        }
        if (o instanceof I6) {
            k += 2;
        }
        if (o instanceof I4) {
            k += 4;
        }
        return k;
    }

    static long barrier(Budget until, long[] out) {
        Object[] old = new Object[1 << 22]; // 16 MiB at least: humongous, in old regions
        long n = 0, sum = 0;
        while (until.more()) {
            sum += stores(old, (int) n);
            n++;
        }
        out[1] = n;
        sink = sum;
        return sum;
    }

    /** No stack trace, not suppressible: thrown again and again at no allocation cost. */
    static final class Thrown extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Thrown() {
            super("thrown", null, false, false);
        }
    }

    private static final RuntimeException THROWN = new Thrown();

    static long throwing(Budget until, long[] out) {
        long n = 0, sum = 0;
        while (until.more()) {
            for (int i = 0; i < 1000; i++) {
                sum += catcher(i);
            }
            n++;
        }
        out[1] = n;
        sink = sum;
        return sum;
    }

    /** Catches what thrower throws: the handler HotSpot looks up in this frame. */
    static int catcher(int i) {
        try {
            return thrower(i);
        } catch (RuntimeException e) {
            return 1;
        }
    }

    static int thrower(int i) {
        if ((i & 7) != 7) {
            throw THROWN;
        }
        return 2;
    }

    /** Each store puts a young object into the old array: G1's post barrier's slow case. */
    static int stores(Object[] old, int round) {
        int k = 0;
        for (int i = 0; i < 1000; i++) {
            int at = (round * 1000 + i) * 4099 & (old.length - 1);
            old[at] = new Object();
            k += at;
        }
        return k;
    }

    /** The clinit case's budget, read by Slow's static initializer. */
    private static Budget clinitBudget;

    /** A class whose initialization is the case: run by the first Slow allocated. */
    static final class Slow {
        static final long SUM;

        static {
            long s = 0;
            while (clinitBudget.more()) {
                s += spin(s);
            }
            SUM = s;
        }

        static Object create() {
            return new Object();
        }
    }

    static long spin(long s) {
        for (int i = 0; i < 10000; i++) {
            s = s * 31 + i;
        }
        return s;
    }

    static long clinit(Budget until, long[] out) {
        clinitBudget = until;
        long n = 0;
        for (int i = 0; i < 20000; i++) { // make compiled (with -Xbatch: before the loop ends)
            n += make(false) == null ? 1 : 0;
        }
        Object o = make(true);
        out[1] = n;
        return Slow.SUM + (o != null ? 1 : 0);
    }

    /** Calls Slow when asked: compiled before Slow is initialized, so the first call goes
     * through the resolve_static_call blob, whose call into the VM runs Slow's initializer. */
    static Object make(boolean really) {
        return really ? Slow.create() : null;
    }
}
