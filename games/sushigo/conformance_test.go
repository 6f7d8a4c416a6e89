package sushigo

import (
	"fmt"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/gametest"
)

func TestConformance(t *testing.T) {
	for _, name := range []string{"sushigo", "sushigo-seq"} {
		for np := 2; np <= MaxPlayers; np++ {
			spec := fmt.Sprintf("%s:players=%d", name, np)
			t.Run(spec, func(t *testing.T) {
				n := 30
				if testing.Short() {
					n = 4
				}
				gametest.Run(t, games.MustNew(spec), gametest.Options{Games: n})
			})
		}
	}
}

// fuzzSeeds adds states from every phase (dealing, mid-trick with pending
// choices, between rounds, game over) to the fuzz corpus.
func fuzzSeeds(f *testing.F, g games.Game) {
	rng := games.NewRand(11)
	mask := games.NewMask(g.NumActions())
	joint := make([]games.Action, g.NumPlayers())
	s := g.NewInitialState()
	for i := 0; !s.IsTerminal(); i++ {
		if i%17 == 0 {
			f.Add(s.String())
		}
		switch s.CurrentPlayer() {
		case games.ChancePlayer:
			s.Apply(s.(games.ChanceState).SampleChance(rng))
		case games.SimultaneousPlayer:
			for p := range joint {
				s.(games.SimultaneousState).LegalFor(p, mask)
				joint[p] = mask.Random(rng)
			}
			s.(games.SimultaneousState).ApplyJoint(joint)
		default:
			s.Legal(mask)
			s.Apply(mask.Random(rng))
		}
	}
	f.Add(s.String())
}

func FuzzNotation(f *testing.F) {
	g := games.MustNew("sushigo-seq:players=3")
	fuzzSeeds(f, g)
	gametest.FuzzNotation(f, g)
}

func FuzzNotationSim(f *testing.F) {
	g := games.MustNew("sushigo")
	fuzzSeeds(f, g)
	gametest.FuzzNotation(f, g)
}
