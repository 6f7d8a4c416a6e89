#!/usr/bin/env bash
# Study 004's learning runs (MegaZero, section V-A and Figures 6-7,
# ../shared/studies/004_f3401d17f3deb0c0.txt): one AlphaZero loop
# (`canopy zero`) per turn-search variant, self-play searching whole
# turns with the study's budget (Connect4d d = 5: 250 network evaluations
# per turn; Strands side 4: 500), each iteration's network evaluated
# against the study's non-learning baseline.
#
# Runs (one `canopy zero` run directory each, OUT/RUN):
#   connect4d-mcts-v   connect4d-mcts-bb   connect4d-emcts-v   connect4d-emcts-bb
#   strands-mcts-v     strands-mcts-bb     strands-emcts-v     strands-emcts-bb
# and Canopy's extensions GAME-emcts-v-code, GAME-emcts-bb-code: the EMCTS
# variants trained on the policy targets of the study's published code
# (hist=code) instead of its Eq. 2 (see `canopy agents`, emcts), and
# GAME-emcts-v-node, GAME-emcts-v-evals: EMCTS-V with Canopy's countings
# (hist=node: a keep credits its own sequence; hist=evals: every
# evaluated sequence counts once), and GAME-emcts-v-{node,paper}-itemp1:
# EMCTS-V with its root sequence drawn at temperature 1.
# mcts-v and mcts-bb search with PUCT (c = 1.5, the network's priors) and
# draw each action from the visits, self-play's defaults for them (see
# `canopy selfplay --help`); emcts with its default c = 1.5/8 (the study's 8x smaller
# exploration) and the training horizon H = d (horizon=1), as the study
# trains. Baselines: Connect4d `onestep` (the study's "plays a winning
# atomic action if it has found one, otherwise a random action"; onestep
# also blocks an immediate opponent win, so it is a little stronger);
# Strands `strands-greedy` (the study's connected-area baseline).
# Training augments each position with a random symmetry of the game
# (canopy zero --augment, on by default): Connect4d's column mirror and,
# since session 15, Strands' 12 rotations and reflections of the hexagon
# (runs before it trained Strands without augmentation; a run resumed now
# augments from its next iteration on).
#
# Evaluation differs from the study in one way: every variant's network is
# evaluated with the same search, the `az` agent's PUCT per atomic action
# (EVAL_SIMS simulations per action), against the baseline and the
# previous iteration; so the curves compare the networks the variants
# learn, not their search at play time. EVAL_SIMS is 16 so that the curve
# has room: on Connect4d the untrained net scored 20% [8, 42] against
# onestep with 16 simulations per action and 80% with 50 (20 and 10
# games, 2026-11-24). The study evaluated every two
# iterations with 100 games; here every iteration with EVAL_GAMES.
#
# Scale: the study ran 50 iterations of 1,408 games per variant (4 h each
# on an RTX 3070 Ti and a 6-core i5) and does not give its training
# settings (network: "a 4-layer ResNet"; here the built-in 32x2 net of
# `canopy net init --game connect4d:d=5`, canopy zero's SGD defaults and
# STEPS steps of 128 positions per iteration). ITERATIONS, GAMES and
# EVAL_GAMES default to the study's numbers;
# on a 2-core machine use a reduced run, e.g.
#   GAMES=48 STEPS=40 EVAL_GAMES=20 ITERATIONS=12 PARALLEL=4 docs/studies/megazero.sh 'connect4d-*'
# and scale STEPS with GAMES: canopy zero logs the replay ratio (training
# samples per new position; 200 x 128 over 1,408 games is about 0.5 on
# Strands), and well above a few the value head learns the window's games
# by heart (docs/RESULTS.md, section 8: the Strands runs at 10.8).
# A run directory keeps the settings it started with (canopy zero's
# zero.json), so the same command continues it; ITERATIONS extends it.
#
# Usage: docs/studies/megazero.sh [--list | --table [RUN...] | --tournament GAME | RUN...]
#   (no argument)  run every run (shell globs select some)
#   --list         print each run's command, run nothing
#   --table [RUN...] print each run's score against its baseline per
#                  iteration (needs /usr/bin/python3 or python3)
#   --tournament GAME  Tables IV-V with networks: the four variants of GAME
#                  (connect4d or strands), each searching with the network
#                  of its own run at iteration NETITER (default: the last
#                  one all four have), all-play-all in `canopy arena`,
#                  TOURNAMENT_GAMES per pairing (1000, the study's) at
#                  TOURNAMENT_SIMS evaluations per turn (default 5x the
#                  training budget, the study's) and the EMCTS variants
#                  with HORIZON turns per genome (3, the study's H = 3d);
#                  TOURNAMENT_RUNS names other runs (space-separated);
#                  the mcts variants sample their first TEMPPLIES (10)
#                  actions from the visits so that games differ (EMCTS
#                  draws its root sequence from the policy anyway). The
#                  arena's report (pairwise scores, ILSR log-strength) goes
#                  to OUT/GAME-tournament-*.txt and the terminal.
# Variables: ITERATIONS (50), GAMES per iteration (1408), TREES (games at
# once per run, 16), STEPS (training steps per iteration, 200),
# EVAL_GAMES (100), EVAL_SIMS (16), PARALLEL (runs at once, 1; each run
# uses one kernel thread; --tournament: games at once), SEED (1), OUT (runs/studies/megazero), CANOPY
# (the binary; default: built from this checkout into bin/canopy).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ITERATIONS=${ITERATIONS:-50}
GAMES=${GAMES:-1408}
TREES=${TREES:-16}
STEPS=${STEPS:-200}
EVAL_GAMES=${EVAL_GAMES:-100}
EVAL_SIMS=${EVAL_SIMS:-16}
PARALLEL=${PARALLEL:-1}
SEED=${SEED:-1}
OUT=${OUT:-$ROOT/runs/studies/megazero}

