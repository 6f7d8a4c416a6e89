package gametest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// Options tunes Run. Zero values pick sensible defaults.
type Options struct {
	Games int    // random games to play (default 100; 20 in -short mode)
	Seed  uint64 // base seed (default 1)
	// SkipAllocs disables the allocation checks (for example under -race,
	// where the race runtime allocates).
	SkipAllocs bool
	// ConstantSum is, for games of Utility games.ConstantSum, the constant
	// every terminal state's returns sum to.
	ConstantSum float64
}

// Run plays random games of g and checks every invariant of the game API.
func Run(t *testing.T, g games.Game, o Options) {
	t.Helper()
	if o.Games == 0 {
		o.Games = 100
		if testing.Short() {
			o.Games = 20
		}
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	c := newChecker(t, g)
	c.checkGame()
	for i := range o.Games {
		c.rng = games.NewRand(o.Seed + uint64(i))
		c.playOne(i)
		if t.Failed() {
			return
		}
	}
	if !o.SkipAllocs && !raceEnabled {
		c.checkAllocs(o.Seed)
	}
	if g.Type().Utility == games.ConstantSum && !slices.Contains(c.sums, o.ConstantSum) && len(c.sums) > 0 {
		t.Errorf("constant-sum game: returns summed to %v, not %v", c.sums[0], o.ConstantSum)
	}
}

type checker struct {
	t        *testing.T
	g        games.Game
	rng      *rand.Rand
	n        int
	mask     games.Mask
	mask2    games.Mask
	obs      []float32
	info     []float32
	info2    []float32
	ret      []float64
	joint    []games.Action
	sums     []float64
	scratch  games.State
	resample games.State
}

func newChecker(t *testing.T, g games.Game) *checker {
	c := &checker{
		t: t, g: g, n: g.NumActions(),
		mask:     games.NewMask(g.NumActions()),
		mask2:    games.NewMask(g.NumActions()),
		obs:      make([]float32, games.ObservationSize(g)),
		ret:      make([]float64, g.NumPlayers()),
		joint:    make([]games.Action, g.NumPlayers()),
		scratch:  g.NewInitialState(),
		resample: g.NewInitialState(),
	}
	if ig, ok := g.(games.InfoStateGame); ok {
		n := 1
		for _, d := range ig.InformationStateShape() {
			n *= d
		}
		c.info = make([]float32, n)
		c.info2 = make([]float32, n)
	}
	return c
}

func (c *checker) checkGame() {
	t, g := c.t, c.g
	ty := g.Type()
	if ty.Name == "" || g.NumActions() <= 0 || g.MaxGameLength() <= 0 {
		t.Fatalf("game %q: bad type/sizes: %+v actions=%d maxlen=%d", g.Spec(), ty, g.NumActions(), g.MaxGameLength())
	}
	if g.NumPlayers() < ty.MinPlayers || g.NumPlayers() > ty.MaxPlayers {
		t.Fatalf("NumPlayers %d outside [%d,%d]", g.NumPlayers(), ty.MinPlayers, ty.MaxPlayers)
	}
	if ty.MinReturn > ty.MaxReturn {
		t.Fatalf("MinReturn %v > MaxReturn %v", ty.MinReturn, ty.MaxReturn)
	}
	// The canonical spec must rebuild an equivalent game.
	g2, err := games.New(g.Spec())
	if err != nil {
		t.Fatalf("games.New(%q) from Spec(): %v", g.Spec(), err)
	}
	if g2.Spec() != g.Spec() || g2.NumActions() != g.NumActions() || g2.NumPlayers() != g.NumPlayers() {
		t.Fatalf("Spec %q does not rebuild the same game", g.Spec())
	}
	s := g.NewInitialState()
	if s.MoveNumber() != 0 || s.IsTerminal() {
		t.Fatalf("initial state: move %d terminal %v", s.MoveNumber(), s.IsTerminal())
	}
	if s2 := g2.NewInitialState(); s2.Hash() != s.Hash() || s2.String() != s.String() {
		t.Fatalf("two initial states differ: %q vs %q", s.String(), s2.String())
	}
}

func (c *checker) fatalf(s games.State, format string, args ...any) {
	c.t.Helper()
	c.t.Fatalf("%s\nat move %d, state %q", fmt.Sprintf(format, args...), s.MoveNumber(), s.String())
}

func (c *checker) playOne(game int) {
	g := c.g
	s := g.NewInitialState()
	prevHash := s.Hash()
	for steps := 0; ; steps++ {
		c.checkState(s)
		if s.IsTerminal() {
			c.checkTerminal(s)
			return
		}
		if steps > g.MaxGameLength() {
			c.fatalf(s, "game %d did not end within MaxGameLength=%d actions", game, g.MaxGameLength())
		}
		before := s.String()
		p := s.CurrentPlayer()
		var a games.Action
		switch p {
		case games.ChancePlayer:
			cs, ok := s.(games.ChanceState)
			if !ok {
				c.fatalf(s, "chance node but state does not implement games.ChanceState")
			}
			a = c.checkChance(cs)
		case games.SimultaneousPlayer:
			ss, ok := s.(games.SimultaneousState)
			if !ok {
				c.fatalf(s, "simultaneous node but state does not implement games.SimultaneousState")
			}
			for i := range c.joint {
				ss.LegalFor(i, c.mask)
				c.joint[i] = c.mask.Random(c.rng)
				if c.joint[i] == games.NoAction {
					c.fatalf(s, "player %d has no legal action at a simultaneous node", i)
				}
			}
			ss.ApplyJoint(c.joint)
			c.checkAfterApply(s, before, prevHash)
			prevHash = s.Hash()
			continue
		default:
			s.Legal(c.mask)
			a = c.mask.Random(c.rng)
		}
		c.checkMultiAction(s, a)
		c.checkUndo(s, a)
		s.Apply(a)
		c.checkAfterApply(s, before, prevHash)
		prevHash = s.Hash()
	}
}

func (c *checker) checkAfterApply(s games.State, before string, prevHash uint64) {
	if s.String() == before {
		c.fatalf(s, "Apply did not change the notation")
	}
	if s.Hash() == prevHash {
		c.fatalf(s, "Apply did not change the hash")
	}
}

func (c *checker) checkState(s games.State) {
	t, g := c.t, c.g
	t.Helper()
	p := s.CurrentPlayer()
	switch {
	case s.IsTerminal() && p != games.TerminalPlayer:
		c.fatalf(s, "terminal state but CurrentPlayer=%d", p)
	case !s.IsTerminal() && (p >= g.NumPlayers() || (p < 0 && p != games.ChancePlayer && p != games.SimultaneousPlayer)):
		c.fatalf(s, "CurrentPlayer %d out of range", p)
	case p == games.ChancePlayer && g.Type().Chance == games.Deterministic:
		c.fatalf(s, "chance node in a deterministic game")
	case p == games.SimultaneousPlayer && g.Type().Dynamics != games.Simultaneous:
		c.fatalf(s, "simultaneous node in a sequential game")
	}
	if s.MoveNumber() > g.MaxGameLength() {
		c.fatalf(s, "MoveNumber %d > MaxGameLength %d", s.MoveNumber(), g.MaxGameLength())
	}

	// Legal mask.
	s.Legal(c.mask)
	if len(c.mask) != (c.n+63)/64 {
		c.fatalf(s, "mask length changed")
	}
	for a := range c.mask.All() {
		if int(a) >= c.n {
			c.fatalf(s, "legal action %d >= NumActions %d", a, c.n)
		}
	}
	if p >= 0 || p == games.ChancePlayer {
		if c.mask.Empty() {
			c.fatalf(s, "non-terminal state with no legal action for player %d", p)
		}
	} else if !c.mask.Empty() {
		c.fatalf(s, "Legal must be empty at terminal/simultaneous states, has %d", c.mask.Count())
	}

	// Notation round trip and hash from scratch.
	str := s.String()
	parsed, err := g.ParseState(str)
	if err != nil {
		c.fatalf(s, "ParseState(String()) failed: %v", err)
	}
	if parsed.String() != str {
		c.fatalf(s, "notation round trip: %q -> %q", str, parsed.String())
	}
	if parsed.Hash() != s.Hash() {
		c.fatalf(s, "hash %x differs from re-parsed state's %x (incremental hash drifted?)", s.Hash(), parsed.Hash())
	}
	if parsed.CurrentPlayer() != p || parsed.IsTerminal() != s.IsTerminal() || parsed.MoveNumber() != s.MoveNumber() {
		c.fatalf(s, "re-parsed state differs in player/terminal/move number")
	}
	parsed.Legal(c.mask2)
	if !slices.Equal(c.mask, c.mask2) {
		c.fatalf(s, "re-parsed state has a different legal mask")
	}

	// Clones are equal and independent.
	cl := s.Clone()
	s.CloneInto(c.scratch)
	for _, x := range []games.State{cl, c.scratch} {
		if x.String() != str || x.Hash() != s.Hash() {
			c.fatalf(s, "clone differs: %q", x.String())
		}
	}
	if p >= 0 {
		a := c.mask.Random(c.rng)
		cl.Apply(a)
		if s.String() != str {
			c.fatalf(s, "applying %s to a clone changed the original", s.ActionString(a))
		}
		c.scratch.Apply(a)
		if c.scratch.String() != cl.String() || c.scratch.Hash() != cl.Hash() {
			c.fatalf(s, "Clone and CloneInto diverge after the same action")
		}
	}

	// Action text round trip and ApplyChecked agrees with the mask.
	if p >= 0 || p == games.ChancePlayer {
		for a := range c.mask.All() {
			txt := s.ActionString(a)
			back, err := s.ParseAction(txt)
			if err != nil || back != a {
				c.fatalf(s, "ParseAction(%q) = %d, %v; want %d", txt, back, err, a)
			}
		}
	}
	if p >= 0 {
		for _, a := range []games.Action{-1, games.Action(c.n), games.Action(c.rng.IntN(c.n))} {
			if c.mask.Has(a) {
				continue
			}
			s.CloneInto(c.scratch)
			if err := games.ApplyChecked(c.scratch, a); err == nil {
				c.fatalf(s, "ApplyChecked accepted illegal action %d", a)
			}
		}
	}

	// Observations for every player.
	for pl := range g.NumPlayers() {
		for i := range c.obs {
			c.obs[i] = float32(math.NaN())
		}
		s.Observation(pl, c.obs)
		for i, v := range c.obs {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				c.fatalf(s, "observation[%d] for player %d not written or not finite: %v", i, pl, v)
			}
		}
		if is, ok := s.(games.InfoState); ok && c.info != nil {
			for i := range c.info {
				c.info[i] = float32(math.NaN())
			}
			is.InformationState(pl, c.info)
			for i, v := range c.info {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					c.fatalf(s, "information state[%d] for player %d not finite: %v", i, pl, v)
				}
			}
		}
	}

	if b, ok := s.(games.Boarder); ok {
		c.checkBoard(s, b)
	}

	// Determinization keeps the observer's view.
	if rs, ok := s.(games.Resampler); ok && !s.IsTerminal() {
		for pl := range g.NumPlayers() {
			rs.Resample(pl, c.rng, c.resample)
			if c.resample.CurrentPlayer() != p || c.resample.MoveNumber() != s.MoveNumber() {
				c.fatalf(s, "Resample(%d) changed player or move number: %q", pl, c.resample.String())
			}
			c.compareView(s, c.resample, pl)
		}
	}
}

