/* SPDX-License-Identifier: Apache-2.0 */
package fxtest;

import java.io.File;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a class of the test in a child JVM, with the agent's options changed or the agent removed:
 * jtreg passes one -agentpath to every test JVM (test.java.opts), and some tests need another.
 */
public final class ChildJvm {
    /** Exit code and merged stdout/stderr of a finished child. */
    public static final class Result {
        public final int exit;
        public final String output;

        Result(int exit, String output) {
            this.exit = exit;
            this.output = output;
        }

        public Result assertExit(int expected) {
            if (exit != expected) {
                throw new AssertionError("child exited " + exit + ", expected " + expected
                        + "; output:\n" + output);
            }
            return this;
        }

        public Result assertOutputContains(String s) {
            if (!output.contains(s)) {
                throw new AssertionError("child output lacks '" + s + "':\n" + output);
            }
            return this;
        }
    }

    private ChildJvm() {}

    /**
     * The -agentpath option this JVM was started with, or fails: the suite runs with the agent.
     * Read from the JVM's own arguments, not from test.java.opts: jtreg joins that list with
     * spaces, so an agent path with a space in it could not be told apart from two options.
     */
    public static String agentOption() {
        for (String opt : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (opt.startsWith("-agentpath:")) {
                return opt;
            }
        }
        throw new AssertionError("no -agentpath among this JVM's arguments: run with "
                + "tests/jtreg/run_jtreg.sh (jtreg -javaoption:-agentpath:...)");
    }

    /** The agent's option with its options string replaced by {@code options}. */
    public static String agentOptionWith(String options) {
        String opt = agentOption();
        int eq = opt.indexOf('=');
        return (eq < 0 ? opt : opt.substring(0, eq)) + "=" + options;
    }

    /**
     * Runs {@code mainClass} with the test's class path, the JVM options given ({@code null}
     * entries skipped), then {@code args}; waits at most two minutes.
     */
    public static Result run(List<String> jvmOptions, String mainClass, String... args)
            throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
        for (String o : jvmOptions) {
            if (o != null) {
                cmd.add(o);
            }
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(mainClass);
        for (String a : args) {
            cmd.add(a);
        }
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(2, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError("child timed out: " + cmd);
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }
}
