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

// HeuristicValues (the patched graphs) equals HeuristicValue (graphs
// rebuilt per action) for every legal action of positions along random
// games on every board size, with and without the swap rule; it leaves the
// entries of other actions and the state alone and does not allocate.
func TestHeuristicValues(t *testing.T) {
	const sentinel = -12345.0
	for n := MinSize; n <= MaxSize; n++ {
		for _, swap := range []bool{false, true} {
			g, err := New(n, swap)
			if err != nil {
				t.Fatal(err)
			}
			rng := games.NewRand(uint64(n))
			m := games.NewMask(g.NumActions())
			sub := games.NewMask(g.NumActions())
			dst := make([]float64, g.NumActions())
			plays := 3 // random games per board
			if n > 7 {
				plays = 1
			}
			for range plays {
				s := g.NewState()
				for {
					p := s.CurrentPlayer()
					s.Legal(m)
					before := s.String()
					// Every legal action, then a random subset of them.
					sub.Clear()
					for a := range m.All() {
						if rng.IntN(2) == 0 {
							sub.Set(a)
						}
					}
					for _, legal := range []games.Mask{m, sub} {
						for i := range dst {
							dst[i] = sentinel
						}
						s.HeuristicValues(p, legal, dst)
						for a := range games.Action(len(dst)) {
							want := sentinel
							if legal.Has(a) {
								want = s.HeuristicValue(p, a)
							}
							if dst[a] != want {
								t.Fatalf("%s %q: action %s: HeuristicValues %v, HeuristicValue %v", g.Spec(), before, s.ActionString(a), dst[a], want)
							}
						}
					}
					if s.String() != before {
						t.Fatalf("HeuristicValues modified %q into %q", before, s.String())
					}
					if s.IsTerminal() {
						break
					}
					s.Apply(m.Random(rng))
				}
			}
			s := g.NewState()
			s.Legal(m)
			if n := testing.AllocsPerRun(10, func() { s.HeuristicValues(0, m, dst) }); n != 0 {
				t.Errorf("%s: HeuristicValues allocates %v times", g.Spec(), n)
			}
		}
	}
}

// FuzzHeuristicValues: on any position reached by legal moves (the fuzz
// input picks the board, the swap rule and each move), HeuristicValues
// equals HeuristicValue for every legal action.
func FuzzHeuristicValues(f *testing.F) {
	f.Add(uint8(7), false, []byte{24, 3, 17, 40, 2})
	f.Add(uint8(5), true, []byte{0, 25, 6})
	f.Add(uint8(13), false, []byte{84, 85, 72, 97, 60, 110, 10})
	f.Fuzz(func(t *testing.T, size uint8, swap bool, moves []byte) {
		g, err := New(MinSize+int(size)%(MaxSize-MinSize+1), swap)
		if err != nil {
			t.Fatal(err)
		}
		m := games.NewMask(g.NumActions())
		s := g.NewState()
		for _, b := range moves {
			if s.IsTerminal() {
				break
			}
			s.Legal(m)
			s.Apply(m.Nth(int(b) % m.Count()))
		}
		p := max(s.CurrentPlayer(), 0)
		s.Legal(m)
		dst := make([]float64, g.NumActions())
		s.HeuristicValues(p, m, dst)
		for a := range m.All() {
			if want := s.HeuristicValue(p, a); dst[a] != want {
				t.Fatalf("%q %s: HeuristicValues %v, HeuristicValue %v", s.String(), s.ActionString(a), dst[a], want)
			}
		}
	})
}
