package tetrislink

import (
	"fmt"
	"strings"
)

// Observation implements games.State. dst has 6*players planes of 20x10,
// row-major with plane row 0 = the top board row (as Draw prints it):
//
//	planes 0..P-1:  cells of player (viewer+i) mod P, i = 0..P-1 (1 or 0);
//	planes P..6P-1: for i = 0..P-1 and shape k in I,O,T,S,L order, plane
//	                P+5i+k is constant: pieces of shape k left to player
//	                (viewer+i) mod P, divided by 5.
//
// The player to move is not encoded: observations are taken for the mover.
func (s *State) Observation(viewer int, dst []float32) {
	np := s.g.players
	const plane = Height * Width
	clear(dst[:np*plane])
	for i := range np {
		own := &s.own[(viewer+i)%np]
		base := i * plane
		for r := range Height {
			row := own[r]
			off := base + (Height-1-r)*Width
			for ; row != 0; row &= row - 1 {
				dst[off+trailing(row)] = 1
			}
		}
	}
	for i := range np {
		for k := range NumShapes {
			v := float32(s.left[(viewer+i)%np][k]) / PiecesEach
			pl := dst[(np+i*NumShapes+k)*plane : (np+i*NumShapes+k+1)*plane]
			for j := range pl {
				pl[j] = v
			}
		}
	}
}

// playerLetters marks each player's cells in Draw.
const playerLetters = "XOAB"

// Draw implements games.Drawer: a header with scores and pieces left, then
// the board top row first, players' cells as X, O, A, B and empty cells as
// '.', columns numbered 1..10 (10 printed as 0). viewer is ignored (perfect
// information).
func (s *State) Draw(viewer int) string {
	var b strings.Builder
	for p := range s.g.players {
		mark := " "
		if int(s.toMove) == p {
			mark = "*"
		}
		fmt.Fprintf(&b, "%s player %d (%c): score %d, left", mark, p, playerLetters[p], s.score[p])
		for k := range NumShapes {
			fmt.Fprintf(&b, " %c%d", shapeLetters[k], s.left[p][k])
		}
		b.WriteByte('\n')
	}
	if s.toMove < 0 {
		b.WriteString("  game over\n")
	}
	for r := Height - 1; r >= 0; r-- {
		fmt.Fprintf(&b, "%2d |", r+1)
		for c := range Width {
			ch := byte('.')
			for p := range s.g.players {
				if s.own[p][r]>>c&1 != 0 {
					ch = playerLetters[p]
				}
			}
			b.WriteByte(' ')
			b.WriteByte(ch)
		}
		b.WriteString(" |\n")
	}
	b.WriteString("   +---------------------+\n     1 2 3 4 5 6 7 8 9 0\n")
	return b.String()
}
