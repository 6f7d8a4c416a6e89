package strands

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/spec"
)

// DefaultSide is the board of the published game (91 cells).
const DefaultSide = 6

func init() {
	games.Register(games.Registration{
		Name:    "strands",
		Summary: "Strands on a hex board: pick a number X, cover up to X cells marked X; largest groups win (MegaZero multi-action testbed)",
		Options: sizeTable(new(string)).Docs(),
		New: func(s *spec.Spec) (games.Game, error) {
			var side string
			if err := sizeTable(&side).Parse(s); err != nil {
				return nil, err
			}
			n, _ := strconv.Atoi(side)
			return New(n)
		},
	})
}

// sizeTable declares Strands' one option, the board's side, bound to p.
func sizeTable(p *string) spec.Table {
	return spec.Table{spec.Choice("size", p, strconv.Itoa(DefaultSide), []string{"4", "5", "6"}, "side of the hexagonal board: 4 (37 cells), 5 (61) or 6 (91)")}
}

// Game is Strands on one board. It is immutable and safe for concurrent use.
type Game struct {
	b    *Board
	keys []uint64 // [player][cell] stones, then [pick][placed] turn keys
}

// New returns Strands on the board of the given side (4, 5 or 6).
func New(side int) (*Game, error) {
	b, err := BoardOf(side)
	if err != nil {
		return nil, err
	}
	return &Game{b: b, keys: games.ZobristKeys(0x57a4d5+uint64(side), 2*b.N+7*8)}, nil
}

// Board returns the game's board.
func (g *Game) Board() *Board { return g.b }

// Type implements games.Game.
func (g *Game) Type() games.Type {
	return games.Type{
		Name: "strands", LongName: "Strands",
		Dynamics: games.Sequential, Chance: games.Deterministic,
		Information: games.PerfectInformation, Utility: games.ZeroSum,
		MinPlayers: 2, MaxPlayers: 2, MultiAction: true,
		MinReturn: -1, MaxReturn: 1,
	}
}

// Spec implements games.Game.
func (g *Game) Spec() string { return "strands:size=" + strconv.Itoa(g.b.Side) }

// NumPlayers implements games.Game.
func (g *Game) NumPlayers() int { return 2 }

// NumActions implements games.Game: one action per cell.
func (g *Game) NumActions() int { return g.b.N }

// MaxGameLength implements games.Game: every game fills the board.
func (g *Game) MaxGameLength() int { return g.b.N }

// Observation planes (see the package doc).
const (
	planeOwn = iota
	planeOpp
	planeOnBoard
	planeLabel1 // planes planeLabel1..planeLabel1+5: printed number 1..6
	planeLegal  = planeLabel1 + 6
	planeLeft   = planeLegal + 1
	numPlanes   = planeLeft + 1
)

// ObservationShape implements games.Game.
func (g *Game) ObservationShape() []int { return []int{numPlanes, g.b.W, g.b.W} }

// NewInitialState implements games.Game.
func (g *Game) NewInitialState() games.State {
	s := &State{g: g, empty: g.b.N}
	for x := range s.free {
		s.free[x] = uint8(g.b.LabelCount[x])
	}
	return s
}

func (g *Game) turnKey(pick, placed int) uint64 {
	if pick == 0 {
		return 0
	}
	return g.keys[2*g.b.N+pick*8+placed]
}

// State is a Strands position. Invariants: free[x] is the number of empty
// cells marked x; at step 0 pick and turnLen are 0, else 0 < step <
// turnLen = min(pick, cells marked pick that were empty when the turn
// began); hash is the XOR of the stone keys and turnKey(pick, step). Not
// safe for concurrent use.
type State struct {
	g       *Game
	stones  [2][2]uint64 // per player a cell bitset
	free    [7]uint8
	empty   int
	turn    int   // completed turns; player turn%2 moves (0 = Black)
	step    int   // placements made in the current turn
	pick    uint8 // the turn's number X (0 before its first placement)
	turnLen uint8
	result  int8 // at the end: +1 Black wins, -1 White wins, 0 draw
	over    bool
	hash    uint64
}

// Game implements games.State.
func (s *State) Game() games.Game { return s.g }

// CurrentPlayer implements games.State: 0 is Black, 1 is White.
func (s *State) CurrentPlayer() int {
	if s.over {
		return games.TerminalPlayer
	}
	return s.turn & 1
}

// IsTerminal implements games.State.
func (s *State) IsTerminal() bool { return s.over }

// StepInTurn implements games.MultiActionState.
func (s *State) StepInTurn() int { return s.step }

