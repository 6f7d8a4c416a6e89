package tetrislink

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/canopy-go/canopy/games"
)

// ActionString implements games.State: shape letter, orientation index
// within the shape, '@', drop column 1..10 of the piece's leftmost cell, e.g.
// "T2@5". Ids outside [0, 190) print as "?N".
func (s *State) ActionString(a games.Action) string { return ActionText(a) }

// ActionText formats action id a (see State.ActionString).
func ActionText(a games.Action) string {
	if a < 0 || int(a) >= NumActionIDs {
		return "?" + strconv.Itoa(int(a))
	}
	o := &orients[actOrient[a]]
	return fmt.Sprintf("%c%d@%d", shapeLetters[o.shape], o.index, int(actX[a])+1)
}

// ParseAction implements games.State; see ParseActionText.
func (s *State) ParseAction(str string) (games.Action, error) { return ParseActionText(str) }

// ParseActionText parses "T2@5" (letter case ignored). Every id in
// [0, 190) has a text, including the 28 that never fit; legality is checked
// by games.ApplyChecked, not here.
func ParseActionText(str string) (games.Action, error) {
	t := strings.TrimSpace(str)
	bad := func(why string) (games.Action, error) {
		return games.NoAction, fmt.Errorf("tetrislink action %q: %s (want shape letter I/O/T/S/L, orientation index, '@', column 1-10, e.g. T2@5)", str, why)
	}
	if len(t) < 4 {
		return bad("too short")
	}
	sh := strings.IndexByte(shapeLetters, upper(t[0]))
	if sh < 0 {
		return bad("unknown shape letter")
	}
	oriText, colText, ok := strings.Cut(t[1:], "@")
	if !ok {
		return bad("missing '@'")
	}
	oi, err := strconv.Atoi(oriText)
	n := int(shapeFirstOrient[sh+1] - shapeFirstOrient[sh])
	if err != nil || oi < 0 || oi >= n || oriText[0] == '+' {
		return bad(fmt.Sprintf("orientation must be 0..%d for %c", n-1, shapeLetters[sh]))
	}
	col, err := strconv.Atoi(colText)
	if err != nil || col < 1 || col > Width || colText[0] == '+' {
		return bad("column must be 1..10")
	}
	return games.Action((int(shapeFirstOrient[sh])+oi)*Width + col - 1), nil
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// String implements games.State: "players=N;" followed by the actions
// played, separated by spaces, e.g. "players=2;I0@1 T2@5". Skips are forced
// and therefore not written.
func (s *State) String() string {
	var b strings.Builder
	b.WriteString("players=")
	b.WriteString(strconv.Itoa(s.g.players))
	b.WriteByte(';')
	for i := range int(s.n) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(ActionText(games.Action(s.hist[i])))
	}
	return b.String()
}

// History appends the actions played so far to dst.
func (s *State) History(dst []games.Action) []games.Action {
	for i := range int(s.n) {
		dst = append(dst, games.Action(s.hist[i]))
	}
	return dst
}

// ParseState implements games.Game: it replays the actions of the notation
// printed by State.String, checking each for legality. Actions may be
// separated by spaces or commas.
func (g *Game) ParseState(notation string) (games.State, error) {
	s, err := g.Parse(notation)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Parse is ParseState returning the concrete type.
func (g *Game) Parse(notation string) (*State, error) {
	head, moves, ok := strings.Cut(strings.TrimSpace(notation), ";")
	if !ok || !strings.HasPrefix(head, "players=") {
		return nil, fmt.Errorf("tetrislink state %q: want \"players=N;\" followed by actions such as \"T2@5 I0@1\"", clip(notation))
	}
	n, err := strconv.Atoi(strings.TrimPrefix(head, "players="))
	if err != nil || n != g.players {
		return nil, fmt.Errorf("tetrislink state: %q does not match this game's %d players (build the game with tetrislink:players=N)", head, g.players)
	}
	s := g.NewState()
	mask := games.NewMask(NumActionIDs)
	for i, tok := range strings.FieldsFunc(moves, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' || r == '\n' }) {
		a, err := ParseActionText(tok)
		if err != nil {
			return nil, fmt.Errorf("tetrislink state: move %d: %v", i+1, err)
		}
		if s.IsTerminal() {
			return nil, fmt.Errorf("tetrislink state: move %d %s: the game is already over", i+1, tok)
		}
		s.Legal(mask)
		if !mask.Has(a) {
			return nil, fmt.Errorf("tetrislink state: move %d %s is illegal for player %d (shape used up or piece would stick out of the board)", i+1, tok, s.toMove)
		}
		s.Apply(a)
	}
	return s, nil
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
