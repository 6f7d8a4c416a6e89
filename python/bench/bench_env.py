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
    """policy "random": uniformly random legal actions drawn in numpy by
    canopy.random_actions (one float per environment, table look-ups);
    "argmax": uniformly random legal actions as the argmax of one float per
    action times the mask; "rotate": the Go benchmark's own choice (the
    (k + 3i) mod count-th legal action of environment i at step k),
    computed in numpy."""
    env = canopy.VecEnv("connect4", n, seed=1, opponent="random")
    obs, info = env.reset(seed=1)
    rng = np.random.default_rng(1)
    idx = 3 * np.arange(n)
    buf = np.empty((n, env.num_actions), np.float32)
    steps, k, t0, c0 = 0, 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        m = info["legal_mask"]
        if policy == "random":
            a = canopy.random_actions(m, rng)
        elif policy == "argmax":
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
        res = [python_env(a.envs, a.seconds, pol) for pol in ("random", "argmax", "rotate")]
        rows.append([x / g for x, _ in res] + [c / gc for _, c in res])
        (rnd, rndc), (arg, argc), (rot, rotc) = res
        print(f"round {r + 1}: Go rl.VecEnv {g:.0f} steps/s ({gc:.0f} per CPU-s); canopy.VecEnv with "
              f"canopy.random_actions {rnd:.0f} ({rndc:.0f}), argmax random {arg:.0f} ({argc:.0f}), the Go "
              f"benchmark's actions {rot:.0f} ({rotc:.0f}); ratios per CPU-s {rndc / gc:.2f} {argc / gc:.2f} "
              f"{rotc / gc:.2f}, per wall-s {rnd / g:.2f} {arg / g:.2f} {rot / g:.2f}", flush=True)
    rows = np.array(rows)
    m, w = np.median(rows, axis=0), rows.min(axis=0)
    print(f"over {a.rounds} interleaved rounds, ratio to rl.VecEnv per CPU second, median (worst): "
          f"random_actions {m[3]:.2f} ({w[3]:.2f}), argmax random {m[4]:.2f} ({w[4]:.2f}), the Go benchmark's "
          f"actions {m[5]:.2f} ({w[5]:.2f}); per wall second: {m[0]:.2f} ({w[0]:.2f}), {m[1]:.2f} ({w[1]:.2f}), "
          f"{m[2]:.2f} ({w[2]:.2f})")

if __name__ == "__main__":
    main()
