#!/usr/bin/python3
"""canopy.search throughput with a uniform numpy evaluator, against
`canopy bench search --net random` at the same tree count, interleaved
(docs/BENCHMARKS.md, "Python API"). The machine may be shared: compare
the ratios, not the absolute figures.

    python/bench/bench_search.py --trees 1024 --sims 200 --rounds 3

--torch compares a PyTorch network's rows/s inside canopy.search with its
raw rows/s; --sleep-ms MS uses an evaluator that takes MS per batch (a
GPU: it frees the GIL and the cores) and reports the fraction of the wall
time spent inside it, which is the overlap of Go's tree work with the
evaluation (1.0 = full):

    python/bench/bench_search.py --sleep-ms 2 --trees 4096 --batch 1024 --sims 64
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
    nodes, t0, c0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        r = canopy.search(game, env, uniform, sims=sims, seed=nodes)
        nodes += int(r.visits.sum())
        env.step(r.action)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    env.close()
    return nodes / dt, nodes / cpu


def torch_rates(game, trees, sims, batch, seconds, device="cpu"):
    """Rows/s of a PyTorch network (Canopy's built-in architecture for
    game, on device: "cpu" or "cuda") inside canopy.search on `trees`
    positions (batches of at most `batch`), and raw: the same network on
    the same sequence of batch sizes, fed directly from host memory and
    read back to it (per-row cost depends strongly on the batch size, so
    the raw side replays exactly the batches the search made)."""
    import torch
    net = canopy.torch_net(game).to(device).eval()
    sizes = []

    def ev(obs, legal):
        sizes.append(obs.shape[0])
        with torch.no_grad():
            lo, v = net(torch.from_numpy(obs).to(device))
        return lo.cpu().numpy(), v.cpu().numpy()

    env = canopy.VecEnv(game, trees, seed=1, opponent=None)
    obs, _ = env.reset(seed=1)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        r = canopy.search(game, env, ev, sims=sims, batch=batch, seed=len(sizes))
        env.step(r.action)
    inside = sum(sizes) / (time.perf_counter() - t0)
    x = torch.from_numpy(np.ascontiguousarray(np.resize(obs, (batch,) + obs.shape[1:])))
    with torch.no_grad():
        t0 = time.perf_counter()
        for b in sizes:
            lo, v = net(x[:b].to(device))
            lo.cpu(), v.cpu()
        raw = sum(sizes) / (time.perf_counter() - t0)
    env.close()
    return raw, inside, float(np.mean(sizes))


def sleep_rates(game, trees, sims, batch, seconds, sleep_ms, busy=False, workers=0):
    """canopy.search with a synthetic evaluator that takes sleep_ms per
    batch (time.sleep, or a busy-wait with busy: it stands for a GPU that
    frees the GIL and the cores) and returns uniform priors. Returns a
    dict: rows per second, mean batch, "inside" (the fraction of the wall
    time spent inside the evaluator: 1.0 is perfect overlap, Go's tree
    work and the library calls hidden behind the evaluator), "start" (the
    fraction from each canopy.search call to its first batch: building the
    trees), the median and 90th percentile of the gaps between evaluator
    calls (seconds) and the process CPU per batch. sleep_ms=0 measures the
    whole per-batch cost outside the evaluator."""
    logits = values = None
    d = sleep_ms / 1e3
    sizes, inside, gaps = [], 0.0, []
    last = None  # when the previous evaluator call returned (None: at a search's start)
    start = 0.0  # total time from canopy.search's call to its first evaluator call

    def ev(obs, legal):
        nonlocal logits, values, inside, last, start
        t = time.perf_counter()
        if last is None:
            start += t - t_call
        else:
            gaps.append(t - last)
        b = obs.shape[0]
        sizes.append(b)
        if logits is None or logits.shape[0] < b:
            logits, values = np.zeros((b, legal.shape[1]), np.float32), np.zeros(b, np.float32)
        if d > 0:
            if busy:
                while time.perf_counter() - t < d:
                    pass
            else:
                time.sleep(d)
        last = time.perf_counter()
        inside += last - t
        return logits[:b], values[:b]

    env = canopy.VecEnv(game, trees, seed=1, opponent=None)
    env.reset(seed=1)
    t0, c0 = time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        t_call, last = time.perf_counter(), None
        r = canopy.search(game, env, ev, sims=sims, batch=batch, seed=len(sizes), workers=workers)
        env.step(r.action)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    env.close()
    return {"rows/s": sum(sizes) / wall, "mean batch": float(np.mean(sizes)), "inside": inside / wall,
            "cpu per batch": cpu / len(sizes), "start": start / wall, "gap p50": float(np.median(gaps)),
            "gap p90": float(np.quantile(gaps, 0.9))}


def go_bench(canopy_bin, game, trees, sims, seconds):
    out = subprocess.run([canopy_bin, "bench", "search", "--game", game, "--net", "random", "--trees", str(trees),
                          "--sims", str(sims), "--seconds", str(seconds), "--json", "--quiet", "--out", "/tmp/canopy-bench-py"],
                         capture_output=True, text=True, check=True)
    r = json.loads(out.stdout)
    return r["nodes_per_sec"], r["nodes_per_cpu_sec"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--game", default="connect4")
    p.add_argument("--trees", type=int, default=1024)
    p.add_argument("--sims", type=int, default=200)
    p.add_argument("--seconds", type=float, default=5)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--canopy", default=os.path.join(ROOT, "bin", "canopy"))
    p.add_argument("--torch", action="store_true", help="instead: a PyTorch network raw vs inside canopy.search")
    p.add_argument("--device", default="cpu", help="the PyTorch network's device with --torch (cpu, cuda)")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--sleep-ms", type=float, default=None,
                   help="instead: a synthetic evaluator taking this many ms per batch (0: returns at once); "
                        "reports the fraction of wall time inside it (1.0 = full overlap)")
    p.add_argument("--busy", action="store_true", help="with --sleep-ms: busy-wait instead of time.sleep")
    p.add_argument("--workers", type=int, default=0, help="with --sleep-ms: canopy.search's workers (0: its default)")
    a = p.parse_args()
    if a.sleep_ms is not None:
        fr = []
        for r in range(a.rounds):
            m = sleep_rates(a.game, a.trees, a.sims, a.batch, a.seconds, a.sleep_ms, a.busy, a.workers)
            fr.append(m["inside"])
            print(f"round {r + 1}: {a.sleep_ms:g} ms evaluator, {m['rows/s']:.0f} rows/s (mean batch {m['mean batch']:.0f}), "
                  f"time inside the evaluator {m['inside']:.3f} of wall, from each canopy.search call to its first "
                  f"batch {m['start']:.3f}, between batches {m['gap p50'] * 1e6:.0f} µs median, {m['gap p90'] * 1e6:.0f} "
                  f"µs 90th percentile; process CPU {m['cpu per batch'] * 1e6:.0f} µs per batch", flush=True)
        print(f"median fraction inside the evaluator {np.median(fr):.3f} over {a.rounds} rounds")
        return
    if a.torch:
        rs = []
        for r in range(a.rounds):
            raw, inside, mean = torch_rates(a.game, a.trees, a.sims, a.batch, a.seconds, a.device)
            rs.append(inside / raw)
            print(f"round {r + 1}: PyTorch {a.device} net inside canopy.search {inside:.0f} rows/s (batches of at most "
                  f"{a.batch}, mean {mean:.0f}), raw on the same batches {raw:.0f} rows/s, ratio {inside / raw:.2f}", flush=True)
        print(f"median ratio {np.median(rs):.2f} (worst {min(rs):.2f}, best {max(rs):.2f}) over {a.rounds} rounds")
        return
    ratios = []
    for r in range(a.rounds):
        g, gc = go_bench(a.canopy, a.game, a.trees, a.sims, a.seconds)
        py, pyc = python_search(a.game, a.trees, a.sims, a.seconds)
        ratios.append((py / g, pyc / gc))
        print(f"round {r + 1}: canopy bench search {g:.0f} nodes/s ({gc:.0f} per CPU-s), canopy.search {py:.0f} nodes/s "
              f"({pyc:.0f} per CPU-s), ratio wall {py / g:.2f}, CPU {pyc / gc:.2f}", flush=True)
    m = np.median(np.array(ratios), axis=0)
    print(f"median ratios over {a.rounds} interleaved rounds: per wall second {m[0]:.2f}, per CPU second {m[1]:.2f}")


if __name__ == "__main__":
    main()
