/* SPDX-License-Identifier: Apache-2.0 */
package fxagent;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The current thread's trace context on fxagent's samples: a 128-bit trace id, a 64-bit span id
 * and up to {@link #MAX_LABELS} key/value labels. Every sample taken while a context is set
 * carries it: in the Firefox profile as a "Trace span" marker on the thread (from the span's
 * first sample to 1 us after its last: select it to select its samples), in pprof as the labels
 * {@code trace_id}, {@code span_id} and the labels' keys, in OTLP as the sample's link and
 * attributes.
 *
 * <pre>
 *   static final int TENANT = TraceContext.label("tenant", "acme");   // once
 *   ...
 *   TraceContext.set(traceHi, traceLo, spanId, TENANT);
 *   try { handle(request); } finally { TraceContext.clear(); }
 * </pre>
 *
 * <p>Cost: {@link #set} and {@link #clear} pass only numbers and allocate nothing; they write
 * the thread's record in the agent (a direct buffer over it, registered once per thread by the
 * first call) with plain stores, no JNI call and no clock read (docs/BENCHMARKS.md, "Trace
 * context": at most 50 ns a call). Labels are interned once by {@link #label}, a native call
 * (keep its id).
 *
 * <p>Outcomes, each one of these and nothing else:
 * <ul>
 *   <li>Without the agent (or a thread the agent does not sample, or a virtual thread, whose
 *       carrier changes under it), {@code set} and {@code clear} do nothing and return false,
 *       and {@code label} returns 0. Nothing throws.</li>
 *   <li>Bad arguments throw {@link IllegalArgumentException} and change nothing: a trace id of
 *       all zeros or a span id of 0 (W3C's invalid ids), hex ids of another length than 32 and
 *       16 digits or not hex, more than {@link #MAX_LABELS} labels, a negative label id, an
 *       empty key, a key with '=' or one of the reserved keys {@code trace_id},
 *       {@code span_id}, {@code thread}, {@code thread.name}, {@code thread.id}, a key or value
 *       over 255 characters.</li>
 *   <li>A label id the agent did not return, or 0, is no label.</li>
 * </ul>
 * The agent must be loaded when this class initializes (an agent attached later is not seen).
 */
public final class TraceContext {
    /** Labels per context at most. */
    public static final int MAX_LABELS = 4;

    // The record's byte offsets (include/fx_tctx.h, struct fx_tctx_rec).
    private static final int GEN = 0, TRACE_HI = 8, TRACE_LO = 16, SPAN = 24, LABEL = 32;
    private static final VarHandle LONGS =
            MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
    private static final boolean LITTLE = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
    private static final boolean LOADED = probe();
    private static final MethodHandle IS_VIRTUAL = isVirtual();
    // pprof's and OTLP's own keys on a sample (core/convert/)
    private static final java.util.List<String> RESERVED =
            java.util.List.of("trace_id", "span_id", "thread", "thread.name", "thread.id");
    private static final ThreadLocal<Slot> SLOT = ThreadLocal.withInitial(Slot::new);

    /** The thread's record in the agent, or none (buf null). */
    private static final class Slot {
        final ByteBuffer buf;
        long gen;

        Slot() {
            ByteBuffer b = LOADED && !virtual() ? buffer0() : null;
            buf = b == null ? null : b.order(ByteOrder.nativeOrder());
        }
    }

    private TraceContext() {}

    private static boolean probe() {
        try {
            return enabled0();
        } catch (UnsatisfiedLinkError e) {
            return false; // no agent: every call is a no-op
        }
    }

    private static MethodHandle isVirtual() {
        try { // Thread.isVirtual is JDK 21's; this class compiles for 11
            return MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual",
                    MethodType.methodType(boolean.class));
        } catch (ReflectiveOperationException e) {
            return null;
        }
    }

    private static boolean virtual() {
        try {
            return IS_VIRTUAL != null && (boolean) IS_VIRTUAL.invokeExact(Thread.currentThread());
        } catch (Throwable e) {
            return true; // cannot tell: keep out
        }
    }

    /** True if the agent is loaded and this thread's contexts reach its samples. */
    public static boolean enabled() {
        return SLOT.get().buf != null;
    }

    /**
     * The id of the label {@code key=value}, for {@link #set}; the same pair gives the same id.
     * A native call that may take a lock: call it once per pair and keep the id.
     *
     * @return the id (&gt; 0), or 0 (no label) without the agent, when its table of 4096 pairs
     *     is full (counted in the profile's "Trace context"), or when the key or value is over
     *     255 bytes in modified UTF-8 (255 characters may be more bytes)
     * @throws IllegalArgumentException for a bad key or value (see the class comment)
     */
    public static int label(String key, String value) {
        if (key == null || key.isEmpty() || key.indexOf('=') >= 0 || key.length() > 255
                || RESERVED.contains(key)) {
            throw new IllegalArgumentException("TraceContext.label: key '" + key
                    + "' must be 1-255 characters without '=', not one of " + RESERVED);
        }
        if (value == null || value.length() > 255) {
            throw new IllegalArgumentException(
                    "TraceContext.label: the value must be 0-255 characters");
        }
        return LOADED ? label0(key, value) : 0;
    }

    /** Sets the context without labels; see {@link #set(long, long, long, int, int, int, int)}. */
    public static boolean set(long traceHi, long traceLo, long spanId) {
        return set(traceHi, traceLo, spanId, 0, 0, 0, 0);
    }

    /** Sets the context with one label. */
    public static boolean set(long traceHi, long traceLo, long spanId, int label1) {
        return set(traceHi, traceLo, spanId, label1, 0, 0, 0);
    }

    /** Sets the context with two labels. */
    public static boolean set(long traceHi, long traceLo, long spanId, int label1, int label2) {
        return set(traceHi, traceLo, spanId, label1, label2, 0, 0);
    }

    /**
     * Sets the calling thread's context until {@link #clear} or the next set: the trace id's
     * high and low 64 bits (the first and last 16 hex digits of W3C's 32), the span id, and
     * label ids from {@link #label} (0: none).
     *
     * @return true if the context reaches the agent's samples, false without the agent
     * @throws IllegalArgumentException for a zero trace id or span id, or a negative label id
     */
    public static boolean set(long traceHi, long traceLo, long spanId, int label1, int label2,
            int label3, int label4) {
        if ((traceHi | traceLo) == 0 || spanId == 0 || (label1 | label2 | label3 | label4) < 0) {
            throw new IllegalArgumentException("TraceContext.set: the trace id and span id must "
                    + "not be 0, label ids not negative");
        }
        Slot s = SLOT.get();
        ByteBuffer b = s.buf;
        if (b == null) {
            return false;
        }
        // gen 0 first: a sample taken while the rest is written sees no context, never a mix
        LONGS.setOpaque(b, GEN, 0L);
        VarHandle.storeStoreFence();
        LONGS.set(b, TRACE_HI, traceHi);
        LONGS.set(b, TRACE_LO, traceLo);
        LONGS.set(b, SPAN, spanId);
        LONGS.set(b, LABEL, pair(label1, label2)); // two uint32 per store: 2 stores, not 4
        LONGS.set(b, LABEL + 8, pair(label3, label4));
        LONGS.setRelease(b, GEN, ++s.gen);
        return true;
    }

    /**
     * Sets the context from W3C hex ids (32 and 16 hex digits, as in a traceparent header) and
     * up to {@link #MAX_LABELS} label ids. Parses the strings: for the hot path, use the
     * numeric form.
     *
     * @throws IllegalArgumentException for ids of another length, not hex, or zero, or more than
     *     {@link #MAX_LABELS} labels
     */
    public static boolean set(String traceId, String spanId, int... labels) {
        if (traceId == null || traceId.length() != 32 || spanId == null || spanId.length() != 16) {
            throw new IllegalArgumentException("TraceContext.set: the trace id must be 32 hex "
                    + "digits and the span id 16");
        }
        if (labels.length > MAX_LABELS) {
            throw new IllegalArgumentException("TraceContext.set: " + labels.length
                    + " labels, at most " + MAX_LABELS);
        }
        int[] l = java.util.Arrays.copyOf(labels, MAX_LABELS);
        return set(hex(traceId, 0), hex(traceId, 16), hex(spanId, 0), l[0], l[1], l[2], l[3]);
    }

    /** The uint32 pair {first, second} as one long in memory order. */
    private static long pair(int first, int second) {
        long lo = first & 0xffffffffL, hi = second & 0xffffffffL;
        return LITTLE ? lo | hi << 32 : hi | lo << 32;
    }

    private static long hex(String s, int from) {
        long v = 0;
        for (int i = from; i < from + 16; i++) {
            int d = Character.digit(s.charAt(i), 16);
            if (d < 0) {
                throw new IllegalArgumentException("TraceContext.set: '" + s + "' is not hex");
            }
            v = v << 4 | d;
        }
        return v;
    }

    /**
     * Clears the calling thread's context: samples from now on carry none.
     *
     * @return false without the agent
     */
    public static boolean clear() {
        ByteBuffer b = SLOT.get().buf;
        if (b == null) {
            return false;
        }
        LONGS.setRelease(b, GEN, 0L);
        return true;
    }

    private static native boolean enabled0();

    private static native ByteBuffer buffer0();

    private static native int label0(String key, String value);
}
