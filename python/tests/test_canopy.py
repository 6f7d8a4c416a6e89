"""Tests of the canopy Python package (stdlib unittest; numpy; torch when
installed). Run with `make python-test` or
    cd python && /usr/bin/python3 -m unittest discover -s tests -v
after `make python` has built canopy/libcanopy.so.

Expected values come from outside the code under test: a tic-tac-toe
referee written here in numpy, hand-worked Connect Four positions, and
PyTorch's own forward pass for the networks.
"""
import gc
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import canopy  # noqa: E402
from canopy import contract  # noqa: E402
from canopy.pettingzoo import AECEnv  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False


def uniform(obs, legal):
    b, A = legal.shape
    return np.zeros((b, A), np.float32), np.zeros(b, np.float32)


def open_fds():
    return len(os.listdir("/proc/self/fd"))


LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def ttt_winner(board):
    for a, b, c in LINES:
        if board[a] != 0 and board[a] == board[b] == board[c]:
            return board[a]
    return 0


class TestListing(unittest.TestCase):
    def test_games_and_agents(self):
        names = [g["name"] for g in canopy.games()]
        for want in ("connect4", "hex", "tictactoe", "sequence", "sushigo-seq", "tetrislink"):
            self.assertIn(want, names)
        c4 = next(g for g in canopy.games() if g["name"] == "connect4")
        self.assertEqual(c4["actions"], 7)
        agents = [a["name"] for a in canopy.agents("connect4")]
        for want in ("onestep", "random", "mcts", "az", "solver"):
            self.assertIn(want, agents)
        self.assertNotIn("solver", [a["name"] for a in canopy.agents("hex")])

    def test_bad_game_spec(self):
        with self.assertRaisesRegex(ValueError, "game_spec \"nosuch\""):
            canopy.agents("nosuch")
        with self.assertRaisesRegex(ValueError, "game_spec"):
            canopy.VecEnv("hex:size=99", 2)
        with self.assertRaisesRegex(ValueError, "game_spec is empty"):
            canopy.VecEnv("", 2)


