#!/usr/bin/python3
"""PPO in PyTorch on canopy.VecEnv against `onestep` (Schulman et al. 2017,
with invalid-action masking): Canopy steps the games in Go, numpy and
PyTorch do the learning.

    python python/examples/ppo.py --game connect4 --updates 500
    python python/examples/ppo.py --smoke      # seconds: CI
"""
import argparse
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import canopy  # noqa: E402


class Policy(nn.Module):
    def __init__(self, shape, actions):
        super().__init__()
        c, h, w = shape
        self.body = nn.Sequential(nn.Conv2d(c, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(),
                                  nn.Flatten(), nn.Linear(32 * h * w, 128), nn.ReLU())
        self.pi = nn.Linear(128, actions)
        self.v = nn.Linear(128, 1)

    def forward(self, x, legal):
        z = self.body(x)
        return self.pi(z).masked_fill(~legal, -1e9), self.v(z).squeeze(1)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--game", default="connect4")
    p.add_argument("--opponent", default="onestep")
    p.add_argument("--envs", type=int, default=64)
    p.add_argument("--steps", type=int, default=64, help="steps per environment per update")
    p.add_argument("--updates", type=int, default=300)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--minibatch", type=int, default=1024)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--lam", type=float, default=0.95)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--ent", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--smoke", action="store_true")
    a = p.parse_args()
    if a.smoke:
        a.envs, a.steps, a.updates, a.minibatch = 8, 8, 2, 32
    torch.manual_seed(a.seed)
    env = canopy.VecEnv(a.game, a.envs, seed=a.seed, opponent=a.opponent)
    obs, info = env.reset(seed=a.seed)
    net = Policy(env.observation_shape, env.num_actions)
    opt = torch.optim.Adam(net.parameters(), lr=a.lr)
    T, N = a.steps, a.envs
    buf_obs = np.zeros((T, N) + env.observation_shape, np.float32)
    buf_legal = np.zeros((T, N, env.num_actions), bool)
    buf_act, buf_logp = np.zeros((T, N), np.int64), np.zeros((T, N), np.float32)
    buf_rew, buf_done, buf_val = np.zeros((T, N), np.float32), np.zeros((T, N), np.float32), np.zeros((T + 1, N), np.float32)
    t0 = time.time()
    for u in range(1, a.updates + 1):
        wins = games = 0
        for t in range(T):
            buf_obs[t], buf_legal[t] = obs, info["legal_mask"]  # copies: obs is overwritten by step
            with torch.no_grad():
                logits, v = net(torch.from_numpy(buf_obs[t]), torch.from_numpy(buf_legal[t]))
            dist = torch.distributions.Categorical(logits=logits)
            act = dist.sample()
            buf_act[t], buf_logp[t], buf_val[t] = act.numpy(), dist.log_prob(act).numpy(), v.numpy()
            obs, rew, term, trunc, info = env.step(buf_act[t])
            buf_rew[t], buf_done[t] = rew, term | trunc
            games += int(buf_done[t].sum())
            wins += int((rew[buf_done[t] > 0] > 0).sum())
        with torch.no_grad():
            buf_val[T] = net(torch.from_numpy(obs), torch.from_numpy(info["legal_mask"]))[1].numpy()
        # Generalised advantage estimation; a finished game does not bootstrap.
        adv = np.zeros((T, N), np.float32)
        last = np.zeros(N, np.float32)
        for t in reversed(range(T)):
            nonterm = 1.0 - buf_done[t]
            delta = buf_rew[t] + a.gamma * buf_val[t + 1] * nonterm - buf_val[t]
            last = delta + a.gamma * a.lam * nonterm * last
            adv[t] = last
        ret = adv + buf_val[:T]
        flat = lambda x: torch.from_numpy(x.reshape((T * N,) + x.shape[2:]))  # noqa: E731
        X, L, A_, LP, ADV, RET = map(flat, (buf_obs, buf_legal, buf_act, buf_logp, adv, ret))
        for _ in range(a.epochs):
            for idx in torch.randperm(T * N).split(a.minibatch):
                logits, v = net(X[idx], L[idx])
                dist = torch.distributions.Categorical(logits=logits)
                ratio = torch.exp(dist.log_prob(A_[idx]) - LP[idx])
                ad = (ADV[idx] - ADV[idx].mean()) / (ADV[idx].std() + 1e-8)
                pg = -torch.min(ratio * ad, ratio.clamp(1 - a.clip, 1 + a.clip) * ad).mean()
                loss = pg + 0.5 * ((v - RET[idx]) ** 2).mean() - a.ent * dist.entropy().mean()
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), 0.5)
                opt.step()
        if u % 10 == 0 or u == a.updates or a.smoke:
            print(f"update {u}: {games} games, win rate vs {a.opponent} {wins / max(games, 1):.1%}, "
                  f"{T * N * u / (time.time() - t0):.0f} steps/s", flush=True)
    env.close()


if __name__ == "__main__":
    main()
