"""canopy.VecEnv: N games stepped together in Go (Gymnasium's vector contract)."""
import numpy as np

from . import _lib


class VecEnv:
    """``num_envs`` games of ``game_spec`` stepped in lock-step by Canopy.

    Gymnasium's vector-environment contract: ``obs, info = env.reset(seed=None)``,
    ``obs, rewards, terminations, truncations, info = env.step(actions)``.
    ``obs`` is float32 ``[num_envs, C, H, W]``, the game's tensor from the
    mover's view; ``info["legal_mask"]`` is bool ``[num_envs, A]`` and
    ``info["to_play"]`` int32 ``[num_envs]``.

    With ``opponent`` (any agent spec: ``"random"``, ``"onestep"``,
    ``"mcts:sims=200"``) the learner plays one seat (by default alternating
    game by game, ``seat=-1``; ``info["to_play"]`` says which) and the
    opponent all others; rewards are the learner's, ``[num_envs]``. With
    ``opponent=None`` you play every seat (the action is the mover's) and
    rewards are ``[num_envs, players]``. Chance is sampled inside;
    multi-action turns are consecutive decisions; Sushi Go's simultaneous
    moves go through ``"sushigo-seq"``.

    A finished game is reset in the same step (Gymnasium's ``SameStep``
    autoreset): the returned observation is the next game's first, and
    terminations/truncations say the previous game ended there.

    The returned arrays are the environment's own buffers (no copy),
    overwritten by the next ``step``/``reset``: ``.copy()`` what you keep,
    or pass ``copy=True``. They stay valid after ``close()``.
    """

    metadata = {"autoreset_mode": "SameStep"}

    def __init__(self, game_spec, num_envs, seed=0, opponent=None, *, seat=None, workers=0, copy=False):
        if not isinstance(game_spec, str):
            raise TypeError(f"game_spec must be a string such as 'connect4', not {type(game_spec).__name__}")
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs = {num_envs!r}, want a positive integer")
        if opponent is not None and not isinstance(opponent, str):
            raise TypeError(f"opponent must be an agent spec string such as 'onestep' or None, not {type(opponent).__name__}")
        gi = _lib.call("game_info", game=game_spec)
        n = int(num_envs)
        self.game = gi["spec"]
        self.num_envs = n
        self.num_players = gi["players"]
        self.num_actions = gi["actions"]
        self.observation_shape = tuple(gi["observation_shape"])
        self.opponent = opponent
        self._copy = copy
        self._obs = np.zeros((n,) + self.observation_shape, np.float32)
        self._legal = np.zeros((n, self.num_actions), np.bool_)
        self._rewards = np.zeros((n,) if opponent is not None else (n, self.num_players), np.float32)
        self._term = np.zeros(n, np.bool_)
        self._trunc = np.zeros(n, np.bool_)
        self._to_play = np.zeros(n, np.int32)
        self._actions = np.zeros(n, np.int64)
        args = {"game": game_spec, "num_envs": n, "seed": int(seed), "opponent": opponent, "workers": int(workers)}
        if seat is not None:
            args["seat"] = int(seat)
        self._h = _lib.Handle("env", args,
                              [self._obs, self._legal, self._rewards, self._term, self._trunc, self._to_play, self._actions])

    @property
    def handle(self):
        return self._h

    def _out(self, a):
        return a.copy() if self._copy else a

    def _info(self):
        return {"legal_mask": self._out(self._legal), "to_play": self._out(self._to_play)}

    def reset(self, seed=None, options=None):
        """Starts new games everywhere (with ``seed``, every environment's
        random stream restarts from it). Returns ``(obs, info)``."""
        if options:
            raise ValueError(f"options {options!r}: VecEnv.reset takes none")
        self._h.call("reset", seed=None if seed is None else int(seed))
        return self._out(self._obs), self._info()

    def step(self, actions):
        """Plays one action per environment (the mover's, or the learner's
        with an opponent). ``actions``: integer array ``[num_envs]``; an
        illegal or out-of-range one is a ValueError naming it, and nothing
        is played."""
        if hasattr(actions, "detach"):
            actions = actions.detach().cpu().numpy()
        a = np.asarray(actions)
        if a.dtype.kind not in "iu":
            if a.dtype.kind == "f" and np.all(np.isfinite(a)) and np.all(a == np.round(a)):
                pass
            else:
                raise ValueError(f"actions has dtype {a.dtype}, want integers (action ids, e.g. int64)")
        if a.shape != (self.num_envs,):
            raise ValueError(f"actions has shape {a.shape}, want ({self.num_envs},): one action per environment")
        np.copyto(self._actions, a, casting="unsafe")
        self._h.step()
        o = self._out
        return o(self._obs), o(self._rewards), o(self._term), o(self._trunc), self._info()

    def close(self):
        """Releases the environments (idempotent). Later calls raise RuntimeError."""
        self._h.close()

    @property
    def closed(self):
        return self._h.closed

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"VecEnv({self.game!r}, num_envs={self.num_envs}, opponent={self.opponent!r})"
