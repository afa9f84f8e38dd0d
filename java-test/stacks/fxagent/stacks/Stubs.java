/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Code that spends its time in HotSpot's StubRoutines (issue 32 item 4), one case per run, on a
 * thread named "stubs":
 *   delete      StringBuilder.delete on a 1,000,000-char builder: the time is System.arraycopy's
 *               arraycopy stub, called from compiled code (AbstractStringBuilder.shift)
 *   intrinsics  CRC32, Adler32, MD5, SHA-1, SHA-256 and Base64 over arrays of 0..1 KiB: their
 *               intrinsic stubs (updateBytesCRC32, updateBytesAdler32, md5_implCompress, ...)
 *   millis      System.currentTimeMillis in a loop (os::javaTimeMillis through the vDSO)
 * Usage: java -cp fxagent-stacks.jar fxagent.stacks.Stubs delete|intrinsics|millis [SECONDS]
 * Each case runs SECONDS (3) of wall time, and past them until "stubs" has used SECONDS / 6 of
 * CPU time, at most 5 x SECONDS in all (it.stub_stacks' timeout is 120 s): at load 64 the
 * thread got 4 ms of CPU in 3 s (2 samples at 2 ms) and the test had nothing to check. Prints
 * "stubs: CASE rounds N checksum X cpu_ms C wall_ms W" at the end (the thread's own CPU time
 * and the case's wall time).
 */
package fxagent.stacks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.Random;
import java.util.zip.Adler32;
import java.util.zip.CRC32;
import java.util.zip.Checksum;

public final class Stubs {
    private static volatile long sink;
    private static long cpuFloorNs;
    private static long capNs;
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

    private Stubs() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 1 || args.length > 2) {
            System.err.println("usage: Stubs delete|intrinsics|millis [SECONDS]");
            System.exit(2);
        }
        String what = args[0];
        long seconds = (long) ((args.length > 1 ? Double.parseDouble(args[1]) : 3) * 1e9);
        long begin = System.nanoTime();
        long until = begin + seconds;
        cpuFloorNs = seconds / 6;
        capNs = begin + 5 * seconds;
        long[] out = new long[3];
        Thread t = new Thread(() -> {
            try {
                out[0] = run(what, until, out);
                out[2] = MX.getCurrentThreadCpuTime();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, "stubs");
        t.start();
        t.join();
        System.out.println("stubs: " + what + " rounds " + out[1] + " checksum " + out[0] + " cpu_ms "
            + out[2] / 1000000 + " wall_ms " + (System.nanoTime() - begin) / 1000000);
    }

    /** Whether the case goes on: before `until`, or past it while the thread's CPU time is under
     * the floor and the cap is not reached (its CPU time read only then). */
    static boolean more(long until) {
        long now = System.nanoTime();
        return now < until || (now < capNs && MX.getCurrentThreadCpuTime() < cpuFloorNs);
    }

    static long run(String what, long until, long[] out) throws Exception {
        switch (what) {
            case "delete":
                return delete(until, out);
            case "intrinsics":
                return intrinsics(until, out);
            case "millis":
                return millis(until, out);
            default:
                System.err.println("Stubs: unknown case '" + what + "' (delete, intrinsics or millis)");
                System.exit(2);
                return 0;
        }
    }

    static long delete(long until, long[] out) {
        StringBuilder sb = new StringBuilder();
        sb.append(new char[1_000_000]);
        long n = 0;
        while (more(until)) {
            for (int i = 0; i < 100; i++) {
                sb.append(12345);
                sb.delete(0, 5);
            }
            n++;
        }
        out[1] = n;
        return sb.length();
    }

    static long intrinsics(long until, long[] out) throws Exception {
        byte[][] arrays = new byte[1025][];
        Random random = new Random(123);
        for (int i = 0; i < arrays.length; i++) {
            arrays[i] = new byte[i];
            random.nextBytes(arrays[i]);
        }
        MessageDigest[] digests = {MessageDigest.getInstance("MD5"), MessageDigest.getInstance("SHA-1"),
            MessageDigest.getInstance("SHA-256")};
        long n = 0, sum = 0;
        while (more(until)) {
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

    static long millis(long until, long[] out) {
        long n = 0, sum = 0;
        while (more(until)) {
            for (int i = 0; i < 1000; i++) {
                sum += System.currentTimeMillis();
            }
            n++;
        }
        out[1] = n;
        sink = sum;
        return sum;
    }
}
