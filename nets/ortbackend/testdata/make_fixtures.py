#!/usr/bin/python3
"""Regenerates the ONNX fixtures of nets/ortbackend's tests with PyTorch.

Run from the repository root with Debian's PyTorch and ONNX
(apt-get install python3-torch python3-onnx):

    /usr/bin/python3 nets/ortbackend/testdata/make_fixtures.py

Each model is a small policy-value network exported by torch.onnx.export
(opset 17, dynamic batch axis unless said otherwise) with seeded random
weights; <name>.json records seeded inputs and PyTorch's outputs for them,
the outside reference the ONNX Runtime backend is checked against:

  resnet.onnx   AlphaZero-style ResNet (3x3 stem, 2 residual blocks with
                batch norm, policy and value heads), input [B,3,4,5],
                outputs policy [B,20] then value [B,1] (tanh)
  seglobal.onnx a network Canopy never made: squeeze-excitation blocks,
                a global-average-pooling value head, outputs named
                v [B] (first) and logits [B,20] (second)
  fixed2.onnx   the ResNet exported with a fixed batch of 2 (refused)
  wide_value.onnx  value output [B,3] (does not fit a Canopy backend)
  raw_value.onnx   value output [B,1] without tanh (values outside [-1, 1])
  tictactoe.onnx  a small ResNet for tictactoe (2x3x3 input, 9 actions) for
                the command tests (cmd/canopy: self-play and bench on ort)
  bench.onnx    the shape of a Canopy net for connect4 (2x6x7 input,
                32 channels, 4 blocks, value hidden 32, 7 actions) for
                BenchmarkORTvsCPU (random weights; not the same weights as
                the Canopy net it runs beside)

The files are deterministic for a given PyTorch version (seeded), and
small (< 400 KiB together).
"""
import json
import os

import torch
import torch.nn as nn

OUT = os.path.dirname(os.path.abspath(__file__))
OPSET = 17


def bn(c):
    b = nn.BatchNorm2d(c)
    # Non-trivial running statistics, so that inference-mode folding matters.
    with torch.no_grad():
        b.running_mean.uniform_(-0.2, 0.2)
        b.running_var.uniform_(0.5, 1.5)
        b.weight.uniform_(0.5, 1.5)
        b.bias.uniform_(-0.1, 0.1)
    return b


class Block(nn.Module):
    def __init__(self, c, se=False):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(c, c, 3, padding=1, bias=False), bn(c)
        self.c2, self.b2 = nn.Conv2d(c, c, 3, padding=1, bias=False), bn(c)
        self.se = None
        if se:
            self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, c // 2), nn.ReLU(),
                                    nn.Linear(c // 2, c), nn.Sigmoid())

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        if self.se is not None:
            y = y * self.se(y)[:, :, None, None]
        return torch.relu(x + y)


class ResNet(nn.Module):
    """Canopy's AlphaZero layout: stem, blocks, 2-filter policy head, 1-filter value head."""

    def __init__(self, planes, h, w, actions, ch, blocks, hidden):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(planes, ch, 3, padding=1, bias=False), bn(ch), nn.ReLU())
        self.blocks = nn.Sequential(*[Block(ch) for _ in range(blocks)])
        self.pconv, self.pbn = nn.Conv2d(ch, 2, 1, bias=False), bn(2)
        self.pfc = nn.Linear(2 * h * w, actions)
        self.vconv, self.vbn = nn.Conv2d(ch, 1, 1, bias=False), bn(1)
        self.vfc1, self.vfc2 = nn.Linear(h * w, hidden), nn.Linear(hidden, 1)

    def forward(self, x):
        t = self.blocks(self.stem(x))
        p = self.pfc(torch.relu(self.pbn(self.pconv(t))).flatten(1))
        v = torch.relu(self.vbn(self.vconv(t))).flatten(1)
        v = torch.tanh(self.vfc2(torch.relu(self.vfc1(v))))
        return p, v


class SEGlobal(nn.Module):
    """Squeeze-excitation tower, global-pooling value head, value output first."""

    def __init__(self, planes, h, w, actions, ch=8):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(planes, ch, 3, padding=1), nn.LeakyReLU(0.1))
        self.blocks = nn.Sequential(Block(ch, se=True), Block(ch, se=True))
        self.pfc = nn.Linear(ch * h * w, actions)
        self.vfc = nn.Linear(2 * ch, 1)

    def forward(self, x):
        t = self.blocks(self.stem(x))
        p = self.pfc(t.flatten(1))
        g = torch.cat([t.mean(dim=(2, 3)), t.amax(dim=(2, 3))], dim=1)
        return torch.tanh(self.vfc(g)).squeeze(1), p


class RawValue(nn.Module):
    def __init__(self, planes, h, w, actions):
        super().__init__()
        self.fc = nn.Linear(planes * h * w, actions + 1)
        self.actions = actions

    def forward(self, x):
        y = self.fc(x.flatten(1)) * 10
        return y[:, :self.actions], y[:, self.actions:]


class WideValue(nn.Module):
    def __init__(self, planes, h, w, actions):
        super().__init__()
        self.fc = nn.Linear(planes * h * w, actions + 3)
        self.actions = actions

    def forward(self, x):
        y = self.fc(x.flatten(1))
        return y[:, :self.actions], torch.tanh(y[:, self.actions:])


def export(name, model, shape, in_name, out_names, batch, dynamic=True, record=True):
    model.eval()
    g = torch.Generator().manual_seed(7)
    x = torch.rand((batch,) + shape, generator=g) * 2 - 1
    path = os.path.join(OUT, name + ".onnx")
    axes = None
    if dynamic:
        axes = {in_name: {0: "batch"}}
        axes.update({o: {0: "batch"} for o in out_names})
    torch.onnx.export(model, x, path, input_names=[in_name], output_names=out_names, dynamic_axes=axes,
                      opset_version=OPSET, do_constant_folding=True)
    if not record:
        return
    with torch.no_grad():
        outs = model(x)
    rec = {"model": name + ".onnx", "input_shape": list(x.shape), "input": x.flatten().tolist(),
           "outputs": {n: {"shape": list(o.shape), "data": o.flatten().tolist()} for n, o in zip(out_names, outs)},
           "torch": torch.__version__}
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump(rec, f)
        f.write("\n")


def main():
    torch.manual_seed(1)
    export("resnet", ResNet(3, 4, 5, 20, 8, 2, 16), (3, 4, 5), "input", ["policy", "value"], batch=7)
    torch.manual_seed(2)
    export("seglobal", SEGlobal(3, 4, 5, 20), (3, 4, 5), "obs", ["v", "logits"], batch=7)
    torch.manual_seed(1)
    export("fixed2", ResNet(3, 4, 5, 20, 8, 2, 16), (3, 4, 5), "input", ["policy", "value"], batch=2,
           dynamic=False, record=False)
    torch.manual_seed(3)
    export("wide_value", WideValue(3, 4, 5, 20), (3, 4, 5), "input", ["policy", "value"], batch=2, record=False)
    torch.manual_seed(6)
    export("raw_value", RawValue(3, 4, 5, 20), (3, 4, 5), "input", ["policy", "value"], batch=2, record=False)
    torch.manual_seed(5)
    export("tictactoe", ResNet(2, 3, 3, 9, 8, 1, 8), (2, 3, 3), "input", ["policy", "value"], batch=1, record=False)
    torch.manual_seed(4)
    export("bench", ResNet(2, 6, 7, 7, 32, 4, 32), (2, 6, 7), "input", ["policy", "value"], batch=1, record=False)


if __name__ == "__main__":
    main()
