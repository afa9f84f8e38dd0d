/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test id=c2
 * @summary Oracle agrees inside a chain of small methods that C2 inlines into one hot method:
 *          the walkers must expand the inlined scopes of one physical frame into virtual frames.
 * @library /lib
 * @run main/othervm -Xbatch -XX:-TieredCompilation
 *      -XX:CompileCommand=quiet -XX:CompileCommand=inline,InliningTest::*
 *      InliningTest 4
 */

/*
 * @test id=c1
 * @summary The same chain inlined by C1.
 * @library /lib
 * @run main/othervm -Xbatch -XX:TieredStopAtLevel=1
 *      -XX:CompileCommand=quiet -XX:CompileCommand=inline,InliningTest::*
 *      InliningTest 1
 */

import fxagent.Oracle;
import fxtest.Jit;

public class InliningTest {
    private static int sink;
    private final int salt;

    InliningTest(int salt) {
        this.salt = salt;
    }

    public static void main(String[] args) {
        int level = Integer.parseInt(args[0]);
        InliningTest t = new InliningTest(7);
        Jit.warmUntil("InliningTest.hot", level, () -> t.hot(sink & 127));
        for (int i = 0; i < 200; i++) {
            t.hot(0);
        }
        // hot is the only physical frame of the chain once compiled with a..e inlined.
        Jit.assertLevel("InliningTest.hot", level, level);
    }

    void hot(int k) {
        for (int i = 0; i < 8; i++) {
            sink += a(k + i);
        }
    }

    int a(int k) {
        return b(k) + 1;
    }

    int b(int k) {
        return c(k) ^ salt;
    }

    int c(int k) {
        return d(k) * 3;
    }

    int d(int k) {
        return e(k) - 1;
    }

    int e(int k) {
        if (k == 0) {
            Oracle.checkDepth(8);
        }
        return k;
    }
}
