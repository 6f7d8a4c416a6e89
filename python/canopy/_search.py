"""canopy.search and canopy.selfplay: Go runs the trees, Python evaluates.

Control is inverted: Go never calls Python. Go's trees put their leaves
into batches; this module's loop asks the library for the next batch
(``wait``), calls the evaluator on it and hands the outputs back
(``submit``) until the run reports done. An exception in the evaluator
cancels the run (its trees drain in Go) and propagates unchanged.
"""
import numpy as np

from . import _lib
from ._env import VecEnv


def _option_strings(options):
    out = {}
    for k, v in options.items():
        if isinstance(v, bool):
            out[k] = "true" if v else "false"
        elif isinstance(v, (int, float, str, np.integer, np.floating)):
            out[k] = str(v)
        else:
            raise TypeError(f"option {k}={v!r}: want a number, a bool or a string")
    return out


def _to_numpy(x):
    if hasattr(x, "detach"):
        x = x.detach()
        if hasattr(x, "float"):
            x = x.float()
        x = x.cpu().numpy()
    return np.asarray(x)


def _copy_values(dst, va, b, players):
    """Copies an evaluator's values into the session's buffer: [b] (the
    mover's value) or [b, players] (a per-player value head's row: entry k
    is the value of player (mover + k) mod players). Games of three or
    more players take rows (dst is [b, players]): a single value v
    becomes v, -v/(players-1), ... (what the engine makes of a scalar
    value head); two-player games take the mover's value (dst is [b]; of
    a row, its first entry)."""
    if va.shape in ((b,), (b, 1)):
        v = va.reshape(b)
        if dst.ndim == 1:
            np.copyto(dst, v, casting="unsafe")
        else:
            dst[:, 0] = v
            dst[:, 1:] = (-v / (players - 1))[:, None]
    elif players >= 2 and va.shape == (b, players):
        np.copyto(dst, va if dst.ndim == 2 else va[:, 0], casting="unsafe")
    else:
        rows = f" or ({b}, {players}): a row per observation, the mover's value first" if players >= 2 else ""
        raise ValueError(f"the evaluator returned values of shape {va.shape}, want ({b},): one value per observation "
                         f"(the mover's){rows}")


def _run_batch(h, evaluator, b, obs, legal, logits, values, players):
    """Evaluates the batch of b rows the library handed over and submits."""
    out = evaluator(obs[:b], legal[:b])
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise ValueError(f"the evaluator returned {type(out).__name__}, want a pair (logits, values)")
    lo, va = _to_numpy(out[0]), _to_numpy(out[1])
    A = logits.shape[1]
    if lo.dtype.kind not in "fiu":
        raise ValueError(f"the evaluator's logits have dtype {lo.dtype}, want floats")
    if va.dtype.kind not in "fiu":
        raise ValueError(f"the evaluator's values have dtype {va.dtype}, want floats")
    if lo.shape != (b, A):
        raise ValueError(f"the evaluator returned logits of shape {lo.shape}, want ({b}, {A}): one row of "
                         f"{A} logits per observation in the batch")
    lv, vv = logits[:b], values[:b]
    np.copyto(lv, lo, casting="unsafe")
    _copy_values(vv, va, b, players)
    if not np.all(np.isfinite(vv)):
        i = np.argwhere(~np.isfinite(vv))[0]
        where = ", ".join(str(int(x)) for x in i) if vv.ndim > 1 and players > 2 else str(int(i[0]))
        raise ValueError(f"the evaluator returned values[{where}] = {vv[tuple(i)]}: values must be finite, in [-1, 1]")
    bad = np.isnan(lv) | (lv == np.inf)
    if bad.any():
        i, a = map(int, np.argwhere(bad)[0])
        raise ValueError(f"the evaluator returned logits[{i}, {a}] = {lv[i, a]}: logits must be finite "
                         "(-inf is allowed on illegal actions)")
    h.submit()


