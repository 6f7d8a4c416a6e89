package selfplay

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4"
	_ "github.com/canopy-go/canopy/games/tictactoe"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search/engine"
)

func newEngine(t testing.TB, spec string, seed uint64, opt engine.Options) (games.Game, *engine.Engine) {
	t.Helper()
	g := games.MustNew(spec)
	obs := 1
	for _, d := range g.ObservationShape() {
		obs *= d
	}
	be := nets.NewRandomBackend(obs, g.NumActions(), seed, nets.BackendOptions{})
	e, err := engine.New(g, be, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return g, e
}

// ---- an independent .npz reader for the tests ----

type npyArray struct {
	descr string
	shape []int
	data  []byte
}

var npyDict = regexp.MustCompile(`^\{'descr': '([<>|][a-z][0-9]+)', 'fortran_order': False, 'shape': \(([0-9, ]*)\), \} *\n$`)

func readNPZ(t *testing.T, path string) map[string]npyArray {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	out := map[string]npyArray{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(rc)
		rc.Close()
		raw := b.Bytes()
		if string(raw[:8]) != "\x93NUMPY\x01\x00" {
			t.Fatalf("%s/%s: bad magic %q", path, f.Name, raw[:8])
		}
		hl := int(binary.LittleEndian.Uint16(raw[8:10]))
		if (10+hl)%64 != 0 {
			t.Errorf("%s: data offset %d not a multiple of 64", f.Name, 10+hl)
		}
		m := npyDict.FindStringSubmatch(string(raw[10 : 10+hl]))
		if m == nil {
			t.Fatalf("%s: header %q", f.Name, raw[10:10+hl])
		}
		var shape []int
		for _, d := range strings.Split(m[2], ",") {
			if d = strings.TrimSpace(d); d != "" {
				n, _ := strconv.Atoi(d)
				shape = append(shape, n)
			}
		}
		size, _ := strconv.Atoi(m[1][2:])
		n := size
		for _, d := range shape {
			n *= d
		}
		if len(raw)-10-hl != n {
			t.Fatalf("%s: %d data bytes, want %d for %v", f.Name, len(raw)-10-hl, n, shape)
		}
		out[strings.TrimSuffix(f.Name, ".npy")] = npyArray{m[1], shape, raw[10+hl:]}
	}
	return out
}

func (a npyArray) f32(i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(a.data[4*i:]))
}

// row is one position as read back: every array's entries for it.
type row struct {
	obs, policy []float32
	value       float32
	ply         int32
}

// readRun reads every shard in dir's manifest: rows per game id.
func readRun(t *testing.T, dir string) (map[int][]row, Manifest) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	games := map[int][]row{}
	total := 0
	for _, sh := range m.Shards {
		arr := readNPZ(t, filepath.Join(dir, sh.File))
		obs, pol, val, ids, ply := arr["obs"], arr["policy"], arr["value"], arr["game_id"], arr["ply"]
		if obs.descr != "<f4" || pol.descr != "<f4" || val.descr != "<f4" || ids.descr != "<i8" || ply.descr != "<i4" {
			t.Fatalf("%s: dtypes %s %s %s %s %s", sh.File, obs.descr, pol.descr, val.descr, ids.descr, ply.descr)
		}
		n := val.shape[0]
		if n != sh.Positions || len(obs.shape) != 1+len(m.ObsShape) || pol.shape[1] != m.Actions {
			t.Fatalf("%s: shapes obs %v policy %v value %v, manifest says %d positions", sh.File, obs.shape, pol.shape, val.shape, sh.Positions)
		}
		on := len(obs.data) / 4 / n
		seen := map[int]bool{}
		for i := range n {
			id := int(int64(binary.LittleEndian.Uint64(ids.data[8*i:])))
			seen[id] = true
			r := row{value: val.f32(i), ply: int32(binary.LittleEndian.Uint32(ply.data[4*i:]))}
			for k := range on {
				r.obs = append(r.obs, obs.f32(i*on+k))
			}
			var sum float64
			for k := range m.Actions {
				p := pol.f32(i*m.Actions + k)
				r.policy = append(r.policy, p)
				sum += float64(p)
			}
			if math.Abs(sum-1) > 1e-5 {
				t.Errorf("%s row %d: policy sums to %v", sh.File, i, sum)
			}
			if r.value < -1 || r.value > 1 {
				t.Errorf("%s row %d: value %v", sh.File, i, r.value)
			}
			games[id] = append(games[id], r)
		}
		if len(seen) != sh.Games {
			t.Errorf("%s: %d games, manifest says %d", sh.File, len(seen), sh.Games)
		}
		total += n
	}
	if total != m.Totals.Positions || len(games) != m.Totals.Games {
		t.Errorf("totals %+v, read %d positions of %d games", m.Totals, total, len(games))
	}
	return games, m
}

