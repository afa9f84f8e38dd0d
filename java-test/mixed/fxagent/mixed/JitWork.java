// SPDX-License-Identifier: Apache-2.0
// JIT workload (issue 16: compiler threads as tracks): javac, in this JVM (javax.tools), compiles
// a few generated sources again and again; javac's own code is large, so C1 and C2 compile for
// the first seconds of the run. Prints the number of compilations done, so a run where javac
// did not work cannot pass.
package fxagent.mixed;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

final class JitWork {
    private JitWork() {}

    static String run(long untilNanos) throws IOException {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        if (javac == null) {
            throw new IllegalStateException("no system Java compiler (a JRE?)");
        }
        Path dir = Files.createTempDirectory("fxagent-jit");
        List<String> args = new ArrayList<>(List.of("-d", dir.resolve("out").toString()));
        for (int c = 0; c < 8; c++) {
            StringBuilder sb = new StringBuilder("package gen; public class C" + c + " {\n");
            for (int m = 0; m < 40; m++) {
                sb.append("  public static long m").append(m).append("(long x) { long s = x; ")
                        .append("for (int i = 0; i < ").append(m + 3).append("; i++) { s = s * 31 + i")
                        .append(c > 0 ? " + C" + (c - 1) + ".m" + m + "(i)" : "")
                        .append("; } return s; }\n");
            }
            Path src = dir.resolve("C" + c + ".java");
            Files.writeString(src, sb.append("}\n").toString());
            args.add(src.toString());
        }
        int runs = 0;
        int failed = 0;
        String[] argv = args.toArray(new String[0]);
        while (System.nanoTime() < untilNanos) {
            failed += javac.run(null, null, null, argv) != 0 ? 1 : 0;
            runs++;
        }
        return "jit: javac_runs=" + runs + " failed=" + failed;
    }
}