// checkBoard checks the drawing of s (games.Boarder) for every viewer,
// with the mover's legal actions on offer to the mover: grids of the
// declared shape, owners that are players, cell actions and placements in
// range, and marked winning lines on the grid.
func (c *checker) checkBoard(s games.State, bs games.Boarder) {
	c.t.Helper()
	np := c.g.NumPlayers()
	p := s.CurrentPlayer()
	for v := -1; v < np; v++ {
		var offered games.Mask
		if v == p {
			offered = c.mask // s.Legal, filled by checkState
		}
		b := games.BoardOf(s, v, offered)
		if b == nil || b.Kind == "" || b.Rows < 0 || b.Cols < 0 {
			c.fatalf(s, "Board(%d) = %+v: want a kind and a size", v, b)
		}
		grid := func(name string, n int, ok func(r, c int) bool) {
			if n < 0 {
				return
			}
			if n != b.Rows {
				c.fatalf(s, "Board(%d).%s has %d rows, want %d", v, name, n, b.Rows)
			}
			for r := range b.Rows {
				for col := range b.Cols {
					if !ok(r, col) {
						c.fatalf(s, "Board(%d).%s: bad cell (%d, %d)", v, name, r, col)
					}
				}
			}
		}
		width := func(row int) bool { return row == b.Cols }
		grid("Cells", len(b.Cells), func(r, col int) bool {
			return width(len(b.Cells[r])) && b.Cells[r][col] >= -1 && b.Cells[r][col] < np
		})
		grid("Actions", len(b.Actions), func(r, col int) bool {
			return width(len(b.Actions[r])) && b.Actions[r][col] >= -1 && b.Actions[r][col] < c.n
		})
		if b.Labels != nil {
			grid("Labels", len(b.Labels), func(r, _ int) bool { return width(len(b.Labels[r])) })
		}
		if b.Marks != nil {
			grid("Marks", len(b.Marks), func(r, _ int) bool { return width(len(b.Marks[r])) })
		}
		for _, pl := range b.Players {
			if pl.Player < 0 || pl.Player >= np || pl.Hand != nil && len(pl.Hand) != pl.HandCount {
				c.fatalf(s, "Board(%d): player panel %+v", v, pl)
			}
		}
		for _, d := range b.Drops {
			if !offered.Has(games.Action(d.ID)) {
				c.fatalf(s, "Board(%d): placement %d (%s) was not offered", v, d.ID, d.Text)
			}
			for _, rc := range d.Cells {
				if rc[0] < 0 || rc[0] >= b.Rows || rc[1] < 0 || rc[1] >= b.Cols {
					c.fatalf(s, "Board(%d): placement %s fills cell %v off the grid", v, d.Text, rc)
				}
			}
		}
		if _, ok := s.(games.WinningLiner); ok && !s.IsTerminal() && len(b.Line) > 0 {
			c.fatalf(s, "Board(%d) marks a winning line before the end", v)
		}
	}
}

