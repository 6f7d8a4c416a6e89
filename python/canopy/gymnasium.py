"""canopy.gymnasium.VectorEnv: a canopy.VecEnv as a gymnasium.vector.VectorEnv.

Importing this module imports gymnasium (raising ImportError with the fix
when it is missing); ``import canopy`` alone never does.
"""
try:
    import gymnasium as _gym
except ImportError as e:  # pragma: no cover - gymnasium is not installed in CI
    raise ImportError("canopy.gymnasium needs gymnasium: pip install gymnasium (or use canopy.VecEnv, "
                      "which follows the same contract without it)") from e

import numpy as np

from ._env import VecEnv as _VecEnv


class VectorEnv(_gym.vector.VectorEnv):
    """``VectorEnv(game_spec, num_envs, seed=0, opponent="random")``:
    Gymnasium's vector API over canopy.VecEnv (observations copied, same-step
    autoreset, info["legal_mask"] and info["to_play"])."""

    def __init__(self, game_spec, num_envs, seed=0, opponent="random", **kwargs):
        self.env = _VecEnv(game_spec, num_envs, seed=seed, opponent=opponent, copy=True, **kwargs)
        self.num_envs = num_envs
        shape, A = self.env.observation_shape, self.env.num_actions
        self.single_observation_space = _gym.spaces.Box(-np.inf, np.inf, shape, np.float32)
        self.single_action_space = _gym.spaces.Discrete(A)
        self.observation_space = _gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = _gym.vector.utils.batch_space(self.single_action_space, num_envs)
        mode = getattr(getattr(_gym.vector, "AutoresetMode", None), "SAME_STEP", "SameStep")
        self.metadata = {"autoreset_mode": mode}

    def reset(self, *, seed=None, options=None):
        return self.env.reset(seed=seed, options=options)

    def step(self, actions):
        return self.env.step(actions)

    def close(self, **kwargs):
        self.env.close()
