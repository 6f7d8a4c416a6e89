// Package zoo ships trained networks inside the binary. Importing it (the
// canopy command does) registers each network by name with
// nets.RegisterShipped and makes it its game's default: agents that say
// net=default (the az and policy agents' default) then play with it, and
// net=NAME names it explicitly.
//
// Shipped networks:
//
//   - connect4-zero (the default since 2026-11-29, session 23): Connect
//     Four, 32 channels x 4 residual blocks, the Polyak-averaged network of
//     iteration 394 of the `canopy zero --randomplies 12 --qmix 0.5
//     --precision bf16` run recorded in docs/RESULTS.md (section "AlphaZero
//     on Connect Four from zero"; 78,800 self-play games, about two hours
//     of the idle 2-core machine): on the 400 solver-labelled positions the
//     network alone plays an optimal move in 89.8% of them, with 800
//     simulations in 98.2%; against connect4-zero-v3 it scores 58.0% over
//     200 games at 200 simulations a move (166 of them drawn).
//   - connect4-zero-v3: the default before, the same run's iteration 139
//     (27,800 games, about 40 minutes): 78.8% alone, 95.8% with 800
//     simulations; against connect4-zero-v2 it scores 72.2% over 200 games.
//     Figures in docs/ dated 2026-11-29 before session 23 that name
//     connect4-zero measured this network.
//   - connect4-zero-v2: the default before, same shape, iteration 144 of the
//     `canopy zero --randomplies 12` run of the same section (28,800 games,
//     120 minutes of loop time): 75.8% alone, 93.2% with 800 simulations.
//     Figures in docs/ dated before 2026-11-29 that name connect4-zero
//     measured this network.
//   - connect4-zero-v1: the default before v2, same shape, iteration 34 of
//     that section's phase 2 (11,600 games): 49.5% alone, 89.5% with 800
//     simulations. Against each other (40 games, seats alternating) v1
//     wins at 200 simulations per move (72.5%) and loses at 800 (26.2%);
//     against rollout MCTS the current network is the stronger one alone
//     and level with search (docs/RESULTS.md).
//   - connect4d-zero (the default for connect4d:d=5): Connect4d with five
//     actions per turn, the built-in 32 channels x 2 blocks, the
//     Polyak-averaged network of iteration 40 of study 004's MCTS-BB
//     learning run recorded in docs/RESULTS.md (section 8; 1,920 self-play
//     games searched whole-turn by MCTS-BB at 250 evaluations per turn):
//     the network alone, taking its most probable action at each step,
//     beats `onestep` in 97 of 100 games.
//   - strands-zero (the default for strands:size=4): Strands on the board
//     of side 4, the built-in 32 channels x 2 blocks, the Polyak-averaged
//     network of iteration 300 of the `strands-gumbel` run recorded in
//     docs/RESULTS.md (section 8; AlphaZero per atomic action with Gumbel
//     root search over 32 simulations, the hexagon's 12 symmetries, 28,800
//     self-play games, 24 minutes on one core): its policy alone beats
//     `strands-greedy` in 198 of 200 games, with 16 simulations per action
//     in 200 of 200.
//   - sushigo2-zero (the default for sushigo:players=2 since 2026-11-29,
//     session 29): Sushi Go! at two players on the simultaneous view, the
//     built-in 32 channels x 2 blocks with the scalar value head, the
//     Polyak-averaged network of iteration 100 of the `s2r` run in
//     docs/RESULTS.md (section 10, "Self-play in the arena's rollout
//     form"): v2 continued by self-play searched as the arena's az
//     searches, 800 simulations a move with a quarter of each leaf value
//     from the network and the rest from a 10-turn rollout scored by the
//     game's state evaluation (`--blend 0.25 --turns 10 --cut state --qmix
//     0.5`); 6,400 games, about 32 CPU-minutes. Against alpha-AMAF +
//     Heuristic at equal time it won alone on 77.5% of 200 deals where v2
//     had won on 70.5%; see there for its 1,000-game final.
//   - sushigo2-zero-v2: the default before, same shape, iteration 47 of a
//     `canopy zero` run continued from sushigo2-zero-v1 with 256
//     simulations a self-play move and Q-mixed value targets (--qmix 0.5;
//     3,008 games, 631 CPU-s) recorded in docs/RESULTS.md (section 10, "A
//     stronger two-player network"): 63.1% [60.1, 66.0] over 1,000 games
//     against alpha-AMAF + Heuristic; figures in docs/ dated before session
//     29 that name sushigo2-zero measured this network.
//   - sushigo2-zero-v1: the default before, same shape, iteration 40 of
//     the `z4-sushigo` run of the same section (2,560 self-play games of
//     64 simulations, 8.7 minutes of loop time): 82.5% against
//     sushigo-heuristic with 64 simulations a move, and its policy alone
//     beats sushigo-heuristic in 15 of 20 games.
//   - sushigo4-zero (the default for sushigo:players=4 since 2026-11-30,
//     session 31): the same at four players, the built-in 32x2 net with
//     the scalar value head, the Polyak-averaged network of iteration 200
//     of the `s4r` run in docs/RESULTS.md (section 10): v1 continued by
//     self-play searched as the four-player arena's az searches (800
//     simulations a move, half of each leaf value from a 10-turn rollout
//     scored by the game's state evaluation: `--blend 0.5 --turns 10
//     --cut state --qmix 0.5`); 12,800 games, about 97 minutes of both
//     cores of a 2-vCPU Xeon. Against three alpha-AMAF + Heuristic (az
//     at 8,500 simulations, about 0.85x their time a move) it won alone
//     on 43% of 100 development deals where v1 had won on 28%; see there
//     for its 200-game finals at equal time.
//   - sushigo4-zero-v1: the default before, same shape (the per-player
//     head trained on the same budget lost to it head to head: section
//     10), iteration 30 of 64 games of 64 simulations (5.5 CPU-minutes).
//   - tetrislink3-zero (the default for tetrislink:players=3 since
//     2026-11-29, session 28): Tetris Link at three players, the same
//     32 channels x 2 blocks with one value per player, the
//     Polyak-averaged network of iteration 150 of the `tl3nv` run in
//     docs/RESULTS.md (section 10, "Self-play with the network on a
//     leaf's eighth visit"): v2 continued by self-play searched as the
//     arena's strongest form searches, 1,100 simulations a move with the
//     network on a leaf's eighth visit and leaf values three quarters from
//     a rollout (`--netvisits 8 --c 2.5 --blend 0.25 --turns 32 --cut
//     heuristic`); 9,600 games, 90 CPU-minutes. In that form at equal CPU
//     against two UCT agents (8,400 simulations against 52,000 on the
//     development seed) it won alone in 46.0% of 200 games where v2 won
//     33.5% (paired p = 0.02), and in 49.0% of 200 on a fresh seed (v2
//     31.0%).
//   - tetrislink3-zero-v2: the default before, the averaged network of
//     iteration 100 of the `tl3b` run (v1 continued by expert iteration
//     whose self-play searched 128 simulations with leaf values three
//     quarters from a random rollout; 6,336 games). At 1,050 simulations
//     (about 100 ms of CPU a move) it won alone in 92.0% of 200 games
//     against two tuned heuristics (v1 63.0%, the untrained network 67.0%,
//     on the same seed) and in 26.5% against two UCT agents at the same
//     CPU (v1 6.0%).
//   - tetrislink3-zero-v1: the default before v2, iteration 68 of a plain
//     `canopy zero` run of 64 games of 64 simulations an iteration; in the
//     rollout form above the untrained network does as well as it does.
//   - tetrislink4-zero (the default for tetrislink:players=4): the same
//     at four players, iteration 51 of the `tl4-zero` run of the same
//     section (64 games of 64 simulations an iteration, about 40 minutes
//     of loop time). With leaf values three quarters from a 12-turn random
//     rollout scored by the heuristic (`blend=0.25,turns=12,cut=heuristic`)
//     at 900 simulations (100 ms of CPU a move) it won alone in 62.5% of
//     400 games against three tuned heuristics (docs/RESULTS.md, section
//     10, session tlink2); its policy alone wins 47.5% of its comparisons
//     with them (the untrained network's 0.8%).
//
// The files are ordinary checkpoints (safetensors with the nets config and
// the training lineage in the metadata): `canopy net info` reads them.
package zoo

