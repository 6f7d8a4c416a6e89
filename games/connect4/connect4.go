package connect4

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/spec"
)

func init() {
	games.Register(games.Registration{
		Name:    "connect4",
		Summary: "Connect Four, 7 columns x 6 rows, bitboards (no options)",
		New:     func(*spec.Spec) (games.Game, error) { return theGame, nil },
	})
}

// zobristSeed fixes the hash keys so hashes are stable across runs.
const zobristSeed = 0xc0ec74f0a5e1

// zobrist[player*64+bit] is the key of player's stone on board bit.
var zobrist = func() (k [128]uint64) {
	copy(k[:], games.ZobristKeys(zobristSeed, len(k)))
	return k
}()

// Game is Connect Four on the standard 7x6 board. It has no options; New
// and games.New("connect4") return the same immutable value.
type Game struct{}

var theGame = &Game{}

// New returns the Connect Four game.
func New() *Game { return theGame }

var gameType = games.Type{
	Name:        "connect4",
	LongName:    "Connect Four",
	Dynamics:    games.Sequential,
	Chance:      games.Deterministic,
	Information: games.PerfectInformation,
	Utility:     games.ZeroSum,
	MinPlayers:  2,
	MaxPlayers:  2,
	MinReturn:   -1,
	MaxReturn:   1,
}

// Type implements games.Game.
func (*Game) Type() games.Type { return gameType }

// Spec implements games.Game.
func (*Game) Spec() string { return "connect4" }

// NumPlayers implements games.Game.
func (*Game) NumPlayers() int { return 2 }

// NumActions implements games.Game: action id = column 0..6.
func (*Game) NumActions() int { return Width }

// MaxGameLength implements games.Game.
func (*Game) MaxGameLength() int { return Cells }

// ObservationShape implements games.Game: [2, 6, 7], plane 0 the viewer's
// stones, plane 1 the opponent's, row 0 the bottom row.
func (*Game) ObservationShape() []int { return []int{2, Height, Width} }

// NewInitialState implements games.Game.
func (g *Game) NewInitialState() games.State { return g.NewState() }

// NewState returns the empty board as the concrete type.
func (*Game) NewState() *State { return &State{} }

// ParseState implements games.Game. The notation is the move sequence in
// Pons' digits ("4453"; "" is the empty board).
func (g *Game) ParseState(notation string) (games.State, error) { return g.ParseMoves(notation) }

// ParseMoves is ParseState returning the concrete type.
func (*Game) ParseMoves(moves string) (*State, error) {
	s := &State{}
	if err := playSequence(moves, s.play, &s.pos); err != nil {
		return nil, err
	}
	return s, nil
}

// State is a Connect Four game in progress: the bitboard Position plus the
// move history (for notation and Undo), an incremental Zobrist hash and a
// won flag. It is a plain value (no pointers): copying it copies the game.
// Not safe for concurrent use.
type State struct {
	pos  Position
	hash uint64
	won  bool // the last mover has four in a row
	hist [Cells]uint8
}

// Position returns the current bitboard position.
func (s *State) Position() Position { return s.pos }

// Won reports whether the last mover has four in a row.
func (s *State) Won() bool { return s.won }

// Game implements games.State.
func (*State) Game() games.Game { return theGame }

// CurrentPlayer implements games.State.
func (s *State) CurrentPlayer() int {
	if s.IsTerminal() {
		return games.TerminalPlayer
	}
	return s.pos.moves & 1
}

// IsTerminal implements games.State.
func (s *State) IsTerminal() bool { return s.won || s.pos.moves == Cells }

// legalBits returns bit c set for every playable column c.
func (s *State) legalBits() uint64 {
	if s.IsTerminal() {
		return 0
	}
	// The top cell of column c, bit 7c+5, is free iff the column has room.
	// Gather those bits into bits 0..6: after >>5 they sit at 7c; times
	// gatherMul (terms 2^(36-6j)) moves bit 7c to 36+c, and no two terms of
	// the product share a bit, so nothing carries into bits 36..42.
	free := (^s.pos.mask & topMask) >> (Height - 1)
	return free * gatherMul >> 36 & (1<<Width - 1)
}

