/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The megamorphic workload of issue 20 (docs/VALIDATION.md "The shape oracle", docs/BENCHMARKS.md
 * "Stacks on everyday code"): the everyday shape of Java, a caller that calls many small
 * implementations through one interface call site and one virtual call site.
 *
 * Thread "mega" runs Mega.loop, which for every shape of an array calls Area.area() (an
 * invokeinterface: with eight receiver classes C2 compiles it as a call through an itable stub)
 * and Shape.perim() (an invokevirtual: a vtable stub). The eight implementations are a few
 * instructions each, so most of the time of a call is the dispatch stub and the callee's prologue
 * and epilogue, where AsyncGetCallTrace has no frame to decode.
 *
 * Two phases alternate, both through the same two call sites of Mega.loop, called from the same
 * line of Mega.work:
 *   light  the eight small shapes (about 80 % of the thread's CPU)
 *   heavy  Polygon, a ninth implementation whose area() and perim() walk 64 vertices: samples
 *          taken inside its loops, at ordinary points, have the same stack under the callee as
 *          the light phase's samples in stubs and prologues, which the recovered-stack oracle
 *          compares against (tests/it/stack_shape_check.py)
 * Every stack of the thread below its top frames is therefore Thread.run → Mega.lambda → Mega.work
 * → Mega.loop, and above loop there is one callee (an implementation), a stub, or nothing.
 *
 * Deterministic: the shapes come from java.util.Random(seed); the batches are fixed counts, only
 * their number depends on the duration. Nothing is allocated after set-up: the hot loop reads
 * final fields and returns doubles.
 *
 * Usage: java -cp fxagent-stacks.jar fxagent.stacks.Mega [SECONDS] [SEED]   (default 4 and 20;
 * SECONDS of the thread's CPU time; a wall-clock cap of 4 x SECONDS + 30 s ends the run on a
 * starved machine). At the end it prints one line:
 *   mega: cpu N ms: light L% heavy H% batches B checksum X
 * where L and H are the shares of the two phases in the thread's CPU time (thread CPU clock read
 * around each phase).
 */
package fxagent.stacks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Locale;
import java.util.Random;

public final class Mega {
    /* The interface call site's type. */
    interface Area {
        double area();
    }

    /* The virtual call site's type. */
    abstract static class Shape implements Area {
        abstract double perim();
    }

    static final class Circle extends Shape {
        final double r;

        Circle(double r) {
            this.r = r;
        }

        public double area() {
            return Math.PI * r * r;
        }

        double perim() {
            return 2 * Math.PI * r;
        }
    }

    static final class Square extends Shape {
        final double a;

        Square(double a) {
            this.a = a;
        }

        public double area() {
            return a * a;
        }

        double perim() {
            return 4 * a;
        }
    }

    static final class Rect extends Shape {
        final double w, h;

        Rect(double w, double h) {
            this.w = w;
            this.h = h;
        }

        public double area() {
            return w * h;
        }

        double perim() {
            return 2 * (w + h);
        }
    }

    static final class Triangle extends Shape {
        final double b, h, s;

        Triangle(double b, double h) {
            this.b = b;
            this.h = h;
            this.s = b + 2 * Math.sqrt(h * h + b * b / 4);
        }

        public double area() {
            return 0.5 * b * h;
        }

        double perim() {
            return s;
        }
    }

    static final class Ellipse extends Shape {
        final double a, b;

        Ellipse(double a, double b) {
            this.a = a;
            this.b = b;
        }

        public double area() {
            return Math.PI * a * b;
        }

        double perim() {
            return Math.PI * (3 * (a + b) - (a + 3 * b) * 0.5);
        }
    }

    static final class Hexagon extends Shape {
        final double a;

        Hexagon(double a) {
            this.a = a;
        }

        public double area() {
            return 2.598076211353316 * a * a;
        }

        double perim() {
            return 6 * a;
        }
    }

    static final class Rhombus extends Shape {
        final double p, q;

        Rhombus(double p, double q) {
            this.p = p;
            this.q = q;
        }

        public double area() {
            return p * q * 0.5;
        }

        double perim() {
            return 2 * (p + q);
        }
    }

    static final class Trapezoid extends Shape {
        final double a, b, h;

        Trapezoid(double a, double b, double h) {
            this.a = a;
            this.b = b;
            this.h = h;
        }

        public double area() {
            return (a + b) * h * 0.5;
        }

        double perim() {
            return a + b + 2 * h;
        }
    }

    /* The heavy phase's implementation: loops over its vertices, with safepoint polls. */
    static final class Polygon extends Shape {
        final double[] x, y;