def _session_buffers(info_shape, actions, batch, players):
    # Values: one per row, or a row of players values in games of three
    # or more players (pyapi's session.vsize).
    vshape = (batch, players) if players > 2 else (batch,)
    return (np.zeros((batch,) + tuple(info_shape), np.float32), np.zeros((batch, actions), np.bool_),
            np.zeros((batch, actions), np.float32), np.zeros(vshape, np.float32))


class SearchResult(dict):
    """canopy.search's outputs (mctx's): per position ``visits`` (float32
    ``[n, A]`` visit counts), ``policy`` (the visit distribution),
    ``root_value`` (float32 ``[n]``, the mover's value of the position),
    ``action`` (int64 ``[n]``, the move the search picks) and, for
    ``rule="gumbel"``, ``improved_policy`` (float32 ``[n, A]``; None under
    PUCT). Keys are also attributes."""

    __getattr__ = dict.__getitem__


def search(game_spec, states, evaluator, sims=800, rule="puct", *, batch=None, seed=0, workers=0, **options):
    """Searches every position of ``states`` with ``sims`` simulations.

    ``states``: a VecEnv (its current positions) or a list of move strings
    (move lists from the start, as ``canopy move --moves``; "" is the
    initial position). ``evaluator(obs, legal_mask) -> (logits, values)``
    gets float32 ``[B, C, H, W]`` observations from the mover's view and a
    bool ``[B, A]`` mask, batches of leaves from all trees at once (at most
    ``batch`` rows), and returns numpy or torch arrays: logits ``[B, A]``,
    values ``[B]`` in [-1, 1] from the mover's view, or ``[B, P]`` with one
    value per player (a per-player value head, nets.Config.value_players):
    seat-rotated, entry k is the value of player (mover + k) mod P. In games
    of three or more players a single value v counts as v for the mover
    and -v/(P-1) for each other player; in two-player games only a row's
    first entry (the mover's) is used. ``rule``: "puct" or
    "gumbel" (Gumbel root search with sequential halving). ``options``:
    `az`'s (c, fpu, dir, dirfrac, det, leaves, gumbelm, ...; see
    ``canopy agents``), same names, defaults and ranges.
    """
    if not callable(evaluator):
        raise TypeError(f"evaluator must be callable (obs, legal_mask) -> (logits, values), not {type(evaluator).__name__}")
    args = {"game": game_spec, "sims": int(sims), "rule": rule, "seed": int(seed), "workers": int(workers),
            "options": _option_strings(options)}
    if isinstance(states, VecEnv):
        if states.closed:
            raise RuntimeError("canopy.search: states is a closed VecEnv: search before close()")
        args["env"] = states.handle.h
        n = states.num_envs
    else:
        if isinstance(states, str):
            raise TypeError("states must be a VecEnv or a list of move strings, not one string: wrap it in a list")
        states = list(states)
        for i, s in enumerate(states):
            if not isinstance(s, str):
                raise TypeError(f"states[{i}] is {type(s).__name__}, want a move string")
        args["moves"] = states
        n = len(states)
        if n == 0:
            raise ValueError("states is empty: give at least one position")
    gi = _lib.call("game_info", game=game_spec)
    A = gi["actions"]
    leaves = int(options.get("leaves", 1))
    b = int(batch) if batch is not None else min(n * leaves, 1024)
    if b < 1:
        raise ValueError(f"batch = {b}, want at least 1")
    args["batch"] = b
    P = gi["players"]
    obs, legal, logits, values = _session_buffers(gi["observation_shape"], A, b, P)
    h = _lib.Handle("search", args, [obs, legal, logits, values])
    try:
        while True:
            ev = h.wait()
            if ev > 0:
                _run_batch(h, evaluator, ev, obs, legal, logits, values, P)
            elif ev == _lib.WAIT_DONE:
                break
        visits = np.zeros((n, A), np.float32)
        root_value = np.zeros(n, np.float32)
        action = np.zeros(n, np.int64)
        improved = np.zeros((n, A), np.float32)
        h.exchange("results", [visits, root_value, action, improved])
    finally:
        h.close()
    tot = visits.sum(axis=1, keepdims=True)
    policy = np.divide(visits, tot, out=np.zeros_like(visits), where=tot > 0)
    return SearchResult(visits=visits, policy=policy, root_value=root_value, action=action,
                        improved_policy=improved if rule == "gumbel" else None)