const gatherMul = 1<<36 | 1<<30 | 1<<24 | 1<<18 | 1<<12 | 1<<6 | 1

// Legal implements games.State.
func (s *State) Legal(dst games.Mask) {
	dst[0] = s.legalBits()
	if len(dst) > 1 {
		clear(dst[1:])
	}
}

// play drops a stone in col, updating hash, history and the won flag.
func (s *State) play(col int) {
	move := (s.pos.mask + BottomMask) & ColumnMask(col)
	s.hash ^= zobrist[(s.pos.moves&1)<<6+bits.TrailingZeros64(move)]
	s.hist[s.pos.moves] = uint8(col)
	s.pos.PlayMove(move)
	s.won = HasFour(s.pos.current ^ s.pos.mask)
}

// Apply implements games.State. a must be legal.
func (s *State) Apply(a games.Action) { s.play(int(a)) }

// Undo implements games.Undoer: it takes back a, the last action applied.
func (s *State) Undo(a games.Action) {
	s.pos.moves--
	col := int(s.hist[s.pos.moves])
	_ = a                                                                       // the history is authoritative; a is only the caller's claim
	move := uint64(1) << (63 - bits.LeadingZeros64(s.pos.mask&ColumnMask(col))) // top stone
	s.pos.mask ^= move
	s.pos.current ^= s.pos.mask
	s.hash ^= zobrist[(s.pos.moves&1)<<6+bits.TrailingZeros64(move)]
	s.won = false
	s.hist[s.pos.moves] = 0 // keep the history beyond MoveNumber zero
}

// Clone implements games.State.
func (s *State) Clone() games.State {
	c := *s
	return &c
}

// CloneInto implements games.State.
func (s *State) CloneInto(dst games.State) { *dst.(*State) = *s }

// Returns implements games.State: +1 for the winner, -1 for the loser,
// zeros for draws and unfinished games.
func (s *State) Returns(dst []float64) {
	dst[0], dst[1] = 0, 0
	if s.won {
		w := (s.pos.moves - 1) & 1
		dst[w], dst[1-w] = 1, -1
	}
}

// WinningLine implements games.WinningLiner: the cells of every four in
// a row of the winner (observation indices row*Width+col, row 0 at the
// bottom), nil unless someone has won.
func (s *State) WinningLine() []int {
	if !s.won {
		return nil
	}
	own := s.pos.Stones((s.pos.moves - 1) & 1)
	var line uint64
	for _, d := range []int{1, colStride, colStride - 1, colStride + 1} { // vertical, horizontal, both diagonals
		starts := own & (own >> d) & (own >> (2 * d)) & (own >> (3 * d))
		for k := range 4 {
			line |= starts << (k * d)
		}
	}
	var out []int
	for line != 0 {
		out = append(out, int(bitCell[bits.TrailingZeros64(line)]))
		line &= line - 1
	}
	slices.Sort(out)
	return out
}

// Hash implements games.State: the XOR of one Zobrist key per stone (the
// side to move follows from the stone count).
func (s *State) Hash() uint64 { return s.hash }

// PositionKey returns Position().Key(), an exact 49-bit identifier of the
// position (transpositions share it). perft.Distinct uses it.
func (s *State) PositionKey() uint64 { return s.pos.Key() }

// Observation implements games.State.
func (s *State) Observation(player int, dst []float32) {
	if player < 0 || player > 1 {
		panic(fmt.Sprintf("connect4: observation for player %d, want 0 or 1", player))
	}
	clear(dst[:2*Cells])
	own, opp := s.pos.Stones(player), s.pos.Stones(1-player)
	// Only occupied cells are written: set bits are far fewer than cells
	// early in the game, and this runs once per network evaluation.
	for own != 0 {
		dst[bitCell[bits.TrailingZeros64(own)]] = 1
		own &= own - 1
	}
	for opp != 0 {
		dst[Cells+int(bitCell[bits.TrailingZeros64(opp)])] = 1
		opp &= opp - 1
	}
}

// bitCell maps a bitboard bit (col*colStride + row) to its observation
// index row*Width + col. Guard bits never hold stones.
var bitCell = func() (t [Width * colStride]int8) {
	for col := range Width {
		for row := range Height {
			t[col*colStride+row] = int8(row*Width + col)
		}
	}
	return t
}()