// TurnNumber implements games.MultiActionState. Turn 0 is Black's opening.
func (s *State) TurnNumber() int { return s.turn }

// Pick returns the number X chosen for the current turn, or 0 before the
// turn's first placement.
func (s *State) Pick() int { return int(s.pick) }

// EndsTurn implements games.MultiActionState. Before a turn's first
// placement the answer depends on the cell chosen; it is true only when
// every choice makes a one-stone turn (number 1, or one free cell left of
// every number still available).
func (s *State) EndsTurn() bool {
	switch {
	case s.turn == 0:
		return true
	case s.step > 0:
		return s.step+1 == int(s.turnLen)
	}
	for x := 2; x <= 6; x++ {
		if s.free[x] > 1 {
			return false
		}
	}
	return true
}

// legalBits returns the cells the mover may take now (words 0 and 1).
func (s *State) legalBits() (uint64, uint64) {
	b := s.g.b
	e0 := b.all[0] &^ (s.stones[0][0] | s.stones[1][0])
	e1 := b.all[1] &^ (s.stones[0][1] | s.stones[1][1])
	x := s.pick // cells marked pick mid-turn; any cell at a turn's start
	if s.turn == 0 {
		x = 2 // the opening
	} else if x == 0 {
		return e0, e1
	}
	return e0 & b.labelMask[x][0], e1 & b.labelMask[x][1]
}

// Legal implements games.State.
func (s *State) Legal(dst games.Mask) {
	if s.over {
		dst.Clear()
		return
	}
	l0, l1 := s.legalBits()
	dst[0] = l0
	if len(dst) > 1 {
		dst[1] = l1
	}
}

// Apply implements games.State. a must be legal.
func (s *State) Apply(a games.Action) {
	c := int(a)
	b := s.g.b
	p := s.turn & 1
	s.stones[p][c>>6] |= 1 << (c & 63)
	s.hash ^= s.g.keys[p*b.N+c]
	lab := b.Label[c]
	s.free[lab]--
	s.empty--
	s.hash ^= s.g.turnKey(int(s.pick), s.step)
	if s.step == 0 {
		s.pick = lab
		if s.turn == 0 {
			s.turnLen = 1
		} else {
			s.turnLen = min(lab, s.free[lab]+1)
		}
	}
	s.step++
	if s.step == int(s.turnLen) {
		s.turn++
		s.step, s.pick, s.turnLen = 0, 0, 0
	}
	s.hash ^= s.g.turnKey(int(s.pick), s.step)
	if s.empty == 0 {
		s.over = true
		s.result = int8(s.compare())
	}
}

// Groups writes player p's group sizes, largest first, into sizes and
// returns how many groups there are.
func (s *State) Groups(p int, sizes *[MaxCells]uint8) int { return s.g.b.groups(s.stones[p], sizes) }

// LargestGroup returns the size of player p's largest group (0 with no
// stones).
func (s *State) LargestGroup(p int) int { return s.g.b.largest(s.stones[p]) }

// compare returns +1 when Black's sorted group list beats White's, -1 when
// White's does, 0 when they are identical.
func (s *State) compare() int {
	var a, b [MaxCells]uint8
	na, nb := s.Groups(0, &a), s.Groups(1, &b)
	return compareGroups(a[:na], b[:nb])
}

// Clone implements games.State.
func (s *State) Clone() games.State { c := *s; return &c }

// CloneInto implements games.State.
func (s *State) CloneInto(dst games.State) { *dst.(*State) = *s }

// Returns implements games.State: +1/-1 for winner/loser, 0 for a draw or a
// running game.
func (s *State) Returns(dst []float64) {
	dst[0], dst[1] = 0, 0
	if s.over {
		dst[0], dst[1] = float64(s.result), -float64(s.result)
	}
}

// Hash implements games.State.
func (s *State) Hash() uint64 { return s.hash }

// Observation implements games.State (planes in the package doc).
func (s *State) Observation(player int, dst []float32) {
	b := s.g.b
	plane := b.W * b.W
	clear(dst[:numPlanes*plane])
	var legal [2]uint64
	if !s.over {
		legal[0], legal[1] = s.legalBits()
	}
	left := float32(0)
	if s.step > 0 {
		left = float32(int(s.turnLen)-s.step) / 6
	}
	for c := range b.N {
		i := int(b.X[c])*b.W + int(b.Y[c])
		w, bit := c>>6, uint64(1)<<(c&63)
		if s.stones[player][w]&bit != 0 {
			dst[planeOwn*plane+i] = 1
		} else if s.stones[1-player][w]&bit != 0 {
			dst[planeOpp*plane+i] = 1
		}
		dst[planeOnBoard*plane+i] = 1
		dst[(planeLabel1+int(b.Label[c])-1)*plane+i] = 1
		if legal[w]&bit != 0 {
			dst[planeLegal*plane+i] = 1
		}
	}
	if left != 0 {
		for i := range plane {
			dst[planeLeft*plane+i] = left
		}
	}
}

