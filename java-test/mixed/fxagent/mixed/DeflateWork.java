// SPDX-License-Identifier: Apache-2.0
// zlib workload: java.util.zip.Deflater at level 9 over 1 MiB of wordy text, again and again,
// so the CPU is in zlib's deflate under Deflater.deflateBytesBytes (issue 16). The first round
// is inflated back and compared, so a broken setup cannot pass as busy.
package fxagent.mixed;

import java.util.Arrays;
import java.util.Random;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

final class DeflateWork {
    private DeflateWork() {}

    private static final String[] WORDS = {"sample", "profile", "native", "frame", "kernel",
        "stack", "thread", "deflate", "zlib", "mixed", "mode", "java", "compiler", "heap"};

    static byte[] text(int size) {
        Random r = new Random(42);
        StringBuilder sb = new StringBuilder(size + 16);
        while (sb.length() < size) {
            sb.append(WORDS[r.nextInt(WORDS.length)]).append(r.nextInt(1000)).append(' ');
        }
        return sb.substring(0, size).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    }

    static int deflate(byte[] in, byte[] out) {
        Deflater d = new Deflater(9);
        try {
            d.setInput(in);
            d.finish();
            int n = 0;
            while (!d.finished()) {
                n += d.deflate(out, n, out.length - n);
            }
            return n;
        } finally {
            d.end();
        }
    }

    static boolean roundTrip(byte[] in, byte[] out, int n) throws DataFormatException {
        Inflater inf = new Inflater();
        try {
            inf.setInput(out, 0, n);
            byte[] back = new byte[in.length];
            int got = inf.inflate(back);
            return got == in.length && Arrays.equals(back, in);
        } finally {
            inf.end();
        }
    }

    static String run(long untilNanos) throws DataFormatException {
        byte[] in = text(1 << 20);
        byte[] out = new byte[in.length + 1024];
        int n = deflate(in, out);
        if (!roundTrip(in, out, n)) {
            throw new IllegalStateException("deflate round trip failed");
        }
        long rounds = 1;
        while (MixedWorkload.more(untilNanos)) {
            deflate(in, out);
            rounds++;
        }
        return "deflate: rounds=" + rounds + " in=" + in.length + " out=" + n + " verified";
    }
}
