/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test
 * @summary Stacks deeper than the depth limit: the oracle compares only the top `depth` frames,
 *          ASGCT must return exactly that many, and the check says the stack was truncated.
 *          (1) explicit depths against a 300-deep recursion; (2) 2100 frames against the
 *          default depth of 2048; (3) a child JVM whose agent runs with depth=64, where check()
 *          itself must use the agent's depth.
 * @library /lib
 * @run main/othervm -Xss8m DepthLimitTest
 */

import fxagent.Oracle;
import fxtest.ChildJvm;
import java.util.List;

public class DepthLimitTest {
    static boolean truncatedAt(int frames, int depth) {
        if (frames > 0) {
            return truncatedAt(frames - 1, depth);
        }
        return Oracle.checkTruncated(depth);
    }

    static int checkAt(int frames) {
        if (frames > 0) {
            return checkAt(frames - 1);
        }
        return Oracle.check();
    }

    static void expect(boolean truncated, int frames, int depth) {
        if (truncatedAt(frames, depth) != truncated) {
            throw new AssertionError("recursion " + frames + ", depth " + depth
                    + ": expected truncated=" + truncated);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("child")) {
            child();
            return;
        }
        for (int i = 0; i < 200; i++) {
            expect(true, 300, 64);
            expect(true, 300, 300);
            expect(false, 300, 1000);
            expect(false, 5, 64);
        }
        // check() with the agent's default depth (2048): compares exactly 2048 frames.
        int compared = checkAt(2100);
        if (compared != 2048) {
            throw new AssertionError("compared " + compared + " frames, expected 2048");
        }
        ChildJvm.run(List.of("-Xss8m",
                        ChildJvm.agentOptionWith("quiet,depth=64,file=child-%p.json.gz")),
                "DepthLimitTest", "child")
                .assertExit(0).assertOutputContains("child ok");
    }

    static void child() {
        for (int i = 0; i < 200; i++) {
            int compared = checkAt(300);
            if (compared != 64) {
                throw new AssertionError("agent depth=64: compared " + compared + " frames");
            }
            if (!truncatedAt(300, 0) || truncatedAt(10, 0)) {
                throw new AssertionError("agent depth=64: truncation misreported");
            }
        }
        System.out.println("child ok");
    }
}
