// SPDX-License-Identifier: Apache-2.0
// Virtual-thread workloads of issue 22 (JDK 21+; compiled by the tests with that JDK's javac,
// --release 21, since the other workloads are built for 11). Modes:
//   groups SECONDS   named virtual threads burning CPU in groups: 4 "alpha-N" in alphaWork and
//                    2 "beta-N" in betaWork (each counts its work in thousands of loop turns
//                    and prints it at the end: "units NAME COUNT"), 3 "sleeper-N" sleeping 5 ms
//                    at a time in sleeperWait, one platform thread "platform-burn"; the
//                    CPU-bound ones yield after every unit so that all of them get turns on the
//                    carriers. A unit's length varies (1 to 3 million turns, per-thread
//                    pseudo-random): equal units in a fixed round-robin lock in phase with a
//                    fixed sampling interval and give some threads 3x the samples of others.
//                    Runs SECONDS and on until the carriers used CARRIER_CPU_MS of CPU (40 s
//                    in all at most, runOn): the tests count samples, which come from CPU.
//   pinned SECONDS   2 "pinned-N" virtual threads sleeping inside a class initializer (pinned
//                    on every JDK), "pinnative-0" reading a child's pipe in native code
//                    (pinned too), and one burner "pinburn-0"; 4 carriers.
//   churn COUNT      COUNT short-lived virtual threads (a little work each), 1000 at a time.
//   waits SECONDS    4 "waiter-N" virtual threads sleeping 20 ms at a time in waiterSleep, 2
//                    "taker-N" blocked in takerTake on a queue a platform thread feeds every
//                    30 ms; prints "waits NAME COUNT" per thread at the end.
//   sleepers N SECONDS  N virtual threads sleeping 10 ms at a time (about N * 100 waits/s);
//                    prints "waits N".
//   sleepsum SECONDS 24 "sleepy-N" virtual threads on (the test's) 2 carriers, each spinning
//                    3 ms in sleepySpin then sleeping 20 ms in sleepySleep, again and again: 24
//                    want 3.1 carriers, so woken sleepers queue for one (issue 30 item 5);
//                    prints "sleeps COUNT" (sleeps done, all threads) and "sleep_ms 20".
//   mounts SECONDS   a mount-heavy loop: 64 virtual threads yielding in a tight loop; prints
//                    "mounts N" (yields, each one unmount and one mount) and the rate.
//   attach SECONDS [STOP_FILE]
//                    for an agent attached mid-run: "hog-0", a virtual thread spinning in hogSpin
//                    that never yields (mounted once, before any attach), and 3 burners
//                    "alpha-0", "alpha-1", "beta-0" as in groups; prints "ready" once the hog
//                    finished a hogSpin and each burner a unit; ends after SECONDS or once
//                    STOP_FILE exists; prints "hog turns N" (hogSpin calls) and "units NAME
//                    COUNT" per burner at the end.
//   frozen SECONDS   docs/VALIDATION.md 4.1 (4 carriers): 2 "frozen-N" virtual threads recurse
//                    FROZEN_DEPTH levels in frozenDescend, then at the bottom sleep 1 ms and burn
//                    in frozenBurn, again and again: each remount thaws only the top frames,
//                    so AsyncGetCallTrace jumps from frozenDescend to enterSpecial; 2
//                    "steady-N" recurse as deep in steadyDescend and burn in steadyBurn without
//                    ever unmounting (their whole stack stays on the carrier). Prints
//                    "remounts NAME COUNT" per frozen thread at the end. Runs as groups does.
package fxagent.vthreads;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

public final class VThreadWorkload {
    static volatile long sink;
    static final AtomicBoolean stop = new AtomicBoolean();

    static long unit(long x) {
        return unit(x, 2_000_000);
    }

    static long unit(long x, int turns) {
        for (int i = 0; i < turns; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= x >>> 17;
        }
        return x;
    }

    static long alphaWork(long x, int turns) {
        return unit(x, turns);
    }

    static long betaWork(long x, int turns) {
        return unit(x + 1, turns);
    }

    static void sleeperWait() throws InterruptedException {
        Thread.sleep(5);
    }

    static final class Burner implements Runnable {
        final boolean alpha;
        final AtomicLong units = new AtomicLong();

        Burner(boolean alpha) {
            this.alpha = alpha;
        }

        public void run() {
            long x = 1;
            long r = System.identityHashCode(this) | 1L;
            while (!stop.get()) {
                r ^= r << 13;
                r ^= r >>> 7;
                r ^= r << 17;
                int turns = 1_000_000 + (int) Long.remainderUnsigned(r, 2_000_001);
                x = alpha ? alphaWork(x, turns) : betaWork(x, turns);
                units.addAndGet(turns / 1000);
                Thread.yield();
            }
            sink += x;
        }
    }