class TestVecEnv(unittest.TestCase):
    def test_tictactoe_against_numpy_referee(self):
        # Self-play mode: every seat is ours; a numpy referee replays the
        # same moves and must agree on legality, turns, ends and rewards.
        n = 8
        env = canopy.VecEnv("tictactoe", n, seed=3)
        obs, info = env.reset(seed=3)
        self.assertEqual(obs.shape, (n,) + env.observation_shape)
        self.assertEqual(obs.dtype, np.float32)
        boards = np.zeros((n, 9), np.int64)
        turn = np.zeros(n, np.int64)
        rng = np.random.default_rng(0)
        games_done = 0
        for _ in range(200):
            np.testing.assert_array_equal(info["legal_mask"], boards == 0)
            np.testing.assert_array_equal(info["to_play"], turn)
            occupied = obs.reshape(n, -1, 9).sum(axis=1) > 0
            np.testing.assert_array_equal(occupied, boards != 0)
            a = np.array([rng.choice(np.flatnonzero(boards[i] == 0)) for i in range(n)])
            obs, rew, term, trunc, info = env.step(a)
            self.assertEqual(rew.shape, (n, 2))
            self.assertFalse(trunc.any())
            for i in range(n):
                boards[i, a[i]] = turn[i] + 1
                w = ttt_winner(boards[i])
                over = w != 0 or (boards[i] != 0).all()
                self.assertEqual(bool(term[i]), over, f"env {i} board {boards[i]}")
                if over:
                    want = [0.0, 0.0] if w == 0 else ([1.0, -1.0] if w == 1 else [-1.0, 1.0])
                    np.testing.assert_array_equal(rew[i], want)
                    boards[i] = 0
                    turn[i] = 0
                    games_done += 1
                else:
                    np.testing.assert_array_equal(rew[i], [0, 0])
                    turn[i] = 1 - turn[i]
        self.assertGreater(games_done, 50)
        env.close()

    def test_opponent_and_contract(self):
        for spec, opp in (("connect4", "random"), ("connect4", "onestep"), ("hex:size=5", "random"),
                          ("tetrislink:players=4", "random"), ("sequence", "random"), ("sushigo-seq", "random"),
                          ("connect4d", "random"), ("strands", "random")):
            with self.subTest(game=spec, opponent=opp):
                env = canopy.VecEnv(spec, 6, seed=1, opponent=opp)
                contract.check_vector_env(env, steps=20)
                self.assertEqual(env.step(np.zeros(6, np.int64) if False else
                                          contract._random_actions(np.random.default_rng(1), env.reset()[1]["legal_mask"]))[1].shape, (6,))
                env.close()
        env = canopy.VecEnv("tetrislink:players=4", 3)
        contract.check_vector_env(env, steps=10)
        self.assertEqual(env.step(contract._random_actions(np.random.default_rng(1), env.reset()[1]["legal_mask"]))[1].shape, (3, 4))
        env.close()

    def test_onestep_wins_against_nothing(self):
        # Connect Four against onestep: the opponent takes every immediate
        # win, so a learner that always plays column 0 loses every game.
        env = canopy.VecEnv("connect4", 4, seed=2, opponent="onestep", seat=0)
        obs, info = env.reset()
        losses = 0
        for _ in range(60):
            a = np.where(info["legal_mask"][:, 0], 0, info["legal_mask"].argmax(axis=1))
            obs, rew, term, trunc, info = env.step(a)
            losses += int((rew[term] == -1).sum())
            self.assertFalse((rew[term] == 1).any())
        self.assertGreater(losses, 4)
        env.close()

    def test_bad_actions(self):
        env = canopy.VecEnv("connect4", 3, opponent="random")
        obs, info = env.reset(seed=1)
        before = obs.copy()
        with self.assertRaisesRegex(ValueError, r"actions\[1\] = 9 is out of range"):
            env.step(np.array([0, 9, 0]))
        with self.assertRaisesRegex(ValueError, r"actions has shape \(2,\)"):
            env.step(np.array([0, 1]))
        with self.assertRaisesRegex(ValueError, "dtype"):
            env.step(np.array([0.5, 1, 2]))
        with self.assertRaisesRegex(ValueError, "dtype"):
            env.step(np.array(["a", "b", "c"]))
        np.testing.assert_array_equal(obs, before)
        # Fill column 0 in environment 2 until it is illegal.
        for _ in range(40):
            if not info["legal_mask"][2, 0]:
                break
            a = info["legal_mask"].argmax(axis=1)
            a[2] = 0
            obs, rew, term, trunc, info = env.step(a)
        self.assertFalse(info["legal_mask"][2, 0])
        with self.assertRaisesRegex(ValueError, r"actions\[2\] = 0 is illegal"):
            a = info["legal_mask"].argmax(axis=1)
            a[2] = 0
            env.step(a)
        with self.assertRaisesRegex(ValueError, "opponent \"nosuch\""):
            canopy.VecEnv("connect4", 2, opponent="nosuch")
        with self.assertRaisesRegex(ValueError, "sushigo-seq"):
            canopy.VecEnv("sushigo", 2)
        with self.assertRaisesRegex(ValueError, "num_envs"):
            canopy.VecEnv("connect4", 0)
        env.close()

    def test_after_close(self):
        env = canopy.VecEnv("connect4", 2, opponent="random")
        obs, _ = env.reset()
        env.close()
        env.close()  # idempotent
        self.assertEqual(obs.shape, (2, 2, 6, 7))  # still readable: numpy's memory
        float(obs.sum())
        with self.assertRaisesRegex(RuntimeError, "after close"):
            env.step(np.zeros(2, np.int64))
        with self.assertRaisesRegex(RuntimeError, "after close"):
            env.reset()
        with self.assertRaisesRegex(RuntimeError, "closed VecEnv"):
            canopy.search("connect4", env, uniform, sims=4)

    def test_aec_contract(self):
        for spec in ("tictactoe", "connect4", "tetrislink:players=3", "sequence"):
            with self.subTest(game=spec):
                env = AECEnv(spec, seed=1)
                contract.check_aec_env(env, games=2)
                env.close()


def chi2_critical(df, z=3.0902):
    """The chi-square distribution's upper quantile for df degrees of
    freedom (Wilson-Hilferty; z = 3.0902: the 0.999 quantile of the normal
    distribution): tables give 22.46 at df 6, 149.4 at df 100."""
    h = 2.0 / (9.0 * df)
    return df * (1 - h + z * np.sqrt(h)) ** 3


