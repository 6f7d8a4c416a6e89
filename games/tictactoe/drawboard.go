package tictactoe

import "github.com/canopy-go/canopy/games"

var _ games.Boarder = (*State)(nil)

// Board implements games.Boarder: the 3 x 3 grid by owner; cell r*3+c
// takes action r*3+c. Nothing is hidden, so viewer and offered change
// nothing.
func (s *State) Board(viewer int, offered games.Mask) *games.Board {
	b := games.NewGridBoard("tictactoe", 3, 3)
	for i := range 9 {
		r, c := i/3, i%3
		for p := range 2 {
			if s.stones[p]>>i&1 != 0 {
				b.Cells[r][c] = p
			}
		}
		b.Actions[r][c] = i
	}
	return b
}
