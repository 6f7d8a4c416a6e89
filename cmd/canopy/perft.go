package main

import (
	"flag"
	"fmt"
	"github.com/canopy-go/canopy/spec"
	"math"
	"time"

	"github.com/canopy-go/canopy/games"

	_ "github.com/canopy-go/canopy/games/connect4" // registers connect4
	"github.com/canopy-go/canopy/games/perft"
)

// maxUnaskedRun is the longest estimated run a command starts without
// --yes.
const maxUnaskedRun = 10 * time.Minute

// perftEstimate counts from s at growing depths for about 100 ms and
// extrapolates, by the last ply's branching factor, the count at ply
// depth and the time to reach it. A depth reached within the probe is
// exact.
func perftEstimate(s games.State, depth int) (count, seconds float64) {
	prev, el := 1.0, time.Duration(0)
	for d := 1; d <= depth; d++ {
		t0 := time.Now()
		c := perft.Count(s, d)
		el = time.Since(t0)
		n := float64(c[d])
		if d == depth {
			return n, el.Seconds()
		}
		if el > 50*time.Millisecond || n == 0 {
			r := math.Max(n/math.Max(prev, 1), 1)
			f := math.Pow(r, float64(depth-d))
			return n * f, el.Seconds() * f
		}
		prev = n
	}
	return 1, 0
}

// formatSeconds prints a duration that may be astronomically long:
// "3m20s", "5.2 hours", "3.1e+40 years".
func formatSeconds(s float64) string {
	switch {
	case s < 3600:
		return time.Duration(s * float64(time.Second)).Round(time.Second).String()
	case s < 2*86400:
		return fmt.Sprintf("%.1f hours", s/3600)
	case s < 2*365*86400:
		return fmt.Sprintf("%.1f days", s/86400)
	}
	return fmt.Sprintf("%.2g years", s/(365*86400))
}

func init() {
	register(&command{
		Name:    "perft",
		Summary: "count move sequences (or distinct positions) per ply for a game's move generator",
		Usage:   "--game G --depth N [--moves M] [--distinct] [--json]",
		Help: `Counts, for every ply 0..N, the move sequences of exactly that length from
the initial position (or from --moves); finished games are not extended.
With --distinct counts distinct positions instead (by the game's exact
position key where it has one, otherwise by its full-state notation).
Works for any registered sequential game. Prints "<ply> <count>" lines.
Cost grows with the branching factor to the power N: start small.`,
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			game, moves := new(string), new(string)
			depth, distinct, asJSON, yes := new(int), new(bool), new(bool), new(bool)
			spec.Table{
				gameOption(game, "", ""),
				spec.Int("depth", depth, -1, -1, 1<<20, "deepest ply to count (required; -1: not given)"),
				movesOption(moves, "start from this position"),
				spec.Bool("distinct", distinct, false, "count distinct positions instead of move sequences"),
				jsonOption(asJSON, ""),
				spec.Bool("yes", yes, false, "run even when the count is estimated to take more than 10 minutes"),
			}.Flags(fs)
			return func(e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				g, err := newGame(*game)
				if err != nil {
					return err
				}
				if *depth < 0 {
					return usagef("--depth N is required (N >= 0)")
				}
				if err := perft.Check(g); err != nil {
					return usageError{err.Error()}
				}
				s := g.NewInitialState()
				if *moves != "" {
					if s, _, err = parsePosition(g, *moves); err != nil {
						return err
					}
				}
				// Counts past the longest game are all zero, and perft
				// allocates one count per ply: refuse depths beyond it.
				if left := g.MaxGameLength() - s.MoveNumber(); *depth > left {
					return usagef("--depth %d: %s games end within %d more moves from this position; use --depth %d or less", *depth, g.Spec(), left, left)
				}
				// The count grows exponentially with --depth: estimate its
				// time from shallower counts and ask before a long one.
				if n, sec := perftEstimate(s, *depth); sec > maxUnaskedRun.Seconds() && !*yes {
					return usagef("--depth %d: about %.3g move sequences at the last ply, about %s at the speed measured here; add --yes to run it anyway, or use a smaller --depth",
						*depth, n, formatSeconds(sec))
				}
				var counts []uint64
				if *distinct {
					counts = perft.Distinct(g, s, *depth)
				} else {
					counts = perft.Count(s, *depth)
				}
				if *asJSON {
					return writeJSON(e.Stdout, struct {
						Game     string   `json:"game"`
						Start    string   `json:"start"`
						Depth    int      `json:"depth"`
						Distinct bool     `json:"distinct"`
						Counts   []uint64 `json:"counts"`
					}{g.Spec(), s.String(), *depth, *distinct, counts})
				}
				for ply, c := range counts {
					fmt.Fprintf(e.Stdout, "%d %d\n", ply, c)
				}
				return nil
			}
		},
	})
}
