package sushigo

import (
	"math"
	"math/bits"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// randomCounts returns a multiset with every count in [0, 14] (the largest
// count of the deck), small counts more likely.
func randomCounts(rng interface{ IntN(int) int }) Counts {
	var c Counts
	for k := range c {
		if rng.IntN(3) == 0 {
			c[k] = uint8(rng.IntN(15))
		} else {
			c[k] = uint8(rng.IntN(3))
		}
	}
	return c
}

func TestPackNib(t *testing.T) {
	rng := games.NewRand(1)
	for range 2000 {
		c := randomCounts(rng)
		v := packNib(&c)
		for k := range NumCards {
			if got := nibField(v, Card(k)); got != int(c[k]) {
				t.Fatalf("packNib(%v): field %d = %d, want %d", c, k, got, c[k])
			}
		}
		if v>>48 != 0 {
			t.Fatalf("packNib(%v) = %x sets bits above 48", c, v)
		}
		var back Counts
		unpackNib(v, &back)
		if back != c {
			t.Fatalf("unpackNib(packNib(%v)) = %v", c, back)
		}
		nz, two := nibNonzero(v), nibAtLeast2(v)
		for k := range NumCards {
			if (nz>>(4*k)&1 == 1) != (c[k] > 0) || (two>>(4*k)&1 == 1) != (c[k] >= 2) {
				t.Fatalf("%v: non-zero mask %x, at-least-2 mask %x wrong at %d", c, nz, two, k)
			}
		}
		present, dup, n := handBits(&c)
		if handPresent(&c) != present || n != c.Total() {
			t.Fatalf("%v: handPresent %x, handBits %x, %d cards", c, handPresent(&c), present, n)
		}
		if nibCompact(nz) != present || nibCompact(two) != dup {
			t.Fatalf("%v: compacted masks %x %x, want %x %x", c, nibCompact(nz), nibCompact(two), present, dup)
		}
	}
}

// TestNibSelect checks the branch-free select against a plain scan for
// every 12-field mask and every rank, and the population count read from
// the prefix product.
func TestNibSelect(t *testing.T) {
	for b := range uint64(1 << NumCards) {
		m := uint64(0)
		for k := range NumCards {
			m |= (b >> k & 1) << (4 * k)
		}
		pre := m * nibLow
		if got := int(pre >> 44 & 15); got != bits.OnesCount64(b) {
			t.Fatalf("mask %03x: prefix count %d, want %d", b, got, bits.OnesCount64(b))
		}
		w := m
		for k := range uint64(bits.OnesCount64(b)) {
			want := uint(bits.TrailingZeros64(w))
			w &= w - 1
			if got := nibSelect(m, pre, k); got != want {
				t.Fatalf("nibSelect(mask %03x, %d) = %d, want %d", b, k, got, want)
			}
		}
	}
}

// TestChopLegal compares the packed chopsticks mask with the rules' own
// per-action legality test (core.isLegal).
func TestChopLegal(t *testing.T) {
	rng := games.NewRand(2)
	for range 3000 {
		var c core
		c.reset(4)
		c.dealt = int8(4 * c.handSize()) // choosing phase
		h := randomCounts(rng)
		if h.Total() < 2 {
			continue
		}
		c.hands[0] = h
		c.table[0][Chopsticks] = 1
		c.table[0][Wasabi] = uint8(rng.IntN(2))
		noOpen := c.openWasabi(0) == 0
		w0, w1 := chopLegal(packNib(&h), noOpen)
		for a := range games.Action(NumActions) {
			var has bool
			if a < 64 {
				has = w0>>a&1 == 1
			} else {
				has = w1>>(a-64)&1 == 1
			}
			if has != c.isLegal(0, a) {
				t.Fatalf("hand %v, open wasabi %v: action %s packed %v, rules %v", h, !noOpen, actionText(a), has, c.isLegal(0, a))
			}
		}
	}
}

// TestSeatPlace places random card sequences through seat.place and
// core.place and compares tables and nigiri-on-wasabi counts.
func TestSeatPlace(t *testing.T) {
	rng := games.NewRand(3)
	for range 2000 {
		var c core
		c.reset(4)
		var s seat
		for range 1 + rng.IntN(12) {
			k := Card(rng.IntN(NumCards))
			c.place(0, k)
			s.place(4 * uint(k))
			if got := s.w >> openShift & 15; int(got) != c.openWasabi(0) {
				t.Fatalf("open wasabi %d, want %d (table %v)", got, c.openWasabi(0), c.table[0])
			}
		}
		var tab Counts
		unpackNib(s.tab, &tab)
		w := [3]uint8{uint8(s.w & 15), uint8(s.w >> 4 & 15), uint8(s.w >> 8 & 15)}
		if tab != c.table[0] || w != c.onWasabi[0] {
			t.Fatalf("packed table %v on wasabi %v, want %v %v", tab, w, c.table[0], c.onWasabi[0])
		}
		if got, want := nibTableScore(s.tab, s.w), tableScore(&c.table[0], &c.onWasabi[0]); got != want {
			t.Fatalf("table %v on wasabi %v: packed score %d, want %d", tab, w, got, want)
		}
		if got, want := nibMaki(s.tab), makiCount(&c.table[0]); got != want {
			t.Fatalf("table %v: packed maki %d, want %d", tab, got, want)
		}
	}
}

// TestBatchDigits checks that the digits of a batch word are uniform and
// independent, on a range product (3 * 2^62) where skipping Lemire's
// rejection would make the last digit 0 twice as likely as 1 or 2 (checked
// below, so the test can fail).
func TestBatchDigits(t *testing.T) {
	chi := func(cnt []int, draws int) float64 {
		e := float64(draws) / float64(len(cnt))
		s := 0.0
		for _, c := range cnt {
			s += (float64(c) - e) * (float64(c) - e) / e
		}
		return s
	}
	const draws = 30000
	r := fastRand{s: 11}
	var exact, naive [3]int
	for range draws {
		x := r.batch(3 << 62)
		_, x = digit(x, 1<<62)
		d, _ := digit(x, 3)
		exact[d]++
		y := r.next()
		_, y = digit(y, 1<<62)
		d, _ = digit(y, 3)
		naive[d]++
	}
	if c := chi(exact[:], draws); c > 13.8 { // 2 degrees of freedom, p = 0.001
		t.Errorf("last digit counts %v, chi-square %.1f", exact, c)
	}
	if c := chi(naive[:], draws); c < 13.8 {
		t.Errorf("the test cannot see the bias of unrejected words: counts %v", naive)
	}
	// Joint uniformity of three small digits: 4*5*6 = 120 cells.
	const joint = 60000
	cnt := make([]int, 120)
	for range joint {
		x := r.batch(120)
		a, x := digit(x, 4)
		b, x := digit(x, 5)
		c, _ := digit(x, 6)
		cnt[(a*5+b)*6+c]++
	}
	// 119 degrees of freedom: mean 119, sd 15.4; p = 0.001 near 173.
	if c := chi(cnt, joint); c > 173 {
		t.Errorf("joint digits: chi-square %.1f over 120 cells", c)
	}
}

// TestPlayoutTrickUniform plays single tricks from mid-round states (some
// with chopsticks and wasabi on the tables) with RandomPlayoutTricks and
// checks, player by player, that the choice is uniform over exactly the
// legal actions that LegalFor lists. A player's choice is read from its
// table and nigiri-on-wasabi counts after the trick; the expected
// frequency of each comes from applying every legal action with
// ApplyJoint (a few actions end alike, see mult).
func TestPlayoutTrickUniform(t *testing.T) {
	per := 300
	if testing.Short() {
		per = 120
	}
	rng := games.NewRand(21)
	mask, other := games.NewMask(NumActions), games.NewMask(NumActions)
	type key struct {
		tab Counts
		w   [3]uint8
	}
	checked, chop := 0, 0
	for seed := uint64(0); checked < 6; seed++ {
		s := midRound(false, 100+seed, int(seed%5))
		if s.c.dealing() || s.c.over() {
			continue
		}
		hasChop := false
		for p := range 4 {
			hasChop = hasChop || (s.c.table[p][Chopsticks] > 0 && s.c.hands[p].Total() >= 2)
		}
		if !hasChop && checked >= 3 {
			continue // want states with chopsticks too
		}
		checked++
		if hasChop {
			chop++
		}
		for p := range 4 {
			s.LegalFor(p, mask)
			// Outcomes and the number of legal actions leading to each:
			// "chop:tempura+chopsticks" ends like "tempura", say.
			mult := map[key]int{}
			for a := range mask.All() {
				t2 := *s
				joint := make([]games.Action, 4)
				for q := range 4 {
					if q == p {
						joint[q] = a
					} else {
						s.LegalFor(q, other)
						joint[q] = other.First()
					}
				}
				t2.ApplyJoint(joint)
				mult[key{t2.c.table[p], t2.c.onWasabi[p]}]++
			}
			n := mask.Count()
			draws := per * n
			got := map[key]int{}
			for range draws {
				t2 := *s
				t2.RandomPlayoutTricks(rng, 1)
				k := key{t2.c.table[p], t2.c.onWasabi[p]}
				if mult[k] == 0 {
					t.Fatalf("%s: player %d reached table %v %v, not a legal choice", s, p, k.tab, k.w)
				}
				got[k]++
			}
			chi := 0.0
			for k, m := range mult {
				e := float64(per * m)
				d := float64(got[k]) - e
				chi += d * d / e
			}
			// Chi-square with len(mult)-1 degrees of freedom: allow mean
			// + 5 sd + 10.
			if df := float64(len(mult) - 1); chi > df+5*math.Sqrt(2*df)+10 {
				t.Errorf("%s: player %d, %d legal actions: chi-square %.1f", s, p, n, chi)
			}
		}
	}
	if chop == 0 {
		t.Error("no state with chopsticks on a table was checked")
	}
}

// TestPlayoutDealUniform checks the deal of the specialised playout: after
// the first trick of a game (no chopsticks can be used yet) player p's
// dealt hand is its table plus the hand now held by p-1. The mean count of
// type k in a dealt hand must be h*FullDeck[k]/108 (within 5 standard
// errors of the hypergeometric count), for every player count.
func TestPlayoutDealUniform(t *testing.T) {
	runs := 6000
	if testing.Short() {
		runs = 1500
	}
	rng := games.NewRand(31)
	for np := 2; np <= MaxPlayers; np++ {
		g := New(np, false)
		h := float64(HandSize(np))
		var sum [NumCards]float64
		for range runs {
			s := g.NewInitialState().(*State)
			s.RandomPlayoutTricks(rng, 1)
			for p := range np {
				q := (p + np - 1) % np
				for k := range NumCards {
					sum[k] += float64(s.c.table[p][k]) + float64(s.c.hands[q][k])
				}
			}
		}
		n := float64(runs * np)
		for k := range NumCards {
			pk := float64(FullDeck[k]) / 108
			sd := math.Sqrt(h * pk * (1 - pk) * (108 - h) / 107)
			if got, want := sum[k]/n, h*pk; math.Abs(got-want) > 5*sd/math.Sqrt(n) {
				t.Errorf("%d players, %s: mean %.3f per dealt hand, want %.3f", np, Card(k), got, want)
			}
		}
	}
}

// TestPlayoutPlayers compares the specialised playout with
// games.RandomPlayout for 2, 3 and 5 players (mean final scores and
// puddings within 5 standard errors of the difference, estimated from the
// samples) and checks card conservation and notation round trips when a
// playout stops inside a round.
func TestPlayoutPlayers(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 500
	}
	rng := games.NewRand(41)
	mask := games.NewMask(NumActions)
	for _, np := range []int{2, 3, 5} {
		g := New(np, false)
		joint := make([]games.Action, np)
		// sum[path][stat], sq likewise; stats: score of each player, then
		// puddings of each player.
		var sum, sq [2][2 * MaxPlayers]float64
		for range n {
			for path := range 2 {
				s := g.NewInitialState().(*State)
				if path == 0 {
					s.RandomPlayout(rng)
				} else {
					games.RandomPlayout(s, rng, mask, joint)
				}
				for p := range np {
					for i, v := range []float64{float64(s.c.score[p]), float64(s.c.pudding[p])} {
						sum[path][i*MaxPlayers+p] += v
						sq[path][i*MaxPlayers+p] += v * v
					}
				}
			}
		}
		for i := range 2 * MaxPlayers {
			if i%MaxPlayers >= np {
				continue
			}
			var m, v [2]float64
			for path := range 2 {
				m[path] = sum[path][i] / float64(n)
				v[path] = sq[path][i]/float64(n) - m[path]*m[path]
			}
			if tol := 5 * math.Sqrt((v[0]+v[1])/float64(n)); math.Abs(m[0]-m[1]) > tol {
				t.Errorf("%d players, statistic %d: mean %.2f (playout) vs %.2f (generic), tolerance %.2f", np, i, m[0], m[1], tol)
			}
		}
		// Stops inside rounds: every card is somewhere, the state parses.
		h := HandSize(np)
		for range 100 {
			s := g.NewInitialState().(*State)
			s.RandomPlayoutTricks(rng, rng.IntN(3*h))
			if s.IsTerminal() || s.c.dealing() {
				continue
			}
			var total Counts
			for p := range np {
				for k := range NumCards {
					total[k] += s.c.hands[p][k] + s.c.table[p][k]
				}
			}
			for k := range NumCards {
				total[k] += s.c.deck[k]
			}
			if got, want := total.Total(), 108-int(s.c.round)*np*h; got != want {
				t.Fatalf("%s: %d cards in hands, tables and deck, want %d", s, got, want)
			}
			for k := range NumCards {
				if total[k] > FullDeck[k] {
					t.Fatalf("%s: %d %s cards", s, total[k], Card(k))
				}
			}
			for p := range np {
				if s.c.openWasabi(p) < 0 || s.c.hands[p].Total() != h-int(s.c.turn) || s.c.table[p].Total() != int(s.c.turn) {
					t.Fatalf("%s: player %d hand or table size wrong", s, p)
				}
			}
			t2, err := g.ParseState(s.String())
			if err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			if t2.String() != s.String() {
				t.Fatalf("notation round trip: %s became %s", s, t2)
			}
		}
	}
}

