package sushigo

import (
	"encoding/binary"

	"github.com/canopy-go/canopy/games"
)

// Card is a card type. The order matters in two places: chopsticks pairs are
// written and placed in ascending order (so wasabi, which precedes the three
// nigiri, lands first in "chop:wasabi+salmon"), and observation tensors list
// counts in this order.
type Card uint8

// The twelve card types of the 2014 rulebook.
const (
	Tempura Card = iota
	Sashimi
	Dumpling
	Maki1
	Maki2
	Maki3
	Wasabi
	Egg    // egg nigiri, 1 point
	Salmon // salmon nigiri, 2 points
	Squid  // squid nigiri, 3 points
	Pudding
	Chopsticks
	// NumCards is the number of card types.
	NumCards = 12
)

// Counts is a multiset of cards: Counts[c] is the number of cards of type c.
type Counts [NumCards]uint8

// Total returns the number of cards in the multiset. Every multiset of
// this package is part of the 108-card deck (parsing caps a list at 120
// letters), so the byte-wise sum below cannot overflow a byte.
func (c Counts) Total() int {
	x := binary.LittleEndian.Uint64(c[0:8])
	y := uint64(binary.LittleEndian.Uint32(c[8:12]))
	return int((x*0x0101010101010101)>>56) + int((y*0x01010101)>>24&0xff)
}

// cardNames are the action/notation names; cardLetters the one-letter codes
// of the state notation. Nigiri on a wasabi are written in lower case.
var (
	cardNames   = [NumCards]string{"tempura", "sashimi", "dumpling", "maki1", "maki2", "maki3", "wasabi", "egg", "salmon", "squid", "pudding", "chopsticks"}
	cardLetters = [NumCards]byte{'T', 'S', 'D', '1', '2', '3', 'W', 'E', 'N', 'Q', 'P', 'C'}
	// FullDeck is the composition of the 108-card deck.
	FullDeck = Counts{14, 14, 14, 6, 12, 8, 6, 5, 10, 5, 10, 4}
)

// String returns the card's name ("tempura", "maki2", ...).
func (c Card) String() string {
	if int(c) < NumCards {
		return cardNames[c]
	}
	return "card?"
}

// cardAliases maps the accepted alternative spellings to card types.
var cardAliases = map[string]Card{
	"nigiri1": Egg, "nigiri2": Salmon, "nigiri3": Squid,
	"maki-1": Maki1, "maki-2": Maki2, "maki-3": Maki3,
	"chop": Chopsticks, "dumplings": Dumpling, "puddings": Pudding,
	"egg-nigiri": Egg, "salmon-nigiri": Salmon, "squid-nigiri": Squid,
}

func parseCard(s string) (Card, bool) {
	for i, n := range cardNames {
		if n == s {
			return Card(i), true
		}
	}
	c, ok := cardAliases[s]
	return c, ok
}

// HandSize returns the number of cards dealt to each player per round.
func HandSize(players int) int { return 12 - players }

// nigiriValue is the face value of a nigiri type (0 for other cards).
func nigiriValue(c Card) int {
	switch c {
	case Egg:
		return 1
	case Salmon:
		return 2
	case Squid:
		return 3
	}
	return 0
}

// Action ids (NumActions = 93):
//
//	0..11   pick one card of that type ("tempura", "salmon", ...)
//	12..89  use chopsticks to pick two cards a <= b (in Card order), placed
//	        a first then b ("chop:wasabi+salmon" puts the salmon on the new
//	        wasabi; "chop:tempura+tempura")
//	90..92  use chopsticks to pick a nigiri and a wasabi, nigiri placed first
//	        so the new wasabi stays open ("chop:egg+wasabi",
//	        "chop:salmon+wasabi", "chop:squid+wasabi"); legal only when the
//	        player has no open wasabi, since otherwise both orders are the
//	        same move.
//
// At chance nodes the ids 0..11 mean "deal one card of that type" to the
// next player in dealing order.
const (
	numPairs   = NumCards * (NumCards + 1) / 2
	firstPair  = NumCards
	firstRev   = firstPair + numPairs
	NumActions = firstRev + 3
)

var (
	actFirst  [NumActions]Card
	actSecond [NumActions]Card // meaningful only when actChop
	actChop   [NumActions]bool
	pairAct   [NumCards][NumCards]games.Action // for a <= b
	revAct    [NumCards]games.Action           // nigiri -> nigiri-then-wasabi action
)

func init() {
	for c := range NumCards {
		actFirst[c] = Card(c)
	}
	id := firstPair
	for a := range NumCards {
		for b := a; b < NumCards; b++ {
			actFirst[id], actSecond[id], actChop[id] = Card(a), Card(b), true
			pairAct[a][b] = games.Action(id)
			pairAct[b][a] = games.Action(id)
			id++
		}
	}
	for i, n := range []Card{Egg, Salmon, Squid} {
		id := firstRev + i
		actFirst[id], actSecond[id], actChop[id] = n, Wasabi, true
		revAct[n] = games.Action(id)
	}
}

// PickAction returns the action id of picking card c alone.
func PickAction(c Card) games.Action { return games.Action(c) }

// ChopAction returns the action id of using chopsticks to place a then b.
// ok is false when no action places them in that order (b before a in Card
// order, except nigiri then wasabi).
func ChopAction(a, b Card) (games.Action, bool) {
	if a <= b {
		return pairAct[a][b], true
	}
	if b == Wasabi && nigiriValue(a) > 0 {
		return revAct[a], true
	}
	return games.NoAction, false
}
