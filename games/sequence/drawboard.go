package sequence

import (
	"strconv"

	"github.com/canopy-go/canopy/games"
)

var _ games.Boarder = (*State)(nil)

// Board implements games.Boarder with what viewer may see, as Draw shows
// it: the chips by owner (Marks 2: locked in a sequence), the card faces
// as Labels ("*" a corner), each player's sequences and the hands viewer
// may see (the sizes of the others), and the deck line as a note. The
// squares of the shown hand's cards (the viewer's, else the mover's) are
// marked 1; an offered play of such a card, not a jack, is taken by its
// square (jacks, dead cards and pass stay buttons).
func (s *State) Board(viewer int, offered games.Mask) *games.Board {
	b := games.NewGridBoard("sequence", 10, 10)
	b.Buttons = true
	b.Labels = make([][]string, 10)
	b.Marks = make([][]int, 10)
	for r := range 10 {
		b.Labels[r] = make([]string, 10)
		b.Marks[r] = make([]int, 10)
		for c := range 10 {
			sq := r*10 + c
			if corners.has(sq) {
				b.Labels[r][c] = "*"
				continue
			}
			b.Labels[r][c] = cardName(uint8(squareKind[sq]))
			for p := range s.g.players {
				if s.chips[p].has(sq) {
					b.Cells[r][c] = p
					if s.locked[p].has(sq) {
						b.Marks[r][c] = 2
					}
				}
			}
		}
	}
	for p := range s.g.players {
		pl := games.BoardPlayer{Player: p, Note: strconv.Itoa(int(s.seqs[p])) + " sequences", HandCount: int(s.hn[p])}
		if viewer < 0 || viewer == p {
			pl.Hand = []string{}
			for _, k := range s.hand[p][:s.hn[p]] {
				pl.Hand = append(pl.Hand, cardName(k))
			}
		} else {
			pl.Hidden = true
		}
		b.Players = append(b.Players, pl)
	}
	b.Notes = append(b.Notes, s.status())
	// The hand whose squares to mark: the viewer's, else the mover's.
	own := viewer
	if own < 0 {
		own = s.CurrentPlayer()
	}
	held := map[string]bool{}
	if own >= 0 && own < s.g.players {
		for _, k := range b.Players[own].Hand {
			held[k] = true
		}
	}
	for r := range 10 {
		for c := range 10 {
			if b.Cells[r][c] < 0 && held[b.Labels[r][c]] {
				b.Marks[r][c] = 1
			}
		}
	}
	if s.phase != phPlay {
		return b
	}
	hand := s.hand[s.player][:s.hn[s.player]]
	for a := range offered.All() {
		slot, sq := int(a)/numSquares, int(a)%numSquares
		if a == PassAction || sq == 0 || slot >= len(hand) || kindRank(hand[slot]) == rankJack {
			continue
		}
		b.Actions[sq/10][sq%10] = int(a)
	}
	return b
}
