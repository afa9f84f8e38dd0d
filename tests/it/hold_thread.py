#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs a command and holds one of its threads still for a while (tests/it/alloc_test.sh live).

  hold_thread.py --thread NAME --ready FILE --go FILE --until FILE [--timeout S] -- COMMAND...

Starts COMMAND (its stdout and stderr are this script's), waits for FILE --ready, stops the
thread named NAME (/proc/PID/task/*/comm) with ptrace (PTRACE_SEIZE + PTRACE_INTERRUPT: that
thread only, the others run on), makes FILE --go, waits for FILE --until (or the command's end,
or --timeout seconds), lets the thread go (PTRACE_DETACH) and exits with the command's code.
Issue 30: HotSpot's "Service Thread" posts a GC's ObjectFree events; held still, it cannot post
them before the agent's dump, which must collect them itself. Held while it waits for work (it
is then safepoint-safe), never while it runs: a thread not asleep is let go at once and the run
goes on without a hold. Where ptrace is refused (a container, kernel.yama.ptrace_scope), the
run goes on without a hold too; either way one line says which ("hold_thread: ...")."""
import argparse
import ctypes
import os
import subprocess
import sys
import time

PTRACE_DETACH, PTRACE_SEIZE, PTRACE_INTERRUPT = 17, 0x4206, 0x4207
WALL = 0x40000000  # __WALL: wait for a thread that is not a child
LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.ptrace.argtypes = (ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p)
LIBC.ptrace.restype = ctypes.c_long


def ptrace(req, tid):
    if LIBC.ptrace(req, tid, None, None) != 0:
        raise OSError(ctypes.get_errno(), f"ptrace({req:#x}, {tid})")


def wait_for(path, proc, timeout):
    end = time.monotonic() + timeout
    while not os.path.exists(path) and proc.poll() is None and time.monotonic() < end:
        time.sleep(0.02)
    return os.path.exists(path)


def find_thread(pid, name):
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm", encoding="utf-8") as f:
                if f.read().strip() == name:
                    return int(tid)
        except OSError:
            pass
    return None


def hold(tid):
    """Stops tid; False (and let go) unless it was asleep when it stopped."""
    ptrace(PTRACE_SEIZE, tid)
    try:
        ptrace(PTRACE_INTERRUPT, tid)
        os.waitpid(tid, WALL)
        # The system call it stopped in: a thread asleep in a futex waits for work.
        with open(f"/proc/{tid}/syscall", encoding="utf-8") as f:
            asleep = f.read().split()[0] == "202"  # SYS_futex on x86_64
    except OSError:
        asleep = False
    if not asleep:
        ptrace(PTRACE_DETACH, tid)
    return asleep


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--thread", required=True)
    ap.add_argument("--ready", required=True)
    ap.add_argument("--go", required=True)
    ap.add_argument("--until", required=True)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    proc = subprocess.Popen(cmd)
    held = None
    try:
        if wait_for(a.ready, proc, a.timeout):
            tid = find_thread(proc.pid, a.thread)
            try:
                if tid is None:
                    why = "not held: no such thread"
                else:
                    held = tid if hold(tid) else None
                    why = f"held (tid {tid})" if held else f"not held: tid {tid} was not asleep"
            except OSError as e:
                why = f"not held: {e}"
            print(f"hold_thread: '{a.thread}' {why}", file=sys.stderr, flush=True)
        with open(a.go, "w", encoding="utf-8"):
            pass
        wait_for(a.until, proc, a.timeout)
    finally:
        if held is not None:
            try:
                ptrace(PTRACE_DETACH, held)
            except OSError:
                # The command ended meanwhile: the thread died still traced, and its process is
                # not reaped until the tracer reaps the thread.
                try:
                    os.waitpid(held, WALL)
                except OSError:
                    pass
    return proc.wait()


if __name__ == "__main__":
    sys.exit(main())
