// SPDX-License-Identifier: Apache-2.0
// The workload of bench/run_jfr_convert.sh's real recording (issue 35): THREADS threads each
// compile the same Java sources with the JDK's own javac (javax.tools, in this JVM) again and
// again until the file STOP exists, so that JFR records deep, varied stacks on many threads.
// After each class is analysed, a thread takes a shared lock (monitor contention), and now and
// then sleeps and parks for a moment, so that lock, sleep and park events are recorded too.
//   java JfrBigWorkload.java THREADS OUT_DIR STOP @FILES PATCH_DIR
// Run by the source launcher (no build step): JDK 17 and later.
import com.sun.source.util.JavacTask;
import com.sun.source.util.TaskEvent;
import com.sun.source.util.TaskListener;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

public final class JfrBigWorkload {
    private static final Object LOCK = new Object();
    private static long shared;
    private static final AtomicLong COMPILES = new AtomicLong();
    private static volatile boolean stopping;

    private JfrBigWorkload() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: JfrBigWorkload THREADS OUT_DIR STOP @FILES PATCH_DIR");
            System.exit(2);
        }
        int threads = Integer.parseInt(args[0]);
        Path stop = Path.of(args[2]);
        List<String> files = Files.readAllLines(Path.of(args[3].substring(1)));
        List<Thread> all = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            File out = new File(args[1], "t" + i);
            out.mkdirs();
            Thread t = new Thread(() -> loop(out, files, args[4]), "javac-" + i);
            t.start();
            all.add(t);
        }
        while (!Files.exists(stop)) // polled here: the compiling threads check a flag
            Thread.sleep(100);
        stopping = true;
        for (Thread t : all) // a compile still in its first phases is not waited for
            t.join(5000);
        System.out.println("JfrBigWorkload: " + COMPILES.get() + " compiles on " + threads
                + " threads, shared " + shared);
        System.exit(0);
    }

    private static void loop(File out, List<String> files, String patch) {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        List<String> opts = List.of("--patch-module", "java.base=" + patch, "-d", out.getPath(),
                "-nowarn", "-Xlint:none", "-proc:none", "-implicit:none",
                "-XDignore.symbol.file");
        while (!stopping) {
            try (var fm = javac.getStandardFileManager(null, null, null)) {
                JavacTask task = (JavacTask) javac.getTask(null, fm, d -> {}, opts, null,
                        fm.getJavaFileObjectsFromStrings(files));
                task.addTaskListener(new TaskListener() {
                    private int n;

                    @Override
                    public void finished(TaskEvent e) {
                        if (e.getKind() != TaskEvent.Kind.ANALYZE)
                            return;
                        if (stopping) // ends this compile now rather than at its end
                            throw new IllegalStateException("stopping");
                        synchronized (LOCK) {
                            shared += e.getTypeElement() == null ? 1 : e.getTypeElement().hashCode();
                        }
                        if (++n % 16 == 0)
                            LockSupport.parkNanos(100_000);
                        if (n % 64 == 0) {
                            try {
                                Thread.sleep(1);
                            } catch (InterruptedException ex) {
                                Thread.currentThread().interrupt();
                            }
                        }
                    }
                });
                task.call();
                COMPILES.incrementAndGet();
            } catch (Exception ex) {
                if (!stopping)
                    throw new RuntimeException(ex);
            }
        }
    }
}
