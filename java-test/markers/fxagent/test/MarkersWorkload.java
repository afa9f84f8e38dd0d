/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The workload of fxagent's marker tests: every kind of event the agent turns into a marker or a
 * counter, in known numbers, so a profile of it can be checked against the truth.
 *
 *   what                                        expected in the profile
 *   System.gc() x GCS (default 5)               >= GCS "GC pause" markers (other GCs may add)
 *   hot(long) called until the JIT compiles it  "JIT compiled" markers naming
 *                                               fxagent.test.MarkersWorkload.hot(J)J
 *   thread "marker-thread": mark("checkpoint")  3 instants "checkpoint", 1 interval "phase-A"
 *   x3, begin/end("phase-A"), mark(name, text)  (text "phase-A done"), on that thread's track
 *   20 threads started as "short-N", renamed    tracks "short-renamed-N" with registerTime and
 *   "short-renamed-N", 40 ms CPU each, ended    unregisterTime
 *   thread started as "pool-worker-0", renamed  a track "renamed-live" (still running at exit)
 *   "renamed-live", kept alive (daemon)
 *
 * It also runs without the agent: every Markers call is then a no-op and it exits 0.
 * Usage: java [-agentpath:libfxagent.so=...] -cp fxagent-markers.jar fxagent.test.MarkersWorkload
 *        [GCS [LINGER_MS]]     (LINGER_MS: sleep that long before exiting, default 0)
 */
package fxagent.test;

import fxagent.Markers;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;

public final class MarkersWorkload {
    static final int SHORT_THREADS = 20;
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    private static volatile long sink;
    private static volatile Object keep;

    private MarkersWorkload() {}

    /* The method the JIT must compile: small, hot, with a result that is used. */
    static long hot(long n) {
        long h = n;
        for (long i = 0; i < n; i++) {
            h = h * 31 + (i ^ (h >>> 7));
        }
        return h;
    }

    /* Burns `ns` of this thread's CPU time, whatever the machine's load. */
    static void burn(long ns) {
        long end = MX.getCurrentThreadCpuTime() + ns;
        long s = 0;
        while (MX.getCurrentThreadCpuTime() < end) {
            for (int i = 0; i < 20000; i++) {
                s += i * (s | 1);
            }
        }
        sink += s;
    }

    private static void gcs(int n) {
        for (int i = 0; i < n; i++) {
            keep = new byte[1 << 20];
            System.gc();
        }
    }

    private static void jit() {
        long s = 0;
        for (int i = 0; i < 30000; i++) {
            s += hot(2000);
        }
        sink += s;
    }

    private static Thread markerThread() {
        Thread t = new Thread(() -> {
            Thread.currentThread().setName("marker-thread");
            for (int i = 0; i < 3; i++) {
                burn(20_000_000L);
                Markers.mark("checkpoint");
            }
            long h = Markers.begin("phase-A");
            burn(30_000_000L);
            Markers.end(h);
            Markers.end(h); // a second end is ignored
            Markers.end(0L);
            Markers.mark("phase-A done", "after " + 3 + " checkpoints");
        }, "marker-thread-init");
        t.start();
        return t;
    }

    private static void shortThreads() throws InterruptedException {
        List<Thread> all = new ArrayList<>();
        for (int i = 0; i < SHORT_THREADS; i++) {
            final int n = i;
            Thread t = new Thread(() -> {
                Thread.currentThread().setName("short-renamed-" + n);
                burn(40_000_000L);
            }, "short-" + i);
            all.add(t);
            t.start();
        }
        for (Thread t : all) {
            t.join();
        }
    }

    private static void renamedLive() {
        Thread t = new Thread(() -> {
            Thread.currentThread().setName("renamed-live");
            burn(30_000_000L);
            try {
                Thread.sleep(Long.MAX_VALUE);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "pool-worker-0");
        t.setDaemon(true);
        t.start();
    }

    public static void main(String[] args) throws InterruptedException {
        int gcs = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        long lingerMs = args.length > 1 ? Long.parseLong(args[1]) : 0;
        System.out.println("markers enabled: " + Markers.enabled());
        renamedLive();
        Thread marker = markerThread();
        gcs(gcs);
        jit();
        shortThreads();
        marker.join();
        Thread.sleep(lingerMs);
        System.out.println("done: " + gcs + " System.gc() calls, " + SHORT_THREADS
                + " short threads, checksum " + (sink & 0xff));
    }
}
