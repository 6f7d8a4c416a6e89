package connect4d

import (
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/spec"
)

// Board geometry.
const (
	Cols  = 7
	Rows  = 6
	Cells = Cols * Rows
	// MinD and MaxD bound the number of stacked boards.
	MinD     = 2
	MaxD     = 8
	DefaultD = 5
	colBits  = Rows + 1 // Pons layout: one sentinel bit on top of each column
)

// stepOffsets are the bit offsets of one step in the (row, column) plane for
// the six winning directions, which all advance the board index by one:
// (1,+1,0) +1, (1,-1,0) -1, (1,+1,+1) +8, (1,+1,-1) -6, (1,-1,+1) +6,
// (1,-1,-1) -8. Counting forward and backward along each covers every line.
var stepOffsets = [6]int{1, -1, 8, -6, 6, -8}

var fullBoard uint64

func init() {
	for c := range Cols {
		for r := range Rows {
			fullBoard |= 1 << (c*colBits + r)
		}
	}
	games.Register(games.Registration{
		Name:    "connect4d",
		Summary: "d stacked Connect Four boards, d stones per turn, only 3-D lines win (MegaZero multi-action testbed)",
		Options: dTable(new(int)).Docs(),
		New: func(s *spec.Spec) (games.Game, error) {
			var d int
			if err := dTable(&d).Parse(s); err != nil {
				return nil, err
			}
			return New(d)
		},
	})
}

// dTable declares Connect4d's one option, the number of boards, bound to p.
func dTable(p *int) spec.Table {
	return spec.Table{spec.Int("d", p, DefaultD, MinD, MaxD, "number of stacked 7x6 boards")}
}

// Game is Connect4d with d boards. It is immutable and safe for concurrent use.
type Game struct {
	d    int
	keys []uint64 // Zobrist keys: [player][board][bit]
}

// New returns the game with d stacked boards (MinD <= d <= MaxD).
func New(d int) (*Game, error) {
	if d < MinD || d > MaxD {
		return nil, fmt.Errorf("connect4d: d=%d out of range [%d, %d]", d, MinD, MaxD)
	}
	return &Game{d: d, keys: games.ZobristKeys(0xc4d, 2*d*64)}, nil
}

// D returns the number of stacked boards.
func (g *Game) D() int { return g.d }

// Type implements games.Game.
func (g *Game) Type() games.Type {
	return games.Type{
		Name: "connect4d", LongName: "Connect4d",
		Dynamics: games.Sequential, Chance: games.Deterministic,
		Information: games.PerfectInformation, Utility: games.ZeroSum,
		MinPlayers: 2, MaxPlayers: 2, MultiAction: true,
		MinReturn: -1, MaxReturn: 1,
	}
}

// Spec implements games.Game.
func (g *Game) Spec() string { return "connect4d:d=" + strconv.Itoa(g.d) }

// NumPlayers implements games.Game.
func (g *Game) NumPlayers() int { return 2 }

// NumActions implements games.Game: board*7+column.
func (g *Game) NumActions() int { return Cols * g.d }

// MaxGameLength implements games.Game: every cell of every board.
func (g *Game) MaxGameLength() int { return Cells * g.d }

// ObservationShape implements games.Game.
func (g *Game) ObservationShape() []int { return []int{3, Rows, Cols * g.d} }

// NewInitialState implements games.Game.
func (g *Game) NewInitialState() games.State { return &State{g: g, winner: -1} }

func (g *Game) key(p, b, bit int) uint64 { return g.keys[(p*g.d+b)*64+bit] }

// State is a Connect4d position. Invariants: stones[p][b] only has bits of
// fullBoard; every board has stone count turn+1 (boards < step) or turn
// (boards >= step); hash is the XOR of the keys of all stones. Not safe for
// concurrent use.
type State struct {
	g      *Game
	stones [2][MaxD]uint64
	moves  int
	turn   int  // completed turns
	step   int  // board index of the next atomic action
	winner int8 // -1 none, else the player with a 3-D line
	over   bool
	hash   uint64
}

// Game implements games.State.
func (s *State) Game() games.Game { return s.g }

// CurrentPlayer implements games.State.
func (s *State) CurrentPlayer() int {
	if s.over {
		return games.TerminalPlayer
	}
	return s.turn & 1
}

// IsTerminal implements games.State.
func (s *State) IsTerminal() bool { return s.over }

// Winner returns the winning player, or -1 (game running or drawn).
func (s *State) Winner() int { return int(s.winner) }

// StepInTurn implements games.MultiActionState: the board of the next stone.
func (s *State) StepInTurn() int { return s.step }

// EndsTurn implements games.MultiActionState.
func (s *State) EndsTurn() bool { return s.step == s.g.d-1 }

