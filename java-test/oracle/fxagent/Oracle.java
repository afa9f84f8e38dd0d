/* SPDX-License-Identifier: Apache-2.0 */
package fxagent;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The stack oracle of fxagent's validate mode, for tests: called at a chosen point, it asks
 * HotSpot for the calling thread's stack twice, with AsyncGetCallTrace (what the profiler's
 * signal handler uses) and with JVMTI GetStackTrace (the reference), and fails unless both agree
 * frame by frame: same method, same bytecode index, native in both or in neither.
 *
 * <p>The natives live in libfxagent.so, so the JVM must run with
 * {@code -agentpath:/path/libfxagent.so}. Without the agent every method throws
 * {@link IllegalStateException}: a test must never pass because nothing was checked.
 *
 * <p>Depth: the comparison covers the top {@code depth} frames, where depth is the agent's
 * {@code depth=} option (default 2048) unless given explicitly. When the stack is deeper, only
 * those frames are compared and the check reports the stack as truncated; ASGCT must then
 * return exactly {@code depth} frames.
 *
 * <p>Where the AsyncGetCallTrace trace comes from: the agent's own SIGPROF handler, the one that
 * takes the profiler's samples. The calling thread sends itself the signal and the handler,
 * seeing the request, walks the stack from the signal's context into a probe buffer instead of
 * the sample ring. A thread the agent has not registered (or a probe that cannot be used) falls
 * back to calling AsyncGetCallTrace directly; {@link #checkViaSignal()} says which was used, and
 * the exit line counts both.
 *
 * <p>Virtual threads (JDK 21+): JVMTI gives a virtual thread's own frames only, ending at
 * {@code Continuation.enter}, while AsyncGetCallTrace walks on into the frames of its carrier
 * thread; the reference is then the virtual thread's JVMTI stack followed by its carrier's.
 */
public final class Oracle {
    private static final String NOT_LOADED =
            "fxagent is not loaded: run with -agentpath:libfxagent.so=validate";
    private static volatile boolean unbound;
    private static final AtomicLong CHECKS = new AtomicLong();
    private static final AtomicLong FRAMES = new AtomicLong();
    private static final AtomicLong TRUNCATED = new AtomicLong();
    private static final AtomicLong DIRECT = new AtomicLong();
    private static final long VIA_SIGNAL = 1L << 49;
    private static final AtomicBoolean TALLY_HOOK = new AtomicBoolean();

    private Oracle() {}

    /**
     * Compares both stacks at the caller's point, up to the agent's depth.
     *
     * @return the number of frames compared (this class's two frames included)
     * @throws AssertionError if the stacks differ; its message shows both side by side
     * @throws IllegalStateException if the agent is not loaded
     */
    public static int check() {
        return frames(call(0));
    }

    /**
     * Like {@link #check()}, and also fails unless at least {@code expectedMinFrames} frames
     * were compared: two walkers that both lose the bottom of the stack would otherwise agree.
     */
    public static int checkDepth(int expectedMinFrames) {
        int n = frames(call(0));
        if (n < expectedMinFrames) {
            throw new AssertionError("fxagent oracle: " + n + " frames compared, expected at least "
                    + expectedMinFrames);
        }
        return n;
    }

    /**
     * Compares the top {@code depth} frames ({@code depth <= 0}: the agent's depth).
     *
     * @return true if the stack was deeper than {@code depth}, so that only its top was compared
     */
    public static boolean checkTruncated(int depth) {
        return (call(depth) & (1L << 32)) != 0;
    }

    /**
     * Like {@link #check()}.
     *
     * @return how many of the compared frames belong to the carrier thread below a virtual
     *     thread's own frames; 0 on a platform thread
     */
    public static int checkCarrierFrames() {
        return (int) ((call(0) >>> 33) & 0xffff);
    }

    /**
     * Like {@link #check()}.
     *
     * @return true if the AsyncGetCallTrace trace came from the agent's SIGPROF handler, false
     *     if it was called directly (the thread is not registered with the agent)
     */
    public static boolean checkViaSignal() {
        return (call(0) & VIA_SIGNAL) != 0;
    }

    private static int frames(long packed) {
        return (int) packed;
    }

    private static long call(int depth) {
        if (unbound) {
            throw new IllegalStateException(NOT_LOADED);
        }
        long packed;
        try {
            packed = check0(depth);
        } catch (UnsatisfiedLinkError e) {
            unbound = true;
            throw new IllegalStateException(NOT_LOADED, e);
        }
        tally(packed);
        return packed;
    }

    /* At exit, one line on stderr says how much was compared, so a test log shows the work. */
    private static void tally(long packed) {
        CHECKS.incrementAndGet();
        FRAMES.addAndGet((int) packed);
        if ((packed & (1L << 32)) != 0) {
            TRUNCATED.incrementAndGet();
        }
        if ((packed & VIA_SIGNAL) == 0) {
            DIRECT.incrementAndGet();
        }
        if (TALLY_HOOK.compareAndSet(false, true)) {
            addTallyHook();
        }
    }

    /*
     * Privileged: before JDK 24 a new Thread keeps the access-control context of its creator's
     * stack, and with it the class loaders of every frame; a hook created under a check called
     * from a custom loader's class would keep that loader from ever being collected.
     */
    @SuppressWarnings("removal")
    private static void addTallyHook() {
        Thread hook = java.security.AccessController.doPrivileged(
                (java.security.PrivilegedAction<Thread>) () -> new Thread(() -> System.err.println(
                        "fxagent oracle: " + CHECKS.get() + " checks agreed, " + FRAMES.get()
                                + " frames compared, " + TRUNCATED.get()
                                + " at the depth limit, " + (CHECKS.get() - DIRECT.get())
                                + " through the SIGPROF handler, " + DIRECT.get()
                                + " by a direct call"), "fxagent-oracle-tally"));
        hook.setContextClassLoader(null);
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /* (frames compared) | (truncated ? 1L << 32 : 0) | (carrier frames << 33) | (via the SIGPROF
     * handler ? 1L << 49 : 0); throws on disagreement. */
    private static native long check0(int depth);
}
