#!/usr/bin/env bash
# Study 001 (the Tetris Link thesis, ../shared/studies/001_1320adf06c48709f.txt)
# under its own protocol: MCTS (UCT, RAVE, PoolRAVE) against the
# heuristic agents, two players, seats alternating, 100 games per row.
#
# Budgets: the thesis ran 1000 ms per move at 3.5k-16k nodes/s (section
# 5.1.1, appendix B.4), so each method runs at both ends of that budget in
# simulations (sims=3500, sims=16000) and at 1 s per move on this machine
# (time=1s).
#
# Constants: the thesis's (section 4.1, appendix B.4) against Canopy's
# defaults.
#   thesis UCT       UCB1 = X_j + 2 Cp sqrt(2 ln n_s / n_j) on 0/1 rewards,
#                    Cp = 2.0: sel=uct,rewards=01,c=5.657 (c = 2 sqrt(2) Cp;
#                    the thesis's program multiplied sqrt(ln n_s / n_j) by
#                    2.0 directly, which is c=2 here)
#   thesis RAVE      x_j + alpha x_RAVE + sqrt(2 ln n_s / n_j),
#                    alpha = (beta - n_RAVE)/beta, beta = 1000:
#                    sel=rave,ravesched=study001,ravek=1000 as printed
#                    (alpha < 0 beyond beta AMAF visits), and with alpha
#                    clamped at 0 (thesisclamp-*: ravesched=study001clamp,
#                    the reading of the thesis's words)
#   thesis PoolRAVE  the same with the pool in tree selection: with
#                    probability p a selection step takes one of the k
#                    edges with the best RAVE value (pool=tree; the thesis
#                    gives neither p nor k: poolp=0.5 as its program,
#                    poolk=10 Canopy's default)
#   Canopy           sel=uct (c = 1.4 on [-1, 1]), sel=rave and
#                    sel=poolrave with their defaults (beta = sqrt(k/(3n+k)),
#                    k = 1000, c = 0.3; pool in the rollouts)
# Not reproduced: the thesis's 50 rollouts per leaf (appendix B.4
# "Simulation amount"), its tree parallelism over all cores and its
# transposition table; every agent here searches on one thread.
#
# Opponents: heuristic:weights=user (hand-set 2/1/1/4) and
# heuristic:weights=tuned (Canopy's tuned weights).
#
# Run `docs/studies/tetrislink.sh --list` for the commands; see lib.sh for
# the options (GAMES=N for a reduced run, --time to measure).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STUDY=tetrislink
GAMES_DEFAULT=100

. "$(dirname "${BASH_SOURCE[0]}")/study001.sh"

for budget in sims=3500 sims=16000 time=1s; do
	for opp in user tuned; do
		for m in "${order[@]}"; do
			row "${budget/=/}-$m-$opp" tetrislink:players=2 "mcts:${method[$m]},$budget;heuristic:weights=$opp"
		done
	done
done

main "$@"
