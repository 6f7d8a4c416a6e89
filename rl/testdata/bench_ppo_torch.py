#!/usr/bin/python3
"""Times one PPO update step in PyTorch (CPU) on the same networks, the
same minibatch and the same loss as rl.BenchmarkPPOUpdate, for a
side-by-side table (make bench-ppo-torch runs both):

    /usr/bin/python3 rl/testdata/bench_ppo_torch.py [--threads 2] [--seconds 2]

One step is what rl.PPO.Update does per minibatch: a training forward
pass, CleanRL's clipped PPO loss on masked logits (advantages normalised,
value loss 0.5 * (V - R)^2, entropy bonus), backward, clip_grad_norm_
(0.5) and torch.optim.Adam (eps 1e-5, with study 000's weight decay for
the recurrent net). Cases:

  connect4-ppo   study 002's CNN (convs 32-64-64, dense 512), 2 input
                 planes, minibatch 2048 (16 envs x 512 steps / 4, the
                 defaults of canopy ppo)
  connect4-ppo-nhwc  the same with the model and input channels_last
                 (.to(memory_format=torch.channels_last)), the layout
                 oneDNN's convolutions prefer: on the 2-vCPU Intel Xeon
                 it sped up the AlphaZero nets' training 15-20%
  sequence-lstm  study 000's CNN-LSTM, minibatch 2048 = 2 environments x
                 1024 steps through the LSTM (truncated BPTT over the
                 rollout), as Study000Options splits 16 x 1024 into 8

Prints one line per case: samples/s (wall clock) and samples/cpu-s (per
second of process CPU time, all threads), like nets/testdata/bench_torch.py,
the best of --repeat timings. The networks are the reference models of the
nets tests (nets/testdata/make_reference.py, recurrent_reference.py).

Debian's python3-torch does its matrix products (nn.Linear, nn.LSTMCell)
through the system's libblas.so.3, which is netlib's unoptimised
reference BLAS unless an optimised one (libopenblas0) is installed; its
convolutions go through oneDNN. --dense-as-conv also times connect4-ppo
with its dense layer written as the equivalent full-size convolution (a
512 x 64 x 6 x 7 kernel on the 64 x 6 x 7 map, the same weights), which
oneDNN computes: PyTorch's best case on this installation.
"""
import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "nets", "testdata"))
from make_reference import PPO  # noqa: E402
from recurrent_reference import CNNLSTM  # noqa: E402
from bench_torch import blas_library, timeit  # noqa: E402

torch.set_default_dtype(torch.float32)  # recurrent_reference sets float64 for its checks

CONNECT4 = {"input_planes": 2, "height": 6, "width": 7, "policy_size": 7, "conv_channels": [32, 64, 64], "dense": 512}
SEQUENCE = {"planes": 4, "height": 10, "width": 10, "flat": 96 + 13, "conv_channels": [32, 32, 32, 32],
            "board_dense": 256, "flat_dense": 64, "hidden": 128, "cards": 7, "squares": 100}


class PPODenseAsConv(PPO):
    """PPO whose dense layer runs as the equivalent full-size convolution."""

    def __init__(self, cfg):
        super().__init__(cfg)
        c = cfg["conv_channels"][-1]
        self.fc_conv = torch.nn.Conv2d(c, cfg["dense"], (cfg["height"], cfg["width"]))
        with torch.no_grad():
            self.fc_conv.weight.copy_(self.fc.weight.reshape(self.fc_conv.weight.shape))
            self.fc_conv.bias.copy_(self.fc.bias)
        del self.fc

    def forward(self, x):
        for c in self.convs:
            x = F.relu(c(x))
        x = F.relu(self.fc_conv(x).flatten(1))
        return self.actor(x), torch.tanh(self.critic(x)).squeeze(1)


def rollout(B, P, g):
    legal = torch.rand(B, P, generator=g) < 0.7
    legal[torch.arange(B), torch.randint(P, (B,), generator=g)] = True
    action = torch.multinomial(legal.float(), 1, generator=g).squeeze(1)
    return {"legal": legal, "action": action, "old_logp": -torch.rand(B, generator=g) * 2,
            "adv": torch.randn(B, generator=g), "ret": torch.rand(B, generator=g) * 2 - 1}


