/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Code that spends its time in HotSpot's StubRoutines (issue 32 item 4), one case per run, on a
 * thread named "stubs":
 *   delete      StringBuilder.delete on a 1,000,000-char builder: the time is System.arraycopy's
 *               arraycopy stub, called from compiled code (AbstractStringBuilder.shift)
 *   intrinsics  CRC32, Adler32, MD5, SHA-1, SHA-256 and Base64 over arrays of 0..1 KiB: their
 *               intrinsic stubs (updateBytesCRC32, updateBytesAdler32, md5_implCompress, ...)
 *   millis      System.currentTimeMillis in a loop (os::javaTimeMillis through the vDSO), and
 *               System.nanoTime as the first bytecode of Stubs.nanos, inlined into the loop
 *               (os::javaTimeNanos: a leaf call whose caller frame is at bci 0 of an inlined
 *               method, docs/VALIDATION.md 8.5a)
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
 *   entry       64 compiled methods (ent0..ent63, not inlined: -XX:CompileCommand=dontinline)
 *               called after each System.gc() (-XX:+ExplicitGCInvokesConcurrent under G1): each
 *               concurrent cycle arms every nmethod's entry barrier, and each method's next entry
 *               calls JDK 25's method_entry_barrier stub, whose leaf call into the VM
 *               (nmethod_stub_entry_barrier) is the case's time; 2 s of wall time, longer
 *               while under 100 rounds (Budget's cap)
 *   mh          a MethodHandle kept in a field (no constant to C2) invoked exactly from
 *               Stubs.mhRound (not inlined: -XX:CompileCommand=dontinline): compiled code calls
 *               the MethodHandle.invokeBasic nmethod, a method handle intrinsic without a frame
 *               (docs/VALIDATION.md 8.5l), which jumps to the LambdaForm and Stubs.mhTarget
 * Usage: java -cp fxagent-stacks.jar fxagent.stacks.Stubs delete|intrinsics|millis|subtype|barrier|clinit|throws|entry|mh [SECONDS]
 * Each case runs as Budget.java says, on thread "stubs". Prints "stubs: CASE rounds N checksum
 * X cpu_ms C wall_ms W" at the end (the thread's own CPU time and the case's wall time).
 */
package fxagent.stacks;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
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
            System.err.println("usage: Stubs delete|intrinsics|millis|subtype|barrier|clinit|throws|entry [SECONDS]");
            System.exit(2);
        }
        String what = args[0];
        double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 3;
        long[] out = new long[2];
        String[] figures = {""};
        Budget.prepare(); // its set-up on main, not among the "stubs" thread's samples
        if (what.equals("delete")) { // likewise the builder's allocation and first growth
            deleteInput = new StringBuilder().append(new char[1_000_000]).append(12345).delete(0, 5);
        }
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
            case "entry":
                return entry(until, out);
            case "mh":
                return mh(until, out);
            default:
                System.err.println("Stubs: unknown case '" + what + "' (delete, intrinsics, millis, subtype, barrier, clinit, throws, entry or mh)");
                System.exit(2);
                return 0;
        }
    }

    /** delete's 1,000,000-char builder, made on main before the "stubs" thread starts: its
     * allocation and its first growth (page faults, interpreted copies: ~10-20 samples at 2 ms)
     * are no part of the case. */
    private static StringBuilder deleteInput;

    static long delete(Budget until, long[] out) {
        StringBuilder sb = deleteInput;
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
            sum += intrinsicRound(arrays[(int) (n % arrays.length)], digests);
            n++;
        }
        out[1] = n;
        sink = sum;
        return sum;
    }

    // One round of the intrinsics case, its own compilation (the test keeps it out of line):
    // an OSR compilation of the loop above that inlined it would have the intrinsics' calls,
    // whose stubs the agent does not recover from OSR code (docs/VALIDATION.md 8.5d).
    static long intrinsicRound(byte[] input, MessageDigest[] digests) {
        long sum = 0;
        for (int k = 0; k < 20; k++) {
            sum += checksum(input, new CRC32()) + checksum(input, new Adler32());
            for (MessageDigest md : digests) {
                sum += md.digest(input)[0];
            }
            sum += Base64.getEncoder().encode(input).length;
        }
        return sum;
    }

    static long checksum(byte[] input, Checksum c) {
        c.update(input, 0, input.length);
        return c.getValue();
    }

    private static final Object[] KEYS = {"a", "b", "c", "d", "e", "f", "g", "h"};

    static long ent0(long x) { return x * 3 + KEYS[0].hashCode(); }
    static long ent1(long x) { return x * 5 + KEYS[1].hashCode(); }
    static long ent2(long x) { return x * 7 + KEYS[2].hashCode(); }
    static long ent3(long x) { return x * 9 + KEYS[3].hashCode(); }
    static long ent4(long x) { return x * 11 + KEYS[4].hashCode(); }
    static long ent5(long x) { return x * 13 + KEYS[5].hashCode(); }
    static long ent6(long x) { return x * 15 + KEYS[6].hashCode(); }
    static long ent7(long x) { return x * 17 + KEYS[7].hashCode(); }
    static long ent8(long x) { return x * 19 + KEYS[0].hashCode(); }
    static long ent9(long x) { return x * 21 + KEYS[1].hashCode(); }
    static long ent10(long x) { return x * 23 + KEYS[2].hashCode(); }
    static long ent11(long x) { return x * 25 + KEYS[3].hashCode(); }
    static long ent12(long x) { return x * 27 + KEYS[4].hashCode(); }
    static long ent13(long x) { return x * 29 + KEYS[5].hashCode(); }
    static long ent14(long x) { return x * 31 + KEYS[6].hashCode(); }
    static long ent15(long x) { return x * 33 + KEYS[7].hashCode(); }
    static long ent16(long x) { return x * 35 + KEYS[0].hashCode(); }
    static long ent17(long x) { return x * 37 + KEYS[1].hashCode(); }
    static long ent18(long x) { return x * 39 + KEYS[2].hashCode(); }
    static long ent19(long x) { return x * 41 + KEYS[3].hashCode(); }
    static long ent20(long x) { return x * 43 + KEYS[4].hashCode(); }
    static long ent21(long x) { return x * 45 + KEYS[5].hashCode(); }
    static long ent22(long x) { return x * 47 + KEYS[6].hashCode(); }
    static long ent23(long x) { return x * 49 + KEYS[7].hashCode(); }
    static long ent24(long x) { return x * 51 + KEYS[0].hashCode(); }
    static long ent25(long x) { return x * 53 + KEYS[1].hashCode(); }
    static long ent26(long x) { return x * 55 + KEYS[2].hashCode(); }
    static long ent27(long x) { return x * 57 + KEYS[3].hashCode(); }
    static long ent28(long x) { return x * 59 + KEYS[4].hashCode(); }
    static long ent29(long x) { return x * 61 + KEYS[5].hashCode(); }
    static long ent30(long x) { return x * 63 + KEYS[6].hashCode(); }
    static long ent31(long x) { return x * 65 + KEYS[7].hashCode(); }
    static long ent32(long x) { return x * 67 + KEYS[0].hashCode(); }
    static long ent33(long x) { return x * 69 + KEYS[1].hashCode(); }
    static long ent34(long x) { return x * 71 + KEYS[2].hashCode(); }
    static long ent35(long x) { return x * 73 + KEYS[3].hashCode(); }
    static long ent36(long x) { return x * 75 + KEYS[4].hashCode(); }
    static long ent37(long x) { return x * 77 + KEYS[5].hashCode(); }
    static long ent38(long x) { return x * 79 + KEYS[6].hashCode(); }
    static long ent39(long x) { return x * 81 + KEYS[7].hashCode(); }
    static long ent40(long x) { return x * 83 + KEYS[0].hashCode(); }
    static long ent41(long x) { return x * 85 + KEYS[1].hashCode(); }
    static long ent42(long x) { return x * 87 + KEYS[2].hashCode(); }
    static long ent43(long x) { return x * 89 + KEYS[3].hashCode(); }
    static long ent44(long x) { return x * 91 + KEYS[4].hashCode(); }
    static long ent45(long x) { return x * 93 + KEYS[5].hashCode(); }
    static long ent46(long x) { return x * 95 + KEYS[6].hashCode(); }
    static long ent47(long x) { return x * 97 + KEYS[7].hashCode(); }
    static long ent48(long x) { return x * 99 + KEYS[0].hashCode(); }
    static long ent49(long x) { return x * 101 + KEYS[1].hashCode(); }
    static long ent50(long x) { return x * 103 + KEYS[2].hashCode(); }
    static long ent51(long x) { return x * 105 + KEYS[3].hashCode(); }
    static long ent52(long x) { return x * 107 + KEYS[4].hashCode(); }
    static long ent53(long x) { return x * 109 + KEYS[5].hashCode(); }
    static long ent54(long x) { return x * 111 + KEYS[6].hashCode(); }
    static long ent55(long x) { return x * 113 + KEYS[7].hashCode(); }
    static long ent56(long x) { return x * 115 + KEYS[0].hashCode(); }
    static long ent57(long x) { return x * 117 + KEYS[1].hashCode(); }
    static long ent58(long x) { return x * 119 + KEYS[2].hashCode(); }
    static long ent59(long x) { return x * 121 + KEYS[3].hashCode(); }
    static long ent60(long x) { return x * 123 + KEYS[4].hashCode(); }
    static long ent61(long x) { return x * 125 + KEYS[5].hashCode(); }
    static long ent62(long x) { return x * 127 + KEYS[6].hashCode(); }
    static long ent63(long x) { return x * 129 + KEYS[7].hashCode(); }

    /** Enters each of ent0..ent63 once (compiled, each its own nmethod with its own barrier). */
    static long entered(long s) {
        s += ent0(s) + ent1(s) + ent2(s) + ent3(s);
        s += ent4(s) + ent5(s) + ent6(s) + ent7(s);
        s += ent8(s) + ent9(s) + ent10(s) + ent11(s);
        s += ent12(s) + ent13(s) + ent14(s) + ent15(s);
        s += ent16(s) + ent17(s) + ent18(s) + ent19(s);
        s += ent20(s) + ent21(s) + ent22(s) + ent23(s);
        s += ent24(s) + ent25(s) + ent26(s) + ent27(s);
        s += ent28(s) + ent29(s) + ent30(s) + ent31(s);
        s += ent32(s) + ent33(s) + ent34(s) + ent35(s);
        s += ent36(s) + ent37(s) + ent38(s) + ent39(s);
        s += ent40(s) + ent41(s) + ent42(s) + ent43(s);
        s += ent44(s) + ent45(s) + ent46(s) + ent47(s);
        s += ent48(s) + ent49(s) + ent50(s) + ent51(s);
        s += ent52(s) + ent53(s) + ent54(s) + ent55(s);
        s += ent56(s) + ent57(s) + ent58(s) + ent59(s);
        s += ent60(s) + ent61(s) + ent62(s) + ent63(s);
        return s;
    }

    static long entry(Budget until, long[] out) {
        long s = 0, n = 0, end = System.nanoTime() + 2_000_000_000L;
        for (int i = 0; i < 20_000; i++) { // compiled before the barriers matter
            s = entered(s);
        }
        // 2 s, and on to 100 rounds (Budget's cap): each round's 64 entries are the case's
        // samples (~0.3 a round at 2 ms), and at load 19 a 2 s run had 59-68 rounds (18-20
        // samples; at least 5 required), a count set by the scheduler, not by the workload
        while (until.more() && (System.nanoTime() < end || n < 100)) {
            System.gc(); // a concurrent cycle: every nmethod's entry barrier armed
            s = entered(s);
            n++;
        }
        out[1] = n;
        sink = s;
        return s;
    }

    /** mh's handle: a field, not a constant, so C2 calls invokeBasic instead of inlining. */
    static MethodHandle mhHandle;

    static int mhTarget(int x) {
        return x * 31 + 7;
    }

    static int mhRound(int x) throws Throwable {
        return (int) mhHandle.invokeExact(x);
    }

    static long mh(Budget until, long[] out) throws Exception {
        mhHandle = MethodHandles.lookup().findStatic(Stubs.class, "mhTarget",
            MethodType.methodType(int.class, int.class));
        long n = 0, sum = 0;
        try {
            while (until.more()) {
                for (int i = 0; i < 10000; i++) {
                    sum += mhRound(i);
                }
                n++;
            }
        } catch (Throwable t) {
            throw new RuntimeException(t);
        }
        out[1] = n;
        sink = sum;
        return sum;
    }

    static long millis(Budget until, long[] out) {
        long n = 0, sum = 0;
        while (until.more()) {
            for (int i = 0; i < 1000; i++) {
                sum += System.currentTimeMillis();
                sum += nanos();
            }
            n++;
        }
        out[1] = n;
        sink = sum;
        return sum;
    }

    /** System.nanoTime at bci 0 (a trivial method: inlined into millis' loop by C1 and C2). */
    static long nanos() {
        return System.nanoTime();
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
