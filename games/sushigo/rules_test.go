package sushigo

import (
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// Expected values below are worked by hand from RULES.md (the 2014
// rulebook), not taken from running the code.

func TestDeck(t *testing.T) {
	if n := FullDeck.Total(); n != 108 {
		t.Fatalf("deck has %d cards, want 108", n)
	}
	for np, want := range map[int]int{2: 10, 3: 9, 4: 8, 5: 7} {
		if HandSize(np) != want {
			t.Errorf("HandSize(%d) = %d, want %d", np, HandSize(np), want)
		}
	}
}

func table(s string) (Counts, [3]uint8) {
	k, w, err := parseCounts(s, true)
	if err != nil {
		panic(err)
	}
	return k, w
}

func TestTableScore(t *testing.T) {
	cases := []struct {
		table string
		want  int
	}{
		{"-", 0},
		{"T", 0}, {"TT", 5}, {"TTT", 5}, {"TTTT", 10}, {"TTTTT", 10},
		{"S", 0}, {"SS", 0}, {"SSS", 10}, {"SSSSS", 10}, {"SSSSSS", 20},
		{"D", 1}, {"DD", 3}, {"DDD", 6}, {"DDDD", 10}, {"DDDDD", 15}, {"DDDDDD", 15}, {"DDDDDDDD", 15},
		{"E", 1}, {"N", 2}, {"Q", 3}, {"ENQ", 6},
		{"e", 3}, {"n", 6}, {"q", 9}, // nigiri on wasabi: triple
		{"W", 0}, {"WW", 0}, {"WE", 1}, // open wasabi scores nothing; E placed before it stays single
		{"nQ", 9},                                 // only the nigiri on the wasabi is tripled
		{"C", 0}, {"CC", 0}, {"P", 0}, {"123", 0}, // maki and pudding score elsewhere
		{"TTSSSDDDqE", 5 + 10 + 6 + 9 + 1},
	}
	for _, c := range cases {
		k, w := table(c.table)
		if got := tableScore(&k, &w); got != c.want {
			t.Errorf("tableScore(%s) = %d, want %d", c.table, got, c.want)
		}
	}
}

// TestWasabiPlacement checks that a wasabi triples the next nigiri only,
// through the placing rules rather than the notation.
func TestWasabiPlacement(t *testing.T) {
	cases := []struct {
		cards []Card
		want  int
	}{
		{[]Card{Wasabi, Egg, Salmon}, 3 + 2},           // egg on wasabi, salmon plain
		{[]Card{Wasabi, Wasabi, Salmon, Squid}, 6 + 9}, // each wasabi takes one nigiri
		{[]Card{Salmon, Wasabi}, 2},                    // nigiri before wasabi: not tripled
		{[]Card{Wasabi, Tempura, Squid, Squid}, 9 + 3}, // other cards in between do not matter
		{[]Card{Squid, Wasabi, Egg, Wasabi, Salmon}, 3 + 3 + 6},
	}
	for _, c := range cases {
		var co core
		co.reset(2)
		for _, k := range c.cards {
			co.place(0, k)
		}
		if got := tableScore(&co.table[0], &co.onWasabi[0]); got != c.want {
			t.Errorf("placing %v scores %d, want %d", c.cards, got, c.want)
		}
	}
}

func TestMakiScores(t *testing.T) {
	cases := []struct {
		icons []int
		want  []int
	}{
		{[]int{3, 2, 1, 0}, []int{6, 3, 0, 0}},
		{[]int{3, 3, 1}, []int{3, 3, 0}},       // tie for first: split 6, no second place
		{[]int{4, 4, 4, 1}, []int{2, 2, 2, 0}}, // 6/3
		{[]int{4, 4, 4, 4}, []int{1, 1, 1, 1}}, // 6/4 rounded down
		{[]int{5, 2, 2, 2}, []int{6, 1, 1, 1}}, // second place split 3/3
		{[]int{5, 2, 2}, []int{6, 1, 1}},       // 3/2 rounded down
		{[]int{2, 0}, []int{6, 0}},             // no icon: no second place
		{[]int{0, 0, 0}, []int{0, 0, 0}},       // nobody has maki
		{[]int{1, 6, 3, 3, 0}, []int{0, 6, 1, 1, 0}},
		{[]int{3, 3, 3, 3, 3}, []int{1, 1, 1, 1, 1}},
	}
	for _, c := range cases {
		var pts [MaxPlayers]int
		makiScores(c.icons, &pts)
		for p, w := range c.want {
			if pts[p] != w {
				t.Errorf("maki %v: points %v, want %v", c.icons, pts[:len(c.icons)], c.want)
				break
			}
		}
	}
}

func TestPuddingScores(t *testing.T) {
	cases := []struct {
		pud  []uint8
		want []int
	}{
		{[]uint8{3, 1, 0}, []int{6, 0, -6}},
		{[]uint8{3, 1}, []int{6, 0}}, // 2 players: nobody loses points
		{[]uint8{0, 2}, []int{0, 6}},
		{[]uint8{1, 1}, []int{0, 0}},                       // all equal: nothing
		{[]uint8{2, 2, 2, 2}, []int{0, 0, 0, 0}},           // all equal: nothing
		{[]uint8{2, 2, 0, 1}, []int{3, 3, -6, 0}},          // ties for most split
		{[]uint8{2, 0, 0}, []int{6, -3, -3}},               // ties for fewest split
		{[]uint8{0, 0, 0, 0, 3}, []int{-1, -1, -1, -1, 6}}, // -6/4, remainder ignored
		{[]uint8{4, 4, 4, 1, 1}, []int{2, 2, 2, -3, -3}},
	}
	for _, c := range cases {
		var pts [MaxPlayers]int
		puddingScores(c.pud, &pts)
		for p, w := range c.want {
			if pts[p] != w {
				t.Errorf("pudding %v: points %v, want %v", c.pud, pts[:len(c.pud)], c.want)
				break
			}
		}
	}
}

func TestReturns(t *testing.T) {
	g := New(3, false)
	cases := []struct {
		notation string
		want     []float64
	}{
		// 30 > 20 > 10.
		{"round=over hands=-/-/- table=-/-/- pudding=0,0,0 score=10,30,20 deck=-", []float64{-1, 1, 0}},
		// Equal points: most puddings wins the tie-break.
		{"round=over hands=-/-/- table=-/-/- pudding=1,3,0 score=30,30,5 deck=-", []float64{0, 1, -1}},
		// Still tied: shared.
		{"round=over hands=-/-/- table=-/-/- pudding=2,2,0 score=30,30,5 deck=-", []float64{0.5, 0.5, -1}},
	}
	ret := make([]float64, 3)
	for _, c := range cases {
		s, err := g.ParseState(c.notation)
		if err != nil {
			t.Fatal(err)
		}
		s.Returns(ret)
		for p := range ret {
			if ret[p] != c.want[p] {
				t.Errorf("%s: returns %v, want %v", c.notation, ret, c.want)
				break
			}
		}
	}
}

// TestRoundEndScoring plays the last trick of a 3-player round from a
// notation and checks the points, maki included.
func TestRoundEndScoring(t *testing.T) {
	g := New(3, false)
	// 8 tricks played, one card left in each hand. Tables:
	// p0: TT SSS W(open) E 1   -> 5 + 10 + 1 = 16, 1 icon, then plays Q onto its wasabi: +9
	// p1: DDDD 3 3 N C         -> 10 + 2 = 12, 6 icons, plays maki2: 8 icons
	// p2: e 2 2 P P T D         -> 3 + 1, 4 icons, 2 puddings, plays T: +5
	s, err := g.ParseState("round=1 hands=Q/2/T table=TTSSSWE1/DDDD33NC/e22PPTD pudding=0,0,0 score=0,0,0 deck=" + deckMinus("Q2TTTSSSWE1DDDD33NCe22PPTD"))
	if err != nil {
		t.Fatal(err)
	}
	ss := s.(*State)
	ss.ApplyJoint([]games.Action{PickAction(Squid), PickAction(Maki2), PickAction(Tempura)})
	// Maki: p1 8 icons -> 6; p2 4 icons -> 3; p0 1 icon -> 0.
	want := []int16{16 + 9, 12 + 6, 3 + 1 + 5 + 3}
	for p, w := range want {
		if ss.c.score[p] != w {
			t.Errorf("player %d scored %d, want %d", p, ss.c.score[p], w)
		}
	}
	if ss.Puddings(2) != 2 || ss.Round() != 1 || ss.CurrentPlayer() != games.ChancePlayer {
		t.Errorf("after the round: puddings %d round %d player %d", ss.Puddings(2), ss.Round(), ss.CurrentPlayer())
	}
}

func TestChopsticks(t *testing.T) {
	g := New(2, false)
	// p0 has chopsticks on the table; hands hold 3 cards after 7 tricks.
	s, err := g.ParseState("round=1 hands=WNT/SSS table=CTTDDDD/DDDDDDD pudding=0,0 score=0,0 deck=" + deckMinus("WNTSSSCTTDDDDDDDDDDD"))
	if err != nil {
		t.Fatal(err)
	}
	st := s.(*State)
	m := games.NewMask(NumActions)
	st.LegalFor(0, m)
	want := "tempura wasabi salmon chop:tempura+wasabi chop:tempura+salmon chop:wasabi+salmon chop:salmon+wasabi"
	if got := games.FormatActions(st, m); got != want {
		t.Errorf("legal with chopsticks:\n got %s\nwant %s", got, want)
	}
	st.LegalFor(1, m)
	if got := games.FormatActions(st, m); got != "sashimi" {
		t.Errorf("p1 without chopsticks: %s", got)
	}
	a, err := st.ParseAction("chop:wasabi+salmon")
	if err != nil {
		t.Fatal(err)
	}
	st.ApplyJoint([]games.Action{a, PickAction(Sashimi)})
	// The chopsticks went back into the hand p0 passed, which p1 now holds.
	if got := st.String(); !strings.HasPrefix(got, "round=1 hands=SS/TC table=TTDDDDn/SDDDDDDD ") {
		t.Errorf("after chop:wasabi+salmon: %s", got)
	}
	// Nigiri first keeps the new wasabi open.
	s2, _ := g.ParseState("round=1 hands=WNT/SSS table=CTTDDDD/DDDDDDD pudding=0,0 score=0,0 deck=" + deckMinus("WNTSSSCTTDDDDDDDDDDD"))
	a, _ = s2.ParseAction("chop:salmon+wasabi")
	s2.(*State).ApplyJoint([]games.Action{a, PickAction(Sashimi)})
	if got := s2.String(); !strings.HasPrefix(got, "round=1 hands=SS/TC table=TTDDDDWN/") {
		t.Errorf("after chop:salmon+wasabi: %s", got)
	}
}

func TestHandBits(t *testing.T) {
	rng := games.NewRand(3)
	for range 2000 {
		var k Counts
		for i := range k {
			if rng.IntN(3) > 0 {
				k[i] = uint8(rng.IntN(11))
			}
		}
		var present, dup uint32
		n := 0
		for i, x := range k {
			if x > 0 {
				present |= 1 << i
			}
			if x > 1 {
				dup |= 1 << i
			}
			n += int(x)
		}
		if p, d, m := handBits(&k); p != present || d != dup || m != n {
			t.Fatalf("handBits(%v) = %b %b %d, want %b %b %d", k, p, d, m, present, dup, n)
		}
	}
}

// TestLegalMatchesRules compares the bitmask move generator with isLegal,
// which checks each action against the rules directly.
func TestLegalMatchesRules(t *testing.T) {
	g := New(3, false)
	rng := games.NewRand(5)
	m := games.NewMask(NumActions)
	for range 50 {
		s := g.NewInitialState().(*State)
		for !s.IsTerminal() {
			if s.c.dealing() {
				s.Apply(s.SampleChance(rng))
				continue
			}
			for p := range 3 {
				s.LegalFor(p, m)
				for a := range games.Action(NumActions) {
					if m.Has(a) != s.c.isLegal(p, a) {
						t.Fatalf("action %s for player %d: mask %v, rules %v in %s", actionText(a), p, m.Has(a), s.c.isLegal(p, a), s)
					}
				}
			}
			s.RandomPlayoutTricks(rng, 1)
		}
	}
}

// deckMinus is the notation of the full deck without the given card lists
// (table notation: lower-case nigiri count their wasabi too).
func deckMinus(lists ...string) string {
	d := FullDeck
	for _, l := range lists {
		k, _ := table(l)
		for i := range d {
			d[i] -= k[i]
		}
	}
	return string(appendCounts(nil, &d, nil))
}
