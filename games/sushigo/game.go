package sushigo

import (
	"fmt"
	"math/rand/v2"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/spec"
)

func init() {
	opts := playersTable(new(int)).Docs()
	games.Register(games.Registration{
		Name:    "sushigo",
		Summary: "Sushi Go! (2-5 players, simultaneous card drafting, hidden hands)",
		Options: opts,
		New:     func(s *spec.Spec) (games.Game, error) { return newFromSpec(s, false) },
	})
	games.Register(games.Registration{
		Name:    "sushigo-seq",
		Summary: "Sushi Go! with players choosing one at a time, earlier choices hidden until the trick is revealed",
		Options: opts,
		New:     func(s *spec.Spec) (games.Game, error) { return newFromSpec(s, true) },
	})
}

// playersTable declares Sushi Go's one option, bound to n.
func playersTable(n *int) spec.Table {
	return spec.Table{spec.Int("players", n, 4, 2, MaxPlayers, "number of players")}
}

func newFromSpec(s *spec.Spec, seq bool) (games.Game, error) {
	var n int
	if err := playersTable(&n).Parse(s); err != nil {
		return nil, err
	}
	return New(n, seq), nil
}

// Game is Sushi Go! for a fixed number of players, in the simultaneous view
// ("sushigo") or the sequential view ("sushigo-seq"). Immutable.
type Game struct {
	np  int
	seq bool
}

// New returns the game for players in [2, 5] (clamped). seq selects the
// sequential view.
func New(players int, seq bool) *Game {
	return &Game{np: min(max(players, 2), MaxPlayers), seq: seq}
}

// Sequential reports whether this is the sequential view.
func (g *Game) Sequential() bool { return g.seq }

// SequentialView implements games.SequentialViewer: "sushigo-seq" with the
// same number of players (g itself when it is that view).
func (g *Game) SequentialView() games.Game {
	if g.seq {
		return g
	}
	return New(g.np, true)
}

// Type implements games.Game.
func (g *Game) Type() games.Type {
	t := games.Type{
		Name: "sushigo", LongName: "Sushi Go!",
		Dynamics: games.Simultaneous, Chance: games.ExplicitStochastic,
		Information: games.ImperfectInformation, Utility: games.ZeroSum,
		MinPlayers: 2, MaxPlayers: MaxPlayers, MinReturn: -1, MaxReturn: 1,
	}
	if g.seq {
		t.Name, t.LongName, t.Dynamics = "sushigo-seq", "Sushi Go! (sequential view)", games.Sequential
	}
	return t
}

// Spec implements games.Game.
func (g *Game) Spec() string { return fmt.Sprintf("%s:players=%d", g.Type().Name, g.np) }

// NumPlayers implements games.Game.
func (g *Game) NumPlayers() int { return g.np }

// NumActions implements games.Game.
func (g *Game) NumActions() int { return NumActions }

// MaxGameLength implements games.Game: every card dealt plus one action
// per player per trick (the simultaneous view uses one per trick).
func (g *Game) MaxGameLength() int { return numRounds * HandSize(g.np) * (g.np + g.k()) }

func (g *Game) k() int {
	if g.seq {
		return g.np
	}
	return 1
}

// NewInitialState implements games.Game.
func (g *Game) NewInitialState() games.State {
	s := &State{g: g}
	s.c.reset(g.np)
	return s
}

// State is a Sushi Go! position. Not safe for concurrent use.
type State struct {
	g *Game
	c core
}

// Game implements games.State.
func (s *State) Game() games.Game { return s.g }

// CurrentPlayer implements games.State.
func (s *State) CurrentPlayer() int {
	switch {
	case s.c.over():
		return games.TerminalPlayer
	case s.c.dealing():
		return games.ChancePlayer
	case s.g.seq:
		return int(s.c.next)
	}
	return games.SimultaneousPlayer
}

// IsTerminal implements games.State.
func (s *State) IsTerminal() bool { return s.c.over() }

// Legal implements games.State. At chance nodes it holds the card types
// left in the deck; at simultaneous nodes it is empty (see LegalFor).
func (s *State) Legal(dst games.Mask) {
	switch {
	case s.c.over():
		dst.Clear()
	case s.c.dealing():
		dst.Clear()
		for k, n := range s.c.deck {
			if n > 0 {
				dst.Set(games.Action(k))
			}
		}
	case s.g.seq:
		s.c.legalFor(int(s.c.next), dst)
	default:
		dst.Clear()
	}
}

