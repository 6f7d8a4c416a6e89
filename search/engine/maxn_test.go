package engine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/sushigo"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search"
)

// twoMoveGame is a hand-built three-player game: player 0 plays A (0)
// or B (1), then player 1 plays x (0) or y (1); the outcome is then
// fixed, (*ret)[a0][a1] (the players' returns), and player 2 passes
// (action 0) until the game ends after length moves. The observation is
// (a0, a1, the outcome is fixed, the observing player).
type twoMoveGame struct {
	name   string
	ret    *[2][2][3]float64
	length int
}

// coalitionGame is a hand-built three-player position where MaxN and
// paranoid backups must choose differently: a twoMoveGame whose game
// ends after coalitionLen moves, far deeper than any search below
// reaches, so every value the tree sees under the first two moves is the
// network's.
var coalitionGame = twoMoveGame{"coalition", &coalitionRet, coalitionLen}

// coalitionRet[a0][a1] is the players' returns after moves a0, a1.
var coalitionRet = [2][2][3]float64{
	{{0.6, 0.3, 0.2}, {-0.6, -0.2, -0.6}}, // A: x, y
	{{0.0, 0.5, -1.0}, {-0.2, -0.5, 0.6}}, // B: x, y
}

const coalitionLen = 10000

type twoMoveState struct {
	g             twoMoveGame
	moves, a0, a1 int
}

func (g twoMoveGame) Type() games.Type {
	return games.Type{Name: g.name, Dynamics: games.Sequential, Chance: games.Deterministic,
		Information: games.PerfectInformation, Utility: games.GeneralSum, MinPlayers: 3, MaxPlayers: 3, MinReturn: -1, MaxReturn: 1}
}
func (g twoMoveGame) Spec() string                 { return g.name }
func (twoMoveGame) NumPlayers() int                { return 3 }
func (twoMoveGame) NumActions() int                { return 2 }
func (g twoMoveGame) MaxGameLength() int           { return g.length }
func (twoMoveGame) ObservationShape() []int        { return []int{4} }
func (g twoMoveGame) NewInitialState() games.State { return &twoMoveState{g: g} }
func (g twoMoveGame) ParseState(string) (games.State, error) {
	return nil, fmt.Errorf("%s: no notation", g.name)
}
func (s *twoMoveState) Game() games.Game          { return s.g }
func (s *twoMoveState) IsTerminal() bool          { return s.moves >= s.g.length }
func (s *twoMoveState) Clone() games.State        { c := *s; return &c }
func (s *twoMoveState) CloneInto(dst games.State) { *dst.(*twoMoveState) = *s }
func (s *twoMoveState) Hash() uint64              { return uint64(s.moves)<<2 | uint64(s.a0)<<1 | uint64(s.a1) }
func (s *twoMoveState) MoveNumber() int           { return s.moves }
func (s *twoMoveState) String() string            { return fmt.Sprint(s.moves, s.a0, s.a1) }
func (s *twoMoveState) Apply(a games.Action) {
	switch s.moves {
	case 0:
		s.a0 = int(a)
	case 1:
		s.a1 = int(a)
	}
	s.moves++
}
func (s *twoMoveState) ActionString(a games.Action) string { return strconv.Itoa(int(a)) }
func (s *twoMoveState) ParseAction(x string) (games.Action, error) {
	n, err := strconv.Atoi(x)
	return games.Action(n), err
}
func (s *twoMoveState) CurrentPlayer() int {
	switch {
	case s.IsTerminal():
		return games.TerminalPlayer
	case s.moves < 2:
		return s.moves
	}
	return 2
}
func (s *twoMoveState) Legal(dst games.Mask) {
	dst.Clear()
	switch {
	case s.IsTerminal():
	case s.moves < 2:
		dst.Set(0)
		dst.Set(1)
	default:
		dst.Set(0)
	}
}
func (s *twoMoveState) Returns(dst []float64) {
	clear(dst[:3])
	if s.IsTerminal() {
		copy(dst, s.g.ret[s.a0][s.a1][:])
	}
}
func (s *twoMoveState) Observation(player int, dst []float32) {
	dst[0], dst[1], dst[2], dst[3] = float32(s.a0), float32(s.a1), 0, float32(player)
	if s.moves >= 2 {
		dst[2] = 1
	}
}

// oracleNet is an exact network for coalitionGame: uniform priors, and
// once the outcome is fixed its returns from the observing player's view
// (0 before). With players = 3 it is a per-player head (row i: the
// return of player (viewer+i) mod 3); with players = 1 the scalar head
// (the viewer's return alone).
type oracleNet struct{ players int }

func (o *oracleNet) Name() string        { return "oracle" }
func (o *oracleNet) Shape() (int, int)   { return 4, 2 }
func (o *oracleNet) PreferredBatch() int { return 8 }
func (o *oracleNet) MaxBatch() int       { return 64 }
func (o *oracleNet) ValueSize() int      { return o.players }
func (o *oracleNet) Evaluate(_ context.Context, batch int, input, policy, value []float32) error {
	for i := range batch {
		in := input[i*4 : (i+1)*4]
		clear(policy[i*2 : (i+1)*2])
		row := value[i*o.players : (i+1)*o.players]
		clear(row)
		if in[2] == 1 {
			r, viewer := coalitionRet[int(in[0])][int(in[1])], int(in[3])
			for k := range row {
				row[k] = float32(r[(viewer+k)%3])
			}
		}
	}
	return nil
}

