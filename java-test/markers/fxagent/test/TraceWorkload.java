/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The known-answer workload of fxagent.TraceContext (issue 33 item 4): spans of known CPU work on
 * two threads, a third thread with none, and every misuse of the API, so a profile of it can be
 * checked against the truth (tests/it/trace_test.sh, trace_check.py).
 *
 *   thread      context                                         CPU work, each in its own method
 *   trace-a     trace 00..01 0a, span 00000000000000a1, tenant=acme   burnSpanA1, MS ms
 *               the same trace, span 00000000000000a2, no label       burnSpanA2, MS ms
 *               none (cleared)                                        burnFreeA, MS ms
 *   trace-b     trace 0af7651916cd43dd8448eb211c80319c, span
 *               b7ad6b7169203331 (the hex form), tenant=beta,
 *               route=/checkout                                       burnSpanB, MS ms
 *   trace-none  never set                                             burnFreeN, MS ms
 *
 * Prints "misuse ok" when every bad call threw IllegalArgumentException (or, without the agent,
 * when set/clear return false and label returns 0), "virtual thread set refused" (JDK 21+: a
 * virtual thread's set and clear return false; "n/a" before), "enabled true|false", exits 0.
 * Usage: java [-agentpath:...] -cp fxagent-markers.jar fxagent.test.TraceWorkload [MS]
 */
package fxagent.test;

import fxagent.TraceContext;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public final class TraceWorkload {
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    private static volatile long sink;

    private TraceWorkload() {}

    private static void spin(long ms) {
        long end = MX.getCurrentThreadCpuTime() + ms * 1_000_000L;
        long x = 1;
        while (MX.getCurrentThreadCpuTime() < end) {
            for (int i = 0; i < 10_000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
        }
        sink += x;
    }

    static void burnSpanA1(long ms) {
        spin(ms);
    }

    static void burnSpanA2(long ms) {
        spin(ms);
    }

    static void burnFreeA(long ms) {
        spin(ms);
    }

    static void burnSpanB(long ms) {
        spin(ms);
    }

    static void burnFreeN(long ms) {
        spin(ms);
    }

    private static void expectIae(Runnable r, String what) {
        try {
            r.run();
        } catch (IllegalArgumentException e) {
            return;
        }
        throw new AssertionError("no IllegalArgumentException for " + what);
    }

    private static void misuse() {
        expectIae(() -> TraceContext.set(0, 0, 1), "a zero trace id");
        expectIae(() -> TraceContext.set(1, 1, 0), "a zero span id");
        expectIae(() -> TraceContext.set(1, 1, 1, -1), "a negative label id");
        expectIae(() -> TraceContext.set("0af765", "b7ad6b7169203331"), "a short trace id");
        expectIae(() -> TraceContext.set("0af7651916cd43dd8448eb211c80319c", "b7ad6b71"),
                "a short span id");
        expectIae(() -> TraceContext.set("0af7651916cd43dd8448eb211c80319z", "b7ad6b7169203331"),
                "a trace id that is not hex");
        expectIae(() -> TraceContext.set("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331",
                1, 2, 3, 4, 5), "five labels");
        expectIae(() -> TraceContext.label("", "x"), "an empty key");
        expectIae(() -> TraceContext.label("a=b", "x"), "a key with '='");
        expectIae(() -> TraceContext.label("span_id", "x"), "a reserved key");
        expectIae(() -> TraceContext.label("thread.name", "x"), "a reserved key");
        if (!TraceContext.enabled()) {
            boolean ok = !TraceContext.set(1, 2, 3) && !TraceContext.clear()
                    && TraceContext.label("k", "v") == 0;
            if (!ok) {
                throw new AssertionError("without the agent, set/clear/label are not no-ops");
            }
        }
        System.out.println("misuse ok");
        System.out.println("virtual thread " + onVirtualThread());
    }

    /* JDK 21+: a virtual thread's set is refused (false), since its carrier changes under it;
     * "n/a" before 21 (this class compiles for 11: Thread.startVirtualThread by reflection). */
    private static String onVirtualThread() {
        boolean[] got = new boolean[2];
        Runnable r = () -> {
            got[0] = TraceContext.set(1, 2, 3);
            got[1] = TraceContext.clear();
        };
        try {
            Thread t = (Thread) Thread.class.getMethod("startVirtualThread", Runnable.class)
                    .invoke(null, r);
            t.join();
        } catch (NoSuchMethodException e) {
            return "n/a";
        } catch (ReflectiveOperationException | InterruptedException e) {
            throw new AssertionError(e);
        }
        return got[0] || got[1] ? "set accepted" : "set refused";
    }

    public static void main(String[] args) throws InterruptedException {
        long ms = args.length > 0 ? Long.parseLong(args[0]) : 400;
        misuse();
        System.out.println("enabled " + TraceContext.enabled());
        int acme = TraceContext.label("tenant", "acme");
        int beta = TraceContext.label("tenant", "beta");
        int route = TraceContext.label("route", "/checkout");
        if (TraceContext.enabled() && (acme <= 0 || beta <= 0 || route <= 0 || acme == beta
                || TraceContext.label("tenant", "acme") != acme)) {
            throw new AssertionError("label ids " + acme + " " + beta + " " + route);
        }
        Thread a = new Thread(() -> {
            TraceContext.set(0x1L, 0x0aL, 0xa1L, acme);
            burnSpanA1(ms);
            TraceContext.clear();
            TraceContext.set(0x1L, 0x0aL, 0xa2L);
            burnSpanA2(ms);
            TraceContext.clear();
            burnFreeA(ms);
        }, "trace-a");
        Thread b = new Thread(() -> {
            TraceContext.set("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", beta, route);
            burnSpanB(ms);
            TraceContext.clear();
        }, "trace-b");
        Thread n = new Thread(() -> burnFreeN(ms), "trace-none");
        a.start();
        b.start();
        n.start();
        a.join();
        b.join();
        n.join();
    }
}