def ppo_loss(logits, values, d, clip=0.2, vcoef=0.5, ecoef=0.03):
    masked = logits.masked_fill(~d["legal"], -1e30)
    logp_all = torch.log_softmax(masked, 1)
    logp = logp_all.gather(1, d["action"][:, None]).squeeze(1)
    entropy = -(logp_all.exp() * logp_all.masked_fill(~d["legal"], 0)).sum(1)
    ratio = (logp - d["old_logp"]).exp()
    adv = (d["adv"] - d["adv"].mean()) / (d["adv"].std() + 1e-8)
    pg = torch.max(-adv * ratio, -adv * torch.clamp(ratio, 1 - clip, 1 + clip)).mean()
    vloss = 0.5 * ((values - d["ret"]) ** 2).mean()
    return pg - ecoef * entropy.mean() + vcoef * vloss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, nargs="+", default=[2])
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--repeat", type=int, default=3, help="timings per case; the best is printed")
    ap.add_argument("--cases", nargs="+", default=["connect4-ppo", "connect4-ppo-nhwc", "sequence-lstm"])
    ap.add_argument("--dense-as-conv", action="store_true", help="also time connect4-ppo with its dense layer as a convolution")
    args = ap.parse_args()
    if args.dense_as_conv and "connect4-ppo" in args.cases:
        args.cases.insert(args.cases.index("connect4-ppo") + 1, "connect4-ppo-dense-as-conv")
    print("torch", torch.__version__, "blas", blas_library(), flush=True)
    g = torch.Generator().manual_seed(1)
    B = 2048
    for case in args.cases:
        if case.startswith("connect4-ppo"):
            c = CONNECT4
            model = (PPODenseAsConv if case.endswith("dense-as-conv") else PPO)(c).train()
            x = torch.rand(B, c["input_planes"], c["height"], c["width"], generator=g).round()
            if case.endswith("-nhwc"):
                model = model.to(memory_format=torch.channels_last)
                x = x.to(memory_format=torch.channels_last)
            d = rollout(B, c["policy_size"], g)
            opt = torch.optim.Adam(model.parameters(), lr=2.5e-4, eps=1e-5)

            def forward():
                return model(x)
            ecoef = 0.03
        elif case == "sequence-lstm":
            c = SEQUENCE
            model = CNNLSTM(c).train()
            T, E = 1024, 2
            nb = c["planes"] * c["height"] * c["width"]
            x = torch.rand(T, E, nb + c["flat"], generator=g).round()
            reset = (torch.rand(T, E, generator=g) < 0.01).float()
            reset[0] = 1
            h0, c0 = torch.zeros(E, c["hidden"]), torch.zeros(E, c["hidden"])
            d = rollout(T * E, c["cards"] * c["squares"], g)
            opt = torch.optim.Adam(model.parameters(), lr=3e-4, eps=1e-5, weight_decay=1e-5)

            def forward():
                policy, value, _, _ = model(x, h0, c0, reset)
                return policy, value
            ecoef = 0.01
        else:
            sys.exit("unknown case %r: want connect4-ppo, connect4-ppo-nhwc or sequence-lstm" % case)
        nparams = sum(p.numel() for p in model.parameters())

        def step():
            opt.zero_grad()
            logits, values = forward()
            ppo_loss(logits, values, d, ecoef=ecoef).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            opt.step()

        for th in args.threads:
            torch.set_num_threads(th)
            best = min((timeit(step, args.seconds) for _ in range(args.repeat)), key=lambda r: r[0])
            dt, ct = best
            print("ppo-update %-26s params=%-8d minibatch=%d threads=%d %10.1f samples/s %10.1f samples/cpu-s (best of %d)"
                  % (case, nparams, B, th, B / dt, B / ct, args.repeat), flush=True)


if __name__ == "__main__":
    main()
