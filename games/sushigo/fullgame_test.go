package sushigo

import (
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// dealHands deals hands a (to player 0) and b (to player 1) through the
// chance actions, alternating as the rules core deals (card d to player
// d mod 2).
func dealHands(t *testing.T, s games.State, a, b string) {
	t.Helper()
	for i := range len(a) {
		for _, h := range []string{a, b} {
			k, _, err := parseCounts(h[i:i+1], false)
			if err != nil {
				t.Fatal(err)
			}
			for c, n := range k {
				if n > 0 {
					if err := games.ApplyChecked(s, games.Action(c)); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
}

// playTricks applies the tricks, each "p0action p1action", checking that
// every action is legal.
func playTricks(t *testing.T, s *State, tricks []string) {
	t.Helper()
	m := games.NewMask(NumActions)
	for i, tr := range tricks {
		f := strings.Fields(tr)
		joint := make([]games.Action, 2)
		for p := range 2 {
			a, err := s.ParseAction(f[p])
			if err != nil {
				t.Fatalf("trick %d: %v", i, err)
			}
			s.LegalFor(p, m)
			if !m.Has(a) {
				t.Fatalf("trick %d: %s is not legal for player %d in %s", i, f[p], p, s)
			}
			joint[p] = a
		}
		s.ApplyJoint(joint)
	}
}

// TestFullGameTally plays a whole 2-player game with chosen deals and
// picks; every trick and every score was worked out by hand below.
// Letters: T tempura S sashimi D dumpling 1/2/3 maki W wasabi E egg
// N salmon Q squid P pudding C chopsticks. Player 0 holds hand A on even
// tricks and hand B on odd tricks (hands swap every trick).
func TestFullGameTally(t *testing.T) {
	g := New(2, false)
	s := g.NewInitialState().(*State)

	// Round 1. A = TTSSSWNDDP, B = 123EQCTDE2.
	dealHands(t, s, "TTSSSWNDDP", "123EQCTDE2")
	if got := s.String(); !strings.HasPrefix(got, "round=1 hands=TTSSSDDWNP/TD1223EEQC table=-/- ") {
		t.Fatalf("after the first deal: %s", got)
	}
	playTricks(t, s, []string{
		"wasabi chopsticks",            // p0: W            p1: C
		"squid chop:sashimi+sashimi",   // p0: W+Q          p1: SS, C back into A
		"tempura maki3",                // p0: +T           p1: +3
		"tempura sashimi",              // p0: +T (TT)      p1: SSS
		"chopsticks maki2",             // p0: +C           p1: +2
		"chop:dumpling+maki2 dumpling", // p0: +D +2, C back into B; p1: +D
		"dumpling chopsticks",          // p0: DD           p1: +C
		"egg chop:tempura+salmon",      // p0: +E           p1: +T +N, C back into A
		"pudding maki1",                // p0: +P           p1: +1
		"egg chopsticks",               // p0: +E           p1: +C
	})
	// p0: Q on wasabi 9, TT 5, DD 3, E+E 2 = 19; maki 2 icons (second) +3 -> 22; 1 pudding.
	// p1: SSS 10, D 1, T 0, N 2, C 0 = 13; maki 3+2+1 = 6 icons (most) +6 -> 19.
	checkScores(t, s, 22, 19, 1, 0)

	// Round 2. A = DDDPPTTSNW, B = DDDP11TQES.
	dealHands(t, s, "DDDPPTTSNW", "DDDP11TQES")
	playTricks(t, s, []string{
		"dumpling pudding",  // p0: D      p1: P
		"dumpling pudding",  // p0: DD     p1: PP
		"dumpling tempura",  // p0: DDD    p1: +T
		"dumpling tempura",  // p0: DDDD   p1: TT
		"dumpling dumpling", // p0: DDDDD p1: +D
		"maki1 wasabi",      // p0: +1     p1: +W
		"pudding squid",     // p0: +P     p1: Q on wasabi
		"maki1 salmon",      // p0: +1     p1: +N (no open wasabi)
		"tempura egg",       // p0: +T     p1: +E
		"sashimi sashimi",   // p0: +S     p1: +S
	})
	// p0: D x5 15, T 0, S 0 = 15; maki 2 icons, p1 has none: +6 -> 21. Puddings 1+1 = 2.
	// p1: TT 5, D 1, Q on wasabi 9, N 2, E 1, S 0 = 18; no maki. Puddings 0+2 = 2.
	checkScores(t, s, 22+21, 19+18, 2, 2)

	// Round 3. A = PPP33SSSEN, B = TT22DWQEC1.
	dealHands(t, s, "PPP33SSSEN", "TT22DWQEC1")
	playTricks(t, s, []string{
		"pudding chopsticks",          // p0: P          p1: C
		"wasabi pudding",              // p0: +W         p1: +P
		"pudding chop:maki2+maki2",    // p0: PP         p1: +2 +2, C back into B
		"squid maki3",                 // p0: Q on W     p1: +3
		"sashimi tempura",             // p0: +S         p1: +T
		"chopsticks sashimi",          // p0: +C         p1: +S
		"chop:sashimi+salmon tempura", // p0: SS +N, C back into A; p1: TT
		"maki1 maki3",                 // p0: +1         p1: +3
		"egg dumpling",                // p0: +E         p1: +D
		"egg chopsticks",              // p0: +E         p1: +C
	})
	// p0: Q on wasabi 9, SS 0, N 2, E+E 2 = 13; maki 1 icon (second) +3 -> 16.
	// p1: TT 5, S 0, D 1, C 0 = 6; maki 2+2+3+3 = 10 icons +6 -> 12.
	// Totals 43+16 = 59 and 37+12 = 49. Puddings 2+2 = 4 vs 2+1 = 3:
	// p0 +6, and with 2 players p1 loses nothing. Final 65 : 49.
	if !s.IsTerminal() {
		t.Fatalf("game not over: %s", s)
	}
	checkScores(t, s, 65, 49, 4, 3)
	ret := make([]float64, 2)
	s.Returns(ret)
	if !slices.Equal(ret, []float64{1, -1}) {
		t.Errorf("returns %v, want [1 -1]", ret)
	}
	if s.MoveNumber() != 3*(20+10) { // 3 rounds * (20 deals + 10 joint tricks)
		t.Errorf("move number %d, want 90", s.MoveNumber())
	}
}

func checkScores(t *testing.T, s *State, s0, s1, p0, p1 int) {
	t.Helper()
	sc := make([]float64, 2)
	s.Scores(sc)
	if sc[0] != float64(s0) || sc[1] != float64(s1) || s.Puddings(0) != p0 || s.Puddings(1) != p1 {
		t.Fatalf("scores %v puddings %d,%d; want [%d %d] puddings %d,%d\n%s", sc, s.Puddings(0), s.Puddings(1), s0, s1, p0, p1, s.Draw(-1))
	}
}
