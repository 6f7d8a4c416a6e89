#!/usr/bin/env bash
# Study 004's tournaments without networks (MegaZero, section VI, Tables
# IV and V, ../shared/studies/004_f3401d17f3deb0c0.txt): the turn-level
# search variants of package search/multi in all-play-all tournaments on
# Connect4d (d = 5) and Strands (side 4), leaves evaluated by random
# rollouts instead of the study's trained networks.
#
# Rows (one canopy arena run each; GAMES games per pairing, seats
# alternating; the study played 1,000 per match):
#   connect4d-study, strands-study  the four variants of Tables IV and V
#       with the study's tournament settings: 5x the self-play budget
#       (Connect4d 1,250 and Strands 2,500 evaluations per turn) and the
#       EMCTS variants with the flexible horizon H = 3d (horizon=3);
#   connect4d-more, strands-more    the same four plus EMCTS-V with the
#       training horizon H = d (horizon=1) and the tree-less baseline oep,
#       at the same budgets.
# Constants are Canopy's defaults (mcts-v and mcts-bb: the mcts agent's
# UCT; emcts: c = 1.5/8, the study's 8x smaller exploration; see `canopy
# agents`).
#
# Tables: `docs/studies/multi.sh --table [ROW...]` prints each finished
# row in the format of Tables IV and V: the row agent's score against the
# column agent (wins + draws/2, percent) and its ILSR log-strength
# (natural log: a difference of 1 is a 73% expected score), the study's
# "Est. Rating". A run prints the tables of the rows it finished.
#
# Time: `docs/studies/multi.sh --time` plays TIME_GAMES (2) games of
# every pairing of each row; its "s/game" column is the time of one game
# of every pairing (6 pairings in the -study rows, 15 in the -more rows)
# and its CPU hours are for the whole row at GAMES games per pairing.
# Measured 2026-11-23 on the 2-vCPU AMD EPYC (AVX2, no AVX-512)
# development machine while other jobs kept its load average near 12, so
# an idle core is likely 2-4x faster:
#   row              s per game of every pairing   CPU h at 1,000 games
#   connect4d-study   2.8 (0.5 s per game)          0.78
#   strands-study     8.2 (1.4 s per game)          2.27
#   connect4d-more   11.1 (0.7 s per game)          3.09
#   strands-more      9.3 (0.6 s per game)          2.57
# (two games per pairing: the per-game times vary with game length; the
# full protocol is about 9 CPU hours at most). Every agent searches on one
# thread: PARALLEL=N plays N games at once on N idle cores.
#
# Run `docs/studies/multi.sh --list` for the commands; see lib.sh for the
# options (GAMES=N for a reduced run, OUT, SEED, PARALLEL, CANOPY).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STUDY=multi
GAMES_DEFAULT=1000

study_agents() { # BUDGET
	echo "mcts-v:sims=$1;mcts-bb:sims=$1;emcts:sims=$1,horizon=3;emcts:sims=$1,horizon=3,bb=true"
}

row connect4d-study connect4d:d=5 "$(study_agents 1250)"
row strands-study strands:size=4 "$(study_agents 2500)"
row connect4d-more connect4d:d=5 "$(study_agents 1250);emcts:sims=1250;oep:sims=1250"
row strands-more strands:size=4 "$(study_agents 2500);emcts:sims=2500;oep:sims=2500"

# table NAME: the row's JSON as Tables IV-V (score of row against column,
# then the ILSR log-strength).
table() {
	local f=$OUT/$1.json
	[[ -s $f ]] || die "row $1 has no results yet ($f)"
	echo "$1 ($(jq -r '.game' "$f"), $(jq -r '.games_per_table' "$f") games per pairing$(jq -r 'if .partial then ", partial" else "" end' "$f"))"
	jq -r '
		.agents as $a | .ilsr as $r |
		(["Row vs. Col"] + [range($a | length) | "A\(. + 1)"] + ["Est. Rating"] | @tsv),
		(range($a | length) as $i |
			["A\($i + 1)"] +
			[range($a | length) as $j |
				if $i == $j then "-"
				else (.pairwise[$i][$j].score.value // null |
					if . == null then "n/a" else "\(. * 1000 | round / 10) %" end)
				end] +
			["\($r[$i] * 100 | round / 100)"] | @tsv)
	' "$f" | column -t -s $'\t'
	jq -r '.agents | to_entries[] | "A\(.key + 1) = \(.value)"' "$f"
	echo
}

if [[ ${1:-} == --table ]]; then
	shift
	GAMES=${GAMES:-$GAMES_DEFAULT}
	OUT=${OUT:-$ROOT/runs/studies/$STUDY}
	selected "$@"
	for r in "${SEL[@]}"; do
		name=${r%%|*}
		if [[ -s $OUT/$name.json ]]; then
			table "$name"
		fi
	done
	exit 0
fi

main "$@"
case ${1:-} in
--list | --time) ;;
*)
	selected "$@"
	for r in "${SEL[@]}"; do
		table "${r%%|*}"
	done
	;;
esac
