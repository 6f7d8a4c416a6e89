package selfplay

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/sequence"
	_ "github.com/canopy-go/canopy/games/sushigo"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search/engine"
)

// This file tests the driver on hidden-information games: K
// determinizations per move searched as K trees in one batch stream
// (games.Resampler), what the network is shown, reproducibility and the
// records' shapes. It watches the driver from outside through two
// wrappers: spyGame (a game whose states forward to the real game's and
// log Resample and Observation calls) and rowSpy (a backend that hashes
// every input row it evaluates).

// ---- spyGame: a forwarding game that logs what the driver does ----

// resampleCall is one Resample on the real state (the driver determinizes
// only from the real game state, so the receiver is the real position).
type resampleCall struct {
	player, mover, move int
	view                uint64 // hash of the receiver's Observation(player): the player's own view
	detView             uint64 // hash of the determinized state's Observation(player)
	legal               []games.Action
	changed             bool // the determinization differs from the real state (notation)
}

type spyGame struct {
	games.Game
	obsN int

	mu        sync.Mutex
	resamples []resampleCall

	observations atomic.Int64
	badObs       atomic.Int64 // Observation of a chance/terminal state or not from the mover's view
	chanceDraws  atomic.Int64 // SampleChance calls
	firstBad     atomic.Value // string: the first bad Observation call
}

func newSpyGame(spec string) *spyGame {
	g := games.MustNew(spec)
	return &spyGame{Game: g, obsN: games.ObservationSize(g)}
}

func (g *spyGame) NewInitialState() games.State {
	return &spyState{g: g, s: g.Game.NewInitialState()}
}

func (g *spyGame) ParseState(n string) (games.State, error) {
	s, err := g.Game.ParseState(n)
	if err != nil {
		return nil, err
	}
	return &spyState{g: g, s: s}, nil
}

func (g *spyGame) calls() []resampleCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]resampleCall(nil), g.resamples...)
}

// spyState forwards to the real state s. It implements ChanceState and
// Resampler (the capabilities the driver uses) and nothing else.
type spyState struct {
	g *spyGame
	s games.State
}

func (x *spyState) Game() games.Game                           { return x.g }
func (x *spyState) CurrentPlayer() int                         { return x.s.CurrentPlayer() }
func (x *spyState) IsTerminal() bool                           { return x.s.IsTerminal() }
func (x *spyState) Legal(dst games.Mask)                       { x.s.Legal(dst) }
func (x *spyState) Apply(a games.Action)                       { x.s.Apply(a) }
func (x *spyState) Clone() games.State                         { return &spyState{g: x.g, s: x.s.Clone()} }
func (x *spyState) CloneInto(dst games.State)                  { x.s.CloneInto(dst.(*spyState).s) }
func (x *spyState) Returns(dst []float64)                      { x.s.Returns(dst) }
func (x *spyState) Hash() uint64                               { return x.s.Hash() }
func (x *spyState) MoveNumber() int                            { return x.s.MoveNumber() }
func (x *spyState) ActionString(a games.Action) string         { return x.s.ActionString(a) }
func (x *spyState) ParseAction(s string) (games.Action, error) { return x.s.ParseAction(s) }
func (x *spyState) String() string                             { return x.s.String() }

func (x *spyState) ChanceOutcomes(dst []games.ChanceOutcome) []games.ChanceOutcome {
	return x.s.(games.ChanceState).ChanceOutcomes(dst)
}

func (x *spyState) SampleChance(rng *rand.Rand) games.Action {
	x.g.chanceDraws.Add(1)
	return x.s.(games.ChanceState).SampleChance(rng)
}

// Observation checks that only decision states are encoded, and only from
// the mover's view (the driver's two callers: leaf/root encoding and the
// record of the real position).
func (x *spyState) Observation(player int, dst []float32) {
	x.g.observations.Add(1)
	if p := x.s.CurrentPlayer(); p < 0 || p != player || x.s.IsTerminal() {
		if x.g.badObs.Add(1) == 1 {
			x.g.firstBad.Store(fmt.Sprintf("Observation(%d) of a state with CurrentPlayer %d, terminal %v: %s",
				player, p, x.s.IsTerminal(), x.s))
		}
	}
	x.s.Observation(player, dst)
}

