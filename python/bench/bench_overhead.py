#!/usr/bin/python3
"""The per-call cost of the two designs issue 40 allows (python/README.md):
a call into libcanopy.so through ctypes (a JSON control call, and the
hot path: one VecEnv step of one tic-tac-toe game) against the round
trip of a 16-byte message to a server process over a Unix socket pair,
the least a socket design pays per call before any work.

    python/bench/bench_overhead.py
"""
import os
import socket
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import canopy  # noqa: E402


def per_call(f, n):
    t0 = time.perf_counter()
    for _ in range(n):
        f()
    return (time.perf_counter() - t0) / n * 1e6


def main():
    n = 20000
    canopy.live_handles()
    env = canopy.VecEnv("tictactoe", 1, opponent="random")
    _, info = env.reset()
    a = np.zeros(1, np.int64)

    def step():
        a[0] = info["legal_mask"][0].argmax()
        env.step(a)

    a_sock, b_sock = socket.socketpair()
    pid = os.fork()
    if pid == 0:  # the echo server: never touches Canopy
        a_sock.close()
        while True:
            m = b_sock.recv(64)
            if not m:
                os._exit(0)
            b_sock.sendall(m)
    b_sock.close()
    msg = b"x" * 16

    def rtt():
        a_sock.sendall(msg)
        a_sock.recv(64)

    rows = []
    for r in range(3):
        rows.append((per_call(canopy.live_handles, n), per_call(step, n), per_call(rtt, n)))
        print(f"round {r + 1}: ctypes JSON call {rows[-1][0]:.1f} us, VecEnv.step (1 env) {rows[-1][1]:.1f} us, "
              f"socket round trip {rows[-1][2]:.1f} us", flush=True)
    a_sock.close()
    os.waitpid(pid, 0)
    env.close()
    m = np.median(np.array(rows), axis=0)
    print(f"medians: ctypes JSON call {m[0]:.1f} us, VecEnv.step {m[1]:.1f} us, socket round trip {m[2]:.1f} us")


if __name__ == "__main__":
    main()