die() {
	echo "$(basename "$0"): $*" >&2
	exit 1
}

for v in ITERATIONS GAMES TREES STEPS EVAL_GAMES EVAL_SIMS PARALLEL SEED; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "$v=${!v}: want a whole number"
done
((PARALLEL >= 1)) || die "PARALLEL=$PARALLEL: want at least 1"

RUNS=()
# run NAME GAME BASELINE SPEC [FLAGS]: one learning run (FLAGS: more
# canopy zero flags, space-separated; they come last in the command, so
# one that repeats a flag, such as --steps, wins over its default).
run() { RUNS+=("$1|$2|$3|$4|${5:-}"); }

variants() { # GAME BASELINE BUDGET PREFIX
	run "$4-mcts-v" "$1" "$2" "mcts-v:sims=$3"
	run "$4-mcts-bb" "$1" "$2" "mcts-bb:sims=$3"
	run "$4-emcts-v" "$1" "$2" "emcts:sims=$3"
	run "$4-emcts-bb" "$1" "$2" "emcts:sims=$3,bb=true"
	# The EMCTS variants with the policy targets of the study's published
	# code instead of its Eq. 2 (emcts option hist=code); not in the study.
	run "$4-emcts-v-code" "$1" "$2" "emcts:sims=$3,hist=code"
	run "$4-emcts-bb-code" "$1" "$2" "emcts:sims=$3,bb=true,hist=code"
	# EMCTS-V with Canopy's countings (search/multi, EMCTS.PolicyHistory).
	run "$4-emcts-v-node" "$1" "$2" "emcts:sims=$3,hist=node"
	run "$4-emcts-v-evals" "$1" "$2" "emcts:sims=$3,hist=evals"
	# EMCTS-V with L0 drawn at temperature 1 instead of 0.5 (docs/RESULTS.md, section 8).
	run "$4-emcts-v-node-itemp1" "$1" "$2" "emcts:sims=$3,hist=node,itemp=1"
	run "$4-emcts-v-paper-itemp1" "$1" "$2" "emcts:sims=$3,hist=paper,itemp=1"
}
variants connect4d:d=5 onestep 250 connect4d
variants strands:size=4 strands-greedy 500 strands
# Strands MCTS-V against the value head's memorisation (docs/RESULTS.md,
# section 8): value targets half the search's value (qmix), a replay
# window of 20 iterations instead of 4, 30 training steps per iteration
# instead of STEPS, self-play that samples only the first 10 stones from
# the visits (tempplies=10; the study samples every action), and
# combinations. Not in the study.
run strands-mcts-v-qmix05 strands:size=4 strands-greedy mcts-v:sims=500 "--qmix 0.5"
run strands-mcts-v-w20 strands:size=4 strands-greedy mcts-v:sims=500 "--window-iters 20"
run strands-mcts-v-w20-qmix05 strands:size=4 strands-greedy mcts-v:sims=500 "--window-iters 20 --qmix 0.5"
run strands-mcts-v-s30 strands:size=4 strands-greedy mcts-v:sims=500 "--steps 30"
run strands-mcts-v-s30-qmix05 strands:size=4 strands-greedy mcts-v:sims=500 "--steps 30 --qmix 0.5"
run strands-mcts-v-t10 strands:size=4 strands-greedy mcts-v:sims=500,tempplies=10
run strands-mcts-v-t10-qmix05 strands:size=4 strands-greedy mcts-v:sims=500,tempplies=10 "--qmix 0.5"
# Self-play leaves valued half by the network, half by a random rollout to
# the end (study 000's leaf value; Canopy's blend= turn-search key).
run strands-mcts-v-blend05 strands:size=4 strands-greedy mcts-v:sims=500,blend=0.5
# MCTS-BB at the low replay ratio: each atomic action gets a phase of its
# own, so its policy target is not the thin row of MCTS-V's walk.
run strands-mcts-bb-s30 strands:size=4 strands-greedy mcts-bb:sims=500 "--steps 30"
# Expert iteration with rollouts: self-play leaves valued by random
# rollouts alone (blend=0; the network gives the priors), value targets
# the search's root value (qmix 1; RESULTS section 8: the rollout-backed
# search values predict outcomes better than a network trained on them
# learns to), 96 games and 40 steps per iteration (replay ratio about
# 1.4); and the plain loop at the same scale as its control. Not in the
# study.
run strands-mcts-v-exit strands:size=4 strands-greedy mcts-v:sims=500,blend=0 "--games 96 --steps 40 --qmix 1"
run strands-mcts-v-g96-s40 strands:size=4 strands-greedy mcts-v:sims=500 "--games 96 --steps 40"
# EMCTS-V (hist=node, itemp=1) with each step down the tree drawn from
# the visits at temperature 1, as the study's published code does in
# self-play (steptemp; docs/RESULTS.md section 8).
run connect4d-emcts-v-node-itemp1-steptemp1 connect4d:d=5 onestep emcts:sims=250,hist=node,itemp=1,steptemp=1

