/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test id=tiered
 * @summary Oracle agrees inside a long loop of main that is replaced on stack (OSR) while it
 *          runs; main is called once, so only OSR code can exist for it.
 * @library /lib
 * @run main/othervm -Xbatch OsrTest
 */

/*
 * @test id=c2
 * @summary The same with C2 only.
 * @library /lib
 * @run main/othervm -Xbatch -XX:-TieredCompilation OsrTest
 */

import fxagent.Oracle;
import fxtest.Jit;

public class OsrTest {
    public static void main(String[] args) {
        long acc = 0;
        int checks = 0;
        for (int i = 0; i < 4_000_000; i++) {
            acc += (i * 31L) ^ (acc >>> 3);
            // Checked from the first iteration, so the call is profiled before OSR compiles.
            if ((i & 0x3fff) == 0) {
                Oracle.checkDepth(1);
                checks++;
            }
        }
        Jit.assertLevel("OsrTest.main", 1, 4);
        // Checked from within the OSR code, past the loop's last check.
        Oracle.check();
        System.out.println("checks=" + (checks + 1) + " acc=" + acc);
    }
}