        Polygon(Random rnd, int n) {
            x = new double[n];
            y = new double[n];
            for (int i = 0; i < n; i++) {
                double t = 2 * Math.PI * i / n, r = 1 + rnd.nextDouble();
                x[i] = r * Math.cos(t);
                y[i] = r * Math.sin(t);
            }
        }

        public double area() {
            double s = 0;
            for (int i = 0, j = x.length - 1; i < x.length; j = i++)
                s += x[j] * y[i] - x[i] * y[j];
            return 0.5 * s;
        }

        double perim() {
            double s = 0;
            for (int i = 0, j = x.length - 1; i < x.length; j = i++) {
                double dx = x[i] - x[j], dy = y[i] - y[j];
                s += dx * dx + dy * dy;
            }
            return s;
        }
    }

    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    /* Rounds per batch: a light batch is about 4.4 ms, a heavy one about 1 ms on the machine of
     * docs/BENCHMARKS.md (the phase split is printed, not assumed). */
    private static final int LIGHT_ROUNDS = 40_000;
    private static final int HEAVY_ROUNDS = 2_500;
    private static final int POLYGON_VERTICES = 64;

    private final Shape[][] phases;
    private final int[] rounds = {LIGHT_ROUNDS, HEAVY_ROUNDS};
    private final long[] phaseNs = new long[2];
    private long batches, workerNs;
    private double sum;

    private Mega(long seed) {
        Random rnd = new Random(seed);
        Shape[] light = new Shape[16];
        for (int i = 0; i < light.length; i++)
            light[i] = smallShape(rnd, i % 8);
        /* Shuffled, so the dispatch cannot be predicted from the position alone. */
        for (int i = light.length - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            Shape t = light[i];
            light[i] = light[j];
            light[j] = t;
        }
        Shape[] heavy = new Shape[4];
        for (int i = 0; i < heavy.length; i++)
            heavy[i] = new Polygon(rnd, POLYGON_VERTICES);
        phases = new Shape[][] {light, heavy};
    }

    private static Shape smallShape(Random rnd, int kind) {
        double a = 1 + rnd.nextDouble(), b = 1 + rnd.nextDouble(), c = 1 + rnd.nextDouble();
        switch (kind) {
        case 0:
            return new Circle(a);
        case 1:
            return new Square(a);
        case 2:
            return new Rect(a, b);
        case 3:
            return new Triangle(a, b);
        case 4:
            return new Ellipse(a, b);
        case 5:
            return new Hexagon(a);
        case 6:
            return new Rhombus(a, b);
        default:
            return new Trapezoid(a, b, c);
        }
    }

    /* The caller: one interface call site (area) and one virtual call site (perim). */
    static double loop(Shape[] shapes, int rounds) {
        double s = 0;
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < shapes.length; i++) {
                Area a = shapes[i];
                s += a.area();
                s += shapes[i].perim();
            }
        }
        return s;
    }

    private void work(long budgetNs, long wallDeadline) {
        long start = MX.getCurrentThreadCpuTime();
        long now = start;
        while (now - start < budgetNs && System.nanoTime() - wallDeadline < 0) {
            for (int p = 0; p < 2; p++) {
                sum += loop(phases[p], rounds[p]);
                long t = MX.getCurrentThreadCpuTime();
                phaseNs[p] += t - now;
                now = t;
            }
            batches++;
        }
        workerNs = now - start;
    }

    private static double pct(long part, long whole) {
        return whole == 0 ? 0 : 100.0 * part / whole;
    }

    public static void main(String[] args) throws InterruptedException {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 4.0;
        long seed = args.length > 1 ? Long.parseLong(args[1]) : 20;
        if (!(seconds > 0 && seconds <= 3600) || !MX.isCurrentThreadCpuTimeSupported()) {
            System.err.println("mega: SECONDS in (0, 3600] and a thread CPU clock needed");
            System.exit(2);
        }
        MX.setThreadCpuTimeEnabled(true);
        Mega m = new Mega(seed);
        long budget = (long) (seconds * 1e9);
        long wallDeadline = System.nanoTime() + 4 * budget + 30_000_000_000L;
        Thread t = new Thread(() -> m.work(budget, wallDeadline), "mega");
        t.start();
        t.join();
        System.out.printf(Locale.ROOT, "mega: cpu %d ms: light %.1f%% heavy %.1f%% batches %d"
                        + " checksum %016x%n",
                m.workerNs / 1_000_000, pct(m.phaseNs[0], m.workerNs), pct(m.phaseNs[1], m.workerNs),
                m.batches, Double.doubleToLongBits(m.sum));
    }
}