# AlphaZero per atomic action (no turn search: SPEC puct, the search set by
# FLAGS) with Gumbel root search, whose policy targets (the network's
# logits improved by the completed Q values) are not the near-uniform visit
# counts of a 500-evaluation turn search (RESULTS section 8), with the
# hexagon's 12 symmetries (session 15) and value targets half the root Q.
# Not in the study.
run strands-gumbel strands:size=4 strands-greedy puct "--sims 32 --gumbel --gumbelm 8 --games 96 --steps 100 --batch 128 --qmix 0.5 --eval-policy-games 60"
# Its ablations: without the symmetries, and with PUCT's visit counts as
# policy targets instead of Gumbel's improved policy.
run strands-gumbel-noaug strands:size=4 strands-greedy puct "--sims 32 --gumbel --gumbelm 8 --games 96 --steps 100 --batch 128 --qmix 0.5 --eval-policy-games 60 --augment=false"
run strands-puct strands:size=4 strands-greedy puct "--sims 32 --games 96 --steps 100 --batch 128 --qmix 0.5 --eval-policy-games 60"

# command_of GAME BASELINE SPEC NAME [FLAGS]: the run's canopy zero command
# (SPEC puct: no --turn-search, the per-action search FLAGS set).
command_of() {
	local ts="--turn-search $3"
	[[ $3 == puct ]] && ts=""
	echo "$CANOPY zero --game $1${ts:+ $ts} --games $GAMES --trees $TREES --steps $STEPS" \
		"--eval-games $EVAL_GAMES --eval-sims $EVAL_SIMS --baselines $2 --backend cpu:threads=1" \
		"--seed $SEED --iterations $ITERATIONS${5:+ $5} --out $OUT/$4 --quiet"
}

