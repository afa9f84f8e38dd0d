// SPDX-License-Identifier: Apache-2.0
// Lock waits of known length (issue 18, tests/it/locks_test.sh) and a contended benchmark
// (bench/run_locks.sh).
//   known SECONDS [DELAY_MS]  (the rounds begin DELAY_MS in, default 500)
//                  "monitor-waiter" blocks on a MonitorLock held 300 ms by "monitor-holder", and
//                  "rl-waiter" on a ReentrantLock held 300 ms by "rl-holder", 3 times each;
//                  "loner" takes its own lock and never contends; for wall mode "sleeper"
//                  sleeps, "busy" spins and "blocked" waits for a monitor "hog" never lets go
//                  of while the run lasts; "idle-pool", a pool's one thread, gets a task
//                  before each round and waits for work in LinkedBlockingQueue.take in between
//                  (idle waits, not contention); "array-waiter" waits once for an int[]'s
//                  monitor. Prints "waits done" after these waits. With
//                  -Dfxagent.locks.go=FILE the rounds begin once FILE exists (at most 60 s).
//   bench THREADS SECONDS  THREADS threads increment one counter under a synchronized block and
//                  under a ReentrantLock in turn; prints "ops N".
//   views SECONDS  known figures in every view (issue 30, tests/it/views_test.sh): "views-busy"
//                  and "views-busy-2" spin SECONDS (CPU), main waits 3 x 300 ms on the
//                  MonitorLock and 3 x 300 ms on the ReentrantLock (as known does), then
//                  allocates 32 MiB in byte[4096]
//                  in allocate(); prints "allocated bytes N" and, last, the process's own CPU
//                  time at main's start and at its end, "process cpu ns START END"
//                  (OperatingSystemMXBean): the JVM's startup before main is not the agent's;
//                  before it "views-busy cpu ns N", the spinning thread's own (ThreadMXBean).
//   storm THREADS SECONDS [SPIN [yield]]  the same with the synchronized block only, where it
//                  also spins SPIN (default 200) steps (and, with "yield", yields the CPU): a
//                  short critical section, so many contended monitor enters that block briefly.
package fxagent.locks;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.ReentrantLock;

public final class LockWorkload {
    public static final int HOLD_MS = 300;

    /** The monitor's class, so a marker's lock class names it. */
    static final class MonitorLock {
        long count;
    }

    static final MonitorLock MONITOR = new MonitorLock();
    static final ReentrantLock RLOCK = new ReentrantLock();
    static volatile boolean running = true;
    static volatile long sink;

    static void waitOnMonitor() {
        synchronized (MONITOR) {
            MONITOR.count++;
        }
    }

    static void waitOnReentrantLock() {
        RLOCK.lock();
        try {
            sink++;
        } finally {
            RLOCK.unlock();
        }
    }

    static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void await(CountDownLatch l) {
        try {
            l.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One wait: the holder takes the lock, lets the waiter try, and lets go HOLD_MS later. */
    static volatile Thread monitorWaiter;

    // The holder keeps the lock HOLD_MS from the moment the waiter is seen waiting, not from
    // when it took it: on a loaded machine a waiter started late would otherwise wait less
    // than the test's threshold (or not at all). Seen within 10 s, else it lets go anyway.
    static void untilWaiting(java.util.function.BooleanSupplier waiting) {
        long give_up = System.nanoTime() + 10_000_000_000L;
        while (!waiting.getAsBoolean() && System.nanoTime() < give_up)
            sleepQuietly(1);
        sleepQuietly(HOLD_MS);
    }

    static void monitorRound() throws InterruptedException {
        monitorRound(MONITOR, "monitor-waiter", LockWorkload::waitOnMonitor);
    }

    static final int[] ARRAY_LOCK = new int[1];

    static void waitOnArray() {
        synchronized (ARRAY_LOCK) {
            ARRAY_LOCK[0]++;
        }
    }

    static void monitorRound(Object lock, String name, Runnable wait) throws InterruptedException {
        CountDownLatch held = new CountDownLatch(1);
        Thread waiter = new Thread(wait, name);
        monitorWaiter = waiter;
        Thread holder = new Thread(() -> {
            synchronized (lock) {
                held.countDown();
                untilWaiting(() -> monitorWaiter.getState() == Thread.State.BLOCKED);
            }
        }, "monitor-holder");
        holder.start();
        await(held);
        waiter.start();
        waiter.join();
        holder.join();
    }

    static void reentrantRound() throws InterruptedException {
        CountDownLatch held = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            RLOCK.lock();
            try {
                held.countDown();
                untilWaiting(RLOCK::hasQueuedThreads);
            } finally {
                RLOCK.unlock();
            }
        }, "rl-holder");
        holder.start();
        await(held);
        Thread waiter = new Thread(LockWorkload::waitOnReentrantLock, "rl-waiter");
        waiter.start();
        waiter.join();
        holder.join();
    }

