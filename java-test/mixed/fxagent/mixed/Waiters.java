// SPDX-License-Identifier: Apache-2.0
// Wall-mode workload (issue 16 in wall mode): threads that wait in the kernel the ways a service
// does, while main spins in Java and counts its rounds, or with -Dfxagent.mixed.spin=false
// sleeps too (then the process's CPU time is the JVM's and the profiler's own: what
// bench/run_cstack_ab.sh compares in wall mode). Each waiter is named for what it does:
//   waiter-pipe-read    blocked in read(2) on a pipe that never gets data (FileDispatcherImpl.read0)
//   waiter-socket-read  blocked reading a loopback socket whose peer never writes (poll/recv)
//   waiter-sleep        Thread.sleep (libjvm's park on a condition variable, a futex)
//   waiter-park-N       LockSupport.park, N of -Dfxagent.mixed.parked (default 4)
// The waiters are daemons: main returns when the time is up and the JVM exits with them parked.
package fxagent.mixed;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

final class Waiters {
    private Waiters() {}

    private static void daemon(String name, CountDownLatch started, Body body) {
        Thread t = new Thread(() -> {
            started.countDown();
            try {
                body.run();
            } catch (IOException | InterruptedException e) {
                System.err.println(name + ": " + e);
            }
        }, name);
        t.setDaemon(true);
        t.start();
    }

    private interface Body {
        void run() throws IOException, InterruptedException;
    }

    static String run(long untilNanos) throws IOException, InterruptedException {
        int parked = Integer.getInteger("fxagent.mixed.parked", 4);
        CountDownLatch started = new CountDownLatch(3 + parked);
        Pipe pipe = Pipe.open(); // the sink stays open and silent: the read never returns
        daemon("waiter-pipe-read", started, () -> pipe.source().read(ByteBuffer.allocate(16)));
        ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        Socket client = new Socket(server.getInetAddress(), server.getLocalPort());
        Socket peer = server.accept(); // kept open and silent
        daemon("waiter-socket-read", started, () -> {
            InputStream in = client.getInputStream();
            in.read();
        });
        daemon("waiter-sleep", started, () -> {
            for (;;) {
                Thread.sleep(60_000);
            }
        });
        for (int i = 0; i < parked; i++) {
            daemon("waiter-park-" + i, started, () -> {
                for (;;) {
                    LockSupport.park();
                }
            });
        }
        started.await();
        long rounds = 0;
        long mix = 1;
        boolean spin = Boolean.parseBoolean(System.getProperty("fxagent.mixed.spin", "true"));
        if (!spin) {
            Thread.sleep(Math.max(0, (untilNanos - System.nanoTime()) / 1_000_000));
        }
        while (spin && System.nanoTime() < untilNanos) {
            for (int i = 0; i < 100_000; i++) {
                mix = mix * 6364136223846793005L + 1442695040888963407L;
            }
            rounds++;
        }
        peer.close();
        return "wait: rounds=" + rounds + " parked=" + parked + " mix=" + (mix & 0xff);
    }
}
