#!/usr/bin/env bash
# Study 001's Hex validation (the Tetris Link thesis, section 6.9, figures
# 25-26, ../shared/studies/001_1320adf06c48709f.txt) under its protocol:
# UCT, RAVE and PoolRAVE against the two-distance heuristic
# hexdist (and hexpath, the rows path-*: see below), no swap rule, 100
# games per row.
#
# Seats: the thesis gave the heuristic the first move in every game; here
# the arena alternates the seats, so each row holds both seats (50 games
# each; the JSON's per_agent[].seats splits the results by seat).
#
# Budget: the thesis's 1000 ms per move at its measured rates on 7x7
# (section 6.9): about 35,000 simulations with the random default policy
# (sims=35000) and 4,500 with the heuristic one (sims=4500,
# rollout=heuristic: epsilon-greedy on Canopy's Hex heuristic).
#
# Constants: as in tetrislink.sh (thesis: UCB1 with Cp = 2.0 on 0/1
# rewards, RAVE x + alpha x_RAVE + sqrt(2 ln n / n_j) with beta = 1000,
# PoolRAVE's pool in tree selection; Canopy: the mcts defaults). The
# thesis's alpha = (beta - n_RAVE)/beta is run as printed (thesis-*: it
# turns negative beyond beta AMAF visits) and clamped at 0 (thesisclamp-*,
# ravesched=study001clamp: the reading of the thesis's words).
#
# Sizes: SIZES (default "3 5 7 9 11"; the thesis plotted 2x2 to 12x12)
# for the random default policy, HEUR_SIZES (default "3 5 7") for the
# heuristic one: Canopy's heuristic rollouts score every legal move by
# two-distance at every step, so at 4,500 simulations a game takes about
# 0.6 s of CPU on 5x5 and 8 s on 7x7 on the development machine (since
# aef7141; 12 s and 4-5 min before), growing more than tenfold per size
# step; the thesis measured 4,500 simulations per second on 7x7.
#
# Run `docs/studies/hex.sh --list` for the commands; see lib.sh for the
# options (GAMES=N for a reduced run, --time to measure).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STUDY=hex
GAMES_DEFAULT=100
SIZES=${SIZES:-3 5 7 9 11}
HEUR_SIZES=${HEUR_SIZES:-3 5 7}

. "$(dirname "${BASH_SOURCE[0]}")/study001.sh"
declare -A policy=(
	[random]="sims=35000"
	[heuristic]="sims=4500,rollout=heuristic"
)

# Opponents: hexdist (two-distance, the rows s*) and hexpath (plain
# shortest paths, the rows path-s*): the thesis describes its heuristic
# only as "based on Dijkstra's shortest path algorithm", which hexpath
# follows; hexdist beats hexpath in 93-99% of games on 5x5-11x11 (RESULTS
# section 2b), so the thesis's opponent was most likely the weaker one.
# In the path-* rows the heuristic default policy follows hexpath's score
# too (the game option heuristic=path), as the thesis's used its own
# heuristic; in the s* rows it follows hexdist's.
for opp in hexdist hexpath; do
	prefix= gopt=
	[[ $opp == hexpath ]] && prefix=path- gopt=,heuristic=path
	for pol in random heuristic; do
		sizes=$SIZES
		[[ $pol == heuristic ]] && sizes=$HEUR_SIZES
		for n in $sizes; do
			[[ $n =~ ^[0-9]+$ ]] && ((n >= 2 && n <= 13)) || die "SIZES/HEUR_SIZES: $n is not a Hex size (2..13)"
			for m in "${order[@]}"; do
				row "${prefix}s$n-$pol-$m" "hex:size=$n$gopt" "mcts:${method[$m]},${policy[$pol]};$opp"
			done
		done
	done
done

main "$@"
