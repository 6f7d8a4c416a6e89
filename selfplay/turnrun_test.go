package selfplay

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4d"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search/engine"
)

// turnGame is the game of the turn-search run tests: Connect4d with 4
// boards (lines of four need 4 depths, so games can be won), 168 plies
// at most.
const turnGame = "connect4d:d=4"

// turnRun plays games ids (nil: 0..n-1) of a turn-search run into a new
// directory and returns it, with the records handed over by id.
func turnRun(t *testing.T, ts string, n, trees int, ids []int) (string, map[int]*GameRecord) {
	t.Helper()
	g, e := newEngine(t, turnGame, 3, engine.Options{Slots: engine.SlotsFor(trees, 1)})
	dir := t.TempDir()
	m := testManifest(g, DefaultSettings(), n)
	m.TurnSearch = ts
	out, err := OpenOutput(dir, m, false)
	if err != nil {
		t.Fatal(err)
	}
	out.ShardPositions = 100
	recs := map[int]*GameRecord{}
	cfg := Config{Settings: DefaultSettings(), Seed: 42, Trees: trees, TurnSearch: ts, Games: ids, NumGames: n}
	record := func(r *GameRecord) error {
		if recs[r.ID] != nil {
			return fmt.Errorf("game %d handed over twice", r.ID)
		}
		recs[r.ID] = r
		return out.Add(r)
	}
	cfg.OnGame = record
	if err := Run(context.Background(), e, cfg); err != nil {
		t.Fatal(err)
	}
	if err := out.Flush(); err != nil {
		t.Fatal(err)
	}
	return dir, recs
}

// TestTurnSearchSpec: study 004's self-play defaults are added to mcts-v
// and mcts-bb (PUCT, every action drawn from the visits: tempplies =
// 42 cells x 4 boards), nothing to emcts, and keys come out sorted.
func TestTurnSearchSpec(t *testing.T) {
	g := games.MustNew(turnGame)
	for _, c := range [][2]string{
		{"mcts-bb:sims=16", "mcts-bb:sel=puct,sims=16,tempplies=168"},
		{"mcts-v", "mcts-v:sel=puct,sims=250,tempplies=168"},
		{" mcts-bb:tempplies=8,sel=uct,c=2 ", "mcts-bb:c=2,sel=uct,sims=250,tempplies=8"},
		{"emcts:sims=40,bb=true", "emcts:bb=true,sims=40"},
		{"emcts", "emcts"},
		{"mcts-v:turns=4,blend=0.5", "mcts-v:blend=0.5,sel=puct,sims=250,tempplies=168,turns=4"},
		{"emcts:blend=0", "emcts:blend=0"},
	} {
		in, want := c[0], c[1]
		got, err := TurnSearchSpec(g, in)
		if err != nil || got != want {
			t.Errorf("TurnSearchSpec(%q) = %q, %v; want %q", in, got, err, want)
		}
		if again, err := TurnSearchSpec(g, got); err != nil || again != got {
			t.Errorf("TurnSearchSpec(%q) = %q, %v; want it unchanged", got, again, err)
		}
	}
}

// Bad turn searches are refused before any game, with one line naming
// the problem.
func TestTurnSearchRefused(t *testing.T) {
	_, e := newEngine(t, turnGame, 3, engine.Options{})
	_, ettt := newEngine(t, "tictactoe", 3, engine.Options{})
	sims := DefaultSettings()
	sims.Sims, sims.Dir = 7, 0.5
	for _, c := range []struct {
		e    *engine.Engine
		ts   string
		st   Settings
		want string
	}{
		{ettt, "mcts-bb", DefaultSettings(), "not a multi-action game"},
		{e, "oep:sims=10", DefaultSettings(), "not a TurnSearcher"},
		{e, "az", DefaultSettings(), "not a turn searcher"},
		{e, "mcts-bb:eval=rollout", DefaultSettings(), "eval= has no meaning"},
		{e, "emcts:rollout=heuristic", DefaultSettings(), "rollout= has no meaning"},
		{e, "mcts-bb:time=1s", DefaultSettings(), "time="},
		{e, "mcts-bb:bogus=1", DefaultSettings(), "unknown option bogus"},
		{e, "emcts:horizon=0", DefaultSettings(), "horizon"},
		{e, "mcts-bb:threads=2", DefaultSettings(), "threads"},
		{e, "mcts-bb:", DefaultSettings(), "nothing after ':'"},
		{e, "mcts-bb", sims, "sims, dir: no meaning under the turn search"},
		{e, "mcts-bb:blend=1.5", DefaultSettings(), "blend"},
		{e, "mcts-bb:blend=x", DefaultSettings(), "blend"},
		{e, "mcts-bb:turns=3", DefaultSettings(), "turns=3 without blend < 1"},
	} {
		called := false
		err := Run(context.Background(), c.e, Config{Settings: c.st, Seed: 1, NumGames: 2, Trees: 2, TurnSearch: c.ts,
			OnGame: func(*GameRecord) error { called = true; return nil }})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") || called {
			t.Errorf("turn search %q: err %v (games played: %v); want one line with %q", c.ts, err, called, c.want)
		}
	}
}