# selected PATTERN...: SEL = the runs whose names match a pattern (all
# without patterns); a pattern matching none is an error.
selected() {
	SEL=()
	local p r hit
	if (($# == 0)); then
		SEL=("${RUNS[@]}")
		return
	fi
	for p in "$@"; do
		hit=0
		for r in "${RUNS[@]}"; do
			# shellcheck disable=SC2053 # the pattern is a glob on purpose
			if [[ ${r%%|*} == $p ]]; then
				SEL+=("$r")
				hit=1
			fi
		done
		((hit)) || die "no run matches $p (see --list)"
	done
}

table() {
	local py names=() r
	py=$(command -v /usr/bin/python3 || command -v python3) || die "--table needs python3"
	for r in "${SEL[@]}"; do names+=("${r%%|*}"); done
	"$py" - "$OUT" "${names[@]}" <<'EOF'
import json, os, sys
out, names = sys.argv[1], sys.argv[2:]
curves = {}
for n in names:
    path = os.path.join(out, n, "metrics.jsonl")
    if not os.path.exists(path):
        continue
    rows = {}
    for line in open(path):
        m = json.loads(line)
        for s in m.get("eval", {}).get("scores", []):
            if not s["opponent"].startswith("iter-"):
                rows[m["iteration"]] = (s["score"], s["lo"], s["hi"], s["games"])
    curves[n] = rows
if not curves:
    sys.exit("no finished iteration under " + out)
its = sorted({i for r in curves.values() for i in r})
print("| iteration | " + " | ".join(curves) + " |")
print("|---" * (len(curves) + 1) + "|")
for i in its:
    cells = []
    for n in curves:
        c = curves[n].get(i)
        cells.append("" if c is None else "%.0f%% [%.0f, %.0f]" % (100 * c[0], 100 * c[1], 100 * c[2]))
    print("| %d | %s |" % (i, " | ".join(cells)))
EOF
}

# tournament GAME: the networks' all-play-all (see --tournament).
tournament() {
	local game spec budget base r name runs=() it last file agents=() net
	case $1 in
	connect4d) game=connect4d:d=5 budget=250 ;;
	strands) game=strands:size=4 budget=500 ;;
	*) die "--tournament $1: want connect4d or strands" ;;
	esac
	local want=${TOURNAMENT_RUNS:-$1-mcts-v $1-mcts-bb $1-emcts-v $1-emcts-bb} w
	for w in $want; do
		for r in "${RUNS[@]}"; do
			[[ ${r%%|*} == "$w" ]] && runs+=("$r")
		done
	done
	((${#runs[@]} >= 2)) || die "TOURNAMENT_RUNS=$want: want at least two of the runs (see --list)"
	last=
	for r in "${runs[@]}"; do
		name=${r%%|*}
		it=$(find "$OUT/$name/checkpoints" -name 'iter-*.avg.safetensors' 2>/dev/null | sed 's/.*iter-0*\([0-9][0-9]*\)\.avg.*/\1/' | sort -n | tail -1)
		[[ -n $it ]] || die "$name has no checkpoint under $OUT/$name/checkpoints: run it first"
		if [[ -z $last ]] || ((it < last)); then last=$it; fi
	done
	NETITER=${NETITER:-$last}
	TOURNAMENT_SIMS=${TOURNAMENT_SIMS:-$((5 * budget))}
	TOURNAMENT_GAMES=${TOURNAMENT_GAMES:-1000}
	HORIZON=${HORIZON:-3}
	TEMPPLIES=${TEMPPLIES:-10}
	for v in NETITER TOURNAMENT_SIMS TOURNAMENT_GAMES HORIZON TEMPPLIES; do
		[[ ${!v} =~ ^[0-9]+$ ]] || die "$v=${!v}: want a whole number"
	done
	for r in "${runs[@]}"; do
		IFS='|' read -r name game base spec _ <<<"$r"
		net=$(printf '%s/%s/checkpoints/iter-%04d.avg.safetensors' "$OUT" "$name" "$((10#$NETITER))")
		[[ -f $net ]] || die "$net does not exist (NETITER=$NETITER)"
		case $spec in
		mcts-*) agents+=("${spec%%:*}:sims=$TOURNAMENT_SIMS,sel=puct,tempplies=$TEMPPLIES,eval=$net") ;;
		*) agents+=("${spec/sims=$budget/sims=$TOURNAMENT_SIMS},horizon=$HORIZON,eval=$net") ;;
		esac
	done
	file=$OUT/$1-tournament-iter$NETITER-sims$TOURNAMENT_SIMS-h$HORIZON-games$TOURNAMENT_GAMES.txt
	local IFS=';'
	echo "$CANOPY arena --game $game --agents '${agents[*]}' --games $TOURNAMENT_GAMES --seed $SEED --parallel $PARALLEL --bootstrap 0 --quiet" | tee "$file.cmd"
	"$CANOPY" arena --game "$game" --agents "${agents[*]}" --games "$TOURNAMENT_GAMES" --seed "$SEED" \
		--parallel "$PARALLEL" --bootstrap 0 --quiet >"$file.tmp" || die "the arena failed (its output: $file.tmp)"
	mv "$file.tmp" "$file"
	cat "$file"
}

