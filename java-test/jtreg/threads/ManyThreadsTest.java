/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test
 * @summary Oracle agrees on 16 threads at once, each calling check() 1000 times at varying
 *          depths while the others do the same (and the agent samples all of them).
 * @run main/othervm ManyThreadsTest
 */

import fxagent.Oracle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

public class ManyThreadsTest {
    static final int THREADS = 16;
    static final int CHECKS = 1000;

    static int nest(int n) {
        return n == 0 ? Oracle.check() : nest(n - 1);
    }

    public static void main(String[] args) throws Exception {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            final int id = t;
            Thread th = new Thread(() -> {
                for (int i = 0; i < CHECKS; i++) {
                    nest((i + id) % 32);
                }
            }, "oracle-" + t);
            th.setUncaughtExceptionHandler((thread, e) -> failure.compareAndSet(null, e));
            threads.add(th);
        }
        for (Thread th : threads) {
            th.start();
        }
        for (Thread th : threads) {
            th.join();
        }
        if (failure.get() != null) {
            throw new AssertionError("a checking thread failed", failure.get());
        }
    }
}
