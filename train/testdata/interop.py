#!/usr/bin/python3
"""Checks that a Canopy training checkpoint and self-play shard are usable
from PyTorch, independently of the Go code that wrote them.

    /usr/bin/python3 train/testdata/interop.py SHARD CHECKPOINT EXPECTED [N]

SHARD       a self-play .npz shard (numpy.load reads it: obs, policy, value,
            optional legal)
CHECKPOINT  an iter-NNNN.safetensors checkpoint written by `canopy train`
EXPECTED    an .npz with arrays "policy" [N, A] and "value" [N]: the Go
            network's outputs (inference mode) on the shard's first N
            observations

The script parses the safetensors file with plain json + numpy (no
safetensors package), rebuilds the network in PyTorch from the
"canopy.config" metadata with the model classes of
nets/testdata/make_reference.py (the PyTorch reference of package nets),
loads the weights by name, evaluates the first N observations of the shard
in eval mode (batch norm with its running statistics) in float64, and
checks that the logits and values equal Go's to 1e-4 (absolute, relative
above 1). It also checks the training metadata and the shard's arrays.
Exit status 0 and "ok" on success; an assertion names what differs.

Needs Debian's python3-torch and python3-numpy.
"""
import json
import os
import struct
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "nets", "testdata"))
from make_reference import PPO, AlphaZero  # noqa: E402  (the reference model)

DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8"}


def read_safetensors(path):
    """Returns ({name: np.ndarray}, metadata) of a safetensors file."""
    with open(path, "rb") as f:
        buf = f.read()
    (n,) = struct.unpack("<Q", buf[:8])
    header = json.loads(buf[8:8 + n])
    meta = header.pop("__metadata__", {})
    data = buf[8 + n:]
    tensors = {}
    for name, e in header.items():
        if e["dtype"] not in DTYPES:
            raise SystemExit("tensor %s has dtype %s, not supported here" % (name, e["dtype"]))
        lo, hi = e["data_offsets"]
        arr = np.frombuffer(data[lo:hi], dtype=DTYPES[e["dtype"]]).reshape(e["shape"])
        tensors[name] = arr.astype(np.float32)
    return tensors, meta


def build(cfg):
    if cfg["head"] == "alphazero":
        return AlphaZero(cfg)
    if cfg["head"] == "ppo":
        return PPO(cfg)
    raise SystemExit("unknown head %r" % cfg["head"])


def main():
    if len(sys.argv) not in (4, 5):
        raise SystemExit(__doc__)
    shard_path, ckpt_path, want_path = sys.argv[1:4]
    n = int(sys.argv[4]) if len(sys.argv) == 5 else 16

    shard = np.load(shard_path)
    obs, policy, value = shard["obs"], shard["policy"], shard["value"]
    assert obs.dtype == np.float32 and policy.dtype == np.float32 and value.dtype == np.float32
    assert obs.shape[0] == policy.shape[0] == value.shape[0], "shard arrays disagree on the position count"
    assert np.abs(policy.sum(axis=1) - 1).max() < 1e-3, "policies must be distributions"
    assert np.all(np.abs(value) <= 1), "values must lie in [-1, 1]"
    if "legal" in shard.files:
        assert shard["legal"].dtype == np.uint8 and shard["legal"].shape == policy.shape
        assert np.all(policy[shard["legal"] == 0] == 0), "policy mass on an illegal action"

    tensors, meta = read_safetensors(ckpt_path)
    cfg = json.loads(meta["canopy.config"])
    for key in ("canopy.train.game", "canopy.train.iteration", "canopy.train.positions", "canopy.train.steps"):
        assert key in meta, "checkpoint metadata lacks %s" % key
    assert int(meta["canopy.train.positions"]) > 0 and int(meta["canopy.train.steps"]) > 0

    model = build(cfg).double()
    state = model.state_dict()
    missing = set(state) - set(tensors) - {k for k in state if k.endswith("num_batches_tracked")}
    extra = set(tensors) - set(state)
    assert not missing and not extra, "tensor names differ: missing %s, unexpected %s" % (sorted(missing), sorted(extra))
    for k, v in tensors.items():
        assert tuple(state[k].shape) == v.shape, "%s: shape %s in the file, %s in the model" % (k, v.shape, tuple(state[k].shape))
        state[k] = torch.from_numpy(v.astype(np.float64))
    model.load_state_dict(state)
    model.eval()

    n = min(n, obs.shape[0])
    x = torch.from_numpy(obs[:n].astype(np.float64)).reshape(n, cfg["input_planes"], cfg["height"], cfg["width"])
    with torch.no_grad():
        logits, v = model(x)
    want = np.load(want_path)
    for name, got, exp in (("policy", logits.numpy(), want["policy"]), ("value", v.numpy(), want["value"])):
        assert got.shape == exp.shape, "%s: shape %s from PyTorch, %s from Go" % (name, got.shape, exp.shape)
        err = np.abs(got - exp) / np.maximum(1, np.abs(exp))
        i = int(err.argmax())
        assert err.max() <= 1e-4, "%s differs: max error %.3g at flat index %d (PyTorch %r, Go %r)" % (
            name, err.max(), i, got.flat[i], exp.flat[i])
    print("ok: %d positions, %s net, max |policy diff| %.2g, max |value diff| %.2g" % (
        n, cfg["head"], np.abs(logits.numpy() - want["policy"]).max(), np.abs(v.numpy() - want["value"]).max()))


if __name__ == "__main__":
    main()
