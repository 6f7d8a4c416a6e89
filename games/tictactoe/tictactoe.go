// Package tictactoe implements noughts and crosses on a 3x3 board. It is the
// smallest complete game of the suite: small enough that tests can
// enumerate it exhaustively (perft, minimax), which makes it the reference
// game for search and conformance-suite tests.
//
// Actions 0..8 are cells in row-major order from the top-left; their text is
// the digit 1..9 as on a phone keypad's top-down layout. The state notation
// is the sequence of cell digits played, e.g. "519".
package tictactoe

import (
	"fmt"
	"strings"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/spec"
)

func init() {
	games.Register(games.Registration{
		Name:    "tictactoe",
		Summary: "noughts and crosses on 3x3 (reference game for tests)",
		New:     func(*spec.Spec) (games.Game, error) { return theGame, nil },
	})
}

// Game is the tic-tac-toe game. It has no options.
type Game struct{}

var theGame = &Game{}

var keys = games.ZobristKeys(0x7777, 2*9+1)

var lines = [8]uint16{0x7, 0x38, 0x1c0, 0x49, 0x92, 0x124, 0x111, 0x54}

func (*Game) Type() games.Type {
	return games.Type{Name: "tictactoe", LongName: "Tic-tac-toe", Dynamics: games.Sequential,
		Chance: games.Deterministic, Information: games.PerfectInformation, Utility: games.ZeroSum,
		MinPlayers: 2, MaxPlayers: 2, MinReturn: -1, MaxReturn: 1}
}
func (*Game) Spec() string            { return "tictactoe" }
func (*Game) NumPlayers() int         { return 2 }
func (*Game) NumActions() int         { return 9 }
func (*Game) MaxGameLength() int      { return 9 }
func (*Game) ObservationShape() []int { return []int{2, 3, 3} }

// NewInitialState returns the empty board.
func (*Game) NewInitialState() games.State { return &State{} }

// ParseState parses a sequence of cell digits.
func (g *Game) ParseState(n string) (games.State, error) {
	s := &State{}
	for i, c := range n {
		if c < '1' || c > '9' {
			return nil, fmt.Errorf("tictactoe: character %d %q is not a cell digit 1-9", i+1, c)
		}
		if err := games.ApplyChecked(s, games.Action(c-'1')); err != nil {
			return nil, fmt.Errorf("tictactoe: move %d: %v", i+1, err)
		}
	}
	return s, nil
}

// State is a tic-tac-toe position.
type State struct {
	stones [2]uint16 // stones[p] has bit c set when player p owns cell c
	moves  [9]int8
	n      int8
	winner int8 // 0 none, 1 player 0, 2 player 1
	hash   uint64
}

func (s *State) Game() games.Game { return theGame }
func (s *State) IsTerminal() bool { return s.winner != 0 || s.n == 9 }
func (s *State) MoveNumber() int  { return int(s.n) }
func (s *State) Hash() uint64     { return s.hash }

func (s *State) CurrentPlayer() int {
	if s.IsTerminal() {
		return games.TerminalPlayer
	}
	return int(s.n & 1)
}

func (s *State) Legal(dst games.Mask) {
	dst.Clear()
	if !s.IsTerminal() {
		dst[0] = uint64(^(s.stones[0] | s.stones[1]) & 0x1ff)
	}
}

func (s *State) Apply(a games.Action) {
	p := s.n & 1
	s.stones[p] |= 1 << a
	s.moves[s.n] = int8(a)
	s.n++
	s.hash ^= keys[int(p)*9+int(a)] ^ keys[18]
	for _, l := range lines {
		if s.stones[p]&l == l {
			s.winner = p + 1
		}
	}
}

// Undo implements games.Undoer.
func (s *State) Undo(a games.Action) {
	s.n--
	p := s.n & 1
	s.stones[p] &^= 1 << a
	s.hash ^= keys[int(p)*9+int(a)] ^ keys[18]
	s.winner = 0
}

func (s *State) Clone() games.State      { c := *s; return &c }
func (s *State) CloneInto(d games.State) { *d.(*State) = *s }

func (s *State) Returns(dst []float64) {
	dst[0], dst[1] = 0, 0
	switch s.winner {
	case 1:
		dst[0], dst[1] = 1, -1
	case 2:
		dst[0], dst[1] = -1, 1
	}
}

func (s *State) Observation(player int, dst []float32) {
	for c := range 9 {
		dst[c] = float32(s.stones[player] >> c & 1)
		dst[9+c] = float32(s.stones[1-player] >> c & 1)
	}
}

func (s *State) ActionString(a games.Action) string { return string(rune('1' + a)) }

func (s *State) ParseAction(t string) (games.Action, error) {
	t = strings.TrimSpace(t)
	if len(t) != 1 || t[0] < '1' || t[0] > '9' {
		return games.NoAction, fmt.Errorf("tictactoe: %q is not a cell 1-9", t)
	}
	return games.Action(t[0] - '1'), nil
}

func (s *State) String() string {
	b := make([]byte, s.n)
	for i := range b {
		b[i] = byte('1' + s.moves[i])
	}
	return string(b)
}

// Draw implements games.Drawer.
func (s *State) Draw(int) string {
	var sb strings.Builder
	for r := range 3 {
		for c := range 3 {
			i := r*3 + c
			switch {
			case s.stones[0]>>i&1 == 1:
				sb.WriteByte('X')
			case s.stones[1]>>i&1 == 1:
				sb.WriteByte('O')
			default:
				sb.WriteByte(byte('1' + i))
			}
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}
