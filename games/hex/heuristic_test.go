package hex

import (
	"context"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// HeuristicValue is the hexdist agent's score (one implementation), leaves
// the state alone and does not allocate.
func TestHeuristicValueIsHexDistScore(t *testing.T) {
	g := mustGame(t, "hex:size=5")
	rng := games.NewRand(3)
	m := games.NewMask(g.NumActions())
	for game := range 3 {
		s := g.NewState()
		for !s.IsTerminal() {
			p := s.CurrentPlayer()
			an, err := NewHexDist(g, uint64(game)).Analyze(context.Background(), s, p)
			if err != nil {
				t.Fatal(err)
			}
			before := s.String()
			for _, x := range an {
				if got := s.HeuristicValue(p, x.Action); got != x.Score {
					t.Fatalf("%q %s: HeuristicValue %v, hexdist score %v", before, s.ActionString(x.Action), got, x.Score)
				}
			}
			if s.String() != before {
				t.Fatalf("HeuristicValue modified %q into %q", before, s.String())
			}
			if n := testing.AllocsPerRun(20, func() { s.HeuristicValue(p, an[0].Action) }); n != 0 {
				t.Fatalf("HeuristicValue allocates %v times", n)
			}
			s.Legal(m)
			s.Apply(m.Random(rng))
		}
		if v := s.HeuristicValue(0, 0); v != 0 {
			t.Errorf("terminal state: HeuristicValue %v, want 0", v)
		}
	}
}
