/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test
 * @summary Oracle agrees inside synchronized static and instance methods, synchronized blocks,
 *          nested (recursive) monitors, and while two threads contend for one monitor;
 *          interpreted and compiled.
 * @run main/othervm SynchronizedTest
 * @run main/othervm -Xcomp -XX:-TieredCompilation SynchronizedTest
 */

import fxagent.Oracle;

public class SynchronizedTest {
    private static final Object LOCK = new Object();
    private static long sink;
    private int count;

    static synchronized void staticSync() {
        Oracle.check();
        sink++;
    }

    synchronized void instanceSync() {
        Oracle.check();
        count++;
        synchronized (this) {
            // The same monitor, entered again.
            Oracle.check();
        }
    }

    static void block() {
        synchronized (LOCK) {
            Oracle.check();
            synchronized (SynchronizedTest.class) {
                Oracle.check();
                sink++;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        SynchronizedTest t = new SynchronizedTest();
        Runnable work = () -> {
            for (int i = 0; i < 200; i++) {
                staticSync();
                t.instanceSync();
                block();
            }
        };
        work.run();
        Thread a = new Thread(work);
        Thread b = new Thread(work);
        a.start();
        b.start();
        a.join();
        b.join();
        if (t.count != 600) {
            throw new AssertionError("count " + t.count);
        }
    }
}
