// SPDX-License-Identifier: Apache-2.0
package fxagent.stress;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Workloads of the fault and stress tests (tests/it/fault_*.sh, stress_*.sh). Each mode prints
 * one "done ..." line on success and exits 0 unless it is asked to exit otherwise.
 *
 * <pre>
 *   spin THREADS SECONDS READY [EXIT_FILE CODE exit|halt]
 *          THREADS busy threads; READY is created once they run; when EXIT_FILE appears,
 *          System.exit(CODE) or Runtime.halt(CODE); else exit 0 after SECONDS
 *   short TOTAL        TOTAL short-lived threads, 20 alive at a time
 *   concurrent N SECONDS   N threads busy together
 *   deep DEPTH SECONDS     recursion to DEPTH frames, then busy at the bottom
 *   unload ROUNDS      class loaders defining StressHot, running it hot, dropped, System.gc()
 *   alloc SECONDS      4 threads allocating short-lived arrays (run with a small -Xmx)
 * </pre>
 */
public final class StressWorkload {
    static final AtomicLong SINK = new AtomicLong();

    private StressWorkload() {}

    static long burn(long n) {
        long x = n;
        for (int i = 0; i < 20_000; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
        }
        return x;
    }

    static void busyUntil(long deadlineNanos) {
        long acc = 0;
        while (System.nanoTime() < deadlineNanos) {
            acc += burn(acc);
        }
        SINK.addAndGet(acc);
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        switch (mode) {
            case "spin":
                spin(args);
                break;
            case "short":
                shortLived(Integer.parseInt(args[1]));
                break;
            case "concurrent":
                concurrent(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
                break;
            case "deep":
                deep(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
                break;
            case "unload":
                unload(Integer.parseInt(args[1]));
                break;
            case "alloc":
                alloc(Integer.parseInt(args[1]));
                break;
            default:
                throw new IllegalArgumentException("unknown mode " + mode);
        }
    }

    private static List<Thread> startBusy(int n, String prefix, long deadline) {
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Thread t = new Thread(() -> busyUntil(deadline), prefix + i);
            t.setDaemon(true);
            t.start();
            ts.add(t);
        }
        return ts;
    }

    private static void spin(String[] a) throws Exception {
        int threads = Integer.parseInt(a[1]);
        long deadline = System.nanoTime() + Long.parseLong(a[2]) * 1_000_000_000L;
        startBusy(threads, "spin-", deadline);
        Files.createFile(Paths.get(a[3]));
        Path exitFile = a.length > 4 ? Paths.get(a[4]) : null;
        while (System.nanoTime() < deadline) {
            if (exitFile != null && Files.exists(exitFile)) {
                int code = Integer.parseInt(a[5]);
                System.out.println("exiting with " + a[6] + "(" + code + ")");
                System.out.flush();
                if (a[6].equals("halt")) {
                    Runtime.getRuntime().halt(code);
                }
                System.exit(code);
            }
            Thread.sleep(1);
        }
        System.out.println("done spin");
    }

    private static void shortLived(int total) throws InterruptedException {
        Thread[] window = new Thread[20];
        for (int i = 0; i < total; i++) {
            int slot = i % window.length;
            if (window[slot] != null) {
                window[slot].join();
            }
            long deadline = System.nanoTime() + 2_000_000L;
            window[slot] = new Thread(() -> busyUntil(deadline), "short-" + i);
            window[slot].start();
        }
        for (Thread t : window) {
            if (t != null) {
                t.join();
            }
        }
        System.out.println("done short threads=" + total);
    }

    /**
     * Also prints "cpu NAME RUN_NS TOTAL_NS LATE_MS" per thread: the CPU time (user + system) it
     * used inside run(), where the agent's timer is armed (ThreadStart arms it before run(),
     * ThreadEnd disarms it after), in its whole life, and how late after the common start it
     * began to burn. The test uses them to tell a thread the scheduler hardly ran from one whose
     * samples were lost (tests/it/stress_check.py --cpu-covered).
     */
    private static void concurrent(int n, int seconds) throws InterruptedException {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long[] run = new long[n];
        long[] total = new long[n];
        long[] late = new long[n];
        AtomicLong start = new AtomicLong();
        List<Thread> ts = new ArrayList<>();
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            final int k = i;
            Thread t = new Thread(() -> {
                long c0 = mx.getCurrentThreadCpuTime();
                long s;
                while ((s = start.get()) == 0) {
                    LockSupport.parkNanos(20_000_000L);
                }
                late[k] = System.nanoTime() - s;
                busyUntil(s + seconds * 1_000_000_000L);
                total[k] = mx.getCurrentThreadCpuTime();
                run[k] = total[k] - c0;
            }, "conc-" + i);
            t.setDaemon(true);
            t.start();
            ts.add(t);
        }
        /* The run starts once every thread exists, and each thread finds that out on its own
         * timed wake-up. A start time fixed before creating the threads let the late ones find
         * it passed (creating 200 threads next to busy ones is slow under load), and a
         * CountDownLatch wakes its waiters one by one, each woken thread waking the next only
         * once the scheduler runs it, which took longer than the run for most of them. */
        long started = System.nanoTime();
        start.set(started);
        for (Thread t : ts) {
            t.join();
        }
        System.out.println("started " + n + " threads in " + (started - t0) / 1_000_000 + " ms");
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            sb.append("cpu conc-").append(i).append(' ').append(run[i]).append(' ').append(total[i])
                    .append(' ').append(late[i] / 1_000_000).append('\n');
        }
        System.out.print(sb);
        System.out.println("done concurrent threads=" + n);
    }

    static long recurse(int depth, long deadline) {
        if (depth <= 1) {
            busyUntil(deadline);
            return 1;
        }
        return recurse(depth - 1, deadline) + 1;
    }

    private static void deep(int depth, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        long[] got = new long[1];
        Thread t = new Thread(null, () -> got[0] = recurse(depth, deadline), "deep", 512L << 20);
        t.start();
        t.join();
        if (got[0] != depth) {
            throw new IllegalStateException("recursion returned " + got[0]);
        }
        System.out.println("done deep depth=" + depth);
    }

    /** Defines StressHot anew in each loader, so each round's class can be unloaded. */
    static final class OwnLoader extends ClassLoader {
        private final byte[] bytes;

        OwnLoader(byte[] bytes) {
            super(StressWorkload.class.getClassLoader());
            this.bytes = bytes;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.equals(StressHot.class.getName())) {
                synchronized (getClassLoadingLock(name)) {
                    Class<?> c = findLoadedClass(name);
                    return c != null ? c : defineClass(name, bytes, 0, bytes.length);
                }
            }
            return super.loadClass(name, resolve);
        }
    }

    private static byte[] hotBytes() throws IOException {
        String res = "/" + StressHot.class.getName().replace('.', '/') + ".class";
        try (InputStream in = StressWorkload.class.getResourceAsStream(res)) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            in.transferTo(out);
            return out.toByteArray();
        }
    }

    private static void unload(int rounds) throws Exception {
        byte[] bytes = hotBytes();
        for (int r = 0; r < rounds; r++) {
            Class<?> c = new OwnLoader(bytes).loadClass(StressHot.class.getName());
            if (c.getClassLoader() == StressWorkload.class.getClassLoader()) {
                throw new IllegalStateException("StressHot was not defined by its own loader");
            }
            Method m = c.getMethod("run", long.class);
            SINK.addAndGet((Long) m.invoke(null, 30L));
            if (r % 10 == 9) {
                System.gc();
            }
        }
        System.gc();
        System.out.println("done unload rounds=" + rounds);
    }

    private static void alloc(int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Thread t = new Thread(() -> {
                long n = 0;
                Object[] keep = new Object[64];
                while (System.nanoTime() < deadline) {
                    byte[] b = new byte[1024 + (int) (n % 65536)];
                    b[0] = (byte) n;
                    keep[(int) (n % keep.length)] = b;
                    n++;
                }
                SINK.addAndGet(n);
            }, "alloc-" + i);
            t.start();
            ts.add(t);
        }
        for (Thread t : ts) {
            t.join();
        }
        System.out.println("done alloc");
    }
}
