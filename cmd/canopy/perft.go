package main

import (
	"flag"
	"fmt"

	_ "github.com/canopy-go/canopy/games/connect4" // registers connect4
	"github.com/canopy-go/canopy/games/perft"
)

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
			game := fs.String("game", "", "game spec, e.g. connect4 (see: canopy games)")
			depth := fs.Int("depth", -1, "deepest ply to count (required, >= 0)")
			moves := fs.String("moves", "", "start from this position (move list or state notation)")
			distinct := fs.Bool("distinct", false, "count distinct positions instead of move sequences")
			asJSON := fs.Bool("json", false, "print as JSON")
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
