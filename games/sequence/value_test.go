package sequence

import (
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// Hand-counted values. On an empty board each player has the three
// windows through each wild corner (row, column, diagonal), 4^0 each: 12.
// With both 2S discarded, the one of them that runs through a 2S square
// (the top row's (0,0)-(0,4); the other 2S square lies in no corner's
// window) is closed: 11.
func TestStateValueByHand(t *testing.T) {
	g := New(2, false)
	empty := board(nil)
	for _, c := range []struct {
		notation string
		want     float64
	}{
		{empty + " play:0 h=AS,3D;4C d=- s=0,0 p=0 m=14", 12},
		{empty + " play:0 h=AS,3D;4C d=2S,2S s=0,0 p=0 m=14", 11},
	} {
		st, err := g.ParseState(c.notation)
		if err != nil {
			t.Fatal(err)
		}
		s := st.(*State)
		for p := range 2 {
			if got := s.StateValue(p); got != c.want {
				t.Errorf("%s: player %d: %g, want %g", c.notation, p, got, c.want)
			}
		}
	}
}

// naiveStateValue recomputes StateValue from the notation alone, by
// coordinates instead of bitboards, and finds the dead squares from the
// discard pile instead of the deck and the hands: a played card is
// discarded (so is an exchanged dead card), so copies of card K are left
// for the deck and the hands unless both are in the discard pile.
func naiveStateValue(t *testing.T, s *State, player int) float64 {
	f := strings.Fields(s.String())
	rows := strings.Split(f[0], "/")
	at := func(r, c int) byte { return rows[r][c] }
	used := map[int8]int{}
	if d := strings.TrimPrefix(f[3], "d="); d != "-" {
		for _, name := range strings.Split(d, ",") {
			k, ok := parseCard(name)
			if !ok {
				t.Fatalf("bad discard %q in %s", name, s)
			}
			used[int8(k)]++
		}
	}
	ownLetter, lockedLetter := byte('a'+player), byte('A'+player)
	v := 0.0
	if seqs := strings.Split(strings.TrimPrefix(f[4], "s="), ","); len(seqs) > player {
		v = 256 * float64(seqs[player][0]-'0')
	}
	for _, d := range [][2]int{{0, 1}, {1, 0}, {1, 1}, {1, -1}} {
		for r := range 10 {
			for c := range 10 {
				k, open := 0, true
				for i := range 5 {
					rr, cc := r+i*d[0], c+i*d[1]
					if rr < 0 || rr > 9 || cc < 0 || cc > 9 {
						open = false
						break
					}
					switch ch := at(rr, cc); {
					case ch == '*' || ch == ownLetter || ch == lockedLetter:
						k++
					case ch == '.':
						if used[squareKind[rr*10+cc]] >= 2 {
							open = false // dead square
						}
					default:
						open = false // another player's chip
					}
				}
				if open && k >= 1 && k <= 4 {
					v += float64(int(1) << (2 * (k - 1)))
				}
			}
		}
	}
	return v
}

// StateValue agrees with the naive count at every position of random games
// (greedy and random moves mixed, two and three players).
func TestStateValueMatchesNaive(t *testing.T) {
	n := 40
	if testing.Short() {
		n = 8
	}
	for _, players := range []int{2, 3} {
		g := New(players, false)
		rng := games.NewRand(uint64(players))
		greedy := newGreedy(9)
		m := games.NewMask(NumActions)
		checked := 0
		for range n {
			s := g.NewInitialState().(*State)
			for !s.IsTerminal() {
				if s.CurrentPlayer() == games.ChancePlayer {
					s.Apply(s.SampleChance(rng))
					continue
				}
				for p := range players {
					if got, want := s.StateValue(p), naiveStateValue(t, s, p); got != want {
						t.Fatalf("%s: player %d: StateValue %g, naive %g", s, p, got, want)
					}
				}
				checked++
				var a games.Action
				if rng.IntN(2) == 0 {
					a, _ = greedy.Act(t.Context(), s, s.CurrentPlayer())
				} else {
					s.Legal(m)
					a = m.Nth(rng.IntN(m.Count()))
				}
				s.Apply(a)
			}
		}
		if checked < 30*n {
			t.Fatalf("%d players: only %d positions checked", players, checked)
		}
	}
}

func TestStateValueAllocs(t *testing.T) {
	s := New(2, false).NewInitialState().(*State)
	rng := games.NewRand(1)
	for s.CurrentPlayer() == games.ChancePlayer {
		s.Apply(s.SampleChance(rng))
	}
	if a := testing.AllocsPerRun(100, func() { s.StateValue(0) }); a != 0 {
		t.Fatalf("StateValue allocates %v times", a)
	}
}

var valueSink float64

// BenchmarkStateValue: both players' values at move 60 of a random game.
func BenchmarkStateValue(b *testing.B) {
	s := New(2, false).NewInitialState().(*State)
	rng := games.NewRand(1)
	m := games.NewMask(NumActions)
	for s.MoveNumber() < 60 {
		if s.CurrentPlayer() == games.ChancePlayer {
			s.Apply(s.SampleChance(rng))
			continue
		}
		s.Legal(m)
		s.Apply(m.Nth(rng.IntN(m.Count())))
	}
	for b.Loop() {
		valueSink += s.StateValue(0) + s.StateValue(1)
	}
}