def selfplay(game_spec, evaluator, games, *, trees=64, seed=1, batch=None, yield_games=None, workers=0, **options):
    """Plays ``games`` self-play games with ``evaluator`` (as in
    ``search``) and yields training batches as dicts in the layout of the
    ``.npz`` shards: ``obs`` float32 ``[P, C, H, W]``, ``policy`` float32
    ``[P, A]`` (visit distribution, or Gumbel's improved policy),
    ``legal`` uint8 ``[P, A]``, ``value`` float32 ``[P]`` (the game's
    outcome for the mover), ``game_id`` int64, ``ply`` int32, ``root_q``
    float32 ``[P]`` and, in games of three or more players, ``values``
    float32 ``[P, players]`` (the final returns seat-rotated, the mover
    first: what a per-player value head learns; ``values[:, 0]`` is
    ``value``): ``yield_games`` finished games per batch (default:
    ``trees``). ``trees`` games are played at once. ``options`` are
    ``canopy selfplay``'s (sims, c, dir, tempplies, gumbel, resign, pcr,
    randomplies, ...), with the same defaults. Game i is a function of
    (seed, i) and the evaluator's outputs. Closing the generator (break)
    stops the run.
    """
    if not callable(evaluator):
        raise TypeError(f"evaluator must be callable (obs, legal_mask) -> (logits, values), not {type(evaluator).__name__}")
    if isinstance(games, bool) or not isinstance(games, (int, np.integer)) or games < 1:
        raise ValueError(f"games = {games!r}, want a positive integer")
    gi = _lib.call("game_info", game=game_spec)
    A, shape = gi["actions"], tuple(gi["observation_shape"])
    trees = int(trees)
    t = min(trees, int(games))
    det = int(options.get("det", 1))
    leaves = int(options.get("leaves", 1))
    b = int(batch) if batch is not None else min(max(t * det * leaves, 1), 1024)
    args = {"game": game_spec, "games": int(games), "trees": trees, "seed": int(seed), "batch": b,
            "yield_games": int(yield_games or 0), "workers": int(workers), "options": _option_strings(options)}
    P = gi["players"]
    obs, legal, logits, values = _session_buffers(shape, A, b, P)
    return _selfplay_iter(args, evaluator, (obs, legal, logits, values), A, shape, P)


def _selfplay_iter(args, evaluator, bufs, A, shape, P):
    obs, legal, logits, values = bufs
    keys = ["obs", "policy", "legal", "value", "game_id", "ply", "root_q"] + (["values"] if P > 2 else [])
    h = _lib.Handle("selfplay", args, [obs, legal, logits, values])
    try:
        while True:
            ev = h.wait()
            if ev > 0:
                _run_batch(h, evaluator, ev, obs, legal, logits, values, P)
            elif ev == _lib.WAIT_DATA:
                st = h.exchange("staged", [])
                p = st["positions"]
                out = {"obs": np.zeros((p,) + shape, np.float32), "policy": np.zeros((p, A), np.float32),
                       "legal": np.zeros((p, A), np.uint8), "value": np.zeros(p, np.float32),
                       "game_id": np.zeros(p, np.int64), "ply": np.zeros(p, np.int32),
                       "root_q": np.zeros(p, np.float32)}
                if P > 2:
                    out["values"] = np.zeros((p, P), np.float32)
                h.exchange("take", [out[k] for k in keys])
                yield out
            elif ev == _lib.WAIT_DONE:
                return
    finally:
        h.close()
