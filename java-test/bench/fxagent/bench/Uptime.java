/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The long-run workload of issue 33 item 5 (bench/run_uptime_bench.sh, docs/FLEET.md "Weeks of
 * uptime"): THREADS threads for SECONDS seconds, each task loading UptimeTask afresh through a
 * class loader of its own (child-first for that one class), so every task brings a new class
 * with new methods and new lambdas (hidden classes of that loader), runs them (CPU work and
 * allocation), and drops the loader: its classes become unloadable at the next collection that
 * looks. A profiler that keeps something per method ever seen grows here; one that keeps what
 * live classes need stays flat.
 *
 * Usage: java -cp fxagent-bench.jar fxagent.bench.Uptime [seconds=N] [threads=N]
 * Prints one line a minute: tasks run, classes loaded and unloaded so far (ClassLoadingMXBean).
 */
package fxagent.bench;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ClassLoadingMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

public final class Uptime {
    private Uptime() {
    }

    static final String TASK = "fxagent.bench.UptimeTask";
    static final AtomicLong TASKS = new AtomicLong();
    static volatile long sink;

    /** Defines Task itself (child-first) from the bytes of the jar; everything else: the parent. */
    static final class OneShotLoader extends ClassLoader {
        private final byte[] bytes;

        OneShotLoader(byte[] bytes, ClassLoader parent) {
            super(parent);
            this.bytes = bytes;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!TASK.equals(name)) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    c = defineClass(name, bytes, 0, bytes.length);
                }
                return c;
            }
        }
    }

    static byte[] taskBytes() throws IOException {
        try (InputStream in = Uptime.class.getResourceAsStream("UptimeTask.class")) {
            if (in == null) {
                throw new IOException("UptimeTask.class is not in the class path");
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            in.transferTo(out);
            return out.toByteArray();
        }
    }

    @SuppressWarnings("unchecked")
    static long runOne(byte[] bytes) throws ReflectiveOperationException {
        OneShotLoader loader = new OneShotLoader(bytes, Uptime.class.getClassLoader());
        Class<?> c = loader.loadClass(TASK);
        Supplier<Long> t = (Supplier<Long>) c.getDeclaredConstructor().newInstance();
        TASKS.incrementAndGet();
        return t.get();
    }

    public static void main(String[] argv) throws Exception {
        long seconds = 600;
        int threads = 2;
        for (String a : argv) {
            if (a.startsWith("seconds=")) {
                seconds = Long.parseLong(a.substring(8));
            } else if (a.startsWith("threads=")) {
                threads = Integer.parseInt(a.substring(8));
            } else {
                System.err.println("usage: Uptime [seconds=N] [threads=N]");
                System.exit(2);
            }
        }
        byte[] bytes = taskBytes();
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(() -> {
                try {
                    while (System.nanoTime() < end) {
                        sink += runOne(bytes);
                    }
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException(e);
                }
            }, "uptime-" + i);
            ts.add(t);
            t.start();
        }
        ClassLoadingMXBean cl = ManagementFactory.getClassLoadingMXBean();
        long next = System.nanoTime() + 60_000_000_000L;
        for (Thread t : ts) {
            while (t.isAlive()) {
                t.join(1000);
                if (System.nanoTime() >= next) {
                    next += 60_000_000_000L;
                    System.out.printf("uptime: %d tasks, %d classes loaded, %d unloaded%n",
                            TASKS.get(), cl.getTotalLoadedClassCount(),
                            cl.getUnloadedClassCount());
                }
            }
        }
        System.out.printf("uptime: done: %d tasks, %d classes loaded, %d unloaded%n", TASKS.get(),
                cl.getTotalLoadedClassCount(), cl.getUnloadedClassCount());
    }
}
