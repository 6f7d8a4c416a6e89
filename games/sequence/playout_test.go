package sequence

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/canopy-go/canopy/games"
)

var playoutSpecs = []string{"sequence", "sequence:jacks=false", "sequence:players=3"}

// replayPlayout runs the fast playout from s (not modified) with seed,
// recording its actions, then replays them through Legal and Apply on a
// copy of s: every action must be legal there and both ends must agree.
// With turns > 0 the playout must stop at the end of the game or right
// after exactly turns actions of the players.
func replayPlayout(t *testing.T, s *State, seed uint64, turns int) {
	t.Helper()
	fast := s.Clone().(*State)
	var pl playout
	pl.load(fast)
	var rec []games.Action
	n := pl.run(games.NewRand(seed), &rec, turns)
	pl.store()
	if n != len(rec) {
		t.Fatalf("playout counted %d actions but recorded %d", n, len(rec))
	}
	slow := s.Clone().(*State)
	m := games.NewMask(NumActions)
	acts, lastDraw := 0, false
	for i, a := range rec {
		lastDraw = slow.CurrentPlayer() == games.ChancePlayer
		if !lastDraw {
			acts++
		}
		slow.Legal(m)
		if !m.Has(a) {
			t.Fatalf("seed %d action %d: the playout took %d (%s), illegal in %s", seed, i, a, slow.ActionString(a), slow)
		}
		slow.Apply(a)
	}
	if fast.String() != slow.String() || fast.MoveNumber() != slow.MoveNumber() || fast.hash != slow.rehash() {
		t.Fatalf("seed %d: playout ended in %q (move %d), replay through Apply in %q (move %d)", seed, fast, fast.MoveNumber(), slow, slow.MoveNumber())
	}
	switch {
	case slow.IsTerminal():
		if turns > 0 && acts > turns {
			t.Fatalf("seed %d: %d actions of the players, limit %d", seed, acts, turns)
		}
	case turns <= 0:
		t.Fatalf("seed %d: full playout stopped in %q", seed, slow)
	case acts != turns || lastDraw:
		t.Fatalf("seed %d: stopped after %d actions of the players (limit %d), the last a draw: %t, in %q", seed, acts, turns, lastDraw, slow)
	}
}

// TestPlayRandomLegalAndConsistent checks that every action of the fast
// playout is legal and that its incremental state (hands as kind sets,
// empty-square sets, deck list) ends where Apply ends, from the start and
// from mid-game states (exchanges and jacks included).
func TestPlayRandomLegalAndConsistent(t *testing.T) {
	seeds := uint64(30)
	if testing.Short() || raceEnabled {
		seeds = 8
	}
	for _, sp := range playoutSpecs {
		g := games.MustNew(sp)
		for seed := range seeds {
			replayPlayout(t, g.NewInitialState().(*State), seed, 0)
			s := g.NewInitialState().(*State)
			rng := games.NewRand(seed)
			m := games.NewMask(NumActions)
			for range 30 + int(seed)*4 { // mid-game states, some in a chance phase
				if s.IsTerminal() {
					break
				}
				s.Legal(m)
				s.Apply(m.Random(rng))
			}
			for _, turns := range []int{0, 1, 3, 8, 1000} {
				replayPlayout(t, s, seed, turns)
			}
		}
	}
	s := games.MustNew("sequence").NewInitialState().(*State)
	init := s.Clone()
	rng := games.NewRand(1)
	if n := testing.AllocsPerRun(20, func() { init.CloneInto(s); s.PlayRandom(rng) }); n != 0 {
		t.Errorf("PlayRandom allocates %v times", n)
	}
}

// chiSquareUniform samples the playout's choice at s per times the number
// of legal actions, fails on an illegal one, and returns the chi-square
// statistic against the uniform distribution over Legal and its degrees of
// freedom.
func chiSquareUniform(t *testing.T, s *State, per int, seed uint64) (x float64, df int) {
	t.Helper()
	m := games.NewMask(NumActions)
	s.Legal(m)
	legal := m.Count()
	count := map[games.Action]int{}
	rng := games.NewRand(seed)
	n := per * legal
	for range n {
		a := s.randomAction(rng)
		if !m.Has(a) {
			t.Fatalf("randomAction gave illegal %d (%s) in %s", a, s.ActionString(a), s)
		}
		count[a]++
	}
	e := float64(n) / float64(legal)
	for a := range m.All() {
		d := float64(count[a]) - e
		x += d * d / e
	}
	return x, legal - 1
}

