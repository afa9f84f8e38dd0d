/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test
 * @summary KNOWN HOTSPOT LIMITATION, asserted so that a change shows up: once a virtual thread
 *          has parked and been mounted again, only its top frames are back on the carrier's
 *          stack (lazy thaw); the rest stay in the heap stack chunk behind a return barrier.
 *          AsyncGetCallTrace does not walk into that chunk: from the last thawed frame it jumps
 *          to Continuation.enterSpecial, so its stack lacks the virtual thread's lower frames,
 *          which JVMTI GetStackTrace reports. The test passes while ASGCT still has exactly
 *          that gap, and fails if the oracle agrees (the limitation is gone: update
 *          docs/VALIDATION.md) or if the stacks differ in any other way.
 * @requires jdk.version.major >= 21
 * @run main/othervm VirtualThreadRemountTest
 */

import fxagent.Oracle;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class VirtualThreadRemountTest {
    static final int DEPTH = 40;

    static String deep(int n) throws InterruptedException {
        if (n > 0) {
            return deep(n - 1);
        }
        Oracle.check(); // not yet unmounted: agrees
        Thread.sleep(5); // unmounts; the remount thaws only the top frames
        try {
            Oracle.check();
            return null;
        } catch (AssertionError e) {
            return e.getMessage();
        }
    }

    public static void main(String[] args) throws Exception {
        AtomicReference<Object> result = new AtomicReference<>();
        Thread vt = Thread.ofVirtual().start(() -> {
            try {
                result.set(deep(DEPTH));
            } catch (Throwable e) {
                result.set(e);
            }
        });
        vt.join();
        Object r = result.get();
        if (r instanceof Throwable) {
            throw new AssertionError("virtual thread failed", (Throwable) r);
        }
        if (r == null) {
            throw new AssertionError("ASGCT and JVMTI now agree after a remount: the known "
                    + "limitation is gone; update docs/VALIDATION.md and VirtualThreadTest");
        }
        String msg = (String) r;
        System.out.println(msg);
        // The known shape: ASGCT has the oracle's frames and the thawed top of deep(), then
        // jumps over the rest of the virtual thread's frames to enterSpecial and the carrier.
        Matcher m = Pattern.compile("ASGCT skips GetStackTrace frames #(\\d+)\\.\\.#\\d+ "
                + "\\((\\d+) frames\\)").matcher(msg);
        if (!m.find() || Integer.parseInt(m.group(2)) < DEPTH - 4
                || !msg.contains(String.format(">> %4d  jdk.internal.vm.Continuation.enterSpecial"
                        + "@native", Integer.parseInt(m.group(1))))) {
            throw new AssertionError("stacks differ, but not in the known way:\n" + msg);
        }
    }
}