// TestCountsPick compares the branch-free deal lookup with a walk over the
// counts, for every r of random decks (the full deck included).
func TestCountsPick(t *testing.T) {
	rng := games.NewRand(51)
	for i := range 500 {
		d := FullDeck
		if i > 0 {
			for k := range d {
				d[k] = uint8(rng.IntN(int(FullDeck[k]) + 1))
			}
		}
		for r := range d.Total() {
			want, x := Card(0), r
			for x >= int(d[want]) {
				x -= int(d[want])
				want++
			}
			if got := d.pick(r); got != want {
				t.Fatalf("deck %v, r %d: pick %s, want %s", d, r, got, want)
			}
		}
	}
}

func TestPlayoutAllocs(t *testing.T) {
	g := New(4, false)
	init := g.NewInitialState().(*State)
	s := g.NewInitialState().(*State)
	rng := games.NewRand(61)
	if allocs := testing.AllocsPerRun(100, func() {
		init.CloneInto(s)
		s.RandomPlayout(rng)
	}); allocs != 0 {
		t.Errorf("RandomPlayout allocates %.1f times", allocs)
	}
}

// TestDeckCards checks fill (full deck and general path) and that draw
// moves exactly the drawn cards out of the expanded deck.
func TestDeckCards(t *testing.T) {
	rng := games.NewRand(71)
	r := fastRand{s: 72}
	for i := range 300 {
		c := FullDeck
		if i > 0 {
			for k := range c {
				c[k] = uint8(rng.IntN(int(FullDeck[k]) + 1))
			}
		}
		var d deckCards
		d.fill(packNib(&c))
		var got Counts
		for _, k := range d.c[:d.n] {
			got[k]++
		}
		if d.n != c.Total() || got != c {
			t.Fatalf("fill(%v) holds %v (%d cards)", c, got, d.n)
		}
		k := rng.IntN(d.n + 1)
		drawn := d.draw(&r, k)
		var rest Counts
		for _, x := range d.c[:d.n] {
			rest[x]++
		}
		if d.n != c.Total()-k || packNib(&rest)+drawn != packNib(&c) {
			t.Fatalf("draw %d from %v: %d left, %v left plus %x drawn", k, c, d.n, rest, drawn)
		}
	}
}
