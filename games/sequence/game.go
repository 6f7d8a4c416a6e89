package sequence

import (
	"strconv"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/spec"
)

const (
	maxPlayers = 3
	maxHand    = 7
	// NumActions is the size of the action-id space of every variant:
	// hand slot (0..6) x square (0..99), slot-major (id = slot*100 + square).
	NumActions = maxHand * numSquares
	// PassAction (slot 0 x corner j10) is the only legal action of a player
	// who cannot move. Corner ids are never placement targets, so they are
	// free for these two special actions.
	PassAction games.Action = 9
)

// exchangeAction is the id of "discard the dead card of slot for a
// replacement": slot x corner a10.
func exchangeAction(slot int) games.Action { return games.Action(slot * numSquares) }

func init() {
	games.Register(games.Registration{
		Name:    "sequence",
		Summary: "Sequence board-and-card game (hidden hands, chance draws); jacks=false is the research variant",
		Options: new(options).table().Docs(),
		New: func(s *spec.Spec) (games.Game, error) {
			var o options
			if err := o.table().Parse(s); err != nil {
				return nil, err
			}
			return New(o.players, o.jacks), nil
		},
	})
}

// Game is Sequence with its options applied. It is immutable and safe for
// concurrent use.
type Game struct {
	players  int
	jacks    bool
	handSize int // 7 with 2 players, 6 with 3
	target   int // sequences needed to win: 2 with 2 players, 1 with 3
	nCards   int // 104, or 96 without jacks
	nInst    int // card instances in the one-hot encodings (= nCards)
	spec     string
}

// New returns Sequence for players (2 or 3) with or without jacks.
func New(players int, jacks bool) *Game {
	players = min(max(players, 2), maxPlayers)
	g := &Game{players: players, jacks: jacks, handSize: 7, target: 2, nCards: 104}
	if players == 3 {
		g.handSize, g.target = 6, 1
	}
	if !jacks {
		g.nCards = 96
	}
	g.nInst = g.nCards
	g.spec = "sequence"
	var opts []string
	if !jacks {
		opts = append(opts, "jacks=false")
	}
	if players != 2 {
		opts = append(opts, "players="+strconv.Itoa(players))
	}
	for i, o := range opts {
		if i == 0 {
			g.spec += ":" + o
		} else {
			g.spec += "," + o
		}
	}
	return g
}

// Type implements games.Game.
func (g *Game) Type() games.Type {
	return games.Type{
		Name: "sequence", LongName: "Sequence",
		Dynamics: games.Sequential, Chance: games.ExplicitStochastic,
		Information: games.ImperfectInformation, Utility: games.ZeroSum,
		MinPlayers: 2, MaxPlayers: maxPlayers, MinReturn: -1, MaxReturn: 1,
	}
}

// Spec implements games.Game.
func (g *Game) Spec() string { return g.spec }

// NumPlayers implements games.Game.
func (g *Game) NumPlayers() int { return g.players }

// NumActions implements games.Game. Chance outcomes use ids 0..51 (the card kind).
func (g *Game) NumActions() int { return NumActions }

// Jacks reports whether the deck holds jacks.
func (g *Game) Jacks() bool { return g.jacks }

// HandSize is the number of cards each player holds.
func (g *Game) HandSize() int { return g.handSize }

// MaxGameLength implements games.Game: every card is dealt or drawn once
// (chance) and discarded once (play or exchange); a player passes at most
// once per turn, after an exchange or in a pure pass turn, and n pure pass
// turns in a row end the game.
func (g *Game) MaxGameLength() int {
	return 3*g.nCards + g.players*(g.nCards+1)
}

// ObservationShape implements games.Game: 3 chip planes plus one plane per
// card instance (see doc.go): [99,10,10] without jacks, [107,10,10] with.
func (g *Game) ObservationShape() []int { return []int{g.numPlanes(), 10, 10} }

func (g *Game) numPlanes() int { return 3 + g.nInst }

// InformationStateShape implements games.InfoStateGame (flat, see doc.go).
func (g *Game) InformationStateShape() []int { return []int{g.infoSize()} }

func (g *Game) infoSize() int { return g.numPlanes()*numSquares + 3*numSquares + g.nInst + infoTail }

// infoTail: 13 rank counts, 52 discard counts, 3 hand sizes, 3 sequence
// counts, deck size, exchanged flag, pass count, 4 to-move entries.
const infoTail = 13 + 52 + 3 + 3 + 1 + 1 + 1 + 4

// FeatureSize is the length of State.Features: the study's flat encoding.
func (g *Game) FeatureSize() int { return 4*numSquares + g.nInst + numRanks }

// NewInitialState implements games.Game: the shuffled deck before the deal.
func (g *Game) NewInitialState() games.State {
	s := &State{g: g}
	s.reset()
	return s
}

func (s *State) reset() {
	g := s.g
	*s = State{g: g, phase: phDeal}
	for k := range uint8(numKinds) {
		if g.jacks || kindClass(k) == kindNormal {
			s.deck[k] = 2
		}
	}
	s.deckN = uint8(g.nCards)
	s.hash = s.rehash()
}

var _ games.InfoStateGame = (*Game)(nil)

// options are Sequence's spec options, declared once: the registration's
// documentation and New's parsing both come from table.
type options struct {
	players int
	jacks   bool
}

func (o *options) table() spec.Table {
	return spec.Table{
		spec.Int("players", &o.players, 2, 2, 3, "number of players (no teams)"),
		spec.Bool("jacks", &o.jacks, true, "include the 8 jacks (false: the 96-card research variant)"),
	}
}
