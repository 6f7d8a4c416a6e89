package sequence

import (
	"testing"

	"github.com/canopy-go/canopy/games"
)

var lineSteps = [4][2]int{{0, 1}, {1, 0}, {1, 1}, {1, -1}}

// longestRunNaive walks every line square by square.
func longestRunNaive(s *State, p int) int {
	own := func(r, c int) bool {
		return r >= 0 && r < 10 && c >= 0 && c < 10 && (corners.has(r*10+c) || s.chips[p].has(r*10+c))
	}
	best := 0
	for sq := range numSquares {
		for _, d := range lineSteps {
			n := 0
			for r, c := sq/10, sq%10; own(r, c); r, c = r+d[0], c+d[1] {
				n++
			}
			best = max(best, n)
		}
	}
	return best
}

// blocksFiveNaive enumerates the five-square windows through m's square.
func blocksFiveNaive(s *State, m games.Action) bool {
	p := int(s.player)
	slot, sq := int(m)/numSquares, int(m)%numSquares
	if s.phase != phPlay || slot >= int(s.hn[p]) || kindClass(s.hand[p][slot]) == kindOneEyed ||
		corners.has(sq) || s.occupied().has(sq) {
		return false
	}
	for q := range s.g.players {
		if q == p {
			continue
		}
		for _, d := range lineSteps {
			for off := -4; off <= 0; off++ {
				r0, c0 := sq/10+off*d[0], sq%10+off*d[1]
				ok, locked := true, 0
				for i := range 5 {
					r, c := r0+i*d[0], c0+i*d[1]
					if r < 0 || r > 9 || c < 0 || c > 9 {
						ok = false
						break
					}
					t := r*10 + c
					if s.locked[q].has(t) {
						locked++
					}
					if t != sq && !corners.has(t) && !s.chips[q].has(t) {
						ok = false
					}
				}
				if ok && locked <= 1 {
					return true
				}
			}
		}
	}
	return false
}

// Hand-made positions with known answers.
func TestLongestRunAndBlocksFive(t *testing.T) {
	g := games.MustNew("sequence:jacks=false")
	empty := parse(t, g, board(nil)+" play:0 h=5H;3D d=- s=0,0 p=0 m=2")
	if n := empty.LongestRun(0); n != 1 {
		t.Errorf("empty board: longest run %d, want 1 (a corner)", n)
	}
	// Player 0 holds a6..d6 (row 4, columns 0-3) and b10..d10 next to
	// corner a10; player 1 is to move with a 5H (squares e6 and i4).
	chips := rowChips(rowChips(map[string]byte{}, 4, "0123", 'a'), 0, "123", 'a')
	s := parse(t, g, board(chips)+" play:1 h=KD;5H,3D d=- s=0,0 p=0 m=20")
	if n := s.LongestRun(0); n != 4 {
		t.Errorf("longest run of player 0: %d, want 4", n)
	}
	if n := s.LongestRun(1); n != 1 {
		t.Errorf("longest run of player 1: %d, want 1", n)
	}
	for _, c := range []struct {
		move string
		want bool
	}{{"5H@e6", true}, {"5H@i4", false}, {"3D@d5", false}} {
		m, err := s.ParseAction(c.move)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.BlocksFive(m); got != c.want {
			t.Errorf("BlocksFive(%s) = %v, want %v", c.move, got, c.want)
		}
	}
	// b10..d10 and the corner make four; e10 (5S) is its gap.
	s = parse(t, g, board(chips)+" play:1 h=KD;5S,3D d=- s=0,0 p=0 m=20")
	if m, _ := s.ParseAction("5S@e10"); !s.BlocksFive(m) {
		t.Error("5S@e10 does not block the four that includes the corner")
	}
	// A locked sequence on row 4, columns 0-4, and chips on columns 5-7:
	// columns 4-8 share one locked chip, so i6 (7H) completes a new
	// sequence and blocking it counts; with a chip on column 5 only,
	// columns 2-6 would share three locked chips, so g6 (AH) is no gap.
	locked := rowChips(rowChips(map[string]byte{}, 4, "01234", 'A'), 4, "567", 'a')
	s = parse(t, g, board(locked)+" play:1 h=KD;7H,3D d=- s=1,0 p=0 m=30")
	if m, _ := s.ParseAction("7H@i6"); !s.BlocksFive(m) {
		t.Error("7H@i6 does not block a four that shares one locked chip")
	}
	shared := rowChips(rowChips(map[string]byte{}, 4, "01234", 'A'), 4, "5", 'a')
	s = parse(t, g, board(shared)+" play:1 h=KD;AH,3D d=- s=1,0 p=0 m=30")
	if m, _ := s.ParseAction("AH@g6"); s.BlocksFive(m) {
		t.Error("AH@g6 blocks a window that would share three locked chips")
	}
	if n := s.LongestRun(0); n != 6 {
		t.Errorf("longest run through a locked sequence: %d, want 6", n)
	}
}

// LongestRun and BlocksFive agree with square-by-square walks over
// random games, with and without jacks and with three players.
func TestLinesMatchNaive(t *testing.T) {
	m := games.NewMask(NumActions)
	blocks := map[string]int{}
	randomGames(5, 20, func(sp string, s *State) {
		if s.CurrentPlayer() < 0 {
			return
		}
		for p := range s.g.NumPlayers() {
			if got, want := s.LongestRun(p), longestRunNaive(s, p); got != want {
				t.Fatalf("%s: LongestRun(%d) = %d, want %d: %s", sp, p, got, want, s)
			}
		}
		s.Legal(m)
		for a := range m.All() {
			got, want := s.BlocksFive(a), blocksFiveNaive(s, a)
			if got != want {
				t.Fatalf("%s: BlocksFive(%s) = %v, want %v: %s", sp, s.ActionString(a), got, want, s)
			}
			if got {
				blocks[sp]++
			}
		}
	})
	for _, sp := range []string{"sequence", "sequence:jacks=false", "sequence:players=3"} {
		if blocks[sp] == 0 {
			t.Errorf("%s: no blocking move met in the random games", sp)
		}
	}
}
