package strands

import (
	"strconv"
	"strings"

	"github.com/canopy-go/canopy/games"
)

var _ games.Boarder = (*State)(nil)

// Board implements games.Boarder: the W x W array of the game's files
// (Board.X, Board.Y), off-board cells -1 with no action; Labels are the
// printed numbers; Notes say where the turn stands and list each player's
// group sizes. Nothing is hidden, so viewer and offered change nothing.
func (s *State) Board(viewer int, offered games.Mask) *games.Board {
	bd := s.g.b
	b := games.NewGridBoard("strands", bd.W, bd.W)
	b.Labels = make([][]string, bd.W)
	for r := range b.Labels {
		b.Labels[r] = make([]string, bd.W)
	}
	for c := range bd.N {
		x, y := int(bd.X[c]), int(bd.Y[c])
		w, bit := c>>6, uint64(1)<<(c&63)
		for p := range 2 {
			if s.stones[p][w]&bit != 0 {
				b.Cells[x][y] = p
			}
		}
		b.Actions[x][y] = c
		b.Labels[x][y] = strconv.Itoa(int(bd.Label[c]))
	}
	if !s.over {
		if s.step > 0 {
			b.Notes = append(b.Notes, "this turn's number: "+strconv.Itoa(s.Pick())+", "+strconv.Itoa(s.step)+" stone(s) placed")
		} else if s.turn > 0 {
			b.Notes = append(b.Notes, "a new turn: any empty cell; its number says how many stones this turn places")
		}
	}
	var gs [MaxCells]uint8
	for p, name := range []string{"Black", "White"} {
		n := s.Groups(p, &gs)
		sizes := make([]string, n)
		for i := range n {
			sizes[i] = strconv.Itoa(int(gs[i]))
		}
		if n == 0 {
			sizes = []string{"none"}
		}
		b.Notes = append(b.Notes, name+" groups: "+strings.Join(sizes, " "))
	}
	return b
}
