package sushigo

import (
	"math"
	"slices"
	"testing"

	"github.com/canopy-go/canopy/games"
)

func tensors(s *State, p int) ([]float32, []float32) {
	obs := make([]float32, s.g.obsSize())
	info := make([]float32, s.g.InformationStateShape()[0])
	s.Observation(p, obs)
	s.InformationState(p, info)
	return obs, info
}

// midRound deals and plays `tricks` random tricks of a 4-player game.
func midRound(seq bool, seed uint64, tricks int) *State {
	s := New(4, seq).NewInitialState().(*State)
	rng := games.NewRand(seed)
	for s.c.dealing() {
		s.Apply(s.SampleChance(rng))
	}
	s.RandomPlayoutTricks(rng, tricks)
	return s
}

// TestHiddenHandsDoNotLeak swaps a card between a hand the viewer cannot
// know and the deck (or another unknown hand): the viewer's observation and
// information state must not change. Changing a hand the viewer has held
// must change them (so the test can fail).
func TestHiddenHandsDoNotLeak(t *testing.T) {
	for tricks := range 3 {
		s := midRound(false, uint64(10+tricks), tricks)
		for p := range 4 {
			obs, info := tensors(s, p)
			for q := range 4 {
				// Replace q's first card with a deck card of another type.
				t2 := *s
				from := Card(0)
				for t2.c.hands[q][from] == 0 {
					from++
				}
				to := Card(0)
				for to == from || t2.c.deck[to] == 0 {
					to++
				}
				t2.c.hands[q][from]--
				t2.c.hands[q][to]++
				t2.c.deck[to]--
				t2.c.deck[from]++
				obs2, info2 := tensors(&t2, p)
				same := slices.Equal(obs, obs2) && slices.Equal(info, info2)
				if known := s.Knows(p, q); same == known {
					t.Errorf("after %d tricks, player %d, changing player %d's hand (known=%v): tensors unchanged=%v", tricks, p, q, known, same)
				}
			}
		}
	}
	// After trick t a player knows exactly t+1 hands (4 players).
	s := midRound(false, 3, 2)
	for p := range 4 {
		n := 0
		for q := range 4 {
			if s.Knows(p, q) {
				n++
			}
		}
		if n != 3 || !s.Knows(p, p) || !s.Knows(p, (p+3)%4) || s.Knows(p, (p+1)%4) {
			t.Errorf("after 2 tricks player %d knows %d hands, want its own and the two it passed (p-1, p-2)", p, n)
		}
	}
}

// TestPendingChoicesHidden: in the sequential view, an earlier player's
// choice is invisible to later players until the trick is revealed.
func TestPendingChoicesHidden(t *testing.T) {
	s := midRound(true, 4, 1)
	m := games.NewMask(NumActions)
	s.Legal(m)
	if m.Count() < 2 {
		t.Skip("player 0 has a single choice")
	}
	a, b := s.Clone().(*State), s.Clone().(*State)
	a.Apply(m.Nth(0))
	b.Apply(m.Nth(1))
	for p := 1; p < 4; p++ {
		oa, ia := tensors(a, p)
		ob, ib := tensors(b, p)
		if !slices.Equal(oa, ob) || !slices.Equal(ia, ib) {
			t.Errorf("player %d can tell player 0's pending choice", p)
		}
	}
	if oa, _ := tensors(a, 0); slices.Equal(oa, func() []float32 { o, _ := tensors(b, 0); return o }()) {
		t.Error("player 0 does not see its own pending choice")
	}
}

func TestResample(t *testing.T) {
	for _, seq := range []bool{false, true} {
		s := midRound(seq, 6, 1)
		if seq {
			m := games.NewMask(NumActions)
			for range 2 { // players 0 and 1 choose
				s.Legal(m)
				s.Apply(m.First())
			}
		}
		dst := s.g.NewInitialState()
		for p := range 4 {
			r1, r2 := games.NewRand(9), games.NewRand(9)
			s.Resample(p, r1, dst)
			first := dst.String()
			s.Resample(p, r2, dst)
			if dst.String() != first {
				t.Errorf("resample not reproducible from the rng")
			}
			d := dst.(*State)
			for q := range 4 {
				if s.Knows(p, q) && d.Hand(q) != s.Hand(q) {
					t.Errorf("resample changed a hand player %d knows", p)
				}
				if d.Hand(q).Total() != s.Hand(q).Total() || d.Table(q) != s.Table(q) {
					t.Errorf("resample changed a hand size or table")
				}
			}
			if d.Pending(p) != s.Pending(p) {
				t.Errorf("resample changed the viewer's own pending choice")
			}
			o1, i1 := tensors(s, p)
			o2, i2 := tensors(d, p)
			if !slices.Equal(o1, o2) || !slices.Equal(i1, i2) {
				t.Errorf("resampled state looks different to player %d", p)
			}
			if _, err := s.g.ParseState(d.String()); err != nil {
				t.Errorf("resampled state does not parse: %v", err)
			}
		}
		rng := games.NewRand(1)
		if allocs := testing.AllocsPerRun(100, func() { s.Resample(1, rng, dst) }); allocs != 0 {
			t.Errorf("Resample allocates %.1f times", allocs)
		}
	}
}

// TestResampleUniform checks the expected composition of a redealt hand:
// each unseen card is equally likely to land in it, so the mean count of
// type k in an n-card hand is n * pool[k] / |pool|.
func TestResampleUniform(t *testing.T) {
	s := midRound(false, 8, 0) // right after the deal: player 0 knows only its hand
	pool := s.c.deck
	for q := 1; q < 4; q++ {
		for k, n := range s.c.hands[q] {
			pool[k] += n
		}
	}
	total := float64(pool.Total())
	const runs = 20000
	var sum [NumCards]float64
	rng := games.NewRand(1)
	dst := s.g.NewInitialState().(*State)
	for range runs {
		s.Resample(0, rng, dst)
		for k, n := range dst.c.hands[2] {
			sum[k] += float64(n)
		}
	}
	for k := range NumCards {
		want := 8 * float64(pool[k]) / total
		got := sum[k] / runs
		// Standard error of the mean is below 0.01 here; allow 5 of them.
		if math.Abs(got-want) > 0.05 {
			t.Errorf("%s: mean %.3f per resampled hand, want %.3f", Card(k), got, want)
		}
	}
}