func (x *spyState) Resample(player int, rng *rand.Rand, dst games.State) {
	d := dst.(*spyState)
	x.s.(games.Resampler).Resample(player, rng, d.s)
	// Everything below reads the inner states directly (not through the
	// spy, so it does not count as the driver's Observation calls).
	c := resampleCall{player: player, mover: x.s.CurrentPlayer(), move: x.s.MoveNumber()}
	row := make([]float32, x.g.obsN)
	x.s.Observation(player, row)
	c.view = hashRow32(row)
	d.s.Observation(player, row)
	c.detView = hashRow32(row)
	m := games.NewMask(x.g.NumActions())
	x.s.Legal(m)
	for a := range m.All() {
		c.legal = append(c.legal, a)
	}
	c.changed = d.s.String() != x.s.String()
	x.g.mu.Lock()
	x.g.resamples = append(x.g.resamples, c)
	x.g.mu.Unlock()
}

// hashRow32 is FNV-1a over a row's float bits (the test's own; equal
// rows have equal hashes).
func hashRow32(row []float32) uint64 {
	h := uint64(14695981039346656037)
	for _, v := range row {
		h ^= uint64(math.Float32bits(v))
		h *= 1099511628211
	}
	return h
}

// ---- rowSpy: a backend that counts the rows it is shown ----

type rowSpy struct {
	nets.Backend
	mu   sync.Mutex
	rows map[uint64]int // row hash -> times evaluated; nil: count rows only
	n    int
}

// newRowSpy wraps be; with hash false it only counts rows (cheaper under
// -race on sequence's 9,900-value rows).
func newRowSpy(be nets.Backend, hash bool) *rowSpy {
	r := &rowSpy{Backend: be}
	if hash {
		r.rows = map[uint64]int{}
	}
	return r
}

func (r *rowSpy) Evaluate(ctx context.Context, batch int, input, policy, value []float32) error {
	in, _ := r.Shape()
	r.mu.Lock()
	for i := range batch {
		if r.rows != nil {
			r.rows[hashRow32(input[i*in:(i+1)*in])]++
		}
	}
	r.n += batch
	r.mu.Unlock()
	return r.Backend.Evaluate(ctx, batch, input, policy, value)
}

func (r *rowSpy) count(h uint64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rows[h]
}

