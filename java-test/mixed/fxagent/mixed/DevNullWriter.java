// SPDX-License-Identifier: Apache-2.0
// System-call workload: a thread writes one byte at a time to /dev/null, one write(2) per
// byte, so its samples sit in the kernel's write path under FileOutputStream.write (issue 16).
package fxagent.mixed;

import java.io.FileOutputStream;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

final class DevNullWriter {
    private DevNullWriter() {}

    static String run(long untilNanos) throws InterruptedException, IOException {
        AtomicLong writes = new AtomicLong();
        AtomicReference<IOException> failure = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try (FileOutputStream out = new FileOutputStream("/dev/null")) {
                while (System.nanoTime() < untilNanos) {
                    out.write('x');
                    writes.incrementAndGet();
                }
            } catch (IOException e) {
                failure.set(e);
            }
        }, "devnull-writer");
        t.start();
        t.join();
        if (failure.get() != null) {
            throw failure.get();
        }
        return "devnull: writes=" + writes.get() + " thread=devnull-writer";
    }
}
