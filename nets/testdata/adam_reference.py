#!/usr/bin/python3
"""Writes adam_reference.json: parameters after each of several steps of
torch.optim.Adam with weight_decay (L2 coupled to the gradient) and, for
contrast, of torch.optim.AdamW (decoupled decay), on fixed parameters and
gradients, for nets.Adam's WeightDecay test (optim_test.go):

    /usr/bin/python3 nets/testdata/adam_reference.py

Parameters and gradients are drawn in float64 and rounded to float32, as
the Go side holds them; the optimizers then run in float64, so the
reference is the exact update and the Go float32 one must be within
float32 rounding of it.
"""
import json
import os

import torch

torch.manual_seed(7)
OUT = os.path.dirname(os.path.abspath(__file__))
SHAPES = [(3, 4), (5,), (2, 2, 3)]
STEPS = 6
LR, BETAS, EPS, WD = 1e-2, (0.9, 0.999), 1e-5, 0.05


def f32(t):
    return t.float().double()


def init():
    # Magnitudes in [0.5, 2], either sign: relative errors stay meaningful.
    out = []
    for s in SHAPES:
        mag = torch.rand(s, dtype=torch.float64) * 1.5 + 0.5
        sign = torch.where(torch.rand(s) < 0.5, -1.0, 1.0).double()
        out.append(f32(mag * sign))
    return out


start = init()
grads = [[f32(torch.randn(s, dtype=torch.float64)) for s in SHAPES] for _ in range(STEPS)]


def run(cls):
    params = [p.clone().requires_grad_() for p in start]
    opt = cls(params, lr=LR, betas=BETAS, eps=EPS, weight_decay=WD)
    traj = []
    for k in range(STEPS):
        for p, g in zip(params, grads[k]):
            p.grad = g.clone()
        opt.step()
        traj.append([p.detach().flatten().tolist() for p in params])
    return traj


out = {
    "torch": torch.__version__, "lr": LR, "beta1": BETAS[0], "beta2": BETAS[1], "eps": EPS, "weight_decay": WD,
    "shapes": SHAPES, "start": [p.flatten().tolist() for p in start],
    "grads": [[g.flatten().tolist() for g in gs] for gs in grads],
    "adam": run(torch.optim.Adam), "adamw": run(torch.optim.AdamW),
}
with open(os.path.join(OUT, "adam_reference.json"), "w") as f:
    json.dump(out, f)