// spyEngine builds an engine for spec (wrapped in a spyGame) on a seeded
// random backend wrapped in a rowSpy (hashing rows when hash is set).
func spyEngine(t testing.TB, spec string, hash bool, opt engine.Options) (*spyGame, *rowSpy, *engine.Engine) {
	t.Helper()
	g := newSpyGame(spec)
	rs := newRowSpy(newRandomFor(g), hash)
	e, err := engine.New(g, rs, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return g, rs, e
}

// newRandomFor is a seeded random backend with g's shape.
func newRandomFor(g *spyGame) nets.Backend {
	return nets.NewRandomBackend(g.obsN, g.NumActions(), 17, nets.BackendOptions{})
}

// hiddenSettings: sims split over k determinizations; k divides sims.
func hiddenSettings(sims, k int) Settings {
	st := DefaultSettings()
	st.Sims, st.Det, st.Leaves, st.TempPlies = sims, k, 1, 6
	return st
}

// collect runs cfg on e and returns the records by game id.
func collect(t *testing.T, e *engine.Engine, cfg Config) map[int]*GameRecord {
	t.Helper()
	var mu sync.Mutex
	recs := map[int]*GameRecord{}
	cfg.OnGame = func(r *GameRecord) error {
		mu.Lock()
		defer mu.Unlock()
		if recs[r.ID] != nil {
			return fmt.Errorf("game %d handed over twice", r.ID)
		}
		recs[r.ID] = r
		return nil
	}
	if err := Run(context.Background(), e, cfg); err != nil {
		t.Fatal(err)
	}
	return recs
}

// (a) With K determinizations the driver resamples K times per move from
// the real position of the mover, searches sims/K simulations in each
// tree, and the recorded policy merges the K trees' root visits.
func TestDeterminizeMergesTrees(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		sims, k int
	}{
		{"sequence:jacks=false", 12, 4},
		{"sushigo-seq:players=3", 12, 4},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			g, _, e := spyEngine(t, tc.spec, false, engine.Options{Workers: 1, Batch: 16, Slots: engine.SlotsFor(tc.k, 1)})
			st := hiddenSettings(tc.sims, tc.k)
			recs := collect(t, e, Config{Settings: st, Seed: 3, NumGames: 1, Trees: 1})
			r := recs[0]
			calls := g.calls()
			n := r.Positions()
			if n == 0 {
				t.Fatal("no positions recorded")
			}
			if len(calls) != tc.k*n {
				t.Fatalf("%d Resample calls for %d moves, want %d per move", len(calls), n, tc.k)
			}
			if want := int64(n * tc.sims); r.Nodes != want {
				t.Errorf("%d simulations for %d moves, want %d (K x sims/K per move)", r.Nodes, n, want)
			}
			changed, wide := 0, 0
			for i := range n {
				// The K calls of move i: from the real position, for its mover.
				for q, c := range calls[i*tc.k : (i+1)*tc.k] {
					if c.player != c.mover || c.move != int(r.Ply[i]) {
						t.Fatalf("move %d determinization %d: Resample(player %d) at move %d, mover %d; record says ply %d",
							i, q, c.player, c.move, c.mover, r.Ply[i])
					}
					if c.changed {
						changed++
					}
				}
				// Merged visits: the policy is (visits / sims) with the
				// visits of all K trees, so it is a multiple of 1/sims and
				// may have up to sims (not sims/K) non-zero entries.
				pol := r.Policy[i*g.NumActions() : (i+1)*g.NumActions()]
				legal := map[games.Action]bool{}
				for _, a := range calls[i*tc.k].legal {
					legal[a] = true
				}
				nz := 0
				for a, p := range pol {
					if p == 0 {
						continue
					}
					nz++
					if !legal[games.Action(a)] {
						t.Errorf("move %d: policy %v on illegal action %d", i, p, a)
					}
					if v := float64(p) * float64(tc.sims); math.Abs(v-math.Round(v)) > 1e-4 {
						t.Errorf("move %d: policy entry %v is not a multiple of 1/%d", i, p, tc.sims)
					}
				}
				if nz > tc.sims/tc.k {
					wide++
				}
			}
			if changed == 0 {
				t.Error("no determinization differed from the real state: the test would not see hidden information")
			}
			if wide == 0 {
				t.Errorf("no move's policy had more than sims/K = %d actions: the K trees' visits were not merged", tc.sims/tc.k)
			}
			t.Logf("%d moves, %d of %d determinizations changed the hidden cards, %d moves with > %d actions",
				n, changed, len(calls), wide, tc.sims/tc.k)
		})
	}
}

