/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test
 * @summary Oracle agrees inside virtual threads that have not yet been unmounted: nested calls
 *          on 32 virtual threads at once, one scheduler thread or two. ASGCT walks on from the
 *          virtual thread's frames through Continuation.enterSpecial into its carrier's, so the
 *          reference is the virtual thread's JVMTI stack followed by the carrier's; the test
 *          asserts that the carrier part is there, and that platform threads have none.
 *          After a park, ASGCT loses frames: see VirtualThreadRemountTest.
 * @requires jdk.version.major >= 21
 * @run main/othervm VirtualThreadTest
 * @run main/othervm -Djdk.virtualThreadScheduler.parallelism=1 VirtualThreadTest
 */

import fxagent.Oracle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

public class VirtualThreadTest {
    static int nest(int n) {
        return n == 0 ? Oracle.checkCarrierFrames() : nest(n - 1);
    }

    public static void main(String[] args) throws Exception {
        if (Oracle.checkCarrierFrames() != 0) {
            throw new AssertionError("carrier frames on a platform thread");
        }
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 32; t++) {
            final int id = t;
            threads.add(Thread.ofVirtual().name("vt-" + t).unstarted(() -> {
                try {
                    for (int i = 0; i < 200; i++) {
                        if (nest((i + id) % 8) < 1) {
                            throw new AssertionError("no carrier frames below "
                                    + Thread.currentThread());
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        for (Thread th : threads) {
            th.start();
        }
        for (Thread th : threads) {
            th.join();
        }
        if (failure.get() != null) {
            throw new AssertionError("a virtual thread failed", failure.get());
        }
    }
}