// TurnNumber implements games.MultiActionState.
func (s *State) TurnNumber() int { return s.turn }

// topRow has the bit of row 5 of every column.
const topRow uint64 = 1<<5 | 1<<12 | 1<<19 | 1<<26 | 1<<33 | 1<<40 | 1<<47

// gather multiplies bits at positions 7c (c = 0..6) onto position 42+c:
// term (c, j) of the product lands on 7c+6j, and 7c+6j = 42+c exactly for
// j = 7-c; no two terms share a position, so there are no carries.
const gather uint64 = 1<<6 | 1<<12 | 1<<18 | 1<<24 | 1<<30 | 1<<36 | 1<<42

// freeCols returns a 7-bit mask of the columns of board b that are not full.
func (s *State) freeCols(b int) uint64 {
	occ := s.stones[0][b] | s.stones[1][b]
	spread := (^occ & topRow) >> (Rows - 1) // free column c at bit 7c
	return ((spread * gather) >> 42) & (1<<Cols - 1)
}

// Legal implements games.State.
func (s *State) Legal(dst games.Mask) {
	dst.Clear()
	if s.over {
		return
	}
	dst[0] = s.freeCols(s.step) << (Cols * s.step)
}

// height returns the number of stones in column c of board b.
func (s *State) height(b, c int) int {
	col := ((s.stones[0][b] | s.stones[1][b]) >> (c * colBits)) & (1<<Rows - 1)
	// Stones in a column are contiguous from the bottom.
	return bits.Len64(col)
}

// Apply implements games.State. a must be legal.
func (s *State) Apply(a games.Action) {
	b, c := int(a)/Cols, int(a)%Cols
	p := s.turn & 1
	bit := c*colBits + s.height(b, c)
	s.stones[p][b] |= 1 << bit
	s.hash ^= s.g.key(p, b, bit)
	s.moves++
	if wins(&s.stones[p], s.g.d, b, bit) {
		s.winner = int8(p)
		s.over = true
	}
	s.step++
	if s.step == s.g.d {
		s.step = 0
		s.turn++
	}
	if !s.over && (s.stones[0][s.step]|s.stones[1][s.step]) == fullBoard {
		s.over = true
	}
}

// OpponentWinsWith implements agent.Blocker: it reports whether the
// opponent of the player to move would complete a 3-D line by dropping a
// stone with action a (same board and column) now. The onestep agent uses
// it to block: on board k only the mover's k-th stone can take the cell the
// opponent needs there. a must be legal.
func (s *State) OpponentWinsWith(a games.Action) bool {
	b, c := int(a)/Cols, int(a)%Cols
	opp := s.stones[1-s.turn&1]
	bit := c*colBits + s.height(b, c)
	opp[b] |= 1 << bit
	return wins(&opp, s.g.d, b, bit)
}

// Undo implements games.Undoer: a must be the last action applied.
func (s *State) Undo(a games.Action) {
	b, c := int(a)/Cols, int(a)%Cols
	if s.step == 0 {
		s.step = s.g.d
		s.turn--
	}
	s.step--
	p := s.turn & 1
	bit := c*colBits + s.height(b, c) - 1
	s.stones[p][b] &^= 1 << bit
	s.hash ^= s.g.key(p, b, bit)
	s.moves--
	s.winner, s.over = -1, false
}

// wins reports whether the stone at bit of board b lies on a 3-D line of
// four in own (one player's boards). Stepping off a board in row or column
// always lands on a sentinel, on an unused bit, or on a negative offset
// (a Go shift by a huge uint gives 0), so no explicit bound check is needed
// until the first empty cell stops the count.
func wins(own *[MaxD]uint64, d, b, bit int) bool {
	for _, off := range stepOffsets {
		n := 1
		for i := 1; i < 4 && b+i < d; i++ {
			if own[b+i]>>uint(bit+i*off)&1 == 0 {
				break
			}
			n++
		}
		for i := 1; i < 4 && b-i >= 0; i++ {
			if own[b-i]>>uint(bit-i*off)&1 == 0 {
				break
			}
			n++
		}
		if n >= 4 {
			return true
		}
	}
	return false
}

// Clone implements games.State.
func (s *State) Clone() games.State { c := *s; return &c }

// CloneInto implements games.State.
func (s *State) CloneInto(dst games.State) { *dst.(*State) = *s }

// Returns implements games.State: +1 for the winner, -1 for the loser, 0 in
// a draw or a running game.
func (s *State) Returns(dst []float64) {
	dst[0], dst[1] = 0, 0
	if s.winner >= 0 {
		dst[s.winner] = 1
		dst[1-s.winner] = -1
	}
}

