#!/usr/bin/python3
"""PyTorch reference fixtures for nets/onnx's import tests.

Regenerate (Debian python3-torch and python3-onnx; a few seconds):

    /usr/bin/python3 nets/onnx/testdata/make_fixtures.py

It writes testdata/torch/NAME.onnx, exported from PyTorch with
torch.onnx.export, and NAME.json with the recorded inputs and PyTorch's
outputs (float32), or the error the import must give for networks that
are not Canopy's ResNet. Networks of several shapes and exports that
Canopy never made: other widths and depths, biases and batch norm kept or
folded by the exporter, MatMul + Add dense layers, log-softmax policies,
[B] values, x.view(x.size(0), -1) (shapes computed at run time), opsets 11, 13 and 17, a PPO-style CNN; and networks the
importer must refuse: squeeze-excitation, a global-pooling value head,
LeakyRelu. Seeds are fixed, so reruns write the same numbers (the .onnx
bytes may differ between PyTorch versions). Keep the files small (tiny
widths): all fixtures together stay well under 1 MiB.
"""
import json
import os
import zlib

import torch
import torch.nn as nn
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch")
GAME, C, H, W, A = "connect4", 2, 6, 7, 7  # connect4's observation and actions


def randomize_bn(model, gen):
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            with torch.no_grad():
                m.weight.uniform_(0.7, 1.3, generator=gen)
                m.bias.normal_(0, 0.2, generator=gen)
                m.running_mean.normal_(0, 0.2, generator=gen)
                m.running_var.uniform_(0.5, 1.5, generator=gen)