import (
	_ "embed"

	"github.com/canopy-go/canopy/nets"
)

//go:embed connect4.safetensors
var connect4 []byte

//go:embed connect4-v3.safetensors
var connect4v3 []byte

//go:embed connect4-v2.safetensors
var connect4v2 []byte

//go:embed connect4-v1.safetensors
var connect4v1 []byte

//go:embed connect4d.safetensors
var connect4d []byte

//go:embed strands.safetensors
var strands []byte

//go:embed sushigo2.safetensors
var sushigo2 []byte

//go:embed sushigo2-v2.safetensors
var sushigo2v2 []byte

//go:embed sushigo2-v1.safetensors
var sushigo2v1 []byte

//go:embed sushigo4.safetensors
var sushigo4 []byte

//go:embed sushigo4-v1.safetensors
var sushigo4v1 []byte

//go:embed tetrislink3.safetensors
var tetrislink3 []byte

//go:embed tetrislink3-v2.safetensors
var tetrislink3v2 []byte

//go:embed tetrislink3-v1.safetensors
var tetrislink3v1 []byte

//go:embed tetrislink4.safetensors
var tetrislink4 []byte

func init() {
	nets.RegisterShipped("connect4-zero", "connect4", "AlphaZero-trained 32x4 net (394 iterations with random openings, Q-mixed value targets, bfloat16), see docs/RESULTS.md", connect4)
	nets.RegisterShipped("connect4-zero-v3", "connect4", "the earlier AlphaZero-trained 32x4 net (iteration 139 of the same run), see docs/RESULTS.md", connect4v3)
	nets.RegisterShipped("connect4-zero-v2", "connect4", "the earlier AlphaZero-trained 32x4 net (144 iterations with random openings), see docs/RESULTS.md", connect4v2)
	nets.RegisterShipped("connect4-zero-v1", "connect4", "the earlier AlphaZero-trained 32x4 net (62 iterations), see docs/RESULTS.md", connect4v1)
	nets.SetDefault("connect4-zero")
	nets.RegisterShipped("connect4d-zero", "connect4d:d=5", "study 004's MCTS-BB AlphaZero run, 32x2 net (40 iterations of 48 games), see docs/RESULTS.md", connect4d)
	nets.SetDefault("connect4d-zero")
	nets.RegisterShipped("strands-zero", "strands:size=4", "AlphaZero per atomic action with Gumbel root search, 32x2 net (300 iterations of 96 games), see docs/RESULTS.md", strands)
	nets.SetDefault("strands-zero")
	nets.RegisterShipped("sushigo2-zero", "sushigo:players=2", "AlphaZero on the simultaneous view, 32x2 net, scalar value head (v2 continued 100 iterations of self-play in the arena's rollout form), see docs/RESULTS.md", sushigo2)
	nets.RegisterShipped("sushigo2-zero-v2", "sushigo:players=2", "the earlier AlphaZero-trained 32x2 net, scalar value head (v1 continued 47 iterations at 256 simulations, Q-mixed value targets), see docs/RESULTS.md", sushigo2v2)
	nets.RegisterShipped("sushigo2-zero-v1", "sushigo:players=2", "the earlier AlphaZero-trained 32x2 net, scalar value head (40 iterations of 64 games), see docs/RESULTS.md", sushigo2v1)
	nets.SetDefault("sushigo2-zero")
	nets.RegisterShipped("sushigo4-zero", "sushigo:players=4", "AlphaZero on the simultaneous view, 32x2 net, scalar value head (v1 continued 200 iterations of self-play in the arena's rollout form), see docs/RESULTS.md", sushigo4)
	nets.RegisterShipped("sushigo4-zero-v1", "sushigo:players=4", "the earlier AlphaZero-trained 32x2 net, scalar value head (30 iterations of 64 games), see docs/RESULTS.md", sushigo4v1)
	nets.SetDefault("sushigo4-zero")
	nets.RegisterShipped("tetrislink3-zero", "tetrislink:players=3", "AlphaZero-trained 32x2 net, one value per player (v2 continued 150 iterations of self-play with the network on a leaf's eighth visit), see docs/RESULTS.md", tetrislink3)
	nets.RegisterShipped("tetrislink3-zero-v2", "tetrislink:players=3", "the earlier AlphaZero-trained 32x2 net, one value per player (v1 continued 100 iterations with rollout-valued self-play), see docs/RESULTS.md", tetrislink3v2)
	nets.RegisterShipped("tetrislink3-zero-v1", "tetrislink:players=3", "the earlier AlphaZero-trained 32x2 net, one value per player (68 iterations of 64 games), see docs/RESULTS.md", tetrislink3v1)
	nets.SetDefault("tetrislink3-zero")
	nets.RegisterShipped("tetrislink4-zero", "tetrislink:players=4", "AlphaZero-trained 32x2 net, one value per player (51 iterations of 64 games), see docs/RESULTS.md", tetrislink4)
	nets.SetDefault("tetrislink4-zero")
}