// MoveNumber implements games.State.
func (s *State) MoveNumber() int { return s.pos.moves }

// ActionString implements games.State: "1".."7".
func (*State) ActionString(a games.Action) string {
	if a < 0 || a >= Width {
		return fmt.Sprintf("?%d", int(a))
	}
	return string(rune('1' + a))
}

// ParseAction implements games.State; it accepts "1".."7".
func (*State) ParseAction(str string) (games.Action, error) {
	t := strings.TrimSpace(str)
	if len(t) != 1 || t[0] < '1' || t[0] > '7' {
		return games.NoAction, fmt.Errorf("connect4: bad move %q (want a column 1..7)", str)
	}
	return games.Action(t[0] - '1'), nil
}

// String implements games.State: the move sequence in Pons' digits.
func (s *State) String() string {
	b := make([]byte, s.pos.moves)
	for i := range b {
		b[i] = '1' + s.hist[i]
	}
	return string(b)
}

// Draw implements games.Drawer: the board with X for the first player and
// O for the second, columns labelled 1..7. viewer is ignored (perfect
// information).
func (s *State) Draw(viewer int) string {
	var b strings.Builder
	b.WriteString(" 1 2 3 4 5 6 7\n")
	x, o := s.pos.Stones(0), s.pos.Stones(1)
	for row := Height - 1; row >= 0; row-- {
		b.WriteByte('|')
		for col := range Width {
			bit := uint64(1) << (col*colStride + row)
			switch {
			case x&bit != 0:
				b.WriteByte('X')
			case o&bit != 0:
				b.WriteByte('O')
			default:
				b.WriteByte('.')
			}
			if col < Width-1 {
				b.WriteByte(' ')
			}
		}
		b.WriteString("|\n")
	}
	switch {
	case s.won:
		fmt.Fprintf(&b, "%c wins\n", "XO"[(s.pos.moves-1)&1])
	case s.pos.moves == Cells:
		b.WriteString("draw\n")
	default:
		fmt.Fprintf(&b, "%c to move\n", "XO"[s.pos.moves&1])
	}
	return b.String()
}

// RandomPlayout plays random moves until the game ends (the fast bitboard
// twin of games.RandomPlayout). Each move is drawn among the playable
// columns from 32 random bits by multiply-and-shift, so a column's
// probability is within 2^-29 of uniform. It returns the number of moves
// played and never allocates.
func (s *State) RandomPlayout(rng *rand.Rand) int {
	p, h, won := s.pos, s.hash, s.won
	start := p.moves
	var r uint64 // random bits not used yet, 32 at a time
	for half := false; !won && p.moves < Cells; half = !half {
		if !half {
			r = rng.Uint64()
		} else {
			r >>= 32
		}
		perfInject(r) // no-op except in the perf gate's self-test (perfinject.go)
		legal := (^p.mask & topMask) >> (Height - 1) * gatherMul >> 36 & (1<<Width - 1)
		k := uint64(uint32(r)) * uint64(legalCount[legal]) >> 32
		col := nthColumn[legal][k]
		move := (p.mask + BottomMask) & columnMasks[col]
		tz := bits.TrailingZeros64(move)
		h ^= zobrist[(p.moves&1)<<6|tz]
		s.hist[p.moves] = col
		// A new win can only use the mover's stones and the new one.
		mine := p.current | move
		p.PlayMove(move)
		won = HasFour(mine)
	}
	s.pos, s.hash, s.won = p, h, won
	return p.moves - start
}

// Tables indexed by a 7-bit set of playable columns.
var (
	legalCount [1 << Width]uint8        // number of playable columns
	nthColumn  [1 << Width][Width]uint8 // k-th playable column, ascending
	// columnMasks[c] is ColumnMask(c).
	columnMasks [Width]uint64
)

func init() {
	for set := range 1 << Width {
		for c := range Width {
			if set&(1<<c) != 0 {
				nthColumn[set][legalCount[set]] = uint8(c)
				legalCount[set]++
			}
		}
	}
	for c := range Width {
		columnMasks[c] = ColumnMask(c)
	}
}

var (
	_ games.Undoer = (*State)(nil)
	_ games.Drawer = (*State)(nil)
)
