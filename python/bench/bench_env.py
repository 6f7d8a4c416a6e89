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
    steps, k, t0 = 0, 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        m = info["legal_mask"]
        if policy == "random":
            rng.random(out=buf)
            buf *= m
            a = buf.argmax(axis=1)
        else:
            c = np.cumsum(m, axis=1)
            a = (c > ((k + idx) % c[:, -1])[:, None]).argmax(axis=1)
        obs, rew, term, trunc, info = env.step(a)
        steps += n
        k += 1
    dt = time.perf_counter() - t0
    env.close()
    return steps / dt


def go_env(seconds):
    out = subprocess.run(["go", "test", "./rl", "-run", "^$", "-bench", "Connect4Env/n=4096", f"-benchtime={seconds}s"],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    m = re.search(r"n=4096/workers=1\S*\s+\d+\s+\d+ ns/op.*?([\d.e+]+) steps/s", out.stdout)
    if not m:
        raise SystemExit("no n=4096 line in:\n" + out.stdout)
    return float(m.group(1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--envs", type=int, default=4096)
    p.add_argument("--seconds", type=float, default=3)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    ratios = []
    for r in range(a.rounds):
        g = go_env(a.seconds)
        rot = python_env(a.envs, a.seconds, "rotate")
        rnd = python_env(a.envs, a.seconds, "random")
        ratios.append((rot / g, rnd / g))
        print(f"round {r + 1}: Go rl.VecEnv {g:.0f} steps/s; canopy.VecEnv with the same actions {rot:.0f} "
              f"(ratio {rot / g:.2f}), with random actions {rnd:.0f} (ratio {rnd / g:.2f})", flush=True)
    rs = np.array(ratios)
    print(f"median ratios over {a.rounds} interleaved rounds: same actions {np.median(rs[:, 0]):.2f}, "
          f"random actions {np.median(rs[:, 1]):.2f}")


if __name__ == "__main__":
    main()