class Block(nn.Module):
    def __init__(self, ch, bias, se=False):
        super().__init__()
        self.c1 = nn.Conv2d(ch, ch, 3, padding=1, bias=bias)
        self.b1 = nn.BatchNorm2d(ch)
        self.c2 = nn.Conv2d(ch, ch, 3, padding=1, bias=bias)
        self.b2 = nn.BatchNorm2d(ch)
        self.se = se
        if se:  # squeeze-excitation as lc0 uses it (scale only)
            self.fc1 = nn.Linear(ch, max(1, ch // 2))
            self.fc2 = nn.Linear(max(1, ch // 2), ch)

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        if self.se:
            s = torch.sigmoid(self.fc2(F.relu(self.fc1(y.mean(dim=(2, 3))))))
            y = y * s[:, :, None, None]
        return F.relu(y + x)


class ResNet(nn.Module):
    """AlphaZero-style: stem, blocks, policy and value heads."""

    def __init__(self, ch, blocks, pf=2, vf=1, hidden=16, bias=False, se=False, matmul=False,
                 log_softmax=False, squeeze_value=False, gpool_value=False, leaky=False, view=False, in_planes=C):
        super().__init__()
        self.stem = nn.Conv2d(in_planes, ch, 3, padding=1, bias=bias)
        self.stem_bn = nn.BatchNorm2d(ch)
        self.blocks = nn.ModuleList([Block(ch, bias, se) for _ in range(blocks)])
        self.pconv = nn.Conv2d(ch, pf, 1, bias=bias)
        self.pbn = nn.BatchNorm2d(pf)
        self.matmul = matmul
        if matmul:  # x @ W + b exports as MatMul and Add
            self.pw = nn.Parameter(torch.randn(pf * H * W, A) * 0.1)
            self.pb = nn.Parameter(torch.randn(A) * 0.1)
        else:
            self.pfc = nn.Linear(pf * H * W, A)
        self.vconv = nn.Conv2d(ch, vf, 1, bias=bias)
        self.vbn = nn.BatchNorm2d(vf)
        self.gpool_value = gpool_value
        self.vfc1 = nn.Linear(vf if gpool_value else vf * H * W, hidden)
        self.vfc2 = nn.Linear(hidden, 1)
        self.log_softmax, self.squeeze_value, self.leaky, self.view = log_softmax, squeeze_value, leaky, view

    def forward(self, x):
        act = (lambda t: F.leaky_relu(t, 0.1)) if self.leaky else F.relu
        x = act(self.stem_bn(self.stem(x)))
        for b in self.blocks:
            x = b(x)
        p = F.relu(self.pbn(self.pconv(x)))
        # view(size(0), -1) exports as a shape computed at run time
        p = p.view(p.size(0), -1) if self.view else torch.flatten(p, 1)
        p = p @ self.pw + self.pb if self.matmul else self.pfc(p)
        if self.log_softmax:
            p = F.log_softmax(p, dim=1)
        v = F.relu(self.vbn(self.vconv(x)))
        if self.gpool_value:
            v = v.mean(dim=(2, 3))
        else:
            v = v.reshape(v.shape[0], -1) if self.view else torch.flatten(v, 1)
        v = torch.tanh(self.vfc2(F.relu(self.vfc1(v))))
        if self.squeeze_value:
            v = v.squeeze(1)
        elif self.view:
            v = v.view(-1)
        return p, v


class AuxResNet(ResNet):
    """A ResNet with a third, auxiliary output (an ownership map, as KataGo
    has), which the import leaves out."""

    def __init__(self, ch, blocks, **kw):
        super().__init__(ch, blocks, **kw)
        self.own = nn.Conv2d(ch, 1, 1)
        self.ch = ch

    def forward(self, x):
        p, v = super().forward(x)
        t = F.relu(self.stem_bn(self.stem(x)))
        for b in self.blocks:
            t = b(t)
        return p, v, torch.tanh(self.own(t)).view(t.size(0), -1)


class PPO(nn.Module):
    """A plain CNN actor-critic like Canopy's PPO head."""

    def __init__(self, chans, dense):
        super().__init__()
        layers, prev = [], C
        for ch in chans:
            layers += [nn.Conv2d(prev, ch, 3, padding=1), nn.ReLU()]
            prev = ch
        self.convs = nn.Sequential(*layers)
        self.fc = nn.Linear(prev * H * W, dense)
        self.actor = nn.Linear(dense, A)
        self.critic = nn.Linear(dense, 1)

    def forward(self, x):
        x = F.relu(self.fc(nn.Flatten()(self.convs(x))))
        return self.actor(x), torch.tanh(self.critic(x))


# name -> (model, opset, keep batch norm nodes, error the import must give);
# names with "fixedbatch" are exported without a dynamic batch dimension.
FIXTURES = {
    "resnet_w8_b2": (lambda: ResNet(8, 2), 17, False, None),
    "resnet_w12_b3_bias_bnkept": (lambda: ResNet(12, 3, pf=3, vf=2, hidden=10, bias=True), 13, True, None),
    "resnet_w6_b1_matmul_logsoftmax": (lambda: ResNet(6, 1, matmul=True, log_softmax=True, squeeze_value=True), 11, False, None),
    "resnet_w4_b0": (lambda: ResNet(4, 0, hidden=4), 17, True, None),
    "resnet_w6_b2_view": (lambda: ResNet(6, 2, hidden=6, view=True), 13, False, None),
    "resnet_w6_b1_aux_fixedbatch": (lambda: AuxResNet(6, 1, view=True), 17, False, None),
    "ppo_c6_c8_d16": (lambda: PPO([6, 8], 16), 11, False, None),
    "se_resnet_w8_b1": (lambda: ResNet(8, 1, se=True), 17, False, "ReduceMean"),
    "gpool_value_w8_b1": (lambda: ResNet(8, 1, gpool_value=True), 17, False, "ReduceMean"),
    "leaky_w8_b1": (lambda: ResNet(8, 1, leaky=True), 17, False, "LeakyRelu"),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, (make, opset, keep_bn, err) in sorted(FIXTURES.items()):
        # A fixture's numbers do not depend on the others; tiny nets can be
        # born with dead units, so the next seed is tried until the outputs
        # depend on the input.
        for attempt in range(50):
            seed = zlib.crc32(name.encode()) + attempt
            torch.manual_seed(seed)
            gen = torch.Generator().manual_seed(seed + 1)
            model = make()
            randomize_bn(model, gen)
            model.eval()
            x = (torch.rand(4, C, H, W, generator=gen) < 0.35).float()
            with torch.no_grad():
                out = model(x)
            pol, val = out[0], out[1]
            if pol.std(dim=0).min() > 0 and val.std() > 0:
                break
        else:
            raise SystemExit("%s: outputs do not depend on the input for 50 seeds" % name)
        names = ["policy", "value", "ownership"][:len(out)]
        dyn = {} if "fixedbatch" in name else {n: {0: "batch"} for n in ["obs"] + names}
        path = os.path.join(OUT, name + ".onnx")
        mode = torch.onnx.TrainingMode.PRESERVE if keep_bn else torch.onnx.TrainingMode.EVAL
        torch.onnx.export(model, x, path, opset_version=opset, training=mode,
                          do_constant_folding=not keep_bn,
                          input_names=["obs"], output_names=names, dynamic_axes=dyn)
        case = {"game": GAME, "batch": 4, "opset": opset, "input": x.reshape(-1).tolist(),
                "policy": pol.reshape(-1).tolist(), "value": val.reshape(-1).tolist()}
        if getattr(model, "log_softmax", False):
            case["policy_kind"] = "log_softmax"  # Canopy keeps the logits: compare log-softmaxes
        if err:
            case["error"] = err  # Import refuses it; the CPU graph runner must match PyTorch
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(case, f)
        print("%-34s opset %d %6d bytes%s" % (name, opset, os.path.getsize(path), "  (import must refuse: %s)" % err if err else ""))


if __name__ == "__main__":
    main()