// LegalFor implements games.SimultaneousState: p's legal choices in the
// current trick (empty at chance and terminal nodes).
func (s *State) LegalFor(p int, dst games.Mask) { s.c.legalFor(p, dst) }

// ApplyJoint implements games.SimultaneousState: joint[p] is player p's
// legal choice. In the sequential view it plays the whole trick at once,
// replacing any choices already pending.
func (s *State) ApplyJoint(joint []games.Action) {
	c := &s.c
	if c.over() || c.dealing() {
		return
	}
	c.h ^= c.scalarKey()
	c.resolve(joint)
	if c.next != 0 {
		c.next = 0
		c.clearPending()
	}
	c.h ^= c.scalarKey()
}

// Apply implements games.State: a dealt card at chance nodes, the next
// player's choice in the sequential view. At simultaneous nodes it does
// nothing (use ApplyJoint).
func (s *State) Apply(a games.Action) {
	c := &s.c
	c.h ^= c.scalarKey()
	switch {
	case c.over():
	case c.dealing():
		c.deal(Card(a))
	case s.g.seq:
		c.setPending(int(c.next), a)
		c.next++
		if int(c.next) == int(c.np) {
			c.next = 0
			c.resolve(c.pending[:c.np])
			c.clearPending()
		}
	}
	c.h ^= c.scalarKey()
}

// ChanceOutcomes implements games.ChanceState: the next card dealt is each
// type with probability proportional to its count in the deck.
func (s *State) ChanceOutcomes(dst []games.ChanceOutcome) []games.ChanceOutcome {
	if !s.c.dealing() {
		return dst
	}
	tot := float64(s.c.deck.Total())
	for k, n := range s.c.deck {
		if n > 0 {
			dst = append(dst, games.ChanceOutcome{Action: games.Action(k), Prob: float64(n) / tot})
		}
	}
	return dst
}

// SampleChance implements games.ChanceState.
func (s *State) SampleChance(rng *rand.Rand) games.Action {
	return games.Action(s.c.sampleDeal(rng))
}

// Clone implements games.State.
func (s *State) Clone() games.State {
	t := *s
	return &t
}

// CloneInto implements games.State.
func (s *State) CloneInto(dst games.State) { *dst.(*State) = *s }

// Returns implements games.State (see core.returns: rank-based, zero-sum).
func (s *State) Returns(dst []float64) { s.c.returns(dst) }

// Scores implements games.Scorer: raw points of the completed rounds, the
// pudding points included once the game is over.
func (s *State) Scores(dst []float64) {
	for p := range s.g.np {
		dst[p] = float64(s.c.score[p])
	}
}

// Hash implements games.State: the Zobrist hash of zobrist.go, kept
// current incrementally (O(1), no allocation).
func (s *State) Hash() uint64 { return s.c.h }

// MoveNumber implements games.State: derived from round, cards dealt and
// tricks played.
func (s *State) MoveNumber() int {
	c := &s.c
	np, h, k := int(c.np), c.handSize(), s.g.k()
	return int(c.round)*h*(np+k) + int(c.dealt) + int(c.turn)*k + int(c.next)
}

// Round returns the current round, 0-based (3 once the game is over).
func (s *State) Round() int { return int(s.c.round) }

// Turn returns the number of tricks completed in this round.
func (s *State) Turn() int { return int(s.c.turn) }

// Hand returns the hand player p holds now (hidden information).
func (s *State) Hand(p int) Counts { return s.c.hands[p] }

// Table returns the cards in front of p this round.
func (s *State) Table(p int) Counts { return s.c.table[p] }

// OnWasabi returns how many egg, salmon and squid nigiri of p sit on a wasabi.
func (s *State) OnWasabi(p int) [3]uint8 { return s.c.onWasabi[p] }

// Puddings returns p's puddings from completed rounds.
func (s *State) Puddings(p int) int { return int(s.c.pudding[p]) }

// Knows reports whether player p knows the hand that q holds now.
func (s *State) Knows(p, q int) bool { return s.c.knows(p, q) }

// Pending returns the choice p has made in the current trick of the
// sequential view, or NoAction.
func (s *State) Pending(p int) games.Action { return s.c.pending[p] }

var (
	_ games.SimultaneousState = (*State)(nil)
	_ games.ChanceState       = (*State)(nil)
	_ games.InfoState         = (*State)(nil)
	_ games.Resampler         = (*State)(nil)
	_ games.Scorer            = (*State)(nil)
	_ games.Drawer            = (*State)(nil)
	_ games.Concealer         = (*State)(nil)
	_ games.InfoStateGame     = (*Game)(nil)
	_ games.SequentialViewer  = (*Game)(nil)
)