// compareView checks that a and b look the same to player pl.
func (c *checker) compareView(a, b games.State, pl int) {
	obs2 := make([]float32, len(c.obs))
	a.Observation(pl, c.obs)
	b.Observation(pl, obs2)
	if !slices.Equal(c.obs, obs2) {
		c.fatalf(a, "resampled state %q looks different to player %d (observation)", b.String(), pl)
	}
	if ba, ok := a.(games.Boarder); ok {
		if x, y := ba.Board(pl, nil), b.(games.Boarder).Board(pl, nil); !reflect.DeepEqual(x, y) {
			c.fatalf(a, "resampled state %q looks different to player %d (Board):\n%+v\n%+v", b.String(), pl, x, y)
		}
	}
	ia, ok1 := a.(games.InfoState)
	ib, ok2 := b.(games.InfoState)
	if ok1 && ok2 && c.info != nil {
		ia.InformationState(pl, c.info)
		ib.InformationState(pl, c.info2)
		if !slices.Equal(c.info, c.info2) {
			c.fatalf(a, "resampled state %q looks different to player %d (information state)", b.String(), pl)
		}
	}
}

func (c *checker) checkChance(cs games.ChanceState) games.Action {
	if c.g.Type().Chance == games.ExplicitStochastic {
		outs := cs.ChanceOutcomes(nil)
		sum := 0.0
		for _, o := range outs {
			if o.Prob <= 0 || !c.mask.Has(o.Action) {
				c.fatalf(cs, "chance outcome %+v has no probability or is not in the legal mask", o)
			}
			sum += o.Prob
		}
		if math.Abs(sum-1) > 1e-9 {
			c.fatalf(cs, "chance probabilities sum to %v", sum)
		}
	}
	a := cs.SampleChance(c.rng)
	if !c.mask.Has(a) {
		c.fatalf(cs, "SampleChance returned %d, not a legal chance outcome", a)
	}
	return a
}