// bruteForce is the brute-force solution of the coalition position for
// a rule that values the fixed outcomes: every player picks the child
// best for itself, ties to the lower action. It returns player 0's move
// and the root's value vector.
func bruteForce(leaf func(r [3]float64) [3]float64) (int, [3]float64) {
	best := func(player int, kids [2][3]float64) (int, [3]float64) {
		if kids[1][player] > kids[0][player] {
			return 1, kids[1]
		}
		return 0, kids[0]
	}
	var atA0 [2][3]float64
	for a0 := range 2 {
		var kids [2][3]float64
		for a1 := range 2 {
			kids[a1] = leaf(coalitionRet[a0][a1])
		}
		_, atA0[a0] = best(1, kids)
	}
	return best(0, atA0)
}

// coalitionSearch runs one az search of the coalition root on net with
// backup and returns its root statistics and principal variation.
func coalitionSearch(t *testing.T, net *oracleNet, backup string, sims int) ([]search.ActionStat, []games.Action) {
	t.Helper()
	g := coalitionGame
	e, err := New(g, net, Options{Workers: 1, Batch: 8, Wait: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	st := DefaultSettings()
	st.Sims, st.Backup = sims, backup
	s, err := NewSearcher(e, st.SearchOptions(), 5)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := s.Search(context.Background(), g.NewInitialState(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Clone(stats), s.Tree().PV(nil, 4)
}

func mostVisited(stats []search.ActionStat) int {
	best := 0
	for i, s := range stats {
		if s.Visits > stats[best].Visits {
			best = i
		}
	}
	return int(stats[best].Action)
}

// MaxN backups of a per-player value head and the paranoid spreading
// choose differently in the coalition position, and each search plays
// what brute force says its rule plays. Player 1 prefers x after A under
// MaxN (0.3 > -0.2) but y under paranoid, where it only sees player 2's
// loss; the root follows.
func TestMaxNAgainstParanoid(t *testing.T) {
	maxnMove, maxnV := bruteForce(func(r [3]float64) [3]float64 { return r })
	// Paranoid: the outcome is valued from player 2's view (the mover
	// there), v = r[2], and -v/2 for the others.
	parMove, parV := bruteForce(func(r [3]float64) [3]float64 { return [3]float64{-r[2] / 2, -r[2] / 2, r[2]} })
	if maxnMove == parMove {
		t.Fatalf("the position does not separate the rules: both play %d (maxn %v, paranoid %v)", maxnMove, maxnV, parV)
	}
	const sims = 800
	stats, pv := coalitionSearch(t, &oracleNet{players: 3}, BackupMaxN, sims)
	if got := mostVisited(stats); got != maxnMove {
		t.Errorf("maxn search plays %d, brute force %d (stats %+v)", got, maxnMove, stats)
	}
	if len(pv) < 2 || int(pv[0]) != maxnMove {
		t.Errorf("maxn principal variation %v", pv)
	}
	for _, s := range stats {
		if int(s.Action) == maxnMove && math.Abs(s.Q-maxnV[0]) > 0.1 {
			t.Errorf("maxn Q of the move played %.3f, brute-force value %.3f", s.Q, maxnV[0])
		}
	}
	pstats, _ := coalitionSearch(t, &oracleNet{players: 3}, BackupParanoid, sims)
	if got := mostVisited(pstats); got != parMove {
		t.Errorf("paranoid search plays %d, brute force %d (stats %+v)", got, parMove, pstats)
	}
	// A scalar head (the mover's value alone) is paranoid whatever the
	// backup option says: the same tree as the per-player head spread.
	for _, backup := range []string{BackupMaxN, BackupParanoid} {
		sstats, _ := coalitionSearch(t, &oracleNet{players: 1}, backup, sims)
		if !slices.Equal(sstats, pstats) {
			t.Errorf("scalar head, backup=%s: root %+v, want the paranoid per-player search's %+v", backup, sstats, pstats)
		}
	}
}

// Gumbel root search backs up the same vectors: each rule's sequential
// halving plays its brute-force move.
func TestMaxNGumbel(t *testing.T) {
	maxnMove, _ := bruteForce(func(r [3]float64) [3]float64 { return r })
	parMove, _ := bruteForce(func(r [3]float64) [3]float64 { return [3]float64{-r[2] / 2, -r[2] / 2, r[2]} })
	g := coalitionGame
	for backup, want := range map[string]int{BackupMaxN: maxnMove, BackupParanoid: parMove} {
		e, err := New(g, &oracleNet{players: 3}, Options{Workers: 1, Batch: 8, Wait: -1})
		if err != nil {
			t.Fatal(err)
		}
		st := DefaultSettings()
		st.Sims, st.Backup, st.Gumbel, st.GumbelM = 400, backup, true, 2
		s, err := NewSearcher(e, st.SearchOptions(), 9)
		if err != nil {
			t.Fatal(err)
		}
		stats, err := s.Search(context.Background(), g.NewInitialState(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := int(s.Choose(stats, 0)); got != want {
			t.Errorf("gumbel, backup=%s: plays %d, brute force %d (stats %+v)", backup, got, want, stats)
		}
		e.Close()
	}
}

// The mcts agent's network evaluator (mcts:eval=NET,backup=...) makes
// the same choices as the az searches: each rule plays its brute-force
// move.
func TestMaxNNetEvaluator(t *testing.T) {
	maxnMove, _ := bruteForce(func(r [3]float64) [3]float64 { return r })
	parMove, _ := bruteForce(func(r [3]float64) [3]float64 { return [3]float64{-r[2] / 2, -r[2] / 2, r[2]} })
	g := coalitionGame
	e, err := New(g, &oracleNet{players: 3}, Options{Workers: 1, Batch: 8, Wait: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for backup, want := range map[string]int{BackupMaxN: maxnMove, BackupParanoid: parMove} {
		ev := NewEngineEvaluator(e)
		var bs search.BackupSetter = ev
		bs.SetBackup(backup)
		o := search.DefaultOptions()
		o.Rule, o.Sims, o.ExpandVisits, o.Eval = search.PUCT, 800, 0, ev
		tr, err := search.New(g, o, 3)
		if err != nil {
			t.Fatal(err)
		}
		tr.Search(context.Background(), g.NewInitialState())
		if got := mostVisited(tr.RootStats(0, nil)); got != want {
			t.Errorf("backup=%s: plays %d, brute force %d", backup, got, want)
		}
	}
}

// fillValues undoes the seat rotation of a per-player head's row.
func TestFillValues(t *testing.T) {
	v := make([]float64, 3)
	fillValues(v, 1, []float32{0.5, -0.25, 2}) // player 1's, 2's, 0's
	if v[1] != 0.5 || v[2] != -0.25 || v[0] != 1 {
		t.Errorf("mover 1: %v, want [1 0.5 -0.25] (clamped)", v)
	}
}

// A per-player head drives batched searches of hidden-information games
// too: Sushi Go's sequential view for four players, two sampled deals,
// four leaves in flight per tree, both backups.
func TestMaxNSushiGoSearch(t *testing.T) {
	g := games.MustNew("sushigo-seq:players=4")
	cfg, err := nets.Config{Head: nets.HeadAlphaZero, Channels: 4, Blocks: 1, ValueHidden: 4}.ForGame(g)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ValuePlayers != 4 {
		t.Fatalf("ForGame gave value_players %d for 4 players, want 4", cfg.ValuePlayers)
	}
	net, err := nets.New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	be, err := nets.NewCPUBackend(net, nets.BackendOptions{MaxBatch: 16})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(g, be, Options{Workers: 1, Batch: 16, Wait: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.ValueSize() != 4 {
		t.Fatalf("engine ValueSize %d, want 4", e.ValueSize())
	}
	s := g.NewInitialState()
	rng := games.NewRand(1)
	for s.CurrentPlayer() == games.ChancePlayer {
		s.Apply(s.(games.ChanceState).SampleChance(rng))
	}
	for _, backup := range BackupKinds {
		st := DefaultSettings()
		st.Sims, st.Det, st.Leaves, st.Backup = 64, 2, 4, backup
		sr, err := NewSearcher(e, st.SearchOptions(), 1)
		if err != nil {
			t.Fatal(err)
		}
		stats, err := sr.Search(context.Background(), s, s.CurrentPlayer())
		if err != nil {
			t.Fatal(err)
		}
		visits := 0
		for _, a := range stats {
			visits += a.Visits
			if a.Q < -1 || a.Q > 1 {
				t.Errorf("%s: Q %v out of range", backup, a.Q)
			}
		}
		if visits != 64 {
			t.Errorf("%s: %d root visits, want 64", backup, visits)
		}
	}
}

// The root's value vector (Searcher.RootValues, what the web UI shows
// per seat) is the mean of the vectors backed up: under MaxN it tends to
// the brute-force value of the line both players choose, (0.6, 0.3, 0.2)
// after A, x.
func TestRootValues(t *testing.T) {
	_, maxnV := bruteForce(func(r [3]float64) [3]float64 { return r })
	g := coalitionGame
	e, err := New(g, &oracleNet{players: 3}, Options{Workers: 1, Batch: 8, Wait: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	st := DefaultSettings()
	st.Sims = 800
	s, err := NewSearcher(e, st.SearchOptions(), 5)
	if err != nil {
		t.Fatal(err)
	}
	if v := s.RootValues(); v != nil {
		t.Errorf("root values %v before any search", v)
	}
	if _, err := s.Search(context.Background(), g.NewInitialState(), 0); err != nil {
		t.Fatal(err)
	}
	v := s.RootValues()
	for q := range 3 {
		if len(v) != 3 || math.Abs(v[q]-maxnV[q]) > 0.1 {
			t.Fatalf("root values %v, want about the brute-force %v", v, maxnV)
		}
	}
}
