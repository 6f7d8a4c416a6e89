"""canopy.load_shards: a self-play run directory as numpy arrays."""
import json
import os

import numpy as np

KEYS = ("obs", "policy", "legal", "value", "game_id", "ply", "root_q")


def load_shards(run_dir):
    """Reads every shard the run's manifest.json lists (complete shards
    only) and returns a dict of concatenated arrays: obs, policy, legal,
    value, game_id, ply and root_q (when every shard has it), plus
    "manifest" (the parsed manifest)."""
    path = os.path.join(os.fspath(run_dir), "manifest.json")
    try:
        with open(path, "rb") as f:
            m = json.load(f)
    except FileNotFoundError:
        raise ValueError(f"run_dir {run_dir}: no manifest.json: is it a `canopy selfplay --out` directory?") from None
    if m.get("format") != "canopy-selfplay/1":
        raise ValueError(f"{path}: format {m.get('format')!r}, want 'canopy-selfplay/1'")
    parts = {k: [] for k in KEYS}
    for sh in m.get("shards", []):
        with np.load(os.path.join(os.fspath(run_dir), sh["file"])) as z:
            for k in KEYS:
                if k in z.files:
                    parts[k].append(z[k])
    out = {"manifest": m}
    n = len(m.get("shards", []))
    shape = tuple(m.get("obs_shape", ()))
    A = m.get("actions", 0)
    empty = {"obs": np.zeros((0,) + shape, np.float32), "policy": np.zeros((0, A), np.float32),
             "legal": np.zeros((0, A), np.uint8), "value": np.zeros(0, np.float32),
             "game_id": np.zeros(0, np.int64), "ply": np.zeros(0, np.int32), "root_q": np.zeros(0, np.float32)}
    for k in KEYS:
        if n == 0:
            out[k] = empty[k]
        elif len(parts[k]) == n:
            out[k] = np.concatenate(parts[k])
    return out