// TestPlayoutChoiceUniform checks that the playout's move choice is
// uniform over the legal actions (the distribution games.RandomPlayout
// draws from): a chi-square test on a hand-built position with every kind
// of move (dead card, a card with one and one with two empty squares, a
// pair, both jacks) and on positions from random games, pooled.
func TestPlayoutChoiceUniform(t *testing.T) {
	g := games.MustNew("sequence")
	// 2S dead (b10, g2 taken), 3S one empty square (c10 taken), 4S,4S both
	// empty (d10, e2); player 1 owns the locked a9..e9 and loose g2, c10,
	// e5 (removable by JS); JD may go on any empty square.
	chips := rowChips(map[string]byte{"b10": 'a', "g2": 'b', "c10": 'b', "e5": 'b'}, 1, "01234", 'B')
	s := parse(t, g, board(chips)+" play:0 h=2S,3S,4S,4S,JS,JD;5S,6S d=- s=0,1 p=0 m=30")
	if n := legal(s).Count(); n != 1+1+2+3+(96-9) {
		t.Fatalf("hand-built position has %d legal actions, want 94", n)
	}
	x, df := chiSquareUniform(t, s, 200, 1)
	if z := (x - float64(df)) / math.Sqrt(2*float64(df)); z > 4 {
		t.Errorf("hand-built position: chi-square %.1f with %d df (z=%.1f): choice is not uniform", x, df, z)
	}
	states := 20
	if testing.Short() || raceEnabled {
		states = 6
	}
	for _, sp := range playoutSpecs {
		g := games.MustNew(sp)
		rng := games.NewRand(5)
		m := games.NewMask(NumActions)
		var x float64
		df, taken := 0, 0
		for taken < states {
			s := g.NewInitialState().(*State)
			for !s.IsTerminal() && taken < states {
				if s.CurrentPlayer() == games.ChancePlayer {
					s.Apply(s.SampleChance(rng))
					continue
				}
				if rng.IntN(10) == 0 {
					xi, di := chiSquareUniform(t, s, 30, uint64(taken))
					x += xi
					df += di
					taken++
				}
				s.Legal(m)
				s.Apply(m.Random(rng))
			}
		}
		if df == 0 {
			continue
		}
		if z := (x - float64(df)) / math.Sqrt(2*float64(df)); z > 4 {
			t.Errorf("%s: pooled chi-square %.1f with %d df (z=%.1f): choice is not uniform", sp, x, df, z)
		}
	}
}

// TestPlayRandomMatchesGenericDistribution plays many games with the fast
// playout and with games.RandomPlayout and compares game length, player 0
// wins and draws: each difference must be within 4 standard errors. The
// two consume random numbers differently (see PlayRandom), so they cannot
// be compared game by game.
func TestPlayRandomMatchesGenericDistribution(t *testing.T) {
	n := 3000
	if testing.Short() || raceEnabled {
		n = 600
	}
	type tally struct{ len, len2, win0, draw float64 }
	add := func(tl *tally, s *State, moves int) {
		l := float64(moves)
		tl.len += l
		tl.len2 += l * l
		switch s.Winner() {
		case 0:
			tl.win0++
		case -1:
			tl.draw++
		}
	}
	for _, sp := range playoutSpecs {
		g := games.MustNew(sp)
		var fast, gen tally
		rf, rg := games.NewRand(11), games.NewRand(12)
		m := games.NewMask(NumActions)
		for range n {
			s := g.NewInitialState().(*State)
			add(&fast, s, s.PlayRandom(rf))
			s = g.NewInitialState().(*State)
			add(&gen, s, games.RandomPlayout(s, rg, m, nil))
		}
		N := float64(n)
		mf, mg := fast.len/N, gen.len/N
		vf, vg := fast.len2/N-mf*mf, gen.len2/N-mg*mg
		if se := math.Sqrt((vf + vg) / N); math.Abs(mf-mg) > 4*se {
			t.Errorf("%s: mean game length %.2f (fast) vs %.2f (generic), 4 SE = %.2f", sp, mf, mg, 4*se)
		}
		for _, c := range []struct {
			what string
			a, b float64
		}{{"player 0 wins", fast.win0, gen.win0}, {"draws", fast.draw, gen.draw}} {
			pa, pb := c.a/N, c.b/N
			p := (pa + pb) / 2
			if se := math.Sqrt(2 * p * (1 - p) / N); math.Abs(pa-pb) > 4*se+1e-9 {
				t.Errorf("%s: %s %.3f (fast) vs %.3f (generic), 4 SE = %.3f", sp, c.what, pa, pb, 4*se)
			}
		}
		t.Logf("%s: length %.1f/%.1f, p0 wins %.3f/%.3f, draws %.3f/%.3f (fast/generic)", sp, mf, mg, fast.win0/N, gen.win0/N, fast.draw/N, gen.draw/N)
	}
}

