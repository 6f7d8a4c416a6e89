package hex

import "github.com/canopy-go/canopy/games"

var _ games.Boarder = (*State)(nil)

// Board implements games.Boarder: the n x n rhombus by owner (Stone), each
// cell taking its own action (Game.Cell). Nothing is hidden, so viewer and
// offered change nothing.
func (s *State) Board(viewer int, offered games.Mask) *games.Board {
	n := s.g.Size()
	b := games.NewGridBoard("hex", n, n)
	for r := range n {
		for c := range n {
			b.Cells[r][c] = s.Stone(r, c)
			b.Actions[r][c] = int(s.g.Cell(r, c))
		}
	}
	return b
}
