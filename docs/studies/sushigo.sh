#!/usr/bin/env bash
# Study 003 (Sushi Go!, ../shared/studies/003_724617d10ef98f54.txt) under
# its own protocol, Tables I-II: each enhanced MCTS against the standard
# MCTS, 100 ms per move, 1000 games per row. The published figures fit a
# two-player head-to-head (+/-1.4% is the binomial error of 1000 games and
# every mean ordinal equals 2 - win rate), so the main table is
# sushigo:players=2 (10-card hands, 3 rounds); the 4-player table (one
# method against three standard MCTS, 8-card hands) is Canopy's extension.
#
# Study constants (section IV.E): K = 5 (c=5), progressive bias factor
# b = 0.2 and eq. 5 (pbform=study003), AMAF k = 1000 with UCB1-Tuned
# exploration (sel=alphaamaf,ravek=1000,amafexplore=ucb1tuned), rollouts
# of 10 moves (turns=10: a trick of simultaneous picks is one move). The
# study does not publish how the cut-off rollout is scored or what
# "+ Heuristic" adds; read here as: the plain rows score the cut-off
# position by the game's running scores (cut=score), the "+ Heuristic"
# rows by the study's state evaluation (its Algorithm 1, EVALUATESTATE:
# cut=state, the running score plus this round's table with partial
# credit for unfinished sets and the maki and pudding standings
# projected), and "PB + Heuristic" also uses Canopy's sushigo heuristic
# in the bias term, while "Progressive Bias" alone is eq. 5 as printed,
# b/(1+n) without a heuristic (pbh=one). The *-heur1ply rows are a first
# reading, kept for comparison: the cut scored by each player's best
# one-pick heuristic gain alone (cut=heuristic), which ignores the points
# already on the table. The study also lists "biased rollouts [that]
# introduce heuristic knowledge to guide the simulation process" among its
# implementation details without saying which agents use them; the
# *-heur-hr rows read it as the "+ Heuristic" agents' rollouts being
# epsilon-greedy on Canopy's sushigo heuristic (rollout=heuristic, epsilon
# 0.1), the rest as above. Hidden hands: every agent uses Canopy's root
# determinization (8 deals, the time split over them).
#
# Canopy's own settings side by side: UCT c = 1.4 with full random
# rollouts (mcts defaults), and the methods with their defaults.
#
# Run `docs/studies/sushigo.sh --list` for the commands; see lib.sh for
# the options (GAMES=N for a reduced run, --time to measure).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STUDY=sushigo
GAMES_DEFAULT=1000

t=time=100ms
study_base="mcts:sel=uct,c=5,$t,turns=10,cut=score"
study_pb="mcts:pbform=study003,pbh=one,$t,turns=10,cut=score"
study_pb_heur="mcts:pbform=study003,$t,turns=10,cut=state"
study_ucbt_heur="mcts:sel=ucb1tuned,c=5,$t,turns=10,cut=state"
study_amaf_heur="mcts:sel=alphaamaf,ravek=1000,amafexplore=ucb1tuned,c=5,$t,turns=10,cut=state"
canopy_base="mcts:$t"

for p in 2 4; do
	base3=$study_base
	cbase3=$canopy_base
	if ((p == 4)); then
		base3="$study_base;$study_base;$study_base"
		cbase3="$canopy_base;$canopy_base;$canopy_base"
	fi
	g=sushigo:players=$p
	# Table II (study constants)
	row p$p-study-control "$g" "$study_base;$base3"
	row p$p-study-pb "$g" "$study_pb;$base3"
	row p$p-study-pb-heur "$g" "$study_pb_heur;$base3"
	row p$p-study-ucbt-heur "$g" "$study_ucbt_heur;$base3"
	row p$p-study-amaf-heur "$g" "$study_amaf_heur;$base3"
	if ((p == 2)); then
		row p2-study-pb-heur1ply "$g" "${study_pb_heur/cut=state/cut=heuristic};$base3"
		row p2-study-ucbt-heur1ply "$g" "${study_ucbt_heur/cut=state/cut=heuristic};$base3"
		row p2-study-amaf-heur1ply "$g" "${study_amaf_heur/cut=state/cut=heuristic};$base3"
		row p2-study-pb-heur-hr "$g" "$study_pb_heur,rollout=heuristic;$base3"
		row p2-study-ucbt-heur-hr "$g" "$study_ucbt_heur,rollout=heuristic;$base3"
		row p2-study-amaf-heur-hr "$g" "$study_amaf_heur,rollout=heuristic;$base3"
	fi
	# Canopy's settings
	if ((p == 2)); then
		row p2-canopy-vs-study "$g" "$canopy_base;$study_base"
		row p2-canopy-pb "$g" "mcts:bias=1,$t;$cbase3"
		row p2-canopy-ucbt "$g" "mcts:sel=ucb1tuned,$t;$cbase3"
		row p2-canopy-amaf "$g" "mcts:sel=alphaamaf,$t;$cbase3"
	fi
done

main "$@"
