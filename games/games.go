package games

import (
	"fmt"
	"math/rand/v2"
)

// Action is a dense action id in [0, Game.NumActions()).
type Action int32

// NoAction is the sentinel for "no action" (for example a pass that a game
// does not model as an action, or an empty slot).
const NoAction Action = -1

// Pseudo-player ids returned by State.CurrentPlayer. Real players are >= 0.
const (
	// ChancePlayer moves at chance nodes (dealing, drawing). See ChanceState.
	ChancePlayer = -1
	// SimultaneousPlayer marks a state where all players choose at once.
	// See SimultaneousState.
	SimultaneousPlayer = -2
	// TerminalPlayer is returned once the game is over.
	TerminalPlayer = -4
)

// Dynamics says how players take turns.
type Dynamics uint8

const (
	Sequential Dynamics = iota
	Simultaneous
)

// ChanceMode says whether and how the game has chance events.
type ChanceMode uint8

const (
	// Deterministic games have no chance nodes.
	Deterministic ChanceMode = iota
	// ExplicitStochastic games expose chance outcomes with probabilities
	// through ChanceState.ChanceOutcomes.
	ExplicitStochastic
	// SampledStochastic games only sample chance outcomes (ChanceState.SampleChance).
	SampledStochastic
)

// Information says what players can see.
type Information uint8

const (
	PerfectInformation Information = iota
	ImperfectInformation
)

// Utility describes how returns relate across players.
type Utility uint8

const (
	// ZeroSum: returns sum to zero at every terminal state.
	ZeroSum Utility = iota
	// ConstantSum: returns sum to the same constant at every terminal state.
	ConstantSum
	// GeneralSum: no constraint.
	GeneralSum
)

// Type is the static description of a game's rules. It is the same for
// every instance built from the same spec.
type Type struct {
	Name        string // registry name, e.g. "connect4"
	LongName    string // human-readable name, e.g. "Connect Four"
	Dynamics    Dynamics
	Chance      ChanceMode
	Information Information
	Utility     Utility
	MinPlayers  int
	MaxPlayers  int
	// MultiAction is true when a player's turn consists of several atomic
	// actions; such states implement MultiActionState.
	MultiAction bool
	// MinReturn and MaxReturn bound State.Returns for every player.
	MinReturn, MaxReturn float64
}

// Game is an immutable description of a game with its options applied. Games
// are safe for concurrent use.
type Game interface {
	// Type returns the static rule description.
	Type() Type
	// Spec returns the canonical spec string that rebuilds this game with
	// New, options included (e.g. "hex:size=7,swap=true").
	Spec() string
	// NumPlayers is the number of real players in this instance.
	NumPlayers() int
	// NumActions is the size of the dense action-id space.
	NumActions() int
	// MaxGameLength bounds the number of actions (all players, chance
	// included) in any game.
	MaxGameLength() int
	// ObservationShape is the shape of State.Observation's tensor,
	// typically [planes, height, width]. Its product is the buffer length.
	ObservationShape() []int
	// NewInitialState returns the state before the first move.
	NewInitialState() State
	// ParseState parses the notation printed by State.String.
	ParseState(notation string) (State, error)
}

// State is one position of a game. States are not safe for concurrent use.
type State interface {
	// Game returns the game this state belongs to.
	Game() Game
	// CurrentPlayer returns the player to move, or one of ChancePlayer,
	// SimultaneousPlayer, TerminalPlayer.
	CurrentPlayer() int
	// IsTerminal reports whether the game is over.
	IsTerminal() bool
	// Legal clears dst and sets the legal actions of the current player
	// (of the chance player at chance nodes). At terminal and simultaneous
	// states dst is left empty; see SimultaneousState. dst must have been
	// made by NewMask(Game().NumActions()). Must not allocate.
	Legal(dst Mask)
	// Apply plays action a, which must be legal. Apply does not validate;
	// use ApplyChecked for untrusted input. Must not allocate.
	Apply(a Action)
	// Clone returns an independent copy.
	Clone() State
	// CloneInto makes dst an independent copy of this state, reusing dst's
	// storage. dst must come from the same Game. Must not allocate once dst
	// has been used at least once.
	CloneInto(dst State)
	// Returns writes each player's result into dst[:NumPlayers()]. At
	// non-terminal states it writes zeros (or intermediate rewards where
	// the game defines them).
	Returns(dst []float64)
	// Hash is a 64-bit Zobrist hash of the full state, side to move
	// included. Equal states have equal hashes.
	Hash() uint64
	// Observation writes the tensor seen by player into dst, which has the
	// length of Game().ObservationShape()'s product. Planes are egocentric:
	// "own" before "opponent" from player's point of view. Valid at
	// terminal states too.
	Observation(player int, dst []float32)
	// MoveNumber is the number of actions applied since the initial state.
	MoveNumber() int
	// ActionString formats a for humans and logs (it need not be legal).
	ActionString(a Action) string
	// ParseAction parses ActionString's output (and common aliases).
	ParseAction(s string) (Action, error)
	// String returns the state's notation; Game().ParseState inverts it for
	// every reachable state.
	String() string
}

// ChanceOutcome is one outcome of a chance node with its probability.
type ChanceOutcome struct {
	Action Action
	Prob   float64
}

// ChanceState is implemented by states of games with chance nodes.
type ChanceState interface {
	State
	// ChanceOutcomes appends the outcomes of the current chance node to dst
	// (ExplicitStochastic games). Probabilities sum to 1.
	ChanceOutcomes(dst []ChanceOutcome) []ChanceOutcome
	// SampleChance draws an outcome of the current chance node.
	SampleChance(rng *rand.Rand) Action
}