// (b) The network never sees hidden information. Each determinization's
// root is encoded from the mover's own view, which must equal the
// mover's Observation of the real position (the spy computes it itself
// at each Resample). On sequence, where a player's hand shows in its
// observation, the mover's real view is shown to the network exactly K
// times (its K roots): the opponents' searches, whose leaves show this
// player's hand, see sampled hands, never the real one. Early in the game
// (many unseen cards) a sampled hand equal to the real one is
// practically impossible, so one extra sighting means a leak.
func TestHiddenRootRowsAreMoverViews(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		exact bool // count must be exactly K (else at least K)
	}{
		{"sequence:jacks=false", true},
		// Sushi Go players know the hands they held this round, so later
		// leaves may legitimately show a real hand: at least K.
		{"sushigo-seq:players=3", false},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			const k = 4
			g, rs, e := spyEngine(t, tc.spec, true, engine.Options{Workers: 1, Batch: 16, Slots: engine.SlotsFor(k, 1)})
			recs := collect(t, e, Config{Settings: hiddenSettings(16, k), Seed: 5, NumGames: 1, Trees: 1})
			r := recs[0]
			calls := g.calls()
			if len(calls) != k*r.Positions() {
				t.Fatalf("%d Resample calls for %d moves", len(calls), r.Positions())
			}
			checked := 0
			for i, c := range calls {
				if c.detView != c.view {
					t.Fatalf("call %d (move %d): the determinization changed player %d's own view (Resample must keep it)", i, c.move, c.player)
				}
				if i%k != 0 {
					continue
				}
				pos := i / k
				if got := hashRow32(r.Obs[pos*g.obsN : (pos+1)*g.obsN]); got != c.view {
					t.Errorf("move %d: recorded observation is not player %d's view of the real position", c.move, c.player)
				}
				n := rs.count(c.view)
				switch {
				case n < k:
					t.Errorf("move %d: player %d's view of the real position was evaluated %d times, want >= %d (one per determinization root)",
						c.move, c.player, n, k)
				case tc.exact && c.move < 60 && n != k:
					t.Errorf("move %d: player %d's real view (with its real hand) was evaluated %d times, want exactly %d: another player's search saw the real hand",
						c.move, c.player, n, k)
				}
				checked++
			}
			if g.badObs.Load() != 0 {
				t.Errorf("%d observations not from the mover's view; first: %v", g.badObs.Load(), g.firstBad.Load())
			}
			t.Logf("%d moves checked, %d rows evaluated", checked, rs.n)
		})
	}
}

// With Determinize = 1 (the default) on a game with hidden information the
// driver must still search a sampled deal, never the real state, or leaves
// where an opponent is to move would be encoded with the opponent's real
// hand. The check is the exact count of
// TestHiddenRootRowsAreMoverViews, for K = 1, with the spy's real views
// taken from the records (there is no Resample call to log them).
func TestSingleDeterminizationHidesHands(t *testing.T) {
	g, rs, e := spyEngine(t, "sequence:jacks=false", true, engine.Options{Workers: 1, Batch: 16, Slots: engine.SlotsFor(1, 1)})
	recs := collect(t, e, Config{Settings: hiddenSettings(8, 1), Seed: 5, NumGames: 1, Trees: 1})
	r := recs[0]
	if n := len(g.calls()); n != r.Positions() {
		t.Errorf("%d Resample calls for %d moves, want one determinization per move", n, r.Positions())
	}
	leaks := 0
	for i := range r.Positions() {
		if r.Ply[i] >= 60 {
			break
		}
		if n := rs.count(hashRow32(r.Obs[i*g.obsN : (i+1)*g.obsN])); n != 1 {
			leaks++
		}
	}
	if leaks > 0 {
		t.Errorf("%d early positions' real views were evaluated more than once: other players' searches saw the real hand", leaks)
	}
}

