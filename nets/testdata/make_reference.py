#!/usr/bin/python3
"""Writes the PyTorch reference data the nets tests compare against.

Run from anywhere with Debian's CPU torch (apt-get install python3-torch
python3-numpy):

    /usr/bin/python3 nets/testdata/make_reference.py

It builds tiny networks with the same layer order, names and layouts as
package nets (PyTorch's own [Cout, Cin, kh, kw] conv and [out, in] linear
layouts, NCHW activations flattened channel-major before dense layers),
computes in float64 from float32-rounded weights and inputs, and writes:

  tiny_az.safetensors / tiny_ppo.safetensors   weights + "canopy.config"
  tiny_az3.safetensors / tiny_ppo3...          the same with a per-player value
                                               head of 3 outputs (value_players)
  tiny_az1.safetensors / tiny_ppo1...          the same on a board of one cell
  tiny_az_io.safetensors / tiny_ppo_io...      inputs, expected eval outputs,
                                               training loss, gradients and
                                               running statistics after one
                                               training-mode forward
  lstm.safetensors                             LSTM cell weights, one step and
                                               its gradients
  halfs.safetensors                            F16 and BF16 tensors with their
                                               float32 values (reader test)

The safetensors writer below is independent of the Go one (struct + json).
"""
import json
import os
import struct

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

OUT = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(1234)


def write_safetensors(path, tensors, metadata=None):
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    blobs, off = [], 0
    for name, (dtype, arr) in tensors.items():
        raw = arr.tobytes()
        header[name] = {"dtype": dtype, "shape": list(arr.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    hj = json.dumps(header).encode()
    hj += b" " * ((8 - len(hj) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)))
        f.write(hj)
        for b in blobs:
            f.write(b)


def f32(t):
    return ("F32", np.ascontiguousarray(t.detach().to(torch.float32).numpy()).astype("<f4"))


class ConvBN(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        t = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(t)) + x)


class PolicyHead(nn.Module):
    def __init__(self, c, filters, hw, p):
        super().__init__()
        self.conv = nn.Conv2d(c, filters, 1, bias=False)
        self.bn = nn.BatchNorm2d(filters)
        self.fc = nn.Linear(filters * hw, p)

    def forward(self, x):
        return self.fc(F.relu(self.bn(self.conv(x))).flatten(1))


def squeeze_scalar(v):
    """The scalar head's [B, 1] output as [B]; a per-player head keeps [B, P]."""
    return v.squeeze(1) if v.shape[1] == 1 else v


class ValueHead(nn.Module):
    def __init__(self, c, filters, hw, hidden, players=1):
        super().__init__()
        self.conv = nn.Conv2d(c, filters, 1, bias=False)
        self.bn = nn.BatchNorm2d(filters)
        self.fc1 = nn.Linear(filters * hw, hidden)
        self.fc2 = nn.Linear(hidden, players)

    def forward(self, x):
        v = F.relu(self.bn(self.conv(x))).flatten(1)
        return squeeze_scalar(torch.tanh(self.fc2(F.relu(self.fc1(v)))))


class AlphaZero(nn.Module):
    """Same as nets.HeadAlphaZero."""

    def __init__(self, cfg):
        super().__init__()
        c, hw = cfg["channels"], cfg["height"] * cfg["width"]
        self.stem = ConvBN(cfg["input_planes"], c, 3)
        self.blocks = nn.ModuleList([Block(c) for _ in range(cfg["blocks"])])
        self.policy = PolicyHead(c, cfg.get("policy_filters", 2), hw, cfg["policy_size"])
        self.value = ValueHead(c, cfg.get("value_filters", 1), hw, cfg["value_hidden"], max(cfg.get("value_players", 1), 1))

    def forward(self, x):
        x = self.stem(x)
        for b in self.blocks:
            x = b(x)
        return self.policy(x), self.value(x)


class PPO(nn.Module):
    """Same as nets.HeadPPO: 3x3 convs with bias + ReLU, dense + ReLU, actor, tanh critic."""

    def __init__(self, cfg):
        super().__init__()
        chans = [cfg["input_planes"]] + cfg["conv_channels"]
        self.convs = nn.ModuleList([nn.Conv2d(a, b, 3, padding=1) for a, b in zip(chans, chans[1:])])
        self.fc = nn.Linear(chans[-1] * cfg["height"] * cfg["width"], cfg["dense"])
        self.actor = nn.Linear(cfg["dense"], cfg["policy_size"])
        self.critic = nn.Linear(cfg["dense"], max(cfg.get("value_players", 1), 1))

    def forward(self, x):
        for c in self.convs:
            x = F.relu(c(x))
        x = F.relu(self.fc(x.flatten(1)))
        return self.actor(x), squeeze_scalar(torch.tanh(self.critic(x)))


def randomize_bn(model):
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.3, 0.3)
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 2.0)


def round_to_f32(model):
    with torch.no_grad():
        for t in list(model.parameters()) + list(model.buffers()):
            if t.is_floating_point():
                t.copy_(t.to(torch.float32).to(t.dtype))


