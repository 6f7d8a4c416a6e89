#!/usr/bin/python3
"""Times PyTorch (CPU) on the same networks as nets.BenchmarkForward and
nets.BenchmarkTrain, for a side-by-side table:

    /usr/bin/python3 nets/testdata/bench_torch.py [--threads 2] [--seconds 1] [--train | --forward] [--formats nchw nhwc]

Inference runs in torch.inference_mode() with the model in eval mode and
batch norm unfused (PyTorch's default eager execution); training is one
forward + backward of the AlphaZero loss + Adam step at batch 256, on the
connect4 preset (64x5), the 32x4 Connect Four net and the sequence preset
(--train: training only; --forward: inference only). OpenBLAS's own thread count is set to the same
number as torch's (it otherwise starts one thread per core even with
torch.set_num_threads(1)); run with OMP_WAIT_POLICY=PASSIVE so that idle
OpenMP threads do not spin on a shared machine.
Every case runs in both memory layouts (--formats): PyTorch's default
(nchw, torch.contiguous_format) and channels_last (nhwc: the model and
input converted with .to(memory_format=torch.channels_last)), in which
oneDNN's convolutions avoid reordering; on the 2-vCPU Intel Xeon
(AVX-512) channels_last trained 15-20% faster, so a fair comparison
takes the faster of the two.
Prints one line per case: preset, batch, threads, layout, evals/s (wall
clock) and evals/cpu-s (per second of process CPU time, all threads).
"""
import argparse
import ctypes
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_reference import AlphaZero  # noqa: E402  (same architecture as the Go nets)

PRESETS = {
    "connect4": {"head": "alphazero", "input_planes": 2, "height": 6, "width": 7, "policy_size": 7,
                 "channels": 64, "blocks": 5, "value_hidden": 64},
    "connect4-32x4": {"head": "alphazero", "input_planes": 2, "height": 6, "width": 7, "policy_size": 7,
                      "channels": 32, "blocks": 4, "value_hidden": 64},
    "sequence": {"head": "alphazero", "input_planes": 107, "height": 10, "width": 10, "policy_size": 700,
                 "channels": 64, "blocks": 5, "value_hidden": 256},
}


def blas_library():
    """Names the BLAS library PyTorch's matrix products (nn.Linear,
    nn.LSTMCell) load, read from /proc/self/maps after one product: an
    optimised one (.../openblas-pthread/libblas.so.3 with Debian's
    libopenblas0-pthread) or netlib's unoptimised reference
    (.../blas/libblas.so.3), which makes any comparison unfair."""
    torch.mm(torch.ones(64, 64), torch.ones(64, 64))
    with open("/proc/self/maps") as f:
        libs = sorted({line.split()[-1] for line in f if "blas" in line.split()[-1]})
    return ", ".join(libs) or "none found"


def set_blas_threads(n):
    """Sets OpenBLAS's thread count (openblas_set_num_threads in the loaded
    library), which torch.set_num_threads leaves alone. Returns False
    when no OpenBLAS is loaded."""
    with open("/proc/self/maps") as f:
        libs = sorted({line.split()[-1] for line in f if "libopenblas" in line.split()[-1]})
    for lib in libs:
        ctypes.CDLL(lib).openblas_set_num_threads(n)
    return bool(libs)


def set_threads(n):
    torch.set_num_threads(n)
    set_blas_threads(n)


def timeit(fn, seconds):
    """Returns (wall seconds, process CPU seconds) per call. The CPU time
    counts every thread of the process, like the Go benchmarks' /cpu-s
    metrics, and is the fairer number on a shared, loaded machine."""
    fn()
    n, t0, c0 = 0, time.perf_counter(), time.process_time()
    while True:
        fn()
        n += 1
        el = time.perf_counter() - t0
        if el >= seconds and n >= 3:
            return el / n, (time.process_time() - c0) / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--train", action="store_true", help="time training only")
    ap.add_argument("--forward", action="store_true", help="time inference only")
    ap.add_argument("--formats", nargs="+", default=["nchw", "nhwc"], choices=["nchw", "nhwc"],
                    help="memory layouts to time: nchw (PyTorch's default) and nhwc (channels_last)")
    args = ap.parse_args()
    if args.train and args.forward:
        sys.exit("--train and --forward exclude each other")
    print("torch", torch.__version__, "blas", blas_library(), "OMP_WAIT_POLICY", os.environ.get("OMP_WAIT_POLICY"), flush=True)
    if not args.train:
        for name in ("connect4", "sequence"):
            cfg = PRESETS[name]
            for fmt in args.formats:
                model = in_layout(AlphaZero(cfg).eval(), fmt)
                for batch in (1, 16, 256):
                    x = in_layout(torch.randn(batch, cfg["input_planes"], cfg["height"], cfg["width"]), fmt)
                    for th in args.threads:
                        set_threads(th)
                        with torch.inference_mode():
                            dt, ct = timeit(lambda: model(x), args.seconds)
                        print("forward %-13s batch=%-4d threads=%d %s %10.1f evals/s %10.1f evals/cpu-s" % (name, batch, th, fmt, batch / dt, batch / ct), flush=True)
    if args.forward:
        return
    for name in ("connect4", "connect4-32x4", "sequence"):
        cfg = PRESETS[name]
        for fmt in args.formats:
            model = in_layout(AlphaZero(cfg).train(), fmt)
            opt = torch.optim.Adam(model.parameters(), lr=1e-3)
            B = 256
            x = in_layout(torch.randn(B, cfg["input_planes"], cfg["height"], cfg["width"]), fmt)
            target = torch.softmax(torch.randn(B, cfg["policy_size"]), 1)
            z = torch.rand(B) * 2 - 1

            def step():
                opt.zero_grad()
                logits, v = model(x)
                loss = -(target * torch.log_softmax(logits, 1)).sum(1).mean() + ((v - z) ** 2).mean()
                loss.backward()
                opt.step()

            for th in args.threads:
                set_threads(th)
                dt, ct = timeit(step, args.seconds)
                print("train   %-13s batch=%-4d threads=%d %s %10.1f samples/s %10.1f samples/cpu-s" % (name, B, th, fmt, B / dt, B / ct), flush=True)


def in_layout(t, fmt):
    """Returns the module or tensor t in memory layout fmt: as it is
    (nchw) or channels_last (nhwc; a 4-d tensor or a module's 4-d
    parameters)."""
    if fmt == "nhwc":
        return t.to(memory_format=torch.channels_last)
    return t

if __name__ == "__main__":
    main()