// MoveNumber implements games.State: the number of stones on the board.
func (s *State) MoveNumber() int { return s.g.b.N - s.empty }

// ActionString implements games.State: column letter (y) and row number
// (x+1) of the cell in the W x W array, e.g. "d1".
func (s *State) ActionString(a games.Action) string {
	b := s.g.b
	if a < 0 || int(a) >= b.N {
		return fmt.Sprintf("action(%d)", a)
	}
	return string(rune('a'+b.Y[a])) + strconv.Itoa(int(b.X[a])+1)
}

// ParseAction implements games.State; it accepts ActionString's form in
// either case.
func (s *State) ParseAction(txt string) (games.Action, error) {
	b := s.g.b
	t := strings.ToLower(strings.TrimSpace(txt))
	if len(t) >= 2 && t[0] >= 'a' && t[0] <= 'z' {
		if x, err := strconv.Atoi(t[1:]); err == nil {
			if c := b.At(x-1, int(t[0]-'a')); c >= 0 {
				return games.Action(c), nil
			}
		}
	}
	return games.NoAction, fmt.Errorf("strands: bad cell %q (want a column letter a..%c and a row 1..%d on the board, e.g. %q)",
		txt, 'a'+b.W-1, b.W, s.ActionString(games.Action(b.N/2)))
}

// String implements games.State (notation in the package doc).
func (s *State) String() string {
	b := s.g.b
	var sb strings.Builder
	sb.Grow(b.N + b.W + 32)
	for c := range b.N {
		if c > 0 && b.X[c] != b.X[c-1] {
			sb.WriteByte('/')
		}
		w, bit := c>>6, uint64(1)<<(c&63)
		switch {
		case s.stones[0][w]&bit != 0:
			sb.WriteByte('x')
		case s.stones[1][w]&bit != 0:
			sb.WriteByte('o')
		default:
			sb.WriteByte('.')
		}
	}
	fmt.Fprintf(&sb, " t=%d", s.turn)
	if s.step > 0 {
		fmt.Fprintf(&sb, " pick=%d placed=%d", s.pick, s.step)
	}
	return sb.String()
}