    static Thread daemon(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    static void known(int seconds, long delayMs) throws InterruptedException {
        Object own = new Object();
        Object hogged = new Object();
        CountDownLatch hogging = new CountDownLatch(1);
        daemon("loner", () -> {
            while (running) {
                synchronized (own) {
                    sink++;
                }
                sleepQuietly(1);
            }
        });
        daemon("sleeper", () -> {
            while (running)
                sleepQuietly(50);
        });
        daemon("busy", () -> {
            long x = 0;
            while (running)
                x += System.nanoTime() & 7;
            sink = x;
        });
        daemon("hog", () -> {
            synchronized (hogged) {
                hogging.countDown();
                while (running)
                    sleepQuietly(10);
            }
        });
        await(hogging);
        daemon("blocked", () -> {
            synchronized (hogged) {
                sink++;
            }
        });
        ExecutorService idle = Executors.newFixedThreadPool(1, r -> {
            Thread t = new Thread(r, "idle-pool");
            t.setDaemon(true);
            return t;
        });
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        sleepQuietly(delayMs); // the agent starts (attach) and its threads settle
        String go = System.getProperty("fxagent.locks.go");
        for (int i = 0; go != null && !new java.io.File(go).exists() && i < 3000; i++)
            sleepQuietly(20);
        for (int i = 0; i < 3; i++) {
            idle.execute(() -> sink++);
            monitorRound();
            idle.execute(() -> sink++);
            reentrantRound();
        }
        monitorRound(ARRAY_LOCK, "array-waiter", LockWorkload::waitOnArray); // class int[]
        idle.execute(() -> sink++); // ends the last idle wait
        System.out.println("waits done");
        String release = System.getProperty("fxagent.locks.release");
        while (System.nanoTime() < end && (release == null || !new java.io.File(release).exists()))
            sleepQuietly(20);
        running = false;
    }

    static byte[] kept;

    /** Allocates at least `bytes` in byte[4096] (4112 bytes each with their header). */
    static long allocate(long bytes) {
        long n = 0;
        while (n < bytes) {
            kept = new byte[4096];
            n += 4096 + 16;
        }
        return n;
    }

    static long processCpuNs() {
        java.lang.management.OperatingSystemMXBean os =
                java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
    }

    static void views(int seconds) throws InterruptedException {
        long cpu0 = processCpuNs();
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        long[] busyCpu = new long[1];
        Thread busy = new Thread(() -> {
            while (System.nanoTime() < end)
                sink += spinSteps(10_000);
            busyCpu[0] = java.lang.management.ManagementFactory.getThreadMXBean()
                    .getCurrentThreadCpuTime();
        }, "views-busy");
        // a second spinner: on a loaded machine the threads the agent samples must outweigh
        // those it does not (GC, its own) for the profile's CPU to be the JVM's within 20 %
        Thread busy2 = new Thread(() -> {
            while (System.nanoTime() < end)
                sink += spinSteps(10_000);
        }, "views-busy-2");
        busy.start();
        busy2.start();
        sleepQuietly(200);
        for (int i = 0; i < 3; i++) {
            monitorRound();
            reentrantRound();
        }
        System.out.println("waits done");
        System.out.println("allocated bytes " + allocate(32L << 20));
        busy.join();
        busy2.join();
        running = false;
        System.out.println("views-busy cpu ns " + busyCpu[0]);
        System.out.println("process cpu ns " + cpu0 + " " + processCpuNs());
    }

    static long spinSteps(int n) {
        long x = sink;
        for (int i = 0; i < n; i++)
            x = x * 31 + i;
        return x;
    }

    static void bench(int threads, int seconds, boolean parks, int spin, boolean yield)
            throws InterruptedException {
        long[] ops = new long[threads];
        Thread[] ts = new Thread[threads];
        // -Dfxagent.locks.quiet_ms: no contended enter for so long before the threads begin, so
        // the lock view's owner lookup thread has slowed to its idle period and the first enter
        // must wake it (tests/it/locks_test.sh's storm).
        sleepQuietly(Long.getLong("fxagent.locks.quiet_ms", 0L));
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        for (int i = 0; i < threads; i++) {
            final int k = i;
            ts[i] = new Thread(() -> {
                long n = 0;
                while (System.nanoTime() < end) {
                    for (int j = 0; j < 100; j++) {
                        synchronized (MONITOR) {
                            MONITOR.count += spinSteps(spin) & 1;
                            if (yield)
                                Thread.yield(); // the holder is off CPU: contenders block
                        }
                        if (parks) {
                            RLOCK.lock();
                            try {
                                sink++;
                            } finally {
                                RLOCK.unlock();
                            }
                        }
                    }
                    n += parks ? 200 : 100;
                }
                ops[k] = n;
            }, (parks ? "bench-" : "storm-") + i);
            ts[i].start();
        }
        long total = 0;
        for (int i = 0; i < threads; i++) {
            ts[i].join();
            total += ops[i];
        }
        System.out.println("ops " + total);
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length >= 2 && args[0].equals("known")) {
            known(Integer.parseInt(args[1]), args.length > 2 ? Long.parseLong(args[2]) : 500);
        } else if (args.length >= 2 && args[0].equals("views")) {
            views(Integer.parseInt(args[1]));
        } else if (args.length >= 3 && (args[0].equals("bench") || args[0].equals("storm"))) {
            boolean storm = args[0].equals("storm");
            bench(Integer.parseInt(args[1]), Integer.parseInt(args[2]), !storm,
                    storm ? (args.length > 3 ? Integer.parseInt(args[3]) : 200) : 0,
                    storm && args.length > 4 && args[4].equals("yield"));
        } else {
            System.err.println(
                    "usage: LockWorkload known SECONDS [DELAY_MS] | views SECONDS | bench|storm THREADS SECONDS");
            System.exit(2);
        }
    }
}
