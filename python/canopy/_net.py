"""canopy.Net and canopy.save_torch: Canopy's networks in PyTorch and back.

The weights format is safetensors with Canopy's metadata: "canopy.config"
(the architecture as JSON, nets.Config) and "canopy.format"
("canopy-net/1"); tensors are named and laid out as PyTorch's state_dict
of the modules below (nets/io.go), so the round trip needs no renaming.
"""
import json
import os
import struct
import tempfile

import numpy as np

from . import _lib

FORMAT = "canopy-net/1"
_TORCH_MISSING = ("canopy: this needs PyTorch, which is not installed: "
                  "apt-get install python3-torch (Debian) or pip install torch")


def _torch():
    try:
        import torch  # noqa: F401
    except ImportError as e:
        raise ImportError(_TORCH_MISSING) from e
    return torch


def read_safetensors(buf):
    """Parses safetensors bytes: (tensors as float32 numpy arrays, metadata)."""
    if len(buf) < 8:
        raise ValueError("not a safetensors file: shorter than its 8-byte header length")
    (n,) = struct.unpack("<Q", bytes(buf[:8]))
    if n > len(buf) - 8:
        raise ValueError("not a safetensors file: the header length exceeds the file")
    header = json.loads(bytes(buf[8:8 + n]))
    meta = header.pop("__metadata__", {}) or {}
    base = 8 + n
    dt = {"F32": "<f4", "F16": "<f2", "F64": "<f8"}
    out = {}
    for name, t in header.items():
        if t["dtype"] not in dt and t["dtype"] != "BF16":
            raise ValueError(f"tensor {name}: dtype {t['dtype']} is not supported")
        lo, hi = t["data_offsets"]
        raw = bytes(buf[base + lo:base + hi])
        if t["dtype"] == "BF16":
            a = (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            a = np.frombuffer(raw, dt[t["dtype"]]).astype(np.float32)
        out[name] = a.reshape(t["shape"])
    return out, meta


def write_safetensors(path, tensors, metadata):
    """Writes float32 tensors with string metadata, atomically (a temporary
    file in the same directory, fsync, rename)."""
    header = {"__metadata__": {k: str(v) for k, v in metadata.items()}}
    blobs, off = [], 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name], dtype="<f4")
        raw = a.tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    hj = json.dumps(header, separators=(",", ":")).encode()
    hj += b" " * ((8 - len(hj) % 8) % 8)
    d = os.path.dirname(os.path.abspath(path)) or "."
    fd, tmp = tempfile.mkstemp(prefix=".canopy-", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(struct.pack("<Q", len(hj)))
            f.write(hj)
            for b in blobs:
                f.write(b)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class Net:
    """A Canopy network, evaluated by Canopy's CPU backend.

    ``Net(name_or_path, game=None)``, or ``Net.load`` with the same
    arguments: a shipped network's name (``"connect4-zero"``), a
    ``.safetensors`` path, or ``"init"`` (the game's built-in architecture,
    random weights; needs ``game``).
    """

    def __init__(self, name_or_path, game=None):
        if isinstance(name_or_path, _lib.Handle):
            handle = name_or_path
        elif isinstance(name_or_path, (str, os.PathLike)):
            handle = _lib.Handle("net", {"ref": os.fspath(name_or_path), "game": game or ""}, [])
        else:
            raise TypeError(f"name_or_path must be a string or path, not {type(name_or_path).__name__}")
        self._h = handle
        info = handle.info
        self.game = info["game"]
        self.config = info["config"]
        self.source = info["source"]
        self.input_size = info["input_size"]
        self.policy_size = info["policy_size"]
        # 1, or the player count of a per-player value head
        # (nets.Config.value_players).
        self.value_size = info.get("value_size", 1)

    @classmethod
    def load(cls, name_or_path, game=None):
        """The network ``name_or_path`` names (see the class)."""
        if not isinstance(name_or_path, (str, os.PathLike)):
            raise TypeError(f"name_or_path must be a string or path, not {type(name_or_path).__name__}")
        return cls(name_or_path, game)

    def evaluate(self, obs):
        """Policy logits float32 ``[B, A]`` and values for observations
        ``[B, C, H, W]`` (or ``[B, input_size]``): float32 ``[B]`` (the
        mover's value), or ``[B, P]`` for a per-player value head
        (``value_size`` P > 1, the default for games of three or more
        players): entry k is the value of player (mover + k) mod P."""
        if hasattr(obs, "detach"):
            obs = obs.detach().cpu().numpy()
        a = np.asarray(obs)
        if a.dtype.kind not in "fiu":
            raise ValueError(f"obs has dtype {a.dtype}, want float32")
        if a.ndim < 2 or int(np.prod(a.shape[1:])) != self.input_size:
            raise ValueError(f"obs has shape {a.shape}, want [batch, ...] with {self.input_size} values per "
                             f"position ({self.config['input_planes']}x{self.config['height']}x{self.config['width']})")
        b = a.shape[0]
        if b == 0:
            raise ValueError("obs holds no positions")
        x = np.ascontiguousarray(a.reshape(b, self.input_size), dtype=np.float32)
        if x is a or not x.flags.writeable:
            x = x.copy()
        logits = np.zeros((b, self.policy_size), np.float32)
        values = np.zeros((b, self.value_size) if self.value_size > 1 else b, np.float32)
        self._h.exchange("evaluate", [x, logits, values], batch=b)
        return logits, values

    def weights(self):
        """The network's tensors (float32 numpy arrays, PyTorch names) and metadata."""
        buf = np.zeros(self._h.info["weights_bytes"], np.uint8)
        self._h.exchange("weights", [buf])
        return read_safetensors(buf.tobytes())

    def to_torch(self):
        """The network as a ``torch.nn.Module`` (eval mode) with Canopy's
        weights; its ``canopy_config`` attribute is the architecture, which
        ``save_torch`` writes back. Imports torch lazily."""
        torch = _torch()
        from ._torchnet import build
        m = build(self.config)
        tensors, _ = self.weights()
        sd = m.state_dict()
        missing = set(sd) - set(tensors) - {k for k in sd if k.endswith("num_batches_tracked")}
        if missing:
            raise ValueError(f"the weights lack tensors {sorted(missing)[:5]}")
        m.load_state_dict({k: torch.from_numpy(tensors[k].copy()) if k in tensors else v for k, v in sd.items()})
        m.canopy_game = self.game
        return m.eval()

    def close(self):
        self._h.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def save_torch(module, path, game=None, config=None):
    """Writes a PyTorch module as a Canopy weights file that plays as
    ``az:net=PATH``: safetensors with Canopy's metadata. ``config`` (the
    architecture, nets.Config as a dict) defaults to the module's
    ``canopy_config`` (set by ``Net.to_torch`` and ``canopy.torch_net``);
    ``game`` (a game spec) is recorded in it and checked by loading the
    file back through Canopy."""
    _torch()
    if game is None:
        game = getattr(module, "canopy_game", None) or (config or getattr(module, "canopy_config", None) or {}).get("game")
    if not game:
        raise ValueError("save_torch needs game=: the game spec the network plays, e.g. game='connect4'")
    cfg = dict(config if config is not None else getattr(module, "canopy_config", None) or {})
    if not cfg:
        raise ValueError("save_torch needs the network's architecture: a module from Net.to_torch()/canopy.torch_net(), "
                         "or config={...} (nets.Config fields: head, input_planes, height, width, policy_size, ...)")
    cfg["game"] = game
    tensors = {}
    for k, v in module.state_dict().items():
        if k.endswith("num_batches_tracked"):
            continue
        tensors[k] = v.detach().to("cpu").float().numpy()
    # Written beside path and checked by loading it back through Canopy
    # before it replaces path: a mismatch is an error now, not in a later
    # game, and never costs the file that was there.
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".tmp-", suffix=".safetensors", dir=directory)
    os.close(fd)
    try:
        write_safetensors(tmp, tensors, {"canopy.config": json.dumps(cfg), "canopy.format": FORMAT})
        try:
            Net.load(tmp, game=game).close()
        except ValueError as e:
            raise ValueError(f"save_torch: Canopy cannot load this network as {game!r}, so {path} was not written: {e}") from None
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path