// Hash implements games.State. The stones determine the whole state.
func (s *State) Hash() uint64 { return s.hash }

// Observation implements games.State (layout in the package doc).
func (s *State) Observation(player int, dst []float32) {
	d := s.g.d
	w := Cols * d
	plane := Rows * w
	clear(dst[:3*plane])
	for b := range d {
		own, opp := s.stones[player][b], s.stones[1-player][b]
		for c := range Cols {
			for r := range Rows {
				i := (Rows-1-r)*w + b*Cols + c
				bit := uint64(1) << (c*colBits + r)
				if own&bit != 0 {
					dst[i] = 1
				} else if opp&bit != 0 {
					dst[plane+i] = 1
				}
				if !s.over && b == s.step {
					dst[2*plane+i] = 1
				}
			}
		}
	}
}

// MoveNumber implements games.State.
func (s *State) MoveNumber() int { return s.moves }

// ActionString implements games.State: board number then column letter.
func (s *State) ActionString(a games.Action) string {
	if a < 0 || int(a) >= s.g.NumActions() {
		return fmt.Sprintf("action(%d)", a)
	}
	return strconv.Itoa(int(a)/Cols) + string(rune('a'+int(a)%Cols))
}

// ParseAction implements games.State. It accepts "2d" (board 2, column d),
// "2D" and "2:d".
func (s *State) ParseAction(txt string) (games.Action, error) {
	t := strings.ToLower(strings.TrimSpace(txt))
	t = strings.Replace(t, ":", "", 1)
	if len(t) < 2 {
		return games.NoAction, fmt.Errorf("connect4d: bad action %q (want board number and column letter, e.g. \"0d\")", txt)
	}
	col := int(t[len(t)-1]) - 'a'
	b, err := strconv.Atoi(t[:len(t)-1])
	if err != nil || col < 0 || col >= Cols || b < 0 || b >= s.g.d {
		return games.NoAction, fmt.Errorf("connect4d: bad action %q (want board 0..%d and column a..g, e.g. \"0d\")", txt, s.g.d-1)
	}
	return games.Action(b*Cols + col), nil
}

// String implements games.State (notation in the package doc).
func (s *State) String() string {
	var sb strings.Builder
	for b := range s.g.d {
		if b > 0 {
			sb.WriteByte(' ')
		}
		for r := Rows - 1; r >= 0; r-- {
			empty := 0
			for c := range Cols {
				bit := uint64(1) << (c*colBits + r)
				ch := byte(0)
				switch {
				case s.stones[0][b]&bit != 0:
					ch = 'x'
				case s.stones[1][b]&bit != 0:
					ch = 'o'
				}
				if ch == 0 {
					empty++
					continue
				}
				if empty > 0 {
					sb.WriteByte(byte('0' + empty))
					empty = 0
				}
				sb.WriteByte(ch)
			}
			if empty > 0 {
				sb.WriteByte(byte('0' + empty))
			}
			if r > 0 {
				sb.WriteByte('/')
			}
		}
	}
	return sb.String()
}

