#!/usr/bin/python3
"""canopy.VecEnv steps/s on Connect Four (4,096 environments against the
random opponent, random legal actions chosen in numpy) against the Go
rl.VecEnv benchmark at the same size (BenchmarkConnect4Env/n=4096),
interleaved (docs/BENCHMARKS.md, "Python API"). The machine may be
shared: compare the ratios.

    python/bench/bench_env.py --rounds 3
"""
import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import canopy  # noqa: E402


def python_env(n, seconds, policy):
    """policy "random": uniformly random legal actions drawn in numpy;
    "rotate": the Go benchmark's own choice (the (k + 3i) mod count-th
    legal action of environment i at step k), computed in numpy."""
    env = canopy.VecEnv("connect4", n, seed=1, opponent="random")
    obs, info = env.reset(seed=1)
    rng = np.random.default_rng(1)
    idx = 3 * np.arange(n)
    buf = np.empty((n, env.num_actions), np.float32)
    steps, k, t0, c0 = 0, 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        m = info["legal_mask"]
        if policy == "random":
            rng.random(dtype=np.float32, out=buf)
            buf *= m
            a = buf.argmax(axis=1)
        else:
            c = np.cumsum(m, axis=1)
            a = (c > ((k + idx) % c[:, -1])[:, None]).argmax(axis=1)
        obs, rew, term, trunc, info = env.step(a)
        steps += n
        k += 1
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    env.close()
    return steps / dt, steps / cpu


def go_env(seconds):
    out = subprocess.run(["go", "test", "./rl", "-run", "^$", "-bench", "Connect4Env/n=4096", f"-benchtime={seconds}s"],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    line = next((l for l in out.stdout.splitlines() if "n=4096/workers=1" in l), None)
    wall = re.search(r"([\d.e+]+) steps/s", line or "")
    cpu = re.search(r"([\d.e+]+) steps/cpu-s", line or "")
    if not (wall and cpu):
        raise SystemExit("no n=4096 line in:\n" + out.stdout)
    return float(wall.group(1)), float(cpu.group(1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--envs", type=int, default=4096)
    p.add_argument("--seconds", type=float, default=3)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    rows = []
    for r in range(a.rounds):
        g, gc = go_env(a.seconds)
        rot, rotc = python_env(a.envs, a.seconds, "rotate")
        rnd, rndc = python_env(a.envs, a.seconds, "random")
        rows.append((rot / g, rnd / g, rotc / gc, rndc / gc))
        print(f"round {r + 1}: Go rl.VecEnv {g:.0f} steps/s ({gc:.0f} per CPU-s); canopy.VecEnv with the same actions "
              f"{rot:.0f} ({rotc:.0f}), with random actions {rnd:.0f} ({rndc:.0f}); ratios wall {rot / g:.2f} {rnd / g:.2f}, "
              f"CPU {rotc / gc:.2f} {rndc / gc:.2f}", flush=True)
    m = np.median(np.array(rows), axis=0)
    print(f"median ratios over {a.rounds} interleaved rounds: per wall second: same actions {m[0]:.2f}, random actions "
          f"{m[1]:.2f}; per CPU second: same actions {m[2]:.2f}, random actions {m[3]:.2f}")


if __name__ == "__main__":
    main()
