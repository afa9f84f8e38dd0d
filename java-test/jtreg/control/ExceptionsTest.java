/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test
 * @summary Oracle agrees around exceptions in deep stacks: inside catch blocks at several levels
 *          of a 60-deep recursion that throws from the bottom, inside finally blocks while an
 *          exception unwinds, inside a try-with-resources close() and inside an exception's
 *          constructor; interpreted and compiled (exceptions thrown through compiled frames).
 * @run main/othervm ExceptionsTest
 * @run main/othervm -Xcomp -XX:-TieredCompilation ExceptionsTest
 */

import fxagent.Oracle;

public class ExceptionsTest {
    static final class Boom extends RuntimeException {
        Boom(int depth) {
            super("depth " + depth, null, false, false);
            Oracle.check();
        }
    }

    static final class Resource implements AutoCloseable {
        @Override
        public void close() {
            Oracle.check();
        }
    }

    private static long sink;

    public static void main(String[] args) {
        for (int i = 0; i < 200; i++) {
            try {
                descend(60);
                throw new AssertionError("no exception");
            } catch (Boom expected) {
                Oracle.check();
            }
            sink += rethrowAtEveryLevel(10);
            sink += closing(i);
        }
        System.out.println(sink);
    }

    static int descend(int n) {
        if (n == 0) {
            throw new Boom(n);
        }
        try {
            return descend(n - 1) + 1;
        } finally {
            // Runs while the exception unwinds through this frame.
            if (n % 10 == 0) {
                Oracle.checkDepth(3);
            }
        }
    }

    static int rethrowAtEveryLevel(int n) {
        try {
            if (n == 0) {
                throw new IllegalStateException("bottom");
            }
            return rethrowAtEveryLevel(n - 1);
        } catch (IllegalStateException e) {
            Oracle.check();
            if (n == 10) {
                return 1;
            }
            throw e;
        }
    }

    static int closing(int i) {
        try (Resource r = new Resource()) {
            if (i % 2 == 0) {
                throw new IllegalArgumentException("close while unwinding");
            }
            return 1;
        } catch (IllegalArgumentException e) {
            return 2;
        }
    }
}
