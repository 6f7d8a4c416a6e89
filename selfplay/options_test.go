package selfplay

import (
	"context"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/search"
	"github.com/canopy-go/canopy/search/engine"
)

// Policy target pruning on a hand-computed example, c = 1.5: N = 100
// visits, sqrt(N) = 10, and the best action 0 (55 visits) has
// PUCT* = 0.5 + 1.5*0.4*10/56 = 0.607143.
//   - action 1: 4.5/(0.607143-0.4) = 21.72, so 21 of its 30 visits stay
//     (with 21 its PUCT, 0.6045, is below PUCT*; with 20, 0.6143, not);
//   - action 2: 3/0.807143 = 3.717: 3 of 8;
//   - action 3: 0.75/0.507143 = 1.479: 1 visit, dropped;
//   - action 4: Q = 0.7 above PUCT*: its 5 visits stay;
//   - action 5: Q = 0.9 above PUCT*, but one visit: dropped;
//   - action 6: unvisited.
func TestPruneVisits(t *testing.T) {
	stats := []search.ActionStat{
		{Action: 0, Visits: 55, Q: 0.5, Prior: 0.4},
		{Action: 1, Visits: 30, Q: 0.4, Prior: 0.3},
		{Action: 2, Visits: 8, Q: -0.2, Prior: 0.2},
		{Action: 3, Visits: 1, Q: 0.1, Prior: 0.05},
		{Action: 4, Visits: 5, Q: 0.7, Prior: 0.01},
		{Action: 5, Visits: 1, Q: 0.9, Prior: 0.01},
		{Action: 6, Visits: 0, Q: 0, Prior: 0.03},
	}
	visits := make([]float64, 7)
	for _, x := range stats {
		visits[x.Action] = float64(x.Visits)
	}
	total := pruneVisits(stats, 1.5, visits)
	want := []float64{55, 21, 3, 0, 5, 0, 0}
	if !slices.Equal(visits, want) || total != 84 {
		t.Errorf("pruned visits %v (total %v), want %v (total 84)", visits, total, want)
	}
}

// Under playout-cap randomisation only full searches are recorded: with
// full searches of 16 simulations and fast ones of 1, a game of M moves
// with F full ones spends 15F + M simulations (the engine's own count of
// the simulations each search spent, GameRecord.Nodes), and since a
// tic-tac-toe game has at most 9 moves, F = Nodes / 15 exactly. The
// records must hold exactly F positions, and the games are the same
// whatever the number of games played at once.
func TestPCRRecordsFullSearches(t *testing.T) {
	st := DefaultSettings()
	st.Sims, st.Leaves, st.TempPlies = 16, 1, 4
	st.PCR, st.PCRFast = 0.5, 1
	run := func(trees, workers int) map[int]*GameRecord {
		_, e := newEngine(t, "tictactoe", 5, engine.Options{Workers: workers, Wait: -1})
		return collect(t, e, Config{Settings: st, Seed: 9, NumGames: 16, Trees: trees})
	}
	recs := run(6, 2)
	full, fast := 0, 0
	for id, r := range recs {
		f, m := int(r.Nodes/15), int(r.Nodes%15)
		if r.Positions() != f {
			t.Errorf("game %d: %d positions recorded, %d full searches (%d moves, %d simulations)", id, r.Positions(), f, m, r.Nodes)
		}
		if len(r.RootQ) != r.Positions() {
			t.Errorf("game %d: %d root Q values for %d positions", id, len(r.RootQ), r.Positions())
		}
		for i := 1; i < len(r.Ply); i++ {
			if r.Ply[i] <= r.Ply[i-1] || int(r.Ply[i]) >= m {
				t.Errorf("game %d: plies %v in a game of %d moves", id, r.Ply, m)
			}
		}
		full += f
		fast += m - f
	}
	if full == 0 || fast == 0 {
		t.Fatalf("%d full and %d fast searches: pcr 0.5 should give both", full, fast)
	}
	again := run(1, 1)
	for id, r := range recs {
		if !reflect.DeepEqual(r, again[id]) {
			t.Errorf("game %d differs between runs with 6 and 1 games at once", id)
		}
	}
	// Off (the default), every move is a full, recorded search.
	st.PCR = 0
	_, e := newEngine(t, "tictactoe", 5, engine.Options{Workers: 1, Wait: -1})
	for id, r := range collect(t, e, Config{Settings: st, Seed: 9, NumGames: 4}) {
		if int(r.Nodes) != 16*r.Positions() {
			t.Errorf("pcr off, game %d: %d positions for %d simulations", id, r.Positions(), r.Nodes)
		}
	}
}

// Gumbel self-play records the improved policy (positive on every legal
// action, zero elsewhere, summing to 1), reproducibly; it refuses
// pruning.
func TestGumbelSelfPlay(t *testing.T) {
	st := DefaultSettings()
	st.Sims, st.Leaves, st.Gumbel, st.GumbelM = 16, 2, true, 4
	run := func(trees int) map[int]*GameRecord {
		_, e := newEngine(t, "tictactoe", 5, engine.Options{Workers: 2, Wait: -1})
		return collect(t, e, Config{Settings: st, Seed: 3, NumGames: 6, Trees: trees})
	}
	recs := run(3)
	if len(recs) != 6 || recs[0].Positions() < 5 {
		t.Fatalf("%d games; game 0 has %d positions", len(recs), recs[0].Positions())
	}
	for id, r := range recs {
		for i := range r.Positions() {
			pol, legal := r.Policy[9*i:9*i+9], r.Legal[9*i:9*i+9]
			var sum float64
			for a, p := range pol {
				sum += float64(p)
				if (legal[a] == 1) != (p > 0) {
					t.Errorf("game %d ply %d: policy %v with legal %v", id, i, pol, legal)
					break
				}
			}
			if math.Abs(sum-1) > 1e-5 {
				t.Errorf("game %d ply %d: policy sums to %v", id, i, sum)
			}
		}
	}
	if again := run(1); !reflect.DeepEqual(recs, again) {
		t.Error("Gumbel self-play differs with the number of games at once")
	}
	st.Prune = true
	if err := st.Check(); err == nil || !strings.Contains(err.Error(), "prune") {
		t.Errorf("gumbel with prune: %v", err)
	}
}

