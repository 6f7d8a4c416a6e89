package tetrislink

import (
	"strings"

	"github.com/canopy-go/canopy/games"
)

var _ games.Boarder = (*State)(nil)

// Board implements games.Boarder: the Height x Width grid by owner (row 0
// at the top), each player's pieces left per shape (PieceNames "I", "O",
// "T", "S", "L"), and for each offered placement the cells it would fill
// (found by playing it on a clone). Cells take no action: a placement is
// picked among the Drops. Nothing is hidden, so viewer changes nothing.
func (s *State) Board(viewer int, offered games.Mask) *games.Board {
	np := s.g.players
	b := games.NewGridBoard("tetrislink", Height, Width)
	for r := range Height {
		for c := range Width {
			for p := range np {
				if s.own[p][Height-1-r]>>c&1 != 0 {
					b.Cells[r][c] = p
				}
			}
		}
	}
	b.PieceNames = strings.Split(shapeLetters, "")
	for p := range np {
		pl := games.BoardPlayer{Player: p, Pieces: make([]int, NumShapes)}
		for k := range NumShapes {
			pl.Pieces[k] = int(s.left[p][k])
			pl.HandCount += pl.Pieces[k]
		}
		b.Players = append(b.Players, pl)
	}
	var after State
	for a := range offered.All() {
		s.CloneInto(&after)
		after.Apply(a)
		text := s.ActionString(a)
		d := games.Drop{ID: int(a), Player: s.CurrentPlayer(), Text: text, Col: int(a) % Width}
		d.Orient, _, _ = strings.Cut(text, "@")
		for r := range Height {
			for c := range Width {
				if b.Cells[r][c] >= 0 {
					continue
				}
				for p := range np {
					if after.own[p][Height-1-r]>>c&1 != 0 {
						d.Cells = append(d.Cells, [2]int{r, c})
					}
				}
			}
		}
		b.Drops = append(b.Drops, d)
	}
	return b
}
