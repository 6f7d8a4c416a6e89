"""Canopy from Python: vectorised environments, batched search with your
own network, self-play for your training loop. The hot loops stay in Go
(libcanopy.so, built by `make python`); this package needs only the
standard library and numpy (torch for Net.to_torch / save_torch).

See docs/PYTHON.md.
"""
from . import _lib
from ._env import VecEnv
from ._net import Net, save_torch
from ._random import random_actions
from ._search import SearchResult, search, selfplay
from ._shards import load_shards

__all__ = ["games", "agents", "VecEnv", "search", "selfplay", "SearchResult", "Net", "save_torch",
           "load_shards", "torch_net", "live_handles", "random_actions"]


def games():
    """The registered games, as `canopy games --json` lists them (dicts)."""
    return _lib.call("games")


def agents(game=None):
    """The agents that can play ``game`` (a game spec; all when None), as
    `canopy agents --json` lists them (dicts)."""
    return _lib.call("agents", game=game or "")


def torch_net(game, **config):
    """A PyTorch network with Canopy's built-in architecture for ``game``:
    the weights of ``canopy net init`` (seed 1), or, when nets.Config
    fields are given (``channels=32, blocks=4``), that architecture with
    PyTorch's own initialisation. Save it with ``save_torch``."""
    with Net.load("init", game=game) as n:
        cfg = dict(n.config)
        if not config:
            return n.to_torch().train()
    from ._torchnet import build
    cfg.update(config)
    m = build(cfg)
    m.canopy_game = n.game
    return m


def live_handles():
    """The number of Canopy objects open in the library (for leak checks)."""
    return _lib.live_handles()