// Shards carry root_q, the records' root values.
func TestShardRootQ(t *testing.T) {
	g, e := newEngine(t, "tictactoe", 11, engine.Options{Workers: 1, Wait: -1})
	dir := t.TempDir()
	st := DefaultSettings()
	st.Sims, st.Prune = 24, true
	out, err := OpenOutput(dir, testManifest(g, st, 3), false)
	if err != nil {
		t.Fatal(err)
	}
	var recs []*GameRecord
	if err := Generate(context.Background(), e, out, Config{Settings: st, Seed: 1, Trees: 1}, func(r *GameRecord) { recs = append(recs, r) }); err != nil {
		t.Fatal(err)
	}
	_, m := readRun(t, dir) // checks every policy sums to 1 (pruned here)
	var want []float32
	for _, r := range recs {
		want = append(want, r.RootQ...)
	}
	var got []float32
	for _, sh := range m.Shards {
		q, ok := readNPZ(t, filepath.Join(dir, sh.File))["root_q"]
		if !ok || q.descr != "<f4" || len(q.shape) != 1 {
			t.Fatalf("%s: root_q %+v", sh.File, q)
		}
		for i := range q.shape[0] {
			got = append(got, q.f32(i))
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("root_q %v, records %v", got, want)
	}
	for _, q := range got {
		if !(q >= -1 && q <= 1) {
			t.Errorf("root_q %v outside [-1, 1]", q)
		}
	}
}

// Gumbel search on K = 4 determinizations with playout-cap randomisation
// (every option at once, on a hidden-information game with chance): the
// games are the same whatever the batching, and every recorded policy is
// a distribution positive exactly on the legal actions.
func TestGumbelDeterminizedPCR(t *testing.T) {
	spec := "sushigo-seq:players=3"
	st := hiddenSettings(16, 4)
	st.Gumbel, st.GumbelM, st.PCR, st.PCRFast = true, 4, 0.5, 8
	_, _, e1 := spyEngine(t, spec, false, engine.Options{Workers: 1, Batch: 8, Slots: engine.SlotsFor(4, 1)})
	a := collect(t, e1, Config{Settings: st, Seed: 5, NumGames: 2, Trees: 1})
	_, _, e2 := spyEngine(t, spec, false, engine.Options{Workers: 2, Batch: 32, Slots: engine.SlotsFor(8, 1)})
	b := collect(t, e2, Config{Settings: st, Seed: 5, NumGames: 2, Trees: 2})
	if !reflect.DeepEqual(a, b) {
		t.Error("games differ between 1 worker x 1 game and 2 workers x 2 games")
	}
	for id, r := range a {
		A := len(r.Policy) / max(r.Positions(), 1)
		if r.Positions() == 0 {
			t.Errorf("game %d: no position recorded", id)
		}
		for i := range r.Positions() {
			pol, legal := r.Policy[A*i:A*i+A], r.Legal[A*i:A*i+A]
			var sum float64
			for a, p := range pol {
				sum += float64(p)
				if (legal[a] == 1) != (p > 0) {
					t.Fatalf("game %d position %d: policy %v on action %d with legal %d", id, i, p, a, legal[a])
				}
			}
			if math.Abs(sum-1) > 1e-5 {
				t.Errorf("game %d position %d: policy sums to %v", id, i, sum)
			}
		}
	}
}

// randomplies starts games after 0..N random plies: the first recorded
// ply of a game is within 0..N and varies between games, every game
// still has a recorded position (a random ply never ends the game), and
// the games are the same whatever the number played at once. Off, every
// game is recorded from ply 0.
func TestRandomPlies(t *testing.T) {
	st := DefaultSettings()
	st.Sims, st.Leaves, st.TempPlies = 8, 1, 2
	st.RandomPlies = 5
	run := func(st Settings, trees, workers int) map[int]*GameRecord {
		_, e := newEngine(t, "tictactoe", 5, engine.Options{Workers: workers, Wait: -1})
		return collect(t, e, Config{Settings: st, Seed: 3, NumGames: 40, Trees: trees})
	}
	recs := run(st, 8, 2)
	firsts := map[int32]int{}
	for id, r := range recs {
		if r.Positions() == 0 {
			t.Fatalf("game %d: no recorded position (a random ply ended the game)", id)
		}
		if r.Ply[0] < 0 || r.Ply[0] > 5 {
			t.Errorf("game %d: first recorded ply %d, want 0..5", id, r.Ply[0])
		}
		firsts[r.Ply[0]]++
	}
	if len(firsts) < 4 {
		t.Errorf("first recorded plies %v over 40 games: want most of 0..5", firsts)
	}
	again := run(st, 1, 1)
	for id, r := range recs {
		if !reflect.DeepEqual(r, again[id]) {
			t.Errorf("game %d differs between runs with 8 and 1 games at once", id)
		}
	}
	st.RandomPlies = 0
	for id, r := range run(st, 8, 2) {
		if r.Ply[0] != 0 {
			t.Errorf("randomplies off, game %d: first recorded ply %d, want 0", id, r.Ply[0])
		}
	}
}