// (c) A run is reproducible from its seed alone: the same games whatever
// the number of workers and concurrent games, and other games for another
// seed.
func TestDeterminizedRunsReproducible(t *testing.T) {
	spec := "sushigo-seq:players=3"
	n := 2
	if !testing.Short() {
		n = 3
	}
	st := hiddenSettings(8, 4)
	_, _, e1 := spyEngine(t, spec, false, engine.Options{Workers: 1, Batch: 8, Slots: engine.SlotsFor(4, 1)})
	a := collect(t, e1, Config{Settings: st, Seed: 9, NumGames: n, Trees: 1})
	_, _, e2 := spyEngine(t, spec, false, engine.Options{Workers: 2, Batch: 32, Slots: engine.SlotsFor(4*n, 1)})
	b := collect(t, e2, Config{Settings: st, Seed: 9, NumGames: n, Trees: n})
	for id := range n {
		if !reflect.DeepEqual(a[id], b[id]) {
			t.Errorf("game %d differs between 1 worker x 1 game and 2 workers x %d games", id, n)
		}
	}
	c := collect(t, e1, Config{Settings: st, Seed: 10, NumGames: 1, Trees: 1})
	if reflect.DeepEqual(a[0].Policy, c[0].Policy) {
		t.Error("seed 9 and seed 10 played identical games")
	}
	if !testing.Short() {
		spec = "sequence:jacks=false"
		_, _, e1 := spyEngine(t, spec, false, engine.Options{Workers: 1, Batch: 8, Slots: engine.SlotsFor(4, 1)})
		_, _, e2 := spyEngine(t, spec, false, engine.Options{Workers: 2, Batch: 8, Slots: engine.SlotsFor(8, 1)})
		a := collect(t, e1, Config{Settings: st, Seed: 9, NumGames: 2, Trees: 1})
		b := collect(t, e2, Config{Settings: st, Seed: 9, NumGames: 2, Trees: 2})
		if !reflect.DeepEqual(a, b) {
			t.Error("sequence: games differ between 1 and 2 workers")
		}
	}
}

// (d) Records of hidden-information games have the right shapes: one
// observation of the game's size, one policy over all actions (a
// distribution on legal actions) and one value per move; values are the
// final returns from each mover's view (zero-sum); plies increase.
func TestHiddenRecordShapes(t *testing.T) {
	for _, spec := range []string{"sequence:jacks=false", "sushigo-seq:players=3"} {
		t.Run(spec, func(t *testing.T) {
			g, _, e := spyEngine(t, spec, false, engine.Options{Workers: 2, Batch: 32, Slots: engine.SlotsFor(8, 2)})
			st := hiddenSettings(8, 2)
			st.Leaves = 2
			recs := collect(t, e, Config{Settings: st, Seed: 21, NumGames: 2, Trees: 2})
			if len(recs) != 2 {
				t.Fatalf("%d games, want 2", len(recs))
			}
			np, na := g.NumPlayers(), g.NumActions()
			for id, r := range recs {
				n := r.Positions()
				if n == 0 || len(r.Obs) != n*g.obsN || len(r.Policy) != n*na || len(r.Ply) != n || len(r.Returns) != np {
					t.Fatalf("game %d: %d positions, obs %d (x%d), policy %d (x%d), ply %d, returns %d",
						id, n, len(r.Obs), g.obsN, len(r.Policy), na, len(r.Ply), len(r.Returns))
				}
				var sum float64
				for _, v := range r.Returns {
					if v < -1 || v > 1 {
						t.Errorf("game %d: return %v outside [-1, 1]", id, v)
					}
					sum += v
				}
				if math.Abs(sum) > 1e-9 {
					t.Errorf("game %d: returns %v do not sum to 0", id, r.Returns)
				}
				outcomes := map[float32]bool{}
				for _, v := range r.Returns {
					outcomes[float32(v)] = true
				}
				for i := range n {
					if i > 0 && r.Ply[i] <= r.Ply[i-1] {
						t.Errorf("game %d row %d: ply %d after %d", id, i, r.Ply[i], r.Ply[i-1])
					}
					if !outcomes[r.Value[i]] {
						t.Errorf("game %d row %d: value %v is no player's return %v", id, i, r.Value[i], r.Returns)
					}
					var ps float64
					for _, p := range r.Policy[i*na : (i+1)*na] {
						if p < 0 || p > 1 {
							t.Errorf("game %d row %d: policy entry %v", id, i, p)
						}
						ps += float64(p)
					}
					if math.Abs(ps-1) > 1e-5 {
						t.Errorf("game %d row %d: policy sums to %v", id, i, ps)
					}
				}
				if r.Nodes != int64(n*st.Sims) {
					t.Errorf("game %d: %d simulations for %d moves of %d", id, r.Nodes, n, st.Sims)
				}
			}
		})
	}
}