class TestRandomActions(unittest.TestCase):
    def check_uniform(self, actions, seed):
        # Every non-empty mask of `actions` actions, each repeated: the
        # draws must be legal and, per mask, uniform over its legal actions
        # (Pearson's chi-square summed over the masks, at the 0.001 level).
        codes = np.arange(1, 1 << actions)
        reps = 120 if actions <= 7 else 40
        mask = ((np.repeat(codes, reps)[:, None] >> np.arange(actions)) & 1).astype(bool)
        rng = np.random.default_rng(seed)
        counts = np.zeros(mask.shape)
        for _ in range(5):
            a = canopy.random_actions(mask, rng)
            self.assertEqual(a.dtype, np.int64)
            self.assertTrue(mask[np.arange(len(a)), a].all(), "an illegal action was drawn")
            np.add.at(counts, (np.arange(len(a)), a), 1)
        per_mask = counts.reshape(len(codes), reps, actions).sum(axis=1)
        legal = mask.reshape(len(codes), reps, actions)[:, 0]
        expected = legal * (per_mask.sum(axis=1, keepdims=True) / legal.sum(axis=1, keepdims=True))
        chi2 = (((per_mask - expected) ** 2)[legal] / expected[legal]).sum()
        df = int((legal.sum(axis=1) - 1).sum())
        if df == 0:  # one action: nothing to choose
            return
        self.assertLess(chi2, chi2_critical(df), f"{actions} actions: chi-square {chi2:.1f} on {df} degrees of freedom")

    def test_uniform_over_legal_actions(self):
        self.assertAlmostEqual(chi2_critical(6), 22.46, delta=0.3)
        self.assertAlmostEqual(chi2_critical(100), 149.4, delta=0.5)
        for actions in (1, 3, 7, 8, 10):  # 10: the path for more than 8 actions
            with self.subTest(actions=actions):
                self.check_uniform(actions, seed=actions)

    def test_connect4_masks(self):
        env = canopy.VecEnv("connect4", 64, seed=3, opponent="random")
        obs, info = env.reset()
        rng = np.random.default_rng(4)
        for _ in range(100):
            a = canopy.random_actions(info["legal_mask"], rng)
            obs, rew, term, trunc, info = env.step(a)  # raises on an illegal action
        env.close()

    def test_bad_masks(self):
        with self.assertRaisesRegex(ValueError, "row 1 has no legal action"):
            canopy.random_actions(np.array([[True, False], [False, False]]))
        with self.assertRaisesRegex(ValueError, "row 0 has no legal action"):
            canopy.random_actions(np.zeros((2, 12), bool))
        with self.assertRaisesRegex(ValueError, "want bool"):
            canopy.random_actions(np.ones((2, 3), np.float32))


