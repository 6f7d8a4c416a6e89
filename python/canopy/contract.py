"""Local contract checks for Canopy's environments, modelled on
Gymnasium's ``check_env`` / vector-env tests and PettingZoo's
``api_test``, runnable without either library (CI has neither).

``check_vector_env(env)`` checks a canopy.VecEnv (or the
canopy.gymnasium.VectorEnv adapter); ``check_aec_env(env)`` a
canopy.pettingzoo.AECEnv. Each raises AssertionError naming the broken
rule, and returns None when the contract holds.
"""
import numpy as np


def _check_batch(env, obs, info, where):
    n, A = env.num_envs, env.num_actions
    assert isinstance(obs, np.ndarray), f"{where}: obs is {type(obs).__name__}, want a numpy array"
    assert obs.dtype == np.float32, f"{where}: obs dtype {obs.dtype}, want float32"
    assert obs.shape == (n,) + tuple(env.observation_shape), f"{where}: obs shape {obs.shape}"
    assert np.all(np.isfinite(obs)), f"{where}: obs holds NaN or inf"
    assert isinstance(info, dict), f"{where}: info is {type(info).__name__}, want a dict"
    m = info.get("legal_mask")
    assert m is not None, f"{where}: info has no legal_mask"
    assert m.dtype == np.bool_ and m.shape == (n, A), f"{where}: legal_mask {m.dtype} {m.shape}, want bool ({n}, {A})"
    assert m.any(axis=1).all(), f"{where}: an environment has no legal action"
    tp = info.get("to_play")
    assert tp is not None and tp.shape == (n,), f"{where}: info['to_play'] missing or of shape {None if tp is None else tp.shape}"
    assert ((tp >= 0) & (tp < env.num_players)).all(), f"{where}: to_play outside 0..players-1"


def _random_actions(rng, mask):
    # One uniformly random legal action per row, chosen in numpy.
    r = rng.random(mask.shape) * mask
    return r.argmax(axis=1)


def check_vector_env(env, steps=64, seed=123):
    """Gymnasium's vector contract for a VecEnv: reset/step signatures,
    dtypes and shapes, legal masks, same-step autoreset, seeding
    determinism, bad actions refused without effect."""
    obs, info = env.reset(seed=seed)
    _check_batch(env, obs, info, "reset")
    first = obs.copy()
    rng = np.random.default_rng(seed)
    trace = []
    for t in range(steps):
        a = _random_actions(rng, info["legal_mask"])
        out = env.step(a)
        assert isinstance(out, tuple) and len(out) == 5, "step must return (obs, rewards, terminations, truncations, info)"
        obs, rew, term, trunc, info = out
        _check_batch(env, obs, info, f"step {t}")
        n = env.num_envs
        assert rew.dtype == np.float32 and rew.shape[0] == n, f"step {t}: rewards {rew.dtype} {rew.shape}"
        assert term.dtype == np.bool_ and term.shape == (n,), f"step {t}: terminations {term.dtype} {term.shape}"
        assert trunc.dtype == np.bool_ and trunc.shape == (n,), f"step {t}: truncations {trunc.dtype} {trunc.shape}"
        assert not (term & trunc).any(), f"step {t}: an environment is both terminated and truncated"
        live = ~(term | trunc)
        assert np.all(rew[live] == 0) or rew.ndim == 1, f"step {t}: rewards outside finished games"
        trace.append((a, obs.copy(), rew.copy(), term.copy()))
    # Seeding: the same seed and actions replay the same trajectory.
    obs, info = env.reset(seed=seed)
    assert np.array_equal(obs, first), "reset(seed) twice gave different observations"
    for t, (a, o, r, d) in enumerate(trace):
        obs, rew, term, _, info = env.step(a)
        assert np.array_equal(obs, o) and np.array_equal(rew, r) and np.array_equal(term, d), \
            f"step {t} after reset(seed={seed}) differs from the first run: the environment is not seeded"
    # A bad action is refused and changes nothing.
    before = obs.copy()
    bad = np.where(info["legal_mask"][0])[0]
    illegal = np.where(~info["legal_mask"][0])[0]
    for wrong in ([env.num_actions] + ([int(illegal[0])] if len(illegal) else [])):
        a = _random_actions(rng, info["legal_mask"])
        a[0] = wrong
        try:
            env.step(a)
        except ValueError as e:
            assert "actions[0]" in str(e), f"the error for a bad action does not name it: {e}"
        else:
            raise AssertionError(f"step accepted action {wrong} in environment 0 (legal: {bad})")
        assert np.array_equal(obs, before), "a refused step changed the observations"


def check_aec_env(env, games=3, seed=7):
    """PettingZoo's AEC contract (api_test) for canopy.pettingzoo.AECEnv:
    agents and agent_selection, observe/last, action masks, rewards and
    terminations by agent, stepping None for finished agents."""
    rng = np.random.default_rng(seed)
    for g in range(games):
        env.reset(seed=seed + g)
        assert env.agents == env.possible_agents, "reset: agents must be every possible agent"
        assert env.agent_selection in env.agents, "reset: agent_selection is not an agent"
        for agent in env.agents:
            sp = env.observation_space(agent)
            assert sp is not None and env.action_space(agent) is not None
        cum = {a: 0.0 for a in env.possible_agents}
        for _ in range(100000):
            agent = env.agent_selection
            obs, reward, term, trunc, info = env.last()
            cum[agent] += reward
            assert isinstance(obs, dict) and "observation" in obs and "action_mask" in obs, "observe must give observation and action_mask"
            assert obs["observation"].dtype == np.float32
            assert obs["action_mask"].dtype == np.int8
            if term or trunc:
                env.step(None)
            else:
                mask = obs["action_mask"].astype(bool)
                assert mask.any(), "a live agent has no legal action"
                env.step(int(rng.choice(np.flatnonzero(mask))))
            if not env.agents:
                break
        else:
            raise AssertionError("the game did not end")
        assert all(env.terminations.get(a, True) or env.truncations.get(a, True) for a in env.possible_agents)
