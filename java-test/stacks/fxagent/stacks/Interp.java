/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Interpreted calls of small methods (issue 32, the interpreter's method entry rule): run with
 * -Xint, thread "interp" calls, from Interp.loop, a static method, an instance method with
 * extra locals, a synchronized one and a native one (System.identityHashCode), so a large share
 * of its time is the interpreter's method entries building their frames. Every call site is
 * also seen with its callee running (the callees' bodies): what the recovered stacks are
 * compared with (tests/it/interp_entry_check.py).
 * Usage: java -Xint -cp fxagent-stacks.jar fxagent.stacks.Interp [SECONDS]
 * Prints "interp: rounds N checksum X" at the end.
 */
package fxagent.stacks;

public final class Interp {
    private int seed = 7;

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        long until = System.nanoTime() + (long) (seconds * 1e9);
        long[] out = new long[2];
        Thread t = new Thread(() -> loop(until, out), "interp");
        t.start();
        t.join();
        System.out.println("interp: rounds " + out[1] + " checksum " + out[0]);
    }

    static void loop(long until, long[] out) {
        Interp o = new Interp();
        long s = 0, rounds = 0;
        while (System.nanoTime() < until) {
            for (int i = 0; i < 2000; i++) {
                s += leaf(i);
                s += o.locals(i);
                s += o.sync(i);
                s += System.identityHashCode(o) & 1;
            }
            rounds++;
        }
        out[0] = s;
        out[1] = rounds;
    }

    static int leaf(int i) {
        return i + 1;
    }

    int locals(int i) {
        int a = i + seed, b = a * 3, c = b ^ a, d = c - 1;
        return a + b + c + d;
    }

    synchronized int sync(int i) {
        return i ^ seed;
    }
}
