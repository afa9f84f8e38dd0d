/* SPDX-License-Identifier: Apache-2.0 */

/*
 * @test
 * @summary Oracle agrees across JNI: Java -> native down-call -> Java up-call, nested five
 *          times so native and Java frames alternate, checked in every Java level; and in Java
 *          called from a native thread attached with AttachCurrentThread, whose stack ends in
 *          an entry frame. Needs libfxjnitest.so (jtreg -nativepath).
 * @run main/othervm/native JniTest
 * @run main/othervm/native -Xcomp -XX:-TieredCompilation JniTest
 */

import fxagent.Oracle;

public class JniTest {
    static native int down(int n);

    static native int fromNativeThread(int calls);

    static int up(int n) {
        Oracle.check();
        return n == 0 ? 0 : down(n - 1);
    }

    static int fromNative(int i) {
        // fromNative is the thread's bottom Java frame: exactly it and the oracle's frames.
        int frames = Oracle.check();
        if (frames != 4) {
            throw new AssertionError("attached thread: " + frames + " frames, expected 4");
        }
        return 1;
    }

    public static void main(String[] args) {
        System.loadLibrary("fxjnitest");
        for (int i = 0; i < 200; i++) {
            Oracle.check();
            // down(5) -> up(5) -> down(4) ... -> up(0): six native and six Java levels.
            if (down(5) != 6) {
                throw new AssertionError("down(5)");
            }
        }
        if (fromNativeThread(200) != 200) {
            throw new AssertionError("native thread calls failed");
        }
    }
}