// ParseState implements games.Game. Besides the syntax it checks that the
// turn number agrees with the stones (the opening, then ceil(n/X) turns for
// the n stones on cells marked X outside the current turn), that every
// number except the current pick has had only full turns or is used up,
// and that a turn in progress can go on.
func (g *Game) ParseState(notation string) (games.State, error) {
	b := g.b
	fields := strings.Fields(notation)
	if len(fields) != 2 && len(fields) != 4 {
		return nil, fmt.Errorf("strands: notation %q: want ROWS t=TURN [pick=X placed=N]", notation)
	}
	s := g.NewInitialState().(*State)
	rows := strings.Split(fields[0], "/")
	if len(rows) != b.W {
		return nil, fmt.Errorf("strands: %d rows, want %d separated by '/'", len(rows), b.W)
	}
	c := 0
	for x, row := range rows {
		width := b.W - abs(x-(b.Side-1))
		if len(row) != width {
			return nil, fmt.Errorf("strands: row %d %q has %d cells, want %d", x+1, row, len(row), width)
		}
		for _, ch := range []byte(row) {
			p := -1
			switch ch {
			case 'x':
				p = 0
			case 'o':
				p = 1
			case '.':
			default:
				return nil, fmt.Errorf("strands: row %d: bad character %q (want x, o or .)", x+1, ch)
			}
			if p >= 0 {
				s.stones[p][c>>6] |= 1 << (c & 63)
				s.hash ^= g.keys[p*b.N+c]
				s.free[b.Label[c]]--
				s.empty--
			}
			c++
		}
	}
	turn, err := field(fields[1], "t=", 0, b.N)
	if err != nil {
		return nil, err
	}
	pick, placed := 0, 0
	if len(fields) == 4 {
		if pick, err = field(fields[2], "pick=", 1, 6); err != nil {
			return nil, err
		}
		if placed, err = field(fields[3], "placed=", 1, 5); err != nil {
			return nil, err
		}
	}
	// Derive the turn number from the stones.
	want := 0
	if s.empty < b.N {
		if blackTwos := bits.OnesCount64(s.stones[0][0]&b.labelMask[2][0]) + bits.OnesCount64(s.stones[0][1]&b.labelMask[2][1]); blackTwos == 0 {
			return nil, fmt.Errorf("strands: Black's opening stone on a cell marked 2 is missing")
		}
		want = 1
		for x := 1; x <= 6; x++ {
			n := b.LabelCount[x] - int(s.free[x])
			if x == 2 {
				n-- // the opening stone
			}
			if x == pick {
				n -= placed
			}
			if n < 0 {
				return nil, fmt.Errorf("strands: placed=%d but only %d stones on cells marked %d", placed, n+placed, x)
			}
			if n%x != 0 && (s.free[x] != 0 || x == pick) {
				return nil, fmt.Errorf("strands: %d stones on cells marked %d outside the current turn: not whole turns of %d, yet some are free", n, x, x)
			}
			want += (n + x - 1) / x
		}
	}
	if pick > 0 && want == 0 {
		return nil, fmt.Errorf("strands: the opening turn places a single stone; pick/placed make no sense before it")
	}
	if turn != want {
		return nil, fmt.Errorf("strands: t=%d but the stones make it turn %d", turn, want)
	}
	if pick > 0 {
		if placed >= pick || s.free[pick] == 0 {
			return nil, fmt.Errorf("strands: pick=%d placed=%d with %d free cells marked %d: that turn is over", pick, placed, s.free[pick], pick)
		}
		mover := turn & 1
		own := bits.OnesCount64(s.stones[mover][0]&b.labelMask[pick][0]) + bits.OnesCount64(s.stones[mover][1]&b.labelMask[pick][1])
		if own < placed {
			return nil, fmt.Errorf("strands: placed=%d but the mover has only %d stones on cells marked %d", placed, own, pick)
		}
		s.pick, s.step = uint8(pick), placed
		s.turnLen = uint8(min(pick, int(s.free[pick])+placed))
		s.hash ^= g.turnKey(pick, placed)
	}
	s.turn = turn
	if s.empty == 0 {
		s.over = true
		s.result = int8(s.compare())
	}
	return s, nil
}

func field(f, prefix string, lo, hi int) (int, error) {
	v, ok := strings.CutPrefix(f, prefix)
	n, err := strconv.Atoi(v)
	if !ok || err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("strands: field %q: want %sN with N in [%d, %d]", f, prefix, lo, hi)
	}
	return n, nil
}

// Draw implements games.Drawer: the hexagon with stones as x (Black) and o
// (White) and empty cells as their printed number.
func (s *State) Draw(viewer int) string {
	b := s.g.b
	var sb strings.Builder
	for x := range b.W {
		first := true
		for y := range b.W {
			c := b.At(x, y)
			if c < 0 {
				continue
			}
			if first {
				fmt.Fprintf(&sb, "%2d ", x+1)
				sb.WriteString(strings.Repeat(" ", 2*y+x-(b.Side-1)))
				first = false
			}
			w, bit := c>>6, uint64(1)<<(c&63)
			switch {
			case s.stones[0][w]&bit != 0:
				sb.WriteByte('x')
			case s.stones[1][w]&bit != 0:
				sb.WriteByte('o')
			default:
				sb.WriteByte('0' + b.Label[c])
			}
			sb.WriteByte(' ')
		}
		sb.WriteByte('\n')
	}
	sb.WriteString("   columns a.." + string(rune('a'+b.W-1)) + " run down-right; x = Black, o = White, digits = free cells\n")
	var gs [MaxCells]uint8
	for p, name := range []string{"Black", "White"} {
		n := s.Groups(p, &gs)
		fmt.Fprintf(&sb, "%s groups %v\n", name, gs[:n])
	}
	switch {
	case s.over && s.result > 0:
		sb.WriteString("Black wins\n")
	case s.over && s.result < 0:
		sb.WriteString("White wins\n")
	case s.over:
		sb.WriteString("draw\n")
	case s.step > 0:
		fmt.Fprintf(&sb, "turn %d: %s placing %d of %d on cells marked %d\n", s.turn, []string{"Black", "White"}[s.turn&1], s.step+1, s.turnLen, s.pick)
	default:
		fmt.Fprintf(&sb, "turn %d: %s to pick\n", s.turn, []string{"Black", "White"}[s.turn&1])
	}
	return sb.String()
}
