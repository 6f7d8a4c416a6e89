package sushigo

import "github.com/canopy-go/canopy/games"

// Tensor layout (flat; counts scaled by 1/10, scores by 1/50).
//
// For each player slot j = 0..np-1, the player (viewer+j) mod np
// (egocentric: slot 0 is the viewer, slot 1 the player whose hand the
// viewer receives):
//
//	[0,12)  the hand that player holds now, if the viewer knows it (the
//	        viewer's own hand, and any hand the viewer has held earlier in
//	        this round, which it can follow exactly since all picks are
//	        revealed); zeros otherwise
//	12      1 if that hand is known to the viewer
//	[13,25) the cards in front of that player this round, puddings included
//	[25,28) egg, salmon, squid lying on a wasabi
//	28      puddings from completed rounds
//	29      points of completed rounds
//	30      1 if that player has chosen in the current trick (sequential view)
//
// Then: round one-hot (1, 2, 3, over), tricks played / hand size, cards
// dealt / (np * hand size), and a one-hot over the 93 actions of the
// viewer's own pending choice (sequential view). Other players' pending
// choices never appear.
//
// The information state appends two public-or-own aggregates: the cards
// discarded in earlier rounds (everything that was on a table, puddings
// aside) and the viewer's unseen pool (hands it does not know plus the
// undealt deck), 12 counts each.
const (
	slotSize  = 31
	tailSize  = 4 + 2 + NumActions
	extraSize = 2 * NumCards
)

func (g *Game) obsSize() int { return slotSize*g.np + tailSize }

// ObservationShape implements games.Game.
func (g *Game) ObservationShape() []int { return []int{g.obsSize()} }

// InformationStateShape implements games.InfoStateGame.
func (g *Game) InformationStateShape() []int { return []int{g.obsSize() + extraSize} }

// Observation implements games.State.
func (s *State) Observation(player int, dst []float32) {
	c := &s.c
	np := int(c.np)
	clear(dst[:s.g.obsSize()])
	for j := range np {
		q := (player + j) % np
		o := dst[j*slotSize : (j+1)*slotSize]
		if c.knows(player, q) {
			for k, n := range c.hands[q] {
				o[k] = float32(n) / 10
			}
			o[12] = 1
		}
		for k, n := range c.table[q] {
			o[13+k] = float32(n) / 10
		}
		for i, n := range c.onWasabi[q] {
			o[25+i] = float32(n) / 10
		}
		o[28] = float32(c.pudding[q]) / 10
		o[29] = float32(c.score[q]) / 50
		if c.pending[q] != games.NoAction {
			o[30] = 1
		}
	}
	t := dst[np*slotSize:]
	t[min(int(c.round), 3)] = 1
	t[4] = float32(c.turn) / float32(c.handSize())
	t[5] = float32(c.dealt) / float32(np*c.handSize())
	if a := c.pending[player]; a != games.NoAction {
		t[6+int(a)] = 1
	}
}

// InformationState implements games.InfoState.
func (s *State) InformationState(player int, dst []float32) {
	n := s.g.obsSize()
	s.Observation(player, dst[:n])
	c := &s.c
	var seen, pool Counts
	for q := range int(c.np) {
		for k := range NumCards {
			seen[k] += c.hands[q][k] + c.table[q][k]
			if !c.knows(player, q) {
				pool[k] += c.hands[q][k]
			}
		}
		seen[Pudding] += c.pudding[q]
	}
	x := dst[n : n+extraSize]
	for k := range NumCards {
		x[k] = float32(FullDeck[k]-seen[k]-c.deck[k]) / 10
		x[NumCards+k] = float32(pool[k]+c.deck[k]) / 10
	}
}