mode=run
case ${1:-} in
--tournament)
	[[ $# == 2 ]] || die "--tournament takes one game: connect4d or strands"
	if [[ -z ${CANOPY:-} ]]; then
		CANOPY=$ROOT/bin/canopy
		(cd "$ROOT" && go build -o bin/canopy ./cmd/canopy) || die "go build ./cmd/canopy failed"
	fi
	tournament "$2"
	exit
	;;
--list)
	mode=list
	shift
	;;
--table)
	mode=table
	shift
	;;
-*) die "unknown option $1 (use --list, --table or run names)" ;;
esac
selected "$@"
if [[ $mode == table ]]; then
	table
	exit
fi
if [[ $mode == list ]]; then
	CANOPY=${CANOPY:-bin/canopy}
	for r in "${SEL[@]}"; do
		IFS='|' read -r name game base spec flags <<<"$r"
		echo "$name: $(command_of "$game" "$base" "$spec" "$name" "$flags")"
	done
	exit
fi

if [[ -z ${CANOPY:-} ]]; then
	CANOPY=$ROOT/bin/canopy
	(cd "$ROOT" && go build -o bin/canopy ./cmd/canopy) || die "go build ./cmd/canopy failed"
fi
[[ -x $CANOPY ]] || die "CANOPY=$CANOPY is not an executable"
mkdir -p "$OUT"
{
	echo "commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "cpu $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //')"
	echo "cores $(nproc)"
	echo "$(go version 2>/dev/null || echo 'go: not found')"
	echo "date $(date -u +%FT%TZ)"
	echo "ITERATIONS=$ITERATIONS GAMES=$GAMES TREES=$TREES STEPS=$STEPS EVAL_GAMES=$EVAL_GAMES EVAL_SIMS=$EVAL_SIMS PARALLEL=$PARALLEL SEED=$SEED"
} >>"$OUT/env.txt"

status=0
pids=() running=()
for r in "${SEL[@]}"; do
	IFS='|' read -r name game base spec flags <<<"$r"
	cmd=$(command_of "$game" "$base" "$spec" "$name" "$flags")
	echo "$name: $cmd"
	mkdir -p "$OUT/$name"
	$cmd >>"$OUT/$name.log" 2>&1 &
	pids+=($!) running+=("$name")
	if ((${#pids[@]} >= PARALLEL)); then
		wait "${pids[0]}" || { echo "${running[0]}: failed, see $OUT/${running[0]}.log" >&2; status=1; }
		pids=("${pids[@]:1}") running=("${running[@]:1}")
	fi
done
for i in "${!pids[@]}"; do
	wait "${pids[$i]}" || { echo "${running[$i]}: failed, see $OUT/${running[$i]}.log" >&2; status=1; }
done
((status == 0)) || die "some runs failed: see the .log files in $OUT"
echo "done; the curves: $0 --table"
