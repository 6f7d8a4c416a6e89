package hex

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/canopy-go/canopy/games"
)

// ActionString implements games.State: "a1".."m13" or "swap"; ids outside
// the action space print as "invalid(id)".
func (s *State) ActionString(a games.Action) string { return s.g.ActionString(a) }

// ActionString formats a for this game (see State.ActionString).
func (g *Game) ActionString(a games.Action) string {
	switch {
	case a >= 0 && int(a) < g.nn:
		return string(rune('a'+int(a)%g.n)) + strconv.Itoa(int(a)/g.n+1)
	case g.swap && int(a) == g.nn:
		return "swap"
	}
	return fmt.Sprintf("invalid(%d)", a)
}

// ParseAction implements games.State. It does not check legality.
func (s *State) ParseAction(txt string) (games.Action, error) { return s.g.ParseAction(txt) }

// ParseAction parses a cell ("c3", "C3") or "swap" for this game.
func (g *Game) ParseAction(txt string) (games.Action, error) {
	if strings.EqualFold(txt, "swap") {
		if !g.swap {
			return games.NoAction, fmt.Errorf("hex: %q is not available: the pie rule is off (use hex:size=%d,swap=true)", txt, g.n)
		}
		return games.Action(g.nn), nil
	}
	last := string(rune('a' + g.n - 1))
	bad := func() (games.Action, error) {
		return games.NoAction, fmt.Errorf("hex: bad move %q on a %dx%d board: want a column letter a-%s and a row number 1-%d (e.g. a1), or \"swap\"", txt, g.n, g.n, last, g.n)
	}
	if len(txt) < 2 || len(txt) > 3 {
		return bad()
	}
	col := int(txt[0]|0x20) - 'a' // lower-case ASCII letters
	if txt[0] < 'A' || col < 0 || col >= g.n {
		return bad()
	}
	if txt[1] < '1' || txt[1] > '9' { // no sign, no leading zero
		return bad()
	}
	row, err := strconv.Atoi(txt[1:])
	if err != nil || row < 1 || row > g.n {
		return bad()
	}
	return games.Action((row-1)*g.n + col), nil
}

// String implements games.State: the moves so far separated by spaces.
func (s *State) String() string {
	var b strings.Builder
	for i := range int(s.moves) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s.g.ActionString(games.Action(s.hist[i])))
	}
	return b.String()
}

// ParseState implements games.Game: a whitespace-separated move list.
func (g *Game) ParseState(notation string) (games.State, error) {
	s := g.NewState()
	for i, tok := range strings.Fields(notation) {
		a, err := g.ParseAction(tok)
		if err != nil {
			return nil, fmt.Errorf("hex state, move %d: %w", i+1, err)
		}
		if err := s.check(a); err != nil {
			return nil, fmt.Errorf("hex state, move %d (%s): %w", i+1, tok, err)
		}
		s.Apply(a)
	}
	return s, nil
}

// check returns why a is illegal in s, or nil.
func (s *State) check(a games.Action) error {
	g := s.g
	if s.winner >= 0 {
		return fmt.Errorf("the game is already over (%s won)", playerName[s.winner])
	}
	if int(a) == g.nn {
		if s.moves != 1 {
			return fmt.Errorf("swap is only legal as the second move of the game")
		}
		return nil
	}
	if s.stones[0].has(int(a)) || s.stones[1].has(int(a)) {
		return fmt.Errorf("cell %s is already occupied", g.ActionString(a))
	}
	return nil
}

var playerName = [2]string{"Black (X, top-bottom)", "White (O, left-right)"}

// Draw implements games.Drawer: a slanted board, X for Black (player 0,
// top-bottom) and O for White (player 1, left-right). Hex has no hidden
// information, so viewer only marks whose view it is.
func (s *State) Draw(viewer int) string {
	g := s.g
	var b strings.Builder
	cols := func(indent int) {
		b.WriteString(strings.Repeat(" ", indent))
		for c := range g.n {
			if c > 0 {
				b.WriteByte(' ')
			}
			b.WriteByte(byte('a' + c))
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "%s (%d moves)\n", g.Spec(), s.moves)
	cols(3)
	for r := range g.n {
		fmt.Fprintf(&b, "%s%2d", strings.Repeat(" ", r), r+1)
		for c := range g.n {
			ch := byte('.')
			switch s.Stone(r, c) {
			case 0:
				ch = 'X'
			case 1:
				ch = 'O'
			}
			b.WriteByte(' ')
			b.WriteByte(ch)
		}
		fmt.Fprintf(&b, " %d\n", r+1)
	}
	cols(g.n + 3)
	switch {
	case s.winner >= 0:
		fmt.Fprintf(&b, "%s won after %d moves", playerName[s.winner], s.moves)
	default:
		fmt.Fprintf(&b, "%s to move (move %d)", playerName[s.moves&1], s.moves+1)
		if s.canSwap() {
			b.WriteString(", swap available")
		}
	}
	if viewer == 0 || viewer == 1 {
		fmt.Fprintf(&b, "; view of player %d", viewer)
	}
	b.WriteByte('\n')
	return b.String()
}