func testManifest(g games.Game, st Settings, n int) Manifest {
	return Manifest{Game: g.Spec(), ObsShape: g.ObservationShape(), Actions: g.NumActions(),
		Network: "random-backend", NetworkSHA256: "random", Backend: "random", Settings: st, Seed: 42, Games: n}
}

func testSettings() Settings {
	st := DefaultSettings()
	st.Sims, st.Leaves, st.TempPlies = 24, 2, 4
	st.Resign, st.ResignOff = 0.9, 0.5
	return st
}

// Records are well formed: the policy is the visit distribution over
// legal moves, values alternate sign with the mover in a decisive game,
// plies count up from 0.
func TestRunRecordsAndNPZ(t *testing.T) {
	g, e := newEngine(t, "tictactoe", 11, engine.Options{Workers: 2, Slots: engine.SlotsFor(5, 2), Wait: -1})
	dir := t.TempDir()
	st := testSettings()
	out, err := OpenOutput(dir, testManifest(g, st, 12), false)
	if err != nil {
		t.Fatal(err)
	}
	out.ShardPositions = 30
	if err := Generate(context.Background(), e, out, Config{Settings: st, Seed: 42, Trees: 5}, nil); err != nil {
		t.Fatal(err)
	}
	rows, m := readRun(t, dir)
	if len(rows) != 12 || len(m.Shards) < 2 {
		t.Fatalf("%d games in %d shards", len(rows), len(m.Shards))
	}
	for id, rs := range rows {
		for i, r := range rs {
			if int(r.ply) != i {
				t.Errorf("game %d row %d: ply %d", id, i, r.ply)
			}
			// Replay: the observation's two planes are disjoint 0/1 and
			// the policy is zero on occupied squares.
			for c := range 9 {
				own, opp := r.obs[c], r.obs[9+c]
				if own+opp > 0 && r.policy[c] != 0 {
					t.Errorf("game %d ply %d: policy %v on occupied square %d", id, i, r.policy[c], c)
				}
			}
			if i > 0 && r.value != -rs[i-1].value {
				t.Errorf("game %d ply %d: value %v after %v (2-player zero-sum must alternate)", id, i, r.value, rs[i-1].value)
			}
		}
	}
	if _, err := OpenOutput(dir, testManifest(g, st, 12), false); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("reopening without resume: %v", err)
	}
	st2 := st
	st2.Sims++
	_, err = OpenOutput(dir, testManifest(g, st2, 12), true)
	if want := fmt.Sprintf("these settings differ from the run's: --sims %d (run: %d)", st2.Sims, st.Sims); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("resume with other settings: %v", err)
	}
	// numpy, when installed, reads the shards directly.
	if exec.Command("/usr/bin/python3", "-c", "import numpy").Run() != nil {
		t.Log("numpy not installed: skipping the numpy.load check")
		return
	}
	script := fmt.Sprintf(`import numpy as np, json
m = json.load(open(%q))
n = 0
for s in m["shards"]:
    d = np.load(%q + "/" + s["file"])
    assert d["obs"].shape[1:] == (2, 3, 3) and d["obs"].dtype == np.float32
    assert d["policy"].shape == (s["positions"], 9)
    assert d["game_id"].dtype == np.int64 and d["ply"].dtype == np.int32
    assert abs(d["policy"].sum(axis=1) - 1).max() < 1e-5
    n += len(d["value"])
assert n == m["totals"]["positions"]
print("ok")`, filepath.Join(dir, ManifestName), dir)
	if b, err := exec.Command("/usr/bin/python3", "-c", script).CombinedOutput(); err != nil {
		t.Errorf("numpy: %v\n%s", err, b)
	}
}

