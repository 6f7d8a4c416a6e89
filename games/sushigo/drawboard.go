package sushigo

import (
	"strconv"

	"github.com/canopy-go/canopy/games"
)

var _ games.Boarder = (*State)(nil)

// Board implements games.Boarder: no grid; a note on the round and trick,
// and per player the tableau ("wasabi+salmon": a nigiri on its wasabi),
// the puddings, the hand when viewer knows it (Knows, as Draw) with the
// action that picks each card, else its size, and whether the player has
// chosen this trick (what, for the player itself). Every move is a button;
// offered changes nothing.
func (s *State) Board(viewer int, offered games.Mask) *games.Board {
	b := &games.Board{Kind: "sushigo", Cells: [][]int{}, Actions: [][]int{}, Buttons: true}
	np := s.g.np
	switch {
	case s.IsTerminal():
		b.Notes = append(b.Notes, "game over")
	case s.CurrentPlayer() == games.ChancePlayer:
		b.Notes = append(b.Notes, "round "+strconv.Itoa(s.Round()+1)+" of 3: dealing")
	default:
		b.Notes = append(b.Notes, "round "+strconv.Itoa(s.Round()+1)+" of 3, trick "+strconv.Itoa(s.Turn()+1)+" of "+strconv.Itoa(HandSize(np)))
	}
	for p := range np {
		pl := games.BoardPlayer{Player: p, Puddings: s.Puddings(p), Table: []string{}}
		table, on := s.Table(p), s.OnWasabi(p)
		for c := range NumCards {
			k := Card(c)
			n := int(table[c])
			switch {
			case k == Wasabi:
				n -= int(on[0]) + int(on[1]) + int(on[2])
			case k >= Egg && k <= Squid:
				n -= int(on[k-Egg])
			}
			for range n {
				pl.Table = append(pl.Table, k.String())
			}
		}
		for i, n := range on {
			for range n {
				pl.Table = append(pl.Table, "wasabi+"+(Egg+Card(i)).String())
			}
		}
		hand := s.Hand(p)
		pl.HandCount = hand.Total()
		if viewer < 0 || s.Knows(viewer, p) {
			pl.Hand = []string{}
			for c := range NumCards {
				for range hand[c] {
					pl.Hand = append(pl.Hand, Card(c).String())
					pl.HandActions = append(pl.HandActions, int(PickAction(Card(c))))
				}
			}
		} else {
			pl.Hidden = true
		}
		if a := s.Pending(p); a != games.NoAction {
			if viewer < 0 || viewer == p {
				pl.Note = "chose " + s.ActionString(a)
			} else {
				pl.Note = "has chosen"
			}
		}
		b.Players = append(b.Players, pl)
	}
	return b
}
