#!/usr/bin/python3
"""canopy.search throughput with a uniform numpy evaluator, against
`canopy bench search --net random` at the same tree count, interleaved
(docs/BENCHMARKS.md, "Python API"). The machine may be shared: compare
the ratios, not the absolute figures.

    python/bench/bench_search.py --trees 1024 --sims 200 --rounds 3
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import canopy  # noqa: E402


def python_search(game, trees, sims, seconds):
    logits = values = None

    def uniform(obs, legal):
        nonlocal logits, values
        b = obs.shape[0]
        if logits is None or logits.shape[0] < b:
            logits, values = np.zeros((b, legal.shape[1]), np.float32), np.zeros(b, np.float32)
        return logits[:b], values[:b]

    env = canopy.VecEnv(game, trees, seed=1, opponent=None)
    env.reset(seed=1)
    nodes, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        r = canopy.search(game, env, uniform, sims=sims, seed=nodes)
        nodes += int(r.visits.sum())
        env.step(r.action)
    dt = time.perf_counter() - t0
    env.close()
    return nodes / dt


def go_bench(canopy_bin, game, trees, sims, seconds):
    out = subprocess.run([canopy_bin, "bench", "search", "--game", game, "--net", "random", "--trees", str(trees),
                          "--sims", str(sims), "--seconds", str(seconds), "--json", "--quiet", "--out", "/tmp/canopy-bench-py"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["nodes_per_sec"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--game", default="connect4")
    p.add_argument("--trees", type=int, default=1024)
    p.add_argument("--sims", type=int, default=200)
    p.add_argument("--seconds", type=float, default=5)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--canopy", default=os.path.join(ROOT, "bin", "canopy"))
    a = p.parse_args()
    ratios = []
    for r in range(a.rounds):
        g = go_bench(a.canopy, a.game, a.trees, a.sims, a.seconds)
        py = python_search(a.game, a.trees, a.sims, a.seconds)
        ratios.append(py / g)
        print(f"round {r + 1}: canopy bench search {g:.0f} nodes/s, canopy.search {py:.0f} nodes/s, ratio {py / g:.2f}", flush=True)
    print(f"median ratio {np.median(ratios):.2f} over {a.rounds} interleaved rounds")


if __name__ == "__main__":
    main()