// SimultaneousState is implemented by states of simultaneous-move games.
// When CurrentPlayer returns SimultaneousPlayer, each player chooses from
// LegalFor and the joint choice is applied with ApplyJoint.
type SimultaneousState interface {
	State
	// LegalFor writes player p's legal actions at a simultaneous node.
	LegalFor(p int, dst Mask)
	// ApplyJoint applies one action per player (joint[p] for player p).
	ApplyJoint(joint []Action)
}

// InfoStateGame is implemented by games that offer an information-state
// tensor (everything a player has seen so far, not only the present).
type InfoStateGame interface {
	Game
	InformationStateShape() []int
}

// InfoState is implemented by states of an InfoStateGame.
type InfoState interface {
	State
	// InformationState writes player's information-state tensor into dst.
	InformationState(player int, dst []float32)
}

// Resampler is implemented by states of imperfect-information games. It
// writes into dst a complete state consistent with everything player has
// observed, drawn uniformly over the hidden information (determinization).
// dst comes from the same Game. After warm-up it must not allocate.
type Resampler interface {
	State
	Resample(player int, rng *rand.Rand, dst State)
}

// Undoer is implemented by states that can take back the last action
// cheaply (for depth-first solvers and perft).
type Undoer interface {
	State
	// Undo takes back a, which must be the last action applied.
	Undo(a Action)
}

// MultiActionState is implemented by games whose turns consist of several
// atomic actions (Type.MultiAction). Every atomic action is an ordinary
// Action; these methods let a search group them into turns.
type MultiActionState interface {
	State
	// StepInTurn is the index (0-based) of the next atomic action within
	// the current player's turn.
	StepInTurn() int
	// EndsTurn reports whether the next atomic action completes the
	// current player's turn (it may also end the game). Where that depends
	// on which action is played (in Strands the first placement of a turn
	// fixes how many follow), EndsTurn is false unless every legal action
	// ends the turn; compare TurnNumber after Apply to tell.
	EndsTurn() bool
	// TurnNumber counts completed turns since the start of the game.
	TurnNumber() int
}

// Scorer is implemented by games with a running score distinct from the
// final returns (Tetris Link points, Sushi Go points).
type Scorer interface {
	State
	// Scores writes each player's current score into dst[:NumPlayers()].
	Scores(dst []float64)
}

// WinningLiner is implemented by states of games won by a line or a chain
// of pieces (Connect Four, Connect4d, Hex, Sequence), so that a board
// drawing can mark what won. WinningLine returns the cells of the line(s)
// that won a finished game, in increasing order, as indices row*W+col
// into one plane of the observation (ObservationShape [C, H, W], laid out
// as the game's Observation lays it out), and nil while the game is not
// over or when it was not won by a line (a draw, a full board).
type WinningLiner interface {
	WinningLine() []int
}

// Drawer is implemented by states that can render themselves as a text
// board for humans. viewer is the player whose view to draw, or -1 for
// an omniscient view.
type Drawer interface {
	State
	Draw(viewer int) string
}

// Concealer is implemented by states of sequential games in which a
// player's choice stays hidden from the others until a later event reveals
// it (Sushi Go's sequential view: the picks of a trick are revealed once
// every player has chosen), so that a front end can hide it in the move
// history it shows another player. Pending returns player p's choice that
// has not been revealed yet, or NoAction.
type Concealer interface {
	State
	Pending(p int) Action
}

// SequentialViewer is implemented by games with simultaneous moves that
// also exist in a sequential view: the same rules with players choosing
// one at a time, earlier choices hidden until revealed (Concealer), so
// that tools written for sequential games can play them.
// SequentialView returns that game, with the same options.
type SequentialViewer interface {
	Game
	SequentialView() Game
}

// ApplyChecked applies a after checking it is legal, with a descriptive
// error otherwise. It allocates; use it for untrusted input only.
func ApplyChecked(s State, a Action) error {
	if s.IsTerminal() {
		return fmt.Errorf("cannot play %s: the game is over", s.ActionString(a))
	}
	n := s.Game().NumActions()
	if a < 0 || int(a) >= n {
		return fmt.Errorf("action id %d out of range [0, %d)", a, n)
	}
	m := NewMask(n)
	s.Legal(m)
	if !m.Has(a) {
		return fmt.Errorf("illegal move %s (legal: %s)", s.ActionString(a), FormatActions(s, m))
	}
	s.Apply(a)
	return nil
}

// FormatActions lists the actions in m as text, separated by spaces.
func FormatActions(s State, m Mask) string {
	out := make([]byte, 0, 64)
	for a := range m.All() {
		if len(out) > 0 {
			out = append(out, ' ')
		}
		out = append(out, s.ActionString(a)...)
	}
	return string(out)
}

// ObservationSize returns the product of g.ObservationShape().
func ObservationSize(g Game) int { return shapeSize(g.ObservationShape()) }

func shapeSize(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// LegalOf writes player's legal actions in s into dst: s.Legal when
// player is to move, or LegalFor(player) at a simultaneous state, where
// Legal is empty.
func LegalOf(s State, player int, dst Mask) {
	if ss, ok := s.(SimultaneousState); ok && s.CurrentPlayer() == SimultaneousPlayer {
		ss.LegalFor(player, dst)
		return
	}
	s.Legal(dst)
}
