// SPDX-License-Identifier: Apache-2.0
// Issue 32 item 6: Java objects allocated by C code. JniAlloc.allocate's C function
// fxmixed_alloc_objects makes byte[] arrays (NewByteArray) and StringBuilders (NewObject, whose
// constructor, Java called back from C, allocates its own byte[]): an allocation profile must
// show them under Java_fxagent_mixed_JniAlloc_allocate and fxmixed_alloc_objects, and the
// constructor's array under the C frames between the two Java parts.
package fxagent.mixed;

final class JniAlloc {
    private JniAlloc() {}

    /** Allocates `count` byte[256] and `count` StringBuilders from C; returns the bytes' sum. */
    static native long allocate(int count);

    static String run(long untilNanos) {
        String lib = System.getProperty("fxagent.mixed.lib");
        if (lib == null) {
            throw new IllegalStateException("-Dfxagent.mixed.lib=/path/libfxmixed.so is not set");
        }
        System.load(lib);
        long calls = 0;
        long mix = 0;
        while (MixedWorkload.more(untilNanos)) {
            mix += allocate(1000);
            calls++;
        }
        return "jnialloc: calls=" + calls + " mix=" + (mix & 0xff);
    }
}
