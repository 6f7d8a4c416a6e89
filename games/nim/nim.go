// Package nim is the reference game of docs/EXTENDING.md: the subtraction
// game Nim on one heap. Players take turns removing 1..take stones from a
// heap of stones; whoever takes the last stone wins. It is small enough to
// read in one sitting and to solve by hand (the player to move loses
// exactly when the heap is a multiple of take+1), so it shows every step a
// new game needs, from the registry to `canopy zero`, without the rules
// getting in the way.
//
// Actions 0..take-1 take 1..take stones; their text is the number taken.
// The state notation is the sequence of numbers taken, one digit each
// ("312": 3, then 1, then 2), "" for the initial state. The observation is
// one plane of 1 x stones cells, cell i set while stone i is on the heap;
// the game is impartial, so it does not depend on the player.
package nim

import (
	"fmt"
	"strings"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/spec"
)

// Option limits and defaults.
const (
	MaxStones     = 64
	DefaultStones = 21
	MaxTake       = 9 // one digit per move in the notation
	DefaultTake   = 3
)

func init() {
	games.Register(games.Registration{
		Name:    "nim",
		Summary: "Nim on one heap: take 1..take stones, the last stone wins (the reference game of docs/EXTENDING.md)",
		Options: new(options).table().Docs(),
		New: func(s *spec.Spec) (games.Game, error) {
			var o options
			if err := o.table().Parse(s); err != nil {
				return nil, err
			}
			return New(o.stones, o.take)
		},
	})
}

// Game is Nim with its options applied. It is immutable and safe for
// concurrent use.
type Game struct {
	stones, take int
	keys         []uint64 // Zobrist keys: stones left 0..stones, then the side to move
}

// New returns Nim on a heap of stones (1..MaxStones) where a move takes
// 1..take stones (1..MaxTake).
func New(stones, take int) (*Game, error) {
	if stones < 1 || stones > MaxStones {
		return nil, fmt.Errorf("nim: stones = %d, want 1..%d", stones, MaxStones)
	}
	if take < 1 || take > MaxTake {
		return nil, fmt.Errorf("nim: take = %d, want 1..%d", take, MaxTake)
	}
	return &Game{stones: stones, take: take, keys: games.ZobristKeys(0x4e494d, stones+2)}, nil
}

func (g *Game) Type() games.Type {
	return games.Type{Name: "nim", LongName: "Nim", Dynamics: games.Sequential,
		Chance: games.Deterministic, Information: games.PerfectInformation, Utility: games.ZeroSum,
		MinPlayers: 2, MaxPlayers: 2, MinReturn: -1, MaxReturn: 1}
}

// Spec names the options that differ from the defaults, so the default
// game's spec is plain "nim".
func (g *Game) Spec() string {
	var opts []string
	if g.stones != DefaultStones {
		opts = append(opts, fmt.Sprintf("stones=%d", g.stones))
	}
	if g.take != DefaultTake {
		opts = append(opts, fmt.Sprintf("take=%d", g.take))
	}
	if len(opts) == 0 {
		return "nim"
	}
	return "nim:" + strings.Join(opts, ",")
}

func (g *Game) NumPlayers() int         { return 2 }
func (g *Game) NumActions() int         { return g.take }
func (g *Game) MaxGameLength() int      { return g.stones } // every move takes at least one stone
func (g *Game) ObservationShape() []int { return []int{1, 1, g.stones} }

// NewInitialState returns the full heap, player 0 to move.
func (g *Game) NewInitialState() games.State {
	return &State{g: g, left: int8(g.stones), hash: g.keys[g.stones]}
}

// ParseState parses a sequence of digits, each the number of stones one
// move takes.
func (g *Game) ParseState(n string) (games.State, error) {
	s := g.NewInitialState().(*State)
	for i, c := range n {
		if c < '1' || c > '9' {
			return nil, fmt.Errorf("nim: character %d %q is not a move 1-%d", i+1, c, g.take)
		}
		if err := games.ApplyChecked(s, games.Action(c-'1')); err != nil {
			return nil, fmt.Errorf("nim: move %d: %v", i+1, err)
		}
	}
	return s, nil
}

// State is a Nim position: the stones left and the moves that led there.
type State struct {
	g     *Game
	left  int8
	n     int8 // moves played; player n&1 is to move
	moves [MaxStones]int8
	hash  uint64
}

func (s *State) Game() games.Game { return s.g }
func (s *State) IsTerminal() bool { return s.left == 0 }
func (s *State) MoveNumber() int  { return int(s.n) }
func (s *State) Hash() uint64     { return s.hash }

func (s *State) CurrentPlayer() int {
	if s.left == 0 {
		return games.TerminalPlayer
	}
	return int(s.n & 1)
}

// Legal sets actions 0..min(take, left)-1.
func (s *State) Legal(dst games.Mask) {
	dst.Clear()
	for a := range min(s.g.take, int(s.left)) {
		dst.Set(games.Action(a))
	}
}

// Apply takes a+1 stones.
func (s *State) Apply(a games.Action) {
	k := s.g.keys
	s.hash ^= k[s.left] ^ k[s.left-int8(a)-1] ^ k[s.g.stones+1]
	s.left -= int8(a) + 1
	s.moves[s.n] = int8(a)
	s.n++
}

// Undo implements games.Undoer.
func (s *State) Undo(a games.Action) {
	k := s.g.keys
	s.n--
	s.left += int8(a) + 1
	s.hash ^= k[s.left] ^ k[s.left-int8(a)-1] ^ k[s.g.stones+1]
}

func (s *State) Clone() games.State      { c := *s; return &c }
func (s *State) CloneInto(d games.State) { *d.(*State) = *s }

// Returns: +1 to the player who took the last stone, -1 to the other.
func (s *State) Returns(dst []float64) {
	dst[0], dst[1] = 0, 0
	if s.left == 0 {
		w := (s.n - 1) & 1 // the player who made the last move
		dst[w], dst[1-w] = 1, -1
	}
}

// Observation sets cell i of the single 1 x stones plane while stone i is
// on the heap.
func (s *State) Observation(_ int, dst []float32) {
	for i := range dst {
		dst[i] = 0
		if i < int(s.left) {
			dst[i] = 1
		}
	}
}

func (s *State) ActionString(a games.Action) string { return fmt.Sprint(int(a) + 1) }

func (s *State) ParseAction(t string) (games.Action, error) {
	t = strings.TrimSpace(t)
	if len(t) != 1 || t[0] < '1' || int(t[0]-'0') > s.g.take {
		return games.NoAction, fmt.Errorf("nim: %q is not a number of stones 1-%d", t, s.g.take)
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

// Draw implements games.Drawer: the heap as a row of stones.
func (s *State) Draw(int) string {
	return fmt.Sprintf("%s (%d left)\n", strings.Repeat("o", int(s.left)), s.left)
}

// options are Nim's spec options, declared once: the registration's
// documentation (Table.Docs) and New's parsing both come from table.
type options struct{ stones, take int }

func (o *options) table() spec.Table {
	return spec.Table{
		spec.Int("stones", &o.stones, DefaultStones, 1, MaxStones, "stones on the heap at the start"),
		spec.Int("take", &o.take, DefaultTake, 1, MaxTake, "most stones one move takes"),
	}
}
