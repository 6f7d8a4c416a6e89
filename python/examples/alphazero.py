#!/usr/bin/python3
"""AlphaZero in PyTorch on Canopy: Canopy plays the self-play games and
runs the searches (canopy.selfplay, canopy.search), this script owns the
network and the training loop.

    . .venv-python/bin/activate   # after `make python`
    python python/examples/alphazero.py --game connect4 --out runs/az-py
    python python/examples/alphazero.py --smoke          # seconds: CI
    python python/examples/alphazero.py --out runs/az-py --resume   # continue

Each iteration: self-play games with the current network, SGD on a
replay window of their positions, a match against `onestep` (Canopy's
one-ply lookahead) with search, and a checkpoint that Canopy plays as
`az:net=OUT/net.safetensors`. --device cuda runs the network on a GPU.
After every iteration the whole training state (network, optimiser,
replay window, random generators) is written atomically to OUT/state.pt;
--resume continues from it.
"""
import argparse
import collections
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import canopy  # noqa: E402


def parse():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--game", default="connect4")
    p.add_argument("--iterations", type=int, default=40)
    p.add_argument("--games", type=int, default=256, help="self-play games per iteration")
    p.add_argument("--sims", type=int, default=100, help="simulations per self-play move")
    p.add_argument("--trees", type=int, default=128, help="self-play games played at once")
    p.add_argument("--window", type=int, default=4, help="iterations of positions kept for training")
    p.add_argument("--steps", type=int, default=300, help="SGD steps per iteration")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--eval-games", type=int, default=200, help="games against onestep per evaluation")
    p.add_argument("--eval-sims", type=int, default=100)
    p.add_argument("--eval-every", type=int, default=5)
    p.add_argument("--channels", type=int, default=32, help="residual tower width (the shipped connect4-zero: 32)")
    p.add_argument("--blocks", type=int, default=4, help="residual blocks (connect4-zero: 4)")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--out", default="runs/az-python")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--resume", action="store_true", help="continue from OUT/state.pt")
    p.add_argument("--smoke", action="store_true", help="a tiny run (seconds) that exercises every step")
    a = p.parse_args()
    if a.smoke:
        a.iterations, a.games, a.sims, a.trees, a.steps, a.batch_size = 2, 8, 16, 8, 5, 64
        a.eval_games, a.eval_sims, a.eval_every = 8, 8, 2
    return a


def make_evaluator(net, device):
    """Canopy calls it with batches of leaves from all trees at once."""
    def evaluate(obs, legal):
        with torch.no_grad():
            logits, value = net(torch.from_numpy(obs).to(device))
        return logits.float().cpu().numpy(), value.float().cpu().numpy()
    return evaluate


def train(net, opt, window, steps, batch_size, device, rng):
    data = {k: np.concatenate([b[k] for b in window]) for k in ("obs", "policy", "legal", "value")}
    n = len(data["value"])
    net.train()
    total = 0.0
    for _ in range(steps):
        i = rng.integers(0, n, min(batch_size, n))
        x = torch.from_numpy(data["obs"][i]).to(device)
        pi = torch.from_numpy(data["policy"][i]).to(device)
        legal = torch.from_numpy(data["legal"][i]).to(device).bool()
        z = torch.from_numpy(data["value"][i]).to(device)
        logits, v = net(x)
        logp = F.log_softmax(logits.masked_fill(~legal, -1e9), dim=1)
        loss = -(pi * logp).sum(1).mean() + F.mse_loss(v, z)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    net.eval()
    return total / max(steps, 1)


def match(game, evaluate, games, sims, seed):
    """Win rate of search on the network against onestep (alternating seats)."""
    n = min(games, 100)
    env = canopy.VecEnv(game, n, seed=seed, opponent="onestep")
    obs, info = env.reset(seed=seed)
    wins = draws = played = 0
    while played < games:
        r = canopy.search(game, env, evaluate, sims=sims, seed=seed + played)
        obs, rew, term, trunc, info = env.step(r.action)
        done = term | trunc
        k = min(int(done.sum()), games - played)
        wins += int((rew[done][:k] > 0).sum())
        draws += int((rew[done][:k] == 0).sum())
        played += k
    env.close()
    return wins / games, draws / games


def save_state(path, it, elapsed, net, opt, window, rng):
    """Writes the training state atomically: a crash mid-write keeps the last one."""
    state = {"iteration": it, "elapsed": elapsed, "net": net.state_dict(), "opt": opt.state_dict(), "window": list(window),
             "rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state()}
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main():
    a = parse()
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(a.seed)
    rng = np.random.default_rng(a.seed)
    net = canopy.torch_net(a.game, channels=a.channels, blocks=a.blocks).to(a.device).eval()
    opt = torch.optim.AdamW(net.parameters(), lr=a.lr, weight_decay=1e-4)
    evaluate = make_evaluator(net, a.device)
    window = collections.deque(maxlen=a.window)
    state_path = os.path.join(a.out, "state.pt")
    first, before = 1, (0.0, 0.0)
    if a.resume:
        if not os.path.exists(state_path):
            sys.exit(f"--resume: {state_path} does not exist (start without --resume, or give the run's --out)")
        st = torch.load(state_path, map_location=a.device)
        net.load_state_dict(st["net"])
        opt.load_state_dict(st["opt"])
        window.extend(st["window"])
        rng.bit_generator.state = st["rng"]
        torch.set_rng_state(st["torch_rng"])
        first, before = st["iteration"] + 1, st["elapsed"]
        print(f"resumed from {state_path} after iteration {st['iteration']}", flush=True)
    # elapsed and CPU time count the earlier sessions of a resumed run
    t0, c0 = time.time() - before[0], time.process_time() - before[1]
    for it in range(first, a.iterations + 1):
        t1 = time.time()
        batches = list(canopy.selfplay(a.game, evaluate, a.games, sims=a.sims, trees=a.trees,
                                       seed=a.seed * 1000 + it, yield_games=a.games))
        positions = sum(len(b["value"]) for b in batches)
        window.append({k: np.concatenate([b[k] for b in batches]) for k in ("obs", "policy", "legal", "value")})
        t2 = time.time()
        loss = train(net, opt, window, a.steps, a.batch_size, a.device, rng)
        line = (f"iter {it}: {a.games} games, {positions} positions, self-play {t2 - t1:.1f}s, "
                f"loss {loss:.3f}, train {time.time() - t2:.1f}s")
        path = os.path.join(a.out, "net.safetensors")
        canopy.save_torch(net, path, game=a.game)  # plays as az:net=PATH
        if it % a.eval_every == 0 or it == a.iterations:
            w, d = match(a.game, evaluate, a.eval_games, a.eval_sims, seed=it)
            line += f", vs onestep: win {w:.1%} draw {d:.1%}"
        cpu = time.process_time() - c0  # all threads, Go's included
        save_state(state_path, it, (time.time() - t0, cpu), net, opt, window, rng)
        print(f"{line}, elapsed {time.time() - t0:.0f}s, cpu {cpu:.0f}s", flush=True)


if __name__ == "__main__":
    main()