def make_net(name, cls, cfg, eval_batch=3, train_batch=4, l2=1e-3):
    model = cls(cfg)
    randomize_bn(model)
    round_to_f32(model)
    model = model.double()
    weights = {k: f32(v) for k, v in model.state_dict().items() if not k.endswith("num_batches_tracked")}
    write_safetensors(os.path.join(OUT, name + ".safetensors"), weights,
                      {"canopy.config": json.dumps(cfg), "canopy.format": "canopy-net/1"})

    shape = (cfg["input_planes"], cfg["height"], cfg["width"])
    P = cfg["policy_size"]
    io = {}
    # Inference (eval mode: batch norm with running statistics).
    x = torch.randn(eval_batch, *shape).float().double()
    model.eval()
    with torch.no_grad():
        p, v = model(x)
    io["eval.input"], io["eval.policy"], io["eval.value"] = f32(x), f32(p), f32(v)

    # One training-mode forward + backward of the AlphaZero loss.
    x = torch.randn(train_batch, *shape).float().double()
    legal = (torch.rand(train_batch, P) < 0.7).double()
    legal[:, 0] = 1  # at least one legal action per sample
    target = torch.rand(train_batch, P).double() * legal
    target = (target / target.sum(1, keepdim=True)).float().double()
    vp = max(cfg.get("value_players", 1), 1)
    z = (torch.rand(train_batch) * 2 - 1) if vp == 1 else (torch.rand(train_batch, vp) * 2 - 1)
    z = z.float().double()
    model.train()
    model.zero_grad()
    logits, v = model(x)
    logp = torch.log_softmax(logits.masked_fill(legal == 0, float("-inf")), dim=1)
    ce = -torch.where(legal > 0, target * logp, torch.zeros_like(logp)).sum(1).mean()
    mse = ((v - z) ** 2).mean()  # per-player head: the mean over samples and players
    l2term = l2 * sum((m.weight ** 2).sum() for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear)))
    loss = ce + mse + l2term
    loss.backward()
    io["train.input"], io["train.legal"], io["train.policy_target"], io["train.value_target"] = f32(x), f32(legal), f32(target), f32(z)
    io["train.logits"], io["train.value"] = f32(logits), f32(v)
    io["train.loss"] = f32(torch.stack([loss, ce, mse, l2term]).detach())
    io["train.l2"] = f32(torch.tensor([l2]))
    for k, prm in model.named_parameters():
        io["grad." + k] = f32(prm.grad)
    for k, buf in model.state_dict().items():
        if "running" in k:
            io["after." + k] = f32(buf)
    write_safetensors(os.path.join(OUT, name + "_io.safetensors"), io)


def make_lstm():
    cell = nn.LSTMCell(3, 4)
    round_to_f32(cell)
    cell = cell.double()
    B = 2
    x = torch.randn(B, 3).float().double().requires_grad_()
    h0 = torch.randn(B, 4).float().double().requires_grad_()
    c0 = torch.randn(B, 4).float().double().requires_grad_()
    h1, c1 = cell(x, (h0, c0))
    rh = torch.randn(B, 4).float().double()
    rc = torch.randn(B, 4).float().double()
    ((h1 * rh).sum() + (c1 * rc).sum()).backward()
    t = {"lstm." + k: f32(v) for k, v in cell.state_dict().items()}
    t.update({"x": f32(x), "h0": f32(h0), "c0": f32(c0), "h1": f32(h1), "c1": f32(c1), "rh": f32(rh), "rc": f32(rc),
              "dx": f32(x.grad), "dh0": f32(h0.grad), "dc0": f32(c0.grad)})
    for k, p in cell.named_parameters():
        t["grad.lstm." + k] = f32(p.grad)
    write_safetensors(os.path.join(OUT, "lstm.safetensors"), t)


def make_halfs():
    vals = torch.tensor([0.0, 1.0, -2.0, 0.5, 65504.0, 6.103515625e-05, 5.960464477539063e-08, -0.333251953125])
    h = vals.to(torch.float16)
    b = vals.to(torch.bfloat16)
    write_safetensors(os.path.join(OUT, "halfs.safetensors"), {
        "f16": ("F16", h.view(torch.int16).numpy().astype("<i2")),
        "f16.want": f32(h.to(torch.float32)),
        "bf16": ("BF16", b.view(torch.int16).numpy().astype("<i2")),
        "bf16.want": f32(b.to(torch.float32)),
    })


if __name__ == "__main__":
    az = {"head": "alphazero", "input_planes": 2, "height": 3, "width": 4, "policy_size": 5,
          "channels": 4, "blocks": 1, "value_hidden": 6, "policy_filters": 2, "value_filters": 1}
    ppo = {"head": "ppo", "input_planes": 2, "height": 3, "width": 4, "policy_size": 5,
           "conv_channels": [3, 4], "dense": 8}
    make_net("tiny_az", AlphaZero, az)
    make_net("tiny_ppo", PPO, ppo)
    make_lstm()
    make_halfs()
    # Per-player value heads, made last so that the files above stay as
    # they were.
    make_net("tiny_az3", AlphaZero, dict(az, value_players=3))
    make_net("tiny_ppo3", PPO, dict(ppo, value_players=3))
    # A board of one cell (Sushi Go's flat views), where a 3x3 convolution
    # sees only its centre tap: the Go nets run it as a GEMM.
    make_net("tiny_az1", AlphaZero, dict(az, height=1, width=1, input_planes=6))
    make_net("tiny_ppo1", PPO, dict(ppo, height=1, width=1, input_planes=6))
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT) if f.endswith(".safetensors"))
    print("wrote reference data, %d bytes of safetensors" % total)