    static void groups(int seconds) throws Exception {
        List<Thread> all = new ArrayList<>();
        List<Burner> burners = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            Burner b = new Burner(i < 4);
            String name = (i < 4 ? "alpha-" + i : "beta-" + (i - 4));
            burners.add(b);
            names.add(name);
            all.add(Thread.ofVirtual().name(name).start(b));
        }
        for (int i = 0; i < 3; i++) {
            all.add(Thread.ofVirtual().name("sleeper-" + i).start(() -> {
                try {
                    while (!stop.get())
                        sleeperWait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        Burner pb = new Burner(true);
        all.add(Thread.ofPlatform().name("platform-burn").start(pb));
        runOn(seconds, CARRIER_CPU_MS);
        stop.set(true);
        for (Thread t : all)
            t.join();
        for (int i = 0; i < burners.size(); i++)
            System.out.println("units " + names.get(i) + " " + burners.get(i).units.get());
        System.out.println("units platform-burn " + pb.units.get());
    }

    // The carriers' CPU a groups or frozen run waits for, and the wall time it waits at most.
    // The tests' checks count cpu-mode samples of 10 ms of the virtual threads' code (>= 50 in
    // it.vthreads' cpu, >= 30 in notrans, >= 20 frozenBurn samples) and validate comparisons
    // (>= 50): all come from the carriers' CPU, not from the seconds asked. A quiet 2-core
    // machine gives 2 carriers 2 s of CPU a second, far past this in the seconds asked; a loaded
    // one (load ~28, CI) gave them ~0.25 s in a 4 s run (25 notrans samples).
    static final long CARRIER_CPU_MS = 1200;
    static final long WALL_CAP_MS = 40_000;

    // Sleeps SECONDS, then on until the carrier threads (ForkJoinPool-*, platform threads that
    // ThreadMXBean can time; a virtual thread's own CPU time it cannot) used CPU_MS of CPU
    // together, WALL_CAP_MS in all at most. Prints "carriers cpu ms C at SECONDS s" and, at the
    // end, "carriers cpu ms C wall ms W".
    static void runOn(int seconds, long cpuMs) throws InterruptedException {
        long t0 = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        long cpu = carrierCpuMs();
        System.out.println("carriers cpu ms " + cpu + " at " + seconds + " s");
        while (cpu < cpuMs && System.nanoTime() - t0 < WALL_CAP_MS * 1_000_000L) {
            Thread.sleep(100);
            cpu = carrierCpuMs();
        }
        System.out.println("carriers cpu ms " + cpu + " wall ms " + (System.nanoTime() - t0) / 1_000_000);
    }

    // The CPU time of the live carriers since they started (a carrier that ended is left out:
    // the run then only lasts longer).
    static long carrierCpuMs() {
        var mx = java.lang.management.ManagementFactory.getThreadMXBean();
        long ns = 0;
        for (var info : mx.getThreadInfo(mx.getAllThreadIds())) {
            if (info != null && info.getThreadName().startsWith("ForkJoinPool")) {
                long t = mx.getThreadCpuTime(info.getThreadId());
                ns += Math.max(t, 0);
            }
        }
        return ns / 1_000_000;
    }

    // Sleeping inside a class initializer pins the virtual thread to its carrier on every JDK
    // (JEP 491 unpinned monitors in 24, not <clinit>): the carrier is blocked, a virtual thread
    // mounted.
    static void pinnedSleep() {
        try {
            while (!stop.get())
                Thread.sleep(5);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static final class Pin0 {
        static final boolean done;

        static {
            pinnedSleep();
            done = true;
        }
    }

    static final class Pin1 {
        static final boolean done;

        static {
            pinnedSleep();
            done = true;
        }
    }

    // A blocking read of a pipe (a child process's output) inside a native method pins the
    // virtual thread too: its carrier waits in the read system call, in native code.
    static void pinnedRead() {
        try {
            while (!stop.get()) {
                Process p = new ProcessBuilder("sleep", "1").start();
                try (var in = p.getInputStream()) {
                    while (in.read() >= 0) {
                    }
                }
                p.waitFor();
            }
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    static void pinned(int seconds) throws Exception {
        List<Thread> all = new ArrayList<>();
        all.add(Thread.ofVirtual().name("pinnative-0").start(VThreadWorkload::pinnedRead));
        all.add(Thread.ofVirtual().name("pinned-0").start(() -> sink += Pin0.done ? 1 : 0));
        all.add(Thread.ofVirtual().name("pinned-1").start(() -> sink += Pin1.done ? 1 : 0));
        all.add(Thread.ofVirtual().name("pinburn-0").start(new Burner(true)));
        Thread.sleep(seconds * 1000L);
        stop.set(true);
        for (Thread t : all)
            t.join();
    }

    static void churn(int count) throws Exception {
        int done = 0;
        while (done < count) {
            int n = Math.min(1000, count - done);
            Thread[] batch = new Thread[n];
            for (int i = 0; i < n; i++) {
                final int k = done + i;
                batch[i] = Thread.ofVirtual().name("churn-" + k).start(() -> {
                    sink += k * 31L;
                    Thread.yield();
                    sink += k;
                });
            }
            for (Thread t : batch)
                t.join();
            done += n;
        }
        System.out.println("churned " + done);
    }

    static void mounts(int seconds) throws Exception {
        AtomicLong yields = new AtomicLong();
        List<Thread> all = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            all.add(Thread.ofVirtual().start(() -> {
                long n = 0;
                while (!stop.get()) {
                    sink += n;
                    Thread.yield();
                    n++;
                }
                yields.addAndGet(n);
            }));
        }
        long t0 = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        stop.set(true);
        for (Thread t : all)
            t.join();
        double s = (System.nanoTime() - t0) / 1e9;
        System.out.printf("mounts %d rate %.0f/s%n", yields.get(), yields.get() / s);
    }

    static long hogSpin(long x) {
        return unit(x);
    }

    static final AtomicLong hogTurns = new AtomicLong();

    static void attach(int seconds, String stopFile) throws Exception {
        List<Thread> all = new ArrayList<>();
        all.add(Thread.ofVirtual().name("hog-0").start(() -> {
            long x = 3;
            while (!stop.get()) {
                x = hogSpin(x);
                hogTurns.incrementAndGet();
            }
            sink += x;
        }));
        String[] names = {"alpha-0", "alpha-1", "beta-0"};
        List<Burner> burners = new ArrayList<>();
        for (String name : names) {
            Burner b = new Burner(name.startsWith("alpha"));
            burners.add(b);
            all.add(Thread.ofVirtual().name(name).start(b));
        }
        // "ready" only once the hog spins and every burner did a unit: a fixed 300 ms was not
        // proof of it on a loaded machine, and a hog not yet mounted at the attach would be
        // mounted after it (its samples then rightly not "mounted before attach").
        long giveUp = System.nanoTime() + 60_000_000_000L;
        while (hogTurns.get() == 0 || burners.stream().anyMatch(b -> b.units.get() == 0)) {
            if (System.nanoTime() > giveUp)
                throw new IllegalStateException("hog-0 or a burner never ran in 60 s");
            Thread.sleep(10);
        }
        System.out.println("ready");
        System.out.flush();
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        java.io.File f = stopFile != null ? new java.io.File(stopFile) : null;
        while (System.nanoTime() < end && (f == null || !f.exists()))
            Thread.sleep(50);
        stop.set(true);
        for (Thread t : all)
            t.join();
        System.out.println("hog turns " + hogTurns.get());
        for (int i = 0; i < names.length; i++)
            System.out.println("units " + names[i] + " " + burners.get(i).units.get());
    }

    // Deep enough that a remount thaws only the top of the stack: HotSpot thaws a chunk whole
    // below 500 words (continuationFreezeThaw.cpp), and one level is a few words.
    static final int FROZEN_DEPTH = 400;

    static long frozenBurn(long x) {
        return unit(x, 300_000);
    }

    static long steadyBurn(long x) {
        return unit(x, 300_000);
    }

    static long frozenDescend(int n, AtomicLong remounts) throws InterruptedException {
        if (n > 0)
            return frozenDescend(n - 1, remounts) + 1;
        long x = 5;
        while (!stop.get()) {
            Thread.sleep(1); // unmounts; the next mount thaws this frame, not its callers
            remounts.incrementAndGet();
            for (int i = 0; i < 20; i++)
                x = frozenBurn(x);
        }
        return x;
    }

    static long steadyDescend(int n) {
        if (n > 0)
            return steadyDescend(n - 1) + 1;
        long x = 7;
        while (!stop.get())
            x = steadyBurn(x);
        return x;
    }

    static void frozen(int seconds) throws Exception {
        List<Thread> all = new ArrayList<>();
        List<AtomicLong> remounts = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            AtomicLong c = new AtomicLong();
            remounts.add(c);
            all.add(Thread.ofVirtual().name("frozen-" + i).start(() -> {
                try {
                    sink += frozenDescend(FROZEN_DEPTH, c);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
            all.add(Thread.ofVirtual().name("steady-" + i)
                    .start(() -> sink += steadyDescend(FROZEN_DEPTH)));
        }
        runOn(seconds, CARRIER_CPU_MS);
        stop.set(true);
        for (Thread t : all)
            t.join();
        for (int i = 0; i < 2; i++)
            System.out.println("remounts frozen-" + i + " " + remounts.get(i).get());
    }

    static void waiterSleep() throws InterruptedException {
        Thread.sleep(20);
    }

    static Object takerTake(java.util.concurrent.BlockingQueue<Object> q) throws InterruptedException {
        return q.take();
    }

    static void waits(int seconds) throws Exception {
        List<Thread> all = new ArrayList<>();
        List<AtomicLong> counts = new ArrayList<>();
        var q = new java.util.concurrent.LinkedBlockingQueue<Object>();
        for (int i = 0; i < 6; i++) {
            AtomicLong c = new AtomicLong();
            counts.add(c);
            boolean waiter = i < 4;
            String name = waiter ? "waiter-" + i : "taker-" + (i - 4);
            all.add(Thread.ofVirtual().name(name).start(() -> {
                try {
                    while (!stop.get()) {
                        if (waiter)
                            waiterSleep();
                        else if (takerTake(q) == stop)
                            break;
                        c.incrementAndGet();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        Thread feeder = Thread.ofPlatform().name("feeder").start(() -> {
            try {
                while (!stop.get()) {
                    Thread.sleep(30);
                    q.put(q);
                }
                q.put(stop);
                q.put(stop);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Thread.sleep(seconds * 1000L);
        stop.set(true);
        feeder.join();
        for (Thread t : all)
            t.join();
        for (int i = 0; i < 6; i++)
            System.out.println("waits " + all.get(i).getName() + " " + counts.get(i).get());
    }

    static void sleepers(int n, int seconds) throws Exception {
        AtomicLong waits = new AtomicLong();
        List<Thread> all = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            all.add(Thread.ofVirtual().start(() -> {
                long k = 0;
                try {
                    while (!stop.get()) {
                        Thread.sleep(10);
                        k++;
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                waits.addAndGet(k);
            }));
        }
        Thread.sleep(seconds * 1000L);
        stop.set(true);
        for (Thread t : all)
            t.join();
        System.out.println("waits " + waits.get());
    }

    static long sleepySpin(long nanos) {
        long end = System.nanoTime() + nanos, x = 1;
        while (System.nanoTime() < end)
            for (int i = 0; i < 1000; i++)
                x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }

    static void sleepySleep() throws InterruptedException {
        Thread.sleep(20);
    }

    static void sleepsum(int seconds) throws Exception {
        AtomicLong sleeps = new AtomicLong(), sink = new AtomicLong();
        List<Thread> all = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
            all.add(Thread.ofVirtual().name("sleepy-" + i).start(() -> {
                try {
                    while (!stop.get()) {
                        sink.addAndGet(sleepySpin(3_000_000));
                        sleepySleep();
                        sleeps.incrementAndGet();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        Thread.sleep(seconds * 1000L);
        stop.set(true);
        for (Thread t : all)
            t.join();
        System.out.println("sleeps " + sleeps.get());
        System.out.println("sleep_ms 20");
        System.out.println("sink " + (sink.get() & 1));
    }

    /* Allocation samples on virtual threads (issue 32 item 6): 4 virtual threads allocating
     * arrays in allocOnVirtual until stop; the platform thread main allocates nothing. */
    static void allocs(int seconds) throws Exception {
        List<Thread> all = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            all.add(Thread.ofVirtual().name("allocator-" + i).start(() -> {
                long n = 0;
                while (!stop.get())
                    n += allocOnVirtual(n);
                sink += n;
            }));
        }
        Thread.sleep(seconds * 1000L);
        stop.set(true);
        for (Thread t : all)
            t.join();
        System.out.println("allocs done");
    }

    static long allocOnVirtual(long n) {
        long[] a = new long[64 + (int) (n & 255)];
        a[0] = n;
        return a.length + a[0] % 3;
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "groups";
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        switch (mode) {
            case "groups" -> groups(n);
            case "pinned" -> pinned(n);
            case "churn" -> churn(n);
            case "mounts" -> mounts(n);
            case "attach" -> attach(n, args.length > 2 ? args[2] : null);
            case "frozen" -> frozen(n);
            case "waits" -> waits(n);
            case "sleepers" -> sleepers(n, Integer.parseInt(args[2]));
            case "sleepsum" -> sleepsum(n);
            case "allocs" -> allocs(n);
            default -> throw new IllegalArgumentException("unknown mode " + mode);
        }
    }
}