func (c *checker) checkMultiAction(s games.State, a games.Action) {
	ms, ok := s.(games.MultiActionState)
	if !ok {
		if c.g.Type().MultiAction {
			c.fatalf(s, "Type.MultiAction but state does not implement games.MultiActionState")
		}
		return
	}
	if s.CurrentPlayer() < 0 {
		return
	}
	step, turn, ends, player := ms.StepInTurn(), ms.TurnNumber(), ms.EndsTurn(), s.CurrentPlayer()
	s.CloneInto(c.scratch)
	c.scratch.Apply(a)
	if c.scratch.IsTerminal() {
		return
	}
	next := c.scratch.(games.MultiActionState)
	if ends {
		if next.StepInTurn() != 0 || next.TurnNumber() != turn+1 {
			c.fatalf(s, "after a turn-ending action: step %d turn %d, want 0 and %d", next.StepInTurn(), next.TurnNumber(), turn+1)
		}
	} else if next.StepInTurn() != step+1 || next.TurnNumber() != turn || c.scratch.CurrentPlayer() != player {
		// EndsTurn may be false when the turn's length depends on the
		// action (see its doc); then this action may end the turn as long
		// as some other legal action continues it.
		if next.StepInTurn() != 0 || next.TurnNumber() != turn+1 || !c.someActionContinuesTurn(s, step, turn) {
			c.fatalf(s, "mid-turn action: step %d->%d turn %d->%d player %d->%d", step, next.StepInTurn(), turn, next.TurnNumber(), player, c.scratch.CurrentPlayer())
		}
	}
}

// someActionContinuesTurn reports whether a legal action of s leaves the
// turn running (justifying EndsTurn() == false).
func (c *checker) someActionContinuesTurn(s games.State, step, turn int) bool {
	s.Legal(c.mask2)
	for b := range c.mask2.All() {
		x := s.Clone()
		x.Apply(b)
		if ms := x.(games.MultiActionState); !x.IsTerminal() && ms.StepInTurn() == step+1 && ms.TurnNumber() == turn {
			return true
		}
	}
	return false
}

