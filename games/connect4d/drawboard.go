package connect4d

import (
	"strconv"

	"github.com/canopy-go/canopy/games"
)

var _ games.Boarder = (*State)(nil)

// Board implements games.Boarder: the d boards side by side in one Rows x
// 7d grid (row 0 at the top); column 7b+c of the grid is board b's column
// c, whose action id is 7b+c too. Active is the board of the next stone.
// Nothing is hidden, so viewer and offered change nothing.
func (s *State) Board(viewer int, offered games.Mask) *games.Board {
	d := s.g.D()
	w := Cols * d
	b := games.NewGridBoard("connect4d", Rows, w)
	obs := make([]float32, games.ObservationSize(s.g))
	s.Observation(0, obs) // plane 0: player 0's stones, plane 1: player 1's; index row*w+col, row 0 at the top
	plane := Rows * w
	for r := range Rows {
		for c := range w {
			switch i := r*w + c; {
			case obs[i] != 0:
				b.Cells[r][c] = 0
			case obs[plane+i] != 0:
				b.Cells[r][c] = 1
			}
			b.Actions[r][c] = c
		}
	}
	b.Boards, b.Active = d, -1
	if !s.IsTerminal() {
		b.Active = s.step
		b.Notes = append(b.Notes, "stone "+strconv.Itoa(s.step+1)+" of "+strconv.Itoa(d)+" this turn: drop it into board "+strconv.Itoa(s.step))
	}
	return b
}