// TestTurnSearchRun: shards written under a turn search read back
// with one row per atomic action, plies counting up from 0, policies
// that are distributions over the legal actions of their row and values
// that alternate sign with the mover (Connect4d: turns of 4 actions, so
// the sign flips every 4 plies in a decisive game); the manifest
// records the search; and every game replayed alone (other ids, other
// concurrency) gives the same record.
func TestTurnSearchRun(t *testing.T) {
	const ts, n, sims, d = "mcts-bb:sel=puct,sims=16,tempplies=168", 6, 16, 4
	dir, recs := turnRun(t, ts, n, 3, nil)
	rows, m := readRun(t, dir) // checks that every policy row sums to 1
	if len(rows) != n || m.TurnSearch != ts || m.Totals.Nodes <= 0 {
		t.Fatalf("%d games, manifest turn search %q, nodes %d", len(rows), m.TurnSearch, m.Totals.Nodes)
	}
	decisive := 0
	for id, rs := range rows {
		for i, r := range rs {
			if int(r.ply) != i {
				t.Errorf("game %d row %d: ply %d", id, i, r.ply)
			}
			mover := (i / d) % 2 // player 0 plays plies 0-3, player 1 plies 4-7, ...
			if r.value != rs[0].value*float32(1-2*mover) {
				t.Errorf("game %d ply %d: value %v, first ply's %v", id, i, r.value, rs[0].value)
			}
		}
		if rs[0].value != 0 {
			decisive++
		}
		turns := (len(rs) + d - 1) / d
		if nodes := recs[id].Nodes; nodes <= 0 || nodes > int64(turns*sims) {
			t.Errorf("game %d: %d simulations for %d turns of at most %d", id, nodes, turns, sims)
		}
	}
	if decisive == 0 {
		t.Error("no decisive game: the value checks saw only draws (change the seed)")
	}
	// The legal array: every policy row is zero where its action is
	// illegal.
	for _, sh := range m.Shards {
		arr := readNPZ(t, filepath.Join(dir, sh.File))
		pol, legal := arr["policy"], arr["legal"]
		if legal.descr != "|u1" || !slices.Equal(legal.shape, pol.shape) {
			t.Fatalf("%s: legal %s %v, policy %v", sh.File, legal.descr, legal.shape, pol.shape)
		}
		for i := range len(legal.data) {
			if p := pol.f32(i); legal.data[i] == 0 && p != 0 || p < 0 || math.IsNaN(float64(p)) {
				t.Errorf("%s entry %d: policy %v, legal %d", sh.File, i, p, legal.data[i])
			}
		}
		if legal.data[0] != 1 {
			t.Errorf("%s: first legal row %v", sh.File, legal.data[:m.Actions])
		}
	}
	for _, id := range []int{0, n - 1} {
		_, alone := turnRun(t, ts, n, 1, []int{id})
		a, w := alone[id], recs[id]
		if a == nil || !slices.Equal(a.Obs, w.Obs) || !slices.Equal(a.Policy, w.Policy) || !slices.Equal(a.Value, w.Value) ||
			!slices.Equal(a.Legal, w.Legal) || a.Nodes != w.Nodes {
			t.Errorf("game %d replayed alone differs from the run's", id)
		}
	}
}

// A turn search with blend < 1 values its leaves partly by random
// rollouts: its games differ from the network-only search's with the same
// seeds, and each of them replays alone exactly (the rollouts draw from
// the game's own streams).
func TestTurnSearchBlend(t *testing.T) {
	const n = 4
	_, plain := turnRun(t, "mcts-bb:sel=puct,sims=16,tempplies=168", n, 2, nil)
	const ts = "mcts-bb:blend=0.5,sel=puct,sims=16,tempplies=168"
	_, blended := turnRun(t, ts, n, 2, nil)
	same := 0
	for id := range n {
		if slices.Equal(plain[id].Policy, blended[id].Policy) {
			same++
		}
	}
	if same == n {
		t.Error("blend=0.5 plays the same games as the network alone")
	}
	_, alone := turnRun(t, ts, n, 1, []int{n - 1})
	if a, w := alone[n-1], blended[n-1]; !slices.Equal(a.Policy, w.Policy) || !slices.Equal(a.RootQ, w.RootQ) {
		t.Error("a blended game replayed alone differs from the run's")
	}
}

