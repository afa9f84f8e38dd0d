/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A workload with a thread that never runs while sampled (tests/it/tracks_test.sh): "fx-idle"
 * sleeps from its start until main interrupts it; main burns SECONDS of its own CPU time, then
 * ends fx-idle, so its track has a start and an end and, in cpu mode, no sample. fx-idle still
 * runs a little (its start, the sleep's entry, the interrupt's exception, its end), and the
 * process-wide itimer may land there; so fx-idle reads its own CPU time as it ends, and main
 * prints it ("fx-idle cpu NS") for the test's bound. main finds fx-idle's OS tid itself
 * (/proc/self/task/TID/comm) and prints "fx-idle tid TID".
 *
 * Usage: java -cp fxagent-demo.jar fxagent.demo.IdleThread [SECONDS]   (default 2)
 */
package fxagent.demo;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

public final class IdleThread {
    private IdleThread() {}

    private static volatile long idleCpuNs = -1;

    private static String idleTid() throws IOException {
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Paths.get("/proc/self/task"))) {
            for (Path t : tasks) {
                String comm;
                try {
                    comm = new String(Files.readAllBytes(t.resolve("comm")), StandardCharsets.UTF_8);
                } catch (IOException gone) {
                    continue; /* a thread that ended meanwhile */
                }
                if (comm.trim().equals("fx-idle"))
                    return t.getFileName().toString();
            }
        }
        return "?";
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2;
        Thread idle = new Thread(() -> {
            try {
                Thread.sleep(Long.MAX_VALUE);
            } catch (InterruptedException expected) {
                /* main is done */
            }
            idleCpuNs = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
        }, "fx-idle");
        idle.start();
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long until = mx.getCurrentThreadCpuTime() + (long) (seconds * 1e9);
        long wallCap = System.nanoTime() + (long) (seconds * 4e9) + 30_000_000_000L;
        long sum = 0;
        String tid = "?";
        while (mx.getCurrentThreadCpuTime() < until && System.nanoTime() < wallCap) {
            for (int i = 0; i < 100_000; i++)
                sum += (sum ^ i) * 31 + i;
            if (tid.equals("?"))
                tid = idleTid();
        }
        idle.interrupt();
        idle.join();
        System.out.println("fx-idle tid " + tid);
        System.out.println("fx-idle cpu " + idleCpuNs);
        System.out.println("checksum " + sum);
    }
}