func (c *checker) checkUndo(s games.State, a games.Action) {
	if _, ok := s.(games.Undoer); !ok {
		return
	}
	s.CloneInto(c.scratch)
	u := c.scratch.(games.Undoer)
	str, h := s.String(), s.Hash()
	u.Apply(a)
	u.Undo(a)
	if u.String() != str || u.Hash() != h {
		c.fatalf(s, "Apply(%s)+Undo gives %q", s.ActionString(a), u.String())
	}
}

func (c *checker) checkTerminal(s games.State) {
	s.Returns(c.ret)
	ty := c.g.Type()
	sum := 0.0
	for p, r := range c.ret {
		if math.IsNaN(r) || r < ty.MinReturn || r > ty.MaxReturn {
			c.fatalf(s, "return %v of player %d outside [%v, %v]", r, p, ty.MinReturn, ty.MaxReturn)
		}
		sum += r
	}
	switch ty.Utility {
	case games.ZeroSum:
		if math.Abs(sum) > 1e-9 {
			c.fatalf(s, "zero-sum game's returns %v sum to %v", c.ret, sum)
		}
	case games.ConstantSum:
		if len(c.sums) == 0 {
			c.sums = append(c.sums, sum)
		} else if math.Abs(sum-c.sums[0]) > 1e-9 {
			c.fatalf(s, "constant-sum game's returns sum to %v, earlier %v", sum, c.sums[0])
		}
	}
	s.Legal(c.mask)
	if !c.mask.Empty() {
		c.fatalf(s, "terminal state has legal actions")
	}
}

// checkAllocs pins the no-allocation promise of the hot paths by replaying
// one random game on reused states.
func (c *checker) checkAllocs(seed uint64) {
	g := c.g
	rng := games.NewRand(seed)
	s := g.NewInitialState()
	dst := g.NewInitialState()
	s.CloneInto(dst) // warm dst
	var allocs float64
	steps := 0
	allocs = testing.AllocsPerRun(5, func() {
		g.NewInitialState().CloneInto(s)
		for !s.IsTerminal() && steps < 100000 {
			steps++
			switch s.CurrentPlayer() {
			case games.ChancePlayer:
				s.Apply(s.(games.ChanceState).SampleChance(rng))
			case games.SimultaneousPlayer:
				ss := s.(games.SimultaneousState)
				for i := range c.joint {
					ss.LegalFor(i, c.mask)
					c.joint[i] = c.mask.Random(rng)
				}
				ss.ApplyJoint(c.joint)
			default:
				s.Legal(c.mask)
				_ = s.Hash()
				s.CloneInto(dst)
				s.Apply(c.mask.Random(rng))
			}
		}
	})
	// One allocation per run is the NewInitialState that resets s; the loop
	// itself must allocate nothing.
	base := testing.AllocsPerRun(5, func() { g.NewInitialState().CloneInto(s) })
	if allocs > base {
		c.t.Errorf("hot paths allocate: %.1f allocations per game beyond the reset (Legal/Apply/CloneInto/Hash/IsTerminal must not allocate)", allocs-base)
	}
}

// FuzzNotation fuzzes g.ParseState and State.ParseAction: malformed input
// must give an error, never a panic, and every accepted notation must print
// back to a notation that parses to the same state.
func FuzzNotation(f *testing.F, g games.Game) {
	rng := games.NewRand(7)
	mask := games.NewMask(g.NumActions())
	joint := make([]games.Action, g.NumPlayers())
	for i := range 8 {
		s := g.NewInitialState()
		for j := 0; j < 3*i && !s.IsTerminal(); j++ {
			games.RandomStep(s, rng, mask, joint)
		}
		f.Add(s.String())
	}
	f.Add("")
	f.Add("\x00\xff")
	f.Fuzz(func(t *testing.T, notation string) {
		s, err := g.ParseState(notation)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		str := s.String()
		s2, err := g.ParseState(str)
		if err != nil {
			t.Fatalf("accepted %q but not its own print %q: %v", notation, str, err)
		}
		if s2.String() != str || s2.Hash() != s.Hash() {
			t.Fatalf("print of %q does not round-trip: %q vs %q", notation, str, s2.String())
		}
		s.Legal(mask)
		_, _ = s.ParseAction(notation)
		if !s.IsTerminal() && s.CurrentPlayer() >= 0 && mask.Empty() {
			t.Fatalf("parsed non-terminal state %q has no legal action", str)
		}
	})
}