// A turn-search run cancelled mid-way and resumed holds exactly the
// games of an uninterrupted run, and a resume with another turn search
// is refused.
func TestTurnSearchResume(t *testing.T) {
	const ts, n = "emcts:sims=24", 8
	want, _ := turnRun(t, ts, n, 3, nil)
	wantRows, _ := readRun(t, want)

	g, e := newEngine(t, turnGame, 3, engine.Options{})
	part := t.TempDir()
	m := testManifest(g, DefaultSettings(), n)
	m.TurnSearch = ts
	out, err := OpenOutput(part, m, false)
	if err != nil {
		t.Fatal(err)
	}
	out.FlushGames = 1
	ctx, cancel := context.WithCancel(context.Background())
	count := 0
	cfg := Config{Settings: DefaultSettings(), Seed: 42, Trees: 2, TurnSearch: ts}
	err = Generate(ctx, e, out, cfg, func(*GameRecord) {
		if count++; count == n/3 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
	mid, _ := readRun(t, part)
	if len(mid) == 0 || len(mid) >= n {
		t.Fatalf("interrupted run kept %d of %d games", len(mid), n)
	}
	other := m
	other.TurnSearch = "emcts:sims=25"
	if _, err := OpenOutput(part, other, true); err == nil || !strings.Contains(err.Error(), "--turn-search emcts:sims=25 (run: "+m.TurnSearch+")") {
		t.Errorf("resume with another turn search: %v", err)
	}
	out, err = OpenOutput(part, m, true)
	if err != nil {
		t.Fatal(err)
	}
	pending := out.Pending()
	if len(pending) != n-len(mid) {
		t.Fatalf("pending %v, want %d games", pending, n-len(mid))
	}
	played := map[int]bool{}
	cfg.Trees = 5
	if err := Generate(context.Background(), e, out, cfg, func(r *GameRecord) { played[r.ID] = true }); err != nil {
		t.Fatal(err)
	}
	for _, id := range pending {
		if !played[id] || mid[id] != nil {
			t.Errorf("game %d: pending, replayed %v, in the interrupted run %v", id, played[id], mid[id] != nil)
		}
	}
	if len(played) != len(pending) {
		t.Errorf("resume played %d games, %d were pending", len(played), len(pending))
	}
	got, _ := readRun(t, part)
	if len(got) != len(wantRows) {
		t.Fatalf("resumed run has %d games, uninterrupted %d", len(got), len(wantRows))
	}
	for id, w := range wantRows {
		if fmt.Sprint(got[id]) != fmt.Sprint(w) {
			t.Errorf("game %d differs between the resumed and the uninterrupted run", id)
		}
	}
}

// failingBackend fails every batch after its first after calls.
type failingBackend struct {
	nets.Backend
	after atomic.Int64
}

func (b *failingBackend) Evaluate(ctx context.Context, batch int, input, policy, value []float32) error {
	if b.after.Add(-1) < 0 {
		return errors.New("device lost")
	}
	return b.Backend.Evaluate(ctx, batch, input, policy, value)
}

// A network that fails during a turn-search run stops it with the
// backend's error, and no game searched with a failed evaluation is
// handed over.
func TestTurnSearchBackendFailure(t *testing.T) {
	g := games.MustNew(turnGame)
	obs := 1
	for _, d := range g.ObservationShape() {
		obs *= d
	}
	be := &failingBackend{Backend: nets.NewRandomBackend(obs, g.NumActions(), 3, nets.BackendOptions{})}
	be.after.Store(400) // about a game and a half at 16 evaluations a turn
	e, err := engine.New(g, be, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	handed := 0
	err = Run(context.Background(), e, Config{Settings: DefaultSettings(), Seed: 42, NumGames: 6, Trees: 1, TurnSearch: "mcts-bb:sims=16",
		OnGame: func(*GameRecord) error { handed++; return nil }})
	if err == nil || !strings.Contains(err.Error(), "device lost") || handed >= 6 {
		t.Errorf("run on a failing network: %v, %d games handed over; want the backend's error", err, handed)
	}
}

// FuzzTurnSearchSpec: any text is refused with an error or accepted as a
// canonical spec that TurnSearchSpec returns unchanged, never a panic.
func FuzzTurnSearchSpec(f *testing.F) {
	g := games.MustNew(turnGame)
	for _, s := range []string{"mcts-v", "mcts-bb:sims=16,blend=0.5", "emcts:blend=0,turns=3", "mcts-v:turns=2", "mcts-v:blend=,", "oep", ":"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := TurnSearchSpec(g, s)
		if err != nil {
			return
		}
		if again, err := TurnSearchSpec(g, got); err != nil || again != got {
			t.Fatalf("TurnSearchSpec(%q) = %q; again: %q, %v", s, got, again, err)
		}
	})
}
