# lib.sh: the runner shared by the study protocol scripts in this folder
# (sushigo.sh, tetrislink.sh, hex.sh). It is sourced, not run. A script
# declares its table rows with `row NAME GAME AGENTS`, sets GAMES_DEFAULT
# and STUDY, and calls `main "$@"`.
#
# Every row is one `canopy arena` run between the row's agents (two-player
# games: GAMES games with seats alternating; the 4-player Sushi Go table:
# GAMES games with seats rotated), written as JSON to $OUT/NAME.json (the
# per-agent columns: sole and shared wins, pairwise score, mean ordinal,
# ms per move, by seat) with the exact command in $OUT/NAME.cmd. A row
# whose JSON exists is skipped, and every finished game is logged to
# $OUT/NAME.games/ as it ends (arena --logs), so an interrupted run
# (Ctrl-C, kill, a lost machine) resumes at the game where it stopped
# (arena --resume): the row's result is the same as without the
# interruption, but for the times per move. $OUT/env.txt records the
# commit, CPU, Go version and date of the last run, and $OUT/NAME.runs one
# line per start or resume of the row (date, games logged, the canopy
# binary and its SHA-256, the checkout's commit, CPU): a row resumed with
# another binary shows it there and in --table.
#
# Usage: SCRIPT [--list | --time | --table | ROW...]
#   (no argument)  run every row
#   ROW...         run these rows (names from --list; shell globs allowed)
#   --list         print every row's name and command, run nothing
#   --time [ROW...] play TIME_GAMES games of each row (default 2), one
#                  at a time, and print the wall time per game and the
#                  estimated CPU time of the full protocol (GAMES games)
#   --table [ROW...] print the rows done in $OUT as a Markdown table, one
#                  line per agent (a row whose NAME.runs lists more
#                  than one binary is marked): games, sole wins in each seat (the
#                  first mover's seat first), pairwise score with its 95% Wilson
#                  interval, mean ordinal and time per move; rows begun
#                  but not finished with the games so far (arena --report,
#                  with $CANOPY or bin/canopy), rows not begun as missing
#                  (needs jq)
# Variables:
#   GAMES     games per row (the study's count by default); smaller for a
#             reduced run
#   OUT       output folder (default runs/studies/STUDY)
#   SEED      arena seed (default 20261123)
#   PARALLEL  games at once (default 1: the budgets in time need idle
#             cores; every agent searches on one thread)
#   CANOPY    the canopy binary (default: built from this checkout into
#             bin/canopy before the run)

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SEED=${SEED:-20261123}
PARALLEL=${PARALLEL:-1}
TIME_GAMES=${TIME_GAMES:-2}
ROWS=()

die() {
	echo "$(basename "$0"): $*" >&2
	exit 1
}

# row NAME GAME AGENTS: one table row (AGENTS separated by ';').
row() {
	[[ $1 =~ ^[a-z0-9][a-z0-9._-]*$ ]] || die "row name $1: use a-z, 0-9, '.', '_', '-'"
	ROWS+=("$1|$2|$3")
}

# quote ARG...: the arguments as shell words, single-quoted where needed.
quote() {
	local a out=()
	for a in "$@"; do
		if [[ $a =~ ^[A-Za-z0-9_./:=+-]+$ ]]; then
			out+=("$a")
		else
			[[ $a != *"'"* ]] || die "argument $a holds a single quote"
			out+=("'$a'")
		fi
	done
	echo "${out[*]}"
}

# command_of GAME AGENTS N [LOGS]: the arena command of a row with N
# games; with LOGS, logging each game there and resuming from the games
# logged there already.
command_of() {
	local logs=()
	[[ -z ${4:-} ]] || logs=(--logs "$4" --resume)
	quote "$CANOPY" arena --game "$1" --agents "$2" --games "$3" --seed "$SEED" \
		--parallel "$PARALLEL" --bootstrap 0 --json --quiet "${logs[@]}"
}

