// SPDX-License-Identifier: Apache-2.0
// A JVM for fxprof's attach tests: prints "ready" once main runs, then sleeps (default 120 s).
public class Sleeper {
    public static void main(String[] args) throws InterruptedException {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 120;
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(seconds * 1000);
    }
}
