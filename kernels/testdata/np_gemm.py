"""Times numpy's A @ B (OpenBLAS, or whatever BLAS numpy loads) on the shapes
of kernels' BenchmarkDenseGemm: study 002's PPO dense layer, 2048 x 2688 -> 512
(forward, weight gradient, input gradient), and prints GFLOP/s of wall time.

    OPENBLAS_NUM_THREADS=1 /usr/bin/python3 kernels/testdata/np_gemm.py
    OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=Haswell /usr/bin/python3 kernels/testdata/np_gemm.py   # AVX2 kernels
"""
import time

import numpy as np

SHAPES = [  # name, transA, transB, m, n, k (C = op(A) op(B), m x n, K = k)
    ("ppo-forward", 0, 0, 2048, 512, 2688),
    ("ppo-weightgrad", 1, 0, 2688, 512, 2048),
    ("ppo-inputgrad", 0, 1, 2048, 2688, 512),
]


def main():
    rng = np.random.default_rng(1)
    for name, ta, tb, m, n, k in SHAPES:
        a = rng.standard_normal((k, m) if ta else (m, k), dtype=np.float32)
        b = rng.standard_normal((n, k) if tb else (k, n), dtype=np.float32)
        opa, opb = (a.T if ta else a), (b.T if tb else b)
        opa @ opb
        calls, t0 = 10, time.perf_counter()
        for _ in range(calls):
            opa @ opb
        dt = (time.perf_counter() - t0) / calls
        print("%-15s %7.1f GFLOP/s" % (name, 2 * m * n * k / dt / 1e9))


if __name__ == "__main__":
    main()