build() {
	if [[ -z ${CANOPY:-} ]]; then
		CANOPY=$ROOT/bin/canopy
		(cd "$ROOT" && go build -o bin/canopy ./cmd/canopy) || die "go build ./cmd/canopy failed"
	fi
	[[ -x $CANOPY ]] || die "CANOPY=$CANOPY is not an executable"
}

# selected PATTERN...: sets SEL to the rows whose names match a pattern
# (every row without patterns); a pattern matching no row is an error.
selected() {
	local r name p hit
	SEL=()
	if (($# == 0)); then
		SEL=("${ROWS[@]}")
		return
	fi
	for p in "$@"; do
		hit=0
		for r in "${ROWS[@]}"; do
			name=${r%%|*}
			# shellcheck disable=SC2053 # the pattern is a glob on purpose
			if [[ $name == $p ]]; then
				SEL+=("$r")
				hit=1
			fi
		done
		((hit)) || die "no row matches $p (see --list)"
	done
}

# record_run NAME: appends the row's provenance line to $OUT/NAME.runs.
record_run() {
	local n sum
	n=$({ find "$OUT/$1.games" -maxdepth 1 -name 'game-*.json' 2>/dev/null || true; } | wc -l)
	sum=$(sha256sum <"$CANOPY" | cut -c1-16)
	printf '%s\tgames logged %d\tcanopy %s sha256 %s\tcheckout %s%s\tcpu %s x %s\n' \
		"$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$n" "$CANOPY" "$sum" \
		"$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
		"$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (uncommitted changes)')" \
		"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" "$(nproc)" >>"$OUT/$1.runs"
}

write_env() {
	{
		echo "study: $STUDY"
		echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "commit: $(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (uncommitted changes)')"
		echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc) ($(grep -m1 -o -w 'avx512f' /proc/cpuinfo || grep -m1 -o -w avx2 /proc/cpuinfo || echo 'no AVX2'))"
		echo "go: $(go version 2>/dev/null || echo unknown)"
		echo "canopy: $CANOPY"
		echo "games per row: $GAMES, seed $SEED, parallel $PARALLEL"
	} >"$OUT/env.txt.tmp"
	mv "$OUT/env.txt.tmp" "$OUT/env.txt"
}

run_rows() {
	local r name game agents cmd
	mkdir -p "$OUT"
	exec 9>"$OUT/.lock"
	flock -n 9 || die "another run holds $OUT (its lock file $OUT/.lock)"
	selected "$@"
	write_env
	for r in "${SEL[@]}"; do
		IFS='|' read -r name game agents <<<"$r"
		if [[ -s $OUT/$name.json ]]; then
			echo "$name: done already ($OUT/$name.json)"
			continue
		fi
		cmd=$(command_of "$game" "$agents" "$GAMES" "$OUT/$name.games")
		echo "$name: $cmd"
		echo "$cmd" >"$OUT/$name.cmd"
		record_run "$name"
		eval "$cmd" >"$OUT/$name.json.tmp" || die "row $name failed (partial output in $OUT/$name.json.tmp)"
		mv "$OUT/$name.json.tmp" "$OUT/$name.json"
		jq -r --arg row "$name" '.per_agent[] | "\($row)\t\(.agent)\tsole \(.sole_wins)/\(.games) shared \(.shared_wins)\tpair \(.pair_score.value*1000|round/10)% [\(.pair_score.lo*1000|round/10), \(.pair_score.hi*1000|round/10)]\tordinal \(.mean_ordinal.value*1000|round/1000)\t\(.move_time_s*1e4|round/10) ms/move"' \
			"$OUT/$name.json" 2>/dev/null || true
	done
}

# table_rows PATTERN...: the --table mode (see the header).
table_rows() {
	local r name game agents missing=() begun=() n json label
	command -v jq >/dev/null || die "--table needs jq (Debian: apt-get install jq)"
	CANOPY=${CANOPY:-$ROOT/bin/canopy}
	selected "$@"
	echo "| row | agent | games | sole wins by seat | pairwise score [95%] | mean ordinal | ms/move |"
	echo "|---|---|---|---|---|---|---|"
	for r in "${SEL[@]}"; do
		IFS='|' read -r name game agents <<<"$r"
		json=$OUT/$name.json
		label=$name
		if [[ ! -s $json ]]; then
			n=$({ find "$OUT/$name.games" -maxdepth 1 -name 'game-*.json' 2>/dev/null || true; } | wc -l)
			if ((n == 0)); then
				missing+=("$name")
				continue
			fi
			begun+=("$name ($n games)")
			# The games so far (arena --report), when a canopy binary is at hand.
			[[ -x $CANOPY ]] || continue
			json=$(mktemp)
			eval "$(command_of "$game" "$agents" "$GAMES" "$OUT/$name.games") --report" >"$json" ||
				die "arena --report on $OUT/$name.games failed"
			label="$name (so far)"
		fi
		# A row played by more than one binary says so.
		n=$({ awk -F'\t' '{print $3}' "$OUT/$name.runs" 2>/dev/null || true; } | awk '{print $NF}' | sort -u | wc -l)
		((n <= 1)) || label="$label [$n binaries, see $name.runs]"
		jq -r --arg row "$label" '
			def pct: . * 1000 | round / 10 | tostring;
			.per_agent[] |
			"| \($row) | `\(.agent)` | \(.games) | \([.seats[] | "\(.sole_wins)/\(.games)"] | join(", ")) | \(.pair_score.value | pct)% [\(.pair_score.lo | pct), \(.pair_score.hi | pct)] | \(.mean_ordinal.value * 1000 | round / 1000) | \(.move_time_s * 1e4 | round / 10) |"' \
			"$json" || die "$json: not an arena result"
		[[ $json == "$OUT/$name.json" ]] || rm -f "$json"
	done
	if ((${#begun[@]} > 0)); then
		echo
		echo "begun (games logged in $OUT/ROW.games, rows marked 'so far' when $CANOPY could report them; rerun the row to finish it): ${begun[*]}"
	fi
	if ((${#missing[@]} > 0)); then
		echo
		echo "missing (not played in $OUT): ${missing[*]}"
	fi
}

time_rows() {
	local r name game agents start end per
	selected "$@"
	printf '%-32s %10s %20s\n' row "s/game" "CPU h (${GAMES} games)"
	for r in "${SEL[@]}"; do
		IFS='|' read -r name game agents <<<"$r"
		start=$(date +%s.%N)
		eval "$(command_of "$game" "$agents" "$TIME_GAMES")" >/dev/null || die "row $name failed"
		end=$(date +%s.%N)
		per=$(echo "($end - $start) / $TIME_GAMES" | bc -l)
		printf '%-32s %10.1f %20.2f\n' "$name" "$per" "$(echo "$per * $GAMES / 3600" | bc -l)"
	done
}

main() {
	GAMES=${GAMES:-$GAMES_DEFAULT}
	OUT=${OUT:-$ROOT/runs/studies/$STUDY}
	[[ $GAMES =~ ^[1-9][0-9]*$ ]] || die "GAMES=$GAMES: want a positive number of games per row"
	case ${1:-} in
	--list)
		shift
		CANOPY=${CANOPY:-canopy}
		local r name game agents
		selected "$@"
		for r in "${SEL[@]}"; do
			IFS='|' read -r name game agents <<<"$r"
			echo "$name: $(command_of "$game" "$agents" "$GAMES" "$OUT/$name.games")"
		done
		;;
	--table)
		shift
		table_rows "$@"
		;;
	--time)
		shift
		build
		PARALLEL=1
		time_rows "$@"
		;;
	-*)
		die "unknown option $1 (want --list, --time, --table or row names)"
		;;
	*)
		build
		run_rows "$@"
		;;
	esac
}
