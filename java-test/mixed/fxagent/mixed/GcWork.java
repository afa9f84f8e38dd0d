// SPDX-License-Identifier: Apache-2.0
// GC workload (issue 16: GC threads as tracks): allocates short- and medium-lived arrays and
// keeps a rolling window of them alive, so that with a small heap (-Xmx64m) the collector's
// threads work all the time. Prints how many collections the run saw, so a run where the GC
// did nothing cannot pass as busy.
package fxagent.mixed;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;

final class GcWork {
    private GcWork() {}

    static String run(long untilNanos) {
        Object[] window = new Object[4096];
        long allocated = 0;
        int i = 0;
        while (System.nanoTime() < untilNanos) {
            for (int k = 0; k < 1024; k++) {
                int[] a = new int[64 + (k & 255)];
                a[0] = k;
                window[i++ & (window.length - 1)] = (k & 7) == 0 ? new Object[] {a, window} : a;
                allocated += a.length;
            }
        }
        long gcs = 0;
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
            gcs += Math.max(0, b.getCollectionCount());
        }
        return "gc: collections=" + gcs + " allocated_ints=" + allocated;
    }
}
