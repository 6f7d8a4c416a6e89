#!/usr/bin/env python3
"""Times PyTorch on a CUDA GPU on the same networks as `gpucheck` and
`canopy bench net --backend cuda`, for a side-by-side table with Canopy's
CUDA backend (docs/BENCHMARKS.md, GPU):

    python3 nets/testdata/bench_torch_gpu.py [--presets connect4 sequence] [--seconds 0.3]

Every case is timed as Canopy's backend is used by a search: a batch of
observations in host memory goes to the GPU, through the network, and the
policy logits and values come back to host memory (pinned buffers,
non-blocking copies, one synchronisation per batch). Modes, PyTorch's own
best settings short of a separate compiler:

    fp32        eager, TF32 matmuls off (cudnn.benchmark on)
    bf16        eager under torch.autocast(bfloat16), channels_last
    bf16-graph  the bf16 forward and both copies captured once per batch
                size in a CUDA graph and replayed (launch overhead gone)

Prints one line per case: preset, mode, batch, evals/s (median of 5
rounds) and the worst round, so the comparison reads medians and worst
rounds as the project's rules ask.
"""
import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_reference import AlphaZero  # noqa: E402  (same architecture as the Go nets)

PRESETS = {
    "connect4": {"head": "alphazero", "input_planes": 2, "height": 6, "width": 7, "policy_size": 7,
                 "channels": 64, "blocks": 5, "value_hidden": 64},
    # nets.Preset("sequence"): the default game deals jacks (107 planes).
    "sequence": {"head": "alphazero", "input_planes": 107, "height": 10, "width": 10, "policy_size": 700,
                 "channels": 64, "blocks": 5, "value_hidden": 256},
}


def rounds(fn, seconds, n_rounds=5):
    """Runs fn (which synchronises) for about seconds per round after a
    warm-up; returns the per-call seconds of each round."""
    for _ in range(3):
        fn()
    out = []
    for _ in range(n_rounds):
        n, t0 = 0, time.perf_counter()
        while True:
            fn()
            n += 1
            el = time.perf_counter() - t0
            if el >= seconds and n >= 3:
                break
        out.append(el / n)
    return out


def case(model, cfg, batch, mode, seconds):
    dev = torch.device("cuda")
    shape = (batch, cfg["input_planes"], cfg["height"], cfg["width"])
    host_x = torch.randn(shape).pin_memory()
    host_p = torch.empty(batch, cfg["policy_size"]).pin_memory()
    host_v = torch.empty(batch).pin_memory()
    dev_x = torch.empty(shape, device=dev)
    if mode != "fp32":
        dev_x = dev_x.contiguous(memory_format=torch.channels_last)

    def forward():
        dev_x.copy_(host_x, non_blocking=True)
        if mode == "fp32":
            p, v = model(dev_x)
        else:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                p, v = model(dev_x)
        host_p.copy_(p.float(), non_blocking=True)
        host_v.copy_(v.float().reshape(-1), non_blocking=True)

    if mode == "bf16-graph":
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                forward()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            forward()

        def step():
            graph.replay()
            torch.cuda.synchronize()
    else:
        def step():
            forward()
            torch.cuda.synchronize()

    per_call = rounds(step, seconds)
    evals = [batch / t for t in per_call]
    return statistics.median(evals), min(evals)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--presets", nargs="+", default=["connect4", "sequence"])
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 16, 64, 256, 1024, 4096])
    ap.add_argument("--modes", nargs="+", default=["fp32", "bf16", "bf16-graph"])
    ap.add_argument("--seconds", type=float, default=0.3, help="per round; 5 rounds per case")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device: this benchmark needs a GPU", file=sys.stderr)
        sys.exit(1)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print("torch", torch.__version__, "device", torch.cuda.get_device_name(0),
          "cudnn", torch.backends.cudnn.version(), flush=True)
    for name in args.presets:
        cfg = PRESETS[name]
        for mode in args.modes:
            model = AlphaZero(cfg).cuda().eval()
            if mode != "fp32":
                model = model.to(memory_format=torch.channels_last)
            for batch in args.batches:
                with torch.no_grad():  # also around graph capture: no autograd state is recorded
                    med, worst = case(model, cfg, batch, mode, args.seconds)
                print("torch-gpu %-9s %-10s batch=%-5d %12.0f evals/s (worst round %12.0f)"
                      % (name, mode, batch, med, worst), flush=True)


if __name__ == "__main__":
    main()