// ParseState implements games.Game. It checks the board shapes, gravity,
// the stone counts the turn structure implies, and that at most the player
// who moved last has a 3-D line.
func (g *Game) ParseState(notation string) (games.State, error) {
	fields := strings.Fields(notation)
	if len(fields) != g.d {
		return nil, fmt.Errorf("connect4d: notation has %d boards, want %d (boards separated by spaces)", len(fields), g.d)
	}
	s := &State{g: g, winner: -1}
	counts := make([]int, g.d)
	for b, f := range fields {
		rows := strings.Split(f, "/")
		if len(rows) != Rows {
			return nil, fmt.Errorf("connect4d: board %d has %d rows, want %d separated by '/'", b, len(rows), Rows)
		}
		for i, row := range rows {
			r := Rows - 1 - i
			c := 0
			for _, ch := range []byte(row) {
				switch {
				case ch >= '1' && ch <= '7':
					c += int(ch - '0')
				case ch == '.':
					c++
				case ch == 'x' || ch == 'o':
					if c >= Cols {
						return nil, fmt.Errorf("connect4d: board %d row %d %q has more than %d columns", b, i+1, row, Cols)
					}
					p := 0
					if ch == 'o' {
						p = 1
					}
					bit := c*colBits + r
					s.stones[p][b] |= 1 << bit
					s.hash ^= g.key(p, b, bit)
					counts[b]++
					c++
				default:
					return nil, fmt.Errorf("connect4d: board %d row %d: bad character %q (want x, o, . or 1-7)", b, i+1, ch)
				}
				if c > Cols {
					return nil, fmt.Errorf("connect4d: board %d row %d %q has more than %d columns", b, i+1, row, Cols)
				}
			}
			if c != Cols {
				return nil, fmt.Errorf("connect4d: board %d row %d %q covers %d columns, want %d", b, i+1, row, c, Cols)
			}
		}
		occ := s.stones[0][b] | s.stones[1][b]
		for c := range Cols {
			col := (occ >> (c * colBits)) & (1<<Rows - 1)
			if col&(col+1) != 0 {
				return nil, fmt.Errorf("connect4d: board %d column %c has a floating stone", b, 'a'+c)
			}
		}
		s.moves += counts[b]
	}
	s.turn, s.step = s.moves/g.d, s.moves%g.d
	for b, n := range counts {
		want := s.turn
		if b < s.step {
			want++
		}
		if n != want {
			return nil, fmt.Errorf("connect4d: board %d has %d stones, but %d stones in all put %d on it (one per turn, boards in order)", b, n, s.moves, want)
		}
		if x, o := bits.OnesCount64(s.stones[0][b]), bits.OnesCount64(s.stones[1][b]); x != (n+1)/2 || o != n/2 {
			return nil, fmt.Errorf("connect4d: board %d has %d x and %d o stones, want %d and %d (turns alternate, x first)", b, x, o, (n+1)/2, n/2)
		}
	}
	line := [2]bool{hasLine(&s.stones[0], g.d), hasLine(&s.stones[1], g.d)}
	if line[0] && line[1] {
		return nil, fmt.Errorf("connect4d: both players have a 3-D line; the game ends at the first")
	}
	for p := range 2 {
		if !line[p] {
			continue
		}
		last := ((s.moves - 1) / g.d) & 1
		if p != last {
			return nil, fmt.Errorf("connect4d: %c has a 3-D line but %c moved last", "xo"[p], "xo"[last])
		}
		s.winner, s.over = int8(p), true
	}
	if !s.over && (s.stones[0][s.step]|s.stones[1][s.step]) == fullBoard {
		s.over = true
	}
	return s, nil
}

// WinningLine implements games.WinningLiner: the cells of every 3-D line
// of four of the winner (observation indices row*7d + board*7 + column,
// row 0 at the top), nil unless someone has won.
func (s *State) WinningLine() []int {
	if s.winner < 0 {
		return nil
	}
	own := &s.stones[s.winner]
	d, w := s.g.d, Cols*s.g.d
	on := map[int]bool{}
	for b := 0; b+3 < d; b++ {
		for bit := range 64 {
			for _, off := range stepOffsets {
				n := 0
				for i := range 4 {
					if x := bit + i*off; x >= 0 && x < 64 && own[b+i]>>uint(x)&1 != 0 {
						n++
					}
				}
				if n < 4 {
					continue
				}
				for i := range 4 {
					x := bit + i*off
					c, r := x/colBits, x%colBits
					on[(Rows-1-r)*w+(b+i)*Cols+c] = true
				}
			}
		}
	}
	out := slices.Sorted(maps.Keys(on))
	return out
}

// hasLine scans all boards for a 3-D line of four (slow; for parsing).
func hasLine(own *[MaxD]uint64, d int) bool {
	for b := range d {
		for bit := range 64 {
			if own[b]>>bit&1 != 0 && wins(own, d, b, bit) {
				return true
			}
		}
	}
	return false
}

// Draw implements games.Drawer: the boards side by side, top row first.
func (s *State) Draw(viewer int) string {
	var sb strings.Builder
	for b := range s.g.d {
		mark := ' '
		if !s.over && b == s.step {
			mark = '*'
		}
		fmt.Fprintf(&sb, "  board %d%c       ", b, mark)
	}
	sb.WriteByte('\n')
	for r := Rows - 1; r >= 0; r-- {
		for b := range s.g.d {
			sb.WriteString("  ")
			for c := range Cols {
				bit := uint64(1) << (c*colBits + r)
				switch {
				case s.stones[0][b]&bit != 0:
					sb.WriteByte('x')
				case s.stones[1][b]&bit != 0:
					sb.WriteByte('o')
				default:
					sb.WriteByte('.')
				}
				if c < Cols-1 {
					sb.WriteByte(' ')
				}
			}
			sb.WriteString("  ")
		}
		sb.WriteByte('\n')
	}
	for range s.g.d {
		sb.WriteString("  a b c d e f g  ")
	}
	sb.WriteByte('\n')
	switch {
	case s.over && s.winner >= 0:
		fmt.Fprintf(&sb, "%c wins\n", "xo"[s.winner])
	case s.over:
		sb.WriteString("draw\n")
	default:
		fmt.Fprintf(&sb, "turn %d, %c to move on board %d\n", s.turn+1, "xo"[s.turn&1], s.step)
	}
	return sb.String()
}