// TestIntn checks the playout's bounded draws for range and uniformity
// (chi-square over n = 7 and n = 96, and a bound near 2^16 that rejects
// often).
func TestIntn(t *testing.T) {
	rng := games.NewRand(8)
	var pl playout
	for _, n := range []int{1, 7, 96} {
		const per = 2000
		count := make([]int, n)
		for range per * n {
			x := pl.intn(rng, n)
			if x < 0 || x >= n {
				t.Fatalf("intn(%d) = %d", n, x)
			}
			count[x]++
		}
		chi := 0.0
		for _, c := range count {
			d := float64(c - per)
			chi += d * d / per
		}
		if df := float64(n - 1); n > 1 && (chi-df)/math.Sqrt(2*df) > 4 {
			t.Errorf("intn(%d): chi-square %.1f with %v df", n, chi, df)
		}
	}
	big := 3 << 14 // a third of the 16-bit draws are rejected
	half := 0
	for range 30000 {
		x := pl.intn(rng, big)
		if x < 0 || x >= big {
			t.Fatalf("intn(%d) = %d", big, x)
		}
		if x < big/2 {
			half++
		}
	}
	if math.Abs(float64(half)/30000-0.5) > 4*math.Sqrt(0.25/30000) {
		t.Errorf("intn(%d): %d of 30000 draws in the lower half", big, half)
	}
}

// TestResampleKeepsCards checks the card bookkeeping of Resample on states
// from random games (deal included): every kind keeps its copies across
// deck, hands and discards, the deck size, hand sizes and the viewer's
// own hand are unchanged, and the result parses back from its notation.
func TestResampleKeepsCards(t *testing.T) {
	for _, sp := range playoutSpecs {
		g := games.MustNew(sp).(*Game)
		rng := games.NewRand(31)
		m := games.NewMask(NumActions)
		s := g.NewInitialState().(*State)
		dst := g.NewInitialState().(*State)
		for step := 0; !s.IsTerminal(); step++ {
			if step%7 == 0 {
				for p := range g.players {
					s.Resample(p, rng, dst)
					if dst.deckN != s.deckN || dst.hn != s.hn || dst.hand[p] != s.hand[p] {
						t.Fatalf("%s: Resample(%d) changed the deck size, hand sizes or own hand:\n%s\n%s", sp, p, s, dst)
					}
					for k := range uint8(numKinds) {
						want := 2
						if !g.jacks && kindClass(k) != kindNormal {
							want = 0
						}
						got := int(dst.deck[k]) + int(dst.discard[k])
						for q := range g.players {
							for _, h := range dst.hand[q][:dst.hn[q]] {
								if h == k {
									got++
								}
							}
						}
						if got != want {
							t.Fatalf("%s: after Resample(%d) kind %s has %d copies, want %d: %s", sp, p, cardName(k), got, want, dst)
						}
					}
					if _, err := g.ParseState(dst.String()); err != nil {
						t.Fatalf("%s: resampled state does not parse: %v", sp, err)
					}
				}
			}
			s.Legal(m)
			s.Apply(m.Random(rng))
		}
	}
}

// TestResampleSeesOnlyInformation: two states player cannot tell apart
// (the second a resample of the first) resample alike from the same
// random stream, so a determinization shows nothing of where the unseen
// cards really are.
func TestResampleSeesOnlyInformation(t *testing.T) {
	for _, sp := range playoutSpecs {
		g := games.MustNew(sp).(*Game)
		rng := games.NewRand(37)
		m := games.NewMask(NumActions)
		s := g.NewInitialState().(*State)
		twin := g.NewInitialState().(*State)
		a, b := g.NewInitialState().(*State), g.NewInitialState().(*State)
		for step := 0; !s.IsTerminal(); step++ {
			if step%5 == 0 {
				for p := range g.players {
					s.Resample(p, rng, twin)
					if twin.String() == s.String() {
						continue
					}
					seed := rng.Uint64()
					s.Resample(p, games.NewRand(seed), a)
					twin.Resample(p, games.NewRand(seed), b)
					if a.String() != b.String() {
						t.Fatalf("%s: player %d cannot tell\n%s\nfrom\n%s\nbut they resample to\n%s\n%s", sp, p, s, twin, a, b)
					}
				}
			}
			s.Legal(m)
			s.Apply(m.Random(rng))
		}
	}
}

// randomAction returns a uniformly random legal action of the player to
// move (s must be at a play node), as PlayRandom would choose it.
func (s *State) randomAction(rng *rand.Rand) games.Action {
	var pl playout
	pl.load(s)
	return pl.action(pl.choose(rng))
}

// newGreedy returns a greedy agent with the default reading, seeded with
// seed.
func newGreedy(seed uint64) *Greedy { return NewGreedyReading(seed, GreedyReading{}) }