class TestSearch(unittest.TestCase):
    def test_finds_the_win(self):
        # X (first player) has three in column 1 (1 2 1 2 1 2): playing
        # column 1 (action 0) wins at once; the search must see it with a
        # uniform evaluator, under both rules.
        for rule in ("puct", "gumbel"):
            with self.subTest(rule=rule):
                r = canopy.search("connect4", ["1 2 1 2 1 2", "1 2 1 2 1 2"], uniform, sims=200, rule=rule, seed=1)
                np.testing.assert_array_equal(r.action, [0, 0])
                self.assertEqual(r.visits.shape, (2, 7))
                if rule == "puct":
                    self.assertGreater(r.root_value[0], 0.5)
                np.testing.assert_allclose(r.policy.sum(axis=1), 1, rtol=1e-5)
                if rule == "gumbel":
                    np.testing.assert_allclose(r.improved_policy.sum(axis=1), 1, rtol=1e-5)
                    self.assertEqual(int(r.improved_policy[0].argmax()), 0)
                else:
                    self.assertIsNone(r.improved_policy)
                    self.assertEqual(r.visits[0].sum(), 200)

    def test_evaluator_sees_leaves_and_torch_outputs(self):
        seen = {"rows": 0, "calls": 0}

        def ev(obs, legal):
            seen["rows"] += obs.shape[0]
            seen["calls"] += 1
            self.assertEqual(obs.dtype, np.float32)
            self.assertEqual(legal.dtype, np.bool_)
            self.assertEqual(obs.shape[1:], (2, 6, 7))
            # Connect Four: a column is legal when its top cell is empty.
            top = obs[:, :, 5, :].sum(axis=1) == 0
            top2 = obs[:, :, 0, :].sum(axis=1) == 0
            self.assertTrue(np.array_equal(legal, top) or np.array_equal(legal, top2))
            if HAVE_TORCH:
                import torch
                return torch.zeros(obs.shape[0], 7, dtype=torch.float64), torch.zeros(obs.shape[0], 1)
            return uniform(obs, legal)

        env = canopy.VecEnv("connect4", 16, seed=4, opponent="random")
        r = canopy.search("connect4", env, ev, sims=32, batch=8)
        self.assertEqual(r.action.shape, (16,))
        # Every simulation's leaf plus each root (none ends the game in so
        # few moves from these openings... at most; terminal leaves skip it).
        self.assertLessEqual(seen["rows"], 16 * 33)
        self.assertGreaterEqual(seen["rows"], 16 * 20)
        self.assertGreaterEqual(seen["calls"], 16 * 32 // 8)
        _, info = env.reset()
        env.close()

    def test_hidden_and_multi_action_games(self):
        for spec, opts in (("sequence", {"det": 2}), ("connect4d", {}), ("tetrislink:players=3", {})):
            with self.subTest(game=spec):
                g = next(x for x in canopy.games() if x["name"] == spec.split(":")[0])
                env = canopy.VecEnv(spec, 3, seed=1, opponent="random")
                _, info = env.reset()
                r = canopy.search(spec, env, uniform, sims=16, **opts)
                for i in range(3):
                    self.assertTrue(info["legal_mask"][i, r.action[i]])
                self.assertEqual(r.visits.shape[1], g["actions"] if ":" not in spec else r.visits.shape[1])
                env.close()

    def test_bad_input(self):
        with self.assertRaisesRegex(ValueError, "option cc: unknown"):
            canopy.search("connect4", [""], uniform, sims=4, cc=1)
        with self.assertRaisesRegex(ValueError, "option c:"):
            canopy.search("connect4", [""], uniform, sims=4, c=-1)
        with self.assertRaisesRegex(ValueError, "rule"):
            canopy.search("connect4", [""], uniform, sims=4, rule="ucb")
        with self.assertRaisesRegex(ValueError, r"states\[1\]: move 2"):
            canopy.search("connect4", ["", "1 9"], uniform, sims=4)
        with self.assertRaisesRegex(ValueError, r"states\[0\] is a finished game"):
            canopy.search("tictactoe", ["1 4 2 5 3"], uniform, sims=4)
        with self.assertRaisesRegex(TypeError, "list of move strings"):
            canopy.search("connect4", "1 2", uniform, sims=4)
        with self.assertRaisesRegex(TypeError, "callable"):
            canopy.search("connect4", [""], None, sims=4)

    def test_evaluator_errors(self):
        base_h, base_fd = canopy.live_handles(), open_fds()

        class Boom(Exception):
            pass

        def raises(obs, legal):
            raise Boom("from the evaluator")

        def nan(obs, legal):
            lo, v = uniform(obs, legal)
            v[-1] = np.nan
            return lo, v

        def wrong_shape(obs, legal):
            return np.zeros((obs.shape[0], 6), np.float32), np.zeros(obs.shape[0], np.float32)

        def not_pair(obs, legal):
            return np.zeros((obs.shape[0], 7), np.float32)

        def posinf(obs, legal):
            lo, v = uniform(obs, legal)
            lo[0, 3] = np.inf
            return lo, v

        for _ in range(3):
            with self.assertRaises(Boom):
                canopy.search("connect4", [""] * 64, raises, sims=50)
            with self.assertRaisesRegex(ValueError, r"values\[\d+\] = nan"):
                canopy.search("connect4", [""] * 8, nan, sims=50)
            with self.assertRaisesRegex(ValueError, r"logits of shape \(\d+, 6\), want \(\d+, 7\)"):
                canopy.search("connect4", [""] * 8, wrong_shape, sims=50)
            with self.assertRaisesRegex(ValueError, "pair"):
                canopy.search("connect4", [""] * 8, not_pair, sims=50)
            with self.assertRaisesRegex(ValueError, r"logits\[0, 3\] = inf"):
                canopy.search("connect4", [""] * 8, posinf, sims=50)
            with self.assertRaises(Boom):
                for _ in canopy.selfplay("tictactoe", raises, 4, sims=8):
                    pass
        # -inf on an illegal action is fine.

        def masked(obs, legal):
            lo, v = uniform(obs, legal)
            lo[~legal] = -np.inf
            return lo, v

        canopy.search("connect4", ["1 1 1 1 1 1"], masked, sims=30)
        gc.collect()
        self.assertEqual(canopy.live_handles(), base_h)
        self.assertEqual(open_fds(), base_fd)

    def test_no_leaks(self):
        canopy.search("connect4", [""], uniform, sims=4)  # warm the library up
        base_h, base_fd = canopy.live_handles(), open_fds()
        for _ in range(20):
            env = canopy.VecEnv("connect4", 32, opponent="onestep")
            canopy.search("connect4", env, uniform, sims=8)
            env.close()
            for b in canopy.selfplay("tictactoe", uniform, 2, sims=4):
                pass
            env = canopy.VecEnv("tictactoe", 2)
            del env  # closed by the garbage collector
        gc.collect()
        self.assertEqual(canopy.live_handles(), base_h)
        self.assertEqual(open_fds(), base_fd)


class TestSelfPlay(unittest.TestCase):
    def test_batches_in_shard_layout(self):
        got = list(canopy.selfplay("tictactoe", uniform, 6, trees=3, yield_games=2, sims=16, seed=5))
        self.assertEqual(len(got), 3)
        ids = np.concatenate([b["game_id"] for b in got])
        self.assertEqual(sorted(set(ids.tolist())), list(range(6)))
        for b in got:
            p = b["obs"].shape[0]
            self.assertEqual(b["obs"].shape, (p, 2, 3, 3) if b["obs"].ndim == 4 else b["obs"].shape)
            self.assertEqual(b["policy"].shape, (p, 9))
            self.assertEqual(b["legal"].dtype, np.uint8)
            np.testing.assert_allclose(b["policy"].sum(axis=1), 1, rtol=1e-5)
            self.assertTrue((b["policy"][b["legal"] == 0] == 0).all())
            self.assertTrue(set(np.unique(b["value"])).issubset({-1.0, 0.0, 1.0}))
            # The legal mask is the empty cells of the observed board.
            occupied = b["obs"].reshape(p, -1, 9).sum(axis=1) > 0
            np.testing.assert_array_equal(b["legal"] == 1, ~occupied)
            # Each game's plies count up from 0.
            for g in np.unique(b["game_id"]):
                np.testing.assert_array_equal(b["ply"][b["game_id"] == g], np.arange((b["game_id"] == g).sum()))
        # Same seed, same evaluator: the same games.
        again = list(canopy.selfplay("tictactoe", uniform, 6, trees=2, yield_games=6, sims=16, seed=5))
        a = np.concatenate([b["policy"] for b in got])[np.argsort(np.concatenate([b["game_id"] * 100 + b["ply"] for b in got]), kind="stable")]
        b2 = again[0]
        bb = b2["policy"][np.argsort(b2["game_id"] * 100 + b2["ply"], kind="stable")]
        np.testing.assert_array_equal(a, bb)

    def test_break_stops(self):
        base = canopy.live_handles()
        for b in canopy.selfplay("connect4", uniform, 1000, trees=4, yield_games=1, sims=8):
            break
        gc.collect()
        self.assertEqual(canopy.live_handles(), base)

    def test_bad_options(self):
        with self.assertRaisesRegex(ValueError, "option simz: unknown"):
            next(canopy.selfplay("tictactoe", uniform, 2, simz=3))
        with self.assertRaisesRegex(ValueError, "games"):
            canopy.selfplay("tictactoe", uniform, 0)


class TestNet(unittest.TestCase):
    def test_evaluate_shipped(self):
        with canopy.Net.load("connect4-zero") as net:
            self.assertEqual(net.game, "connect4")
            env = canopy.VecEnv("connect4", 5, opponent="random")
            obs, _ = env.reset(seed=2)
            lo, v = net.evaluate(obs)
            self.assertEqual(lo.shape, (5, 7))
            self.assertTrue(np.all(np.abs(v) <= 1))
            env.close()
            with self.assertRaisesRegex(ValueError, "obs has shape"):
                net.evaluate(np.zeros((2, 3), np.float32))
        with self.assertRaisesRegex(ValueError, "no such file and not a shipped network"):
            canopy.Net.load("/nonexistent.safetensors")
        with self.assertRaisesRegex(ValueError, "init"):
            canopy.Net.load("init")

    def test_constructor_and_per_player_values(self):
        # Net(name_or_path) is Net.load's spelling numpy users reach for.
        with canopy.Net("init", game="tetrislink:players=3") as net:
            self.assertEqual(net.value_size, 3)
            env = canopy.VecEnv("tetrislink:players=3", 4, opponent=None)
            obs, _ = env.reset(seed=1)
            lo, v = net.evaluate(obs)
            env.close()
            self.assertEqual(lo.shape, (4, 190))
            self.assertEqual(v.shape, (4, 3))
            self.assertTrue(np.all(np.abs(v) <= 1))
        with self.assertRaisesRegex(TypeError, "string or path"):
            canopy.Net(3)
        # An ONNX model is not a Canopy network file: say how to convert it
        # (agents take it as it is), not a safetensors parse error.
        with tempfile.TemporaryDirectory() as d:
            model = os.path.join(d, "m.onnx")
            with open(model, "wb") as f:
                f.write(b"\x08\x07")
            with self.assertRaisesRegex(ValueError, "ONNX model.*canopy net import"):
                canopy.Net(model)

    @unittest.skipUnless(HAVE_TORCH, "PyTorch is not installed (apt-get install python3-torch)")
    def test_torch_round_trip(self):
        import torch
        with canopy.Net.load("connect4-zero") as net:
            m = net.to_torch()
            rng = np.random.default_rng(0)
            x = (rng.random((6, 2, 6, 7)) < 0.3).astype(np.float32)
            lo, v = net.evaluate(x)
            with torch.no_grad():
                tl, tv = m(torch.from_numpy(x))
            np.testing.assert_allclose(lo, tl.numpy(), atol=2e-3, rtol=1e-3)
            np.testing.assert_allclose(v, tv.numpy(), atol=2e-3)
        # A network changed in PyTorch plays in Canopy: save, load, agree.
        m = canopy.torch_net("tictactoe")
        with torch.no_grad():
            for p in m.parameters():
                p.add_(torch.randn_like(p) * 0.1)
        m.eval()
        d = tempfile.mkdtemp()
        try:
            path = os.path.join(d, "t.safetensors")
            canopy.save_torch(m, path, game="tictactoe")
            x = (np.random.default_rng(1).random((4, 2, 3, 3)) < 0.4).astype(np.float32)
            with torch.no_grad():
                tl, tv = m(torch.from_numpy(x))
            with canopy.Net.load(path) as net:
                lo, v = net.evaluate(x)
            np.testing.assert_allclose(lo, tl.numpy(), atol=1e-4, rtol=1e-4)
            np.testing.assert_allclose(v, tv.numpy(), atol=1e-4)
            with self.assertRaisesRegex(ValueError, "game="):
                canopy.save_torch(torch.nn.Linear(2, 2), path)
            with self.assertRaisesRegex(ValueError, "cannot load"):
                canopy.save_torch(m, path, game="connect4")
            # The refused save left the file that was there as it was.
            with canopy.Net.load(path) as again:
                lo2, v2 = again.evaluate(x)
            np.testing.assert_array_equal(lo2, lo)
            self.assertEqual([f for f in os.listdir(d) if ".tmp-" in f], [])
            canopy_bin = os.path.join(ROOT, "bin", "canopy")
            if os.path.exists(canopy_bin):
                out = subprocess.run([canopy_bin, "move", "--game", "tictactoe", "--agent", f"az:net={path},sims=8"],
                                     capture_output=True, text=True, timeout=60)
                self.assertEqual(out.returncode, 0, out.stderr)
        finally:
            shutil.rmtree(d)

    def test_optional_libraries_missing(self):
        # Without torch (or gymnasium), the features that need it raise
        # ImportError with the fix; everything else works.
        code = ("import sys; sys.modules['torch'] = None; sys.modules['gymnasium'] = None; sys.path.insert(0, %r)\n"
                "import canopy\n"
                "n = canopy.Net.load('connect4-zero')\n"
                "try:\n    n.to_torch()\nexcept ImportError as e:\n    print('torch:', e)\n"
                "try:\n    import canopy.gymnasium\nexcept ImportError as e:\n    print('gym:', e)\n"
                "print('games', len(canopy.games()) > 5)\n" % os.path.dirname(HERE))
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("torch: canopy: this needs PyTorch", out.stdout)
        self.assertIn("apt-get install python3-torch", out.stdout)
        self.assertIn("gym: canopy.gymnasium needs gymnasium: pip install gymnasium", out.stdout)
        self.assertIn("games True", out.stdout)


class TestPerPlayerValues(unittest.TestCase):
    """Games of three or more players: networks with one value per player
    (nets.Config.value_players), seat-rotated so that entry k is the
    value of player (mover + k) mod P."""

    G = "tetrislink:players=4"

    def positions(self, n):
        env = canopy.VecEnv(self.G, n, seed=1)
        obs, info = env.reset()
        rng = np.random.default_rng(1)
        for _ in range(6):
            obs, _, _, _, info = env.step(canopy.random_actions(info["legal_mask"], rng))
        obs = obs.copy()
        env.close()
        return obs

    @unittest.skipUnless(HAVE_TORCH, "PyTorch is not installed (apt-get install python3-torch)")
    def test_net_against_torch(self):
        import torch
        x = self.positions(5)
        with canopy.Net.load("init", game=self.G) as net:
            self.assertEqual(net.value_size, 4)
            self.assertEqual(net.config["value_players"], 4)
            lo, v = net.evaluate(x)
            self.assertEqual(v.shape, (5, 4))
            m = net.to_torch().eval()
        with torch.no_grad():
            tl, tv = m(torch.from_numpy(x))
        self.assertEqual(tuple(tv.shape), (5, 4))
        np.testing.assert_allclose(lo, tl.numpy(), atol=1e-4, rtol=1e-4)
        np.testing.assert_allclose(v, tv.numpy(), atol=1e-4)
        # Trained in PyTorch (here: perturbed), saved, played by Canopy.
        with torch.no_grad():
            for p in m.parameters():
                p.add_(torch.randn_like(p) * 0.05)
            tl, tv = m(torch.from_numpy(x))
        d = tempfile.mkdtemp()
        try:
            path = os.path.join(d, "tl.safetensors")
            canopy.save_torch(m, path, game=self.G)
            with canopy.Net.load(path) as net:
                lo, v = net.evaluate(x)
            np.testing.assert_allclose(lo, tl.numpy(), atol=1e-4, rtol=1e-4)
            np.testing.assert_allclose(v, tv.numpy(), atol=1e-4)
        finally:
            shutil.rmtree(d)

    def test_search_takes_rows_or_scalars(self):
        row = np.array([0.5, 0.1, -0.2, -0.7], np.float32)

        def rows(obs, legal):
            return np.zeros(legal.shape, np.float32), np.tile(row, (legal.shape[0], 1))

        def scalar(obs, legal):
            return np.zeros(legal.shape, np.float32), np.full(legal.shape[0], 0.6, np.float32)

        # With a few simulations every leaf is a child of the root, whose
        # mover is the next seat: the root mover is entry 3 of its row
        # (-0.7); a scalar 0.6 of the child's mover gives the others
        # -0.6/3 = -0.2.
        r = canopy.search(self.G, ["", ""], rows, sims=4)
        np.testing.assert_allclose(r.root_value, [-0.7, -0.7], atol=1e-6)
        r = canopy.search(self.G, ["", ""], scalar, sims=4)
        np.testing.assert_allclose(r.root_value, [-0.2, -0.2], atol=1e-6)
        # backup="paranoid" takes the mover's entry only: the child's mover
        # 0.5, the root mover -0.5/3.
        r = canopy.search(self.G, ["", ""], rows, sims=4, backup="paranoid")
        np.testing.assert_allclose(r.root_value, [-0.5 / 3, -0.5 / 3], atol=1e-6)
        with self.assertRaisesRegex(ValueError, r"values of shape \(\d+, 3\).*or \(\d+, 4\)"):
            canopy.search(self.G, [""], lambda o, l: (np.zeros(l.shape, np.float32), np.zeros((l.shape[0], 3))), sims=4)

        def nan_row(obs, legal):
            v = np.zeros((legal.shape[0], 4), np.float32)
            v[0, 2] = np.nan
            return np.zeros(legal.shape, np.float32), v
        with self.assertRaisesRegex(ValueError, r"values\[0, 2\] = nan"):
            canopy.search(self.G, [""], nan_row, sims=4)

    def test_two_player_rows(self):
        # A two-player game takes a row too, and uses the mover's entry.
        def scalar(obs, legal):
            return np.zeros(legal.shape, np.float32), obs.reshape(len(obs), -1)[:, :3].sum(axis=1) / 3 - 0.5

        def rows(obs, legal):
            lo, v = scalar(obs, legal)
            return lo, np.stack([v, np.full_like(v, 0.9)], axis=1)
        a = canopy.search("tictactoe", ["", "5", "5 1"], scalar, sims=32, seed=3)
        b = canopy.search("tictactoe", ["", "5", "5 1"], rows, sims=32, seed=3)
        np.testing.assert_array_equal(a.visits, b.visits)
        np.testing.assert_array_equal(a.root_value, b.root_value)

    def test_selfplay_values(self):
        got = list(canopy.selfplay("tetrislink:players=3", uniform, 2, trees=2, sims=4, seed=2))
        for b in got:
            p = len(b["value"])
            self.assertEqual(b["values"].shape, (p, 3))
            np.testing.assert_array_equal(b["values"][:, 0], b["value"])
            for g in np.unique(b["game_id"]):
                # Rows of one game are rotations of its returns.
                rows = np.sort(b["values"][b["game_id"] == g], axis=1)
                np.testing.assert_array_equal(rows, np.broadcast_to(rows[0], rows.shape))
        self.assertNotIn("values", next(canopy.selfplay("tictactoe", uniform, 1, trees=1, sims=4)))


class TestShards(unittest.TestCase):
    def test_load_shards(self):
        canopy_bin = os.path.join(ROOT, "bin", "canopy")
        if not os.path.exists(canopy_bin):
            self.skipTest("bin/canopy is not built (make build)")
        d = tempfile.mkdtemp()
        try:
            out = subprocess.run([canopy_bin, "selfplay", "--game", "tictactoe", "--games", "5", "--sims", "8",
                                  "--out", d], capture_output=True, text=True, timeout=120)
            self.assertEqual(out.returncode, 0, out.stderr)
            s = canopy.load_shards(d)
            self.assertEqual(sorted(set(s["game_id"].tolist())), list(range(5)))
            self.assertEqual(s["obs"].shape[1:], (2, 3, 3) if s["obs"].ndim == 4 else s["obs"].shape[1:])
            self.assertEqual(s["policy"].shape, (len(s["value"]), 9))
            self.assertEqual(s["manifest"]["game"], "tictactoe")
        finally:
            shutil.rmtree(d)
        with self.assertRaisesRegex(ValueError, "manifest.json"):
            canopy.load_shards(tempfile.gettempdir() + "/nonexistent-run")


class TestExit(unittest.TestCase):
    def test_exit_with_objects_open(self):
        # An interpreter that exits with an environment, a network and a
        # self-play run mid-way (its trees waiting for Python) open exits
        # cleanly and at once: the exit handler closes them.
        code = (
            "import sys; sys.path.insert(0, %r)\n"
            "import numpy as np, canopy\n"
            "env = canopy.VecEnv('connect4', 64, opponent='onestep')\n"
            "net = canopy.Net.load('connect4-zero')\n"
            "u = lambda o, l: (np.zeros((o.shape[0], 7), np.float32), np.zeros(o.shape[0], np.float32))\n"
            "it = canopy.selfplay('connect4', u, 1000, trees=16, yield_games=1, sims=8)\n"
            "next(it)\n"
            "print('live', canopy.live_handles())\n" % os.path.dirname(HERE))
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("live 3", out.stdout)
        self.assertEqual(out.stderr, "")


class TestFork(unittest.TestCase):
    def test_child_gets_clear_error(self):
        canopy.games()
        env = canopy.VecEnv("connect4", 2, opponent="random")
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            code = 1
            try:
                try:
                    env.step(np.zeros(2, np.int64))
                except RuntimeError as e:
                    if "does not survive fork()" in str(e) and "spawn" in str(e):
                        code = 0
            finally:
                os.write(w, bytes([code]))
                os._exit(0)
        os.close(w)
        got = os.read(r, 1)
        os.close(r)
        os.waitpid(pid, 0)
        self.assertEqual(got, b"\x00", "the forked child did not get the fork RuntimeError")
        env.step(np.zeros(2, np.int64) + env.reset()[1]["legal_mask"].argmax(axis=1))  # the parent still works
        env.close()


if __name__ == "__main__":
    unittest.main()