// A run cancelled mid-way and resumed yields exactly the games of an
// uninterrupted run with the same seed.
func TestResume(t *testing.T) {
	n := 16
	if testing.Short() {
		n = 10
	}
	g, e := newEngine(t, "tictactoe", 5, engine.Options{Workers: 2, Slots: engine.SlotsFor(4, 2)})
	st := testSettings()
	full := t.TempDir()
	out, err := OpenOutput(full, testManifest(g, st, n), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := Generate(context.Background(), e, out, Config{Settings: st, Seed: 42, Trees: 4}, nil); err != nil {
		t.Fatal(err)
	}
	want, _ := readRun(t, full)

	part := t.TempDir()
	out, err = OpenOutput(part, testManifest(g, st, n), false)
	if err != nil {
		t.Fatal(err)
	}
	out.ShardPositions = 10
	ctx, cancel := context.WithCancel(context.Background())
	count := 0
	err = Generate(ctx, e, out, Config{Settings: st, Seed: 42, Trees: 3}, func(*GameRecord) {
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
	// Resume (different tree count and workers: results must not depend on them).
	_, e2 := newEngine(t, "tictactoe", 5, engine.Options{Workers: 1, Slots: engine.SlotsFor(7, 2)})
	out, err = OpenOutput(part, testManifest(g, st, n), true)
	if err != nil {
		t.Fatal(err)
	}
	if p := out.Pending(); len(p) != n-len(mid) {
		t.Fatalf("pending %d, want %d", len(p), n-len(mid))
	}
	if err := Generate(context.Background(), e2, out, Config{Settings: st, Seed: 42, Trees: 7}, nil); err != nil {
		t.Fatal(err)
	}
	got, _ := readRun(t, part)
	if len(got) != len(want) {
		t.Fatalf("resumed run has %d games, uninterrupted %d", len(got), len(want))
	}
	for id, w := range want {
		gr := got[id]
		if fmt.Sprint(gr) != fmt.Sprint(w) {
			t.Errorf("game %d differs:\nresumed %v\nfull    %v", id, gr, w)
		}
	}
}

// Many trees with several leaves each under the race detector; every tree
// gets exactly its simulations.
func TestManyTreesConcurrent(t *testing.T) {
	_, e := newEngine(t, "connect4", 9, engine.Options{Workers: 3, Leaves: 4, Batch: 64, Slots: engine.SlotsFor(40, 4)})
	st := DefaultSettings()
	st.Sims, st.Leaves = 40, 4
	games, positions := 0, 0
	err := Run(context.Background(), e, Config{Settings: st, Seed: 1, NumGames: 6, Trees: 40, OnGame: func(r *GameRecord) error {
		games++
		positions += r.Positions()
		if r.Nodes != int64(r.Positions()*st.Sims) {
			return fmt.Errorf("game %d: %d simulations for %d moves of %d", r.ID, r.Nodes, r.Positions(), st.Sims)
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	c := e.Counters()
	if games != 6 || c.Nodes != int64(positions*st.Sims) || c.Evals > c.Nodes+int64(positions) {
		t.Errorf("games %d, positions %d, counters %+v", games, positions, c)
	}
}

// Games handed out by Config.Next, a few at a time as slots free up, are
// the games a Run of the same indices plays: each is seeded from (Seed,
// id) alone, whatever slot or batch it lands in.
func TestNextRefillsSlots(t *testing.T) {
	st := testSettings()
	want := map[int]*GameRecord{}
	_, e := newEngine(t, "tictactoe", 5, engine.Options{Leaves: st.Leaves, Batch: 16, Slots: engine.SlotsFor(3, st.Leaves)})
	ids := []int{4, 9, 2, 7, 11, 0, 5}
	if err := Run(context.Background(), e, Config{Settings: st, Seed: 3, Games: ids, Trees: 3, OnGame: func(r *GameRecord) error {
		want[r.ID] = r
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	// Next starts with two games for three slots (the third slot ends
	// at once) and hands out the rest one by one as games end.
	var mu sync.Mutex
	queue := slices.Clone(ids[:2])
	rest := slices.Clone(ids[2:])
	got := map[int]*GameRecord{}
	_, e2 := newEngine(t, "tictactoe", 5, engine.Options{Leaves: st.Leaves, Batch: 16, Slots: engine.SlotsFor(3, st.Leaves)})
	err := Run(context.Background(), e2, Config{Settings: st, Seed: 3, Trees: 3,
		Next: func() (int, bool) {
			mu.Lock()
			defer mu.Unlock()
			if len(queue) == 0 {
				return 0, false
			}
			id := queue[0]
			queue = queue[1:]
			return id, true
		},
		OnGame: func(r *GameRecord) error {
			mu.Lock()
			defer mu.Unlock()
			got[r.ID] = r
			if len(rest) > 0 {
				queue, rest = append(queue, rest[0]), rest[1:]
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d games through Next, want %d", len(got), len(want))
	}
	for id, w := range want {
		if !reflect.DeepEqual(got[id], w) {
			t.Errorf("game %d through Next differs from the same game in a batch", id)
		}
	}
}
