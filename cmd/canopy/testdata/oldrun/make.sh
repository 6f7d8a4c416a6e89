#!/bin/sh
# Regenerates the run directories of an earlier release that
# TestOldRunsResume resumes: settings files written by the code at
# 311b2ec (before --noreuse became --reuse and zero's flags became
# zero.Config.Table). Run from the repository root with that commit's
# binary: go build -o /tmp/canopy-old ./cmd/canopy (at 311b2ec), then
#   sh cmd/canopy/testdata/oldrun/make.sh /tmp/canopy-old
set -eu
old=${1:?usage: make.sh CANOPY-BINARY-OF-311b2ec}
dir=cmd/canopy/testdata/oldrun
rm -rf "$dir/selfplay" "$dir/zero"
"$old" selfplay --game tictactoe --games 2 --sims 4 --seed 3 --backend cpu --quiet --out "$dir/selfplay"
rm -f "$dir/selfplay/.lock"
# zero.json as a new run writes it (the run is stopped before self-play:
# only the settings file is kept).
mkdir -p "$dir/zero"
"$old" zero --game tictactoe --games 2 --sims 4 --noreuse --steps 2 --batch 4 --eval-games 0 --solver-positions 0 \
  --baselines random --backend cpu --quiet --out "$dir/zero.tmp" --more 1 >/dev/null 2>&1 || true
cp "$dir/zero.tmp/zero.json" "$dir/zero/zero.json"
rm -rf "$dir/zero.tmp"
