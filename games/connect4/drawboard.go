package connect4

import "github.com/canopy-go/canopy/games"

var _ games.Boarder = (*State)(nil)

// Board implements games.Boarder: the Height x Width grid by owner, row 0
// at the top; every cell takes its column's action. Nothing is hidden, so
// viewer and offered change nothing.
func (s *State) Board(viewer int, offered games.Mask) *games.Board {
	b := games.NewGridBoard("connect4", Height, Width)
	b.RowsUp = true
	obs := make([]float32, 2*Cells)
	s.Observation(0, obs) // plane 0: player 0's stones, plane 1: player 1's; index row*Width+col, row 0 at the bottom
	for r := range Height {
		for c := range Width {
			i := (Height-1-r)*Width + c
			switch {
			case obs[i] != 0:
				b.Cells[r][c] = 0
			case obs[Cells+i] != 0:
				b.Cells[r][c] = 1
			}
			b.Actions[r][c] = c
		}
	}
	return b
}
