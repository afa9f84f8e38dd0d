/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test
 * @summary The oracle itself: it counts the frames it compares (a known chain gives a known
 *          count), its AsyncGetCallTrace trace comes from the agent's SIGPROF handler on
 *          registered threads, checkDepth fails when fewer frames were compared than required,
 *          and without the agent every check throws IllegalStateException instead of passing
 *          silently.
 * @library /lib
 * @run main/othervm OracleSelfTest
 */

import fxagent.Oracle;
import fxtest.ChildJvm;
import java.util.List;

public class OracleSelfTest {
    static int chain(int n) {
        return n == 0 ? Oracle.check() : chain(n - 1);
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("child")) {
            Oracle.check();
            System.out.println("check passed without the agent");
            return;
        }
        // On a thread of its own, so the harness's frames below main don't count:
        // run + 11 chain frames + Oracle.check + Oracle.call + Oracle.check0.
        int[] frames = new int[1];
        Thread t = new Thread() {
            @Override
            public void run() {
                frames[0] = chain(10);
            }
        };
        t.start();
        t.join();
        if (frames[0] != 15) {
            throw new AssertionError("chain(10): " + frames[0] + " frames, expected 15");
        }
        // main and a started thread are registered: the trace is the signal handler's.
        boolean[] viaSignal = new boolean[1];
        Thread s = new Thread(() -> viaSignal[0] = Oracle.checkViaSignal());
        s.start();
        s.join();
        if (!Oracle.checkViaSignal() || !viaSignal[0]) {
            throw new AssertionError("AsyncGetCallTrace was called directly, not by the SIGPROF"
                    + " handler (main: " + Oracle.checkViaSignal() + ", thread: " + viaSignal[0]
                    + ")");
        }
        try {
            Oracle.checkDepth(1000);
            throw new AssertionError("checkDepth(1000) passed on a shallow stack");
        } catch (AssertionError expected) {
            if (!String.valueOf(expected.getMessage()).contains("expected at least 1000")) {
                throw expected;
            }
        }
        ChildJvm.run(List.of(), "OracleSelfTest", "child")
                .assertExit(1)
                .assertOutputContains("java.lang.IllegalStateException: fxagent is not loaded");
    }
}
