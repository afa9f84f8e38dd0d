/* SPDX-License-Identifier: Apache-2.0 */
package fxagent;

/**
 * Markers from the application into fxagent's profile: each call shows in the marker chart and
 * marker table of the calling thread (schema {@code JvmUserMarker}, labelled
 * "name: text").
 *
 * <pre>
 *   Markers.mark("checkpoint");
 *   long h = Markers.begin("phase-A");
 *   try { work(); } finally { Markers.end(h); }
 * </pre>
 *
 * <p>The natives live in libfxagent.so, which the JVM searches for them because it was loaded
 * with {@code -agentpath}. Without the agent, or with {@code markers=off}, every method is a
 * cheap no-op that never throws: one probe in the static initializer decides, once, and its
 * answer is a final field the JIT folds away. The agent must therefore be loaded when this class
 * initializes (an agent attached later is not seen).
 *
 * <p>The calls never block for long: a record is copied into a bounded queue, and when the queue
 * is full it is dropped and counted in the profile's metadata. Names are kept up to 255 bytes
 * and texts up to 1023 bytes (modified UTF-8); longer ones are cut.
 */
public final class Markers {
    private static final boolean ENABLED = probe();

    private Markers() {}

    private static boolean probe() {
        try {
            return enabled0();
        } catch (UnsatisfiedLinkError e) {
            return false; // no agent: markers are no-ops
        }
    }

    /** True if markers reach a profile (the agent is loaded with markers on). */
    public static boolean enabled() {
        return ENABLED;
    }

    /** An instant marker named {@code name} on the calling thread. */
    public static void mark(String name) {
        if (ENABLED && name != null) {
            mark0(name, null);
        }
    }

    /** An instant marker named {@code name} with a text shown next to it. */
    public static void mark(String name, String text) {
        if (ENABLED && name != null) {
            mark0(name, text);
        }
    }

    /**
     * Begins an interval marker on the calling thread.
     *
     * @return a handle for {@link #end(long)}; 0 when markers are off (end(0) does nothing)
     */
    public static long begin(String name) {
        return ENABLED && name != null ? begin0(name, null) : 0L;
    }

    /** Like {@link #begin(String)}, with a text shown next to the name. */
    public static long begin(String name, String text) {
        return ENABLED && name != null ? begin0(name, text) : 0L;
    }

    /**
     * Ends the interval begun with {@code handle} (from any thread; the marker stays on the thread
     * that began it). Ending a handle twice, or 0, does nothing.
     */
    public static void end(long handle) {
        if (ENABLED && handle != 0L) {
            end0(handle);
        }
    }

    private static native boolean enabled0();

    private static native void mark0(String name, String text);

    private static native long begin0(String name, String text);

    private static native void end0(long handle);
}
