"""A PettingZoo-AEC-style single environment over Canopy: every seat is
an agent ("player_0", ...), one acts at a time (agent_selection), and
observe(agent) gives {"observation", "action_mask"} as PettingZoo's
classic games do. It subclasses pettingzoo.AECEnv when PettingZoo is
installed, and works the same without it.
"""
import numpy as np

from ._env import VecEnv

try:  # optional: only for isinstance checks and PettingZoo's wrappers
    from pettingzoo import AECEnv as _Base  # type: ignore
except ImportError:  # pragma: no cover - PettingZoo is not installed in CI
    _Base = object


class _Space:
    """A minimal stand-in for gymnasium spaces when gymnasium is absent."""

    def __init__(self, kind, shape=None, n=None):
        self.kind, self.shape, self.n = kind, shape, n

    def __repr__(self):
        return f"{self.kind}({self.shape or self.n})"


def _spaces(shape, actions):
    try:
        import gymnasium as gym  # type: ignore
        obs = gym.spaces.Dict({"observation": gym.spaces.Box(-np.inf, np.inf, shape, np.float32),
                               "action_mask": gym.spaces.Box(0, 1, (actions,), np.int8)})
        return obs, gym.spaces.Discrete(actions)
    except ImportError:
        return _Space("Dict", shape), _Space("Discrete", n=actions)


class AECEnv(_Base):
    """``AECEnv(game_spec, seed=0)``: one game of ``game_spec``, every seat
    an agent. observe(agent) is the observation from that agent's seat as
    of its last turn (the current one for agent_selection)."""

    metadata = {"name": "canopy", "is_parallelizable": False, "render_modes": []}

    def __init__(self, game_spec, seed=0):
        self._env = VecEnv(game_spec, 1, seed=seed, opponent=None, copy=False)
        n = self._env.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._obs_space, self._act_space = _spaces(self._env.observation_shape, self._env.num_actions)
        self._last = {}
        self.agents = []

    def observation_space(self, agent):
        return self._obs_space

    def action_space(self, agent):
        return self._act_space

    def _take(self, obs, info):
        p = int(info["to_play"][0])
        self.agent_selection = self.possible_agents[p]
        self._last[self.agent_selection] = {"observation": obs[0].copy(),
                                            "action_mask": info["legal_mask"][0].astype(np.int8)}

    def reset(self, seed=None, options=None):
        obs, info = self._env.reset(seed=seed)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._last = {a: {"observation": np.zeros(self._env.observation_shape, np.float32),
                          "action_mask": np.zeros(self._env.num_actions, np.int8)} for a in self.agents}
        self._take(obs, info)

    def observe(self, agent):
        return self._last[agent]

    def last(self, observe=True):
        a = self.agent_selection
        return (self.observe(a) if observe else None, self._cumulative_rewards[a], self.terminations[a],
                self.truncations[a], self.infos[a])

    def step(self, action):
        a = self.agent_selection
        if self.terminations[a] or self.truncations[a]:
            if action is not None:
                raise ValueError(f"{a} is done: step(None) for it")
            self.agents.remove(a)
            self._cumulative_rewards[a] = 0.0
            if self.agents:
                self.agent_selection = self.agents[0]
            return
        if action is None:
            raise ValueError(f"{a} is to move: step(None) is only for finished agents")
        for k in self.rewards:
            self.rewards[k] = 0.0
        obs, rew, term, trunc, info = self._env.step(np.array([action]))
        if term[0] or trunc[0]:
            for i, k in enumerate(self.possible_agents):
                self.rewards[k] = float(rew[0, i])
                self._cumulative_rewards[k] += self.rewards[k]
                self.terminations[k], self.truncations[k] = bool(term[0]), bool(trunc[0])
            # The environment has started the next game already: the agents
            # step None one by one, as PettingZoo's classic games do.
            self.agent_selection = self.agents[0]
            return
        self._take(obs, info)

    def close(self):
        self._env.close()
